"""The embedded learnings store: one SQLite file (WAL) under $RECALL_HOME.

Tables: `learnings` (the wire doc's record + a normalized resolution key for merging), `signatures` (one row
per error signature: text as recorded, normalized form, fingerprint, optional embedding blob), `files` (paths
touched, for context matching), `signatures_fts` (FTS5 over normalized signatures, when SQLite has FTS5),
`meta` (normalizer version, FTS availability). `PRAGMA user_version` is the schema version.

Safety rules: a file that is not SQLite, a malformed database, a database written by a newer recall, or a
read-only file is never modified or replaced; the caller gets a `StoreError` naming the file. A read-only
store still answers queries (access counts are then not recorded).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

from recall.learnings import signatures as sigs
from recall.learnings.records import (  # noqa: F401  (parse_id, resolution_key: public here too)
    dedupe,
    parse_id,
    path_basename,
    read_task_type,
    resolution_key,
    signature_rows,
)
from recall.learnings.types import Candidate, SignatureRow, StoreError
from recall.models import Learning

DB_NAME = "learnings.db"
SCHEMA_VERSION = 1
MAX_FTS_TERMS = 4  # rarest query terms sent to the full-text index
INDEX_CACHE_MAX = 50_000  # entries of each full-text cache (term document counts, ranked hits)
SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA_V1 = """
CREATE TABLE learnings (
    id TEXT PRIMARY KEY,
    session_id TEXT,
    repo TEXT NOT NULL,
    file_paths_touched TEXT NOT NULL DEFAULT '[]',
    resolution_summary TEXT NOT NULL,
    resolution_key TEXT NOT NULL,
    ticket_id TEXT,
    task_type TEXT NOT NULL DEFAULT 'unknown',
    confidence REAL NOT NULL DEFAULT 0.8,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX learnings_repo_task ON learnings(repo, task_type, created_at);
CREATE INDEX learnings_merge ON learnings(repo, resolution_key);
CREATE INDEX learnings_created ON learnings(created_at);
CREATE TABLE signatures (
    rowid INTEGER PRIMARY KEY,
    learning_id TEXT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    normalized TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    embedding BLOB,
    embedding_model TEXT
);
CREATE INDEX signatures_fp ON signatures(fingerprint);
CREATE INDEX signatures_learning ON signatures(learning_id, position);
CREATE TABLE files (
    learning_id TEXT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    basename TEXT NOT NULL
);
CREATE INDEX files_path ON files(path);
CREATE INDEX files_basename ON files(basename);
CREATE INDEX files_learning ON files(learning_id);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

_FTS_V1 = """
CREATE VIRTUAL TABLE signatures_fts USING fts5(
    normalized, content='signatures', content_rowid='rowid', tokenize="unicode61 tokenchars '_'"
);
CREATE TRIGGER signatures_ai AFTER INSERT ON signatures BEGIN
    INSERT INTO signatures_fts(rowid, normalized) VALUES (new.rowid, new.normalized);
END;
CREATE TRIGGER signatures_ad AFTER DELETE ON signatures BEGIN
    INSERT INTO signatures_fts(signatures_fts, rowid, normalized) VALUES ('delete', old.rowid, old.normalized);
END;
CREATE TRIGGER signatures_au AFTER UPDATE OF normalized ON signatures BEGIN
    INSERT INTO signatures_fts(signatures_fts, rowid, normalized) VALUES ('delete', old.rowid, old.normalized);
    INSERT INTO signatures_fts(rowid, normalized) VALUES (new.rowid, new.normalized);
END;
"""


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Like executescript, but inside the caller's transaction (executescript would COMMIT first)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""


def _migrate_to_1(conn: sqlite3.Connection) -> None:
    _run_script(conn, _SCHEMA_V1)
    fts = _fts5_available(conn)
    if fts:
        _run_script(conn, _FTS_V1)
    conn.execute("INSERT INTO meta(key, value) VALUES ('fts', ?)", ("1" if fts else "0",))
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('normalizer_version', ?)", (str(sigs.NORMALIZER_VERSION),)
    )


# MIGRATIONS[n] upgrades a database at schema version n-1 to version n (append only; never edit old ones).
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _migrate_to_1}


def _fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.recall_fts_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.recall_fts_probe")
        return True
    except sqlite3.OperationalError:
        return False


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat()


def _parse_dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


