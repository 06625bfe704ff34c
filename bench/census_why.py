"""Why a SWE-ContextBench session stores no source-edit learning (issue 33): one class per session.

Each transcript is replayed through this checkout's capture engine (in process, every judged run and
episode recorded), and a session whose kept learnings hold no source edit (a project file other than a
test) is put in the first class that fits:

- no source edit: the session changed no project file other than tests (or only files it created);
- no run before the source edit: no script, snippet or test ran before the first source edit (split by
  whether code ran after it, and whether the first prompt quotes an exception: `IndexError: ...`);
- reproduced in its output: code ran before the source edit and exited 0, the run model rightly calling
  it passed (a reproduction that caught the exception, or printed a wrong value), also when an earlier
  failure of it (`python` is Python 2) was fixed first; split by whether it printed an error line
  (`output.shown_errors`, SWE-ContextBench's broken `.pth` lines left out) or values only, and whether the
  same script ran again after the source edit, and still printed it;
- resolved before the source edit: the error the reproduction opened was shown fixed by a run before the
  source edit (and no passing run of a script came after it);
- dropped by a model: an episode holding the source edit was judged and not kept (which model);
- kept without the edit: its episode was kept, but the learning built from it names no source file;
- still open (raised or not): the reproduction's error was never resolved (the library could not be
  imported or built, the rerun failed again, or another check ran that the rules do not pair with it);
- other: the error was folded into another or trimmed.

The counts go to bench/results/census_why.json.

    python3 bench/census_why.py [--show CLASS] [--corpus swecb]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH / "sessions"))

import labels as L  # noqa: E402

from recall_agent.capture import commands, edits, learning, output  # noqa: E402
from recall_agent.capture.engine import _FILE_TOOLS, Engine, Run, _reproduces, _runs_code  # noqa: E402
from recall_agent.capture.transcript import Result, Transcript  # noqa: E402


def replay(path: Path) -> dict[str, Any]:
    """The session replayed: its source edits, its runs, the episodes judged, the errors left open."""
    t = Transcript(path)
    engine = Engine(record=True)
    source_edits: list[int] = []
    created: set[str] = set()
    for step in t.steps():
        engine.feed([step])

        if not isinstance(step, Result) or step.call.name not in _FILE_TOOLS or step.is_error:
            continue
        if step.call.stream != "main":
            continue
        fpath = str(step.call.input.get("file_path") or "")
        details = step.details()
        if step.call.name == "Write" and not details.get("originalFile") and fpath not in created:
            created.add(fpath)
            continue
        if fpath and fpath not in created and not edits.TEST_FILE.search(fpath):
            source_edits.append(engine.stream("main").seq)
    engine.end_turn()
    ctx = learning.Context(session_id=path.stem, root=t.stats.cwd, branch=None, repo="r")
    built = [(ep, learning.build(ep, ctx)) for ep in engine.episodes()]
    return {
        "engine": engine,
        "source_edits": source_edits,
        "built": [(ep, b) for ep, b in built if b],
        "open": engine.stream("main").open,
        "prompt_error": _prompt_error(path),
    }


_RAISED = re.compile(r"\b[A-Z]\w{0,60}(?:Error|Exception)\b:")


def _prompt_error(path: Path) -> bool:
    """Does the session's first prompt quote an exception (`IndexError: list index out of range`)?"""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            entry = json.loads(line) if line.startswith("{") else {}
            content = (entry.get("message") or {}).get("content") if entry.get("type") == "user" else None
            if isinstance(content, list):
                content = " ".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
            if isinstance(content, str) and content.strip():
                return bool(_RAISED.search(content))
    return False


REPORTED = "has a source-edit learning from the error its prompt quoted"
TASK = "has a source-edit learning from its task (a task learning)"


def _by_prompt(lr: dict[str, Any]) -> bool:
    """Keyed by the prompt (a quoted error or the task line), not by a failed run."""
    return bool(lr["fix"].get("reported") or lr["fix"].get("task"))


def _without_reports(r: dict[str, Any]) -> dict[str, Any]:
    return {**r, "built": [(ep, b) for ep, b in r["built"] if not _by_prompt(b)]}


def has_source(lr: dict[str, Any]) -> bool:
    files = [str(f.get("path") or "") for f in (lr.get("fix") or {}).get("files") or []]
    return any(not edits.TEST_FILE.search(f) for f in files)


