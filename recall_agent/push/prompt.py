"""Does a prompt read as a task? Checked before anything else is imported (the hook's common path).

A task has three words or more that are not all acknowledgements ("yes", "continue", "thanks", "ok go on"),
and is not a slash command, a `!` shell line or a `#` memory line.
"""

from __future__ import annotations

import re

_ACK_WORDS = (
    "yes y yep yeah ok okay k sure no nope continue go on proceed thanks thank you thx ty great good nice"
    " cool perfect done lgtm please do it again retry stop wait next right correct fine sounds"
)
_ACKS = frozenset(_ACK_WORDS.split(" "))
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def reads_as_task(prompt: str) -> bool:
    """A task ("fix the typo in place_order"), not an acknowledgement, a continuation or a slash command."""
    text = prompt.strip()
    if not text or text.startswith(("/", "!", "#")) or len(text) > 20_000:
        return False
    words = [w.lower() for w in _WORD.findall(text[:2000])]
    if len(words) < 3:
        return False
    return not all(w in _ACKS for w in words)