class LearningStore:
    """SQLite-backed learnings store; thread-safe (one connection behind a lock). Implements CandidateStore."""

    def __init__(self, path: Path, conn: sqlite3.Connection, *, read_only: bool, fts: bool) -> None:
        self.path = path
        self.read_only = read_only
        self.fts = fts
        self._conn = conn
        self._lock = threading.RLock()
        self._vocab = False  # temp fts5vocab table created on this connection
        # Full-text caches: a term's document count and a MATCH's ranked row ids cost a scan of the
        # term's doclist each time (bm25's IDF too), ~1 ms per common term. Valid until the index changes.
        self._index_writes = 0  # our own commits that may have changed signatures
        self._index_seen: tuple[int, int] | None = None  # (PRAGMA data_version, _index_writes) cached at
        self._doc_counts: dict[str, int] = {}
        self._fts_hits: dict[tuple[str, int], list[int]] = {}
        # Candidates (learning + signature rows) by id, for retrieval only: valid until ANY write, ours
        # (access counts included, so a cached learning is never stale) or another connection's.
        self._writes = 0
        self._candidates_seen: tuple[int, int] | None = None
        self._candidates: dict[str, Candidate] = {}

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc, action) from exc

    @contextmanager
    def _write(self, action: str, *, index: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction; `index=False` promises it leaves signatures (the full-text index) alone."""
        if self.read_only:
            raise StoreError(f"learnings store {self.path} is read-only; cannot {action}")
        with self._guard(action) as conn:
            self._writes += 1
            if index:
                self._index_writes += 1
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _index_caches_valid(self, conn: sqlite3.Connection) -> None:
        """Drop the full-text caches when the index may have changed: a write of ours, or a commit by any
        other connection (another process or server worker), which changes PRAGMA data_version."""
        seen = (conn.execute("PRAGMA data_version").fetchone()[0], self._index_writes)
        if seen != self._index_seen or len(self._doc_counts) + len(self._fts_hits) > 2 * INDEX_CACHE_MAX:
            self._doc_counts.clear()
            self._fts_hits.clear()
            self._index_seen = seen

    def _load_candidates(self, conn: sqlite3.Connection, ids: list[str]) -> list[Candidate]:
        """`_load` through the candidate cache (callers only read the candidates, never change them)."""
        seen = (conn.execute("PRAGMA data_version").fetchone()[0], self._writes)
        cache = self._candidates
        if seen != self._candidates_seen or len(cache) > INDEX_CACHE_MAX:
            cache.clear()
            self._candidates_seen = seen
        missing = [i for i in ids if i not in cache]
        if missing:
            cache.update((str(c.learning.id), c) for c in self._load(conn, missing))
        return [cache[i] for i in ids if i in cache]

    def _ranked_rowids(self, conn: sqlite3.Connection, match: str, limit: int) -> list[int]:
        key = (match, limit)
        hits = self._fts_hits.get(key)
        if hits is None:
            hits = [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM signatures_fts WHERE signatures_fts MATCH ? ORDER BY rank LIMIT ?",
                    (match, limit),
                )
            ]
            self._fts_hits[key] = hits
        return hits

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> LearningStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ CRUD

    def add(self, learning: Learning) -> tuple[UUID, bool]:
        """Store a learning. Same repo + same resolution + a shared signature fingerprint (or, for learnings
        without error signatures, same repo + same resolution) merges into the existing learning: its file
        paths and signatures are unioned, confidence is the max. Returns (id, merged)."""
        with self._write("add a learning") as conn:
            return self._add(conn, learning)

    def add_many(self, learnings: Sequence[Learning]) -> list[tuple[UUID, bool]]:
        """add() for many learnings in one transaction (all or nothing)."""
        with self._write("add learnings") as conn:
            return [self._add(conn, learning) for learning in learnings]

    def _add(self, conn: sqlite3.Connection, learning: Learning) -> tuple[UUID, bool]:
        rows = signature_rows(learning.error_signatures)
        key = resolution_key(learning.resolution_summary)
        existing = self._find_merge_target(conn, learning.repo, key, [r.fingerprint for r in rows])
        if existing is not None:
            self._merge_into(conn, existing, learning, rows)
            return UUID(existing), True
        if conn.execute("SELECT 1 FROM learnings WHERE id = ?", (str(learning.id),)).fetchone():
            raise ValueError(f"a different learning with id {learning.id} already exists")
        conn.execute(
            "INSERT INTO learnings (id, session_id, repo, file_paths_touched, resolution_summary,"
            " resolution_key, ticket_id, task_type, confidence, access_count, last_accessed_at,"
            " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                str(learning.id),
                learning.session_id,
                learning.repo,
                json.dumps(dedupe(learning.file_paths_touched)),
                learning.resolution_summary,
                key,
                learning.ticket_id,
                learning.task_type.value,
                learning.confidence,
                learning.access_count,
                _iso(learning.last_accessed_at),
                _iso(learning.created_at),
                _iso(_now()),
            ),
        )
        self._insert_signatures(conn, str(learning.id), rows, start=0)
        self._insert_files(conn, str(learning.id), dedupe(learning.file_paths_touched))
        return learning.id, False

    def get(self, learning_id: UUID | str) -> Learning | None:
        lid = str(parse_id(learning_id))
        with self._guard("read a learning") as conn:
            found = self._load(conn, [lid])
        return found[0].learning if found else None

    def delete(self, learning_id: UUID | str) -> bool:
        lid = str(parse_id(learning_id))
        with self._write("delete a learning") as conn:
            conn.execute("DELETE FROM signatures WHERE learning_id = ?", (lid,))
            conn.execute("DELETE FROM files WHERE learning_id = ?", (lid,))
            return conn.execute("DELETE FROM learnings WHERE id = ?", (lid,)).rowcount > 0

    def iter_all(self, batch: int = 500) -> Iterator[Learning]:
        """Every learning, oldest first (batched so a large store streams)."""
        last = ("", "")
        while True:
            with self._guard("list learnings") as conn:
                ids = [
                    r[1]
                    for r in conn.execute(
                        "SELECT created_at, id FROM learnings WHERE (created_at, id) > (?, ?)"
                        " ORDER BY created_at, id LIMIT ?",
                        (*last, batch),
                    )
                ]
                if not ids:
                    return
                loaded = self._load(conn, ids)
                tail = conn.execute(
                    "SELECT created_at, id FROM learnings WHERE id = ?", (ids[-1],)
                ).fetchone()
            last = (tail[0], tail[1])
            yield from (c.learning for c in loaded)

    def count(self) -> int:
        with self._guard("count learnings") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM learnings").fetchone()[0])

    def adjust_confidence(self, learning_id: UUID | str, delta: float) -> float | None:
        """confidence += delta, clamped to 0–1. Returns the new value, or None when the id is unknown."""
        lid = str(parse_id(learning_id))
        with self._write("adjust confidence") as conn:
            row = conn.execute("SELECT confidence FROM learnings WHERE id = ?", (lid,)).fetchone()
            if row is None:
                return None
            value = min(1.0, max(0.0, float(row[0]) + delta))
            conn.execute(
                "UPDATE learnings SET confidence = ?, updated_at = ? WHERE id = ?", (value, _iso(_now()), lid)
            )
            return value

    # ------------------------------------------------------------------ CandidateStore

    def candidates_by_fingerprint(self, fingerprints: Sequence[str], limit: int) -> list[Candidate]:
        fps = list(dict.fromkeys(fingerprints))
        if not fps:
            return []
        marks = ",".join("?" * len(fps))
        with self._guard("search learnings") as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT DISTINCT learning_id FROM signatures WHERE fingerprint IN ({marks}) LIMIT ?",
                    (*fps, limit),
                )
            ]
            return self._load_candidates(conn, ids)

    def candidates_by_terms(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        terms = [t.lower() for t in dict.fromkeys(terms) if t][:64]
        if not terms:
            return []
        with self._guard("search learnings") as conn:
            if self.fts:
                self._index_caches_valid(conn)
                terms = self._rarest_terms(conn, terms, MAX_FTS_TERMS)
                if not terms:
                    return []
                # all of the rarest terms first (small, precise); any of them only if that finds nothing.
                # Ranking happens inside FTS5: through a join it would be about twice as slow.
                quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
                rowids: list[int] = []
                for joiner in (" AND ", " OR ") if len(quoted) > 1 else (" OR ",):
                    rowids = self._ranked_rowids(conn, joiner.join(quoted), limit * 4)
                    if rowids:
                        break
                if not rowids:
                    return []
                owner = dict(
                    conn.execute(
                        f"SELECT rowid, learning_id FROM signatures WHERE rowid IN ({','.join('?' * len(rowids))})",
                        rowids,
                    )
                )
                ids = list(dict.fromkeys(owner[r] for r in rowids if r in owner))[:limit]
            else:
                ids = self._scan_terms(conn, terms, limit)
            return self._load_candidates(conn, ids)

    def _rarest_terms(self, conn: sqlite3.Connection, terms: list[str], keep: int) -> list[str]:
        """The `keep` query terms present in the fewest signatures: they discriminate, and a MATCH on common
        words would rank half the store. Terms absent from the store are dropped."""
        if not self._vocab:
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.signatures_vocab USING fts5vocab(main, signatures_fts, row)"
            )
            self._vocab = True
        docs = self._doc_counts
        unknown = [t for t in terms if t not in docs]
        if unknown:
            marks = ",".join("?" * len(unknown))
            found = dict(
                conn.execute(f"SELECT term, doc FROM temp.signatures_vocab WHERE term IN ({marks})", unknown)
            )
            docs.update((t, found.get(t, 0)) for t in unknown)
        present = [t for t in terms if docs.get(t)]
        return sorted(present, key=lambda t: docs[t])[:keep]

    def candidates_by_context(
        self, repo: str, file_paths: Sequence[str], task_type: str | None, limit: int
    ) -> list[Candidate]:
        paths = [p for p in dict.fromkeys(file_paths) if p]
        bases = list(dict.fromkeys(path_basename(p) for p in paths))
        with self._guard("search learnings") as conn:
            ids: list[str] = []
            if paths:
                ids += [
                    r[0]
                    for r in conn.execute(
                        "SELECT DISTINCT l.id FROM files f JOIN learnings l ON l.id = f.learning_id"
                        " WHERE l.repo = ? AND (f.path IN ({}) OR f.basename IN ({}))"
                        " ORDER BY l.created_at DESC LIMIT ?".format(
                            ",".join("?" * len(paths)), ",".join("?" * len(bases))
                        ),
                        (repo, *paths, *bases, limit),
                    )
                ]
            if task_type:
                ids += [
                    r[0]
                    for r in conn.execute(
                        "SELECT id FROM learnings WHERE repo = ? AND task_type = ? ORDER BY created_at DESC LIMIT ?",
                        (repo, task_type, limit),
                    )
                ]
            return self._load_candidates(conn, list(dict.fromkeys(ids))[: limit * 2])

    def record_access(self, ids: Sequence[UUID]) -> None:
        if self.read_only or not ids:
            return
        marks = ",".join("?" * len(ids))
        with self._write("record access", index=False) as conn:
            conn.execute(
                f"UPDATE learnings SET access_count = access_count + 1, last_accessed_at = ?"
                f" WHERE id IN ({marks})",
                (_iso(_now()), *(str(i) for i in ids)),
            )

    def cache_embeddings(self, items: Sequence[tuple[int, bytes]], model: str) -> None:
        """Optional: keep embeddings retrieval computed (by signature row id) so later queries reuse them."""
        if self.read_only or not items:
            return
        with self._write("cache embeddings", index=False) as conn:
            conn.executemany(
                "UPDATE signatures SET embedding = ?, embedding_model = ? WHERE rowid = ?",
                [(blob, model, rid) for rid, blob in items],
            )

    # ------------------------------------------------------------------ internals

    def _find_merge_target(self, conn: sqlite3.Connection, repo: str, key: str, fps: list[str]) -> str | None:
        if fps:
            marks = ",".join("?" * len(fps))
            row = conn.execute(
                "SELECT l.id FROM learnings l JOIN signatures s ON s.learning_id = l.id"
                f" WHERE l.repo = ? AND l.resolution_key = ? AND s.fingerprint IN ({marks})"
                " ORDER BY l.created_at LIMIT 1",
                (repo, key, *fps),
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT id FROM learnings l WHERE repo = ? AND resolution_key = ?"
                " AND NOT EXISTS (SELECT 1 FROM signatures s WHERE s.learning_id = l.id)"
                " ORDER BY created_at LIMIT 1",
                (repo, key),
            ).fetchone()
        return row[0] if row else None

    def _merge_into(
        self, conn: sqlite3.Connection, lid: str, new: Learning, rows: list[SignatureRow]
    ) -> None:
        cur = conn.execute(
            "SELECT file_paths_touched, confidence, ticket_id FROM learnings WHERE id = ?", (lid,)
        ).fetchone()
        old_paths = json.loads(cur[0])
        added_paths = [p for p in dedupe(new.file_paths_touched) if p not in old_paths]
        have = {
            r[0] for r in conn.execute("SELECT fingerprint FROM signatures WHERE learning_id = ?", (lid,))
        }
        fresh = [r for r in rows if r.fingerprint not in have]
        start = conn.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM signatures WHERE learning_id = ?", (lid,)
        ).fetchone()[0]
        conn.execute(
            "UPDATE learnings SET file_paths_touched = ?, confidence = ?, ticket_id = ?, updated_at = ?"
            " WHERE id = ?",
            (
                json.dumps(old_paths + added_paths),
                max(float(cur[1]), new.confidence),
                cur[2] or new.ticket_id,
                _iso(_now()),
                lid,
            ),
        )
        self._insert_signatures(conn, lid, fresh, start=start)
        self._insert_files(conn, lid, added_paths)

    @staticmethod
    def _insert_signatures(conn: sqlite3.Connection, lid: str, rows: list[SignatureRow], start: int) -> None:
        conn.executemany(
            "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint, embedding,"
            " embedding_model) VALUES (?,?,?,?,?,?,?)",
            [
                (lid, start + i, r.text, r.normalized, r.fingerprint, r.embedding, r.embedding_model)
                for i, r in enumerate(rows)
            ],
        )

    @staticmethod
    def _insert_files(conn: sqlite3.Connection, lid: str, paths: list[str]) -> None:
        conn.executemany(
            "INSERT INTO files (learning_id, path, basename) VALUES (?,?,?)",
            [(lid, p, path_basename(p)) for p in paths],
        )

    @staticmethod
    def _scan_terms(conn: sqlite3.Connection, terms: list[str], limit: int) -> list[str]:
        """No-FTS5 fallback: count shared terms over every signature (linear, fine for small stores)."""
        wanted = {t.lower() for t in terms}
        scored: dict[str, int] = {}
        for lid, normalized in conn.execute("SELECT learning_id, normalized FROM signatures"):
            hits = len(wanted & set(sigs.tokens(normalized)))
            if hits:
                scored[lid] = max(scored.get(lid, 0), hits)
        return sorted(scored, key=lambda k: -scored[k])[:limit]

    @staticmethod
    def _load(conn: sqlite3.Connection, ids: list[str]) -> list[Candidate]:
        """Candidates for ids, in the order given (unknown ids skipped)."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        by_id: dict[str, Candidate] = {}
        for r in conn.execute(
            "SELECT id, session_id, repo, file_paths_touched, resolution_summary, ticket_id, task_type,"
            f" confidence, access_count, last_accessed_at, created_at FROM learnings WHERE id IN ({marks})",
            ids,
        ):
            by_id[r[0]] = Candidate(
                learning=Learning.model_construct(
                    id=UUID(r[0]),
                    session_id=r[1],
                    repo=r[2],
                    file_paths_touched=json.loads(r[3]),
                    error_signatures=[],
                    resolution_summary=r[4],
                    ticket_id=r[5],
                    task_type=read_task_type(r[6]),
                    confidence=float(r[7]),
                    access_count=int(r[8]),
                    last_accessed_at=_parse_dt(r[9]),
                    created_at=_parse_dt(r[10]),
                )
            )
        for r in conn.execute(
            "SELECT learning_id, text, normalized, fingerprint, embedding, embedding_model, rowid"
            f" FROM signatures WHERE learning_id IN ({marks}) ORDER BY learning_id, position",
            ids,
        ):
            cand = by_id[r[0]]
            cand.signatures.append(SignatureRow(r[1], r[2], r[3], r[4], r[5], r[6]))
            cand.learning.error_signatures.append(r[1])
        return [by_id[i] for i in ids if i in by_id]


# ---------------------------------------------------------------------- helpers


def _store_error(path: Path, exc: sqlite3.Error, action: str) -> StoreError:
    msg = str(exc)
    if "readonly" in msg or "read-only" in msg:
        return StoreError(f"learnings store {path} is read-only; cannot {action}")
    if "not a database" in msg or "malformed" in msg:
        return StoreError(f"learnings store {path} is corrupt ({msg}); move it aside to start a new one")
    if "locked" in msg or "busy" in msg:
        return StoreError(f"learnings store {path} is locked by another process ({msg}); try again")
    return StoreError(f"learnings store {path}: cannot {action}: {msg}")


# ---------------------------------------------------------------------- opening


def default_path(home: Path | None = None) -> Path:
    from recall.config import recall_home

    return (home or recall_home()) / DB_NAME


def open_store(home: Path | None = None, *, path: Path | None = None) -> LearningStore:
    """Open (creating and migrating if needed) the learnings store under `home` (default $RECALL_HOME).

    Raises StoreError for a file that is not a SQLite database, a malformed one, one written by a newer
    recall, or one that needs a migration but is read-only. Nothing is ever deleted or replaced."""
    db = path or default_path(home)
    _check_header(db)
    read_only = db.exists() and not _writable(db)
    if not read_only:
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the recall home {db.parent}: {exc.strerror}") from exc
    conn = _connect(db, read_only)
    try:
        fts = _prepare(conn, db, read_only)
    except BaseException:
        conn.close()
        raise
    store = LearningStore(db, conn, read_only=read_only, fts=fts)
    if not read_only:
        _renormalize_if_needed(store)
    return store


def _check_header(db: Path) -> None:
    if not db.exists() or db.stat().st_size == 0:
        return
    try:
        with db.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read the learnings store {db}: {exc.strerror}") from exc
    if head != SQLITE_HEADER:
        raise StoreError(
            f"learnings store {db} is not a SQLite database (corrupt?); move it aside to start anew"
        )


def _writable(db: Path) -> bool:
    # root ignores permission bits; an explicit chmod a-w still means "do not write this"
    mode = db.stat().st_mode
    return bool(mode & 0o222) and os.access(db, os.W_OK) and os.access(db.parent, os.W_OK)


def _connect(db: Path, read_only: bool) -> sqlite3.Connection:
    try:
        if read_only:
            conn = sqlite3.connect(
                f"file:{db}?mode=ro", uri=True, timeout=5, check_same_thread=False, isolation_level=None
            )
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                # a WAL database in a read-only place cannot create its -shm: read it as immutable
                conn.close()
                conn = sqlite3.connect(
                    f"file:{db}?immutable=1", uri=True, check_same_thread=False, isolation_level=None
                )
        else:
            conn = sqlite3.connect(str(db), timeout=5, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, no fsync per commit
        return conn
    except sqlite3.Error as exc:
        raise _store_error(db, exc, "open") from exc


def _prepare(conn: sqlite3.Connection, db: Path, read_only: bool) -> bool:
    """Check the schema version, migrate if needed (writable stores only). Returns whether FTS5 is in use."""
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"learnings store {db} has schema version {version}, newer than this recall supports"
                f" ({SCHEMA_VERSION}); upgrade recall (the store was left untouched)"
            )
        if version < SCHEMA_VERSION:
            if read_only:
                raise StoreError(f"learnings store {db} needs a schema upgrade but is read-only")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    MIGRATIONS[target](conn)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        elif not read_only:
            conn.execute("PRAGMA journal_mode = WAL")
        row = conn.execute("SELECT value FROM meta WHERE key = 'fts'").fetchone()
        return bool(row and row[0] == "1")
    except sqlite3.Error as exc:
        raise _store_error(db, exc, "open") from exc


def _renormalize_if_needed(store: LearningStore) -> None:
    """When the normalizer changed since these rows were written, recompute normalized forms and
    fingerprints (the recorded text is kept, so nothing is lost) and drop now-stale embeddings."""
    with store._guard("read metadata") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'normalizer_version'").fetchone()
    if row and row[0] == str(sigs.NORMALIZER_VERSION):
        return
    with store._write("re-normalize signatures") as conn:
        updates = []
        for rid, text in conn.execute("SELECT rowid, text FROM signatures").fetchall():
            normalized = sigs.normalize(text)
            updates.append((normalized, sigs.fingerprint_normalized(normalized), rid))
        conn.executemany(
            "UPDATE signatures SET normalized = ?, fingerprint = ?, embedding = NULL, embedding_model = NULL"
            " WHERE rowid = ?",
            updates,
        )
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('normalizer_version', ?)",
            (str(sigs.NORMALIZER_VERSION),),
        )
