"""The real Codex CLI against a scripted OpenAI Responses API served on 127.0.0.1.

`ResponsesMock` answers `POST /v1/responses` with server-sent events (`response.created`, one
`response.output_item.done` per item, `response.completed`). The main agent's requests (those that offer
a shell tool) get the script's next `Turn`; any other request (a title, a compaction) gets a short text.
Each turn's shell call is given in the name of the shell tool the request offers (`exec_command`,
`shell_command` or `shell`), so the script does not depend on which one this version of Codex uses.
Every request body is kept, so a test can read what reached the model (a hook's context arrives in the
next request).

`run_codex()` runs `codex exec` non-interactively in a fresh HOME and CODEX_HOME whose config.toml points
the client at the mock (a custom model provider, `wire_api = "responses"`, no retries), with nothing else
to reach: no login, no update check, no analytics.

    script = [
        Turn.shell("python3 check.py"),                     # fails
        Turn.patch("*** Begin Patch\\n*** Update File: check.py\\n@@\\n-import x\\n+import json\\n*** End Patch\\n"),
        Turn.shell("python3 check.py"),                     # passes
        Turn.text("The import named a module that does not exist."),
    ]
    with ResponsesMock(script) as api:
        proc = run_codex(api, project, home, "make the check pass")
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scripted_http

MODEL = "gpt-5.5"
DUMMY_KEY = "sk-recall-test-dummy-key-not-a-secret-000000000000"
SHELL_TOOLS = ("exec_command", "shell_command", "shell")


@dataclass
class Turn:
    """One scripted answer: output items, or a function of the request that returns them."""

    items: list[dict[str, Any]] | Callable[[dict[str, Any]], list[dict[str, Any]]]

    @staticmethod
    def text(text: str) -> Turn:
        return Turn([_message(text)])

    @staticmethod
    def shell(command: str, say: str | None = None) -> Turn:
        items = [_message(say)] if say else []
        return Turn([*items, {"type": "shell", "command": command}])

    @staticmethod
    def patch(patch: str, say: str | None = None) -> Turn:
        items = [_message(say)] if say else []
        return Turn([*items, {"type": "custom_tool_call", "name": "apply_patch", "input": patch}])

    def render(self, request: dict[str, Any], n: int) -> list[dict[str, Any]]:
        items = self.items(request) if callable(self.items) else self.items
        return [_concrete(item, request, f"call_{n:04d}_{i}") for i, item in enumerate(items)]


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def tool_names(request: dict[str, Any]) -> set[str]:
    return {str(t.get("name")) for t in request.get("tools") or [] if isinstance(t, dict) and t.get("name")}


def _concrete(item: dict[str, Any], request: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A scripted item as the Responses API sends it (a shell call in the tool the request offers)."""
    if item["type"] == "shell":
        offered = tool_names(request)
        name = next((t for t in SHELL_TOOLS if t in offered), "exec_command")
        if name == "exec_command":
            args: dict[str, Any] = {"cmd": item["command"], "yield_time_ms": 60000}
        elif name == "shell_command":
            args = {"command": item["command"]}
        else:
            args = {"command": ["bash", "-lc", item["command"]]}
        return {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": call_id}
    if item["type"] == "custom_tool_call":
        if item["name"] not in tool_names(request):  # apply_patch offered as a function in some versions
            args = json.dumps({"input": item["input"]})
            return {"type": "function_call", "name": item["name"], "arguments": args, "call_id": call_id}
        return {**item, "call_id": call_id}
    return item


@dataclass
class Request:
    body: dict[str, Any]
    path: str
    main: bool = False
    items: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)

    def outputs(self) -> list[str]:
        """The outputs of the tool calls the request carries (function / custom tool call outputs)."""
        out = []
        for item in self.body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                value = item.get("output")
                out.append(value if isinstance(value, str) else json.dumps(value))
        return out

    def latest_text(self) -> str:
        """Everything after the model's last call: tool outputs and the context hooks added."""
        items = self.body.get("input") or []
        tail: list[str] = []
        for item in reversed(items):
            if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call"):
                break
            tail.append(json.dumps(item, ensure_ascii=False))
        return "\n".join(reversed(tail))


