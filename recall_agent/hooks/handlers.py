"""One function per Claude Code hook event. Each returns the hook's JSON output, or None for silence.

- PostToolUseFailure (and PostToolUse carrying a failure, from Claude Code versions before
  PostToolUseFailure): record the error, look up learnings, inject a few lines when a match clears the
  threshold and was not shown for this error in this session. Before that each match checks itself
  against the checkout (`recall_agent.selfcheck`): a stale one is not injected, nor is a hurting or dormant
  one (`learnings.lifecycle`). What was injected is counted as shown at Stop.
- Stop / SessionEnd: the capture engine reads the transcript's new lines (`hooks/capture.py`) and stores
  the errors it fixed; each injected learning is judged by the next run of that check: helped (counted,
  confidence +0.1) or hurt (counted, confidence -0.1). Never blocks (no `decision` in the output).
A successful tool call needs no hook: the transcript holds everything the capture needs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from recall_agent import repo, session
from recall_agent.hooks import events, retrieve, runtime, state
from recall_agent.redact import redact

NO_SESSION = "no-session"


def handle(event: str, payload: dict[str, Any] | None) -> dict[str, Any] | None:
    if payload is None:
        runtime.log(event, "empty or malformed hook JSON on stdin; ignored")
        return None
    if event in ("PostToolUseFailure", "PostToolUse"):
        return on_tool(event, payload)
    if event in ("Stop", "SessionEnd"):
        on_stop(event, payload)
        return None
    if event in ("SessionStart", "UserPromptSubmit"):
        from recall_agent.hooks import push

        return push.handle(event, payload)
    runtime.log(event, "unknown hook event; ignored")
    return None


def _session_id(payload: dict[str, Any]) -> str:
    sid = payload.get("session_id")
    return sid if isinstance(sid, str) and sid.strip() else NO_SESSION


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def on_tool(event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    ev = events.from_payload(payload, event)
    if ev is None:
        runtime.log(event, "no tool_name in the hook JSON; ignored")
        return None
    if ev.failed:
        return on_failure(event, payload, ev)
    return None  # a success: the capture at Stop reads it from the transcript


def on_failure(event: str, payload: dict[str, Any], ev: events.ToolEvent) -> dict[str, Any] | None:
    if not events.learns_from_failure(ev) or not ev.error_text:
        return None
    sid, cwd = _session_id(payload), _cwd(payload)
    text = redact(ev.error_text)
    ident = events.error_ident(ev.key or ev.tool, text)
    shown: set[str] = set()
    root = repo.toplevel(Path(cwd))
    repo_id = repo.identity(Path(cwd), root)
    try:
        with session.update(sid, cwd) as st:
            state.add_error(st, ev, text)
            shown = state.already_injected(st, ident)
    except (OSError, TimeoutError) as exc:
        runtime.log(event, f"session state not written ({exc}); answering without it")

    budget = min(runtime.deadline(event), 5.0) - runtime.elapsed() - 0.15
    if budget <= 0.05:
        runtime.log(event, "no time left for the learnings lookup")
        return None
    try:
        matches = retrieve.query(text, repo_id, budget)
    except Exception as exc:  # store broken, server down: the agent carries on without recall
        runtime.log(event, f"learnings lookup failed: {type(exc).__name__}: {exc}")
        return None
    from recall_agent import selfcheck

    left = min(runtime.deadline(event), 5.0) - runtime.elapsed() - 0.15
    locate_s = min(selfcheck.LOCATE_S, max(0.0, left - 0.1))
    names = repo.aliases(Path(cwd), root)
    matches = selfcheck.annotate(matches, root or Path(cwd), names, cwd, locate_s)
    picked = retrieve.select(matches, shown)
    if not picked:
        return None
    ids = [str(m["learning_id"]) for m in picked]
    try:
        with session.update(sid, cwd) as st:
            state.mark_injected(st, ident, ids)
    except (OSError, TimeoutError) as exc:
        runtime.log(event, f"could not record injected learnings ({exc})")
    return {
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": retrieve.format_context(picked),
        }
    }


def _take_feedback(entries: list[dict[str, Any]]) -> list[str]:
    """Injected learning ids of `entries` not yet judged; marks them judged (each judged once)."""
    ids: list[str] = []
    for entry in entries:
        judged = set(entry.get("feedback") or [])
        fresh = [i for i in entry.get("injected") or [] if i not in judged]
        entry["feedback"] = sorted(judged | set(fresh))
        ids.extend(fresh)
    return list(dict.fromkeys(ids))


def _count(ids: list[str], outcome: str, event: str) -> None:
    """Count an outcome of injected learnings (shown / helped / hurt, `learnings.lifecycle`): in the local
    store, or on the team server the learnings came from. Never raises: the agent carries on without it."""
    if os.environ.get("AGENT_LEARNING_RETRIEVAL_URL"):
        retrieve.send_outcome(ids, outcome, event)
        return
    from recall_agent.config import learnings_db

    if not learnings_db().exists():
        return
    from recall_agent.learnings.store import open_store
    from recall_agent.learnings.types import StoreError

    try:
        with open_store() as st:
            st.record_outcome(ids, outcome)
    except (StoreError, ValueError) as exc:
        runtime.log(event, f"{outcome} not counted: {exc}")


def on_stop(event: str, payload: dict[str, Any]) -> None:
    from recall_agent.hooks import capture

    sid, cwd = _session_id(payload), _cwd(payload)
    reward: list[str] = []
    penalty: list[str] = []
    shown: list[str] = []
    try:
        with session.update(sid, cwd, lock_timeout_s=1.0) as st:
            found = capture.capture(sid, payload, st.get("cwd") or cwd)
            if found.learnings:
                capture.store(found.learnings)  # inside the lock: the offset moves on only once stored
            capture.save(sid, found)
            state.resolve(st, set(found.resolved_ids))
            shown = _take_shown(st)
            reward, penalty = _judge(st, found.verdicts)
    except (OSError, TimeoutError) as exc:
        runtime.log(event, f"capture skipped: {exc}")
    if shown:  # counted here, not where the failure hook injects: that path stays free of store writes
        _count(shown, "shown", event)
    if reward:
        _count(reward, "helped", event)
    if penalty:
        _count(penalty, "hurt", event)
    session.prune()


def _take_shown(st: dict[str, Any]) -> list[str]:
    """The learnings injected since the last Stop (each entry taken once; a learning counts once a turn)."""
    ids: list[str] = []
    for entry in st["errors"]:
        if isinstance(entry, dict) and entry.get("injected") and not entry.get("shown_counted"):
            entry["shown_counted"] = True
            ids.extend(str(i) for i in entry["injected"])
    return ids


def _judge(st: dict[str, Any], verdicts: dict[str, str]) -> tuple[list[str], list[str]]:
    """Injected learnings judged by what the next run of that check did (the capture engine's verdicts):
    (helped, hurt) learning ids, each injection judged once."""
    by_call = {e.get("tool_use_id"): e for e in st["errors"] if isinstance(e, dict) and e.get("tool_use_id")}
    helped: list[str] = []
    hurt: list[str] = []
    for call, verdict in verdicts.items():
        entry = by_call.get(call)
        if entry:
            (helped if verdict == "helped" else hurt).extend(_take_feedback([entry]))
    return list(dict.fromkeys(helped)), list(dict.fromkeys(hurt))
