"""Runner framing lines in real sessions (issue 34): what the hand-written list catches, and what mining finds.

For every failed tool call of the session corpora (`bench/.cache/sessions/<corpus>/*.jsonl`), the error lines
the normalizer considers (signatures._tool_lines, folded) are collected per output. Two tables:

1. `framing`: every distinct line `extract.WRAPPER_LINE` calls framing, with how often and in how many
   sessions, per half: read it to judge the list's precision (a decisive line called framing is a miss);
2. `mined`: the lines of the tuning projects that co-occur with the most distinct other error lines (the
   data-driven criterion the issue suggests), with how often they stand alone. Kept to show why the list is
   not mined: on these corpora the top of that ranking mixes real diagnostics (pyright's `Type of "x" is
   partially unknown`, printed by the dozen per run) with framing (`make: *** [type] Error 1`).

Beside them, per half: pairs of failed outputs of two sessions of one project with one fingerprint (the hook
would hand one's fix to the other at 1.0), and how many of them share only a framing line. Run it with the
release's code first for the side by side: `PYTHONPATH=<release checkout> python bench/mine_wrappers.py
OUT.json` (the release's `WRAPPER_LINE` then judges "framing": the count is a lower bound there).

    python bench/mine_wrappers.py            # a few minutes; writes bench/results/wrappers.json
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recall_agent.capture.transcript import Result, Transcript  # noqa: E402
from recall_agent.learnings import signatures as sigs  # noqa: E402
from recall_agent.learnings.extract import WRAPPER_LINE, clean  # noqa: E402

SESSIONS = ROOT / "bench" / ".cache" / "sessions"
# project split fixed by issue 33's corpus (CORPUS-READY.md / split.json "projects"); swecb by its own rule
HALVES = {
    "tune": ["oh-my-posh", "esdeveniments", "cybervpn", "openshrooly", "claude-code-archiver", "swecb"],
    "heldout": ["context-evaluator", "cipher-box", "safecast-mcp", "leeson", "imatrix", "claude-code-viewer",
                "claude-reliability", "claude-transcript"],
}  # fmt: skip
TAIL = 20_000  # characters of an output read (its end: a run fails there)
RESULTS = ROOT / "bench" / "results" / "wrappers.json"


def outputs(corpus: str):
    for path in sorted((SESSIONS / corpus).glob("*.jsonl")):
        try:
            for step in Transcript(path).steps():
                if isinstance(step, Result) and step.is_error and step.text:
                    yield path.stem, step.text[-TAIL:]
        except OSError:
            continue


def scan(corpora: list[str]) -> dict:
    framing: collections.Counter[str] = collections.Counter()
    framing_sessions: dict[str, set[str]] = collections.defaultdict(set)
    occurs: collections.Counter[str] = collections.Counter()
    alone: collections.Counter[str] = collections.Counter()
    companions: dict[str, set[str]] = collections.defaultdict(set)
    failed = 0
    by_fp: dict[tuple[str, str], list[tuple[str, str]]] = collections.defaultdict(list)
    for corpus in corpora:
        for session, text in outputs(corpus):
            failed += 1
            normalized = sigs.normalize(text)
            causes = [ln for ln in normalized.split("\n") if not ln.startswith(("at ", "+ "))]
            if causes and not all(c.startswith("~ ") for c in causes):  # `~ ` lines are never matched on
                by_fp[(corpus, sigs.fingerprint_normalized(normalized))].append((session, causes[0]))
            found = {}
            for line, _kind in sigs._tool_lines(clean(text)):
                found[sigs.fold(line)] = bool(WRAPPER_LINE.search(line))
            for line, is_framing in found.items():
                occurs[line] += 1
                companions[line] |= set(found) - {line}
                alone[line] += len(found) == 1
                if is_framing:
                    framing[line] += 1
                    framing_sessions[line].add(f"{corpus}/{session}")
    mined = sorted(
        ((len(companions[ln]), occurs[ln], alone[ln], ln) for ln in occurs if occurs[ln] >= 3), reverse=True
    )[:30]
    # outputs of two sessions of one project with one fingerprint: the hook hands one's fix to the other at
    # 1.0; `framing_only`: the pairs whose cause lines are all framing (WRAPPER_LINE): unrelated failures of
    # one runner matched through its own lines
    pairs = framing_pairs = 0
    for items in by_fp.values():
        for i, (s1, c1) in enumerate(items):
            for s2, _ in items[i + 1 :]:
                if s1 != s2:
                    pairs += 1
                    framing_pairs += bool(WRAPPER_LINE.search(c1))
    return {
        "failed_outputs": failed,
        "same_fingerprint_pairs": pairs,
        "framing_only_pairs": framing_pairs,
        "framing": [
            {"line": ln[:200], "count": n, "sessions": len(framing_sessions[ln])}
            for ln, n in framing.most_common()
        ],
        "mined": [{"line": ln[:200], "companions": c, "count": n, "alone": a} for c, n, a, ln in mined],
    }


def main() -> int:
    out = {half: scan(corpora) for half, corpora in HALVES.items()}
    for half, data in out.items():
        print(f"\n== {half}: {data['failed_outputs']} failed outputs")
        print(
            f"pairs of outputs of two sessions of one project with one fingerprint: "
            f"{data['same_fingerprint_pairs']}, of them through a framing line: {data['framing_only_pairs']}"
        )
        print("framing lines (WRAPPER_LINE):")
        for row in data["framing"][:40]:
            print(f"  {row['count']:4d} x in {row['sessions']:3d} sessions  {row['line'][:110]}")
        print("most companions (the mined criterion):")
        for row in data["mined"][:15]:
            print(
                f"  {row['companions']:4d} companions {row['count']:4d} x {row['alone']:3d} alone  {row['line'][:90]}"
            )
    if len(sys.argv) > 1:  # another checkout's normalizer (PYTHONPATH=<it>): the figures only
        Path(sys.argv[1]).write_text(json.dumps(out, indent=1) + "\n")
        return 0
    RESULTS.write_text(json.dumps({"command": "python bench/mine_wrappers.py", **out}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
