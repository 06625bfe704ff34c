"""Passwords in URLs and URL-like paths: `scheme://user:PASSWORD@host`, `//svc:PASSWORD@fs01/share` (a
mount or smbclient error), `redis://:PASSWORD@host`, and `user:PASSWORD@host` with no scheme (ssh, scp).
The user and the host are kept; only the password is replaced."""

from __future__ import annotations

import re
from collections.abc import Iterator

from recall_agent.redact.finding import Finding
from recall_agent.redact.values import PLACEHOLDER_MARK

# `//user:password@host` with or without a scheme before it; the password runs to the last `@` before the
# host (`bria@pass135!` is one password)
_AUTHORITY = re.compile(
    r"//([^\s/:@'\"<>]{0,64}):([^\s/'\"<>]{1,200})@(?=[^\s@/'\"<>]{1,253}(?:[/:?#\s'\"]|$))"
)
# `user:password@host` with no `//`: the host is a name followed by a dot, a slash, a colon or the end
_USERINFO = re.compile(r"(?<![\w.+/:@%-])([\w.+-]{1,64}):([^\s@/:'\"<>]{1,200})@(?=[\w-]+(?:[./:\s'\"]|$))")
_NOT_USERS = frozenset({"mailto", "sip", "sips", "tel", "xmpp", "news", "urn", "data", "file"})
_VERSIONISH = re.compile(r"v?\d+(?:\.\d+)*[\w.-]*")
_DIGEST_HOST = re.compile(r"(?:sha|md)\d+:")


def _is_password(password: str, text: str, at: int) -> bool:
    if PLACEHOLDER_MARK in password or password.isdigit():  # host:port@ is never a password here
        return False
    if password.startswith(("$", "{", "%(", "<")):  # templates: `{user}:{pw}@{host}`
        return False
    return not _DIGEST_HOST.match(text, at)  # `image:tag@sha256:…` is a digest, not a login


def find(text: str) -> Iterator[Finding]:
    if "@" not in text:
        return
    for m in _AUTHORITY.finditer(text):
        if _is_password(m.group(2), text, m.end()):
            yield Finding(m.start(2), m.end(2), "password", "url-userinfo")
    for m in _USERINFO.finditer(text):
        user, password = m.group(1), m.group(2)
        if user.lower() in _NOT_USERS or _VERSIONISH.fullmatch(password):
            continue
        if _is_password(password, text, m.end()):
            yield Finding(m.start(2), m.end(2), "password", "userinfo")
