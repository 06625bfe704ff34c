"""The real Claude Code CLI against a scripted Anthropic Messages API served on 127.0.0.1.

`MessagesMock` answers `POST /v1/messages` with server-sent events (message_start, content_block_start/
delta/stop, message_delta, message_stop), or with one JSON message when the request is not streaming. The
main agent's requests (those that offer the `Bash` tool) get the script's next `Turn`; every other request
(title or topic helpers, quota probes) gets a short text, so the script is not consumed by side traffic.
Every request body is kept, with its arrival time and the time the answer to it was finished, so a test
can read what reached the model (hook context arrives as a `<system-reminder>` in the next request) and a
benchmark can time the client between a tool_use and its next request.

`run_claude()` runs `claude -p` headless, offline and isolated: its own HOME (so `~/.claude` is fresh), the
variables that turn off telemetry, auto-update and non-essential traffic, `IS_SANDBOX=1` for root.

Scripting a session (the transcript importer's tests can reuse it to make real transcripts, which the
client writes under `<HOME>/.claude/projects/`): `make_checkout()` is a git repository whose `check.py`
fails on a missing module after printing a fake token; `fix_script()` fails it, reads, edits, passes it and
explains the fix (`FIX_MESSAGE`). Or write the turns yourself:

    script = [
        Turn.tool("Bash", {"command": "python3 check.py"}),    # fails: a Bash error with a fake secret
        Turn.tool("Read", {"file_path": str(check)}),          # Edit wants the file read first
        Turn.tool("Edit", {"file_path": str(check), "old_string": "import requests_oauth",
                           "new_string": "import json"}),
        Turn.tool("Bash", {"command": "python3 check.py"}),    # passes
        Turn.text(FIX_MESSAGE),                                # the final explanation
    ]
    with MessagesMock(script) as api:
        proc = run_claude(api, project, home, "make the check pass", plugin_dir=REPO_ROOT)
    api.main_requests[1].latest_text()  # what the model saw after the failure (hook context included)

A `Turn` may also be a function of the request body (to answer with what the request carries, say the
skill's bash block). A turn that raises ends the session with a text answer and lands in `api.errors`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scripted_http

MODEL = "sonnet"
DUMMY_KEY = "sk-ant-api03-recall-test-dummy-key-not-a-secret-0000000000000000000000"
FAKE_TOKEN = "ghp_Zq8vT3xLm2Pw9RkY4nHs7Jd1Fg6Cb5Aeabcd"
ERROR_LINE = "ModuleNotFoundError: No module named 'requests_oauth'"
CHECK_PY = f"""import sys

print("connecting with GITHUB_TOKEN={FAKE_TOKEN}", file=sys.stderr)
import requests_oauth  # noqa

print("check passed")
"""
FIX_MESSAGE = (
    "The check failed because check.py imported requests_oauth, a package that does not exist. The right "
    "package is requests-oauthlib, so I replaced the import and the check passes now."
)
# the documented switches for a client that must not reach anything but the mock
OFFLINE_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "IS_SANDBOX": "1",  # --dangerously-skip-permissions as root
}


@dataclass
class Turn:
    """One scripted answer of the model: content blocks, or a function of the request that returns them."""

    blocks: list[dict[str, Any]] | Callable[[dict[str, Any]], list[dict[str, Any]]]

    @staticmethod
    def text(text: str) -> Turn:
        return Turn([{"type": "text", "text": text}])

    @staticmethod
    def tool(name: str, tool_input: dict[str, Any], say: str | None = None) -> Turn:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
        blocks.append({"type": "tool_use", "name": name, "input": tool_input})
        return Turn(blocks)

    def render(self, request: dict[str, Any], n: int) -> list[dict[str, Any]]:
        blocks = self.blocks(request) if callable(self.blocks) else self.blocks
        out = []
        for i, block in enumerate(blocks):
            if block["type"] == "tool_use" and "id" not in block:
                block = {**block, "id": f"toolu_{n:04d}_{i}"}
            out.append(block)
        return out


@dataclass
class Request:
    body: dict[str, Any]
    path: str
    arrived: float  # time.monotonic()
    answered: float = 0.0  # when the last byte of the answer was written
    main: bool = False  # a main-agent request (offers Bash), which consumed a Turn
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        """Everything the request carries as text (system prompt, messages, tool results)."""
        return json.dumps(self.body, ensure_ascii=False)

    def latest_text(self) -> str:
        """The text of every message after the model's last turn: tool results, hook context (system
        reminders), a skill's expanded text, the prompt."""
        messages = self.body.get("messages") or []
        tail: list[str] = []
        for message in reversed(messages):
            if message.get("role") == "assistant":
                break
            tail.append(_flatten(message.get("content")))
        return "\n".join(reversed(tail))

    def tool_results(self) -> list[dict[str, Any]]:
        out = []
        for message in self.body.get("messages") or []:
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list):
                out.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        return out


def _flatten(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _flatten(b.get("content") if "content" in b else b.get("text"))
            for b in content
            if isinstance(b, dict)
        )
    return ""


