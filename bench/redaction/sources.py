"""The redaction corpus from sources outside the team, built into bench/.cache/redaction/ (never committed).

    python bench/redaction/sources.py            # reads the sources below, writes the .jsonl files

Sources (bring them in first; the bench tells which are missing):
- gitleaks v8.30.1 rule samples: `fetch` github:gitleaks/gitleaks, then
  `git -C <mirror> archive v8.30.1 | tar -x -C bench/.cache/gitleaks`
- Nosey Parker's rules (examples and negative examples): `fetch` github:praetorian-inc/noseyparker, then
  `git -C <mirror> archive HEAD | tar -x -C bench/.cache/noseyparker`
- real Claude Code transcripts: SWE-ContextBench Lite's 300 past-experience sessions, unpacked at
  $SWECB (default /work/cache/swecb/cases/SWEContextBench Lite Past Experience)

The split is fixed by a hash before any tuning (`split_of`): secrets by their rule (a held-out format was
never looked at), ordinary lines by their session file or rule. Each record keeps the key it was split by.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from gitleaks_rules import drop_ignored_prefix, translate  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
OUT = CACHE / "redaction"
GITLEAKS = CACHE / "gitleaks"
NOSEYPARKER = CACHE / "noseyparker" / "crates" / "noseyparker" / "data" / "default" / "builtin" / "rules"
SWECB = Path(os.environ.get("SWECB", "/work/cache/swecb/cases/SWEContextBench Lite Past Experience"))
TPS_PER_RULE = 8  # gitleaks writes each sample secret in 26 syntaxes: a seeded choice of 8 per rule
LINES_PER_SESSION = 80
LINE_MIN, LINE_MAX = 4, 400


def split_of(key: str) -> str:
    """`tuning` or `heldout` by the first 8 hex digits of sha256(key): the split is data, not a choice."""
    return "heldout" if int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 2 else "tuning"


def _secret_of(pattern: re.Pattern[str], text: str, group: int = 0) -> str | None:
    m = pattern.search(text)
    if not m:
        return None
    if group and m.group(group):
        return m.group(group)
    for g in range(1, (pattern.groups or 0) + 1):
        if m.group(g):
            return m.group(g)
    return m.group(0)


# --------------------------------------------------------------------------- gitleaks


def gitleaks() -> Iterator[dict]:
    import tomllib

    from gitleaks_samples import samples

    config = tomllib.loads((GITLEAKS / "config" / "gitleaks.toml").read_text())
    rules = {r["id"]: r for r in config["rules"] if "regex" in r}
    found, stats = samples(GITLEAKS / "cmd" / "generate" / "config" / "rules")
    print(
        f"gitleaks: {stats['functions']} rules read, {len(found)} samples, "
        f"{stats['skipped_statements']} statements and {stats['skipped_elements']} elements skipped",
        file=sys.stderr,
    )
    by_rule: dict[str, list[dict]] = {}
    for s in found:
        by_rule.setdefault(s["rule"], []).append(s)
    unmatched = 0
    for rid, items in sorted(by_rule.items()):
        rule = rules.get(rid)
        split = split_of(f"gitleaks:{rid}")
        tps = [s for s in items if s["kind"] == "tp"]
        random.Random(rid).shuffle(tps)
        for n, s in enumerate(tps[:TPS_PER_RULE]):
            if rule is None:
                continue
            pattern = re.compile(drop_ignored_prefix(translate(rule["regex"])), re.ASCII)
            secret = _secret_of(pattern, s["text"], rule.get("secretGroup", 0))
            if not secret or len(secret.strip()) < 4:
                unmatched += 1
                continue
            yield {
                "id": f"gitleaks:{rid}:{n}",
                "set": "secrets",
                "format": rid,
                "text": s["text"],
                "secrets": [secret],
                "source": f"gitleaks v8.30.1 cmd/generate/config/rules ({rid})",
                "split_key": f"gitleaks:{rid}",
                "split": split,
            }
        for n, s in enumerate(x for x in items if x["kind"] == "fp"):
            yield {
                "id": f"gitleaks-fp:{rid}:{n}",
                "set": "ordinary",
                "text": s["text"],
                "role": "detector-fp",
                "source": f"gitleaks v8.30.1 false positives ({rid})",
                "split_key": f"gitleaks:{rid}",
                "split": split,
            }
    print(f"gitleaks: {unmatched} true positives where the rule finds no secret (skipped)", file=sys.stderr)


# --------------------------------------------------------------------------- Nosey Parker


# Nosey Parker rules that capture more than the secret (a user name, a host, a client id): the group that
# holds the secret, read from each rule's pattern
NP_SECRET_GROUP = {
    "np.auth0.1": 3,
    "np.aws.6": 2,
    "np.azure.1": 2,
    "np.azure.2": 3,
    "np.blynk.8": 2,
    "np.blynk.9": 2,
    "np.generic.3": 2,
    "np.generic.4": 2,
    "np.generic.7": 2,
    "np.generic.8": 3,
    "np.generic.9": 2,
    "np.generic.13": 2,
    "np.generic.14": 2,
    "np.gitalk.1": 2,
    "np.google.6": 2,
    "np.gradle.1": 2,
    "np.kubernetes.2": 2,
    "np.mongodb.1": 2,
    "np.netrc.1": 3,
    "np.odbc.1": 2,
    "np.phpmailer.1": 3,
    "np.postgres.1": 2,
    "np.psexec.1": 2,
    "np.vmware.1": 2,
}
NP_SKIPPED = {"np.generic.10": "its secret is a whole connection string, whose password is the secret"}


def noseyparker() -> Iterator[dict]:
    """Examples of rules whose categories say `secret` (not identifiers such as client ids or hosts, nor
    password hashes), and every negative example."""
    import yaml

    for path in sorted(NOSEYPARKER.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            rid = rule["id"]
            try:
                pattern = re.compile(translate(rule["pattern"]))
            except re.error:
                continue
            split = split_of(f"noseyparker:{rid}")
            categories = set(rule.get("categories") or [])
            secret_rule = "secret" in categories and "hashed" not in categories and rid not in NP_SKIPPED
            for n, text in enumerate(rule.get("examples") or [] if secret_rule else []):
                secret = _secret_of(pattern, text, NP_SECRET_GROUP.get(rid, 0))
                if secret and len(secret.strip()) >= 4:
                    yield {
                        "id": f"noseyparker:{rid}:{n}",
                        "set": "secrets",
                        "format": f"np:{rule['name']}",
                        "text": text,
                        "secrets": [secret],
                        "source": f"Nosey Parker rules/{path.name} ({rid})",
                        "split_key": f"noseyparker:{rid}",
                        "split": split,
                    }
            for n, text in enumerate(rule.get("negative_examples") or []):
                yield {
                    "id": f"noseyparker-neg:{rid}:{n}",
                    "set": "ordinary",
                    "text": text,
                    "role": "detector-fp",
                    "source": f"Nosey Parker negative example ({rid})",
                    "split_key": f"noseyparker:{rid}",
                    "split": split,
                }


# --------------------------------------------------------------------------- real transcripts


def _blocks(entry: dict) -> Iterator[tuple[str, str]]:
    """(role, text) of one transcript line: commands, file paths, tool output, the agent's prose."""
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        yield "text", content
        return
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            yield "text", block.get("text", "")
        elif kind == "tool_use":
            args = block.get("input") or {}
            if isinstance(args.get("command"), str):
                yield "command", args["command"]
            for key in ("file_path", "path", "notebook_path"):
                if isinstance(args.get(key), str):
                    yield "path", args[key]
        elif kind == "tool_result":
            body = block.get("content")
            if isinstance(body, list):
                body = "\n".join(b.get("text", "") for b in body if isinstance(b, dict))
            if isinstance(body, str):
                yield "output", body


