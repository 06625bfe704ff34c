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

And every stored learning that holds no labelled fix worth keeping goes into the first class that fits
(`classify_false`): a fix the label calls transient (the session's own fresh code), a fix the label calls
not worth keeping (by the label's kind: scratch, environment, project), a second learning of a fix another
learning already holds, a failure the label calls never fixed, a labelled failure paired with the wrong
fix (keyed on its error line, other calls), a line the labels call background, a call the labels list as
no failure at all. `--show` prints each false store's last printed line and its key (the cause lines the store
matches on, `signatures.normalize`): the last line is often a trailer (`FAIL`, `Node.js v22`, an echo marker)
that the key leaves out.

`--lopo DIR` judges out of fold: each tuning project's sessions are replayed with the weights its fold of
`fit_capture.py --lopo --lopo-weights DIR` fitted without it (`DIR/lopo-<project>.json`), which is what a
project none of the fit saw gets; the table is printed pooled over the interactive projects and per
project, and saved as JSON (`--out`).

    python3 bench/missed_why.py [--projects tune] [--interactive] [--show CLASS] [--lopo DIR] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))

import labels as L  # noqa: E402
from bench_capture import is_reported, is_task, judge  # noqa: E402

from recall_agent.capture import learning, model  # noqa: E402
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


def classify_false(label: L.Label, lr: dict[str, Any], found: set[str]) -> tuple[str, str]:
    """Why a stored learning holds no labelled fix worth keeping: the first class that fits, and the label's
    line for it. `found`: the failing calls of the labelled fixes other learnings of the session hold."""
    calls = {L.suffix(c) for c in ((lr.get("fix") or {}).get("calls") or [])[:-1]}
    sigs = [str(x) for x in lr.get("error_signatures") or []]
    for e in label.episodes:
        if not label.episode_ids(e) & calls:
            continue
        what = f"{str(e.get('error'))[:90]!r}"
        if L.worth_keeping(e):
            return "a second learning of a fix already held", what
        if L.transient(e):
            return "transient (the label: the session's own fresh code)", what
        return f"not worth keeping (label kind {e.get('kind') or '?'})", what
    for e in label.unfixed:
        if label.episode_ids(e) & calls:
            return "never fixed (label: unfixed)", f"{str(e.get('error'))[:90]!r}"
    for e in label.episodes:
        if L.keyed_on_error(sigs, e):
            state = (
                "found" if label.episode_ids(e) & found else "useful" if L.worth_keeping(e) else "not useful"
            )
            return f"keyed on a labelled error, other calls ({state})", f"{str(e.get('error'))[:90]!r}"
    if L.keyed_on_background(sigs, label):
        return "keyed on a background line", ""
    return "not a labelled failure", ""


def diagnose(labels: list[L.Label], show: str = "") -> dict[str, Any]:
    """Each session replayed with the weights in `model.WEIGHTS`: the classes of its missed fixes and of its
    false stores, counted per project, and the rows."""
    out: dict[str, Any] = {"missed": Counter(), "false": Counter(), "rows": [], "projects": {}}
    for label in labels:
        engine, built = replay(label)
        stored = [{**b, "session_id": b.get("session_id") or label.session} for b in built]
        res = judge([label], stored)
        per = out["projects"].setdefault(label.project, {"missed": Counter(), "false": Counter(),
                                                         "stored": 0, "useful": 0})  # fmt: skip
        per["stored"] += res["stored"]
        per["useful"] += res["useful_labelled"]
        missed = {str(m["failed"]) for m in res["missed"]}
        for e in label.episodes:
            if not L.worth_keeping(e) or str(e.get("failed")) not in missed:
                continue
            cls, why = classify(engine, e, built)
            out["missed"][cls] += 1
            per["missed"][cls] += 1
            fix = e.get("fix") or {}
            out["rows"].append({"project": label.project, "session": label.session, "what": "missed",
                                "class": cls, "call": e.get("failed"), "why": why,
                                "error": str(e.get("error"))[:160], "fix_kind": fix.get("kind"),
                                "fix": str(fix.get("what"))[:200]})  # fmt: skip
            if show and (show == "all" or cls.startswith(show)):
                print(f"{label.project:14s} {label.session[:8]} {e.get('failed')} [{cls}] {why}")
                print(f"      label: {str(e.get('error'))[:110]!r}")
                print(f"      fix: {fix.get('kind')} {str(fix.get('what'))[:140]}  passed={e.get('passed')}")
        found = {str(e.get("failed")) for e in label.episodes if L.worth_keeping(e)} - missed
        found_ids = set().union(
            *(label.episode_ids(e) for e in label.episodes if str(e.get("failed")) in found)
        )
        runs = {L.suffix(run.id): run for run, _, _ in engine.judged_runs}
        for lr in _false_stores(label, stored):
            cls, why = classify_false(label, lr, found_ids)
            calls = [L.suffix(c) for c in (lr.get("fix") or {}).get("calls") or []]
            out["false"][cls] += 1
            per["false"][cls] += 1
            sig = str((lr.get("error_signatures") or [""])[-1]).strip().splitlines()
            key = _key(lr)
            out["rows"].append({"project": label.project, "session": label.session, "what": "false",
                                "class": cls, "why": why, "error": (sig[-1] if sig else "")[:160], "key": key,
                                "calls": calls, "flagged": any(runs[c].flagged for c in calls[:-1] if c in runs),
                                "tool": runs[calls[0]].tool if calls and calls[0] in runs else None,
                                "fix_kind": (lr.get("fix") or {}).get("kind"),
                                "stored": str(lr.get("resolution_summary"))[:200]})  # fmt: skip
            if show and (show == "all" or cls.startswith(show)):
                print(f"{label.project:14s} {label.session[:8]} FALSE [{cls}] {why}")
                print(
                    f"      stored: {(sig[-1] if sig else '')[:110]!r} -> {str(lr.get('resolution_summary'))[:140]}"
                )
                print(f"      key: {key[:140]!r}")
    return out


