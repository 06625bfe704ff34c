"""Fixtures for the client tests: a real HTTP server on 127.0.0.1 and the seed's example responses.

The server's behaviour is chosen by the first path segment of the URL the client is pointed at:
  /ok/...       200 with the seed's example response for that node (learnings or federation)
  /empty/...    200 with a valid empty response
  /garbage/...  200 with a body that is not JSON
  /html/...     502 with an HTML error page
  /html200/...  200 with an HTML page (a proxy's login page, say)
  /notobject/.. 200 with a JSON list
  /slow/...     sleeps 12 s before answering (longer than the 10 s budget)
Every POST body is recorded (parsed JSON) in `server.requests` as (path, body).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from recall_agent.config import DEFAULT_FEDERATION_PATH as FEDERATION_PATH
from recall_agent.config import DEFAULT_RETRIEVAL_PATH as LEARNINGS_PATH

SAMPLES = json.loads((Path(__file__).parent / "golden" / "samples.json").read_text(encoding="utf-8"))
SEED = {"learnings": SAMPLES["seed_learnings"], "federation": SAMPLES["seed_federation"]}
EMPTY = SAMPLES["empty"]
HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


class RecordingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, object]] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url(self, mode: str, node: str) -> str:
        return f"{self.base}/{mode}{LEARNINGS_PATH if node == 'learnings' else FEDERATION_PATH}"


class _Handler(BaseHTTPRequestHandler):
    server: RecordingServer

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: str, content_type: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body: object = json.loads(raw)
        except ValueError:
            body = raw
        self.server.requests.append((self.path, body))
        mode = self.path.split("/")[1]
        node = "learnings" if self.path.endswith(LEARNINGS_PATH) else "federation"
        if mode == "slow":
            time.sleep(12)
            self._send(200, json.dumps(EMPTY[node]), "application/json")
        elif mode == "ok":
            self._send(200, json.dumps(SEED[node]), "application/json")
        elif mode == "empty":
            self._send(200, json.dumps(EMPTY[node]), "application/json")
        elif mode == "garbage":
            self._send(200, '{"matches": [tru', "application/json")
        elif mode == "html":
            self._send(502, HTML_PAGE, "text/html")
        elif mode == "html200":
            self._send(200, HTML_PAGE, "text/html")
        elif mode == "notobject":
            self._send(200, "[1, 2]", "application/json")
        else:
            self._send(404, '{"detail": "no such mode"}', "application/json")


@pytest.fixture
def http_backend() -> Iterator[RecordingServer]:
    server = RecordingServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """An empty git repository named like the seed's example repo."""
    repo = tmp_path / "omnibase_infra"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


@pytest.fixture
def client_env(tmp_path: Path, subprocess_env: dict[str, str]) -> dict[str, str]:
    """Environment for a recall subprocess: no Claude transcripts of the developer's machine."""
    env = dict(subprocess_env)
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-config")
    env.pop("CLAUDE_SESSION_ID", None)
    return env
