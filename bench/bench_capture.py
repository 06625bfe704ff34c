"""Capture on real Claude Code sessions, judged against hand labels (issue 22; bench/sessions/README.md).

For each half of each labelled corpus, the sessions are imported the way a user imports them — a real
`python -m recall_agent import-sessions` process over a Claude config folder holding just those
transcripts, into a fresh store — and the stored learnings (`recall export`) are judged against the labels:

- precision: stored learnings that hold a labelled, useful fix's error (its `error` line is in a signature);
- recall: labelled useful fixes whose error some stored learning of that session holds;
- right resolution: of those matched, the share whose resolution says what fixed it (`labels.says_the_fix`:
  the file and function for an edit, the new part of a changed command, the package); a store row credited
  to another session than its first (one row per cause) is judged by that session's own fix of the row when
  the hook shows both alike, else by the fix the row shows (`credited_as_own`);
- right shown: the same, judged on the text the on-error hook injects (the fix line and the cause; the line
  saying which command passed in which session, which `right resolution` reads too, is never injected);
- v2 right, v2 shown: the same two, by the second judge (`labels.says_the_fix_v2`: also a change no word
  shows, a command read without its output plumbing, the folder lesson), which agrees with a reader's
  verdicts more often (`sessions/judge_agreement.py`); the first stays for comparison with earlier rounds;
- right files: of matched edit fixes, the share whose stored files are exactly the labelled files (by name);
- noise: stored learnings keyed on a labelled background line, or on nothing the labels call a failure;
- speed: the import's wall time and MB/s.

The previous release (`--release`, default 092b9df: main before issue 33) imports the same sessions in
the same run. Halves: the tuning projects and the held-out projects (`--split project`, split.json
`projects`), each also per corpus; `--split session` is the older split by session. `--census` imports all
300 SWE-ContextBench sessions and counts the store's rows per kind of fix, and the rows credited to every
session that met them (bench/census_why.py says why a session has no source-edit learning). `--inprocess` runs the engine in this process instead (fast, for tuning;
not reported). Transcripts come from bench/sessions/fetch.py's cache.

    python3 bench/bench_capture.py [--halves tune heldout] [--release 32014ad]
    python3 bench/bench_capture.py --halves none --store-rows --release 092b9df   # issue 34: rows per cause
    RECALL_BENCH_LABELS=/work/wt/i33data/bench/sessions \
        python3 bench/bench_capture.py --halves none --replay-projects            # issue 34: replay per project
    python3 bench/bench_capture.py [--split project|session] [--release 092b9df] [--census]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))
# a worker replaying with another tree's package (the release side by side) puts that tree first
sys.path.insert(0, os.environ.get("RECALL_BENCH_PACKAGE_TREE") or str(ROOT))
# the labels (and labels.py) of another checkout, e.g. a corpus still being labelled on its own branch
if os.environ.get("RECALL_BENCH_LABELS"):
    sys.path.insert(0, os.environ["RECALL_BENCH_LABELS"])

import gold  # noqa: E402
import labels as L  # noqa: E402
from release import package_in, release_tree  # noqa: E402

RESULTS = BENCH / "results" / "capture.json"
RELEASE = "092b9df"  # main before issue 33 (what the issue measured); 32014ad was main before issue 22


def import_learnings(
    sessions: list[L.Label], pythonpath: Path, work: Path, *, rows: bool = False
) -> tuple[list[dict], float]:
    """Run the real import over these transcripts; the exported learnings (with `rows`, the store's rows as
    they are; else credited to every session that met them, `per_session`) and the wall time."""
    config = work / "claude"
    project = config / "projects" / "-bench-project"
    codex = work / "codex"
    rollouts = codex / "sessions" / "2026" / "01" / "01"
    for old in (config, codex):
        if old.exists():
            shutil.rmtree(old)
    project.mkdir(parents=True)
    rollouts.mkdir(parents=True)
    for label in sessions:  # Codex rollouts where Codex keeps them, named as Codex names them
        if label.codex:
            shutil.copy(label.path, rollouts / f"rollout-2026-01-01T00-00-00-{label.path.name}")
        else:
            shutil.copy(label.path, project / label.path.name)
    home = work / "home"
    if home.exists():
        shutil.rmtree(home)
    package = package_in(None if pythonpath == ROOT else pythonpath)
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(config), RECALL_HOME=str(home), PYTHONPATH=str(pythonpath),
               CODEX_HOME=str(codex))  # fmt: skip
    env.pop("RECALL_SERVER_URL", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", package, "import-sessions", "--all", "-q"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"import failed ({package}): {done.stderr[-2000:]}")
    out = subprocess.run(
        [sys.executable, "-m", package, "export"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stored = sorted((json.loads(line) for line in out.splitlines() if line.strip()), key=_export_order)
    return (stored if rows else per_session(stored, home / "learnings.db")), seconds


def _export_order(lr: dict[str, Any]) -> tuple[str, ...]:
    """The export's order (by `created_at`) with its ties broken by what the rows hold, not by their random
    ids: `judge` pairs learnings with labelled episodes first come first served, so the ids' order moved the
    right-resolution count by one between two runs of the same commit."""
    text = json.dumps([lr.get(k) for k in ("session_id", "error_signatures", "resolution_summary", "fix")])
    return str(lr.get("created_at") or ""), text


def per_session(stored: list[dict], db: Path) -> list[dict]:
    """One learning per cause (issue 34) keeps one row for a cause met in several sessions, exported under the
    first session's id: each other session that met it is credited with the same row, as a copy under its id
    marked `credited`, so that capture is scored per session as before (what a later agent meeting the error
    is shown). A copy carries the row's fixes (`row_fixes`: each kept fix's resolution and evidence, whose
    `calls` say which session recorded it) for `judge` to pair it with the session's own episode."""
    import sqlite3

    if not db.exists():
        return stored
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT learning_id, session_id FROM learning_sessions").fetchall()
        kept = conn.execute("SELECT learning_id, resolution_summary, fix FROM learning_fixes").fetchall()
    except sqlite3.OperationalError:  # a release from before one learning per cause
        rows, kept = [], []
    finally:
        conn.close()
    met: dict[str, list[str]] = {}
    for lid, sid in rows:
        met.setdefault(str(lid), []).append(str(sid))
    fixes: dict[str, list[dict]] = {}
    for lid, summary, fix in kept:
        fixes.setdefault(str(lid), []).append(
            {"resolution_summary": summary, "fix": json.loads(fix or "null")}
        )
    out: list[dict] = []
    for lr in stored:
        out.append(lr)
        first, lid = str(lr.get("session_id") or ""), str(lr.get("id"))
        out += [{**lr, "session_id": sid, "credited": True, "row_fixes": fixes.get(lid, [])}
                for sid in met.get(lid, []) if sid != first]  # fmt: skip
    return out