def _key(lr: dict[str, Any]) -> str:
    """What the store keys the learning on: the cause lines of its signatures (`signatures.normalize`, what
    matching compares), not the last line printed (`--- FAIL: TestX`'s assertion, not the bare `FAIL` after
    it; the Node error line, not its `Node.js v22` trailer). "" when no signature has a cause line."""
    from recall_agent.learnings import signatures

    for sig in reversed([str(x) for x in lr.get("error_signatures") or []]):
        causes = [
            ln for ln in signatures.normalize(sig).splitlines() if not ln.startswith(signatures.CONTEXT)
        ]
        if causes:
            return " | ".join(causes)
    return ""


def _false_stores(label: L.Label, stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The learnings `judge` counts as holding no labelled fix worth keeping (judged one by one, in order,
    as it walks them). A reported error's or a task's learning is not one: `judge` leaves them out of its
    precision (the labels list failed calls only)."""
    out, held = [], []
    for lr in stored:
        # `judge` scores these on their own: no false store of its precision
        if is_reported(lr) or is_task(lr):
            continue
        before = judge([label], held)["real"]
        held.append(lr)
        if judge([label], held)["real"] == before:
            out.append(lr)
    return out


def _table(counts: dict[str, Counter], title: str) -> None:
    for what in ("missed", "false"):
        print(f"{title}: {what} ({sum(counts[what].values())})")
        for cls, n in counts[what].most_common():
            print(f"  {n:4d}  {cls}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", nargs="+", default=["tune"], choices=["tune"])  # never the held-out half
    ap.add_argument("--interactive", action="store_true", help="leave SWE-ContextBench out")
    ap.add_argument(
        "--show", default="", help="print the misses and false stores of classes starting with this"
    )
    ap.add_argument(
        "--lopo", type=Path, help="a folder of fold weights (fit_capture.py --lopo --lopo-weights)"
    )
    ap.add_argument("--out", type=Path, help="save the counts and rows as JSON")
    ap.add_argument("--only", nargs="+", default=[], help="these tuning projects alone")
    args = ap.parse_args(argv)
    labels = L.load_projects(tuple(args.projects))
    if args.interactive:
        labels = [lb for lb in labels if lb.project != "swecb"]
    if args.only:
        labels = [lb for lb in labels if lb.project in args.only]
    results: dict[str, dict[str, Any]] = {}
    for project in sorted({lb.project for lb in labels}):
        if args.lopo:
            from fit_capture import unit_of  # the fold that left this project out (small ones share one)

            weights = args.lopo / f"lopo-{unit_of(next(lb for lb in labels if lb.project == project))}.json"
            if not weights.is_file():
                print(f"missing fold weights: {weights}", file=sys.stderr)
                return 1
            model.WEIGHTS = weights
            model.load.cache_clear()
        results[project] = diagnose([lb for lb in labels if lb.project == project], args.show)
    pooled: dict[str, Counter] = {"missed": Counter(), "false": Counter()}
    for project, r in results.items():
        if project != "swecb":
            pooled["missed"] += r["missed"]
            pooled["false"] += r["false"]
    how = "left out (each project with its fold's weights)" if args.lopo else "in sample"
    _table(pooled, f"interactive projects pooled, {how}")
    for project, r in sorted(results.items()):
        p = r["projects"][project]
        _table(r, f"\n{project} ({p['useful']} useful labelled, {p['stored']} stored)")
    if args.out:
        args.out.write_text(json.dumps({
            "mode": "lopo" if args.lopo else "in_sample",
            "interactive_pooled": {k: dict(v.most_common()) for k, v in pooled.items()},
            "projects": {p: {"useful": r["projects"][p]["useful"], "stored": r["projects"][p]["stored"],
                             "missed": dict(r["missed"].most_common()), "false": dict(r["false"].most_common())}
                         for p, r in results.items()},
            "rows": [row for r in results.values() for row in r["rows"]],
        }, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