class ResponsesMock(scripted_http.ScriptedAPI):
    """A scripted Responses API on 127.0.0.1 (a context manager; `url` once entered)."""

    URL_PATH = "/v1"

    def __enter__(self) -> ResponsesMock:
        mock = self

        class Handler(scripted_http.Handler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self.send_json(200, {"object": "list", "data": [], "models": []})
                else:
                    self.send_json(404, {"error": {"message": "mock: not found"}})

            def do_POST(self) -> None:
                _, body = self.body()
                req = Request(body=body, path=self.path)
                if not self.path.rstrip("/").endswith("/responses"):
                    self.send_json(404, {"error": {"message": "mock: only /v1/responses"}})
                    return
                try:
                    req.main, req.items = mock._answer(body)
                except Exception as exc:  # a broken script ends the session at once, with the reason kept
                    mock.errors.append(f"{type(exc).__name__}: {exc}")
                    req.main, req.items = True, [_message(f"mock error: {exc}")]
                with mock._lock:
                    mock.requests.append(req)
                self.send_events(b"".join(_events(req.items)))

        self._server = scripted_http.serve(Handler)
        return self

    def _answer(self, body: dict[str, Any]) -> tuple[bool, list[dict[str, Any]]]:
        if not (tool_names(body) & set(SHELL_TOOLS)):
            return False, [_message(self.fallback)]
        n, turn = self.next_turn()
        return True, (turn or Turn.text(self.fallback)).render(body, n)


def _events(items: list[dict[str, Any]]) -> list[bytes]:
    rid = f"resp_mock_{time.monotonic_ns()}"
    out = [_sse("response.created", {"type": "response.created", "response": {"id": rid}})]
    for i, item in enumerate(items):
        done = {**item, "id": item.get("id") or f"item_{rid}_{i}", "status": "completed"}
        out.append(
            _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": i, "item": done},
            )
        )
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 120,
    }
    out.append(
        _sse("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": usage}})
    )
    return out


_sse = scripted_http.sse


def codex_binary() -> str | None:
    return shutil.which("codex")


def codex_config(api: ResponsesMock) -> str:
    """config.toml lines that send the client to the mock and keep it from calling anywhere else."""
    return f"""model = "{MODEL}"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{api.url}"
wire_api = "responses"
env_key = "RECALL_TEST_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[otel]
exporter = "none"
"""


def codex_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "RECALL_TEST_OPENAI_KEY": DUMMY_KEY,
            "NO_PROXY": "127.0.0.1,localhost",
            "RUST_LOG": "error",
        }
    )
    env.update(extra)
    return env


def write_config(api: ResponsesMock, home: Path) -> Path:
    """`$CODEX_HOME/config.toml` for the mock (kept above whatever `recall install --codex` appends)."""
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    rest = path.read_text() if path.exists() else ""
    if _MOCK_END in rest:  # the block of an earlier mock: replaced
        rest = rest.split(_MOCK_END, 1)[1]
    path.write_text(codex_config(api) + _MOCK_END + rest)
    return path


_MOCK_END = "# ---- end of the test's mock provider\n"


def run_codex(
    cwd: Path,
    home: Path,
    prompt: str,
    *,
    env: dict[str, str] | None = None,
    extra_args: Iterable[str] = (),
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`codex exec PROMPT` in `cwd` (no approvals, no sandbox: the scripted commands run as they are)."""
    binary = codex_binary()
    assert binary, "codex is not installed (npm install -g @openai/codex)"
    args = [
        binary,
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        *extra_args,
        prompt,
    ]
    return subprocess.run(
        args,
        cwd=cwd,
        env=env if env is not None else codex_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
