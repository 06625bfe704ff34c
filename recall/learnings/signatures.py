"""Error-signature normalization and fingerprinting (first cut; refined in a later commit)."""

from __future__ import annotations

import hashlib
import re

NORMALIZER_VERSION = 1

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*/)+([\w.-]+)")
_NUM = re.compile(r"\b\d+\b")


def normalize(text: str) -> str:
    text = _ANSI.sub("", text)
    text = _PATH.sub(r"\1", text)
    text = _NUM.sub("<int>", text)
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def fingerprint(text: str) -> str:
    return hashlib.sha256(normalize(text).encode()).hexdigest()[:32]


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|<\w+>")


def tokens(normalized: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(normalized)]
