"""Why a labelled fix worth keeping is not stored (issue 33, recall): one class per missed fix.

Each session of the TUNING projects (never the held-out ones) is replayed through this checkout's capture
engine in process, every judged run and episode recorded, and its learnings built as the benchmark's
in-process path builds them. A labelled fix worth keeping (`labels.worth_keeping`) that no learning of the
session holds (judged as `bench_capture.judge` does) goes into the first class that fits:

- not a run: the failing call is no run of the engine (a tool whose failures are about using it, an
  interrupted call) or is not in the transcript;
- not a failure: the run model judged the failing call passed;
- folded: the call joined another error (its text is in an error that first failed earlier);
- still open: its error was never resolved (split: another program passed later, or nothing did);
- dropped by a model: the episode holding it was judged and not kept (variant, transient or episode);
- kept, not matched: a learning was built from it, but the benchmark's judge did not match it to the label
  (keyed on another line, or merged into another episode's learning);
- trimmed: none of the above (the error was forgotten: MAX_OPEN, a shown error replaced).

    python3 bench/missed_why.py [--projects tune] [--interactive] [--show CLASS]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))

import labels as L  # noqa: E402
from bench_capture import judge  # noqa: E402

from recall_agent.capture import learning  # noqa: E402
from recall_agent.capture.engine import Engine  # noqa: E402
from recall_agent.capture.transcript import Transcript  # noqa: E402


def replay(label: L.Label) -> tuple[Engine, list[dict[str, Any]]]:
    t = Transcript(label.path)
    engine = Engine(record=True)
    engine.feed(t.steps())
    engine.end_turn()
    ctx = learning.Context(session_id=t.stats.session_id or label.session, root=t.stats.cwd, branch=None,
                           repo="r")  # fmt: skip
    built = [learning.build(ep, ctx) for ep in engine.episodes()]
    return engine, [b for b in built if b]


def classify(engine: Engine, episode: dict[str, Any], built: list[dict[str, Any]]) -> tuple[str, str]:
    """The class of one missed labelled fix, and a line saying what the engine saw."""
    want = L.Label.episode_ids(episode)
    last = L.suffix(str(episode.get("failed")))
    judged = {L.suffix(run.id): (run, failed) for run, _, failed in engine.judged_runs}
    if last in judged and not judged[last][1]:
        run = judged[last][0]
        return "not a failure (run model)", f"{run.tool} {run.command.text[:90]}"
    for ep in engine.judged_episodes:
        ids = {L.suffix(e["id"]) for e in ep.errors}
        if last in ids or (ids & want and not ep.keep):
            first = L.suffix(ep.errors[0]["id"])
            if first not in want and ep.keep:
                return "folded into another error", f"first {first}: {ep.errors[0]['text'][-90:]!r}"
            if ep.keep:
                return "kept, not matched", f"passed {ep.passed.command.text[:60]}"
            which = "variant" if ep.variant else ("transient" if ep.features.get("fix_own_code", 0) > 0.15
                                                  else "episode")  # fmt: skip
            return f"dropped by a model ({which})", _candidates(engine, want, str(episode.get("passed")))
    for st in engine.streams.values():
        for err in st.open:
            ids = {L.suffix(e["id"]) for e in err["errors"]}
            if last in ids:
                if L.suffix(err["errors"][0]["id"]) not in want:
                    return "folded into another error (open)", err["errors"][0]["text"][-90:]
                tries = int(err.get("variant") or 0)
                passed = judged.get(L.suffix(str(episode.get("passed"))))
                later = f" | passed: {passed[0].tool} {passed[0].command.text[:70]!r}" if passed else ""
                what = "still open (variants offered)" if tries else "still open"
                return what, err["command"][:70] + later
    if last not in judged:  # a path tool's failure is no judged run: it opens an error or nothing
        return "not a run (tool usage, interrupted, a path tool's other error)", ""
    return "trimmed or superseded", ""


def _candidates(engine: Engine, want: set[str], passed: str) -> str:
    """The passing runs judged as this error's fix, each with the model's probability; `*` marks the
    labelled `passed` call."""
    out = []
    for ep in engine.judged_episodes:
        if {L.suffix(e["id"]) for e in ep.errors} & want:
            mark = "*" if L.suffix(ep.passed.id) == L.suffix(passed) else ""
            m = engine._variant_model if ep.variant else engine._episode_model
            out.append(f"{mark}{'v' if ep.variant else 'e'}{m.probability(ep.features):.2f} "
                       f"{ep.passed.command.text[:50]!r}")  # fmt: skip
    return " | ".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", nargs="+", default=["tune"], choices=["tune"])  # never the held-out half
    ap.add_argument("--interactive", action="store_true", help="leave SWE-ContextBench out")
    ap.add_argument("--show", default="", help="print the misses of classes starting with this")
    args = ap.parse_args(argv)
    labels = L.load_projects(tuple(args.projects))
    if args.interactive:
        labels = [lb for lb in labels if lb.project != "swecb"]
    counts: Counter[str] = Counter()
    for label in labels:
        engine, built = replay(label)
        res = judge([label], [{**b, "session_id": b.get("session_id") or label.session} for b in built])
        missed = {str(m["failed"]) for m in res["missed"]}
        for e in label.episodes:
            if not L.worth_keeping(e) or str(e.get("failed")) not in missed:
                continue
            cls, why = classify(engine, e, built)
            counts[cls] += 1
            if args.show and (args.show == "all" or cls.startswith(args.show)):
                print(f"{label.project:14s} {label.session[:8]} {e.get('failed')} [{cls}] {why}")
                print(f"      label: {str(e.get('error'))[:110]!r}")
                fix = e.get("fix") or {}
                print(f"      fix: {fix.get('kind')} {str(fix.get('what'))[:140]}  passed={e.get('passed')}")
    for cls, n in counts.most_common():
        print(f"{n:4d}  {cls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