class MessagesMock(scripted_http.ScriptedAPI):
    """A scripted Messages API on 127.0.0.1 (a context manager; `url` once entered)."""

    def __enter__(self) -> MessagesMock:
        mock = self

        class Handler(scripted_http.Handler):
            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self.send_json(
                    404, {"type": "error", "error": {"type": "not_found_error", "message": "mock"}}
                )

            def do_POST(self) -> None:
                _, body = self.body()
                req = Request(body=body, path=self.path, arrived=time.monotonic())
                if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count"):
                    self.send_json(200, {"input_tokens": 100})
                    return
                try:
                    req.main, req.blocks = mock._answer(body)
                except Exception as exc:  # a broken script ends the session at once, with the reason kept
                    mock.errors.append(f"{type(exc).__name__}: {exc}")
                    req.main, req.blocks = True, [{"type": "text", "text": f"mock error: {exc}"}]
                with mock._lock:
                    mock.requests.append(req)
                if body.get("stream"):
                    self.send_events(b"".join(_sse(name, data) for name, data in _events(req.blocks)))
                else:
                    self.send_json(200, _message(req.blocks))
                req.answered = time.monotonic()

        self._server = scripted_http.serve(Handler)
        return self

    def _answer(self, body: dict[str, Any]) -> tuple[bool, list[dict[str, Any]]]:
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if "Bash" not in tools:
            return False, [{"type": "text", "text": self.fallback}]
        n, turn = self.next_turn()
        return True, (turn or Turn.text(self.fallback)).render(body, n)


def _message(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": f"msg_mock_{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def _events(blocks: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    message = _message(blocks)
    yield (
        "message_start",
        {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
    )
    for i, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
    )
    yield "message_stop", {"type": "message_stop"}


_sse = scripted_http.sse


def claude_binary() -> str | None:
    return shutil.which("claude")


def recall_client_env(recall_home: Path) -> dict[str, str]:
    """What the client gets besides the mock: this checkout's recall first on PATH (no version-manager shim),
    a hook deadline that a loaded machine cannot turn into a timing test."""
    import sys
    import sysconfig

    scripts = sysconfig.get_path("scripts")
    return {
        "PATH": os.pathsep.join([scripts, os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "RECALL_HOME": str(recall_home),
        "RECALL_HOOK_DEADLINE": "4",
    }


def claude_env(api: MessagesMock, home: Path, **extra: str) -> dict[str, str]:
    """The client's environment: the mock as its API, a fresh HOME, nothing that calls out."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDECODE"))
    }
    home.mkdir(parents=True, exist_ok=True)
    env.update(OFFLINE_ENV)
    env.update(
        {
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    env.update(extra)
    return env


def run_claude(
    api: MessagesMock,
    cwd: Path,
    home: Path,
    prompt: str,
    *,
    plugin_dir: Path | None = None,
    debug_file: Path | None = None,
    extra_args: Iterable[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT` in `cwd`, all tools allowed, against the mock; returns the finished process."""
    binary = claude_binary()
    assert binary, "claude is not installed (npm install -g @anthropic-ai/claude-code)"
    args = [binary, "-p", prompt, "--dangerously-skip-permissions", "--model", MODEL]
    if plugin_dir is not None:
        args += ["--plugin-dir", str(plugin_dir)]
    if debug_file is not None:
        args += ["--debug-file", str(debug_file)]
    args += list(extra_args)
    return subprocess.run(
        args,
        cwd=cwd,
        env=env if env is not None else claude_env(api, home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_skill_block(request: dict[str, Any]) -> list[dict[str, Any]]:
    """A `Turn`: the model following the skill, running the ```bash block the skill's text put in the request."""
    text = Request(body=request, path="", arrived=0).latest_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert blocks, f"the skill's text did not reach the model: {text[-1500:]}"
    return [
        {"type": "tool_use", "name": "Bash", "input": {"command": blocks[0], "description": "Ask recall"}}
    ]


# A session to script: a check that fails on a missing module (printing a fake token), and its fix.


def make_checkout(parent: Path) -> Path:
    """A real git repository `shop-api` on a ticket branch, whose check fails on a missing module. Every call
    makes the same first commit (fixed dates): checkouts of one repository (`recall_agent.repo.identity`)."""
    project = parent / "shop-api"
    project.mkdir(parents=True)
    (project / "check.py").write_text(CHECK_PY)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    dated = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    subprocess.run([*git, "init", "-q", "-b", "fix/ABC-123-oauth-import"], cwd=project, check=True)
    subprocess.run([*git, "add", "."], cwd=project, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "check"], cwd=project, check=True, env=dated)
    return project


def fix_script(project: Path) -> list[Turn]:
    """Fail (with the token in the output), read, edit, pass, explain."""
    check = str(project / "check.py")
    return [
        Turn.tool("Bash", {"command": "python3 check.py", "description": "Run the check"}),
        Turn.tool("Read", {"file_path": check}),
        Turn.tool(
            "Edit", {"file_path": check, "old_string": "import requests_oauth", "new_string": "import json"}
        ),
        Turn.tool("Bash", {"command": "python3 check.py", "description": "Run the check again"}),
        Turn.text(FIX_MESSAGE),
    ]
