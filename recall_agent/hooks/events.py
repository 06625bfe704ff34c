"""Hook JSON -> the facts recall needs: which command ran, did it fail, with what text, which file changed.

Field names follow Claude Code's hook reference (`tool_name`, `tool_input`, `tool_response`, `error`,
`is_interrupt`, `tool_use_id`). A Bash command that exits non-zero arrives as PostToolUseFailure in current
versions and as PostToolUse with the exit code inside `tool_response` in older ones; both end up here as a
failed `ToolEvent`.

`key` identifies the failing check (`recall_agent.capture.commands`): the same error of the same check is
injected once per session, and a learning injected for it is judged by what follows.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_agent.hooks.runtime import response_failed
from recall_agent.redact import redact

ERROR_TEXT_MAX = 4000
FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# tools whose failures are about using the tool (old_string not found, no such file to read), not the code
IGNORED_FAILURE_TOOLS = FILE_TOOLS | {"Read", "Glob", "Grep", "LS", "TodoWrite", "Task", "ExitPlanMode"}
_IDENT_FOLD = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{7,40}\b|\d+")


@dataclass
class ToolEvent:
    tool: str
    failed: bool
    command: str | None = None  # Bash command, or a short description of other tools' input
    error_text: str | None = None
    file_path: str | None = None  # for Edit/Write/MultiEdit/NotebookEdit
    tool_use_id: str | None = None
    interrupted: bool = False
    key: str = ""


def from_payload(payload: dict[str, Any], event: str) -> ToolEvent | None:
    """A ToolEvent for PostToolUse / PostToolUseFailure payloads; None when the payload has no tool."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    response = payload.get("tool_response")
    ev = ToolEvent(tool=tool, failed=False, tool_use_id=_str(payload.get("tool_use_id")))
    if tool == "Bash":
        ev.command = _str(tool_input.get("command"))
    elif tool in FILE_TOOLS:
        path = _str(tool_input.get("file_path") or tool_input.get("notebook_path"))
        ev.file_path = redact(path) if path else path  # the session file keeps it
    else:
        from recall_agent.capture.commands import tool_command

        ev.command = tool_command(tool, tool_input).text

    if tool == "Bash" and isinstance(response, str) and _rollout(payload):
        # Codex CLI: the response is the output alone; the exit code is in the rollout already
        from recall_agent.capture.codex_transcript import exit_code_of

        code = exit_code_of(Path(str(payload["transcript_path"])), ev.tool_use_id or "")
        ev.failed = code is not None and code != 0
        ev.error_text = response if ev.failed else None
    elif event == "PostToolUseFailure":
        ev.failed = True
        ev.interrupted = payload.get("is_interrupt") is True
        ev.error_text = _str(payload.get("error")) or _response_text(response)
    elif response_failed(response):
        ev.failed = True
        ev.interrupted = isinstance(response, dict) and response.get("interrupted") is True
        ev.error_text = _response_text(response)
    if ev.error_text:
        ev.error_text = clip(ev.error_text)
    if ev.command:
        # commands carry secrets too (`curl -H "Authorization: ..."`, `DB_PASSWORD=... pytest`); a failure
        # and its success are redacted alike, so their keys still compare
        ev.command, ev.key = _command_facts(ev.command) if tool == "Bash" else (redact(ev.command),) * 2
    return ev


@functools.lru_cache(maxsize=1024)
def _command_facts(command: str) -> tuple[str, str]:
    """The redacted command and the key of its check (cached: the same few commands run many times)."""
    from recall_agent.capture import commands

    redacted = redact(command)
    parsed = commands.parse(redacted)
    return redacted, parsed.main.key if parsed.main else parsed.text


def _rollout(payload: dict[str, Any]) -> bool:
    """The hook came from Codex CLI (its transcript is a rollout)."""
    path = payload.get("transcript_path")
    return isinstance(path, str) and Path(path).name.startswith("rollout-")


def learns_from_failure(ev: ToolEvent) -> bool:
    """A failure recall records: not interrupted, with error text, and not a file tool's usage error
    (`Edit`'s "string not found" is about using the tool, not about the code)."""
    return ev.failed and not ev.interrupted and bool(ev.error_text) and ev.tool not in IGNORED_FAILURE_TOOLS


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _response_text(response: object) -> str | None:
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return None
    chunks = []
    for name in ("error", "stderr", "stdout", "output", "content", "result"):
        value = response.get(name)
        if isinstance(value, str) and value.strip():
            chunks.append(value.strip())
        elif isinstance(value, list):  # content blocks
            chunks.extend(
                b["text"].strip()
                for b in value
                if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].strip()
            )
    return "\n".join(chunks) or None


def clip(text: str, limit: int = ERROR_TEXT_MAX) -> str:
    """Keep the head (the command, the first error) and the tail (the summary, the raised exception)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head - 5
    return text[:head] + "\n...\n" + text[-tail:]


def error_ident(key: str, text: str) -> str:
    """Same command + same final error lines (numbers, hex and SHAs folded) = the same error."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][-3:]
    folded = _IDENT_FOLD.sub("#", "\n".join(lines))
    return hashlib.sha1(f"{key}\n{folded}".encode("utf-8", "replace")).hexdigest()[:16]
