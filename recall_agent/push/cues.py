"""What a long task text (an issue, a bug report) says about where the code is, beyond its words.

- `paths`: file paths it names (`astropy/io/fits/card.py`, a traceback's `File ".../site-packages/x/y.py"`),
  deepest traceback frame last;
- `modules`: dotted names that may be modules (`astropy.io.fits`, `from xarray.core import merge`);
- `identifiers`: names written as code (with an underscore or inner capitals, inside backticks and code
  blocks, or the attribute of a dotted name);
- `title`: the first line of three words or more (what a person would type at a prompt);
- `query`: the text's content words for the concept search, short: the title's, the identifiers', then the
  words the text repeats most (a long query matches everything and costs time).

Every pattern here is linear in its input; the text is cut at MAX_CHARS first.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter

MAX_CHARS = 20_000
QUERY_TERMS = 24
_TOKEN_SPLIT = re.compile(r"[\s\"'`(),;:<>\[\]{}=]+")
_FRAME = re.compile(r'File "([^"\n]{1,300})", line \d+')
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TICKS = re.compile(r"`([^`\n]{1,200})`")
_FENCE = re.compile(r"^[ \t]*```", re.M)
_NOT_NAMES = frozenset([*keyword.kwlist, "python", "self", "print", "True", "False", "None"])


def title(text: str) -> str:
    for raw in text.splitlines():
        line = raw.strip().lstrip("#").strip()
        if len(line.split()) >= 3:
            return line[:300]
    return text.strip()[:300]


def paths(text: str) -> list[str]:
    """File paths the text names, '/'-separated, traceback frames in their order (deepest last)."""
    text = text[:MAX_CHARS]
    out: list[str] = frames(text)
    for tok in _TOKEN_SPLIT.split(text):
        p = tok.replace("\\", "/").rstrip(".").lstrip("./")
        if p.endswith((".py", ".pyi")) and len(p) > 3 and p not in out:
            out.append(p)
    return out[:40]


def frames(text: str) -> list[str]:
    """The traceback frames' files, in order (the deepest last)."""
    return [m.group(1).replace("\\", "/").lstrip("./") for m in _FRAME.finditer(text[:MAX_CHARS])][:40]


def modules(text: str) -> list[str]:
    """Dotted names that may be modules or module.attribute, in order of first mention."""
    out: list[str] = []
    for m in _DOTTED.finditer(text[:MAX_CHARS]):
        name = m.group(0)
        if name.rsplit(".", 1)[-1] in ("py", "pyi", "com", "org", "io", "html", "txt", "rst"):
            continue
        if name not in out:
            out.append(name)
    return out[:40]


def _code_like(tok: str) -> bool:
    inner_caps = any(c.isupper() for c in tok[1:])
    return "_" in tok.strip("_") or (inner_caps and any(c.islower() for c in tok))


def code_spans(text: str) -> str:
    """The text inside backticks and fenced code blocks."""
    text = text[:MAX_CHARS]
    spans = [m.group(1) for m in _TICKS.finditer(text)]
    fences = [m.start() for m in _FENCE.finditer(text)]
    for a, b in zip(fences[::2], fences[1::2], strict=False):
        spans.append(text[a:b])
    return "\n".join(spans)


def identifiers(text: str) -> list[str]:
    """Names written as code: code-like anywhere, or any name of three letters or more inside code."""
    out: list[str] = []
    code = code_spans(text)
    for tok in _IDENT.findall(text[:MAX_CHARS]):
        if _code_like(tok) and tok not in out:
            out.append(tok)
    for tok in _IDENT.findall(code):
        if len(tok) > 2 and tok not in out and not tok.isupper() and tok not in _NOT_NAMES:
            out.append(tok)
    for name in modules(text):  # `xr.where`, `Quantity.to_value`: the attribute is a name too
        leaf = name.rsplit(".", 1)[-1]
        if len(leaf) > 2 and leaf not in out and leaf not in _NOT_NAMES:
            out.append(leaf)
    return out[:80]


def query(text: str, terms: list[str]) -> str:
    """A short query for the concept search: the title's content words, then the identifiers', then the
    most repeated (`terms`: the concept search's term splitter)."""
    picked: list[str] = []
    for word in [*terms(title(text)), *terms(" ".join(identifiers(text)[:20]))]:
        if word not in picked:
            picked.append(word)
    counts = Counter(terms(text[:MAX_CHARS]))
    for word, _ in counts.most_common():
        if len(picked) >= QUERY_TERMS:
            break
        if word not in picked:
            picked.append(word)
    return " ".join(picked[:QUERY_TERMS])
