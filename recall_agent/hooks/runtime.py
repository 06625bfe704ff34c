"""What every hook process shares: bounded stdin, a hard deadline, and a small local log.

A hook must never break or stall the agent, so `run()` executes the handler in a daemon thread and waits
at most the event's deadline; on timeout or any error it logs one line and the process exits 0 with no
output (`os._exit`, so no straggling thread keeps the process alive).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STDIN_MAX_BYTES = 16 * 1024 * 1024
LOG_MAX_BYTES = 256 * 1024
# seconds, measured from process start; hooks.json's `timeout` is the harness's outer cap
DEADLINES = {
    "PostToolUseFailure": 1.6,  # + process spawn and teardown on a loaded machine: under the 2 s cap
    "PostToolUse": 1.6,
    "Stop": 2.5,  # synchronous (an async Stop dies with `claude -p`); runs only when there is a capture
    "SessionEnd": 2.5,
    "SessionStart": 2.0,  # the pitfalls: one read-only query of the store and a self-check per pitfall (~0.1 s CPU)
    "UserPromptSubmit": 2.0,  # the code area: read-only index queries (~0.1 s CPU; loaded machines wait longer)
}
DEFAULT_DEADLINE = 1.0
# tests on a loaded machine raise it; keep it below hooks.json's `timeout`
DEADLINE_ENV = "RECALL_HOOK_DEADLINE"


def deadline(event: str) -> float:
    """Seconds from process start this event may take (RECALL_HOOK_DEADLINE overrides, 0.2-60)."""
    try:
        return min(60.0, max(0.2, float(os.environ[DEADLINE_ENV])))
    except (KeyError, ValueError):
        return DEADLINES.get(event, DEFAULT_DEADLINE)


def _process_age() -> float:
    """Seconds since this process started (Linux /proc), so interpreter start-up counts against the cap."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


_STARTED = time.monotonic() - _process_age()


def elapsed() -> float:
    """Seconds since the process started."""
    return time.monotonic() - _STARTED


def log_path() -> Path:
    from recall_agent.config import recall_home

    return recall_home() / "logs" / "hooks.log"


def log(event: str, message: str) -> None:
    """One line in `$RECALL_HOME/logs/hooks.log` (rotated to `.1` past 256 KB). Never raises."""
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, path.with_suffix(".log.1"))
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = " ".join(message.split())[:500]
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {event} {line}\n")
    except Exception:  # a read-only home: nowhere to log, and still no noise for the agent
        pass


def read_payload(stream: Any = None) -> dict[str, Any] | None:
    """The hook JSON from stdin (bounded), or None when empty, oversized or not a JSON object."""
    stream = stream if stream is not None else sys.stdin
    if stream is None or (hasattr(stream, "isatty") and stream.isatty()):
        return None
    raw = stream.buffer.read(STDIN_MAX_BYTES + 1) if hasattr(stream, "buffer") else stream.read()
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    if not raw.strip() or len(raw) > STDIN_MAX_BYTES:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "returnCode")


def response_failed(response: object) -> bool:
    """Does a PostToolUse `tool_response` report a failure (older Claude Code versions)?"""
    if not isinstance(response, dict):
        return False
    if response.get("is_error") is True or response.get("isError") is True:
        return True
    for name in _EXIT_KEYS:
        value = response.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return True
    return False


def nothing_to_do(event: str, payload: dict[str, Any] | None) -> bool:
    """Answered before the handlers (and redaction, pydantic) are imported: a PostToolUse that reports no
    failure (the capture reads successes from the transcript at Stop; Codex CLI sends a shell call's output
    alone, its exit code is read from the rollout); a prompt that is not a task ("yes", "thanks", a slash
    command: `push.prompt.reads_as_task`, standard library only)."""
    if event == "UserPromptSubmit" and payload is not None:
        from recall_agent.push.prompt import reads_as_task

        prompt = payload.get("prompt")
        return not isinstance(prompt, str) or not reads_as_task(prompt)
    if event != "PostToolUse" or payload is None:
        return False
    response, path = payload.get("tool_response"), payload.get("transcript_path")
    if isinstance(response, str) and isinstance(path, str) and os.path.basename(path).startswith("rollout-"):
        from recall_agent.capture.codex_transcript import exit_code_of

        code = exit_code_of(Path(path), str(payload.get("tool_use_id") or ""))
        return payload.get("tool_name") != "Bash" or code in (None, 0)
    return not response_failed(response)


_handling = False


def handling() -> bool:
    """Whether a hook's handler is running in this process (`run`): work with no deadline of its own (the
    store's one-time migrations) waits for the next `recall` command. Importing this module says nothing:
    the CLI and the server import hook code too."""
    return _handling


def run(event: str, work: Callable[[], dict[str, Any] | None]) -> int:
    """Run `work` under the event's deadline; print its JSON output (if any); always return 0."""
    global _handling
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = work()
        except Exception as exc:  # fail open: the agent never sees a hook's traceback
            box["err"] = exc

    thread = threading.Thread(target=target, name=f"recall-hook-{event}", daemon=True)
    _handling = True
    try:
        thread.start()
        thread.join(max(0.05, deadline(event) - elapsed()))
        if thread.is_alive():
            log(event, f"deadline: gave up after {elapsed():.2f}s, no output")
            _exit_now(None)
    finally:
        _handling = False
    if "err" in box:
        exc = box["err"]
        log(event, f"error: {type(exc).__name__}: {exc}")
        return 0
    out = box.get("out")
    if out:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


def _exit_now(output: str | None) -> None:
    if output:
        sys.stdout.write(output)
    sys.stdout.flush()
    os._exit(0)
