"""Regenerate recall_agent/redact/gitleaks.json from a gitleaks checkout: the default rules, translated from
Go's RE2 syntax to Python's `re`, with the version, the commit and the MIT license credit recorded.

    # get the source with the search tool's fetch (github:gitleaks/gitleaks), then:
    git -C <mirror> archive v8.30.1 config/gitleaks.toml LICENSE | tar -x -C bench/.cache/gitleaks-v8.30.1
    python bench/redaction/gitleaks_rules.py bench/.cache/gitleaks-v8.30.1 --version v8.30.1 --commit <sha>

Translation (three RE2 forms Python's `re` lacks; every other rule compiles as written):
- a flag group in mid-pattern, `ab(?i)cd|ef)`, applies to the rest of its group, alternatives included:
  it becomes a scoped group per alternative, `ab(?i:cd)|(?i:ef)`;
- `\\z` (end of text) becomes `\\Z`;
- POSIX classes inside brackets, `[[:alnum:]]`, become their ASCII ranges.
Two changes of what a rule accepts around the token, both recorded per rule in "go_regex":
- the semi-generic and unique-token rules end with `(?:[\\x60'"\\s;]|\\\\[nr]|$)`: a token in a file ends
  at a quote, a space or a semicolon; in error text and paths it also ends at `)`, `,`, `]`, `}`, `>`, `&`,
  `|` and `/` (`(credential dapi…)`, `?key=AIza…&q=1`, a folder named after it), which the ending accepts;
- one change for speed: the semi-generic rules open with `[\\w.-]{0,50}?` (twice: once outside, once inside
their `(?i:` group). That prefix only widens the match to the left of the key, never the secret group, but
a backtracking engine tries its 50 x 50 lengths at every position (250-350 ms on 4000 characters): it is
dropped.
Rules are compiled with re.ASCII, as RE2's `\\w`, `\\s`, `\\b` are ASCII. Rules left out are listed in the
file with the reason: those with no regex or that apply to one kind of file (gitleaks matches their
path; redacted text has none), the generic keyword rule
(recall's structural rules do that job; see recall_agent/redact/structure.py), and any rule whose Python
form is not linear (tests/test_regex_safety.py is the judge; the list below is kept by hand from its runs).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "recall_agent" / "redact" / "gitleaks.json"

# rule id -> why it is not shipped (beyond the ones without a regex)
LEFT_OUT = {
    "generic-api-key": "keyword-and-entropy rule: recall's structural rules decide by the key instead",
}

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
    "space": r" \t\r\n\v\f",
    "punct": r"!-/:-@\[-`{-~",
    "word": "0-9A-Za-z_",
}
_FLAG_GROUP = re.compile(r"\(\?([imsU-]+)\)")


def translate(go: str) -> str:
    """The Python `re` form of one RE2 pattern (see the module docstring)."""
    out: list[str] = []
    frames: list[list[str]] = [[]]  # per open group: the flag groups opened inside it, still to close
    i, n, in_class = 0, len(go), False
    while i < n:
        c = go[i]
        if c == "\\" and i + 1 < n:
            out.append(r"\Z" if go[i + 1] == "z" and not in_class else go[i : i + 2])
            i += 2
            continue
        if in_class:
            posix = re.match(r"\[:(\w+):\]", go[i:])
            if posix:
                out.append(_POSIX[posix.group(1)])
                i += posix.end()
                continue
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and go[i] == "^":
                out.append("^")
                i += 1
            if i < n and go[i] == "]":  # a literal ] first in the class
                out.append("]")
                i += 1
            continue
        flag = _FLAG_GROUP.match(go, i)
        if flag and (i > 0 or len(frames) > 1):
            flags = flag.group(1).replace("U", "")
            out.append(f"(?{flags}:")
            frames[-1].append(flags)
            i = flag.end()
            continue
        if c == "(":
            frames.append([])
        elif c == ")":
            out.append(")" * len(frames.pop()))
        elif c == "|":
            opened = frames[-1]
            out.append(")" * len(opened) + "|" + "".join(f"(?{f}:" for f in opened))
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(frames.pop()))
    return "".join(out)


_IGNORED_PREFIX = "[\\w.-]{0,50}?"


def drop_ignored_prefix(pattern: str) -> str:
    """`(?i)[\\w.-]{0,50}?(?i:[\\w.-]{0,50}?(?:key))...` -> `(?i)(?i:(?:key))...` (see the module docstring)."""
    head = ""
    while True:
        for opener in ("(?i)", "(?i:"):
            if pattern.startswith(opener):
                head, pattern = head + opener, pattern[len(opener) :]
                break
        else:
            if not pattern.startswith(_IGNORED_PREFIX):
                return head + pattern
            pattern = pattern[len(_IGNORED_PREFIX) :]


_GO_END = """(?:[\\x60'"\\s;]|\\\\[nr]|$)"""
_ERROR_TEXT_END = """(?:[\\x60'"\\s;),\\]}>&|/]|\\\\[nr]|$)"""


# Allowlist regexes that backtrack under Python's search, and their linear forms (same matches for a
# search: a run is tried once from its start, `<…>` stops at the next `<`)
_LINEAR_ALLOW = (
    (".+EXAMPLE$", ".EXAMPLE$"),
    ("<[^:]+:[^>]+>", "<[^<>:]++:[^<>]++>"),
    ("<[^>]+>", "<[^<>]++>"),
    ("[^:]+:", "(?<![^:])[^:]++:"),
    ("[^:]+['\"]?:", "(?<![^:'\"])[^:'\"]++['\"]?:"),
)


def linear_allowlist(regex: str) -> str:
    for slow, fast in _LINEAR_ALLOW:
        regex = regex.replace(slow, fast)
    return regex


def _allowlist(raw: dict) -> dict:
    return {
        "condition": raw.get("condition", "OR"),
        "target": raw.get("regexTarget", "secret"),
        "regexes": [linear_allowlist(translate(r)) for r in raw.get("regexes", [])],
        "stopwords": [w.lower() for w in raw.get("stopwords", [])],
        "paths": bool(raw.get("paths")),  # recall redacts text with no file path: such a clause never holds
    }


def convert(config: dict) -> tuple[list[dict], list[dict]]:
    rules, dropped = [], []
    for rule in config["rules"]:
        rid = rule["id"]
        if "regex" not in rule:
            dropped.append({"id": rid, "reason": "no regex: gitleaks matches it by file path"})
            continue
        if "path" in rule:
            dropped.append(
                {"id": rid, "reason": "applies to files of one kind only (a path rule): no path here"}
            )
            continue
        if rid in LEFT_OUT:
            dropped.append({"id": rid, "reason": LEFT_OUT[rid]})
            continue
        python = translate(rule["regex"])
        fast = drop_ignored_prefix(python).replace(_GO_END, _ERROR_TEXT_END)
        re.compile(fast, re.ASCII)
        rules.append(
            {
                "id": rid,
                "regex": fast,
                **({"go_regex": rule["regex"]} if fast != rule["regex"] else {}),
                **({"syntax_translated": True} if python != rule["regex"] else {}),
                "keywords": [k.lower() for k in rule.get("keywords", [])],
                "entropy": rule.get("entropy", 0.0),
                "secret_group": rule.get("secretGroup", 0),
                "allowlists": [_allowlist(a) for a in rule.get("allowlists", [])],
            }
        )
    return rules, dropped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", type=Path, help="a gitleaks tree holding config/gitleaks.toml and LICENSE")
    ap.add_argument("--version", required=True)
    ap.add_argument("--commit", required=True)
    args = ap.parse_args()
    config = tomllib.loads((args.source / "config" / "gitleaks.toml").read_text())
    license_text = (args.source / "LICENSE").read_text()
    rules, dropped = convert(config)
    data = {
        "source": "https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml",
        "version": args.version,
        "commit": args.commit,
        "license": license_text,
        "syntax_translated": sorted(r["id"] for r in rules if r.get("syntax_translated")),
        "prefix_dropped": sorted(
            r["id"] for r in rules if "go_regex" in r and not r.get("syntax_translated")
        ),
        "dropped": dropped,
        "global_allowlist": _allowlist(config.get("allowlist", {})),
        "rules": rules,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(
        f"{len(rules)} rules written to {OUT.relative_to(ROOT)}, {len(data['syntax_translated'])} translated,"
    )
    print(f"{len(dropped)} left out: " + ", ".join(d["id"] for d in dropped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
