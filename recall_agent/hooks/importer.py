"""Sessions a user already has, turned into learnings by the rules the capture hooks apply live.

Each transcript stream (a session, a subagent) is replayed into a hooks session record (`recall_agent.session`
schema) through the hooks' own steps: `events.from_payload` builds the tool event from the same fields the
hook JSON carries, failures are recorded with `state.add_error` (redacted, file tools' usage errors and
interruptions left out), successful runs resolve them with `state.add_success`, edits made while an error
is open are `state.add_file`. Where the Stop hook would fire (a new user prompt, the end of the file),
`capture.capture_resolved` turns the resolved errors into learnings: the same grouping, files, ticket from
the session's branch (`gitBranch`, as it was then), task type, and the agent's first words after the
resolving call as the resolution. No `git diff` fallback: today's working tree says nothing about an old
session.

Merging: a learning whose session and error fingerprint are already in the store (captured by the hooks,
or imported before) is skipped; otherwise `store.add` merges it with an identical one (same repo, same
resolution, a shared signature). Importing twice adds nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recall_agent import session
from recall_agent.config import learnings_db
from recall_agent.hooks import capture, events, state
from recall_agent.hooks.transcripts import Prompt, Result, Said, SessionFiles, Step, Transcript
from recall_agent.learnings.records import resolution_key, signature_rows
from recall_agent.redact import redact

_TICK = 1e-6  # keeps replayed events in file order when timestamps are equal or missing
# learnings sharing a fingerprint looked at to tell "already known" (the store merges the rest anyway)
KNOWN_LIMIT = 200
WRITE_BATCH = 200


@dataclass
class _Stream:
    """One replayed stream: the hooks' session record plus what Stop would read from the transcript."""

    record: dict[str, Any]
    clock: float = 0.0
    waiting: list[str] = field(default_factory=list)  # resolving calls whose explanation comes next
    collecting: str | None = None  # message id of the explanation being read (a reply spans lines)
    explained: list[str] = field(default_factory=list)
    explanations: dict[str, str] = field(default_factory=dict)
    last_text: str | None = None


@dataclass
class SessionResult:
    path: Path
    session_id: str
    learnings: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    resolved: int = 0
    bad_lines: int = 0
    failed: str | None = None  # why the file could not be read


