"""A regex alternation shaped as a trie: `ab|ac|b` becomes `a(?:b|c)|b`. Python's engine tries each
alternative of a flat list at every position; grouped by first character it tries one. Linear: literals only."""

from __future__ import annotations

import re
from collections.abc import Callable


def trie(words: list[str], char: Callable[[str], str] = re.escape) -> str:
    """The alternation of `words` (each character spelled by `char`); a word that is a prefix of another
    still matches on its own."""
    by_first: dict[str, list[str]] = {}
    for w in words:
        by_first.setdefault(w[0], []).append(w[1:])
    parts = []
    for first, rests in sorted(by_first.items()):
        longer = [r for r in rests if r]
        tail = trie(longer, char) if longer else ""
        if len(longer) > 1 or (longer and "" in rests):
            tail = f"(?:{tail})"
        parts.append(char(first) + (tail + "?" if "" in rests and longer else tail))
    return "|".join(parts)