def classify(r: dict[str, Any]) -> tuple[str, str]:
    """The class and a line saying why."""
    if any(has_source(b) and not _by_prompt(b) for _, b in r["built"]):
        return "has a source-edit learning", ""
    if any(has_source(b) for _, b in r["built"]):  # then the same session as classified without these
        cls = REPORTED if any(has_source(b) and b["fix"].get("reported") for _, b in r["built"]) else TASK
        return cls, classify(_without_reports(r))[0]
    src = r["source_edits"]
    if not src:
        return "no source edit", ""
    engine: Engine = r["engine"]
    runs = [(run, failed) for run, _, failed in engine.judged_runs if run.tool == "Bash"]
    code_before = [(run, f) for run, f in runs if _runs_code(run.command) and run.seq < src[-1]]
    if not [run for run, _ in code_before if run.seq < src[0]] and not any(f for _, f in code_before):
        return _no_run(r, runs, src)
    failing = [run for run, f in code_before if f]
    if not failing:
        return _output_only(code_before[-1][0], runs, src)
    # the reproduction: the last failing code run before the first source edit (else before a later one)
    before_first = [run for run in failing if run.seq < src[0]]
    repro = (before_first or failing)[-1]
    edit_seq = next(s for s in src if s > repro.seq)
    for ep in engine.judged_episodes:
        ids = {e["id"] for e in ep.errors}
        if repro.id not in ids:
            continue
        if ep.passed.seq < edit_seq:
            later = [run for run, f in runs if not f and _reproduces(run.command) and run.seq < edit_seq]
            if later and later[-1].seq >= ep.passed.seq:  # then it ran and passed: what did it print?
                return _output_only(later[-1], runs, src)
            return (
                "resolved before the source edit",
                f"{repro.command.text[:60]} -> {ep.passed.command.text[:60]}",
            )
        if not ep.keep:
            which = "variant" if ep.variant else "episode/transient"
            return f"dropped by a model ({which})", f"own={ep.own_code:.2f} {ep.passed.command.text[:60]}"
        return "kept without the edit", f"{[c.path for c in ep.changes]}"
    for err in r["open"]:
        if any(e["id"] == repro.id for e in err["errors"]):
            raised = "raised" if err.get("raised") else "not raised"
            return f"still open ({raised})", repro.command.text[:100]
    return "other (error folded or trimmed)", repro.command.text[:100]


# the lines every Python start prints in SWE-ContextBench's machine (a broken .pth file): background
_PTH = {
    output.fold(ln)
    for ln in (
        "AttributeError: 'NoneType' object has no attribute 'loader'",
        "Error processing line 1 of /opt/anaconda3/lib/python3.8/site-packages/matplotlib-nspkg.pth:",
    )
}


def _output_only(repro: Run, runs: list[tuple[Run, bool]], src: list[int]) -> tuple[str, str]:
    """The reproduction ran and passed: did it print an error line, and was it run again after the edit?"""
    shown = output.shown_errors(output.lines_of(repro.text), _PTH)
    edit = next((s for s in src if s > repro.seq), src[-1])
    again = [r for r, _ in runs if r.seq > edit and commands.same_check(repro.command, r.command)]
    what = "printed an error line" if shown else "printed values only"
    if not again:
        return f"reproduced in its output ({what}), never rerun after the source edit", repro.command.text[
            :80
        ]
    rerun = {output.fold(x) for x in output.lines_of(again[-1].text)}
    if shown and all(output.fold(ln) in rerun for ln in shown):
        return f"reproduced in its output ({what}), still printed when rerun", shown[0][:80]
    return f"reproduced in its output ({what}), rerun after the source edit", (shown or [""])[0][:80]


def _no_run(r: dict[str, Any], runs: list[tuple[Run, bool]], src: list[int]) -> tuple[str, str]:
    """Nothing ran before the source edit: what ran after it, and did the prompt quote an error?"""
    after = [run for run, _ in runs if run.seq > src[0] and _runs_code(run.command)]
    quoted = "the prompt quotes an exception" if r["prompt_error"] else "no exception in the prompt"
    ran = "code ran after it" if after else "nothing ran after it"
    return f"no run before the source edit ({ran}; {quoted})", ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="swecb")
    ap.add_argument("--show", default="", help="print the sessions of classes starting with this")
    args = ap.parse_args(argv)
    counts: Counter[str] = Counter()
    without: Counter[str] = Counter()  # the same sessions without the learnings of errors prompts quoted
    moved: Counter[str] = Counter()  # the classes those learnings took sessions out of
    for path in sorted((L.CACHE / args.corpus).glob("*.jsonl")):
        cls, why = classify(replay(path))
        counts[cls] += 1
        without[why if cls in (REPORTED, TASK) else cls] += 1
        moved[why] += cls in (REPORTED, TASK)
        if args.show and cls.startswith(args.show):
            print(f"{path.stem}  {cls}: {why}")
    print(
        f"{'without':>8}{'with':>6}  class (with: the learnings keyed by the prompts too: quoted errors, tasks)"
    )
    for cls in dict.fromkeys([*(c for c, _ in without.most_common()), *counts]):
        print(
            f"{without[cls]:8d}{counts[cls]:6d}  {cls}" + (f"  ({moved[cls]} moved up)" if moved[cls] else "")
        )
    report = {"corpus": args.corpus, "load_average": os.getloadavg(), "classes": dict(counts.most_common()),
              "without_prompt_reports": dict(without.most_common()),
              "moved_by_prompt_reports": {k: v for k, v in moved.most_common() if v}}  # fmt: skip
    (BENCH / "results" / "census_why.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