def credited_as_own(lr: dict[str, Any], label: L.Label) -> dict[str, Any]:
    """A store row credited to another session than its first (`per_session`), as the session meets it: the
    row's fix this session recorded (its evidence's calls are this session's failed calls) gives the calls
    the copy is paired by (not the first session's). When the hook would show that fix's text exactly as it
    shows the row's (`retrieve.shown_summary`: the first line and the cause; the line saying which command
    passed in which session is never shown), the copy is judged by this session's own resolution, as
    strictly as a learning of its own; when the row shows another fix, by the row's resolution (what the
    agent is shown)."""
    failed = label.failed_ids()
    for f in lr.get("row_fixes") or []:
        calls = [str(c) for c in (f.get("fix") or {}).get("calls") or []]
        copy = {**lr, "fix": {**(lr.get("fix") or {}), "calls": calls}}
        if not failed_calls(copy) & failed:
            continue
        if shown(f) == shown(lr):
            copy["resolution_summary"] = f.get("resolution_summary")
        return copy
    return lr


def failed_calls(lr: dict[str, Any]) -> set[str]:
    """The failed calls a learning's evidence names (every call but the passing one), by their id suffix."""
    return {L.suffix(c) for c in ((lr.get("fix") or {}).get("calls") or [])[:-1]}


def shown(lr: dict[str, Any]) -> str:
    """What the on-error hook injects of a learning's (or a kept fix's) resolution."""
    from recall_agent.hooks.retrieve import shown_summary

    return shown_summary(str(lr.get("resolution_summary") or ""))


def inprocess_learnings(sessions: list[L.Label], read: Any = None) -> tuple[list[dict], float]:
    """The learnings this process's engine builds from the sessions. `read`: label -> (steps, stats), for a
    caller that keeps transcripts read (fit_capture.py); else each transcript is read here."""
    from recall_agent.capture import learning
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    out = []
    start = time.perf_counter()
    for label in sessions:
        if read is None:
            t = Transcript(label.path)
            steps, stats = t.steps(), t.stats
        else:
            steps, stats = read(label)
        engine = Engine()
        engine.feed(steps)
        engine.end_turn()
        ctx = learning.Context(
            session_id=stats.session_id or label.session, root=stats.cwd, branch=None, repo="r"
        )
        for ep in engine.episodes():
            built = learning.build(ep, ctx)
            if built:
                out.append(built)
    return out, time.perf_counter() - start


def judge(sessions: list[L.Label], stored: list[dict], merged: bool = False) -> dict[str, Any]:
    """`merged`: the learnings come from a real store, which merges identical learnings of different
    sessions; a labelled fix found only in such a learning counts as found."""
    by_session: dict[str, list[L.Label]] = {}
    for s in sessions:
        for sid in s.session_ids():
            by_session.setdefault(sid, []).append(s)
    useful = {(s.session, i) for s in sessions for i, e in enumerate(s.episodes) if L.worth_keeping(e)}
    found: set[tuple[str, int]] = set()
    real = right = right_shown = right_v2 = right_shown_v2 = files_ok = files_n = noise = merged_found = 0
    misses_fix: list[dict] = []
    wrong: list[dict] = []  # stored, but no labelled useful fix
    reported = [lr for lr in stored if is_reported(lr)]
    tasks = [lr for lr in stored if is_task(lr)]
    # judged on their own (`prompt_reports`, `task_learnings`): the labels list failed calls only
    stored = [lr for lr in stored if not is_reported(lr) and not is_task(lr)]
    for lr in stored:
        sid = str(lr.get("session_id") or "")
        candidates = by_session.get(sid) or [s for k, v in by_session.items() if sid.startswith(k) for s in v]
        if not candidates:
            continue
        calls = failed_calls(lr)
        # a continued session's files share its id: the one whose labels cite these calls
        label = next((c for c in candidates if c.failed_ids() & calls), candidates[0])
        if lr.get("credited"):  # the session's own fix of the row, in whichever file of the session cites it
            label, lr = next(((c, own) for c in candidates if (own := credited_as_own(lr, c)) is not lr),
                             (label, lr))  # fmt: skip
            calls = failed_calls(lr)
        sigs = [str(x) for x in lr.get("error_signatures") or []]
        # the labelled fix this learning holds; one learning per labelled episode (a session often meets the
        # same error line more than once, each time fixed on its own)
        by_call = [
            i for i, e in enumerate(label.episodes) if L.worth_keeping(e) and label.episode_ids(e) & calls
        ]
        keyed = by_call or [
            i for i, e in enumerate(label.episodes) if L.worth_keeping(e) and L.keyed_on_error(sigs, e)
        ]
        hit = next((i for i in keyed if (label.session, i) not in found), keyed[0] if keyed else None)
        if hit is not None:
            real += 1
            found.add((label.session, hit))
            ep = label.episodes[hit]
            right_shown += L.says_the_fix(shown(lr), ep)
            right_shown_v2 += L.says_the_fix_v2(shown(lr), ep)
            right_v2 += L.says_the_fix_v2(str(lr.get("resolution_summary") or ""), ep)
            if L.says_the_fix(str(lr.get("resolution_summary") or ""), ep):
                right += 1
            else:
                misses_fix.append(
                    {
                        "session": label.session,
                        "label": (ep.get("fix") or {}).get("what"),
                        "stored": lr.get("resolution_summary"),
                    }
                )
            want = {f.rsplit("/", 1)[-1] for f in (ep.get("fix") or {}).get("files") or []}
            if (ep.get("fix") or {}).get("kind") == "edit" and want:
                files_n += 1
                files_ok += {f.rsplit("/", 1)[-1] for f in lr.get("file_paths_touched") or []} == want
            continue
        failures = [*label.episodes, *label.unfixed]
        noisy = L.keyed_on_background(sigs, label) or not any(L.keyed_on_error(sigs, e) for e in failures)
        noise += noisy
        wrong.append({"session": label.session, "noise": noisy, "error": sigs[-1].strip().splitlines()[-1][:140],
                      "stored": str(lr.get("resolution_summary"))[:200]})  # fmt: skip
    # a fix can be in the store without a learning of its own session: the store merges a learning into an
    # identical one of another session (same repo, same resolution, a shared signature)
    for s in sessions if merged else []:
        for i, e in enumerate(s.episodes):
            if L.worth_keeping(e) and (s.session, i) not in found:
                for lr in stored:
                    sigs = [str(x) for x in lr.get("error_signatures") or []]
                    if L.keyed_on_error(sigs, e) and L.says_the_fix(
                        str(lr.get("resolution_summary") or ""), e
                    ):
                        found.add((s.session, i))
                        merged_found += 1
                        break
    n = len(stored)
    missed = [
        {
            "session": s.session,
            "failed": e.get("failed"),
            "kind": e.get("kind"),
            "error": str(e.get("error"))[:120],
        }
        for s in sessions
        for i, e in enumerate(s.episodes)
        if L.worth_keeping(e) and (s.session, i) not in found
    ]
    return {
        "sessions": len(sessions),
        "stored": n,
        "useful_labelled": len(useful),
        "precision": round(real / n, 3) if n else None,
        "recall": round(len(found) / len(useful), 3) if useful else None,
        "right_resolution": round(right / real, 3) if real else None,
        # judged on the text the on-error hook injects (`retrieve.shown_summary`: never the line saying which
        # command passed in which session, which `right_resolution` reads too)
        "right_shown": round(right_shown / real, 3) if real else None,
        # the second judge (`labels.says_the_fix_v2`, read against hand verdicts by judge_agreement.py)
        "v2_right": round(right_v2 / real, 3) if real else None,
        "v2_shown": round(right_shown_v2 / real, 3) if real else None,
        "right_files": round(files_ok / files_n, 3) if files_n else None,
        "noise": round(noise / n, 3) if n else None,
        "sessions_with_useful_learning": len({s for s, _ in found}),
        "real": real,
        "found": len(found),
        "right": right,
        "right_v2": right_v2,
        "noise_n": noise,
        "found_in_merged": merged_found,
        "reported": len(reported),
        "task_stored": len(tasks),  # a release's count; this checkout's row gets `task_learnings` in full
        "wrong_resolutions": misses_fix[:15],
        "missed": missed,
        "not_useful": wrong,
    }


