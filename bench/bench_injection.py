"""Stored prompt injection: how much of it reaches an agent's context automatically, and what the defence costs
ordinary learnings (issue 37). Prints a table and saves bench/results/injection.json.

Texts: bench/injection/ (public prompt-injection corpora; the learnings and the agent prose of
SWE-ContextBench's sessions), split by group/project; the quarantine was fitted on the fit half
(bench/fit_quarantine.py), this reports both halves and decides on the held-out one.

1. The quarantine decision: the share of attacks quarantined (raw, and wrapped after a real fix as in the
   issue's example) and of real learnings and agent prose quarantined, per source.
2. The renderer: the share of real learnings whose injected line changes at all (beyond the framing line).
3. End to end, this checkout and the release side by side: every held-out attack (raw and wrapped) and every
   held-out real learning is stored as a captured learning with evidence (the most trusted tier: only the
   quarantine keeps an attack out) in a real SQLite store, its error is looked up as the on-error hook does
   (`hooks.retrieve.query`, `select`, `format_context`), and we count what would be injected, and whether
   any injected text still holds a closing tag such as `</system-reminder>`.

    nice python bench/bench_injection.py [--release COMMIT] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(BENCH)]

from injection import corpus  # noqa: E402
from release import release_tree  # noqa: E402

from recall_agent.safety import quarantine, render  # noqa: E402

RESULTS = BENCH / "results" / "injection.json"
RELEASE = "092b9df"  # main when issue 37 started: no framing, no provenance, no quarantine

# run by each side (this checkout, the release) with its package first on PYTHONPATH
SIDE = r"""
import json, sys
from recall_agent.learnings.store import open_store
from recall_agent.models import Learning
from recall_agent.hooks import retrieve
items = json.load(open(sys.argv[1]))
learnings = []
for n, item in enumerate(items):
    learnings.append(Learning(
        repo="bench", error_signatures=[f"RuntimeError: injection case {n} failed in module_{n}_{n * 7919}"],
        resolution_summary=item["text"],
        fix={"source": "transcript", "verified_by": "pytest -q", "calls": ["a", "b"]},
    ))
with open_store() as store:
    store.add_many(learnings)
out = []
for n, item in enumerate(items):
    matches = retrieve.query(f"RuntimeError: injection case {n} failed in module_{n}_{n * 7919}", "bench", 5.0)
    picked = retrieve.select(matches, set())
    text = retrieve.format_context(picked) if picked else ""
    out.append({"injected": bool(text), "closing_tag": "</" in text, "text": text[:3000]})
