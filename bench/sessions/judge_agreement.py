"""How often the benchmark's judges of a resolution agree with a reader (issue 33, eleventh round).

`right_verdicts.json` holds hand verdicts on stored resolutions of the tuning projects: does the text say the
labelled fix, as a later agent reads it? Each verdict names its label episode (project, session, failed call)
and the resolution judged. This script runs both judges of `labels.py` on each (`says_the_fix`, which every
round's figures use, and `says_the_fix_v2`) and prints, per set of verdicts, how often each agrees with the
reader, and its two kinds of disagreement. No transcript is read: the texts are in the file, the labels in theirs.

    python3 bench/sessions/judge_agreement.py [--show]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import labels as L  # noqa: E402
import yaml  # noqa: E402

JUDGES = {"says_the_fix": L.says_the_fix, "says_the_fix_v2": L.says_the_fix_v2}


def episodes() -> dict[tuple[str, str], dict[str, Any]]:
    """(session, failed call id) -> labelled episode, over the tuning projects' first labels; read from the
    label files alone (no transcript needed: a clean checkout has none)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(L.LABELS.glob("*/*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("labeller") == L.SECOND:
            continue
        if L.project_half(str(data.get("corpus") or path.parent.name)) != "tune":
            continue
        session = str(data.get("session") or path.stem)
        for e in data.get("episodes") or []:
            out[(session, str(e.get("failed")))] = e
    return out


def tally(verdicts: list[dict[str, Any]], show: bool) -> dict[str, dict[str, Counter]]:
    eps = episodes()
    out: dict[str, dict[str, Counter]] = {}
    for v in verdicts:
        ep = eps.get((v["session"], v["failed"]))
        if ep is None:
            print(f"no label for {v['project']} {v['session']} {v['failed']}", file=sys.stderr)
            continue
        for name, judge in JUDGES.items():
            said = judge(v["resolution"], ep)
            kind = (
                "agree"
                if said == v["right"]
                else ("right, reader: wrong" if said else "wrong, reader: right")
            )
            out.setdefault(v["set"], {}).setdefault(name, Counter())[kind] += 1
            out.setdefault("all", {}).setdefault(name, Counter())[kind] += 1
            if show and kind != "agree" and name == "says_the_fix_v2":
                print(f"[{kind}] {v['project']} {v['session'][:8]}: {v['resolution'][:160]!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="print the second judge's disagreements")
    args = ap.parse_args(argv)
    verdicts = json.loads((HERE / "right_verdicts.json").read_text(encoding="utf-8"))["verdicts"]
    table = tally(verdicts, args.show)
    print(f"{'verdicts':<96} {'judge':<16} {'n':>4} {'agree':>6} {'R/w':>4} {'W/r':>4}")
    for group, judges in table.items():
        for name, c in judges.items():
            n = sum(c.values())
            print(f"{group[:96]:<96} {name:<16} {n:>4} {c['agree']:>6} "
                  f"{c['right, reader: wrong']:>4} {c['wrong, reader: right']:>4}")  # fmt: skip
    print("R/w: the judge says right, the reader wrong; W/r: the judge says wrong, the reader right")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