def is_reported(lr: dict[str, Any]) -> bool:
    """A learning keyed by an error the user's prompt quoted (a bug report), not by a failed call: the hand
    labels list failed calls only, so these are neither hits nor false stores of the failed-call figures."""
    return bool((lr.get("fix") or {}).get("reported"))


def is_task(lr: dict[str, Any]) -> bool:
    """A task learning: keyed by the task line of the user's prompt, no error at all (`engine._task_episode`);
    scored on its own like `is_reported`."""
    return bool((lr.get("fix") or {}).get("task"))


def task_learnings(sessions: list[L.Label], stored: list[dict]) -> dict[str, Any]:
    """The figure for task learnings: how many, from how many sessions and prompts (at most one per task),
    whether the key is in a prompt of its session and its source files among the session's final diff's
    (`_keyed_checks`, as for reported errors), and the keys themselves to read."""
    by_session = {sid: s for s in sessions for sid in s.session_ids()}
    mine = [(by_session[str(lr.get("session_id"))], lr) for lr in stored
            if is_task(lr) and str(lr.get("session_id")) in by_session]  # fmt: skip
    per_session: dict[str, int] = {}
    for s, _ in mine:
        per_session[s.session] = per_session.get(s.session, 0) + 1
    prompts = sum(len(_prompts_and_final_diff(s.path)[0]) for s in sessions)
    return {"prompts": prompts, "stored": len(mine), "sessions_with_one": len(per_session),
            "most_in_one_session": max(per_session.values(), default=0),
            "most_per_prompt": max(_per_prompt(mine).values(), default=0),
            **_keyed_checks(mine)}  # fmt: skip


def _per_prompt(mine: list[tuple[L.Label, dict]]) -> dict[tuple[str, str], int]:
    """Task learnings per prompt (the prompt's entry is the first of `fix.calls`, `prompt:<uuid>`)."""
    out: dict[tuple[str, str], int] = {}
    for s, lr in mine:
        key = (s.session, str(((lr.get("fix") or {}).get("calls") or [""])[0]))
        out[key] = out.get(key, 0) + 1
    return out


def _keyed_checks(mine: list[tuple[L.Label, dict]]) -> dict[str, Any]:
    """For learnings keyed by a prompt: is the key in a prompt of its session, are the source files it names
    among the files the session's final diff changed; with examples."""
    in_prompt = files_ok = files_n = 0
    examples = []
    for s, lr in mine:
        said, final = _prompts_and_final_diff(s.path)
        text = " ".join(" ".join(said).split())
        key = str((lr.get("error_signatures") or [""])[0]).splitlines()
        # a key cut to its bound ends with `…`, which the prompt does not have
        in_prompt += bool(key) and all(" ".join(k.removesuffix("…").split()) in text for k in key)
        src = [f for f in lr.get("file_paths_touched") or [] if not _test_file(f)]
        if src:
            files_n += 1
            files_ok += all(any(d.endswith("/" + f.lstrip("/")) or d == f for d in final) for f in src)
        examples.append({"session": s.session, "key": key[-1][:120] if key else "",
                         "stored": str(lr.get("resolution_summary")).split("\n")[0][:160]})  # fmt: skip
    return {
        "key_in_prompt": round(in_prompt / len(mine), 3) if mine else None,
        "files_in_final_diff": round(files_ok / files_n, 3) if files_n else None,
        "examples": examples[:15],
    }


