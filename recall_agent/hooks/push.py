"""The hooks that speak before anything failed (issue 35): SessionStart (the repository's known pitfalls)
and UserPromptSubmit (a task prompt's code area). Kept apart from `handlers` so neither imports redaction,
session state or the event parser: standard library and `recall_agent.push` only."""

from __future__ import annotations

import os
from typing import Any


def handle(event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    if event == "SessionStart":
        return on_session_start(payload)
    return on_prompt(payload)


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def _context(event: str, text: str) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def on_session_start(payload: dict[str, Any]) -> dict[str, Any] | None:
    """This repository's known pitfalls (`push.pitfalls`), when push at session start is on."""
    from recall_agent.push import settings

    if not settings.enabled("session_start"):
        return None
    from recall_agent.push import service

    cwd = _cwd(payload)
    text = service.session_start(cwd, record=True)
    return _context("SessionStart", text)


def on_prompt(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The code area a task prompt is about (`push.task`), when push at task start is on."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        return None
    from recall_agent.push import task

    if not task.reads_as_task(prompt):
        return None  # "yes", "continue", "thanks", a slash command: nothing imported, nothing said
    from recall_agent.push import settings

    if not settings.enabled("prompt"):
        return None
    from recall_agent.push import service

    text = service.task_start(prompt, _cwd(payload), record=True)
    return _context("UserPromptSubmit", text)