def transcripts() -> Iterator[dict]:
    seen: set[str] = set()
    for path in sorted(SWECB.glob("*.jsonl")):
        split = split_of(f"swecb:{path.name}")
        lines: list[tuple[str, str]] = []
        paths: list[str] = []
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            for role, text in _blocks(entry):
                if role == "path":
                    paths.append(text)
                    continue
                for line in text.splitlines():
                    line = line.strip()
                    if LINE_MIN <= len(line) <= LINE_MAX:
                        lines.append((role, line))
        rng = random.Random(path.name)
        unique = list(dict.fromkeys(lines))
        rng.shuffle(unique)
        for role, line in unique[:LINES_PER_SESSION]:
            if line in seen:
                continue
            seen.add(line)
            digest = hashlib.sha256(line.encode()).hexdigest()[:12]
            yield {
                "id": f"swecb:{path.stem}:{digest}",
                "set": "ordinary",
                "text": line,
                "role": role,
                "source": f"SWE-ContextBench Lite transcript {path.name}",
                "split_key": f"swecb:{path.name}",
                "split": split,
            }
        for p in dict.fromkeys(paths):
            if p in seen:
                continue
            seen.add(p)
            digest = hashlib.sha256(p.encode()).hexdigest()[:12]
            yield {
                "id": f"swecb-path:{path.stem}:{digest}",
                "set": "ordinary",
                "text": p,
                "role": "path",
                "source": f"SWE-ContextBench Lite transcript {path.name}",
                "split_key": f"swecb:{path.name}",
                "split": split,
            }


SOURCES = {
    "gitleaks": (GITLEAKS, gitleaks),
    "noseyparker": (NOSEYPARKER, noseyparker),
    "transcripts": (SWECB, transcripts),
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (where, build) in SOURCES.items():
        if not where.exists():
            print(f"{name}: {where} is missing (see this script's docstring); skipped", file=sys.stderr)
            continue
        rows = list(build())
        (OUT / f"{name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        by = {(r["set"], r["split"]) for r in rows}
        counts = {f"{s}/{sp}": sum(r["set"] == s and r["split"] == sp for r in rows) for s, sp in sorted(by)}
        print(f"{name}: {len(rows)} records {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
