"""ASGI middleware of `recall serve`: JSON access log, bearer auth + scopes, request body limits.

Pure ASGI (no Starlette BaseHTTPMiddleware), so a refused request never reaches FastAPI and costs
nothing: an over-size body is refused from its Content-Length before a byte of it is read, and a client
that trickles its body is cut off after `body_timeout` seconds with a 408.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from recall_agent.config import DEFAULT_FEDERATION_PATH, DEFAULT_RETRIEVAL_PATH
from recall_agent.server.auth import Principal, authenticate

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LEARNINGS_PATH = "/v1/learnings"
OUTCOMES_PATH = "/v1/learnings/outcomes"
MCP_PATH = "/mcp"
# (method, path) -> the scope a token needs; anything else (health, OpenAPI) is open
ROUTE_SCOPES: dict[tuple[str, str], str] = {
    ("POST", DEFAULT_RETRIEVAL_PATH): "read",
    ("POST", DEFAULT_FEDERATION_PATH): "read",
    ("POST", LEARNINGS_PATH): "write",
    ("POST", OUTCOMES_PATH): "write",
}
# every request to /mcp needs a valid token; each MCP tool checks its own scope (recall_agent.mcp.team)
ANY_SCOPE = "any"


def needed_scope(method: str, path: str) -> str | None:
    if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
        return ANY_SCOPE
    return ROUTE_SCOPES.get((method, path))


access_log = logging.getLogger("recall_agent.server.access")


async def send_json(
    send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class AccessLog:
    """One JSON line per request: method, path (no query string), status, bytes, ms, client, token name.

    Never bodies, headers or query strings, so nothing a client sends can leak into the log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not access_log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)  # not logged (--log-level warning): no per-request work
            return
        t0 = time.perf_counter()
        state = {"status": 500, "bytes": 0}

        async def logging_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
            elif message["type"] == "http.response.body":
                state["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, logging_send)
        finally:
            principal = scope.get("state", {}).get("principal")
            client = scope.get("client")
            access_log.info(
                "access",
                extra={
                    "fields": {
                        "method": scope["method"],
                        "path": scope["path"],
                        "status": state["status"],
                        "bytes": state["bytes"],
                        "ms": round((time.perf_counter() - t0) * 1000, 2),
                        "client": client[0] if client else None,
                        "token": principal.name if principal else None,
                    }
                },
            )


class Guard:
    """Bearer auth with scopes (when tokens are configured) and body size/time limits on every POST."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        principals: list[Principal],
        require_auth: bool,
        max_body: int,
        body_timeout: float,
    ) -> None:
        self.app, self.principals, self.require_auth = app, principals, require_auth
        self.max_body, self.body_timeout = max_body, body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        needed = needed_scope(scope["method"], scope["path"])
        if needed and self.require_auth and not await self._authorize(scope, send, needed):
            return
        if scope["method"] in ("POST", "PUT", "PATCH"):
            body = await self._read_body(scope, receive, send)
            if body is None:
                return
            receive = replay({"type": "http.request", "body": body, "more_body": False}, receive)
            if needed and needed != ANY_SCOPE:
                _as_json(scope)
        await self.app(scope, receive, send)

    async def _authorize(self, scope: Scope, send: Send, needed: str) -> bool:
        header = _header(scope, b"authorization")
        principal = authenticate(header, self.principals)
        if principal is None:
            reason = "missing Authorization: Bearer <token>" if not header else "invalid bearer token"
            await send_json(send, 401, f"unauthorized: {reason}", [(b"www-authenticate", b"Bearer")])
            return False
        scope.setdefault("state", {})["principal"] = principal
        if needed != ANY_SCOPE and not principal.may(needed):
            await send_json(send, 403, f"forbidden: token '{principal.name}' lacks the '{needed}' scope")
            return False
        return True

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await send_json(send, 400, "bad Content-Length header")
                return None
            if int(declared) > self.max_body:
                await send_json(send, 413, self._too_large(int(declared)))
                return None
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.body_timeout) as timer:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    await send_json(send, 413, self._too_large(size, at_least=True))
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        assert timer.cancel_called
        await send_json(
            send, 408, f"request body not received within {self.body_timeout:g}s (client too slow)"
        )
        return None

    def _too_large(self, size: int, at_least: bool = False) -> str:
        got = f"{'more than ' if at_least else ''}{size} bytes"
        return f"request body too large: {got}, the limit is {self.max_body} bytes"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _as_json(scope: Scope) -> None:
    """The API takes JSON only: read the body as JSON whatever Content-Type says (curl -d sends a form type)."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-type"]
    scope["headers"] = [*headers, (b"content-type", b"application/json")]


def replay(message: Message, receive: Receive) -> Receive:
    """`receive` that gives `message` (a body already read) first."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return message
        return await receive()

    return replayed


class JsonLogFormatter(logging.Formatter):
    """Log records as one JSON object per line; `extra={"fields": {...}}` adds keys."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(entry, default=str)