@dataclass
class _Replay:
    transcript: Transcript
    session_id: str
    streams: dict[str, _Stream] = field(default_factory=dict)
    learnings: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    resolved: int = 0

    def stream(self, name: str) -> _Stream:
        if name not in self.streams:
            self.streams[name] = _Stream(session.new_state(self.session_id, self.transcript.stats.cwd))
        return self.streams[name]

    def step(self, step: Step) -> None:
        if isinstance(step, Result):
            self.result(step)
        elif isinstance(step, Said):
            self.said(step)
        elif isinstance(step, Prompt):
            self.capture(self.stream(step.stream))  # the turn ended here: Stop would have captured
        # a Call needs nothing: its result carries it

    def result(self, res: Result) -> None:
        call = res.call
        st = self.stream(call.stream)
        st.clock = res.ts if res.ts is not None and res.ts > st.clock else st.clock + _TICK
        payload: dict[str, Any] = {"tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id}
        if res.is_error:
            payload |= {"error": res.text, "is_interrupt": res.interrupted}
            ev = events.from_payload(payload, "PostToolUseFailure")
        else:
            if not state.has_open_error(st.record):
                return  # the hooks' PostToolUse records nothing while no error is open
            payload["tool_response"] = res.response or {}
            ev = events.from_payload(payload, "PostToolUse")
        if ev is None:
            return
        if ev.failed:
            if events.learns_from_failure(ev) and ev.error_text:
                state.add_error(st.record, ev, redact(ev.error_text), now=st.clock)
                self.errors += 1
            return
        if ev.tool in events.FILE_TOOLS:
            if ev.file_path:
                state.add_file(st.record, ev.file_path, res.cwd or st.record.get("cwd"), now=st.clock)
        elif ev.tool == "Bash" and ev.command:
            resolved = state.add_success(st.record, ev, now=st.clock)
            if resolved:
                self.resolved += len(resolved)
                st.waiting.append(call.id)

    def said(self, said: Said) -> None:
        st = self.stream(said.stream)
        st.last_text = said.text
        if st.waiting:
            for tid in st.waiting:
                st.explanations[tid] = said.text
            st.explained, st.waiting, st.collecting = st.waiting, [], said.message_id
        elif said.message_id and said.message_id == st.collecting:
            for tid in st.explained:  # the same reply, continued on the next line
                st.explanations[tid] += "\n" + said.text

    def capture(self, st: _Stream) -> None:
        record = st.record
        root = record.get("repo_root") or record.get("cwd")
        learnings = capture.capture_resolved(
            record,
            session_id=self.session_id,
            root=root,
            branch=self.transcript.stats.branch,
            explain=lambda tid: st.explanations.get(tid or "") or st.last_text,
            use_git=False,
        )
        when = _iso(st.clock)
        for learning in learnings:
            if when:
                learning["created_at"] = when
            self.learnings.append(learning)
        session.trim(record)
        st.waiting, st.collecting, st.explained, st.last_text = [], None, [], None

    def finish(self) -> None:
        for st in self.streams.values():
            self.capture(st)


def _iso(ts: float) -> str | None:
    """A replay clock value as ISO time, when it is a real timestamp (not just ticks from zero)."""
    if ts < 1e9:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat()


def read_session(files: SessionFiles) -> SessionResult:
    """Replay a session and its subagents. Never raises: an unreadable file is reported in `failed`."""
    result = SessionResult(files.main, files.main.stem)
    for path in files.paths():
        transcript = Transcript(path)
        replay = _Replay(transcript, "")
        try:
            for step in transcript.steps():
                if not replay.session_id:
                    replay.session_id = transcript.stats.session_id or files.main.stem
                replay.step(step)
            replay.session_id = replay.session_id or transcript.stats.session_id or files.main.stem
            replay.finish()
        except Exception as exc:  # unreadable, or content nothing here expected: skip the file, go on
            result.failed = f"{path}: {type(exc).__name__}: {exc}"
            continue
        if path == files.main:
            result.session_id = replay.session_id
        result.learnings.extend(replay.learnings)
        result.errors += replay.errors
        result.resolved += replay.resolved
        result.bad_lines += transcript.stats.bad_lines
    return result


# below this much transcript, worker processes cost more to start than they save
PARALLEL_MIN_BYTES = 64 * 1024 * 1024
WORKERS_ENV = "RECALL_IMPORT_WORKERS"


def workers_for(sessions: list[SessionFiles]) -> int:
    """Processes to read with: `RECALL_IMPORT_WORKERS` when set, else one per core (at most 4) for
    imports of at least PARALLEL_MIN_BYTES, one for smaller ones."""
    try:
        return max(1, min(16, int(os.environ[WORKERS_ENV])))
    except (KeyError, ValueError):
        pass
    if sum(s.size() for s in sessions) < PARALLEL_MIN_BYTES:
        return 1
    return min(4, os.cpu_count() or 1)


def read_sessions(sessions: list[SessionFiles], workers: int = 1) -> Iterator[SessionResult]:
    """`read_session` for each, in order; with several workers, in that many processes (reading is
    CPU-bound; storing stays in the caller's process). A worker that dies leaves the rest to this one."""
    done = 0
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        try:
            with ProcessPoolExecutor(workers) as pool:
                for result in pool.map(read_session, sessions, chunksize=2):
                    done += 1
                    yield result
        except (BrokenProcessPool, OSError):
            pass
    for files in sessions[done:]:
        yield read_session(files)


# ---------------------------------------------------------------------- storing


@dataclass
class StoreCounts:
    new: int = 0
    merged: int = 0  # folded into an identical learning already stored
    known: int = 0  # this session's error was already in the store (the hooks, an earlier import)


@dataclass(frozen=True)
class _Facts:
    """What decides whether a learning adds anything to one already stored."""

    repo: str
    session_id: str | None
    key: str
    fps: frozenset[str]
    files: frozenset[str]

    @classmethod
    def of(
        cls, repo: str, session_id: str | None, summary: str, signatures: list[str], files: list[str]
    ) -> _Facts:
        fps = frozenset(row.fingerprint for row in signature_rows(signatures))
        return cls(repo, session_id, resolution_key(summary), fps, frozenset(files))

    def covers(self, new: _Facts) -> bool:
        if self.repo != new.repo or not (self.fps & new.fps):
            return False
        if self.session_id and self.session_id == new.session_id:
            return True
        return self.key == new.key and new.fps <= self.fps and new.files <= self.files


class Sink:
    """Where imported learnings go: the local store (checked for what it already holds), or the team
    server when `RECALL_SERVER_URL` is set, as the hooks do."""

    def __init__(self) -> None:
        from recall_agent.learnings.store import open_store

        self.server = os.environ.get("RECALL_SERVER_URL")
        self.store = open_store()
        self.counts = StoreCounts()
        self.pending: list[Any] = []  # validated learnings written together (one transaction, one fsync)
        self.pending_facts: list[_Facts] = []

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.store.close()

    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending, self.pending_facts = self.pending, [], []
        for _id, merged in self.store.add_many(batch):
            if merged:
                self.counts.merged += 1
            else:
                self.counts.new += 1

    def known(self, learning: dict[str, Any]) -> bool:
        """Already stored (or about to be, in this run): this session's error (the hooks or an earlier
        import stored it), or a learning that a merge would leave unchanged (same repo and resolution,
        holding these signatures and files)."""
        want = _Facts.of(
            learning["repo"],
            learning["session_id"],
            learning["resolution_summary"],
            learning["error_signatures"],
            learning["file_paths_touched"],
        )
        if any(have.covers(want) for have in self.pending_facts):
            return True
        for cand in self.store.candidates_by_fingerprint(sorted(want.fps), limit=KNOWN_LIMIT):
            have = cand.learning
            facts = _Facts(
                have.repo,
                have.session_id,
                resolution_key(have.resolution_summary),
                frozenset(row.fingerprint for row in cand.signatures),
                frozenset(have.file_paths_touched),
            )
            if facts.covers(want):
                return True
        return False

    def add(self, learnings: list[dict[str, Any]]) -> None:
        from recall_agent.models import Learning

        fresh = []
        for item in learnings:
            if self.known(item):
                self.counts.known += 1
            else:
                fresh.append(item)
        if not fresh:
            return
        if self.server:
            self.counts.new += capture.store(fresh)
            return
        for item in fresh:
            self.pending.append(Learning.model_validate(item))
            self.pending_facts.append(
                _Facts.of(
                    item["repo"],
                    item["session_id"],
                    item["resolution_summary"],
                    item["error_signatures"],
                    item["file_paths_touched"],
                )
            )
        if len(self.pending) >= WRITE_BATCH:
            self.flush()


# a name ending in Error is tried once per run of letters (the lookbehind): linear on long words
_ERROR_LINE = re.compile(
    r"(?<![A-Za-z])[A-Za-z]+(?:Error|Exception)\b|\berror(?:\[\w+\])?:|^FAIL|panic:|fatal:"
)
_ERRORISH = re.compile(r"(?i)error|exception|fail|fatal|denied|not found|cannot|unable|panic")


def learning_line(learning: dict[str, Any], width: int = 100) -> str:
    """One entry of `--dry-run`: repo, the error's telling line, the resolution."""
    lines = [" ".join(ln.split()) for ln in str(learning["error_signatures"][-1]).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not capture.EXIT_CODE_LINE.fullmatch(ln)] or lines
    telling = [ln for ln in lines if _ERROR_LINE.search(ln)] or [ln for ln in lines if _ERRORISH.search(ln)]
    error = (telling or lines or [""])[-1]
    summary = " ".join(str(learning["resolution_summary"]).split())
    return f"- [{learning['repo']}] {error[:width]}\n    -> {summary[: width * 2]}"


ProgressFn = Callable[[SessionResult], None]


class Ledger:
    """Transcript files already imported, unchanged since (size and mtime), into this store: a re-run
    skips them without reading, and a learning removed with `recall forget` is not brought back.
    `$RECALL_HOME/imported.json`; tied to the store file (a new store starts a new ledger)."""

    NAME = "imported.json"

    def __init__(self, home: Path) -> None:
        self.path = home / self.NAME
        self.store_id = self._store_id(home)
        self.files: dict[str, list[int]] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if (
            isinstance(data, dict)
            and data.get("store") == self.store_id
            and isinstance(data.get("files"), dict)
        ):
            self.files = data["files"]

    @staticmethod
    def _store_id(home: Path) -> str | None:
        try:
            st = learnings_db(home).stat()
        except OSError:
            return None
        return f"{st.st_dev}:{st.st_ino}"

    @staticmethod
    def _mark(path: Path) -> list[int] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return [st.st_size, st.st_mtime_ns]

    def unchanged(self, files: SessionFiles) -> bool:
        return self.store_id is not None and all(
            self.files.get(str(p)) == self._mark(p) for p in files.paths()
        )

    def note(self, files: SessionFiles) -> None:
        for path in files.paths():
            mark = self._mark(path)
            if mark:
                self.files[str(path)] = mark

    def save(self, home: Path) -> None:
        """Write it (atomically); a home that cannot be written only costs the next run a full read."""
        import tempfile

        self.store_id = self._store_id(home)
        try:
            fd, tmp = tempfile.mkstemp(prefix=self.NAME + ".", suffix=".tmp", dir=home)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"store": self.store_id, "files": self.files}, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            return