def prompt_reports(sessions: list[L.Label], stored: list[dict]) -> dict[str, Any]:
    """The figure for learnings of errors the prompts quoted: how many prompts quote an error
    (`output.quoted_errors`), how many sessions store such a learning, whether its key line is really in a
    prompt of its session, and whether the source files it names are among the files the session's final
    diff changed (its Edit/Write calls folded: files that existed before it, not tests, not reverted)."""
    from recall_agent.capture import output

    by_session = {sid: s for s in sessions for sid in s.session_ids()}
    prompts = quoting = 0
    quoting_sessions: set[str] = set()
    for s in sessions:
        said, _ = _prompts_and_final_diff(s.path)
        prompts += len(said)
        quoted = [t for t in said if output.quoted_errors(t)]
        quoting += len(quoted)
        if quoted:
            quoting_sessions.add(s.session)
    mine = [(by_session[str(lr.get("session_id"))], lr) for lr in stored
            if is_reported(lr) and str(lr.get("session_id")) in by_session]  # fmt: skip
    return {
        "prompts": prompts,
        "prompts_quoting_errors": quoting,
        "sessions_quoting_errors": len(quoting_sessions),
        "stored": len(mine),
        "sessions_with_one": len({s.session for s, _ in mine}),
        **_keyed_checks(mine),
    }


def print_task_learnings(title: str, tl: dict[str, Any]) -> None:
    print(f"{'':<17}{title:<26} {tl['stored']} task learnings from {tl['sessions_with_one']} sessions "
          f"({tl['prompts']} prompts; at most {tl['most_in_one_session']} in one session, "
          f"{tl['most_per_prompt']} per prompt); key in a prompt {tl['key_in_prompt']}; files in the final "
          f"diff {tl['files_in_final_diff']}")  # fmt: skip


def print_prompt_reports(title: str, pr: dict[str, Any]) -> None:
    print(f"{'':<17}{title:<26} {pr['prompts_quoting_errors']} of {pr['prompts']} prompts quote an error "
          f"({pr['sessions_quoting_errors']} sessions); {pr['stored']} learnings from {pr['sessions_with_one']} "
          f"sessions; key in a prompt {pr['key_in_prompt']}; files in the final diff {pr['files_in_final_diff']}")  # fmt: skip


def _test_file(path: str) -> bool:
    from recall_agent.capture.edits import TEST_FILE

    return TEST_FILE.search(path) is not None


@functools.lru_cache(maxsize=1024)
def _prompts_and_final_diff(path: Path) -> tuple[list[str], set[str]]:
    """The session's prompts (main stream) and the source files its edits left changed (absolute paths as
    the calls name them; files it created, tests and reverted files left out)."""
    from recall_agent.capture import edits
    from recall_agent.capture.readers import open_reader
    from recall_agent.capture.transcript import Prompt, Result

    prompts: list[str] = []
    created: set[str] = set()
    changed: dict[str, edits.FileChange] = {}
    for step in open_reader(path).steps():
        if isinstance(step, Prompt) and step.stream == "main":
            prompts.append(step.text)
        if (
            not isinstance(step, Result)
            or step.is_error
            or step.call.name not in ("Edit", "Write", "MultiEdit")
        ):
            continue
        path = str(step.call.input.get("file_path") or "")
        details = step.details()
        if step.call.name == "Write" and not details.get("originalFile") and path not in changed:
            created.add(path)
        change = edits.change_of(step.call.name, step.call.input, details, path)
        changed[path] = edits.fold(changed[path], change) if path in changed else change
    diff = {p for p, c in changed.items() if p not in created and not c.reverted() and not _test_file(p)}
    return prompts, diff


# ---------------------------------------------------------------------- replay in time order


def _first_time(label: L.Label) -> str:
    with label.path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            i = line.find('"timestamp":"')
            if i >= 0:
                return line[i + 13 : i + 37]
    return ""


def _cause(text: str) -> str:
    from recall_agent.capture.output import fold

    return str(fold(text))


def replay(sessions: list[L.Label], work: Path, folder: bool = True) -> dict[str, Any]:
    """Sessions in time order: before each is imported, every labelled useful fix in it whose error line an
    earlier session's useful fix had too (the same cause met again) is asked of recall the way the on-error
    hook asks: the failing call's output as the hook's request, each match checked against the folder the
    shell was in at that call (selfcheck.annotate), the hook's selection (retrieve.select). A hit is one of
    the learnings the hook would show whose resolution says what fixed it (judged against this episode's
    label). `folder` False checks the matches without the call's folder (what the folder check adds)."""
    from recall_agent import selfcheck
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning

    home = work / "replay-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    seen: set[str] = set()
    met = hits = other_case_first = 0
    misses: list[dict[str, Any]] = []
    for label in sorted(sessions, key=_first_time):
        results = L.call_results(label)
        built, _ = inprocess_learnings([label])
        for e in label.episodes:
            if not L.worth_keeping(e):
                continue
            cause = _cause(str(e.get("error") or ""))
            call = L.suffix(str(e.get("failed")))
            if cause in seen and call in results:
                met += 1
                repo = built[0]["repo"] if built else "r"
                output, cwd = results[call]
                picked = ask_as_the_hook(output, cwd if folder else None, repo, home)
                shown = [m["resolution_summary"] for m in picked]
                # the first learning shown is about the other case of a folder error than the shell's folder
                first_fix = picked[0].get("fix") if picked else None
                other_case_first += bool(
                    isinstance(first_fix, dict)
                    and first_fix.get("folder")
                    and selfcheck.check(first_fix, None, cwd).verdict in ("elsewhere", "applied")
                )
                if any(L.says_the_fix(r, e) for r in shown):
                    hits += 1
                else:
                    misses.append({"session": label.session, "error": str(e.get("error"))[:100],
                                   "shown": [r[:160] for r in shown]})  # fmt: skip
        for e in label.episodes:
            if L.worth_keeping(e):
                seen.add(_cause(str(e.get("error") or "")))
        with open_store(home) as store:
            for lr in built:
                store.add(Learning.model_validate(lr))
    return {"recurrences": met, "got_the_fix": hits, "share": round(hits / met, 3) if met else None,
            "other_case_first": other_case_first, "misses": misses[:20]}  # fmt: skip


