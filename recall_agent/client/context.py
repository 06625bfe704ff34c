"""What /recall knows without being told: the current repo and the session's last error.

Repo: the working directory's repository identity (`recall_agent.repo.identity`: the normalized origin URL,
else the root commit, else the folder's name), read from the `.git` files (no `git` process on the usual
path).

Last error, first hit wins:
1. `recall_agent.session.last_recorded_error(session_id, cwd)` — what the hooks recorded (hooks owner).
2. The Claude Code transcript: `--session`, else `CLAUDE_SESSION_ID`, else the newest transcript of this
   working directory under `~/.claude/projects/<cwd with / replaced by ->/`; the newest tool result with
   `is_error: true`. Big transcripts are read from the end, at most `TRANSCRIPT_TAIL_BYTES`.
3. None: the seed's auto mode.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from recall_agent import repo
from recall_agent.config import claude_project_dir_names, claude_projects_dir

TRANSCRIPT_TAIL_BYTES = 8 * 1024 * 1024
_CHUNK = 256 * 1024
# tool results flagged as errors that are not errors of the code (the user declined, or interrupted)
_NOT_ERRORS = ("The user doesn't want to", "[Request interrupted by user")
_TOOL_ERROR_TAG = re.compile(r"</?tool_use_error>")


@dataclass(frozen=True)
class Context:
    cwd: Path
    repo: str  # the repository identity sent in the learnings payload
    repo_root: Path | None  # git top-level, None outside git
    last_error: str | None
    error_source: str | None  # "session-state" | "transcript" | None


def find_transcript(cwd: Path, session_id: str | None, projects: Path | None = None) -> Path | None:
    projects = projects or claude_projects_dir()
    if not projects.is_dir():
        return None
    folders = [projects / name for f in (cwd, *cwd.parents) for name in claude_project_dir_names(f)]
    if session_id:
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,128}", session_id):
            return None
        for folder in folders:
            if (folder / f"{session_id}.jsonl").is_file():
                return folder / f"{session_id}.jsonl"
        return next(iter(projects.glob(f"*/{session_id}.jsonl")), None)
    for folder in folders:  # the session started in this folder or the nearest parent that has one
        if folder.is_dir():
            transcripts = [p for p in folder.glob("*.jsonl") if p.is_file()]
            if transcripts:
                return max(transcripts, key=lambda p: p.stat().st_mtime)
    return None


def _lines_from_end(path: Path, budget: int = TRANSCRIPT_TAIL_BYTES):
    """Yield complete lines of `path`, last first, reading at most `budget` bytes from the end."""
    with path.open("rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        start_limit = max(0, end - budget)
        pos, tail = end, b""
        while pos > start_limit:
            step = min(_CHUNK, pos - start_limit)
            pos -= step
            fh.seek(pos)
            block = fh.read(step) + tail
            lines = block.split(b"\n")
            tail = lines[0]  # may be cut at its start: keep for the next round
            for line in reversed(lines[1:]):
                if line.strip():
                    yield line
        if pos == 0 and tail.strip():
            yield tail


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def error_from_entry(entry: object) -> str | None:
    """The error text of a transcript entry holding a failed tool result, else None."""
    if not isinstance(entry, dict):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return None
    for block in reversed(content):
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is True:
            text = _TOOL_ERROR_TAG.sub("", _result_text(block.get("content"))).strip()
            if text and not text.startswith(_NOT_ERRORS):
                return text
    return None


def last_transcript_error(path: Path) -> str | None:
    try:
        for line in _lines_from_end(path):
            if b'"is_error"' not in line:  # cheap skip: most lines are chatter, not failed tool results
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            text = error_from_entry(entry)
            if text:
                return text
    except OSError:
        return None
    return None


def _recorded_error(session_id: str | None, cwd: Path) -> str | None:
    try:
        from recall_agent.session import last_recorded_error
    except ImportError:
        return None  # the hooks part is not installed/landed yet
    try:
        return last_recorded_error(session_id, cwd)
    except Exception:  # advisory only: a broken session store must not break /recall
        return None


def detect(cwd: Path | None = None, session_id: str | None = None, want_error: bool = True) -> Context:
    cwd = cwd.resolve() if cwd else repo.current_dir()
    root = repo.toplevel(cwd)
    session_id = session_id or os.environ.get("CLAUDE_SESSION_ID") or None
    error, source = None, None
    if want_error:
        error = _recorded_error(session_id, cwd)
        source = "session-state" if error else None
        if not error:
            transcript = find_transcript(cwd, session_id)
            error = last_transcript_error(transcript) if transcript else None
            source = "transcript" if error else None
    return Context(cwd, repo.identity(cwd, root), root, error, source)
