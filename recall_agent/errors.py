"""Failures in words for people: `describe(exc)` says what went wrong without a Python class name
(stdlib only: any layer may import it)."""

from __future__ import annotations

_PLAIN = {
    "TimeoutError": "timed out",
    "ConnectionRefusedError": "connection refused",
    "ConnectionResetError": "connection reset",
    "ConnectionError": "connection failed",
    "PermissionError": "permission denied",
    "FileNotFoundError": "no such file or folder",
    "MemoryError": "out of memory",
    "RecursionError": "too deeply nested",
}
MAX_CHARS = 400


def describe(exc: BaseException) -> str:
    """What failed, as one line: the error's own message, else a plain phrase for its kind."""
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror + (f": {exc.filename}" if exc.filename else "")
    else:
        lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
        text = "; ".join(lines[:3])
        if isinstance(exc, KeyError) and text:
            text = f"missing key {text}"
    if not text:
        text = next((v for k, v in _PLAIN.items() if any(c.__name__ == k for c in type(exc).__mro__)), "")
    return (text or "unexpected failure")[:MAX_CHARS]
