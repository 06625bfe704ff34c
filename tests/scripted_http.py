"""What the scripted model APIs (tests/claude_fixtures.py, tests/codex_fixtures.py) share: a threaded HTTP
server on 127.0.0.1, and answering with JSON or with server-sent events."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def body(self) -> tuple[bytes, dict[str, Any]]:
        """The request's bytes and its JSON object ({} when it is not one)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        if self.headers.get("Content-Encoding") == "zstd":
            import zstandard

            raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            data = {}
        return raw, data if isinstance(data, dict) else {}

    def send_json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def send_events(self, events: bytes) -> None:
        """A `text/event-stream` answer, then the connection is closed (the stream's end)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(events)
        self.wfile.flush()
        self.close_connection = True


def sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop(server: ThreadingHTTPServer | None) -> None:
    if server is not None:
        server.shutdown()
        server.server_close()


class ScriptedAPI:
    """A scripted model API's state (tests/claude_fixtures.py's Messages API, tests/codex_fixtures.py's
    Responses API): its turns, the requests it answered, the errors its turns raised, and its server."""

    URL_PATH = ""  # appended to the server's address in `url`

    def __init__(self, script: Iterable[Any], fallback: str = "Done.") -> None:
        self.script = list(script)
        self.fallback = fallback
        self.requests: list[Any] = []
        self.errors: list[str] = []  # exceptions raised by scripted turns
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.URL_PATH}"

    @property
    def main_requests(self) -> list[Any]:
        return [r for r in self.requests if r.main]

    def next_turn(self) -> tuple[int, Any | None]:
        """The number of main requests answered so far and the scripted turn for the next one (None past
        the script's end: the fallback answers)."""
        with self._lock:
            n = sum(1 for r in self.requests if r.main)
            return n, self.script[n] if n < len(self.script) else None

    def __exit__(self, *exc: object) -> None:
        stop(self._server)
