"""Candidate keys: the decisive parts of a normalized error signature as 64-bit integers, so a store can find
the learnings that share them by equality on a B-tree (a handful of index entries per key) instead of
ranking a full-text match over every row that holds a common word.

Three kinds, each hashed with its kind so they never collide with one another:
- LINE: a line of the signature without markers and tool prefixes (`features._core`): the same message
  again, even when the other lines (a chained exception, a context line) differ, so the fingerprint does not.
- SLOT: a cause line's template with one decisive value in its slot (`KeyError: <v>` + `user_id`): the same
  message about the same name, whatever else the line says.
- TEMPLATE: the cause line with its decisive values taken out: the same kind of message (another key, another
  module). Common by nature (every KeyError shares one), so a store reads only the first few of them, and
  only when the more specific keys found little.

The rare words of a signature stay with the full-text index (`signature_terms` counts them): a store asks it
only for words rare enough to read a bounded number of entries (pg_store.FT_MAX_DF).
"""

from __future__ import annotations

import hashlib
from typing import Literal, NamedTuple

from recall_agent.learnings import features as feats
from recall_agent.learnings import signatures as sigs

Kind = Literal["line", "slot", "template"]
KINDS: tuple[Kind, ...] = ("line", "slot", "template")  # most specific first: the order a query reads them
MAX_SLOTS = 4  # decisive values per line that get a key of their own
SLOT = "<v>"


class Key(NamedTuple):
    kind: Kind
    value: int  # signed 64-bit (a PostgreSQL bigint)


def key_of(text: str) -> int:
    """The first 64 bits of md5(text) as a signed integer: PostgreSQL computes the same with
    `('x' || left(md5(text), 16))::bit(64)::bigint` (pg_store's recall_key()), so SQL can make keys too."""
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[:8], "big", signed=True)


def _hash(kind: str, text: str) -> int:
    return key_of(f"{kind}:{text}")


def template(line: str) -> tuple[str, list[str]]:
    """A cause line's template (decisive values replaced by <v>, lowercased) and those values (bare)."""
    line = line.removeprefix(sigs.FALLBACK)
    prefix = feats._TYPE_PREFIX.match(line)  # the exception type or tool code is wording, not a value
    words = [prefix.group(0).strip().lower()] if prefix else []
    slots: list[str] = []
    for word, quoted in feats._chunks(line[prefix.end() :] if prefix else line):
        if feats._decisive(word, quoted):
            words.append(SLOT)
            slots.append(feats._bare(word))
        else:
            words.append(word.lower())
    return " ".join(words), [s for s in dict.fromkeys(slots) if s][:MAX_SLOTS]


def keys_of(normalized: str) -> list[Key]:
    """The distinct candidate keys of a normalized signature, most specific kind first."""
    # the lines features.Query reads (without building one: a bulk load keys a million signatures)
    lines = [ln for ln in normalized.split("\n") if ln]
    causes = [ln for ln in lines if not ln.startswith(("at ", sigs.CONTEXT))]
    noise = bool(causes) and all(c.startswith(sigs.FALLBACK) for c in causes)
    # the lines the full-text path searches (features.Query.terms): the cause lines, or every line of a
    # text without an error line; a shared context line (`+ `: a hint, a summary) is no evidence of one cause
    searched = [c.removeprefix(sigs.FALLBACK) for c in causes]
    if noise:
        searched += [ln[len(sigs.CONTEXT) :] for ln in lines if ln.startswith(sigs.CONTEXT)]
    out: dict[Key, None] = {}
    for line in searched:
        core = feats._core(line)
        if core:
            out[Key("line", _hash("line", core))] = None
    if not noise:  # a text without an error line has no message to take a template of
        for line in causes:
            shape, slots = template(line)
            if SLOT not in shape:
                continue  # no value in it: the line key says the same
            for value in slots:
                out[Key("slot", _hash("slot", f"{shape}\0{value}"))] = None
            out[Key("template", _hash("template", shape))] = None
    return sorted(out, key=lambda k: KINDS.index(k.kind))


def repo_key(repo: str) -> int:
    return key_of(f"repo:{repo}")


def path_keys(paths: list[str], bases: list[str]) -> list[int]:
    """Keys of file paths touched and of their basenames (records.path_basename): a context query asks
    for learnings of a repository by either, newest first."""
    return list(dict.fromkeys([key_of(f"path:{p}") for p in paths] + [key_of(f"base:{b}") for b in bases]))
