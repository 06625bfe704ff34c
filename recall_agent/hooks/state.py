"""Edits to the session record (`recall_agent.session`) for tool events; all run inside `session.update()`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from recall_agent.hooks.events import ToolEvent, error_ident, resolves


def add_error(
    state: dict[str, Any], ev: ToolEvent, text: str, now: float | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Append a failure (at `now`, default the current time: a replayed transcript passes its own clock);
    returns (the new entry, earlier unresolved entries of the same error)."""
    ident = error_ident(ev.key or ev.tool, text)
    earlier = [
        e
        for e in state["errors"]
        if isinstance(e, dict) and e.get("ident") == ident and not e.get("resolved_ts")
    ]
    entry = {
        "key": ev.key or ev.tool,
        "family": ev.family or ev.tool,
        "targets": ev.targets,
        "tool": ev.tool,
        "command": ev.command,
        "text": text,
        "ident": ident,
        "ts": time.time() if now is None else now,
        "tool_use_id": ev.tool_use_id,
        "resolved_ts": None,
        "resolved_by": None,
        "injected": [],
        "feedback": [],
    }
    state["errors"].append(entry)
    return entry, earlier


def add_success(state: dict[str, Any], ev: ToolEvent, now: float | None = None) -> list[dict[str, Any]]:
    """Append a successful command; mark and return the unresolved failures it resolves."""
    now = time.time() if now is None else now
    success = {
        "key": ev.key,
        "family": ev.family,
        "targets": ev.targets,
        "tool": ev.tool,
        "command": ev.command,
        "ts": now,
        "tool_use_id": ev.tool_use_id,
    }
    state["successes"].append(success)
    resolved = []
    for entry in state["errors"]:
        if isinstance(entry, dict) and not entry.get("resolved_ts") and resolves(entry, success):
            entry["resolved_ts"] = now
            entry["resolved_by"] = {"command": ev.command, "tool_use_id": ev.tool_use_id}
            resolved.append(entry)
    return resolved


def add_file(state: dict[str, Any], path: str, cwd: str | None, now: float | None = None) -> None:
    rel = relative_path(path, state.get("repo_root") or cwd)
    if not any(isinstance(f, dict) and f.get("path") == rel for f in state["files"]):
        state["files"].append({"path": rel, "ts": time.time() if now is None else now})


def has_open_error(state: dict[str, Any]) -> bool:
    """Is any recorded error still unresolved? (Successes and edits are recorded only then.)"""
    return any(isinstance(e, dict) and not e.get("resolved_ts") for e in state["errors"])


def relative_path(path: str, root: str | None) -> str:
    """Repo-relative when the file is inside the repo, as given otherwise."""
    if root:
        try:
            return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
        except (ValueError, OSError):
            pass
    return path


def already_injected(state: dict[str, Any], ident: str) -> set[str]:
    injected = state.get("injected")
    return set(injected.get(ident, [])) if isinstance(injected, dict) else set()


def mark_injected(state: dict[str, Any], ident: str, learning_ids: list[str]) -> None:
    """Record what was shown for this error, on the session and on the newest entry of that error."""
    if not isinstance(state.get("injected"), dict):
        state["injected"] = {}
    shown = state["injected"].setdefault(ident, [])
    shown.extend(i for i in learning_ids if i not in shown)
    for entry in reversed(state["errors"]):
        if isinstance(entry, dict) and entry.get("ident") == ident:
            entry["injected"] = sorted(set(entry.get("injected") or []) | set(learning_ids))
            break
