"""Helpers for the hook tests: real `python -m recall_agent hook <Event>` processes fed Claude Code hook JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOOK_ENV_VARS = (
    "RECALL_SERVER_URL",
    "RECALL_HOOK_MIN_SIMILARITY",
    "RECALL_HOOK_MAX_INJECT",
    "RECALL_TICKET_PATTERN",
    "RECALL_HOOK_DEADLINE",
)

PLANTED_SECRET = "ghp_Zq8vT3xLm2Pw9RkY4nHs7Jd1Fg6Cb5Aeabcd"
PLANTED_PASSWORD = "Sup3rS3cret!"
ERROR_TEXT = (
    "Exit code 1\n"
    "==================================== ERRORS ====================================\n"
    "_____________________ ERROR collecting tests/test_app.py ______________________\n"
    "tests/test_app.py:3: in <module>\n"
    "    from app.client import fetch\n"
    "src/app/client.py:1: in <module>\n"
    "    import requests_oauth\n"
    "E   ModuleNotFoundError: No module named 'requests_oauth'\n"
    f"env: GITHUB_TOKEN={PLANTED_SECRET} DATABASE_URL=postgresql://app:{PLANTED_PASSWORD}@db:5432/app\n"
    "=========================== short test summary info ============================\n"
    "ERROR tests/test_app.py\n"
    "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!!\n"
)
FIX_MESSAGE = (
    "The collection error came from src/app/client.py importing requests_oauth, a package that does not "
    "exist. The right package is requests-oauthlib, so I changed the import to requests_oauthlib and added "
    "requests-oauthlib to the dependencies in pyproject.toml. Now pytest collects and the test passes."
)


def hook_env(home: Path, *, real_deadline: bool = False, **extra: str) -> dict[str, str]:
    """Environment for hook processes. Behaviour tests lift the 1.6 s deadline (RECALL_HOOK_DEADLINE) so a
    loaded CI machine cannot turn them into timing tests; deadline tests pass real_deadline=True."""
    env = {k: v for k, v in os.environ.items() if k not in HOOK_ENV_VARS}
    env["RECALL_HOME"] = str(home)
    if not real_deadline:
        env["RECALL_HOOK_DEADLINE"] = "20"
    env.update(extra)
    return env


def run_hook(
    event: str, payload: object, env: dict[str, str], *, raw: bytes | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    data = raw if raw is not None else json.dumps(payload).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", "hook", event],
        input=data,
        env=env,
        capture_output=True,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def make_project(root: Path, branch: str = "fix/ABC-123-oauth-import") -> Path:
    project = root / "shop-api"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    (project / "src" / "app").mkdir(parents=True)
    (project / "src" / "app" / "client.py").write_text("import requests_oauth\n")
    (project / "tests").mkdir()
    return project


class Session:
    """Builds the documented hook JSON for one Claude Code session and runs each hook as a process."""

    def __init__(self, session_id: str, project: Path, env: dict[str, str]) -> None:
        self.session_id = session_id
        self.project = project
        self.env = env
        self.transcript = project.parent / f"{session_id}.jsonl"
        self.transcript.write_text("")
        self._n = 0

    def _base(self, event: str) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "permission_mode": "default",
            "hook_event_name": event,
        }

    def _tool_use_id(self) -> str:
        self._n += 1
        return f"toolu_{self.session_id}_{self._n:03d}"

    def _log(self, *entries: dict[str, Any]) -> None:
        with self.transcript.open("a") as fh:
            for entry in entries:
                fh.write(json.dumps(entry) + "\n")

    def bash_fails(self, command: str, error: str) -> subprocess.CompletedProcess[str]:
        tid = self._tool_use_id()
        self._log(_tool_use(tid, "Bash", {"command": command}), _tool_result(tid, error, is_error=True))
        payload = self._base("PostToolUseFailure") | {
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run tests"},
            "tool_use_id": tid,
            "error": error,
            "is_interrupt": False,
        }
        return run_hook("PostToolUseFailure", payload, self.env)

    def logged_failure(self, command: str, error: str, tid: str | None = None) -> str:
        """A failed call in the transcript only (the hook is run by the test itself); returns its id."""
        tid = tid or self._tool_use_id()
        self._log(_tool_use(tid, "Bash", {"command": command}), _tool_result(tid, error, is_error=True))
        return tid

    def bash_fails_old_style(self, command: str, stderr: str) -> subprocess.CompletedProcess[str]:
        """Older Claude Code: a non-zero exit reaches PostToolUse with the exit code in tool_response."""
        tid = self._tool_use_id()
        payload = self._base("PostToolUse") | {
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": tid,
            "tool_response": {"stdout": "", "stderr": stderr, "exit_code": 1, "interrupted": False},
        }
        return run_hook("PostToolUse", payload, self.env)

    def bash_ok(self, command: str, stdout: str = "1 passed") -> None:
        """A successful call: in the transcript only (recall registers no hook for successes)."""
        tid = self._tool_use_id()
        self._log(
            _tool_use(tid, "Bash", {"command": command}),
            _tool_result(tid, stdout, is_error=False)
            | {"toolUseResult": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}},
        )

    def edit(
        self, rel_path: str, old: str = "import requests_oauth", new: str = "import requests_oauthlib"
    ) -> None:
        """An Edit as the client writes it: the call, and a result carrying the file as it was before and
        the hunk's line numbers (`originalFile`, `structuredPatch`); the file on disk changes too."""
        tid = self._tool_use_id()
        file = self.project / rel_path
        original = file.read_text() if file.exists() else ""
        line = original[: original.find(old)].count("\n") + 1 if old in original else 1
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(original.replace(old, new, 1))
        tool_input = {"file_path": str(file), "old_string": old, "new_string": new}
        result = {
            "filePath": str(file),
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [{"oldStart": line, "oldLines": 1, "newStart": line, "newLines": 1,
                                 "lines": [f"-{old}", f"+{new}"]}],
        }  # fmt: skip
        self._log(
            _tool_use(tid, "Edit", tool_input),
            _tool_result(tid, "The file has been updated.", False) | {"toolUseResult": result},
        )

    def write(self, rel_path: str, content: str) -> None:
        """A Write of a new file as the client records it (no `originalFile`); the file appears on disk."""
        tid = self._tool_use_id()
        file = self.project / rel_path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(content)
        result = {"type": "create", "filePath": str(file), "content": content, "structuredPatch": []}
        self._log(
            _tool_use(tid, "Write", {"file_path": str(file), "content": content}),
            _tool_result(tid, f"File created successfully at: {file}", False) | {"toolUseResult": result},
        )

    def say(self, text: str) -> None:
        self._log(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            }
        )

    def stop(self, last_message: str) -> subprocess.CompletedProcess[str]:
        payload = self._base("Stop") | {"stop_hook_active": False, "last_assistant_message": last_message}
        return run_hook("Stop", payload, self.env)

    def end(self) -> subprocess.CompletedProcess[str]:
        return run_hook("SessionEnd", self._base("SessionEnd") | {"reason": "prompt_input_exit"}, self.env)


def _tool_use(tid: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": tool_input}],
        },
    }


def _tool_result(tid: str, text: str, is_error: bool) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}],
        },
    }


def injected_context(proc: subprocess.CompletedProcess[str]) -> str | None:
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    if not proc.stdout.strip():
        return None
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert "decision" not in out
    return out["hookSpecificOutput"]["additionalContext"]


def all_learnings(home: Path) -> list[Any]:
    from recall_agent.learnings.store import open_store

    if not (home / "learnings.db").exists():
        return []
    with open_store(home) as store:
        return list(store.iter_all())


@contextmanager
def http_server(
    handler: Callable[[BaseHTTPRequestHandler, bytes], tuple[Any, ...]],
) -> Iterator[tuple[str, list[tuple[str, dict[str, str], bytes]]]]:
    """A real HTTP server on 127.0.0.1 yielding (base URL, received requests);
    `handler(request, body) -> (status, body, delay_s[, content type])` (JSON by default). HEAD gets 200."""
    received: list[tuple[str, dict[str, str], bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append((self.path, dict(self.headers), body))
            status, out, delay, *content_type = handler(self, body)
            if delay:
                threading.Event().wait(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type[0] if content_type else "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            except OSError:
                pass

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's naming)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
