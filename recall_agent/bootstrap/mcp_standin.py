"""An MCP stdio server that stands in for `recall mcp` while the plugin's recall is still being set up.

Claude Code starts a plugin's MCP servers when a session starts, which on first use is before recall's
environment exists; a server that fails or does not answer within 30 s is then skipped for 15 minutes
(Claude Code 2.1.332 marks it "needs auth"). So, instead of failing, `bin/recall mcp` answers the
handshake itself (no tools yet, `tools.listChanged`), and once the build is done it starts the real
`recall mcp`, replays the client's `initialize` to it, and from then on only copies bytes both ways; it
tells the client `notifications/tools/list_changed`, so the client lists recall's tools again.

Messages are JSON-RPC 2.0, one per line (the MCP stdio transport). Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

HANDOVER_ID = "recall-standin-handover"
NOT_FOUND = -32601


class StandIn:
    def __init__(self, command: list, ready: Callable[[], bool], version: str) -> None:
        self.command = command
        self.ready = ready
        self.version = version
        self.initialize: dict | None = None  # the client's initialize request, replayed to the real server
        self.child: subprocess.Popen | None = None

    def send(self, message: dict) -> None:
        _write_all(1, (json.dumps(message) + "\n").encode())

    def answer(self, message: dict) -> None:
        """Answer one client message while recall is not ready."""
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            return  # a notification (initialized, cancelled …): nothing to say
        if method == "initialize":
            self.initialize = message
            params = message.get("params") or {}
            result = {
                "protocolVersion": params.get("protocolVersion") or "2025-06-18",
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "recall", "version": self.version},
                "instructions": "recall is setting itself up; its tools appear when that is done.",
            }
            self.send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "tools/list":
            self.send({"jsonrpc": "2.0", "id": ident, "result": {"tools": []}})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": ident, "result": {}})
        else:  # server/discover (the newer handshake) and anything else: not here yet
            error = {"code": NOT_FOUND, "message": f"{method}: recall is still setting itself up"}
            self.send({"jsonrpc": "2.0", "id": ident, "error": error})

    def hand_over(self, pending: bytes) -> None:
        """Start the real server, replay the handshake, then copy both ways until either side closes."""
        child = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.child = child
        assert child.stdin is not None and child.stdout is not None
        if self.initialize is not None:
            replay = dict(self.initialize, id=HANDOVER_ID)
            child.stdin.write((json.dumps(replay) + "\n").encode())
            child.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        child.stdin.write(pending)
        child.stdin.flush()
        threading.Thread(target=self._client_to_child, daemon=True).start()
        for line in child.stdout:
            if self.initialize is not None and HANDOVER_ID.encode() in line and _id_of(line) == HANDOVER_ID:
                self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                continue
            _write_all(1, line)
        child.wait()

    def _client_to_child(self) -> None:
        assert self.child is not None and self.child.stdin is not None
        with contextlib.suppress(OSError):
            while True:
                chunk = os.read(0, 65536)
                if not chunk:
                    break
                self.child.stdin.write(chunk)
                self.child.stdin.flush()
        with contextlib.suppress(OSError):
            self.child.stdin.close()

    def serve(self) -> int:
        """Answer until recall is ready (then hand over) or the client goes away."""
        buffered = b""
        while True:
            if self.ready():
                self.hand_over(buffered)
                return self.child.returncode if self.child else 0
            readable, _, _ = select.select([0], [], [], 0.5)
            if not readable:
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                return 0
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                message = _parse(line)
                if message is not None:
                    self.answer(message)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _parse(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _id_of(line: bytes) -> object:
    message = _parse(line.strip())
    return message.get("id") if message else None


def run(command: list, ready: Callable[[], bool], version: str) -> int:
    stand_in = StandIn(command, ready, version)

    def stop(signum: int, frame: object) -> None:
        if stand_in.child is not None and stand_in.child.poll() is None:
            stand_in.child.terminate()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return stand_in.serve()
