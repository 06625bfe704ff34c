"""Who is asking for a review page, and whether a form really came from one.

- A script sends `Authorization: Bearer <token>` on any /ui/ request (the API's tokens and scopes).
- A browser signs in once with its token at /ui/login and gets a session cookie: HttpOnly, SameSite=Strict,
  Path=/ui, valid SESSION_HOURS. The cookie holds the token's name, an expiry and an HMAC of both under a
  key derived from the server's secret and the token's hash: nothing secret is in it, it works across
  `--workers` processes, and it dies with the token (a token removed from the token file signs nothing).
- A server without tokens (loopback only) has one open principal; its pages still carry CSRF tokens, and
  they answer only loopback Host headers (a rebinding DNS name cannot reach them).
- Every form carries a CSRF token bound to the session (or to the open principal); a POST without the
  right one is refused, and so is one whose Origin is not this server. A Bearer request needs none: no
  browser sends that header on its own.

The server's secret is `$RECALL_HOME/ui-secret` (32 random bytes, mode 0600, made on first use).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from recall_agent.config import recall_home
from recall_agent.server.auth import ALL_REPOS, SCOPES, Principal, authenticate

COOKIE = "recall_ui"
LOGIN_COOKIE = "recall_ui_login"
SESSION_HOURS = 12
SECRET_FILE = "ui-secret"
OPEN = Principal("anonymous (no tokens configured)", b"", SCOPES, frozenset({ALL_REPOS}))
_secret_cache: dict[Path, bytes] = {}


def server_secret(home: Path | None = None) -> bytes:
    path = (home or recall_home()) / SECRET_FILE
    cached = _secret_cache.get(path)
    if cached:
        return cached
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    if len(data) < 32:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        data = path.read_bytes()
    _secret_cache[path] = data
    return data


def _key(secret: bytes, principal: Principal) -> bytes:
    return hmac.new(
        secret, b"recall-ui\x00" + principal.digest + principal.name.encode(), hashlib.sha256
    ).digest()


def _sign(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def session_cookie(secret: bytes, principal: Principal, now: float | None = None) -> str:
    expiry = int((now or time.time()) + SESSION_HOURS * 3600)
    body = f"{_b64(principal.name)}.{expiry}"
    return f"{body}.{_sign(_key(secret, principal), body)}"


def from_cookie(
    value: str | None, secret: bytes, principals: list[Principal], now: float | None = None
) -> Principal | None:
    """The principal a session cookie names, if its signature holds and it has not expired."""
    if not value or value.count(".") != 2:
        return None
    name_part, expiry, sig = value.split(".")
    try:
        name = _unb64(name_part)
        if int(expiry) < (now or time.time()):
            return None
    except ValueError:
        return None
    body = f"{name_part}.{expiry}"
    found = None
    for principal in principals:  # every comparison is made
        if principal.name == name and hmac.compare_digest(_sign(_key(secret, principal), body), sig):
            found = principal
    return found


def csrf_token(secret: bytes, principal: Principal, cookie: str | None) -> str:
    """The token every form of this session carries (the open principal's when no tokens exist)."""
    return _sign(_key(secret, principal), "csrf\x00" + (cookie or ""))[:40]


def login_csrf(secret: bytes, nonce: str) -> str:
    return _sign(secret, "login\x00" + nonce)[:40]


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))


@dataclass(frozen=True)
class Visitor:
    """Who is asking: the principal, how they signed in (bearer / cookie / open), the cookie value."""

    principal: Principal
    via: str
    cookie: str | None = None

    def repos(self) -> frozenset[str] | None:
        """The repositories this visitor may see (None: every one)."""
        return None if self.principal.unrestricted else self.principal.repos


def bearer(authorization: str | None, principals: list[Principal]) -> Principal | None:
    return authenticate(authorization, principals)


def origin_ok(origin: str | None, host: str | None) -> bool:
    """A browser's Origin (when it sends one) names this server."""
    if not origin:
        return True
    if origin == "null" or not host:
        return False
    return urlsplit(origin).netloc.lower() == host.lower()


def loopback_host(host: str | None) -> bool:
    if not host:
        return False
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return name.strip("[]").lower() in ("127.0.0.1", "localhost", "::1") or name.startswith("127.")