def ask_as_the_hook(output: str, cwd: str | None, repo: str, home: Path) -> list[dict[str, Any]]:
    """What the on-error hook would show for this failing call's output: its request, each match checked
    against the folder the shell was in (`cwd` None: without the folder), its selection (<= 2 learnings)."""
    from recall_agent import selfcheck
    from recall_agent.hooks import retrieve
    from recall_agent.learnings import RetrievalRequest, execute_sync

    request = retrieve.request_for(output, repo)
    found = [m.to_wire() for m in execute_sync(RetrievalRequest(**request), home=home).matches]
    checked = selfcheck.annotate(found, None, repo, cwd)
    return retrieve.select(checked, set())


def replay_project(sessions: list[L.Label], work: Path) -> dict[str, Any]:
    """Issue 34's replay of one project: its sessions in time order into one store, each labelled failure
    (episode or unfixed, with a `cause` slug, not transient) asked the way the on-error hook asks before its
    session is stored. A recurrence is a failure whose cause an earlier session fixed (a useful episode):
    a hit when a learning shown says that fix (or this episode's). A new error is one whose cause no
    earlier session met: any learning shown is a false match. Store rows are counted against the distinct
    causes stored (the useful episodes' slugs). Needs labels with `cause` (bench/sessions/labels.py of
    issue 33's corpus)."""
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning

    home = work / "replay-project"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    fixed: dict[str, dict[str, Any]] = {}  # cause -> the latest earlier useful episode
    met: set[str] = set()
    recurring = hits = new = false_new = 0
    missed: dict[str, int] = {}  # why a recurrence did not get its fix: never stored / not found / ...
    misses: list[dict[str, Any]] = []
    false: list[dict[str, Any]] = []
    for label in sorted(sessions, key=lambda s: s.started):
        results = L.call_results(label)
        built, _ = inprocess_learnings([label])
        this: set[str] = set()
        for e in [*label.episodes, *label.unfixed]:
            cause = L.cause(e)
            call = L.suffix(str(e.get("failed")))
            if not cause or L.transient(e) is True or call not in results:
                continue
            this.add(cause)
            if cause in met and cause not in fixed:
                continue  # met before but never fixed: nothing could be shown
            output, cwd = results[call]
            picked = ask_as_the_hook(output, cwd, "r", home)
            shown = [m["resolution_summary"] for m in picked]
            if cause in fixed:
                recurring += 1
                if any(L.says_the_fix(r, fixed[cause]) or L.says_the_fix(r, e) for r in shown):
                    hits += 1
                else:
                    why = _why_missed(home, fixed[cause], shown)
                    missed[why] = missed.get(why, 0) + 1
                    misses.append({"session": label.session, "cause": cause, "why": why,
                                   "shown": [r[:120] for r in shown]})  # fmt: skip
            else:
                new += 1
                if shown:
                    false_new += 1
                    false.append(
                        {"session": label.session, "cause": cause, "shown": [r[:120] for r in shown]}
                    )
        met |= this
        for e in label.episodes:
            if e.get("useful") and L.cause(e):
                fixed[str(L.cause(e))] = e
        with open_store(home) as store:
            for lr in built:
                store.add(Learning.model_validate(lr))
    with open_store(home) as store:
        rows = store.count()
    return {"sessions": len(sessions), "recurrences": recurring, "got_the_fix": hits,
            "share": round(hits / recurring, 3) if recurring else None, "new_errors": new,
            "false_matches_on_new": false_new, "false_rate": round(false_new / new, 3) if new else None,
            "store_rows": rows, "causes_fixed": len(fixed),
            "rows_per_cause": round(rows / len(fixed), 2) if fixed else None, "missed_because": missed,
            "misses": misses[:10], "false": false[:10]}  # fmt: skip


def _why_missed(home: Path, earlier: dict[str, Any], shown: list[str]) -> str:
    """Why a recurrence did not get its earlier fix (the issue's breakdown): the fix was never stored (no
    stored learning holds the earlier error), stored but its text does not say the fix, or stored and not
    shown (the lookup did not find it or it was not picked) / another learning shown instead."""
    from recall_agent.learnings.store import open_store

    with open_store(home) as store:
        holding = [lr for lr in store.iter_all() if L.keyed_on_error(list(lr.error_signatures), earlier)]
    if not holding:
        return "never stored"
    if not any(L.says_the_fix(lr.resolution_summary, earlier) for lr in holding):
        return "stored, text does not say the fix"
    return "stored, not shown" if not shown else "stored, another shown"


def replay_projects(work: Path) -> dict[str, Any]:
    """replay_project for every project with cause labels, each under its half (split.json `projects`)."""
    out: dict[str, Any] = {}
    labels = [s for s in L.load(("tune", "heldout")) if any(L.cause(e) for e in [*s.episodes, *s.unfixed])]
    for project in sorted({s.project for s in labels}):
        sessions = [s for s in labels if s.project == project]
        out[project] = {"half": L.project_half(sessions[0].corpus)} | replay_project(sessions, work)
    return out


