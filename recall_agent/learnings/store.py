"""The embedded learnings store: one SQLite file (WAL) under $RECALL_HOME; the SQLite adapter of
`core.StoreCore` (merging, candidate generation and its caches live there, once for both stores).

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from recall_agent.config import learnings_db
from recall_agent.learnings import integrity
from recall_agent.learnings import signatures as sigs
from recall_agent.learnings.consolidate import MIGRATION
from recall_agent.learnings.core import Changes, LearningRow, MergeState, StoreCore
from recall_agent.learnings.records import (  # noqa: F401  (resolution_key: public here too)
    parse_id,
    path_basename,
    quarantine_reasons,
    resolution_key,
    safety_columns,
)
from recall_agent.learnings.types import Candidate, SignatureRow, StoreError

if TYPE_CHECKING:  # the in-process read path (the CLI, the hooks) never imports pydantic
    from recall_agent.models import Learning

SCHEMA_VERSION = 5
SQLITE_HEADER = b"SQLite format 3\x00"
# meta keys of the cache generations (core.py), and which of them each kind of write bumps; a store
# without them (written by an older recall) reads as 0
INDEX_GEN, DATA_GEN = "generation_index", "generation_data"
GENERATIONS: dict[str, tuple[str, ...]] = {"index": (INDEX_GEN, DATA_GEN), "data": (DATA_GEN,), "access": ()}

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


def _migrate_to_2(conn: sqlite3.Connection) -> None:
    """The fix evidence of a learning (models.FixEvidence as JSON; NULL when none was recorded)."""
    conn.execute("ALTER TABLE learnings ADD COLUMN fix TEXT")


_LIFECYCLE_V3 = """
ALTER TABLE learnings ADD COLUMN shown_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE learnings ADD COLUMN helped_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE learnings ADD COLUMN hurt_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE learnings ADD COLUMN last_shown_at TEXT;
ALTER TABLE learnings ADD COLUMN last_useful_at TEXT;
CREATE TABLE learning_events (
    rowid INTEGER PRIMARY KEY,
    learning_id TEXT NOT NULL,
    repo TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    before TEXT,
    after TEXT
);
CREATE INDEX learning_events_learning ON learning_events(learning_id, rowid);
CREATE INDEX learning_events_repo ON learning_events(repo, rowid);
"""


def _migrate_to_3(conn: sqlite3.Connection) -> None:
    """The lifecycle counts of a learning (lifecycle.py) and the record of every change a person made
    (who, when, before/after; kept after the learning is forgotten, so no foreign key)."""
    _run_script(conn, _LIFECYCLE_V3)


_CAUSES_V4 = """
ALTER TABLE learnings ADD COLUMN seen_count INTEGER NOT NULL DEFAULT 1;
ALTER TABLE learnings ADD COLUMN session_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE learnings ADD COLUMN first_seen_at TEXT;
ALTER TABLE learnings ADD COLUMN last_seen_at TEXT;
UPDATE learnings SET first_seen_at = created_at, last_seen_at = created_at,
    session_count = CASE WHEN session_id IS NULL OR session_id = '' THEN 0 ELSE 1 END;
CREATE TABLE learning_sessions (
    learning_id TEXT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    PRIMARY KEY (learning_id, session_id)
);
INSERT INTO learning_sessions (learning_id, session_id)
    SELECT id, session_id FROM learnings WHERE session_id IS NOT NULL AND session_id != '';
CREATE TABLE learning_fixes (
    rowid INTEGER PRIMARY KEY,
    learning_id TEXT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    resolution_key TEXT NOT NULL,
    resolution_summary TEXT NOT NULL,
    fix TEXT,
    count INTEGER NOT NULL DEFAULT 1,
    first_seen_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
);
CREATE INDEX learning_fixes_learning ON learning_fixes(learning_id);
INSERT INTO learning_fixes (learning_id, resolution_key, resolution_summary, fix, count, first_seen_at, last_seen_at)
    SELECT id, resolution_key, resolution_summary, fix, 1, created_at, created_at FROM learnings;
