"""Sessions a user already has, turned into learnings by the capture engine the hooks run live.

Each transcript file (a session, each of its subagents) is read whole by `recall_agent.capture`: the same
engine the Stop hook runs on a live session's new lines, so the two cannot drift apart. The learning's
ticket comes from the session's branch as it was then (`gitBranch`), its time from the run that showed the
fix. The repository is the session folder's identity (`recall_agent.repo.identity`) when the folder still
exists; else a remote URL git printed in the transcript for a repository of that folder's name, else the
folder's name.

Merging: a learning whose session and error fingerprint are already in the store (captured by the hooks,
or imported before) is skipped; otherwise `store.add` merges it with an identical one (same repo, same
resolution, a shared signature). Importing twice adds nothing.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recall_agent import repo
from recall_agent.capture.sessions import SessionFiles
from recall_agent.config import learnings_db
from recall_agent.hooks import capture
from recall_agent.learnings.records import resolution_key, signature_rows

# learnings sharing a fingerprint looked at to tell "already known" (the store merges the rest anyway)
KNOWN_LIMIT = 200
WRITE_BATCH = 200


@dataclass
class SessionResult:
    path: Path
    session_id: str
    learnings: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    resolved: int = 0
    bad_lines: int = 0
    failed: str | None = None  # why the file could not be read
    agent: str = "claude-code"
    # a session whose folder is gone: its folder, the repository its learnings were read under, and the
    # identity its own transcript showed (if any); the command files it (`file_gone_folder`), in reading
    # order, so no reading process races another for the identity
    gone_folder: str | None = None
    read_as: str = ""
    shown_identity: str | None = None


def _stem(path: Path) -> str:
    return path.name.split(".", 1)[0]


def _context(
    session_id: str,
    cwd: str | None,
    branch: str | None,
    agent: str,
    transcript: Path | None = None,
    known: dict[str, str] | None = None,
) -> Any:
    """`known`: gone folders' identities remembered before the import began (`remembered_folders`); a
    session of one is not searched for its remote again."""
    from recall_agent.capture.learning import Context

    exists = _exists(cwd)
    root = repo.toplevel(Path(cwd)) if exists and cwd else None
    if exists and cwd:
        name = repo.identity(Path(cwd), root)
    elif cwd and known and cwd in known:
        name = known[cwd]
    else:  # what the transcript showed, or the folder's name; read_sessions files it (file_gone_folder)
        name = identity_in_text(cwd, transcript) or (repo.name(Path(cwd), None) if cwd else "unknown")
    return Context(
        session_id=session_id,
        root=str(root) if root else cwd,
        branch=branch,
        repo=name or "unknown",
        agent=agent,
    )


TEXT_SCAN_MAX = 8 * 1024 * 1024  # of a transcript read for a remote URL (its end: recent output)


def _exists(cwd: str | None) -> bool:
    return bool(cwd) and Path(str(cwd)).is_absolute() and Path(str(cwd)).is_dir()


def identity_in_text(cwd: str | None, transcript: Path | None) -> str | None:
    """A remote URL git printed in the transcript for a repository of the gone folder's name (its end:
    recent output), or None."""
    if not cwd or transcript is None:
        return None
    try:
        with transcript.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - TEXT_SCAN_MAX))
            text = fh.read(TEXT_SCAN_MAX).decode("utf-8", "replace")
    except OSError:
        return None
    return repo.identity_from_text(text, repo.name(Path(cwd), None)) or None


def file_gone_folder(result: SessionResult) -> None:
    """The repository of a session whose folder no longer exists, decided in the order sessions are read: the
    identity remembered for the folder (an earlier session, or an earlier import, showed it), else the one
    this transcript shows (remembered for the folder's later sessions), else the folder's name. The
    learnings, read with what the transcript alone showed, are filed under it. Sessions read before the
    identity showed are filed under the folder's name; `recall import-sessions` refiles them at its end
    (reidentify.py)."""
    cwd = result.gone_folder
    if not cwd:
        return
    folder = repo.name(Path(cwd), None)
    known = repo.remembered_folder(cwd)
    if not known and result.shown_identity:
        repo.remember_folder(cwd, result.shown_identity)
    ident = known or result.shown_identity or folder
    if ident != result.read_as:
        for learning in result.learnings:
            if learning.get("repo") == result.read_as:
                learning["repo"] = ident


def read_session(files: SessionFiles, known: dict[str, str] | None = None) -> SessionResult:
    """Read a session and its subagents. Never raises: an unreadable file is reported in `failed`. `known`:
    see `_context`."""
    from recall_agent.capture import learning
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.readers import open_reader

    result = SessionResult(files.main, _stem(files.main), agent=files.agent)
    for path in files.paths():
        transcript = open_reader(path, agent=files.agent)
        engine = Engine()
        try:
            engine.feed(transcript.steps())
            engine.end_turn()
            stats = transcript.stats
            sid = stats.session_id or _stem(files.main)
            ctx = _context(sid, stats.cwd, stats.branch, files.agent, files.main, known)
            learnings = []
            for episode in engine.episodes():
                built = learning.build(episode, ctx)
                if built:
                    if episode.passed.ts:
                        built["created_at"] = datetime.fromtimestamp(episode.passed.ts, UTC).isoformat()
                    learnings.append(built)
        except Exception as exc:  # unreadable, or content nothing here expected: skip the file, go on
            result.failed = f"{path}: {type(exc).__name__}: {exc}"
            continue
        if path == files.main:
            result.session_id = sid
            if stats.cwd and not _exists(stats.cwd):
                # what _context filed it under: the known identity, the one shown, or the folder's name
                shown = ctx.repo not in (repo.name(Path(stats.cwd), None), (known or {}).get(stats.cwd))
                result.gone_folder, result.read_as = stats.cwd, ctx.repo
                result.shown_identity = ctx.repo if shown else None
                known = {**(known or {}), stats.cwd: ctx.repo}  # its subagents: not searched again
        result.learnings.extend(learnings)
        result.errors += engine.failures
        result.resolved += engine.resolved
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
    read = functools.partial(read_session, known=repo.remembered_folders())  # as the import began
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        try:
            with ProcessPoolExecutor(workers) as pool:
                for result in pool.map(read, sessions, chunksize=2):
                    done += 1
                    file_gone_folder(result)
                    yield result
        except (BrokenProcessPool, OSError):
            pass
    for files in sessions[done:]:
        result = read(files)
        file_gone_folder(result)
        yield result


# ---------------------------------------------------------------------- storing


@dataclass
class StoreCounts:
    new: int = 0
    merged: int = 0  # folded into an identical learning already stored
    known: int = 0  # this session's error was already in the store (the hooks, an earlier import)


def _calls(fix: Any) -> frozenset[str]:
    """The tool calls a fix came from (models.FixEvidence.calls)."""
    calls = fix.get("calls") if isinstance(fix, dict) else None
    return frozenset(str(c) for c in calls) if isinstance(calls, list) else frozenset()


@dataclass(frozen=True)
class _Facts:
    """What decides whether a learning adds anything to one already stored."""

    repo: str
    session_id: str | None
    key: str
    fps: frozenset[str]
    files: frozenset[str]
    calls: frozenset[str] = frozenset()  # the tool calls the fix came from (a resumed session repeats them)

    @classmethod
    def of(
        cls,
        repo: str,
        session_id: str | None,
        summary: str,
        signatures: list[str],
        files: list[str],
        fix: dict[str, Any] | None = None,
    ) -> _Facts:
        fps = frozenset(row.fingerprint for row in signature_rows(signatures))
        return cls(repo, session_id, resolution_key(summary), fps, frozenset(files), _calls(fix))

    def covers(self, new: _Facts) -> bool:
        if self.repo != new.repo or not (self.fps & new.fps):
            return False
        if self.session_id and self.session_id == new.session_id:
            return True
        if new.calls and new.calls == self.calls:  # the same tool calls under another session id (resumed)
            return True
        # another session meeting the cause again is an occurrence to count (one learning per cause: the
        # store updates the row, and recognises an occurrence it has already counted)
        if new.session_id:
            return False
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
            learning.get("fix"),
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
                _calls(have.fix),
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
                    item.get("fix"),
                )
            )
        if len(self.pending) >= WRITE_BATCH:
            self.flush()


# a name ending in Error is tried once per run of letters (the lookbehind): linear on long words
_ERROR_LINE = re.compile(
    r"(?<![A-Za-z])[A-Za-z]+(?:Error|Exception)\b|\berror(?:\[\w+\])?:|^FAIL|panic:|fatal:"
)
_ERRORISH = re.compile(r"(?i)error|exception|fail|fatal|denied|not found|cannot|unable|panic")
_EXIT_CODE_LINE = re.compile(r"(?:Error: )?Exit code -?\d+")


def learning_line(learning: dict[str, Any], width: int = 100) -> str:
    """One entry of `--dry-run`: repo, the error's telling line, the resolution."""
    lines = [" ".join(ln.split()) for ln in str(learning["error_signatures"][-1]).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _EXIT_CODE_LINE.fullmatch(ln)] or lines
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
