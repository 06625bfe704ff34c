"""Helpers for the server tests: start a real `recall serve` process on a free 127.0.0.1 port.

Run as a script (`python tests/server_fixtures.py serve ARGS...`), this module is `recall serve` with
canned federation engines installed through the documented seam (`recall_agent.federation.use_engines`),
read from the JSON in $RECALL_TEST_FAKE_ENGINES: {"architecture": {"memgraph": [...], "repowise": [...]},
"antipatterns": {"qdrant": [...]}} (a missing engine name = that engine is absent).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

HERE = Path(__file__).resolve()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RunningServer:
    proc: subprocess.Popen
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.log().splitlines() if line.startswith("{")]

    def stop(self, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def start_server(
    tmp_path: Path,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    fake_engines: dict | None = None,
    wait: float = 30,
) -> RunningServer:
    port = free_port()
    full_env = {**os.environ, **(env or {})}
    if fake_engines is not None:
        cmd = [sys.executable, str(HERE), "serve"]
        full_env["RECALL_TEST_FAKE_ENGINES"] = json.dumps(fake_engines)
    else:
        cmd = [sys.executable, "-m", "recall_agent", "serve"]
    log_path = tmp_path / f"server-{port}.log"
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(
            [*cmd, "--port", str(port), *(args or [])],
            env=full_env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    server = RunningServer(proc, f"http://127.0.0.1:{port}", log_path)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"recall serve exited with {proc.returncode}:\n{server.log()}")
        try:
            if httpx.get(server.url + "/health", timeout=5).status_code in (200, 503):
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"recall serve did not answer within {wait}s:\n{server.log()}")


class TcpProxy:
    """A loopback TCP relay to a real server; `down()` drops the listener and every open connection,
    `up()` listens again on the same port — a network outage of the server behind it, for real."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self._socks: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            socks, self._socks = self._socks, []
        for sock in [listener, *socks]:
            if sock is None:
                continue
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                return
            upstream.settimeout(None)
            with self._lock:
                self._socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _fake_engines_main(argv: list[str]) -> int:
    from recall_agent import federation
    from recall_agent.models import BackendRole, FederationResult
    from recall_agent.server.main import main

    spec = json.loads(os.environ["RECALL_TEST_FAKE_ENGINES"])

    def make(answers: dict[str, list[str]]):
        def call(text: str, repo: str | None, roles: set[str], limit: int) -> list[FederationResult]:
            return [
                FederationResult(
                    content=f"{c} (repo={repo})", source=role, rank=i, content_hash="", engine="fake"
                )
                for role in sorted(roles)
                for i, c in enumerate(answers.get(role, [])[:limit])
            ]

        return call

    roles = {
        "architecture": frozenset({BackendRole.MEMGRAPH, BackendRole.REPOWISE}),
        "antipatterns": frozenset({BackendRole.QDRANT}),
    }
    engines = [federation.Engine(name, roles[name], make(spec[name])) for name in spec]
    with federation.use_engines(*engines):
        return main(argv)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    sys.exit(_fake_engines_main(sys.argv[2:]))