"""


def _migrate_to_4(conn: sqlite3.Connection) -> None:
    """One learning per cause (consolidate.py): occurrence counts, first/last seen, the sessions that met a
    cause and every fix that worked for it, filled from each row as it is. Merging the existing copies of a
    cause is the data migration `consolidate_causes`, run once after the schema is in place
    (`_consolidate_if_needed`); a store that has no learning yet has nothing to merge."""
    _run_script(conn, _CAUSES_V4)
    if conn.execute("SELECT 1 FROM learnings LIMIT 1").fetchone() is None:
        conn.execute(f"INSERT OR REPLACE INTO meta(key, value) VALUES ('{_CONSOLIDATED}', '1')")


_CONSOLIDATED = f"migration_{MIGRATION}"

_PROVENANCE_COLUMNS = {
    "provenance": "TEXT NOT NULL DEFAULT 'legacy'",
    "author": "TEXT",
    "review": "TEXT NOT NULL DEFAULT 'none'",
    "quarantine": "TEXT",
}
_PROVENANCE_SQL = """
UPDATE learnings SET provenance = CASE json_extract(fix, '$.source')
    WHEN 'transcript' THEN CASE WHEN json_extract(fix, '$.verified_by') IS NULL THEN 'agent' ELSE 'captured' END
    WHEN 'agent' THEN 'agent' WHEN 'manual' THEN 'person' ELSE 'legacy' END
    WHERE provenance = 'legacy';
CREATE INDEX IF NOT EXISTS learnings_review ON learnings(review, provenance);
"""


def _migrate_provenance_and_quarantine(conn: sqlite3.Connection) -> None:
    """Where each learning came from, who posted it, its review and its quarantine reasons
    (safety/trust.py, safety/quarantine.py). Stored learnings get the provenance their fix evidence says
    (none: `legacy`, injected as before) and the quarantine decision, made here once."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(learnings)")}
    for name, kind in _PROVENANCE_COLUMNS.items():  # idempotent: a column already there is kept
        if name not in have:
            conn.execute(f"ALTER TABLE learnings ADD COLUMN {name} {kind}")
    _run_script(conn, _PROVENANCE_SQL)
    rows = conn.execute(
        "SELECT id, resolution_summary, fix FROM learnings WHERE quarantine IS NULL"
    ).fetchall()
    conn.executemany(
        "UPDATE learnings SET quarantine = ? WHERE id = ?",
        [(json.dumps(quarantine_reasons(text, _json(fix))), lid) for lid, text, fix in rows],
    )


# MIGRATIONS[n] upgrades a database at schema version n-1 to version n (append only; never edit old ones).
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_to_1,
    2: _migrate_to_2,
    3: _migrate_to_3,
    4: _migrate_to_4,
    5: _migrate_provenance_and_quarantine,
}


def _fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.recall_fts_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.recall_fts_probe")
        return True
    except sqlite3.OperationalError:
        return False


def _json(value: str | None) -> Any:
    try:
        return json.loads(value) if value else None
    except ValueError:
        return None


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


