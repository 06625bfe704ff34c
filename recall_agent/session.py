"""Per-session state the Claude Code hooks keep under `$RECALL_HOME/sessions/` (stdlib only: cheap import).

One JSON file per Claude Code session, `<session>.json`, written atomically (temp file + `os.replace`) under
an exclusive `flock` on `<session>.lock`, because Claude Code runs hooks for parallel tool calls at the same
time. Readers never lock: `os.replace` means they see either the old or the new file, never half of one.

The state (plain JSON, schema version 1):

    session_id, cwd, repo_root, created_at, updated_at   (timestamps: float seconds since the epoch)
    errors:    [{key, tool, command, text, ident, ts, tool_use_id, resolved_ts,
                 injected: [learning ids], feedback}]   failures the on-error hook saw
    injected:  {error ident: [learning ids]} what was already shown for which error

`key` identifies the failing check (hooks/events.py). The capture engine's own state (where it stopped
reading the transcript, the open errors) is `<session>.capture.json` (hooks/capture.py), and
`<session>.offset` the main transcript's offset that the hook entry script compares with its size.
The client reads `last_recorded_error()` to fill `/recall` with no arguments.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from recall_agent import repo

SCHEMA_VERSION = 1
MAX_ERRORS = 100
MAX_ERROR_TEXT = 4000
# how many session files the repo-wide lookup (no session id) reads before giving up
MAX_SCAN = 50
# session files untouched for this long are deleted by prune()
STALE_AFTER_S = 14 * 24 * 3600

_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def sessions_dir(home: Path | None = None) -> Path:
    if home is None:
        from recall_agent.config import recall_home  # stdlib-only module

        home = recall_home()
    return home / "sessions"


def _file_stem(session_id: str) -> str:
    """A filename-safe stem; ids that needed escaping get a hash suffix so two ids never share a file."""
    safe = _SAFE_ID.sub("_", session_id)[:100] or "_"
    if safe != session_id:
        safe += "-" + hashlib.sha1(session_id.encode("utf-8", "replace")).hexdigest()[:10]
    return safe


def session_path(session_id: str, home: Path | None = None) -> Path:
    return sessions_dir(home) / f"{_file_stem(session_id)}.json"


def new_state(session_id: str, cwd: str | None) -> dict[str, Any]:
    now = time.time()
    root = repo.toplevel(Path(cwd)) if cwd else None
    return {
        "version": SCHEMA_VERSION,
        "session_id": session_id,
        "cwd": cwd,
        "repo_root": str(root) if root else None,
        "created_at": now,
        "updated_at": now,
        "errors": [],
        "injected": {},
    }


def _normalise(state: dict[str, Any], session_id: str, cwd: str | None) -> dict[str, Any]:
    """Fill keys a damaged or older file lacks, so callers can index without checks."""
    fresh = new_state(session_id, cwd)
    for key, default in fresh.items():
        if not isinstance(state.get(key), type(default)) and default is not None:
            state[key] = default
        state.setdefault(key, default)
    if not state.get("cwd") and cwd:
        state["cwd"] = cwd
        state["repo_root"] = fresh["repo_root"]
    return state


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("r", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load(session_id: str, home: Path | None = None) -> dict[str, Any] | None:
    """The session's state, or None when there is none (or it is unreadable). Never raises."""
    return _read_json(session_path(session_id, home))


def _atomic_write(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, separators=(",", ":"))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _flock(lock_path: Path, timeout_s: float) -> Iterator[None]:
    """Exclusive advisory lock, polled so a stuck peer cannot hold a hook past its deadline."""
    import fcntl

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    raise TimeoutError(f"session lock busy: {lock_path}") from exc
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def update(
    session_id: str, cwd: str | None = None, home: Path | None = None, lock_timeout_s: float = 0.5
) -> Iterator[dict[str, Any]]:
    """Lock the session, yield its state (created when missing) for in-place edits, write it back.

    Raises OSError when `$RECALL_HOME` is not writable and TimeoutError when the lock stays busy;
    hooks catch both and fail open. Nothing is written when the body raises.
    """
    path = session_path(session_id, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _flock(path.with_suffix(".lock"), lock_timeout_s):
        state = _read_json(path) or new_state(session_id, cwd)
        state = _normalise(state, session_id, cwd)
        yield state
        state["updated_at"] = time.time()
        trim(state)
        _atomic_write(path, state)


def trim(state: dict[str, Any]) -> None:
    """Keep the newest errors (bounded state for long sessions)."""
    state["errors"] = state["errors"][-MAX_ERRORS:]


def _latest_error_text(state: dict[str, Any]) -> str | None:
    errors = state.get("errors")
    if not isinstance(errors, list):
        return None
    for entry in reversed(errors):
        if isinstance(entry, dict) and isinstance(entry.get("text"), str) and entry["text"].strip():
            return entry["text"][:MAX_ERROR_TEXT]
    return None


def _inside(child: str | None, parent: Path) -> bool:
    if not child:
        return False
    try:
        return Path(child).resolve().is_relative_to(parent)
    except (OSError, ValueError):
        return False


def last_recorded_error(session_id: str | None, cwd: Path) -> str | None:
    """The most recent failed-tool error text the hooks recorded.

    With a session id: that session's. Without: the newest session (by last update) whose cwd lies inside
    the same git repository as `cwd` (or inside `cwd` itself when it is not in a repository) and that
    recorded an error. Never raises; None when nothing was recorded.
    """
    try:
        if session_id:
            state = load(session_id)
            return _latest_error_text(state) if state else None
        return _latest_error_for_repo(Path(cwd))
    except Exception:  # a reader of best-effort state must never break the client
        return None


def _latest_error_for_repo(cwd: Path) -> str | None:
    scope = repo.toplevel(cwd) or cwd.resolve()
    folder = sessions_dir()
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
    except OSError:
        return None
    entries.sort(key=lambda e: _mtime(e), reverse=True)
    for entry in entries[:MAX_SCAN]:
        state = _read_json(Path(entry.path))
        if not state or not _inside(state.get("cwd"), scope):
            continue
        text = _latest_error_text(state)
        if text:
            return text
    return None


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


def prune(home: Path | None = None, older_than_s: float = STALE_AFTER_S) -> int:
    """Delete session files (and their locks) untouched for `older_than_s`; returns how many. Never raises."""
    cutoff = time.time() - older_than_s
    removed = 0
    try:
        entries = list(os.scandir(sessions_dir(home)))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.endswith((".json", ".lock", ".offset")) and _mtime(entry) < cutoff:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed += entry.name.endswith(".json") and not entry.name.endswith(".capture.json")
    return removed
