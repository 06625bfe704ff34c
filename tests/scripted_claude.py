"""Run the real Claude Code CLI (`claude -p`) against a scripted Messages API on 127.0.0.1, so it writes a
real session transcript. The script is a list of assistant turns; each main-loop request (one that offers
the Bash tool) gets the next turn, streamed as server-sent events the way the API sends them. Side requests
(titles, summaries) get a short text. Nothing leaves the machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hooks_fixtures import http_server

Turn = list[
    dict[str, Any]
]  # content blocks: {"type": "text", "text"} or {"type": "tool_use", "name", "input"}


def claude_binary() -> str | None:
    return shutil.which("claude")


def _events(blocks: Turn, n: int) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "message_start", {"type": "message_start", "message": {
        "id": f"msg_scripted{n:04d}", "type": "message", "role": "assistant", "model": "claude-scripted",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1}}}  # fmt: skip
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}  # fmt: skip
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {
                "type": "tool_use",
                "id": f"toolu_01scripted{n:03d}{i}",
                "name": block["name"],
                "input": {},
            }
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 30}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


@contextmanager
def scripted_api(turns: list[Turn]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL, main-loop requests received)."""
    received: list[dict[str, Any]] = []
    lock = threading.Lock()

    def answer(_request: object, raw: bytes) -> tuple[int, bytes, float, str]:
        body = json.loads(raw or b"{}")
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        with lock:
            if "Bash" in tools and len(received) < len(turns):
                received.append(body)
                n, blocks = len(received), turns[len(received) - 1]
            else:
                n, blocks = 900 + len(received), [{"type": "text", "text": "Scripted session"}]
        if not body.get("stream"):
            message = {"id": f"msg_side{n}", "type": "message", "role": "assistant", "model": "claude-scripted",
                       "content": [b for b in blocks if b["type"] == "text"], "stop_reason": "end_turn",
                       "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 5}}  # fmt: skip
            return 200, json.dumps(message).encode(), 0, "application/json"
        events = b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in _events(blocks, n))
        return 200, events, 0, "text/event-stream"

    with http_server(answer) as (url, _raw):
        yield url, received


def run_claude(prompt: str, cwd: Path, config_dir: Path, base_url: str, timeout: float = 180) -> str:
    """`claude -p PROMPT` in `cwd`, transcripts under `config_dir`; returns its stdout."""
    binary = claude_binary()
    assert binary, "the claude CLI is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env |= {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted-test-key",
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "IS_SANDBOX": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    proc = subprocess.run(
        [binary, "-p", prompt, "--dangerously-skip-permissions", "--output-format", "text"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout
