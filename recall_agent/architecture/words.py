"""Words for concept search: identifiers split into words, a file's comments and docstrings.

`SecureCookieSessionInterface` → secure cookie session interface (and the joined `securecookiesessioninterface`
so a query naming the identifier still matches); `send_static_file` → send static file; `HTTPServer` → http
server. Every pattern here is linear in its input.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import filterfalse, islice
from operator import methodcaller
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Query

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ONE_CASE_PART = re.compile(r"[a-z]+|[0-9]+")
_COMMENT_TYPES = ("comment", "line_comment", "block_comment", "multiline_comment")
DOCS_MAX = 40_000  # characters of comments / docstrings kept per file
IDENTS_MAX = 4_000  # distinct identifier words kept per file
_BLOCK = 1 << 16  # characters of a large file read for identifiers at a time


def split_identifier(name: str) -> list[str]:
    """Lower-case words of one identifier (plus the whole identifier when it has several parts)."""
    return list(_split(name))


# the names of definitions (indexer._rows) and of questions; a file's identifiers go through _learn
@lru_cache(maxsize=1 << 17)
def _split(name: str) -> tuple[str, ...]:
    lower = name.lower()
    one_case = name.islower() or name.isupper()
    if one_case and lower.isalpha():  # one word (most of C's identifiers: `dev`, `NULL`)
        return (lower,) if len(lower) > 1 else ()
    # in one case the parts are the runs of letters and of digits (what _PART finds there)
    parts = _ONE_CASE_PART.findall(lower) if one_case else [p.lower() for p in _PART.findall(name)]
    words = [p for p in parts if len(p) > 1 or p.isdigit()]
    if len(parts) > 1:
        whole = lower.strip("_$")
        if whole.isidentifier():
            words.append(whole.replace("_", ""))
    return tuple(words)


def text_words(text: str) -> list[str]:
    """Every identifier-aware word of a free text (a question, a path), in order."""
    out: list[str] = []
    for m in _IDENTIFIER.finditer(text):
        out.extend(split_identifier(m.group(0)))
    return out


def path_words(path: str) -> str:
    """`src/flask/json/tag.py` → "src flask json tag" (the suffix is not a word about the file)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return " ".join(text_words(stem.replace("/", " ")))


def identifier_words(source: bytes) -> str:
    """The distinct words of every identifier in a file (each once: how often a local is used says little)."""
    # the words of each identifier as `_split` gives them, in order of first appearance, the first IDENTS_MAX.
    # Identifiers are found in C: every byte that cannot be in one becomes a space (bytes.translate) and the
    # runs are split (what _IDENTIFIER finds, but for a run's leading digits: `0x1F` holds `x1F`). Each run's
    # words come from a per-process table (`_RUN_WORDS`) filled for a file's new runs at once by a few passes
    # of C over them all (`_learn`): a Python call per identifier (`_split`) cost more than all the rest. A
    # large file is read in blocks cut at line ends (no identifier spans one) and no further once IDENTS_MAX
    # words are in (a generated header has 20,000 names).
    seen: dict[bytes, None] = {}
    start, size = 0, len(source)
    while start < size and len(seen) < IDENTS_MAX:
        end = (source.find(b"\n", start + _BLOCK) + 1 or size) if size - start > _BLOCK else size
        runs = dict.fromkeys(source[start:end].translate(_IDENT_BYTES).split())
        table = _RUN_WORDS
        if len(table) > RUN_WORDS_MAX:
            table.clear()
        if miss := list(filterfalse(table.__contains__, runs)):
            _learn(miss)
        seen.update(dict.fromkeys(b" ".join(map(table.__getitem__, runs)).split()))
        for letter in _LETTERS:  # one-letter parts are no words (`_split`); the table keeps them
            seen.pop(letter, None)
        start = end
    return b" ".join(islice(seen, IDENTS_MAX)).decode()


# bytes that can be part of an identifier (_IDENTIFIER) kept, every other byte a space
_IDENT_BYTES = bytes(
    c if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_$") else 32 for c in range(256)
)
_NO_LEADING_DIGITS = methodcaller("lstrip", b"0123456789")
_STRIP_ENDS = methodcaller("strip", b"_$")
_LETTERS = tuple(bytes([c]) for c in range(ord("a"), ord("z") + 1))
# _PART over runs joined by line ends (each run's parts, then a line end); the same matches as _PART:
# an upper-case letter then lower-case ones, or upper-case ones up to (not including) one that starts a word
_RUN_PARTS = re.compile(rb"[a-z]+|[0-9]+|\n|[A-Z](?:[a-z]+|[A-Z]*(?![a-z]))")
_NOT_A_WHOLE = re.compile(rb"(?m)^[0-9]|\$")  # a run whose joined form is no identifier (`_split`'s test)
_RUN_WORDS: dict[bytes, bytes] = {}  # run -> its words, space separated, as `_learn` gives them
RUN_WORDS_MAX = 1 << 18  # runs kept per process (emptied when full: the kernel has millions)


def _learn(runs: list[bytes]) -> None:
    """Put each run's words in `_RUN_WORDS`: its parts (lower case) then its joined form, all runs at once.

    Once de-duplicated in order (identifier_words), and without one-letter words, these are `_split`'s words:
    it keeps a part of one letter only when a digit, and adds the joined form only when there are several
    parts and it is an identifier; a one-part run's joined form is that part (or one letter, or no
    identifier), so adding it to every run changes nothing once de-duplicated."""
    joined = b"\n".join(map(_NO_LEADING_DIGITS, runs))
    parts = b" ".join(_RUN_PARTS.findall(joined)).lower().split(b"\n")
    wholes = b"\n".join(map(_STRIP_ENDS, joined.lower().split(b"\n")))
    if _NOT_A_WHOLE.search(wholes):  # `$` inside, or a digit first once `_` is stripped (`_1a`): rare
        wholes = b"\n".join(b"" if w[:1].isdigit() or b"$" in w else w for w in wholes.split(b"\n"))
    words = map(b" ".join, zip(parts, wholes.replace(b"_", b"").split(b"\n"), strict=True))
    _RUN_WORDS.update(zip(runs, words, strict=True))


def _comment_patterns(lang: str) -> list[str]:
    from recall_agent.architecture.languages import grammar

    language = grammar(lang)
    patterns = [f"({k}) @doc" for k in _COMMENT_TYPES if language.id_for_node_kind(k, True)]
    if lang == "python":
        patterns.append("(expression_statement (string) @doc)")
    return patterns


@cache
def _comments_query(lang: str) -> Query | None:
    from tree_sitter import Query

    from recall_agent.architecture.languages import grammar

    patterns = _comment_patterns(lang)
    return Query(grammar(lang), "\n".join(patterns)) if patterns else None


def text_patterns(lang: str) -> list[str]:
    """Query patterns capturing a language's comments and docstrings (@doc) and string literals (@s): the
    extractor appends them to its definitions query, so one walk of the tree reads all three."""
    from recall_agent.architecture import messages

    return _comment_patterns(lang) + messages.string_patterns(lang)


def comments(lang: str, source: bytes, root: Node, nodes: list | None = None) -> str:
    """Comments and docstrings of a parsed file, in order, capped at DOCS_MAX characters. `nodes`: the
    file's @doc captures when the caller ran the query already (extract.py)."""
    from tree_sitter import QueryCursor

    if nodes is None:
        query = _comments_query(lang)
        if query is None:
            return ""
        nodes = QueryCursor(query).captures(root).get("doc", [])
    out: list[str] = []
    size = 0
    for node in sorted(nodes, key=lambda n: n.start_byte):
        text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
        out.append(text)
        size += len(text)
        if size >= DOCS_MAX:
            break
    return "\n".join(out)[:DOCS_MAX]