class LearningStore(StoreCore):
    """SQLite adapter of StoreCore; thread-safe (one connection behind a lock). Implements CandidateStore."""

    def __init__(self, path: Path, conn: sqlite3.Connection, *, read_only: bool, fts: bool) -> None:
        super().__init__()
        self.path = path
        self.read_only = read_only
        self.fts = fts
        self._conn = conn
        self._lock = threading.RLock()
        self._vocab = False  # temp fts5vocab table created on this connection
        # the file is as recall last saw it sound (integrity.py): noted again when this store closes
        self._noted = not read_only and integrity.known_sound(path)

    # ------------------------------------------------------------------ connections

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc, action) from exc

    _reading = _guard

    @contextmanager
    def _writing(self, action: str, *, changes: Changes = "index") -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise StoreError(f"learnings store {self.path} is read-only; cannot {action}")
        with self._guard(action) as conn:
            self._check_sound(conn)
            conn.execute("BEGIN IMMEDIATE")  # serializes writers: no per-resolution lock needed
            try:
                yield conn
                for key in GENERATIONS[changes]:
                    conn.execute(
                        "INSERT INTO meta(key, value) VALUES (?, '1')"
                        " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                        (key,),
                    )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            integrity.note_sound(self.path)
            self._noted = True

    # ------------------------------------------------------------------ migration "repo identity"

    def repo_pairs(self) -> list[tuple[str, str | None]]:
        """Every (repo, session id) stored (reidentify.py)."""
        with self._guard("read repositories") as conn:
            return [(r, s) for r, s in conn.execute("SELECT DISTINCT repo, session_id FROM learnings")]

    def rename_repos(self, renames: dict[tuple[str, str | None], str]) -> int:
        """File the learnings of each (repo, session id) under the new repo, their history with them."""
        moved = 0
        with self._writing("file learnings under their repository") as conn:
            for (old, sid), new in renames.items():
                ids = [
                    r[0]
                    for r in conn.execute(
                        "SELECT id FROM learnings WHERE repo = ? AND session_id IS ?", (old, sid)
                    )
                ]
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    conn.execute(f"UPDATE learnings SET repo = ? WHERE id IN ({marks})", (new, *chunk))
                    conn.execute(
                        f"UPDATE learning_events SET repo = ? WHERE repo = ? AND learning_id IN ({marks})",
                        (new, old, *chunk),
                    )
                moved += len(ids)
        return moved

    def _check_sound(self, conn: sqlite3.Connection) -> None:
        """Before a write: a file changed since recall last saw it sound gets the full check (integrity.py)."""
        if integrity.known_sound(self.path):
            return
        found = integrity.problems(conn)
        if found:
            raise StoreError(integrity.damaged_message(self.path, found))
        integrity.note_sound(self.path)

    def _generations(self, conn: sqlite3.Connection) -> tuple[str, str]:
        gens = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (INDEX_GEN, DATA_GEN)))
        return gens.get(INDEX_GEN, "0"), gens.get(DATA_GEN, "0")

    def close(self) -> None:
        with self._lock:
            self._conn.close()  # the last connection's close checkpoints the WAL into the file
            if self._noted:
                integrity.note_sound(self.path)
                self._noted = False

    def __enter__(self) -> LearningStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _key(self, learning_id: UUID) -> str:
        return str(learning_id)

    # ------------------------------------------------------------------ plain SQL

    def delete(self, learning_id: UUID | str) -> bool:
        lid = str(parse_id(learning_id))
        with self._writing("delete a learning") as conn:
            return self._delete_in(conn, lid)

    # ------------------------------------------------------------------ curation dialect (curation.py)

    def _delete_in(self, conn: sqlite3.Connection, lid: str) -> bool:
        conn.execute("DELETE FROM signatures WHERE learning_id = ?", (lid,))
        conn.execute("DELETE FROM files WHERE learning_id = ?", (lid,))
        conn.execute("DELETE FROM learning_sessions WHERE learning_id = ?", (lid,))
        conn.execute("DELETE FROM learning_fixes WHERE learning_id = ?", (lid,))
        return conn.execute("DELETE FROM learnings WHERE id = ?", (lid,)).rowcount > 0

    def _ts(self, value: datetime | None) -> str | None:
        return _iso(value)

    def _dt(self, value: str | None) -> datetime | None:
        return _parse_dt(value)

    def _jparam(self, value: Any) -> str:
        return json.dumps(value)

    def _jread(self, value: str | None) -> Any:
        return _json(value)

    def count(self) -> int:
        with self._reading("count learnings") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM learnings").fetchone()[0])

    def adjust_confidence(self, learning_id: UUID | str, delta: float) -> float | None:
        """confidence += delta, clamped to 0–1. Returns the new value, or None when the id is unknown."""
        lid = str(parse_id(learning_id))
        with self._writing("adjust confidence", changes="data") as conn:
            row = conn.execute("SELECT confidence FROM learnings WHERE id = ?", (lid,)).fetchone()
            if row is None:
                return None
            value = min(1.0, max(0.0, float(row[0]) + delta))
            conn.execute(
                "UPDATE learnings SET confidence = ?, updated_at = ? WHERE id = ?", (value, _iso(_now()), lid)
            )
            return value

    def record_access(self, ids: Sequence[UUID]) -> None:
        if self.read_only or not ids:
            return
        marks = ",".join("?" * len(ids))
        with self._writing("record access", changes="access") as conn:
            conn.execute(
                f"UPDATE learnings SET access_count = access_count + 1, last_accessed_at = ?"
                f" WHERE id IN ({marks})",
                (_iso(_now()), *(str(i) for i in ids)),
            )

    def record_accesses(self, counts: Mapping[UUID, int]) -> None:
        """Several requests' access counts in one transaction (the server's batched flush, server/store.py)."""
        if self.read_only or not counts:
            return
        now = _iso(_now())
        with self._writing("record access", changes="access") as conn:
            conn.executemany(
                "UPDATE learnings SET access_count = access_count + ?, last_accessed_at = ? WHERE id = ?",
                [(n, now, str(i)) for i, n in counts.items()],
            )

    def cache_embeddings(self, items: Sequence[tuple[int, bytes]], model: str) -> None:
        """Optional: keep embeddings retrieval computed (by signature row id) so later queries reuse them."""
        if self.read_only or not items:
            return
        with self._writing("cache embeddings", changes="data") as conn:
            conn.executemany(
                "UPDATE signatures SET embedding = ?, embedding_model = ? WHERE rowid = ?",
                [(blob, model, rid) for rid, blob in items],
            )

    def candidates_by_terms(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        if self.fts:
            return super().candidates_by_terms(terms, limit)
        wanted = {t.lower() for t in terms if t}
        with self._reading("search learnings") as conn:
            self._refresh_caches(conn)
            return self._cached_candidates(conn, _scan_terms(conn, wanted, limit))

    # ------------------------------------------------------------------ StoreCore hooks

    def _lock_resolution(self, conn: sqlite3.Connection, repo: str, key: str) -> None:
        """Nothing to do: BEGIN IMMEDIATE already serializes every writer of the file."""

    def _merge_target(self, conn: sqlite3.Connection, repo: str, key: str, fps: list[str]) -> str | None:
        if fps:
            row = conn.execute(
                "SELECT l.id FROM learnings l JOIN signatures s ON s.learning_id = l.id"
                f" WHERE l.repo = ? AND l.resolution_key = ? AND s.fingerprint IN ({_marks(fps)})"
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

    def _merge_state(self, conn: sqlite3.Connection, lid: str) -> MergeState:
        paths, confidence, ticket, fix = conn.execute(
            "SELECT file_paths_touched, confidence, ticket_id, fix FROM learnings WHERE id = ?", (lid,)
        ).fetchone()
        fps = {r[0] for r in conn.execute("SELECT fingerprint FROM signatures WHERE learning_id = ?", (lid,))}
        start = conn.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM signatures WHERE learning_id = ?", (lid,)
        ).fetchone()[0]
        return MergeState(json.loads(paths), float(confidence), ticket, fps, int(start), _json(fix))

    def _update_merged(
        self,
        conn: sqlite3.Connection,
        lid: str,
        paths: list[str],
        confidence: float,
        ticket: str | None,
        fix: dict[str, Any] | None,
    ) -> None:
        conn.execute(
            "UPDATE learnings SET file_paths_touched = ?, confidence = ?, ticket_id = ?, fix = ?, updated_at = ?"
            " WHERE id = ?",
            (json.dumps(paths), confidence, ticket, json.dumps(fix) if fix else None, _iso(_now()), lid),
        )

    def _exists(self, conn: sqlite3.Connection, lid: str) -> bool:
        return conn.execute("SELECT 1 FROM learnings WHERE id = ?", (lid,)).fetchone() is not None

    def _insert_learning(
        self, conn: sqlite3.Connection, learning: Learning, key: str, paths: list[str]
    ) -> None:
        conn.execute(
            "INSERT INTO learnings (id, session_id, repo, file_paths_touched, resolution_summary,"
            " resolution_key, ticket_id, task_type, confidence, access_count, last_accessed_at,"
            " created_at, updated_at, fix, shown_count, helped_count, hurt_count, last_shown_at,"
            " last_useful_at, provenance, author, review, quarantine)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                str(learning.id),
                learning.session_id,
                learning.repo,
                json.dumps(paths),
                learning.resolution_summary,
                key,
                learning.ticket_id,
                learning.task_type.value,
                learning.confidence,
                learning.access_count,
                _iso(learning.last_accessed_at),
                _iso(learning.created_at),
                _iso(_now()),
                learning.fix.model_dump_json() if learning.fix else None,
                learning.shown_count,
                learning.helped_count,
                learning.hurt_count,
                _iso(learning.last_shown_at),
                _iso(learning.last_useful_at),
                *_safety(learning),
            ),
        )

    def _insert_signatures(
        self, conn: sqlite3.Connection, lid: str, rows: list[SignatureRow], start: int
    ) -> None:
        conn.executemany(
            "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint, embedding,"
            " embedding_model) VALUES (?,?,?,?,?,?,?)",
            [
                (lid, start + i, r.text, r.normalized, r.fingerprint, r.embedding, r.embedding_model)
                for i, r in enumerate(rows)
            ],
        )

    def _insert_files(self, conn: sqlite3.Connection, lid: str, paths: list[str]) -> None:
        conn.executemany(
            "INSERT INTO files (learning_id, path, basename) VALUES (?,?,?)",
            [(lid, p, path_basename(p)) for p in paths],
        )

    def _learning_rows(self, conn: sqlite3.Connection, ids: list[str]) -> Iterator[LearningRow]:
        for r in conn.execute(
            "SELECT id, session_id, repo, file_paths_touched, resolution_summary, ticket_id, task_type,"
            " confidence, access_count, last_accessed_at, created_at, fix, shown_count, helped_count, hurt_count,"
            " last_shown_at, last_useful_at, seen_count, session_count, first_seen_at, last_seen_at,"
            " provenance, author, review, quarantine"
            f" FROM learnings WHERE id IN ({_marks(ids)})",
            ids,
        ):
            yield LearningRow(
                UUID(r[0]), r[1], r[2], json.loads(r[3]), r[4], r[5], r[6], float(r[7]), int(r[8]),
                _parse_dt(r[9]), _parse_dt(r[10]), _json(r[11]), int(r[12]), int(r[13]), int(r[14]),
                _parse_dt(r[15]), _parse_dt(r[16]), int(r[17]), int(r[18]), _parse_dt(r[19]), _parse_dt(r[20]),
                r[21], r[22], r[23], _json(r[24]),
            )  # fmt: skip

    def _signature_rows(self, conn: sqlite3.Connection, ids: list[str]) -> Iterator[tuple[str, SignatureRow]]:
        for r in conn.execute(
            "SELECT learning_id, text, normalized, fingerprint, embedding, embedding_model, rowid"
            f" FROM signatures WHERE learning_id IN ({_marks(ids)}) ORDER BY learning_id, position",
            ids,
        ):
            yield r[0], SignatureRow(r[1], r[2], r[3], r[4], r[5], r[6])

    def _page(
        self, conn: sqlite3.Connection, after: tuple[str, str] | None, batch: int
    ) -> list[tuple[str, str]]:
        return conn.execute(
            "SELECT created_at, id FROM learnings WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?",
            (*(after or ("", "")), batch),
        ).fetchall()

    def _ids_by_fingerprint(self, conn: sqlite3.Connection, fps: list[str], limit: int) -> list[str]:
        sql = f"SELECT DISTINCT learning_id FROM signatures WHERE fingerprint IN ({_marks(fps)}) LIMIT ?"
        return [r[0] for r in conn.execute(sql, (*fps, limit))]

    def _doc_counts_of(self, conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
        if not self._vocab:
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.signatures_vocab USING fts5vocab(main, signatures_fts, row)"
            )
            self._vocab = True
        sql = f"SELECT term, doc FROM temp.signatures_vocab WHERE term IN ({_marks(terms)})"
        return dict(conn.execute(sql, terms))

    def _ranked_ids(
        self, conn: sqlite3.Connection, terms: list[str], require_all: bool, limit: int
    ) -> list[str]:
        # ranking happens inside FTS5 (through a join it would be about twice as slow)
        match = (" AND " if require_all else " OR ").join('"' + t.replace('"', '""') + '"' for t in terms)
        rowids = [
            r[0]
            for r in conn.execute(
                "SELECT rowid FROM signatures_fts WHERE signatures_fts MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            )
        ]
        if not rowids:
            return []
        owner = dict(
            conn.execute(
                f"SELECT rowid, learning_id FROM signatures WHERE rowid IN ({_marks(rowids)})", rowids
            )
        )
        return [owner[r] for r in rowids if r in owner]

    def _ids_in_repo(
        self,
        conn: sqlite3.Connection,
        repo: str,
        fps: list[str],
        terms: list[str],
        require_all: bool,
        limit: int,
    ) -> list[str]:
        """Learnings of `repo` with one of `fps`, then its best full-text hits on `terms` (consolidate.py)."""
        ids = [r[0] for r in conn.execute(
            "SELECT DISTINCT s.learning_id FROM signatures s JOIN learnings l ON l.id = s.learning_id"
            f" WHERE s.fingerprint IN ({_marks(fps)}) AND l.repo = ? LIMIT ?", (*fps, repo, limit))] if fps else []  # fmt: skip
        if terms and self.fts:
            match = (" AND " if require_all else " OR ").join('"' + t.replace('"', '""') + '"' for t in terms)
            ids += [r[0] for r in conn.execute(
                "SELECT s.learning_id FROM signatures_fts f JOIN signatures s ON s.rowid = f.rowid"
                " JOIN learnings l ON l.id = s.learning_id WHERE signatures_fts MATCH ? AND l.repo = ?"
                " ORDER BY f.rank LIMIT ?", (match, repo, limit))]  # fmt: skip
        elif terms:
            ids += _scan_terms(conn, set(terms), limit)
        return list(dict.fromkeys(ids))

    def _ids_by_paths(
        self, conn: sqlite3.Connection, repo: str, paths: list[str], bases: list[str], limit: int
    ) -> list[str]:
        sql = (
            "SELECT DISTINCT l.id FROM files f JOIN learnings l ON l.id = f.learning_id"
            f" WHERE l.repo = ? AND (f.path IN ({_marks(paths)}) OR f.basename IN ({_marks(bases)}))"
            " ORDER BY l.created_at DESC LIMIT ?"
        )
        return [r[0] for r in conn.execute(sql, (repo, *paths, *bases, limit))]

    def _ids_by_task(self, conn: sqlite3.Connection, repo: str, task_type: str, limit: int) -> list[str]:
        sql = "SELECT id FROM learnings WHERE repo = ? AND task_type = ? ORDER BY created_at DESC LIMIT ?"
        return [r[0] for r in conn.execute(sql, (repo, task_type, limit))]


def _safety(learning: Learning) -> tuple[str, str | None, str, str]:
    provenance, author, review, reasons = safety_columns(learning)
    return provenance, author, review, json.dumps(reasons)


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def _scan_terms(conn: sqlite3.Connection, wanted: set[str], limit: int) -> list[str]:
    """No-FTS5 fallback: count shared terms over every signature (linear, fine for small stores)."""
    scored: dict[str, int] = {}
    for lid, normalized in conn.execute("SELECT learning_id, normalized FROM signatures"):
        hits = len(wanted & set(sigs.tokens(normalized)))
        if hits:
            scored[lid] = max(scored.get(lid, 0), hits)
    return sorted(scored, key=lambda k: -scored[k])[:limit]


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
    return learnings_db(home)


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
        # consolidation waits for the identity migration: rows it renames can become copies of one cause
        if _reidentify_if_needed(store, db.parent):
            _consolidate_if_needed(store)
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
            found = integrity.problems(conn) if version > 0 else None
            if found:
                raise StoreError(integrity.damaged_message(db, found))
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
            integrity.note_sound(db)
        elif not read_only:
            conn.execute("PRAGMA journal_mode = WAL")
        row = conn.execute("SELECT value FROM meta WHERE key = 'fts'").fetchone()
        return bool(row and row[0] == "1")
    except sqlite3.Error as exc:
        raise _store_error(db, exc, "open") from exc


def _reidentify_if_needed(store: LearningStore, home: Path) -> bool:
    """Migration "repo identity" (reidentify.py), once per store: learnings filed under a folder's name get
    their repository's identity when that folder can be found (the sessions, the working folder). Not in a
    hook process (its deadline is for the agent's error): the next `recall` command runs it. True once it
    has run."""
    import sys

    runtime = sys.modules.get("recall_agent.hooks.runtime")  # never imported here: the CLI stays light
    if runtime is not None and runtime.handling():
        return False
    from recall_agent.learnings import reidentify

    with store._guard("read metadata") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (reidentify.MARKER,)).fetchone()
    if row and row[0] == reidentify.VERSION:
        return True
    with store._guard("read the learnings") as conn:
        store._check_sound(conn)  # a damaged store says so (integrity.py) before anything reads it
        empty = conn.execute("SELECT 1 FROM learnings LIMIT 1").fetchone() is None
    if not empty:
        from recall_agent import repo

        reidentify.run(store, reidentify.Resolver(home, [repo.current_dir()]))
    with store._writing("record the repo identity migration", changes="access") as conn:
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (reidentify.MARKER, reidentify.VERSION)
        )
    return True


def _renormalize_if_needed(store: LearningStore) -> None:
    """When the normalizer changed since these rows were written, recompute normalized forms and
    fingerprints (the recorded text is kept, so nothing is lost) and drop now-stale embeddings."""
    with store._guard("read metadata") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'normalizer_version'").fetchone()
    if row and row[0] == str(sigs.NORMALIZER_VERSION):
        return
    with store._writing("re-normalize signatures") as conn:
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


def _consolidate_if_needed(store: LearningStore) -> None:
    """The data migration `consolidate_causes` (consolidate.py), once per store: the copies of one cause that
    an older recall stored apart are merged, every signature, file, session and fix kept."""
    with store._guard("read metadata") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_CONSOLIDATED,)).fetchone()
    if row:
        return
    store.consolidate_existing()
    with store._writing("record a migration", changes="data") as conn:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (_CONSOLIDATED,))
