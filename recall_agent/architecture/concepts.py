"""Concept search: "where are session cookies signed" → the files and symbols about it, best first.

Each file is indexed (SQLite FTS5, porter stemming) with four fields: the words of its path, the split names
of its definitions, its comments and docstrings, and the distinct words of its identifiers. Each symbol is
indexed with its split name and first doc line. A question is reduced to its content words (identifier
aware), files are ranked by BM25 over the weighted fields plus the best symbol match inside them, and the
package's own source is preferred over tests, examples, docs and legacy copies (`choice.py`).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from recall_agent.architecture import choice, words

# field weights for bm25(file_text, path, defs, docs, idents)
FILE_WEIGHTS = (4.0, 3.0, 1.0, 0.5)
SYMBOL_WEIGHTS = (3.0, 1.0)
SYMBOL_SHARE = 0.5  # how much the best symbol match adds to its file's score
CANDIDATES = 60
STOP = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "by",
        "can",
        "code",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "during",
        "for",
        "from",
        "get",
        "gets",
        "got",
        "handle",
        "handled",
        "handles",
        "happen",
        "happens",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "inside",
        "into",
        "is",
        "it",
        "its",
        "logic",
        "located",
        "lives",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "out",
        "part",
        "please",
        "should",
        "so",
        "some",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "up",
        "use",
        "used",
        "uses",
        "using",
        "via",
        "want",
        "was",
        "way",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "within",
        "would",
        "you",
        "your",
        "implemented",
        "implementation",
        "defined",
        "definition",
        "find",
        "show",
    ]
)


@dataclass
class Hit:
    file_id: int
    path: str
    score: float
    doc: str = ""
    symbols: list[str] = field(default_factory=list)  # best matching definitions, best first
    matched: list[str] = field(default_factory=list)  # question words found in the file


# --------------------------------------------------------------------------- index side


def file_text(path: str, facts: object, symbol_words: list[str]) -> tuple[str, str, str, str]:
    """A file's concept row: its path's words, its definitions' words, its docs, its identifier words."""
    docs = "\n".join(filter(None, [getattr(facts, "doc", ""), getattr(facts, "comments", "")]))
    return words.path_words(path), " ".join(symbol_words), docs, getattr(facts, "idents", "")


def store(
    conn: sqlite3.Connection,
    file_id: int,
    text: tuple[str, str, str, str],
    symbols: Iterable[tuple[int, str, str]],
) -> None:
    """Write a file's concept row and its symbols' (symbol id, name words, doc); old rows are gone."""
    conn.execute(
        "INSERT INTO file_text(rowid, path, defs, docs, idents) VALUES (?,?,?,?,?)", (file_id, *text)
    )
    conn.executemany("INSERT INTO symbol_text(rowid, words, doc) VALUES (?,?,?)", symbols)


# --------------------------------------------------------------------------- query side


def terms(question: str) -> list[str]:
    """Content words of a question, identifier-aware, in order, without question and filler words."""
    out: list[str] = []
    for word in words.text_words(question):
        if word not in STOP and word not in out and (len(word) > 2 or word.isdigit()):
            out.append(word)
    return out


def _match(terms_: list[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms_)


def search(conn: sqlite3.Connection, question: str, limit: int = 5, min_share: float = 0.5) -> list[Hit]:
    """Files about the question, best first (empty when it has no content words or nothing matches); a file
    must carry at least `min_share` of the question's words (a long text's words are never all in one
    file: its callers pass less)."""
    wanted = terms(question)
    if not wanted:
        return []
    expr = _match(wanted)
    weights = ",".join(str(w) for w in FILE_WEIGHTS)
    rows = conn.execute(
        f"SELECT t.rowid, -bm25(file_text, {weights}) AS score, f.path, f.doc, f.is_test FROM file_text t"
        f" JOIN files f ON f.id = t.rowid WHERE file_text MATCH ? ORDER BY bm25(file_text, {weights})"
        f" LIMIT {CANDIDATES}",
        (expr,),
    ).fetchall()
    if not rows:
        return []
    best_symbols = _symbol_matches(conn, expr, {r[0] for r in rows})
    asks_tests = any(w.startswith("test") for w in wanted)
    hits = []
    for fid, score, path, doc, is_test in rows:
        syms = best_symbols.get(fid, [])
        total = score + SYMBOL_SHARE * (syms[0][1] if syms else 0.0)
        total *= choice.weight(path, bool(is_test), asks_tests)
        hits.append(Hit(fid, path, total, doc, [name for name, _ in syms[:3]]))
    hits.sort(key=lambda h: (-h.score, h.path))
    hits = hits[: limit * 3]
    # a file about the question carries at least half of its words ("make coffee" is not about make_order)
    need = math.ceil(len(wanted) * min_share)
    if not need:
        return hits[:limit]  # no filter: which words each file carries is not looked up (a query per word)
    _fill_matched(conn, wanted, hits)
    return [h for h in hits if len(h.matched) >= need][:limit]


def _symbol_matches(
    conn: sqlite3.Connection, expr: str, files: set[int]
) -> dict[int, list[tuple[str, float]]]:
    """Per file: its definitions matching the question, best first, with their scores."""
    weights = ",".join(str(w) for w in SYMBOL_WEIGHTS)
    out: dict[int, list[tuple[str, float]]] = {}
    for file_id, qualname, score in conn.execute(
        f"SELECT s.file_id, s.qualname, -bm25(symbol_text, {weights}) FROM symbol_text t"
        f" JOIN symbols s ON s.id = t.rowid WHERE symbol_text MATCH ? ORDER BY bm25(symbol_text, {weights})"
        " LIMIT 400",
        (expr,),
    ):
        if file_id in files:
            out.setdefault(file_id, []).append((qualname, score))
    return out


def _fill_matched(conn: sqlite3.Connection, wanted: list[str], hits: list[Hit]) -> None:
    if not hits:
        return
    ids = [h.file_id for h in hits]
    marks = ",".join("?" * len(ids))
    by_id = {h.file_id: h for h in hits}
    for term in wanted:
        for (fid,) in conn.execute(
            f"SELECT rowid FROM file_text WHERE file_text MATCH ? AND rowid IN ({marks})", (f'"{term}"', *ids)
        ):
            by_id[fid].matched.append(term)