def curves(sessions: list[L.Label]) -> dict[str, Any]:
    """The fitted models' precision-recall curves on these sessions' labels (run: did the call fail?;
    episode: is the resolved error a useful fix?), at thresholds 0.05 apart, the chosen one marked."""
    from recall_agent.capture import model
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    scored: dict[str, list[tuple[float, bool]]] = {"run": [], "episode": []}
    for label in sessions:
        engine = Engine(record=True)
        engine.feed(Transcript(label.path).steps())
        engine.end_turn()
        failing = label.failed_ids()
        run_model, episode_model = model.load("run"), model.load("episode")
        scored["run"] += [
            (run_model.probability(f), L.suffix(r.id) in failing) for r, f, _ in engine.judged_runs
        ]
        for ep in engine.judged_episodes:
            match = label.episode_for({L.suffix(e["id"]) for e in ep.errors})
            scored["episode"].append(
                (episode_model.probability(ep.features), bool(match and L.worth_keeping(match)))
            )
    out: dict[str, Any] = {}
    for name, pairs in scored.items():
        chosen = model.load(name).threshold
        points = []
        for t in [*(i / 20 for i in range(1, 20)), chosen]:
            tp = sum(s >= t and y for s, y in pairs)
            fp = sum(s >= t and not y for s, y in pairs)
            fn = sum(s < t and y for s, y in pairs)
            points.append({"threshold": round(t, 3), "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
                           "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0, "chosen": t == chosen})  # fmt: skip
        out[name] = {
            "n": len(pairs),
            "positives": sum(y for _, y in pairs),
            "curve": sorted(points, key=lambda p: p["threshold"]),
        }
    return out


def corpus_wide(corpus: str = "swecb") -> dict[str, Any]:
    """Every transcript of a corpus (labelled or not): how many sessions give at least one learning. The
    labelled ones say how many of those are useful; the rest are counted as stored only."""
    cached = sorted((L.CACHE / corpus).glob("*.jsonl"))
    labelled = {s.session: s for s in L.load(("tune", "heldout"), (corpus,))}
    with_learning = with_useful = 0
    for path in cached:
        label = labelled.get(path.stem) or L.Label(corpus, path.stem, "", {}, path)
        stored, _ = inprocess_learnings([label])
        with_learning += bool(stored)
        if path.stem in labelled and judge([label], stored)["sessions_with_useful_learning"]:
            with_useful += 1
    return {"sessions": len(cached), "with_a_learning": with_learning, "labelled": len(labelled),
            "labelled_with_a_useful_learning": with_useful}  # fmt: skip


def store_rows(pythonpath: Path, work: Path, corpus: str = "swecb") -> dict[str, Any]:
    """Every transcript of a corpus imported by a real `import-sessions` process into one fresh store: rows
    stored, distinct causes (the folded error line, `_cause`), the most rows any one cause has, and the rows
    of the `cd testbed` slip with their counts (issue 34: one learning per cause per repository)."""
    cached = sorted((L.CACHE / corpus).glob("*.jsonl"))
    labels = [L.Label(corpus, p.stem, "", {}, p) for p in cached]
    stored, secs = import_learnings(labels, pythonpath, work, rows=True)
    per_cause: dict[tuple[str, str], int] = {}
    for lr in stored:
        sigs = [str(x) for x in lr.get("error_signatures") or []]
        key = (str(lr.get("repo")), _cause(sigs[0]) if sigs else "")
        per_cause[key] = per_cause.get(key, 0) + 1
    slip = [
        lr for lr in stored if any("testbed" in s and ("cd" in s) for s in lr.get("error_signatures") or [])
    ]
    top = sorted(per_cause.items(), key=lambda kv: -kv[1])[:5]
    return {"sessions": len(cached), "rows": len(stored), "causes": len(per_cause),
            "max_rows_per_cause": max(per_cause.values(), default=0),
            "causes_over_3_rows": sum(v > 3 for v in per_cause.values()),
            "cd_testbed_rows": len(slip),
            "cd_testbed": [{"seen": lr.get("seen_count", 1), "sessions": lr.get("session_count"),
                            "cause": ((lr.get("fix") or {}).get("folder") or {}).get("cause"),
                            "fixes": len(lr.get("fixes") or []) or 1} for lr in slip][:10],
            "top": [{"cause": k[1][:100], "rows": v} for k, v in top], "seconds": round(secs, 1)}  # fmt: skip


def _corpus(label: L.Label) -> str:
    """The corpus a label judges (SWE-ContextBench's second and fresh labellings are SWE-ContextBench)."""
    return "swecb" if label.corpus.startswith("swecb") else label.corpus


def _of(sessions: list[L.Label], stored: list[dict]) -> list[dict]:
    """The learnings stored from these sessions."""
    ids = {sid for s in sessions for sid in s.session_ids()}
    return [lr for lr in stored if str(lr.get("session_id") or "") in ids]


def _short(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in r.items() if not isinstance(v, list)}


def census_kind(lr: dict[str, Any]) -> str:
    """What a stored learning's fix is: a source edit (the project's files other than tests), a test edit,
    a folder slip, a command fix, an install, steps run before the check, or nothing said."""
    from recall_agent.capture.edits import TEST_FILE

    fix = lr.get("fix") or {}
    files = [str(f.get("path") or "") for f in fix.get("files") or []]
    if files:
        return "source edit" if any(not TEST_FILE.search(f) for f in files) else "test edit"
    if fix.get("folder"):
        return "folder slip"
    if fix.get("packages"):
        return "install"
    if fix.get("command"):
        return "command fix"
    if fix.get("steps"):
        return "steps"
    return "other"


def not_a_fix_command(lr: dict[str, Any]) -> str | None:
    """Is the stored "fixed by another command" a narrower selection, an output-flag change or a rerun?"""
    from recall_agent.capture import commands

    command = (lr.get("fix") or {}).get("command")
    if not command or (lr.get("fix") or {}).get("files"):
        return None
    before, after = commands.parse(str(command.get("before"))), commands.parse(str(command.get("after")))
    return commands.not_a_fix(before, after)


def census(corpus: str, pythonpath: Path | None, work: Path) -> dict[str, Any]:
    """Every transcript of a corpus imported (a real import, or this process's engine with None): the store's
    learnings per kind of fix, the narrowed-selection / output-flag "fixes" among them (must be 0), and the
    sessions with a source-edit learning."""
    cached = sorted((L.CACHE / corpus).glob("*.jsonl"))
    labels = [L.Label(corpus, p.stem, "", {}, p) for p in cached]
    if pythonpath is None:
        stored, seconds = inprocess_learnings(labels)
        credited = stored
    else:  # the store's rows (one per cause per repository), and each row credited to every session that met it
        stored, seconds = import_learnings(labels, pythonpath, work, rows=True)
        credited = per_session(stored, work / "home" / "learnings.db")
    kinds: dict[str, int] = {}
    bad: list[dict[str, Any]] = []
    for lr in stored:
        kind = census_kind(lr)
        kinds[kind] = kinds.get(kind, 0) + 1
        why = not_a_fix_command(lr)
        if why:
            bad.append({"why": why, "resolution": str(lr.get("resolution_summary"))[:200]})
    per_kind: dict[str, int] = {}
    for lr in credited:
        kind = census_kind(lr)
        per_kind[kind] = per_kind.get(kind, 0) + 1
    with_source = {str(lr.get("session_id") or "") for lr in credited if census_kind(lr) == "source edit"}
    from_runs = {str(lr.get("session_id") or "") for lr in credited
                 if census_kind(lr) == "source edit" and not is_reported(lr) and not is_task(lr)}  # fmt: skip
    from_reports = {str(lr.get("session_id") or "") for lr in credited
                    if census_kind(lr) == "source edit" and is_reported(lr)}  # fmt: skip
    from_tasks = {str(lr.get("session_id") or "") for lr in credited
                  if census_kind(lr) == "source edit" and is_task(lr)}  # fmt: skip
    return {"sessions": len(cached), "learnings": len(stored), "kinds": kinds,
            "credited": len(credited), "credited_kinds": per_kind,
            "not_a_fix": len(bad), "not_a_fix_examples": bad[:10],
            "sessions_with_source_edit": len(with_source),
            "sessions_with_source_edit_from_failed_runs": len(from_runs),
            "sessions_with_source_edit_from_reports": len(from_reports),
            "sessions_with_source_edit_from_tasks": len(from_tasks),
            "sessions_with_source_edit_only_from_tasks": len(from_tasks - from_runs - from_reports),
            "prompt_reports": prompt_reports(labels, credited),
            "task_learnings": task_learnings(labels, credited),
            "gold": gold.agreement(credited), "seconds": round(seconds, 1)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--split",
        choices=("project", "session"),
        default="project",
        help="project: the tuning projects and the held-out projects (split.json `projects`, every "
        "labeller's sessions, one label per session); session: the older split by session (--halves)",
    )
    ap.add_argument("--projects", nargs="+", default=["tune", "heldout"], help="halves of the project split")
    ap.add_argument("--halves", nargs="+", default=["tune", "tune-second", "heldout", "heldout-fresh"])
    ap.add_argument("--release", default=RELEASE, help="commit imported side by side ('' skips)")
    ap.add_argument("--inprocess", action="store_true", help="this process's engine only (tuning aid)")
    ap.add_argument("--show", action="store_true", help="print the wrong resolutions")
    ap.add_argument("--replay", action="store_true", help="also replay each half in time order (recurrences)")
    ap.add_argument(
        "--replay-without-folder", action="store_true", help="replay without the self-check's folder verdicts"
    )
    ap.add_argument("--corpus-wide", action="store_true", help="also count sessions with a learning, all 300")
    ap.add_argument("--curves", action="store_true", help="also the fitted models' PR curves per half")
    ap.add_argument(
        "--store-rows",
        action="store_true",
        help="import all SWE-ContextBench sessions: rows per cause (issue 34)",
    )
    ap.add_argument(
        "--replay-projects", action="store_true", help="issue 34's replay per project (labels with `cause`)"
    )
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    ap.add_argument("--census", action="store_true", help="only the store census of all SWE-CB transcripts")
    args = ap.parse_args(argv)
    if args.census:
        return run_census(args)
    report: dict[str, Any] = {"load_average": os.getloadavg(), "halves": {}}
    with tempfile.TemporaryDirectory(prefix="recall-bench-capture-") as tmp:
        work = Path(tmp)
        rel = release_tree(work, args.release) if args.release and not args.inprocess else None
        halves = (
            [(f"projects-{h}", L.load_projects((h,))) for h in args.projects]
            if args.split == "project"
            else [(h, L.load((h,))) for h in args.halves]
        )
        for half, sessions in halves:
            if not sessions:
                continue
            mb = sum(s.path.stat().st_size for s in sessions) / 1e6
            row: dict[str, Any] = {"mb": round(mb, 1)}
            systems = (
                [("inprocess", None)]
                if args.inprocess
                else [("recall", ROOT)] + ([(f"release {args.release}", rel)] if rel else [])
            )
            if all(s.codex for s in sessions):  # the release reads no Codex rollouts
                systems = [x for x in systems if x[1] in (None, ROOT)]
            for name, path in systems:
                stored, secs = (
                    inprocess_learnings(sessions) if path is None else import_learnings(sessions, path, work)
                )
                row[name] = judge(sessions, stored, merged=path is not None) | {
                    "seconds": round(secs, 2),
                    "mb_per_s": round(mb / secs, 1),
                }
                if path in (None, ROOT):
                    row[name]["prompt_reports"] = prompt_reports(sessions, stored)
                    row[name]["task_learnings"] = task_learnings(sessions, stored)
                corpora = sorted({_corpus(s) for s in sessions})
                if len(corpora) > 1:
                    row[name]["corpora"] = {
                        c: _short(judge(part, _of(part, stored), merged=path is not None))
                        | (
                            {
                                "prompt_reports": prompt_reports(part, _of(part, stored)),
                                "task_learnings": task_learnings(part, _of(part, stored)),
                            }
                            if path in (None, ROOT)
                            else {}
                        )
                        for c in corpora
                        if (part := [s for s in sessions if _corpus(s) == c])
                    }
            if args.replay:
                row["replay"] = replay(sessions, work, folder=not args.replay_without_folder)
            if args.curves:
                row["curves"] = curves(sessions)
            report["halves"][half] = row
    cols = [
        "sessions",
        "stored",
        "useful_labelled",
        "precision",
        "recall",
        "right_resolution",
        "right_shown",
        "v2_right",
        "v2_shown",
        "right_files",
        "noise",
        "sessions_with_useful_learning",
        "seconds",
    ]
    print(f"{'half':<17}{'system':<18}" + "".join(f"{c[:12]:>13}" for c in cols))
    for half, row in report["halves"].items():
        for name, r in row.items():
            if isinstance(r, dict) and name not in ("replay", "curves"):
                print(f"{half:<17}{name:<18}" + "".join(f"{str(r.get(c)):>13}" for c in cols))
                if args.show:
                    for m in r["missed"]:
                        print("   MISSED", m)
                    for m in r["not_useful"]:
                        print("   STORED-NOT-USEFUL", m)
                    for m in r["wrong_resolutions"]:
                        print(
                            "   label:",
                            m["label"],
                            "\n   stored:",
                            str(m["stored"]).replace("\n", " | ")[:300],
                        )
                if r.get("prompt_reports"):
                    print_prompt_reports("  prompt reports", r["prompt_reports"])
                if r.get("task_learnings"):
                    print_task_learnings("  task learnings", r["task_learnings"])
                for corpus, c in (r.get("corpora") or {}).items():
                    print(f"{'':<17}{'  ' + corpus:<18}" + "".join(f"{str(c.get(k)):>13}" for k in cols))
                    if c.get("prompt_reports"):
                        print_prompt_reports(f"    {corpus} prompts", c["prompt_reports"])
                    if c.get("task_learnings"):
                        print_task_learnings(f"    {corpus} tasks", c["task_learnings"])
    if args.store_rows:
        with tempfile.TemporaryDirectory(prefix="recall-bench-rows-") as tmp:
            work = Path(tmp)
            rel = release_tree(work, args.release) if args.release else None
            report["store_rows"] = {"recall": store_rows(ROOT, work)}
            if rel:
                report["store_rows"][f"release {args.release}"] = store_rows(rel, work)
        for name, r in report["store_rows"].items():
            print(f"SWE-ContextBench store, {name}: {r['rows']} rows for {r['causes']} causes, at most"
                  f" {r['max_rows_per_cause']} rows per cause ({r['causes_over_3_rows']} causes over 3),"
                  f" `cd testbed` rows {r['cd_testbed_rows']}: {r['cd_testbed']}")  # fmt: skip
    if args.replay_projects and os.environ.get("RECALL_BENCH_PACKAGE_TREE"):  # the release's worker
        with tempfile.TemporaryDirectory(prefix="recall-bench-replay-") as tmp:
            print(json.dumps(replay_projects(Path(tmp))))
        return 0
    if args.replay_projects:
        with tempfile.TemporaryDirectory(prefix="recall-bench-replay-") as tmp:
            report["replay_projects"] = {"recall": replay_projects(Path(tmp))}
            if args.release:
                rel = release_tree(Path(tmp), args.release)
                env = dict(os.environ, RECALL_BENCH_PACKAGE_TREE=str(rel))
                done = subprocess.run([sys.executable, __file__, "--halves", "none", "--release", "", "--replay-projects"],
                                      env=env, capture_output=True, text=True, check=True)  # fmt: skip
                report["replay_projects"][f"release {args.release}"] = json.loads(
                    done.stdout.splitlines()[-1]
                )
        print(f"{'project (system)':<36}{'half':<9}{'sessions':>9}{'recur':>7}{'got fix':>9}{'share':>7}{'new':>6}"
              f"{'false':>7}{'rate':>7}{'rows':>6}{'causes':>8}{'rows/cause':>11}")  # fmt: skip
        rows = [
            (f"{p} ({name})", r) for name, per in report["replay_projects"].items() for p, r in per.items()
        ]
        for project, r in sorted(rows):
            print(f"{project:<36}{str(r['half']):<9}{r['sessions']:>9}{r['recurrences']:>7}{r['got_the_fix']:>9}"
                  f"{str(r['share']):>7}{r['new_errors']:>6}{r['false_matches_on_new']:>7}{str(r['false_rate']):>7}"
                  f"{r['store_rows']:>6}{r['causes_fixed']:>8}{str(r['rows_per_cause']):>11}")  # fmt: skip
        out = {
            "load_average": report["load_average"],
            "command": " ".join(sys.argv),
            **report["replay_projects"],
        }
        (BENCH / "results" / "replay_projects.json").write_text(json.dumps(out, indent=1) + "\n")
    if args.corpus_wide:
        report["swecb_all"] = corpus_wide()
        print("SWE-ContextBench, all transcripts:", report["swecb_all"])
    for half, row in report["halves"].items():
        for name, c in (row.get("curves") or {}).items():
            chosen = next(p for p in c["curve"] if p["chosen"])
            print(f"{half} {name} model at its threshold {chosen['threshold']}: P {chosen['precision']} R {chosen['recall']}"
                  f" (n {c['n']}, {c['positives']} positive)")  # fmt: skip
        if "replay" in row:
            r = row["replay"]
            print(
                f"replay {half}: {r['got_the_fix']}/{r['recurrences']} recurrences got their earlier fix ({r['share']}),"
                f" {r['other_case_first']} shown the other case of a folder error first"
            )
            if args.show:
                for m in r["misses"]:
                    print("   REPLAY-MISS", m)
    if args.store_rows:  # its own file: a run for the store rows alone leaves the capture figures as they are
        rows = {"load_average": report["load_average"], "command": " ".join(sys.argv), **report["store_rows"]}
        (BENCH / "results" / "consolidate.json").write_text(json.dumps(rows, indent=1) + "\n")
    if not args.inprocess and report["halves"]:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


def run_census(args: argparse.Namespace) -> int:
    report: dict[str, Any] = {"load_average": os.getloadavg(), "census": {}}
    with tempfile.TemporaryDirectory(prefix="recall-bench-census-") as tmp:
        work = Path(tmp)
        systems: list[tuple[str, Path | None]] = [("recall", None if args.inprocess else ROOT)]
        if args.release and not args.inprocess:
            systems.append((f"release {args.release}", release_tree(work, args.release)))
        for name, path in systems:
            report["census"][name] = c = census("swecb", path, work)
            print(f"{name}: {c['learnings']} learnings from {c['sessions']} sessions in {c['seconds']} s; "
                  f"{c['kinds']}; credited per session {c['credited']}: {c['credited_kinds']}; "
                  f"narrowed/output-flag/rerun 'fixes' {c['not_a_fix']}; "
                  f"sessions with a source-edit learning {c['sessions_with_source_edit']} "
                  f"({c['sessions_with_source_edit_from_failed_runs']} from failed runs, "
                  f"{c['sessions_with_source_edit_from_reports']} from reports, "
                  f"{c['sessions_with_source_edit_from_tasks']} from tasks, "
                  f"{c['sessions_with_source_edit_only_from_tasks']} only from tasks)")  # fmt: skip
            r = c["prompt_reports"]
            print(f"   prompt reports: {r['prompts_quoting_errors']} of {r['prompts']} prompts quote an error "
                  f"({r['sessions_quoting_errors']} sessions); {r['stored']} learnings from {r['sessions_with_one']} "
                  f"sessions; key line in the prompt {r['key_in_prompt']}; files in the final diff "
                  f"{r['files_in_final_diff']}")  # fmt: skip
            print_task_learnings("  ", c["task_learnings"])
            gold.print_agreement(c["gold"])
            for ex in c["not_a_fix_examples"] if args.show else []:
                print("   NOT-A-FIX", ex)
    if not args.inprocess:
        (BENCH / "results" / "capture_census.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
