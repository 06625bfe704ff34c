"""Edits to the session record (`recall_agent.session`) for tool events; all run inside `session.update()`."""

from __future__ import annotations

import time
from typing import Any

from recall_agent.hooks.events import ToolEvent, error_ident


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
        "tool": ev.tool,
        "command": ev.command,
        "text": text,
        "ident": ident,
        "ts": time.time() if now is None else now,
        "tool_use_id": ev.tool_use_id,
        "resolved_ts": None,
        "injected": [],
        "feedback": [],
    }
    state["errors"].append(entry)
    return entry, earlier


def resolve(state: dict[str, Any], tool_use_ids: set[str], now: float | None = None) -> list[dict[str, Any]]:
    """Mark the recorded failures that the capture engine saw fixed; returns them."""
    done = []
    for entry in state["errors"]:
        if (
            isinstance(entry, dict)
            and not entry.get("resolved_ts")
            and entry.get("tool_use_id") in tool_use_ids
        ):
            entry["resolved_ts"] = time.time() if now is None else now
            done.append(entry)
    return done


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
