"""The capture engine: a session's transcript in, the errors it fixed (and how) out.

The same engine runs live (the hooks' Stop and SessionEnd read the transcript's new lines each time, from
where the last read stopped, with the engine's state kept in the session file) and on old sessions
(`recall import-sessions` reads whole files). Per stream (the session, each subagent):

1. Every tool call with its result is a **run**. The run model (`model.py`) says whether it failed, from
   the exit flag and from the output (a crash printed by `cmd | tail`, whose exit code says 0). Lines that
   passing runs printed too are background (`output.py`) and never count as the error.
2. A failed run opens an **error** of its check (`commands.py`), or joins the open one its output repeats.
3. A later run of the same check resolves the error when it passes, or when it fails without that error
   (the next failing test of `pytest -x`); an error that names a missing path is also resolved by a run
   that creates it (`git clone URL testbed`). Between the error's last failure and that run lies the
   **fix**: the edits (folded per file, final state, reverted files dropped), the changed command
   (another interpreter, flags, folder), the packages installed, and the agent's words.
   A reproduction that exits 0 but prints error lines (it caught the exception) opens an error shown only
   in its output, resolved by the same script run again without them after a source edit.
4. The episode model decides whether the episode is knowledge (not a scratch slip in a throwaway script,
   not a retry that simply passed). Episodes are handed out when the turn ends, so that an agent that
   recorded the fix itself (`recall learn` / the MCP tool `recall_learn`) in that turn supersedes them.

The state kept between reads holds no secret: failures' output, commands, edits and the agent's words are
redacted before they are kept (`Stream.to_state`); a learning is redacted when it is built.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from recall_agent.capture import commands, cues, edits, model, output, task
from recall_agent.capture.transcript import PATH_TOOLS, Call, Prompt, Result, Said, Step
from recall_agent.redact import redact

OUTPUT_MAX = 12_000  # characters of a run's output kept (head and tail)
MAX_OPEN = 30  # errors kept open per stream
MAX_ERRORS = 20  # texts kept per open error (repeats that differ)
MAX_EDITS = 400  # edits kept while groups are open
MAX_BACKGROUND = 20_000
MAX_SAID = 30
MAX_STEPS = 3
MAX_WRITTEN = 5000  # lines of the session's own code remembered (folded), per stream
SAID_MAX = 2000
MAX_REPORTED = 2  # errors quoted by the user's prompts waiting for their fix, per stream
ASKED_TAIL = 400  # characters of the agent's last words read for a question the next prompt answers
REPORT_PROMPTS = 2  # later prompts a reported error waits through for its fix (an answer, "go on")
REWRITE_OVERLAP = 0.1  # a refused command line written again keeps some of its words (file names, a loop)
VARIANT_TRIES = 3  # passing runs of a failed program, run another way, that may show it fixed
_FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# tools whose failures are about using the tool, not the project (old_string not found, no such file)
_TOOL_USAGE = _FILE_TOOLS | {"Read", "Glob", "Grep", "LS", "TodoWrite", "Task", "Agent", "ExitPlanMode"}
# tools that read or stop a background shell: their result is the shell's, not a check of their own
_TOOL_USAGE |= {"BashOutput", "KillShell", "KillBash", "TaskOutput", "TaskStop", "WebFetch", "WebSearch"}
_ASKING_TOOLS = frozenset({"ExitPlanMode", "AskUserQuestion"})
_QUESTION = re.compile(r"\w\?(?:[\s*_`)]|$)")  # a sentence that ends with a question mark
_LEARN_TOOLS = frozenset(
    {"mcp__recall__recall_learn", "recall_learn", "mcp__plugin_recall_recall__recall_learn"}
)


@dataclass
class Run:
    """One tool call and its result."""

    id: str
    tool: str
    command: commands.Command
    text: str
    flagged: bool
    seq: int
    ts: float | None


@dataclass
class Episode:
    """A resolved error with its fix: what the learning is built from."""

    stream: str
    errors: list[dict[str, Any]]  # {"id", "text", "command", "ts"} per distinct error, oldest first
    failed: Run  # the last failure
    passed: Run  # the run that showed it fixed
    changes: list[edits.FileChange]
    command_change: str | None
    installs: list[str]
    said: list[str]  # the agent's words between the last failure and the fix
    created: set[str]
    background: set[int] = field(default_factory=set)  # lines passing runs printed, as of the fix
    missing: list[str] = field(default_factory=list)  # paths the error said do not exist
    created_by: str | None = None  # the command that created the missing path
    inside: str | None = None  # the missing path began with the folder the shell was already in
    by_failing_run: bool = False  # the run that showed it fixed failed otherwise (the next failing test)
    steps: list[str] = field(default_factory=list)  # commands run in between (`go mod tidy`, `mv a b`)
    other_check: bool = False  # resolved by another script or test run after source edits (a reproduction)
    own_code: float = 0.0  # the share of the lines the fix changed that the session itself wrote earlier
    variant: bool = False  # resolved by the next run of the failed program run another way (`make type`)
    failures: int = 1  # failing runs of this error before the fix (trial and error fails again and again)
    touched_before: float = 0.0  # the share of the fixed files the session had edited before the error
    features: dict[str, float] = field(default_factory=dict)
    keep: bool = False
    superseded: bool = False
    listening: bool = True  # the agent's words right after the fix (until its next tool call) join `said`
    reported: bool = False  # the error was quoted in the user's prompt (a bug report), no run of it failed
    task: bool = False  # keyed by the prompt's task line: source edits a passing run verified, no error


@dataclass
class Stream:
    """The engine's state for one stream (JSON-serialisable through `to_state` / `from_state`)."""

    seq: int = 0
    open: list[dict[str, Any]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)  # {"seq", "change": FileChange state}
    runs: list[dict[str, Any]] = field(default_factory=list)  # passing non-probe runs while groups are open
    said: list[dict[str, Any]] = field(default_factory=list)
    background: dict[int, None] = field(default_factory=dict)  # an ordered set: the oldest go first
    created: list[str] = field(default_factory=list)
    # lines the session's edits wrote (folded, per file by its name)
    written: dict[int, None] = field(default_factory=dict)
    # the files the session's edits changed, each with the step of its first edit (by path, oldest first)
    touched: dict[str, int] = field(default_factory=dict)
    ready: list[Episode] = field(default_factory=list)  # resolved this turn, handed out at its end
    name: str = "main"
    # where the agent's shell is, as far as its `cd`s tell (the Bash tool keeps the folder between calls):
    # the folders entered from the session's start, relative; reset by an absolute `cd`
    shell: list[str] = field(default_factory=list)
    # errors the user's prompts quoted (a bug report's traceback), waiting for a source edit and a passing run
    reported: list[dict[str, Any]] = field(default_factory=list)
    # the task the latest prompt asked for (its task line), waiting for source edits and a passing run
    task: dict[str, Any] = field(default_factory=dict)
    asked: bool = False  # the agent's last words ended with a question: the next prompt answers it
    # the agent's words since its last tool result said it expects the next call to fail (`cues`); kept as
    # a flag, not as text
    expects: bool = False
    answered: bool = False  # a tool result came after the agent's last words
    # passing runs of another program or tool offered as an open error's fix (`Engine._replacement`), by the
    # error's first failing call; decided when the turn ends, never kept in the state (a read ends a turn)
    candidates: dict[str, list[Episode]] = field(default_factory=dict)

    def to_state(self) -> dict[str, Any]:
        """The state to keep, with every text redacted (redaction runs here, once per text, not per run:
        an import that keeps no state never pays for it on runs that resolve nothing)."""
        for err in self.open:
            for entry in err["errors"]:
                _seal(entry, "text")
        for said in self.said:
            _seal(said, "text")
        for report in [*self.reported, *([self.task] if self.task else [])]:
            _seal(report, "text")
        for edit in self.edits:
            if not edit.get("sealed"):
                for key in ("old", "new"):
                    if edit["change"].get(key):
                        edit["change"][key] = redact(edit["change"][key])
                edit["sealed"] = True
        return {
            "seq": self.seq,
            "shell": self.shell,
            "open": self.open,
            "edits": self.edits,
            "runs": self.runs,
            "said": self.said,
            "background": list(self.background),
            "created": self.created,
            "written": list(self.written),
            "touched": self.touched,
            "reported": self.reported,
            "task": self.task,
            "asked": self.asked,
            "expects": self.expects,
            "answered": self.answered,
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Stream:
        st = cls()
        for name in (
            "seq",
            "shell",
            "open",
            "edits",
            "runs",
            "said",
            "created",
            "reported",
            "task",
            "asked",
            "expects",
            "answered",
        ):
            value = data.get(name)
            if isinstance(value, type(getattr(st, name))):
                setattr(st, name, value)
        touched = data.get("touched")
        if isinstance(touched, dict):
            st.touched = {str(k): int(v) for k, v in touched.items() if isinstance(v, int)}
        for name in ("background", "written"):
            marks = data.get(name)
            if isinstance(marks, list):
                setattr(st, name, dict.fromkeys(m for m in marks if isinstance(m, int)))
        return st


class Engine:
    """Feed it steps (`feed`), take the finished episodes (`episodes`); `state()` / `Engine(state)` carry
    it from one read of a live transcript to the next."""

    def __init__(
        self,
        state: dict[str, Any] | None = None,
        *,
        record: bool = False,
        decide_run: Callable[[Run, dict[str, float]], bool] | None = None,
    ) -> None:
        streams = (state or {}).get("streams")
        self.streams: dict[str, Stream] = {
            name: Stream.from_state(data)
            for name, data in (streams.items() if isinstance(streams, dict) else [])
            if isinstance(data, dict)
        }
        self.done: list[Episode] = []
        # with `record`, every judged run and episode is kept (the benchmark and the fitting script read them)
        self.record = record
        self.judged_runs: list[tuple[Run, dict[str, float], bool]] = []
        self.judged_episodes: list[Episode] = []
        self.failures = 0
        self.resolved = 0
        self.resolved_ids: list[str] = []  # failing calls a later run showed fixed (kept or not)
        # what the next run of the same check said of a failing call: "helped" (fixed) or "hurt" (the same
        # error again); the hooks judge the learnings they injected for that call by it
        self.verdicts: dict[str, str] = {}
        self._run_model = model.load("run")
        self._decide_run = decide_run  # fitting replays labelled sessions with the labels' verdicts
        self._episode_model = model.load("episode")
        self._transient_model = model.load("transient")
        self._variant_model = model.load("variant")

    def state(self) -> dict[str, Any]:
        return {"streams": {name: st.to_state() for name, st in self.streams.items()}}

    def stream(self, name: str) -> Stream:
        st = self.streams.setdefault(name, Stream())
        st.name = name
        return st

    # ------------------------------------------------------------------ steps

    def feed(self, steps: Iterable[Step]) -> None:
        for step in steps:
            if isinstance(step, Result):
                self._result(step)
            elif isinstance(step, Said):
                self._said(step)
            elif isinstance(step, Prompt):
                self.end_turn(step.stream)
                self._prompt(step)

    def end_turn(self, name: str | None = None) -> None:
        """The turn ended (a prompt, Stop): hand out the episodes it resolved."""
        for sname, st in self.streams.items():
            if name is None or sname == name:
                self._replaced(st)
                self._reported_fixed(st)
                self._task_done(st)
                self.done.extend(e for e in st.ready if e.keep and not e.superseded)
                st.ready = []

    def episodes(self) -> list[Episode]:
        """Episodes handed out so far (and forgets them)."""
        out, self.done = self.done, []
        return out

    def _said(self, said: Said) -> None:
        """The agent's words: kept while errors are open (the cause is often said before the fix), and
        given to the episodes this turn resolved (its summary after the fix may say why)."""
        st = self.stream(said.stream)
        st.asked = _asks(said.text)
        _intent(st, said.text)
        if not st.open and not st.ready and not st.reported and not st.task:
            return
        text = said.text[:SAID_MAX]
        if st.open or st.reported or st.task:
            st.said.append({"seq": st.seq, "text": text})
            del st.said[:-MAX_SAID]
        for episode in st.ready:
            if episode.listening and len(episode.said) < MAX_SAID:
                episode.said.append(text)

    def _result(self, res: Result) -> None:
        call = res.call
        st = self.stream(call.stream)
        st.seq += 1
        st.answered = True
        for episode in st.ready:
            episode.listening = False
        if call.name in _ASKING_TOOLS:
            st.asked = True  # a plan shown for approval, a question put: the next prompt answers it
        if call.name in _FILE_TOOLS:
            if not res.is_error:
                self._edit(st, call, res)
            return
        if call.name in PATH_TOOLS and not res.interrupted:
            self._path_tool(st, call, res)
            return
        if call.name in _TOOL_USAGE or res.interrupted:
            return
        run = _run(call, res, st.seq)
        if run is None:
            return
        if self._agent_learned(st, run, res):
            return
        background = st.background.keys()
        features = output.run_features(
            run.text, run.flagged, run.command.probe, run.command.masked, background
        )
        features |= cues.run_cues(run.text, run.command.text, background, st.expects)
        failed = self._decide_run(run, features) if self._decide_run else self._run_model.decide(features)
        if self.record:
            self.judged_runs.append((run, features, failed))
        if failed:
            self._failed(st, run, background)
        else:
            self._passed(st, run)

    def _path_tool(self, st: Stream, call: Call, res: Result) -> None:
        """Read, Glob, Grep, LS: a path that does not exist is a failure of the tool (its other errors are
        about using it); a later success of the same tool may show it fixed (another path)."""
        path = str(call.input.get("path") or call.input.get("file_path") or "")
        failed = res.is_error and bool(res.text) and "does not exist" in (res.text or "")[:300]
        if not failed and not any(str((e.get("last") or {}).get("tool")) == call.name for e in st.open):
            return
        command = commands.tool_command(call.name, {"path": path or "."})
        text = res.text or ""
        if failed and path and path not in text:
            text = f"{text.rstrip('.')}: {path}"
        run = Run(call.id, call.name, command, text, res.is_error, st.seq, res.ts)
        if failed:
            self._failed(st, run, st.background.keys())
        else:
            self._resolve_matching(st, run, failing_folds=None)
            self._trim(st)

    def _agent_learned(self, st: Stream, run: Run, res: Result) -> bool:
        """`recall learn` (or the MCP tool) run by the agent: what it records supersedes this turn's
        automatic learnings for the same error."""
        main = run.command.main
        learned = run.tool in _LEARN_TOOLS or (main is not None and main.family == "recall learn")
        if not learned or res.is_error:
            return learned
        said = (
            commands.option_values(res.call.input.get("command") or "", "--error")
            if run.tool == "Bash"
            else [str(res.call.input.get("error") or "")]
        )
        wanted = [" ".join(t.split()) for t in said if t.strip()]
        for episode in st.ready:
            texts = [" ".join(e["text"].split()) for e in episode.errors]
            if not wanted or any(w in t for w in wanted for t in texts):
                episode.superseded = True
        return True

    # ------------------------------------------------------------------ failures and fixes

    def _failed(self, st: Stream, run: Run, background: Collection[int]) -> None:
        """Record the failure; errors of the same check that this run no longer shows are resolved by it.
        A test run that reports several failing tests opens one error per test."""
        self.failures += 1
        lines = output.lines_of(run.text)
        errs = output.error_lines(lines, background)
        missing = output.missing_paths(errs or lines)
        # a probe's failure is an answer ("no match"), unless it names a missing path or could not run at all:
        # it exited non-zero with an error line (`tree`: command not found, `git log main..HEAD`: unknown
        # revision), not a look at a log whose lines are errors
        check = run.command.main or (
            run.command.checks[-1] if (missing or (errs and run.flagged)) and run.command.checks else None
        )
        tests = output.failing_tests([ln for ln in lines if output.fold(ln) not in background])
        parts: list[tuple[list[int], str, str | None]] = (
            [(output.test_identity(t), "\n".join(output.test_section(lines, t)), t) for t in tests]
            if len(tests) > 1
            else [(output.identity(errs) or [output.fold(run.text[-400:])], run.text, None)]
        )
        failing = {f for folds, _, _ in parts for f in folds}
        # the code ran and raised (not a script that failed to load: an import or syntax error is no
        # reproduction of anything)
        raised = any(output.is_exception_line(ln) and not _LOADING.search(ln) for ln in errs)
        self._resolve_matching(st, run, failing_folds=failing, complete=not output.stopped_early(run.text))
        if check is None:
            return
        for folds, text, test in parts:
            self._open(st, run, folds, text or run.text, missing, test=test, raised=raised)

    def _open(
        self,
        st: Stream,
        run: Run,
        folds: list[int],
        text: str,
        missing: list[str],
        test: str | None = None,
        raised: bool = False,
    ) -> None:
        entry = {"id": run.id, "text": text, "ts": run.ts}
        inside = next((m for m in missing if commands.inside(st.shell, m)), None)
        for err in st.open:
            if err.get("shown"):
                continue
            same = err["command"] == run.command.text or commands.same_check(
                commands.parse(err["command"]), run.command
            )
            if same and set(err["folds"]) & set(folds):
                self.verdicts.setdefault(str(err["last"]["id"]), "hurt")
                if not any(e["text"] == text for e in err["errors"]):
                    err["errors"] = [*err["errors"], entry][-MAX_ERRORS:]
                err.update(
                    folds=sorted(set(err["folds"]) | set(folds)), last_seq=run.seq, last=_run_state(run)
                )
                err["failures"] = int(err.get("failures") or 1) + 1
                err["missing"] = sorted(set(err.get("missing") or []) | set(missing))
                err["raised"] = raised
                return
        st.open.append(
            {
                "command": run.command.text,
                "errors": [entry],
                "folds": folds,
                "missing": missing,
                "last_seq": run.seq,
                "first_seq": run.seq,  # its first failure (a file the session edited before it is its own)
                "last": _run_state(run),
                "test": test or False,  # one failing test (its id) of a run that reported several
                "raised": raised,  # its last failure printed an exception line (not background)
                # the missing path begins with the folder the shell is already in (`testbed/x` from testbed)
                "inside": st.shell[-1] if inside else None,
            }
        )
        del st.open[:-MAX_OPEN]

    def _passed(self, st: Stream, run: Run) -> None:
        st.shell = commands.moved(st.shell, run.command)[-20:]
        lines = output.lines_of(run.text)
        shown = output.shown_errors(lines, st.background) if _reproduces(run.command) else []
        printed = {output.fold(ln) for ln in lines}
        for mark in printed:  # all of it is background now
            st.background.pop(mark, None)
            st.background[mark] = None
        while len(st.background) > MAX_BACKGROUND:
            del st.background[next(iter(st.background))]
        if st.reported:
            self._verify_reported(st, run)
        if st.task:
            _verify_task(st, run, printed)
        if not st.open and not shown:
            return
        self._resolve_matching(st, run, failing_folds=None)
        self._reproduced(st, run)
        offered = self._variant(st, run)
        self._replacement(st, run, offered)
        self._shown(st, run, shown, printed)
        if st.open and not run.command.probe:
            st.runs.append({"seq": run.seq, "command": run.command.text, "installs": run.command.installs})
            del st.runs[:-MAX_EDITS]
        self._trim(st)

    def _resolve_matching(
        self, st: Stream, run: Run, failing_folds: set[int] | None, complete: bool = True
    ) -> None:
        """Resolve the open errors that `run` shows fixed: a run of the same check that passed, or that
        failed without that error (a test run that stopped early says nothing of the tests it did not
        reach); or, for an error naming a missing path, a passing run that creates it."""
        still = []
        for err in st.open:
            if err.get("shown") or (failing_folds is not None and not complete and err.get("test")):
                still.append(err)
            elif self._resolves(err, run, failing_folds) and not _narrowed_only(st, err, run, failing_folds):
                self._resolved(st, err, self._episode(st, err, run, by_failing_run=failing_folds is not None))
            else:
                still.append(err)
        st.open = still

    @staticmethod
    def _resolves(err: dict[str, Any], run: Run, failing_folds: set[int] | None) -> bool:
        tool = str((err.get("last") or {}).get("tool") or "Bash")
        if tool != run.tool:
            return False
        failure = (
            commands.parse(err["command"])
            if tool == "Bash"
            else commands.tool_command(tool, {}, err["command"])
        )
        same = commands.same_check(failure, run.command) or (
            bool(err.get("missing"))
            and commands.same_check(failure, run.command, probes=True, missing=err["missing"])
        )
        test = err.get("test")
        if not same and isinstance(test, str) and tool == "Bash":  # that test, run on its own
            same = commands.runs_test(failure, run.command, test)
        if failing_folds is not None:
            return same and not (set(err["folds"]) & failing_folds)
        if same:
            return True
        if err.get("inside") and commands.uses_inner(run.command, failure, err["missing"], err["inside"]):
            return True
        return bool(err.get("missing")) and commands.creates(run.command, err["missing"])

    def _reproduced(self, st: Stream, run: Run) -> None:
        """Reproduce, edit, rerun: an exception a script or snippet raised (`python repro.py`, `python -c`),
        then edits to the project's own source files, then another script, snippet or test run that passes. The newest such error is resolved
        by the edits (the episode model weighs that the run that passed is another check)."""
        if not _runs_code(run.command):
            return
        for err in reversed(st.open):
            tool = str((err.get("last") or {}).get("tool") or "Bash")
            failure = commands.parse(err["command"])
            main = failure.main
            # a script or snippet reproduced it (a test run's failure needs those tests to pass again)
            if (
                tool != "Bash"
                or err.get("missing")
                or main is None
                or main.program not in commands.INTERPRETERS
            ):
                continue
            if not err.get("raised"):
                continue
            if _source_edited(st, err, run):
                st.open.remove(err)
                self._resolved(st, err, self._episode(st, err, run, by_failing_run=False, other_check=True))
            return  # only the newest error a script raised

    def _shown(self, st: Stream, run: Run, shown: list[str], printed: set[int]) -> None:
        """Reproduce, edit, rerun, when the reproduction exits 0: a script or snippet that printed error
        lines (it caught the exception and printed it, `BUG: ...`, `✗ ...`) opens an error shown only in its
        output. The same script run again after edits to the project's own source files (not files the
        session created, not tests), without those lines, shows it fixed by those edits: the learning is
        keyed by the lines that went. Lines still printed keep it open (the fix missed them); lines gone
        without a source edit (the script itself changed) say nothing, and the error is forgotten."""
        seen: set[int] = set()
        for err in [e for e in st.open if e.get("shown")]:
            if commands.same_check(commands.parse(err["command"]), run.command):
                seen.update(err["folds"])
                self._rerun_shown(st, err, run, printed)
        fresh = [ln for ln in shown if output.fold(ln) not in seen]
        if fresh:
            st.open.append(_shown_error(run, fresh))
            del st.open[:-MAX_OPEN]

    def _rerun_shown(self, st: Stream, err: dict[str, Any], run: Run, printed: set[int]) -> None:
        """The script that showed `err` ran again (and passed): what it no longer prints after a source edit
        is fixed by that edit; what it still prints stays open, from this run."""
        kept = [f for f in err["folds"] if f in printed]
        if len(kept) == len(err["folds"]):  # the bug still shows: a later fix is what fixes it
            err.update(last_seq=run.seq, last=_run_state(run))
            return
        st.open.remove(err)
        if not _source_edited(st, err, run):
            return
        text = err["errors"][-1]["text"]
        gone = [ln for ln in text.splitlines() if output.fold(ln) not in printed]
        episode = self._episode(st, {**err, "errors": [{**err["errors"][-1], "text": "\n".join(gone)}]}, run,
                                by_failing_run=False)  # fmt: skip
        self._hand_out(st, episode)  # not `_resolved`: no failed call of its own to count or credit
        if kept:
            rest = "\n".join(ln for ln in text.splitlines() if output.fold(ln) in printed)
            entry = {**err["errors"][-1], "text": rest}
            st.open.append(
                {**err, "errors": [entry], "folds": kept, "last_seq": run.seq, "last": _run_state(run)}
            )

    def _variant(self, st: Stream, run: Run) -> dict[str, Any] | None:
        """The newest open error whose program this passing run runs another way (`make typecheck` failed,
        `make type` passed; `zsh -c` then `bash -c`): the changed command may be the fix. The variant model
        decides from how the two commands differ and what the error said; an error it rejects stays open for
        a run of its own check. Each error gets VARIANT_TRIES such chances: its program's next passing runs.
        Returns the error it was offered to."""
        if run.tool != "Bash":
            return None
        for err in reversed(st.open):
            tries = int(err.get("variant") or 0)
            if (
                err.get("shown")
                or tries >= VARIANT_TRIES
                or str((err.get("last") or {}).get("tool") or "Bash") != "Bash"
            ):
                continue
            relation = _variant_relation(err, run)
            if relation is None:
                continue
            err["variant"] = tries + 1
            episode = self._episode(st, err, run, by_failing_run=False, variant=relation)
            if episode.keep:
                st.open.remove(err)
                self._resolved(st, err, episode)
            elif self.record:
                self.judged_episodes.append(episode)
            return err
        return None

    def _replacement(self, st: Stream, run: Run, offered: dict[str, Any] | None) -> None:
        """The newest open error may have been fixed by doing it another way, with another program or tool
        (`commands.replaced`: an MCP tool's page opened with `open URL`, another tool of the same MCP server,
        `git remote add` when `gh` is missing, the snippet run from the project's folder): its next
        VARIANT_TRIES passing runs that are no probe are offered as candidates, each judged by the variant
        model (`variant_replaced`). They are decided when the turn ends (`_replaced`), so that an error its
        own check resolves later in the turn keeps that fix."""
        if run.tool in _ASKING_TOOLS:
            return
        err = next((e for e in reversed(st.open) if not e.get("shown")), None)
        if err is None or err is offered or int(err.get("replaced") or 0) >= VARIANT_TRIES:
            return
        tool = str((err.get("last") or {}).get("tool") or "Bash")
        failure = (
            commands.parse(err["command"])
            if tool == "Bash"
            else commands.tool_command(tool, {}, err["command"])
        )
        # another look replaces a look that could not run (`tree` missing: `find`), never one that missed its
        # path (the folder slip: the same look at the right path is its fix, by `same_check`)
        relation = commands.replaced(failure, run.command, looks=not err.get("missing"))
        if relation is None or (tool == "Bash" and run.tool == "Bash" and _variant_relation(err, run)):
            return
        err["replaced"] = int(err.get("replaced") or 0) + 1
        relation["variant_tool_swap"] = float(tool != run.tool)
        episode = self._episode(st, err, run, by_failing_run=False, variant=relation)
        st.candidates.setdefault(str(err["errors"][0]["id"]), []).append(episode)

    def _replaced(self, st: Stream) -> None:
        """At the turn's end, an error still open whose replacement candidates came after its last failure is
        resolved by the one the variant model rates highest, when it keeps one; else it stays open."""
        found, st.candidates = st.candidates, {}
        for key, episodes in found.items():
            err = next((e for e in st.open if str(e["errors"][0]["id"]) == key), None)
            if err is None:  # resolved meanwhile by its own check (or forgotten): that fix stands
                continue
            episodes = [e for e in episodes if e.passed.seq > int(err["last_seq"])]
            kept = [e for e in episodes if e.keep]
            best = max(kept, key=lambda e: self._variant_model.probability(e.features)) if kept else None
            if self.record:
                self.judged_episodes.extend(e for e in episodes if e is not best)
            if best is not None:
                st.open.remove(err)
                self._resolved(st, err, best)

    def _resolved(self, st: Stream, err: dict[str, Any], episode: Episode) -> None:
        self.resolved += 1
        self.resolved_ids.extend(e["id"] for e in err["errors"])
        self.verdicts.setdefault(str(err["last"]["id"]), "helped")
        self._hand_out(st, episode)

    def _hand_out(self, st: Stream, episode: Episode) -> None:
        """The episode goes out at the turn's end (and is kept for fitting when recording)."""
        st.ready.append(episode)
        if self.record:
            self.judged_episodes.append(episode)

    def _episode(
        self,
        st: Stream,
        err: dict[str, Any],
        run: Run,
        by_failing_run: bool,
        other_check: bool = False,
        variant: dict[str, float] | None = None,
    ) -> Episode:
        """The episode of `err` fixed as `run` shows, with its features and the models' verdict."""
        tool = str((err.get("last") or {}).get("tool") or "Bash")
        failure = commands.parse(err["command"]) if tool == "Bash" else None
        created_by = (
            run.command.text
            if err.get("missing")
            and failure is not None
            and not commands.same_check(failure, run.command, probes=True, missing=err["missing"])
            and commands.creates(run.command, err["missing"])
            else None
        )
        since = int(err["last_seq"])
        failed = _run_from_state(err["last"])
        changes = _fold_changes([e for e in st.edits if since < e["seq"] < run.seq])
        installs = [r["command"] for r in st.runs if since < r["seq"] < run.seq and r.get("installs")]
        others = [r for r in st.runs if since < r["seq"] < run.seq]
        steps = [r["command"] for r in others if not r.get("installs") and _a_step(r["command"], failed, run)]
        episode = Episode(
            stream=st.name,
            errors=list(err["errors"]),
            failed=failed,
            passed=run,
            changes=changes,
            command_change=None if created_by else commands.change(failed.command, run.command),
            created_by=created_by,
            inside=err.get("inside"),
            installs=installs,
            steps=steps[-MAX_STEPS:],
            said=[s["text"] for s in st.said if since <= s["seq"] <= run.seq],
            created=set(st.created),
            # what a passing run showed is background by now, except the lines this error is about
            background=set(st.background) - set(err["folds"] if err.get("shown") else ()),
            missing=list(err.get("missing") or []),
            by_failing_run=by_failing_run,
            other_check=other_check,
            variant=variant is not None,
            failures=int(err.get("failures") or 1),
        )
        episode.own_code = _own_code(st, [c for c in changes if not c.created])
        episode.touched_before = _touched_before(changes, st.touched, int(err.get("first_seq") or since))
        episode.features = episode_features(episode, bool(others), episode.background)
        if variant is not None:
            episode.features.update(
                variant,
                variant_edits=float(bool(changes)),
                variant_between=min(len(others), 5) / 5,
                variant_hinted=episode.features["command_hinted"],
                **_candidate_features(err, failed, run),
            )
        decider = self._variant_model if variant is not None else self._episode_model
        # knowledge, and not a fix to code this session wrote minutes earlier (its own slip, met by no one else)
        episode.keep = decider.decide(episode.features) and not self._transient_model.decide(episode.features)
        return episode

    # ------------------------------------------------------------------ errors the user's prompt reported

    def _prompt(self, prompt: Prompt) -> None:
        """A prompt that quotes an error (a bug report's traceback, `TypeError: ...` on a line of its own)
        opens a reported error: no run of the session failed with it, yet a session that then edits the
        project's own source files and runs code that passes has fixed it (`_verify_reported`). An
        unverified report waits through REPORT_PROMPTS more prompts (an answer to a question, "go on")."""
        st = self.stream(prompt.stream)
        for report in st.reported:
            report["prompts"] = int(report.get("prompts") or 0) + 1
        st.reported = [r for r in st.reported if int(r["prompts"]) <= REPORT_PROMPTS]
        lines = output.quoted_errors(prompt.text)
        if lines:
            st.reported.append({"id": f"prompt:{prompt.id}"[:200], "text": "\n".join(lines),
                                "last_seq": st.seq, "prompts": 0, "verified": None})  # fmt: skip
            del st.reported[:-MAX_REPORTED]
        _task_prompt(st, prompt, quoted=bool(lines))
        self._trim(st)

    def _verify_reported(self, st: Stream, run: Run) -> None:
        """A passing run of code (a script, a snippet, tests) after edits to the project's own source files
        (not files the session created, not tests) since the prompt shows its reported error fixed, unless
        it still prints the quoted line; the latest such run is the one that verified it."""
        if not _runs_code(run.command):
            return
        for report in st.reported:
            if any(ln.strip() and ln.strip() in run.text for ln in str(report["text"]).splitlines()):
                continue
            if _source_edited(st, report, run):
                report["verified"] = _run_state(run)

    # ------------------------------------------------------------------ the task the prompt asked for

    def _task_done(self, st: Stream) -> None:
        """At the turn's end, a verified task becomes a task learning (`_task_episode`), at most one per
        task; an unverified one waits (an answer, "go on") until a prompt asks for another task."""
        if not st.task.get("verified"):
            return
        found, st.task = st.task, {}
        episode = _task_episode(st, found, self._transient_model)
        if episode is not None:
            st.ready.append(episode)  # not `_hand_out`: no failed call, nothing for the models to fit
        self._trim(st)

    def _reported_fixed(self, st: Stream) -> None:
        """At the turn's end, each verified report becomes an episode keyed by the lines the prompt quoted,
        fixed by the edits between the prompt and the run that verified it; not when an episode of this turn
        already holds that error (a reproduction raised it and its fix is stored from the run)."""
        done = [r for r in st.reported if r.get("verified")]
        if not done:
            return
        st.reported = [r for r in st.reported if not r.get("verified")]
        for report in done:
            episode = _reported_episode(st, report)
            if episode is not None and not any(_holds(e, str(report["text"])) for e in st.ready):
                st.ready.append(episode)  # not `_hand_out`: no failed call, nothing for the models to fit
        self._trim(st)

    def _edit(self, st: Stream, call: Call, res: Result) -> None:
        path = str(call.input.get("file_path") or call.input.get("notebook_path") or "")
        if not path:
            return
        details = res.details() if st.open or st.reported or st.task or call.name == "Write" else {}
        if call.name == "Write" and not details.get("originalFile") and path not in st.created:
            st.created.append(path)  # a new file: the agent's own (a reproduction script, a test)
            del st.created[:-MAX_EDITS]
        for mark in (edits.line_mark(ln, path) for ln in edits.written_lines(call.name, call.input)):
            st.written.pop(mark, None)  # the session's own code: a fix of it later is not knowledge
            st.written[mark] = None
        while len(st.written) > MAX_WRITTEN:
            del st.written[next(iter(st.written))]
        st.touched.setdefault(path, st.seq)
        while len(st.touched) > MAX_EDITS:
            del st.touched[next(iter(st.touched))]
        if not st.open and not st.reported and not st.task:
            return
        change = edits.change_of(call.name, call.input, details, path)
        change.created = change.created or path in st.created
        st.edits.append({"seq": st.seq, "change": change.to_state()})
        del st.edits[:-MAX_EDITS]

    def _trim(self, st: Stream) -> None:
        """Forget edits, runs and words older than every open error (nothing can claim them)."""
        held = [*st.open, *st.reported, *([st.task] if st.task else [])]
        if not held:
            st.edits, st.runs, st.said = [], [], []
            return
        oldest = min(int(g["last_seq"]) for g in held)
        st.edits = [e for e in st.edits if e["seq"] > oldest]
        st.runs = [r for r in st.runs if r["seq"] > oldest]
        st.said = [s for s in st.said if s["seq"] >= oldest]


def _variant_relation(err: dict[str, Any], run: Run) -> dict[str, float] | None:
    """How `run` (it passed) runs the failed command another way (`commands.variant`), or, for an error the
    shell itself printed (not a missing path: those have rules of their own), how it writes the refused
    command line again (`commands.rewritten`, when the lines share a tenth of their words)."""
    failure = commands.parse(err["command"])
    found = commands.variant(failure, run.command) if run.command.main is not None else None
    if found is not None or err.get("missing"):
        return found
    if not shell_error(output.lines_of(err["errors"][-1]["text"])):
        return None
    found = commands.rewritten(failure, run.command)
    return found if found is not None and found["variant_overlap"] >= REWRITE_OVERLAP else None


def _candidate_features(err: dict[str, Any], failed: Run, run: Run) -> dict[str, float]:
    """How a variant or replacement candidate stands to the error it is offered for: `variant_try`, which of
    its VARIANT_TRIES chances it is (0 the first, 1 the last: a later run of another program is less often
    the fix than the first); `variant_target_dropped`, the failed check named targets (a file, a resource)
    and the candidate names none of them (`npm run lint src/x.tsx` then `npm run dev`)."""
    tries = int(err.get("variant") or 0) + int(err.get("replaced") or 0)
    targets = [t for t in (failed.command.main.targets if failed.command.main else ()) if len(t) > 2]
    dropped = bool(targets) and not any(t in run.command.text for t in targets)
    return {"variant_try": min(max(tries - 1, 0), VARIANT_TRIES - 1) / (VARIANT_TRIES - 1),
            "variant_target_dropped": float(dropped)}  # fmt: skip


def _narrowed_only(st: Stream, err: dict[str, Any], run: Run, failing_folds: set[int] | None) -> bool:
    """A narrower test selection (`-k`, one test id, `-x`, fewer targets) says nothing of the tests it left
    out: it shows the error fixed only when something was changed since (it verifies those edits or
    installs); failing otherwise, it says nothing of this error at all."""
    tool = str((err.get("last") or {}).get("tool") or "Bash")
    if tool != "Bash" or commands.not_a_fix(commands.parse(err["command"]), run.command) != "narrowed":
        return False
    if failing_folds is not None:
        return True
    since = int(err["last_seq"])
    changed = any(since < e["seq"] < run.seq for e in st.edits)
    return not changed and not any(since < r["seq"] < run.seq and r.get("installs") for r in st.runs)


# ---------------------------------------------------------------------- runs


def _run(call: Call, res: Result, seq: int) -> Run | None:
    text = res.text or ""
    if len(text) > OUTPUT_MAX:
        text = text[: OUTPUT_MAX // 4] + "\n...\n" + text[-(OUTPUT_MAX * 3 // 4) :]
    if call.name == "Bash":
        raw = call.input.get("command")
        if not isinstance(raw, str) or not raw.strip():
            return None
        command = commands.parse(_redacted(raw))  # a failure and its fix are redacted alike: still compare
    else:  # its inputs (a structured one as JSON) are kept in the state: redacted as a command is
        full = commands.tool_text(call.name, call.input, commands.TOOL_INPUT_FULL)
        command = commands.tool_command(
            call.name, {}, _redacted(commands.tool_text(call.name, call.input)), _redacted(full)
        )
    return Run(
        call.id, call.name, command, text, res.is_error or _tool_reported_error(call, text), seq, res.ts
    )


_SHELLS = frozenset({"Bash", "PowerShell"})
_TOOL_ERROR = re.compile(r'^\s{0,4}(?:Error\b|\{\s{0,4}"error"\s{0,4}:)')


def _intent(st: Stream, words: str) -> None:
    """The agent's words before its next call: whether they say that call is expected to fail (a
    mutation check, a rejection it wants to see). Words after a tool result start a new message."""
    if st.answered:
        st.expects, st.answered = False, False
    st.expects = st.expects or cues.expects_failure(words)


def _tool_reported_error(call: Call, text: str) -> bool:
    """A tool other than the shell (an MCP server's) that answered with an error as its result's first word
    (`Error: [Errno 2] No such file or directory: ...`, `{"error": ...}`) failed, though the client did not
    flag the result: such a server reports its failures in the text. The shell's output is the run model's
    to read (a program prints `Error` lines that are no failure of the command)."""
    return call.name not in _SHELLS and bool(_TOOL_ERROR.match(text[:200]))


def _shown_error(run: Run, lines: list[str]) -> dict[str, Any]:
    """An open error seen only in the output of a run that passed (`Engine._shown`)."""
    return {
        "command": run.command.text,
        "errors": [{"id": run.id, "text": "\n".join(lines), "ts": run.ts}],
        "folds": sorted({output.fold(ln) for ln in lines}),
        "missing": [],
        "last_seq": run.seq,
        "last": _run_state(run),
        "test": False,
        "raised": False,
        "inside": None,
        "shown": True,
    }


def _holds(episode: Episode, quoted: str) -> bool:
    """Does a kept episode that changed files hold one of the quoted error lines (`E   TypeError: …` of a
    pytest run holds `TypeError: …`; numbers and addresses folded)?"""
    if not episode.keep or not episode.changes:
        return False
    wanted = [q.strip() for q in quoted.splitlines() if q.strip()]
    folds = {output.fold(q) for q in wanted}
    for err in episode.errors:
        for line in output.lines_of(err["text"]):
            bare = line.strip().removeprefix("E ").strip()
            if output.fold(bare) in folds or any(q in line for q in wanted):
                return True
    return False


def _reported_episode(st: Stream, report: dict[str, Any]) -> Episode | None:
    """The episode of a verified report: the prompt's quoted lines as its error, the edits between the
    prompt and the run that verified it as its fix (None when, folded, no source file is left changed)."""
    passed = _run_from_state(report["verified"])
    since = int(report["last_seq"])
    changes = _fold_changes([e for e in st.edits if since < e["seq"] < passed.seq])
    if not any(
        not c.created and c.path not in st.created and not edits.TEST_FILE.search(c.path) for c in changes
    ):
        return None
    rid = str(report["id"])
    failed = Run(rid, "Prompt", commands.parse(""), "", False, since, None)
    return Episode(
        stream=st.name,
        errors=[{"id": rid, "text": str(report["text"]), "ts": None}],
        failed=failed,
        passed=passed,
        changes=changes,
        command_change=None,
        installs=[],
        said=[s["text"] for s in st.said if since <= s["seq"] <= passed.seq],
        created=set(st.created),
        reported=True,
        keep=True,
    )


def _asks(text: str) -> bool:
    """Do the agent's words end by asking something: a question among their last ASKED_TAIL characters
    (`Want me to apply them now? It's reversible.`, `**Shall I go ahead?**`, options listed after it)?"""
    return _QUESTION.search(text[-ASKED_TAIL:]) is not None


def _task_prompt(st: Stream, prompt: Prompt, quoted: bool) -> None:
    """A prompt that asks for a task of its own (`task.task_line`) opens it, in place of the last one; a
    prompt that quotes an error is keyed by that error instead (a report, `Engine._prompt`). A prompt with no
    task line ("go on"), or one that answers the agent's question (its last words asked one: "yes, go with
    option 2"), leaves the open task waiting, through REPORT_PROMPTS such prompts."""
    line = None if quoted or st.asked else task.task_line(prompt.text)
    st.asked = False
    if line:
        st.task = {"id": f"prompt:{prompt.id}"[:200], "text": line, "last_seq": st.seq, "prompts": 0,
                   "verified": None}  # fmt: skip
    elif quoted:
        st.task = {}  # the quoted error is the key now (a report)
    elif st.task:
        st.task["prompts"] = int(st.task.get("prompts") or 0) + 1
        if st.task["prompts"] > REPORT_PROMPTS:
            st.task = {}


def _verify_task(st: Stream, run: Run, printed: set[int]) -> None:
    """The evidence that verifies a report verifies the task (`Engine._verify_reported`): a passing run of
    code after edits to files that existed before the session (not tests, not files it created). The latest
    such run is the one, unless it is a reproduction run again that still prints every line of the error it
    showed (`Engine._rerun_shown` keeps that error open: the bug still shows), as a report is not verified
    by a run that still prints the quoted line."""
    if not _runs_code(run.command) or not _source_edited(st, st.task, run):
        return
    for err in st.open:
        if (
            err.get("shown")
            and printed.issuperset(err["folds"])
            and commands.same_check(commands.parse(err["command"]), run.command)
        ):
            return
    st.task["verified"] = _run_state(run)


def _task_episode(st: Stream, found: dict[str, Any], transient: model.Model) -> Episode | None:
    """The task learning of a verified task: keyed by its task line, fixed by the source edits between the
    prompt and the run that verified it (`_reported_episode`). None when an episode of this turn (kept or
    dropped: the models judged those edits as the fix of a failure) changed one of those files, or when the
    transient model calls the edits a correction of code the session itself wrote earlier."""
    episode = _reported_episode(st, found)
    if episode is None:
        return None
    episode.reported, episode.task = False, True
    source = {c.path for c in episode.changes if not c.created and c.path not in st.created
              and not edits.TEST_FILE.search(c.path)}  # fmt: skip
    if any(source & {c.path for c in e.changes} for e in st.ready):
        return None
    episode.own_code = _own_code(st, [c for c in episode.changes if c.path in source])
    return None if transient.decide(_own_code_features(episode.own_code)) else episode


def _own_code(st: Stream, changes: list[edits.FileChange]) -> float:
    """The share of the lines `changes` replaced that the session itself had written (`Stream.written`)."""
    replaced = [edits.line_mark(ln, c.path) for c in changes for ln in edits.replaced_lines(c)]
    return sum(m in st.written for m in replaced) / len(replaced) if replaced else 0.0


def _own_code_features(own_code: float) -> dict[str, float]:
    """The transient model's authorship features of a fix."""
    return {"fix_own_code": own_code, "fix_only_own_code": float(own_code >= 0.99)}


def _source_edited(st: Stream, err: dict[str, Any], run: Run) -> bool:
    """Were the project's own source files (not files the session created, not tests) edited between the
    error's last failure and `run`?"""
    since = int(err["last_seq"])
    changed = [edits.FileChange.from_state(e["change"]) for e in st.edits if since < e["seq"] < run.seq]
    return any(
        not c.created and c.path not in st.created and not edits.TEST_FILE.search(c.path) for c in changed
    )


def _reproduces(command: commands.Command) -> bool:
    """A script or snippet run (`python repro.py`, `python -c`), not a test run: what a reproduction is."""
    main = command.main
    return (
        main is not None
        and not command.installs
        and main.program in commands.INTERPRETERS
        and not _is_test(main)
    )


def _a_step(command: str, failed: Run, passed: Run) -> bool:
    """A command run between a failure and its fix that may be part of the fix (`go mod tidy`, `mv a b`,
    `npm run build`): not a test or script run, not another run of the check itself."""
    cmd = commands.parse(command)
    main = cmd.main
    if main is None or main.program in commands.INTERPRETERS or _is_test(main):
        return False
    return not commands.same_check(failed.command, cmd) and not commands.same_check(cmd, passed.command)


_LOADING = re.compile(r"\bNo module named\b|\b(?:SyntaxError|IndentationError|TabError)\b")


def _runs_code(command: commands.Command) -> bool:
    """A run of a script, a snippet (`python -c`) or tests: what reproduces a bug and shows it fixed."""
    main = command.main
    return (
        main is not None
        and not command.installs
        and (main.program in commands.INTERPRETERS or _is_test(main))
    )


def _is_test(check: commands.Check) -> bool:
    return check.program in _TEST_PROGRAMS or check.family in _TEST_FAMILIES


def _seal(item: dict[str, Any], key: str) -> None:
    """Redact item[key] once (a sealed item was redacted by an earlier read)."""
    if not item.get("sealed"):
        item[key] = redact(str(item.get(key) or ""))
        item["sealed"] = True


@functools.lru_cache(maxsize=2048)
def _redacted(command: str) -> str:
    return redact(command)


def _run_state(run: Run) -> dict[str, Any]:
    state = {"id": run.id, "tool": run.tool, "command": run.command.text, "seq": run.seq, "ts": run.ts}
    if run.command.full:  # a tool call's inputs, kept longer than its text keeps them
        state["full"] = run.command.full
    return state


def _run_from_state(data: dict[str, Any]) -> Run:
    tool = str(data.get("tool") or "Bash")
    text = str(data.get("command") or "")
    full = str(data.get("full") or "")
    command = commands.parse(text) if tool == "Bash" else commands.tool_command(tool, {}, text, full)
    return Run(str(data.get("id") or ""), tool, command, "", True, int(data.get("seq") or 0), data.get("ts"))


def _touched_before(changes: list[edits.FileChange], touched: dict[str, int], first: int) -> float:
    """The share of the files a fix changed that the session itself had edited before the error first
    failed (it is fixing what it was just writing or refactoring; Bash edits are not seen)."""
    if not changes:
        return 0.0
    return sum(touched.get(c.path, first) < first for c in changes) / len(changes)


def _fold_changes(entries: list[dict[str, Any]]) -> list[edits.FileChange]:
    by_path: dict[str, edits.FileChange] = {}
    for entry in entries:
        change = edits.FileChange.from_state(entry["change"])
        by_path[change.path] = edits.fold(by_path[change.path], change) if change.path in by_path else change
    return [c for c in by_path.values() if not c.reverted()]


# ---------------------------------------------------------------------- the episode model's features


def episode_features(ep: Episode, other_runs: bool, background: set[int]) -> dict[str, float]:
    """What the episode model weighs (`weights.json`): where the fix went, what kind of error it was."""
    # imported once an episode is judged, not with the engine: the Stop hook's cold path stays light
    from recall_agent.learnings import signatures

    created = ep.created
    last = ep.errors[-1]["text"] if ep.errors else ""
    # a file the failure itself named (`git add notes.md` before notes.md existed, a missing module) that
    # the agent then wrote is the fix, not a scratch script
    named = f"{ep.failed.command.text}\n{last}"
    wanted = [
        c for c in ep.changes if (c.created or c.path in created) and c.path.rsplit("/", 1)[-1] in named
    ]
    project = [c for c in ep.changes if (not c.created and c.path not in created) or c in wanted]
    scratch = [c for c in ep.changes if c not in project]
    lines = output.lines_of(last)
    errs = output.error_lines(lines, background)
    main = ep.failed.command.main
    runs_created = bool(main and any(t in created or _same_file(t, created) for t in main.targets))
    missing = any("No such file or directory" in ln or "not found" in ln for ln in lines)
    # the path that is missing is one the agent wrote itself (run from the wrong folder): its own slip
    own_missing = missing and any(c.rsplit("/", 1)[-1] in last for c in created)
    passed_main = ep.passed.command.main
    return {
        **_own_code_features(ep.own_code),
        # the fix changed files the session itself had edited before the error (its own work in progress)
        "fix_touched_before": ep.touched_before,
        # the run that showed it fixed hides its exit code (`| tail`, `| grep`): its pass is read off the output
        "passed_masked": float(ep.passed.command.masked),
        "error_in_created_file": float(_deepest_file(last) in {c.rsplit("/", 1)[-1] for c in created}),
        "path_tool": float(ep.failed.tool in PATH_TOOLS),
        "resolved_by_other_check": float(ep.other_check),
        "fix_project_edit": float(bool(project)),
        "fix_scratch_edit": float(bool(scratch)),
        "fix_only_scratch": float(bool(scratch) and not project),
        "fix_writes_named_file": float(bool(wanted)),
        "fix_command": float(ep.command_change is not None and not ep.changes),
        "fix_created_path": float(ep.created_by is not None),
        "resolved_by_failing_run": float(ep.by_failing_run),
        "fix_install": float(bool(ep.installs)),
        "fix_nothing": float(
            not ep.changes
            and ep.command_change is None
            and not ep.installs
            and not other_runs
            and ep.created_by is None
        ),
        "fix_other_runs": float(other_runs and not ep.changes),
        "runs_created_script": float(runs_created),
        "error_exception": float(any(output.is_exception_line(ln) for ln in errs)),
        "error_syntax": float(
            any(w in ln for ln in errs for w in ("SyntaxError", "IndentationError", "NameError"))
        ),
        "error_missing_path": float(missing),
        "error_missing_own_file": float(own_missing),
        "error_module": float(any("No module named" in ln or "Cannot find module" in ln for ln in lines)),
        "error_lines_none": float(not errs),
        "exit_code_only": float(bool(lines) and all(output.is_exit_code_line(ln) for ln in lines)),
        "test_run": float(
            bool(main and main.program in _TEST_PROGRAMS or (main and main.family in _TEST_FAMILIES))
        ),
        "interpreter": float(bool(main and main.program in commands.INTERPRETERS)),
        "distinct_errors": min(len(ep.errors), 5) / 5,
        # the run that showed it fixed runs another check than the one that failed (it matched on one part
        # of a compound line: `go test ./...; echo ok` for `go vet ./...`)
        "fix_run_other_check": float(
            bool(main and passed_main and main.family != passed_main.family and ep.command_change is not None)
        ),
        "fix_only_tests": float(bool(ep.changes) and all(edits.TEST_FILE.search(c.path) for c in ep.changes)),
        # nothing in the error says what failed (`FAIL`, `Exit code 1`, a lone bracket)
        "error_short": float(max((len(ln.strip()) for ln in (errs or lines)), default=0) < 16),
        # the command was called wrongly (a usage message, an unknown option or target, no such command)
        "error_usage": float(any(_USAGE.search(ln) for ln in (errs or lines)[:40])),
        # the shell itself refused the command line (`(eval):1: no matches found`, `zsh:6: parse error`,
        # `bash: line 1: x: command not found`): a lesson about the shell, whatever the project
        "error_shell": float(shell_error(errs or lines)),
        "edits": min(sum(c.edits for c in ep.changes), 10) / 10,
        # the failing tool is neither the shell nor a path tool (an MCP tool, a Skill): a later success of
        # that tool is most often the same call with other arguments
        "other_tool": float(ep.failed.tool not in PATH_TOOLS and ep.failed.tool != "Bash"),
        # the share of words the failing and the passing command have in common: a rerun of the check after
        # a fix keeps them all; a command that only shares one segment of a compound line keeps few
        "command_overlap": commands.overlap(_check_words(ep.failed.command), _check_words(ep.passed.command)),
        # the same error failed again and again before the fix (trial and error rather than one lesson)
        "failures_repeated": (min(ep.failures, 5) - 1) / 4,
        # the error said what to run (`--break-system-packages`, `Would reformat: a.py` -> `ruff format a.py`)
        "command_hinted": hinted(last, ep.failed.command.text, ep.passed.command.text),
        # the failing call was an experiment or a survey: its own headings between parts, a restore, an output
        # that ends on a passing run (`cues.experiment`)
        "error_experiment": float(
            cues.experiment(ep.failed.command.text, [ln for ln in lines if output.fold(ln) not in background])
        ),
        # the output names no cause the store could key it on (no exception, no tool's error line: its key
        # would be its first lines, `TEST OK    WIP g1`, `=== RUN TestSyntax`), though the run model read a
        # failure in it (`learnings.signatures.names_a_cause`)
        "error_no_cause": float(
            not signatures.names_a_cause(
                "\n".join(ln for ln in last.splitlines() if output.fold(ln) not in background)
            )
        ),
    }


def _check_words(command: commands.Command) -> list[str]:
    """The words of what a command runs, without its output plumbing (`2>&1 | tail -n 20`, which a rerun of
    the check adds or drops as it likes) and without its leading `cd` (the folder is a feature of its own)."""
    return [w for c in command.checks for w in c.key.split()] or command.text.split()


_HINT_WORD = re.compile(r"[\w][\w./:=@+-]{2,}")


def hinted(error: str, failed: str, passed: str) -> float:
    """The share of the words the passing command has and the failing one had not that the error's output
    names (0 when it has no new word): the error said how to call it."""
    new = set(_HINT_WORD.findall(passed)) - set(_HINT_WORD.findall(failed))
    if not new:
        return 0.0
    said = error[-6000:].lower()
    return sum(w.lower() in said for w in new) / len(new)


_TEST_PROGRAMS = frozenset({"pytest", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest"})
_TEST_FAMILIES = frozenset({"npm test", "yarn test", "pnpm test", "go test", "cargo test", "make test",
                            "python runtests.py", "python tests/runtests.py", "bun test", "mvn test",
                            "gradle test", "dotnet test", "rake test", "bundle exec"})  # fmt: skip


_USAGE = re.compile(
    r"(?i)^\s*usage:|\bunknown (?:option|command|flag|subcommand|argument|target)|\bno rule to make target"
    r"|\binvalid (?:value|option|choice|argument)|\bunrecognized (?:option|argument|command)"
    r"|\bcommand not found\b|\bno such (?:option|command|subcommand)|\bnot recognized as\b|\bdid you mean\b"
    r"|\bunexpected argument\b|\bis not a \w{1,12} command\b"
)
# the shell's own message: zsh's `(eval):1:` / `(eval):cd:1:` / `zsh:4:`, bash's `bash: line 1:` (or by its
# path, `/usr/bin/bash: line 1:`; the Bash tool's `/bin/bash: eval: line 37:`), dash's `sh: 1:`
_SHELL_ERROR = re.compile(
    r"^\s{0,4}(?:\(eval\)|(?:/usr)?(?:/bin/)?(?:ba|z|da)?sh)(?:: ?[a-z]{1,12})?:(?: line)? ?\d{1,6}:"
)


def shell_error(lines: list[str]) -> bool:
    """Did the shell itself report the error (quoting, globbing, syntax, a missing command), not a program it
    ran?"""
    return any(_SHELL_ERROR.match(ln) for ln in lines[:40])


_FRAME = re.compile(r'File "([^"\n]{1,300})", line \d+|(?<![\w./-])([\w./-]{1,300}\.[A-Za-z]{1,5}):\d+')


def _deepest_file(text: str) -> str | None:
    """The file of the last frame or `path:line` an error names (where it failed), by name."""
    found = None
    for m in _FRAME.finditer(text[-6000:]):
        found = (m.group(1) or m.group(2)).rsplit("/", 1)[-1]
    return found


def _same_file(target: str, created: set[str]) -> bool:
    name = target.rsplit("/", 1)[-1]
    return any(c.rsplit("/", 1)[-1] == name for c in created)
