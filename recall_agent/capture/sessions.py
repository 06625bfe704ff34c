"""Where agents keep session transcripts, and which files make up one session.

Claude Code: a session is its transcript (`~/.claude/projects/<folder>/<session>.jsonl`) plus its
subagents' files (`agent-*.jsonl` beside it in older versions, `<session>/subagents/*.jsonl` in newer
ones). Codex CLI: a session is one rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, or
`.jsonl.zst`); which project it belongs to is the `cwd` of its first line (`session_meta`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from recall_agent.config import claude_project_dir_names, claude_projects_dir


@dataclass
class SessionFiles:
    """One session's transcript and its subagents' transcripts."""

    main: Path
    subagents: list[Path] = field(default_factory=list)
    agent: str = "claude-code"  # readers.CLAUDE or readers.CODEX

    def paths(self) -> list[Path]:
        return [self.main, *self.subagents]

    def _stats(self) -> list[os.stat_result]:
        found = []
        for path in self.paths():
            try:
                found.append(path.stat())
            except OSError:
                continue
        return found

    def size(self) -> int:
        return sum(st.st_size for st in self._stats())

    def mtime(self) -> float:
        return max((st.st_mtime for st in self._stats()), default=0.0)


def project_folders(cwd: Path, projects: Path | None = None) -> list[Path]:
    """Transcript folders of the project at `cwd`: its own folder and, inside git, the top-level's."""
    from recall_agent import repo

    projects = projects or claude_projects_dir()
    places = [cwd]
    root = repo.toplevel(cwd)
    if root and root != cwd:
        places.append(root)
    folders = [projects / name for place in places for name in claude_project_dir_names(place)]
    return [f for f in dict.fromkeys(folders) if f.is_dir()]


def all_project_folders(projects: Path | None = None) -> list[Path]:
    projects = projects or claude_projects_dir()
    try:
        return sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        return []


def sessions_in(paths: list[Path]) -> list[SessionFiles]:
    """Sessions under `paths` (transcript files or folders); subagent files join their session."""
    found: list[Path] = []
    for path in paths:
        found.extend([path] if path.is_file() else sorted(_walk(path)))
    sessions: dict[Path, SessionFiles] = {}
    loose: list[Path] = []
    for path in sorted(found, key=_is_subagent):  # sessions first, so their subagents find them
        _add(sessions, loose, path)
    for path in loose:  # a subagent file whose session is not among the paths: a session of its own
        sessions.setdefault(path, SessionFiles(path))
    return list(sessions.values())


def _walk(folder: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".jsonl") or (name.startswith("rollout-") and name.endswith(".jsonl.zst")):
                yield Path(dirpath) / name


def codex_sessions(cwd: Path | None, sessions: Path | None = None) -> list[SessionFiles]:
    """Codex rollouts under `sessions` (default `$CODEX_HOME/sessions`): all of them (`cwd` None), or those
    of the project at `cwd` (their `cwd` is that folder, its git top level, or inside it)."""
    from recall_agent.capture.codex_transcript import is_rollout
    from recall_agent.config import codex_sessions_dir

    folder = sessions or codex_sessions_dir()
    found = sorted(p for p in _walk(folder) if is_rollout(p)) if folder.is_dir() else []
    if cwd is not None:
        from recall_agent import repo

        root = repo.toplevel(cwd) or cwd
        places = {str(cwd), str(root)}
        found = [p for p in found if _inside(rollout_cwd(p), places)]
    return [SessionFiles(p, agent="codex") for p in found]


def _inside(folder: str | None, places: set[str]) -> bool:
    return bool(folder) and any(folder == p or folder.startswith(p.rstrip("/") + "/") for p in places)


def rollout_cwd(path: Path) -> str | None:
    """The `cwd` of a rollout's `session_meta` (its first line), read without the rest of the file."""
    import json

    from recall_agent.capture.codex_transcript import _open

    try:
        with _open(path) as fh:
            first = fh.readline(4 * 1024 * 1024)
        meta = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    except Exception:  # a corrupt .zst frame (zstandard.ZstdError)
        return None
    payload = meta.get("payload") if isinstance(meta, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None


def _is_subagent(path: Path) -> bool:
    return path.parent.name == "subagents" or path.name.startswith("agent-")


def _add(sessions: dict[Path, SessionFiles], loose: list[Path], path: Path) -> None:
    from recall_agent.capture.codex_transcript import is_rollout

    if is_rollout(path):
        sessions.setdefault(path, SessionFiles(path, agent="codex"))
    elif path.parent.name == "subagents":
        owner = path.parent.parent.with_suffix(".jsonl")
        if owner in sessions:
            sessions[owner].subagents.append(path)
        else:
            loose.append(path)
    elif path.name.startswith("agent-"):
        loose.append(path)
    else:
        sessions.setdefault(path, SessionFiles(path))
