"""Every learning the tuning projects' sessions store, judged one by one (right, right as the hook shows it),
with its text: in sample with the shipped weights, or out of fold (`--lopo DIR`: each project replayed with
the weights its fold of `fit_capture.py --lopo --lopo-weights DIR` fitted without it). Two runs' JSON side by
side (`--before`) print the learnings whose text changed, the judge's verdicts before and after.

    python3 bench/judge_each.py [--lopo DIR] [--interactive] --out F.json [--before G.json]

Tuning projects only (the held-out half is never read)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE / "sessions")]

import labels as L  # noqa: E402
from bench_capture import judge, shown  # noqa: E402
from fit_capture import unit_of  # noqa: E402
from missed_why import replay  # noqa: E402

from recall_agent.capture import model  # noqa: E402


def rows(lopo: Path | None, interactive: bool) -> list[dict]:
    labels = L.load_projects(("tune",))
    if interactive:
        labels = [lb for lb in labels if lb.project != "swecb"]
    out = []
    for project in sorted({lb.project for lb in labels}):
        of = [lb for lb in labels if lb.project == project]
        if lopo:
            model.WEIGHTS = lopo / f"lopo-{unit_of(of[0])}.json"
            model.load.cache_clear()
        for label in of:
            _, built = replay(label)
            held: list[dict] = []
            for lr in built:
                lr = {**lr, "session_id": lr.get("session_id") or label.session}
                was = judge([label], held)
                held.append(lr)
                now = judge([label], held)
                real = now["real"] > was["real"]
                shown_was = round((was["right_shown"] or 0) * was["real"])
                out.append({
                    "project": project, "session": label.session, "real": real,
                    "calls": [L.suffix(c) for c in (lr.get("fix") or {}).get("calls") or []],
                    "right": real and now["right"] > was["right"],
                    "right_shown": real and round(now["right_shown"] * now["real"]) > shown_was,
                    "right_v2": real and now["right_v2"] > was["right_v2"],
                    "text": lr.get("resolution_summary"), "shown": shown(lr),
                })  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lopo", type=Path, help="a folder of fold weights")
    ap.add_argument("--interactive", action="store_true", help="leave SWE-ContextBench out")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--before", type=Path, help="another run's JSON: print the texts that changed")
    args = ap.parse_args()
    found = rows(args.lopo, args.interactive)
    args.out.write_text(json.dumps(found, indent=1) + "\n")
    for name, rs in (("all", found), ("interactive", [r for r in found if r["project"] != "swecb"])):
        real = sum(r["real"] for r in rs)
        right, right_shown = sum(r["right"] for r in rs), sum(r["right_shown"] for r in rs)
        v2 = sum(r["right_v2"] for r in rs)
        print(
            f"{name}: stored {len(rs)} matched {real} right {right} right_shown {right_shown} right_v2 {v2}"
        )
    if args.before:
        was = json.loads(args.before.read_text())
        changed = [(x, y) for x, y in zip(was, found, strict=True) if x["text"] != y["text"]]
        print(f"changed {len(changed)}")
        for x, y in changed:
            verdict = f"right {x['right']:d}->{y['right']:d} shown {x['right_shown']:d}->{y['right_shown']:d}"
            print(f"\n## {x['project']} {x['session'][:8]} {'matched' if x['real'] else 'false'} {verdict}")
            print("  before:", str(x["text"]).splitlines()[0])
            print("  after: ", str(y["text"]).splitlines()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