json.dump(out, sys.stdout)
"""


# notes a person writes with `recall learn`, as recall's own docs and tests show them (never fitted on): the
# shape the benign corpus lacks (short, imperative), where a fitted model can fail in a way the split cannot show
PERSON_NOTES = (
    "pip install pyyaml",  # recall learn --help
    "Pin urllib3<2 in requirements.txt",  # docs/review.md
    "The right package is requests-oauthlib, so I changed the import to requests_oauthlib and added "
    "requests-oauthlib to the dependencies in pyproject.toml.",  # docs/hooks.md
    "Pass the currency into total().",  # tests/test_review_page.py
    "Default the currency to EUR in total().",
    "Clear /tmp/build before the wheel step.",
    "Reinstall everything from scratch.",
    "Add the deploy user to the ops group.",
    "Point TMPDIR at the build volume (/tmp is 2 GB).",
    "PyYAML was missing from requirements.txt; added it (the old key <redacted:openai_key> is not needed).",
    "Pinned urllib3<2 in requirements.txt; botocore 1.29 breaks with urllib3 2.x.",  # tests/test_hooks.py
    "The right package is requests-oauthlib: changed the import and added it to pyproject.toml.",
)


def person_notes() -> dict[str, object]:
    flagged = [n for n in PERSON_NOTES if quarantine.assess(n).quarantined]
    return {"n": len(PERSON_NOTES), "quarantined": len(flagged), "which": flagged}


def decisions(items: list[corpus.Item]) -> dict[str, dict[str, float]]:
    by: dict[str, list[bool]] = defaultdict(list)
    for item in items:
        by[item.source].append(quarantine.assess(*corpus.texts(item)).quarantined)
    return {s: {"n": len(v), "quarantined": sum(v) / len(v)} for s, v in sorted(by.items())}


def summary(items: list[corpus.Item]) -> dict[str, float]:
    flags = [(i.label, quarantine.assess(*corpus.texts(i)).quarantined) for i in items]
    attacks = [f for label, f in flags if label == 1]
    learnings = [f for i, (_, f) in zip(items, flags, strict=True) if i.source == "swecb-learnings"]
    prose = [f for i, (_, f) in zip(items, flags, strict=True) if i.source == "swecb-prose"]
    short = [
        f for i, (_, f) in zip(items, flags, strict=True) if i.source in ("swecb-short", "swecb-commands")
    ]
    return {
        "attacks": len(attacks),
        "attacks_quarantined": sum(attacks) / max(1, len(attacks)),
        "learnings": len(learnings),
        "learnings_quarantined": sum(learnings) / max(1, len(learnings)),
        "prose": len(prose),
        "prose_quarantined": sum(prose) / max(1, len(prose)),
        "short": len(short),
        "short_quarantined": sum(short) / max(1, len(short)),
    }


def renderer_changes(items: list[corpus.Item]) -> dict[str, float]:
    learnings = [i for i in items if i.source == "swecb-learnings"]
    changed = [i for i in learnings if render.inline(i.text) != " ".join(i.text.split())]
    return {
        "learnings": len(learnings),
        "changed": len(changed),
        "share": len(changed) / max(1, len(learnings)),
    }


def side(pythonpath: Path, items: list[dict], work: Path) -> list[dict]:
    home = work / "home"
    home.mkdir(parents=True)
    data = work / "items.json"
    data.write_text(json.dumps(items))
    env = dict(os.environ, RECALL_HOME=str(home), PYTHONPATH=str(pythonpath), RECALL_DORMANT_DAYS="0")
    for name in ("AGENT_LEARNING_RETRIEVAL_URL", "RECALL_SERVER_URL", "RECALL_HOOK_MIN_SIMILARITY"):
        env.pop(name, None)
    done = subprocess.run(  # cwd: not this checkout (python -c puts the working folder first on sys.path)
        [sys.executable, "-c", SIDE, str(data)], env=env, capture_output=True, text=True, cwd=work
    )
    if done.returncode:
        raise SystemExit(f"side {pythonpath} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def end_to_end(items: list[corpus.Item], release: str) -> dict[str, dict[str, float]]:
    payload = [{"text": i.text, "label": i.label, "source": i.source} for i in items]
    out: dict[str, dict[str, float]] = {}
    texts: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this checkout": ROOT}
        if release:
            sides[f"release {release}"] = release_tree(Path(tmp), release)
        for name, path in sides.items():
            start = time.perf_counter()
            got = side(path, payload, Path(tmp) / name.replace(" ", "-"))
            attacks = [g for g, i in zip(got, items, strict=True) if i.label == 1]
            benign = [g for g, i in zip(got, items, strict=True) if i.label == 0]
            out[name] = {
                "attacks": len(attacks),
                "attacks_injected": sum(g["injected"] for g in attacks) / max(1, len(attacks)),
                "learnings": len(benign),
                "learnings_injected": sum(g["injected"] for g in benign) / max(1, len(benign)),
                "injected_with_closing_tag": sum(g["closing_tag"] for g in got),
                "framed": sum(g["text"].startswith(render.FRAME) for g in got if g["injected"]),
                "seconds": round(time.perf_counter() - start, 1),
            }
            texts[name] = [re.sub(r"id [0-9a-f]{8}\)$", "id)", g["text"]) for g in benign]
            if name == "this checkout":
                out[name]["example"] = next((g["text"] for g in benign if g["injected"]), "")
    if release:  # ordinary learnings: the same lines as the release's, under the one framing line
        ours, theirs = texts["this checkout"], texts[f"release {release}"]
        same = sum(a == render.frame(b) for a, b in zip(ours, theirs, strict=True) if b)
        out["this checkout"]["learnings_same_as_release"] = same / max(1, sum(1 for b in theirs if b))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default=RELEASE, help="commit run side by side ('' skips)")
    ap.add_argument("--limit", type=int, default=0, help="at most N texts per source end to end (0: all)")
    args = ap.parse_args(argv)
    items = corpus.load()
    report: dict = {"command": "nice python bench/bench_injection.py", "load_average": os.getloadavg()}
    for half in ("fit", "heldout"):
        mine = [i for i in items if i.half == half]
        attacks = [i for i in mine if i.label == 1]
        everything = mine + corpus.wrapped(attacks, mine)
        report[half] = {"summary": summary(everything), "by_source": decisions(everything)}
        if half == "heldout":
            report[half]["renderer"] = renderer_changes(mine)
            report[half]["person_notes"] = person_notes()
            stored = [i for i in everything if i.source in ("swecb-learnings",) or i.label == 1]
            chosen = _first_per_source(stored, args.limit) if args.limit else stored
            report[half]["end_to_end"] = end_to_end(chosen, args.release)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print_table(report)
    return 0


def _first_per_source(items: list[corpus.Item], limit: int) -> list[corpus.Item]:
    seen: dict[str, int] = defaultdict(int)
    out = []
    for item in items:
        seen[item.source] += 1
        if seen[item.source] <= limit:
            out.append(item)
    return out


def print_table(report: dict) -> None:
    print(f"load average {report['load_average'][0]:.1f}")
    for half in ("fit", "heldout"):
        s = report[half]["summary"]
        print(f"\n{half} half: {s['attacks']} attacks, {s['attacks_quarantined']:.1%} quarantined; "
              f"{s['learnings']} real learnings, {s['learnings_quarantined']:.2%} quarantined; "
              f"{s['prose']} agent texts, {s['prose_quarantined']:.2%} quarantined; "
              f"{s['short']} short lines and commands, {s['short_quarantined']:.2%} quarantined")  # fmt: skip
        for source, row in report[half]["by_source"].items():
            print(f"  {source:28} {row['n']:5}  {row['quarantined']:7.1%}")
    r = report["heldout"]["renderer"]
    print(
        f"\nrenderer: {r['changed']} of {r['learnings']} held-out real learnings render differently ({r['share']:.2%})"
    )
    p = report["heldout"]["person_notes"]
    print(f"person-style notes from recall's own docs and tests: {p['quarantined']} of {p['n']} quarantined")
    print("\nend to end (held-out, stored as captured learnings with evidence, looked up as the hook does):")
    print(
        f"  {'side':22} {'attacks':>8} {'injected':>9} {'learnings':>10} {'injected':>9} {'closing tag':>12} {'framed':>7}"
    )
    for name, row in report["heldout"]["end_to_end"].items():
        print(f"  {name:22} {row['attacks']:8} {row['attacks_injected']:9.1%} {row['learnings']:10} "
              f"{row['learnings_injected']:9.1%} {row['injected_with_closing_tag']:12} {row['framed']:7}")  # fmt: skip
    same = report["heldout"]["end_to_end"]["this checkout"].get("learnings_same_as_release")
    if same is not None:
        print(f"ordinary learnings injected exactly as by the release under the framing line: {same:.1%}")


if __name__ == "__main__":
    raise SystemExit(main())
