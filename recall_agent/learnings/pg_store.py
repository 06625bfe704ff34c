"""Team storage: the learnings store in PostgreSQL (psycopg 3 + psycopg_pool).

`PgStore` is the PostgreSQL adapter of `core.StoreCore`, as `store.LearningStore` is SQLite's: merging,
candidate generation and its caches are written once in core.py, this module only holds PostgreSQL's SQL.
`recall_agent.learnings.retrieval` ranks over either exactly the same way (every score is computed there).

Schema (migrations below, applied once under an advisory lock, recorded in `recall_schema`):
- `learnings` — the wire record + `resolution_key` for merging (same rule as store.py).
- `signatures` — one row per error signature; `tsv` = the signature's tokens (signatures.tokens, the same
  tokenizer the SQLite FTS index sees) as a tsvector with a GIN index; a pg_trgm GIN index on `normalized`.
- `files` — paths touched (path + lowercased basename) for context matching.
- `signature_terms` — document frequency per token, so a full-text query asks only the rarest terms of
  the query (the ones that discriminate) and stays fast at 100k+ learnings.
- `recall_generation` — counters every write bumps ('index' when signatures change, 'data' always), so the
  caches of every server worker drop what another worker's commit made stale.

PostgreSQL unreachable → `DatabaseUnavailable` (the server answers 503); the pool reconnects by itself when
the database returns. A write is acknowledged only after its transaction committed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from recall_agent.learnings import keys as ckeys
from recall_agent.learnings import signatures as sigs
from recall_agent.learnings.consolidate import MIGRATION
from recall_agent.learnings.core import (
    Changes,
    LearningRow,
    MergeState,
    StoreCore,
    context_paths,
    wanted_terms,
)
from recall_agent.learnings.records import (
    dedupe,
    parse_id,
    path_basename,
    quarantine_reasons,
    resolution_key,
    safety_columns,
    signature_rows,
)
from recall_agent.learnings.types import Candidate, SignatureRow, StoreError
from recall_agent.models import Learning

log = logging.getLogger("recall_agent.server")
POOL_MAX = 16
ENV_POOL = "RECALL_PG_POOL"  # connections per process (default POOL_MAX); the server runs as many store calls at once
CONNECT_TIMEOUT = 3.0  # seconds to get a connection before answering "unavailable"
PROBE_IDLE = 1.0  # a pooled connection idle longer than this is probed (one round trip) before it is used

MIGRATIONS: list[str] = [
    # 1: the learnings schema with full-text (tsvector) and trigram indexes
    """
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE TABLE learnings (
        id uuid PRIMARY KEY,
        session_id text,
        repo text NOT NULL,
        file_paths_touched jsonb NOT NULL DEFAULT '[]',
        resolution_summary text NOT NULL,
        resolution_key text NOT NULL,
        ticket_id text,
        task_type text NOT NULL DEFAULT 'unknown',
        confidence double precision NOT NULL DEFAULT 0.8,
        access_count integer NOT NULL DEFAULT 0,
        last_accessed_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
    );
    CREATE INDEX learnings_repo_task ON learnings (repo, task_type, created_at DESC);
    CREATE INDEX learnings_merge ON learnings (repo, resolution_key);
    CREATE INDEX learnings_created ON learnings (created_at, id);
    CREATE TABLE signatures (
        id bigserial PRIMARY KEY,
        learning_id uuid NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
        position integer NOT NULL,
        text text NOT NULL,
        normalized text NOT NULL,
        fingerprint text NOT NULL,
        tsv tsvector NOT NULL,
        embedding bytea,
        embedding_model text
    );
    CREATE INDEX signatures_fp ON signatures (fingerprint);
    CREATE INDEX signatures_learning ON signatures (learning_id, position);
    CREATE INDEX signatures_tsv ON signatures USING gin (tsv);
    CREATE INDEX signatures_trgm ON signatures USING gin (normalized gin_trgm_ops);
    CREATE TABLE files (
        learning_id uuid NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
        path text NOT NULL,
        basename text NOT NULL
    );
    CREATE INDEX files_path ON files (path);
    CREATE INDEX files_basename ON files (basename);
    CREATE INDEX files_learning ON files (learning_id);
    CREATE TABLE signature_terms (term text PRIMARY KEY, df bigint NOT NULL);
    """,
    # 2: generations every write bumps, so each server worker's caches see other workers' commits
    """
    CREATE TABLE recall_generation (name text PRIMARY KEY, n bigint NOT NULL);
    INSERT INTO recall_generation (name, n) VALUES ('index', 0), ('data', 0);
    """,
    # 3: long values are indexed by their md5, not whole (a btree row holds ~2700 bytes: a resolution or a
    # path of 1000 CJK characters was refused, forever); access_count as wide as the wire model allows
    """
    ALTER TABLE learnings ALTER COLUMN access_count TYPE bigint;
    DROP INDEX IF EXISTS learnings_merge;
    CREATE INDEX learnings_merge ON learnings (repo, md5(resolution_key));
    DROP INDEX IF EXISTS files_path;
    CREATE INDEX files_path ON files (md5(path));
    DROP INDEX IF EXISTS files_basename;
    CREATE INDEX files_basename ON files (md5(basename));
    """,
    # 4: the fix evidence of a learning (models.FixEvidence; NULL when none was recorded)
    """
    ALTER TABLE learnings ADD COLUMN fix jsonb;
    """,
    # 5: the lifecycle counts (learnings/lifecycle.py) and the record of every change a person made (who,
    # when, before/after; kept after the learning is forgotten, so no foreign key)
    """
    ALTER TABLE learnings ADD COLUMN shown_count bigint NOT NULL DEFAULT 0,
        ADD COLUMN helped_count bigint NOT NULL DEFAULT 0,
        ADD COLUMN hurt_count bigint NOT NULL DEFAULT 0,
        ADD COLUMN last_shown_at timestamptz,
        ADD COLUMN last_useful_at timestamptz;
    CREATE TABLE learning_events (
        id bigserial PRIMARY KEY,
        learning_id uuid NOT NULL,
        repo text NOT NULL,
        at timestamptz NOT NULL,
        actor text NOT NULL,
        action text NOT NULL,
        before jsonb,
        after jsonb
    );
    CREATE INDEX learning_events_learning ON learning_events (learning_id, id);
    CREATE INDEX learning_events_repo ON learning_events (md5(repo), id);
    """,
    # 6: one learning per cause (consolidate.py): occurrence counts, first/last seen, the sessions that met a
    # cause and every fix that worked for it, filled from each row as it is; merging the existing copies of a
    # cause is the data migration `consolidate_causes`, recorded in recall_data_migrations once it ran
    """
    ALTER TABLE learnings ADD COLUMN seen_count bigint NOT NULL DEFAULT 1,
        ADD COLUMN session_count bigint NOT NULL DEFAULT 0,
        ADD COLUMN first_seen_at timestamptz,
        ADD COLUMN last_seen_at timestamptz;
    UPDATE learnings SET first_seen_at = created_at, last_seen_at = created_at,
        session_count = CASE WHEN session_id IS NULL OR session_id = '' THEN 0 ELSE 1 END;
    CREATE TABLE learning_sessions (
        learning_id uuid NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
        session_id text NOT NULL,
        PRIMARY KEY (learning_id, session_id)
    );
    INSERT INTO learning_sessions (learning_id, session_id)
        SELECT id, session_id FROM learnings WHERE session_id IS NOT NULL AND session_id != '';
    CREATE TABLE learning_fixes (
        id bigserial PRIMARY KEY,
        learning_id uuid NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
        resolution_key text NOT NULL,
        resolution_summary text NOT NULL,
        fix jsonb,
        count bigint NOT NULL DEFAULT 1,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL
    );
    CREATE INDEX learning_fixes_learning ON learning_fixes (learning_id);
    INSERT INTO learning_fixes (learning_id, resolution_key, resolution_summary, fix, count, first_seen_at,
        last_seen_at) SELECT id, resolution_key, resolution_summary, fix, 1, created_at, created_at FROM learnings;
    CREATE TABLE recall_data_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL);
    INSERT INTO recall_data_migrations (name, applied_at)
        SELECT 'consolidate_causes', now() WHERE NOT EXISTS (SELECT 1 FROM learnings);
    """,
    # 7 (provenance and quarantine): where each learning came from, who posted it, its review and its
    # quarantine reasons (safety/trust.py); stored ones get the provenance their fix evidence says (none:
    # legacy). The quarantine decision of stored learnings is made in Python after the migrations (migrate()).
    """
    ALTER TABLE learnings ADD COLUMN IF NOT EXISTS provenance text NOT NULL DEFAULT 'legacy',
        ADD COLUMN IF NOT EXISTS author text,
        ADD COLUMN IF NOT EXISTS review text NOT NULL DEFAULT 'none',
        ADD COLUMN IF NOT EXISTS quarantine jsonb;
    UPDATE learnings SET provenance = CASE fix->>'source'
        WHEN 'transcript' THEN CASE WHEN fix->>'verified_by' IS NULL THEN 'agent' ELSE 'captured' END
        WHEN 'agent' THEN 'agent' WHEN 'manual' THEN 'person' ELSE 'legacy' END
        WHERE provenance = 'legacy';
    CREATE INDEX IF NOT EXISTS learnings_review ON learnings (review, provenance);
    CREATE INDEX IF NOT EXISTS learnings_unchecked ON learnings (id) WHERE quarantine IS NULL;
    """,
    # 8 (issue 39, candidate keys): what candidate generation reads by equality, a handful of index entries
    # per query (keys.py): a signature's line, slot and template keys; a learning's path and basename keys
    # under its repository, newest first (index-only for the context query). Filled for stored rows below.
    """
    CREATE OR REPLACE FUNCTION recall_key(text) RETURNS bigint IMMUTABLE STRICT PARALLEL SAFE
        LANGUAGE sql AS $$ SELECT ('x' || left(md5($1), 16))::bit(64)::bigint $$;
    CREATE TABLE IF NOT EXISTS learning_keys (
        key bigint NOT NULL,
        learning_id uuid NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
        PRIMARY KEY (key, learning_id)
    );
    CREATE INDEX IF NOT EXISTS learning_keys_learning ON learning_keys (learning_id);
    CREATE TABLE IF NOT EXISTS learning_path_keys (
        repo_key bigint NOT NULL,
        key bigint NOT NULL,
        created_at timestamptz NOT NULL,
        learning_id uuid NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
        PRIMARY KEY (repo_key, key, created_at, learning_id)
    );
    CREATE INDEX IF NOT EXISTS learning_path_keys_learning ON learning_path_keys (learning_id);
    INSERT INTO learning_path_keys (repo_key, key, created_at, learning_id)
        SELECT recall_key('repo:' || l.repo), k.key, l.created_at, l.id
        FROM files f JOIN learnings l ON l.id = f.learning_id,
        LATERAL (VALUES (recall_key('path:' || f.path)), (recall_key('base:' || f.basename))) AS k (key)
        ON CONFLICT DO NOTHING;
    """,
]
KEY_READS = 10  # index entries read per candidate key (a common template is read no further)
# the full-text path asks only terms in at most this many signatures: ranking a common word's hits reads a
# share of the whole store (a million rows: 400 ms); what such a query shares with stored errors, the keys find
FT_MAX_DF = 500
TERM_MAX = 200  # longer tokens are not counted in signature_terms (its primary key is a btree)
_MIGRATION_LOCK = 0x7265_6361_6C6C  # "recall": one migrator at a time across servers
_DATA_MIGRATION_LOCK = _MIGRATION_LOCK + 1  # one data migrator (consolidate_causes) at a time


class DatabaseUnavailable(StoreError):
    """PostgreSQL cannot be reached (down, restarting, network). Served as 503; retry later."""


class PoolExhausted(DatabaseUnavailable):
    """Every pooled connection is busy (PostgreSQL itself is up). Served as 503 with a short Retry-After."""


class ValueRefused(StoreError):
    """PostgreSQL refused a value (a limit, a data error): a bad input, not an outage. Served as 422."""


# SQLSTATE classes of a connection that is gone or a server that is not serving (others are about the data)
_OUTAGE_STATES = ("08", "57", "53", "58", "XX")


def _now() -> datetime:
    return datetime.now(UTC)


def pool_size() -> int:
    """Connections per process: RECALL_PG_POOL, else POOL_MAX (the server runs no more store calls at once)."""
    try:
        return max(1, int(os.environ.get(ENV_POOL, "") or POOL_MAX))
    except ValueError:
        raise StoreError(f"{ENV_POOL} must be a whole number of connections") from None


def safe_url(url: str) -> str:
    """The URL without its password (for logs, health and error messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


class PgStore(StoreCore):
    """PostgreSQL adapter of StoreCore; thread-safe (a connection pool). Implements CandidateStore."""

    def __init__(
        self,
        url: str,
        *,
        max_size: int | None = None,
        timeout: float = CONNECT_TIMEOUT,
        candidate_keys: bool = True,
    ) -> None:
        super().__init__()
        # candidate_keys=False: candidates as before issue 39 (unbounded full-text ranking, no keys), for A/B
        self.candidate_keys = candidate_keys
        self.max_term_docs = FT_MAX_DF if candidate_keys else None
        max_size = max_size or pool_size()
        self.url = url
        self.safe_url = safe_url(url)
        self.read_only = False
        self._timeout = timeout
        self._schema_ready = False
        self._schema_lock = threading.Lock()
        self._local = threading.local()  # .conn: the connection pinned by this thread's session()
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            timeout=timeout,
            open=False,
            check=_probe_if_idle,  # a connection that died with the server is replaced
            # reads run outside a transaction (each statement its own snapshot, as READ COMMITTED gives
            # inside one): no BEGIN/COMMIT round trips per request; writes open one (`_writing`)
            kwargs={
                "connect_timeout": max(1, int(timeout)),
                "application_name": "recall",
                "autocommit": True,
            },
        )
        self._pool.open(wait=False)  # the server starts even while PostgreSQL is down

    @property
    def pool_max(self) -> int:
        return self._pool.max_size

    # ------------------------------------------------------------------ connections

    def _conn(self, timeout: float | None = None) -> Any:
        """A pooled connection (context manager) with the schema migrated; DatabaseUnavailable if unreachable."""
        self._ensure_schema(timeout or self._timeout)
        return _Guarded(self, timeout or self._timeout)

    def _reading(self, action: str) -> Any:
        pinned = getattr(self._local, "conn", None)  # inside a session(): its connection
        return nullcontext(pinned) if pinned is not None else self._conn()

    @contextmanager
    def _writing(self, action: str, *, changes: Changes = "index") -> Iterator[psycopg.Connection]:
        with self._conn() as conn, conn.transaction():
            yield conn
            # every process's caches see this commit by the generation it bumps (module docstring of core.py)
            if changes != "access":
                conn.execute(
                    "UPDATE recall_generation SET n = n + 1 WHERE name = ANY(%s)",
                    (["data", "index"] if changes == "index" else ["data"],),
                )

    @contextmanager
    def _pinned(self) -> Iterator[None]:
        with self._conn() as conn:
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = self._local.reads = (
                    None  # what prefetch() read lives as long as the session
                )

    def _generations(self, conn: psycopg.Connection) -> tuple[int, int]:
        found = self._prefetched("gens")
        if found is not None:
            return found
        index_gen, data_gen = conn.execute(_GENERATIONS).fetchone()[0]
        return index_gen, data_gen

    def _ensure_schema(self, timeout: float) -> None:
        if self._schema_ready:
            return
        # waiting callers give up after `timeout` instead of queueing behind a migrator stuck on a dead server
        if not self._schema_lock.acquire(timeout=timeout):
            raise DatabaseUnavailable(f"PostgreSQL at {self.safe_url} is unreachable (schema check pending)")
        try:
            if not self._schema_ready:
                with _Guarded(self, timeout) as conn:
                    migrate(conn)
                self._schema_ready = True
                self._data_migrations(timeout)
        finally:
            self._schema_lock.release()

    def _data_migrations(self, timeout: float) -> None:
        """`consolidate_causes` (consolidate.py) once per database: one server runs it (an advisory lock held
        while it runs), the others go on serving; it is recorded only once done, so a crash re-runs it."""
        with _Guarded(self, timeout) as lock:  # autocommit (the pool's): the lock spans statements
            if not lock.execute("SELECT pg_try_advisory_lock(%s)", (_DATA_MIGRATION_LOCK,)).fetchone()[0]:
                return
            try:
                done = lock.execute("SELECT 1 FROM recall_data_migrations WHERE name = %s", (MIGRATION,))
                if done.fetchone() is None:
                    self.consolidate_existing()
                    lock.execute(
                        "INSERT INTO recall_data_migrations (name, applied_at) VALUES (%s, now())"
                        " ON CONFLICT DO NOTHING",
                        (MIGRATION,),
                    )
            finally:
                lock.execute("SELECT pg_advisory_unlock(%s)", (_DATA_MIGRATION_LOCK,))

    def check_schema(self, timeout: float) -> None:
        """Migrate now (the server's start): StoreError when the schema is newer than this code; a database
        that is down is DatabaseUnavailable (the server starts anyway and answers 503 until it is back)."""
        self._ensure_schema(timeout)

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ plain SQL

    # ------------------------------------------------------------------ migration "repo identity"

    def repo_pairs(self) -> list[tuple[str, str | None]]:
        """Every (repo, session id) stored (reidentify.py)."""
        with self._conn() as conn:
            return [(r, s) for r, s in conn.execute("SELECT DISTINCT repo, session_id FROM learnings")]

    def rename_repos(self, renames: dict[tuple[str, str | None], str]) -> int:
        """File the learnings of each (repo, session id) under the new repo, their history with them."""
        moved = 0
        with self._writing("file learnings under their repository") as conn:
            for (old, sid), new in sorted(renames.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
                ids = [
                    r[0]
                    for r in conn.execute(
                        "UPDATE learnings SET repo = %s WHERE repo = %s AND session_id IS NOT DISTINCT FROM %s"
                        " RETURNING id",
                        (new, old, sid),
                    )
                ]
                if ids:
                    conn.execute(
                        "UPDATE learning_events SET repo = %s WHERE repo = %s AND learning_id = ANY(%s)",
                        (new, old, ids),
                    )
                    conn.execute(  # the context keys are per repository (keys.py)
                        "UPDATE learning_path_keys SET repo_key = recall_key('repo:' || %s) WHERE learning_id = ANY(%s)",
                        (new, ids),
                    )
                moved += len(ids)
        return moved

    def bulk_load(self, learnings: Sequence[Learning]) -> int:
        """Insert learnings known to be new (an import into a fresh team store, a benchmark's setup) with
        COPY, ~50x faster than add_many: no merging. An id already stored raises ValueError and nothing
        is written."""
        now = _now()
        with self._writing("load learnings") as conn:
            conn.execute(
                "CREATE TEMP TABLE sig_stage (learning_id uuid, position integer, text text, normalized text,"
                " fingerprint text, tokens text[]) ON COMMIT DROP"
            )
            cur = conn.cursor()
            try:
                with cur.copy(
                    "COPY learnings (id, session_id, repo, file_paths_touched, resolution_summary, resolution_key,"
                    " ticket_id, task_type, confidence, access_count, last_accessed_at, created_at, updated_at,"
                    " fix, shown_count, helped_count, hurt_count, last_shown_at, last_useful_at, provenance,"
                    " author, review, quarantine) FROM STDIN"
                ) as copy:
                    for item in learnings:
                        copy.write_row(_learning_row(item, now))
            except psycopg.errors.UniqueViolation as exc:
                raise ValueError(f"bulk_load: a learning id is already stored ({_first_line(exc)})") from exc
            keyed: list[tuple[UUID, list[int]]] = []
            with cur.copy("COPY sig_stage FROM STDIN") as copy:
                for item in learnings:
                    rows = signature_rows(item.error_signatures)
                    keyed.append((item.id, _signature_keys([row.normalized for row in rows])))
                    for i, row in enumerate(rows):
                        copy.write_row(
                            (item.id, i, row.text, row.normalized, row.fingerprint, _terms(row.normalized))
                        )
            with cur.copy("COPY files (learning_id, path, basename) FROM STDIN") as copy:
                for item in learnings:
                    for path in dedupe(item.file_paths_touched):
                        copy.write_row((item.id, path, path_basename(path)))
            with cur.copy("COPY learning_keys (key, learning_id) FROM STDIN") as copy:
                for lid, keys in keyed:
                    for key in keys:
                        copy.write_row((key, lid))
            with cur.copy(
                "COPY learning_path_keys (repo_key, key, created_at, learning_id) FROM STDIN"
            ) as copy:
                for item in learnings:
                    paths = dedupe(item.file_paths_touched)
                    created = _aware(item.created_at) or now
                    for key in ckeys.path_keys(paths, [path_basename(p) for p in paths]):
                        copy.write_row((ckeys.repo_key(item.repo), key, created, item.id))
            conn.execute(
                "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint, tsv)"
                " SELECT learning_id, position, text, normalized, fingerprint, array_to_tsvector(tokens) FROM sig_stage"
            )
            conn.execute(
                "INSERT INTO signature_terms (term, df) SELECT t, count(*) FROM sig_stage, unnest(tokens) AS t"
                " GROUP BY t ORDER BY t ON CONFLICT (term) DO UPDATE SET df = signature_terms.df + EXCLUDED.df"
            )
            # each one's occurrence, session and fix, as a write through add() records them (consolidate.py)
            ids = [item.id for item in learnings]
            conn.execute(
                "UPDATE learnings SET first_seen_at = created_at, last_seen_at = created_at, session_count ="
                " CASE WHEN session_id IS NULL OR session_id = '' THEN 0 ELSE 1 END WHERE id = ANY(%s)",
                (ids,),
            )
            conn.execute(
                "INSERT INTO learning_sessions (learning_id, session_id) SELECT id, session_id FROM learnings"
                " WHERE id = ANY(%s) AND session_id IS NOT NULL AND session_id != ''",
                (ids,),
            )
            conn.execute(
                "INSERT INTO learning_fixes (learning_id, resolution_key, resolution_summary, fix, count,"
                " first_seen_at, last_seen_at) SELECT id, resolution_key, resolution_summary, fix, 1, created_at,"
                " created_at FROM learnings WHERE id = ANY(%s)",
                (ids,),
            )
        return len(learnings)

    def delete(self, learning_id: UUID | str) -> bool:
        lid = parse_id(learning_id)
        with self._writing("delete a learning") as conn:
            return self._delete_in(conn, lid)

    # ------------------------------------------------------------------ curation dialect (curation.py)

    _event_key = "id"
    _ilike = "ILIKE"

    def _delete_in(self, conn: psycopg.Connection, lid: UUID) -> bool:
        terms = [
            r[0] for r in conn.execute("SELECT normalized FROM signatures WHERE learning_id = %s", (lid,))
        ]
        _count_terms(conn, terms, -1)
        return conn.execute("DELETE FROM learnings WHERE id = %s", (lid,)).rowcount > 0

    def _q(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _minmax(self, sql: str) -> str:
        return sql.replace("MIN(", "LEAST(").replace("MAX(", "GREATEST(")

    def _jparam(self, value: Any) -> Jsonb:
        return Jsonb(value)

    def count(self, timeout: float | None = None) -> int:
        with self._conn(timeout) as conn:
            return int(conn.execute("SELECT count(*) FROM learnings").fetchone()[0])

    def adjust_confidence(self, learning_id: UUID | str, delta: float) -> float | None:
        lid = parse_id(learning_id)
        with self._writing("adjust confidence", changes="data") as conn:
            row = conn.execute(
                "UPDATE learnings SET confidence = least(1.0, greatest(0.0, confidence + %s)), updated_at = now()"
                " WHERE id = %s RETURNING confidence",
                (delta, lid),
            ).fetchone()
        return float(row[0]) if row else None

    def record_access(self, ids: Sequence[UUID]) -> None:
        if not ids:
            return
        with self._writing("record access", changes="access") as conn:
            conn.execute(
                "UPDATE learnings SET access_count = access_count + 1, last_accessed_at = now() WHERE id = ANY(%s)",
                (list(ids),),
            )

    def record_accesses(self, counts: Mapping[UUID, int]) -> None:
        """Several requests' access counts in one statement (the server's batched flush, server/store.py)."""
        if not counts:
            return
        ids = sorted(counts)  # one row order for every writer
        with self._writing("record access", changes="access") as conn:
            conn.execute(
                "UPDATE learnings l SET access_count = l.access_count + c.n, last_accessed_at = now()"
                " FROM unnest(%s::uuid[], %s::int[]) AS c (id, n) WHERE l.id = c.id",
                (ids, [counts[i] for i in ids]),
            )

    def cache_embeddings(self, items: Sequence[tuple[int, bytes]], model: str) -> None:
        """Keep embeddings retrieval computed (by signature row id) so later queries reuse them."""
        if not items:
            return
        with self._writing("cache embeddings", changes="data") as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE signatures SET embedding = %s, embedding_model = %s WHERE id = %s",
                [(blob, model, rid) for rid, blob in items],
            )

    # ------------------------------------------------------------------ StoreCore hooks

    def _lock_resolution(self, conn: psycopg.Connection, repo: str, key: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{repo}\n{key}",))

    def _merge_target(self, conn: psycopg.Connection, repo: str, key: str, fps: list[str]) -> UUID | None:
        if fps:
            row = conn.execute(
                "SELECT l.id FROM learnings l JOIN signatures s ON s.learning_id = l.id"
                " WHERE l.repo = %s AND md5(l.resolution_key) = md5(%s) AND l.resolution_key = %s"
                " AND s.fingerprint = ANY(%s) ORDER BY l.created_at LIMIT 1",
                (repo, key, key, fps),
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT id FROM learnings l WHERE repo = %s AND md5(resolution_key) = md5(%s)"
                " AND resolution_key = %s AND NOT EXISTS (SELECT 1 FROM signatures s WHERE s.learning_id = l.id)"
                " ORDER BY created_at LIMIT 1",
                (repo, key, key),
            ).fetchone()
        return row[0] if row else None

    def _merge_state(self, conn: psycopg.Connection, lid: UUID) -> MergeState:
        paths, confidence, ticket, fix = conn.execute(
            "SELECT file_paths_touched, confidence, ticket_id, fix FROM learnings WHERE id = %s FOR UPDATE",
            (lid,),
        ).fetchone()
        fps = {
            r[0] for r in conn.execute("SELECT fingerprint FROM signatures WHERE learning_id = %s", (lid,))
        }
        start = conn.execute(
            "SELECT coalesce(max(position) + 1, 0) FROM signatures WHERE learning_id = %s", (lid,)
        ).fetchone()[0]
        return MergeState(list(paths), float(confidence), ticket, fps, int(start), fix)

    def _update_merged(
        self,
        conn: psycopg.Connection,
        lid: UUID,
        paths: list[str],
        confidence: float,
        ticket: str | None,
        fix: dict[str, Any] | None,
    ) -> None:
        conn.execute(
            "UPDATE learnings SET file_paths_touched = %s, confidence = %s, ticket_id = %s, fix = %s,"
            " updated_at = now() WHERE id = %s",
            (Jsonb(paths), confidence, ticket, Jsonb(fix) if fix else None, lid),
        )

    def _exists(self, conn: psycopg.Connection, lid: UUID) -> bool:
        return conn.execute("SELECT 1 FROM learnings WHERE id = %s", (lid,)).fetchone() is not None

    def _insert_learning(
        self, conn: psycopg.Connection, learning: Learning, key: str, paths: list[str]
    ) -> None:
        conn.execute(
            "INSERT INTO learnings (id, session_id, repo, file_paths_touched, resolution_summary,"
            " resolution_key, ticket_id, task_type, confidence, access_count, last_accessed_at,"
            " created_at, updated_at, fix, shown_count, helped_count, hurt_count, last_shown_at, last_useful_at,"
            " provenance, author, review, quarantine)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            _learning_row(learning, _now()),
        )

    def _insert_signatures(
        self, conn: psycopg.Connection, lid: UUID, rows: list[SignatureRow], start: int
    ) -> None:
        if not rows:
            return
        _count_terms(conn, [r.normalized for r in rows], 1)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint, tsv, embedding,"
                " embedding_model) VALUES (%s,%s,%s,%s,%s, array_to_tsvector(%s::text[]), %s,%s)",
                [
                    (lid, start + i, r.text, r.normalized, r.fingerprint, _terms(r.normalized), r.embedding,
                     r.embedding_model)
                    for i, r in enumerate(rows)
                ],
            )  # fmt: skip
        conn.execute(
            "INSERT INTO learning_keys (key, learning_id) SELECT k, %s FROM unnest(%s::bigint[]) AS k"
            " ORDER BY k ON CONFLICT DO NOTHING",
            (lid, _signature_keys(r.normalized for r in rows)),
        )

    def _insert_files(self, conn: psycopg.Connection, lid: UUID, paths: list[str]) -> None:
        if not paths:
            return
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO files (learning_id, path, basename) VALUES (%s,%s,%s)",
                [(lid, p, path_basename(p)) for p in paths],
            )
        conn.execute(
            "INSERT INTO learning_path_keys (repo_key, key, created_at, learning_id)"
            " SELECT recall_key('repo:' || l.repo), k, l.created_at, l.id FROM learnings l,"
            " unnest(%s::bigint[]) AS k WHERE l.id = %s ORDER BY k ON CONFLICT DO NOTHING",
            (ckeys.path_keys(paths, [path_basename(p) for p in paths]), lid),
        )

    def _cache_key(self, lid: UUID) -> UUID:
        return lid  # ids read from PostgreSQL and learnings' ids are both UUIDs: no str() per id

    def _learning_rows(self, conn: psycopg.Connection, ids: list[UUID]) -> Iterator[LearningRow]:
        for r in conn.execute(f"SELECT {_LEARNING_COLUMNS} FROM learnings WHERE id = ANY(%s)", (ids,)):
            yield _read_learning(r)

    def _candidate_rows(
        self, conn: psycopg.Connection, ids: list[UUID]
    ) -> Iterator[tuple[LearningRow, list[SignatureRow]]]:
        # the learning and its signatures (as arrays in position order) in one statement
        for r in conn.execute(
            # aggregated in the order of the subquery (the index's): six `ORDER BY` aggregates sort six times per
            # learning, which cost PostgreSQL more CPU than the two statements this replaces
            f"SELECT {_LEARNING_COLUMNS}, s.t, s.n, s.f, s.e, s.m, s.i FROM learnings l CROSS JOIN LATERAL"
            " (SELECT array_agg(text) t, array_agg(normalized) n, array_agg(fingerprint) f, array_agg(embedding) e,"
            " array_agg(embedding_model) m, array_agg(id) i FROM (SELECT text, normalized, fingerprint, embedding,"
            " embedding_model, id FROM signatures WHERE learning_id = l.id ORDER BY position) o) s"
            " WHERE l.id = ANY(%s)",
            (ids,),
        ).fetchall():
            rows = (
                [
                    SignatureRow(t, n, f, bytes(e) if e is not None else None, m, i)
                    for t, n, f, e, m, i in zip(*r[25:], strict=True)
                ]
                if r[25] is not None
                else []
            )
            yield _read_learning(r), rows

    def _signature_rows(
        self, conn: psycopg.Connection, ids: list[UUID]
    ) -> Iterator[tuple[UUID, SignatureRow]]:
        for r in conn.execute(
            "SELECT learning_id, text, normalized, fingerprint, embedding, embedding_model, id"
            " FROM signatures WHERE learning_id = ANY(%s) ORDER BY learning_id, position",
            (ids,),
        ):
            blob = bytes(r[4]) if r[4] is not None else None
            yield r[0], SignatureRow(r[1], r[2], r[3], blob, r[5], r[6])

    def _page(
        self, conn: psycopg.Connection, after: tuple[datetime, UUID] | None, batch: int
    ) -> list[tuple[datetime, UUID]]:
        if after is None:
            return conn.execute(
                "SELECT created_at, id FROM learnings ORDER BY created_at, id LIMIT %s", (batch,)
            ).fetchall()
        return conn.execute(
            "SELECT created_at, id FROM learnings WHERE (created_at, id) > (%s, %s) ORDER BY created_at, id LIMIT %s",
            (*after, batch),
        ).fetchall()

    def _ids_by_fingerprint(self, conn: psycopg.Connection, fps: list[str], limit: int) -> list[UUID]:
        found = self._prefetched(("fp", tuple(fps), limit))
        if found is not None:
            return found
        return [r[0] for r in conn.execute(_BY_FINGERPRINT, (fps, limit))]

    def _doc_counts_of(self, conn: psycopg.Connection, terms: list[str]) -> dict[str, int]:
        found = self._prefetched(
            "df"
        )  # (the terms asked, their counts): another thread may have cached some since
        if found is not None and found[0].issuperset(terms):
            return {t: n for t, n in found[1].items() if t in terms}
        return dict(conn.execute(_DOC_COUNTS, (terms,)).fetchall())

    def _ranked_ids(
        self, conn: psycopg.Connection, terms: list[str], require_all: bool, limit: int
    ) -> list[UUID]:
        lexemes = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms]
        query = (" & " if require_all else " | ").join(lexemes)
        rows = conn.execute(
            "SELECT learning_id FROM signatures WHERE tsv @@ %s::tsquery"
            " ORDER BY ts_rank(tsv, %s::tsquery) DESC, id LIMIT %s",
            (query, query, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def _ids_in_repo(
        self,
        conn: psycopg.Connection,
        repo: str,
        fps: list[str],
        terms: list[str],
        require_all: bool,
        limit: int,
    ) -> list[UUID]:
        """Learnings of `repo` with one of `fps`, then its best full-text hits on `terms` (consolidate.py)."""
        ids = [r[0] for r in conn.execute(
            "SELECT DISTINCT s.learning_id FROM signatures s JOIN learnings l ON l.id = s.learning_id"
            " WHERE s.fingerprint = ANY(%s) AND l.repo = %s LIMIT %s", (fps, repo, limit))] if fps else []  # fmt: skip
        if terms:
            lexemes = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms]
            query = (" & " if require_all else " | ").join(lexemes)
            ids += [r[0] for r in conn.execute(
                "SELECT s.learning_id FROM signatures s JOIN learnings l ON l.id = s.learning_id"
                " WHERE s.tsv @@ %s::tsquery AND l.repo = %s ORDER BY ts_rank(s.tsv, %s::tsquery) DESC, s.id LIMIT %s",
                (query, repo, query, limit))]  # fmt: skip
        return list(dict.fromkeys(ids))

    def _ids_by_paths(
        self, conn: psycopg.Connection, repo: str, paths: list[str], bases: list[str], limit: int
    ) -> list[UUID]:
        # each key's newest `limit` from the index alone (learning_path_keys), then the newest of their union:
        # the same learnings as a join of files and learnings ordered by date, reading at most keys x limit
        # index entries however many learnings share a basename
        found = self._prefetched(("paths", repo, tuple(paths), tuple(bases), limit))
        if found is None:
            params = (ckeys.path_keys(paths, bases), ckeys.repo_key(repo), limit)
            found = [r[0] for r in conn.execute(_BY_PATHS, params).fetchall()]
        return list(dict.fromkeys(found))[:limit]

    # ------------------------------------------------------------------ candidate keys (keys.py)

    def candidates_by_keys(self, keys: Sequence[ckeys.Key], limit: int) -> list[Candidate]:
        """Learnings that share a line or a decisive value with the query (up to KEY_READS index entries a
        key); the template keys (the same kind of message) only when those found none."""
        if not keys or not self.candidate_keys:
            return []
        with self._reading("search learnings") as conn:
            self._refresh_caches(conn)
            ids: list[UUID] = []
            specific, broad = _key_values(keys)
            if specific:
                ids = list(dict.fromkeys(self._ids_by_keys(conn, specific, KEY_READS)))
            if broad and not ids:  # no learning shares a line or a value: the same kind of message, a few
                ids = list(dict.fromkeys(self._ids_by_keys(conn, broad, KEY_READS)))
            return self._cached_candidates(conn, ids[:limit])

    def _ids_by_keys(self, conn: psycopg.Connection, keys: list[int], per_key: int) -> list[UUID]:
        found = self._prefetched(("keys", tuple(keys), per_key))
        if found is not None:
            return found
        return [r[0] for r in conn.execute(_BY_KEYS, (keys, per_key)).fetchall()]

    def _ids_by_task(self, conn: psycopg.Connection, repo: str, task_type: str, limit: int) -> list[UUID]:
        found = self._prefetched(("task", repo, task_type, limit))
        if found is not None:
            return found
        return [r[0] for r in conn.execute(_BY_TASK, (repo, task_type, limit))]

    # ------------------------------------------------------------------ one round trip for a request's first reads

    def prefetch(
        self,
        *,
        fingerprints: Sequence[str] = (),
        fingerprint_limit: int = 0,
        keys: Sequence[ckeys.Key] = (),
        terms: Sequence[str] = (),
        repo: str = "",
        file_paths: Sequence[str] = (),
        task_type: str | None = None,
        context_limit: int = 0,
    ) -> None:
        """Inside a session(): read in one statement what the request's candidate reads will ask first (the
        cache generations, the ids by fingerprint, by key, by path and by task, the document counts of the
        terms the cache lacks), each answer kept under the arguments its own read would pass. The reads
        are unchanged: each takes its answer from here when its arguments match, else asks the database
        as before; what is not taken is dropped with the session. ~5 round trips a request become ~2
        (docs/benchmarks.md, issue 39's fifth round)."""
        if getattr(self._local, "conn", None) is None:
            return
        parts: list[tuple[Hashable, str, tuple[Any, ...]]] = [("gens", f"({_GENERATIONS})", ())]
        fps = list(dict.fromkeys(fingerprints))
        if fps:
            parts.append(
                (("fp", tuple(fps), fingerprint_limit), f"ARRAY({_BY_FINGERPRINT})", (fps, fingerprint_limit))
            )
        specific, broad = _key_values(keys) if self.candidate_keys else ([], [])
        # the specific keys' ids, read once for their column and the broad keys' test
        head, head_params = "", ()
        if specific:
            head, head_params = (
                f"WITH spec AS MATERIALIZED (SELECT ARRAY({_BY_KEYS}) AS ids) ",
                (specific, KEY_READS),
            )
            parts.append((("keys", tuple(specific), KEY_READS), "(SELECT ids FROM spec)", ()))
        if broad:  # read only when the specific keys find nothing (as candidates_by_keys does)
            when = "(SELECT cardinality(ids) = 0 FROM spec)" if specific else "true"
            parts.append(
                (
                    ("keys", tuple(broad), KEY_READS),
                    f"CASE WHEN {when} THEN ARRAY({_BY_KEYS}) END",
                    (broad, KEY_READS),
                )
            )
        unknown = [t for t in wanted_terms(terms) if t not in self._doc_counts]
        if unknown:
            parts.append(("df", _DOC_COUNTS_JSON, (unknown,)))
        paths, bases = context_paths(file_paths)
        if paths:
            params = (ckeys.path_keys(paths, bases), ckeys.repo_key(repo), context_limit)
            parts.append(
                (("paths", repo, tuple(paths), tuple(bases), context_limit), f"ARRAY({_BY_PATHS})", params)
            )
        if task_type:
            params = (repo, task_type, context_limit)
            parts.append((("task", repo, task_type, context_limit), f"ARRAY({_BY_TASK})", params))
        sql = head + "SELECT " + ", ".join(part[1] for part in parts)
        row = self._local.conn.execute(
            sql, [*head_params, *(p for part in parts for p in part[2])]
        ).fetchone()
        reads: dict[Hashable, Any] = {"gens": tuple(row[0])}
        for (key, _, params), value in zip(parts[1:], row[1:], strict=True):
            reads[key] = (frozenset(params[0]), value or {}) if key == "df" else value
        self._local.reads = reads

    def _prefetched(self, key: Hashable) -> Any:
        """The answer prefetch() read for these arguments (once), else None."""
        reads = getattr(self._local, "reads", None)
        return reads.pop(key, None) if reads else None


# candidate reads: each run alone, or several as one statement by PgStore.prefetch (as ARRAY(...) of them)
_GENERATIONS = (
    "SELECT ARRAY[COALESCE((SELECT n FROM recall_generation WHERE name = 'index'), 0),"
    " COALESCE((SELECT n FROM recall_generation WHERE name = 'data'), 0)]"
)
_BY_FINGERPRINT = (
    "SELECT learning_id FROM signatures WHERE fingerprint = ANY(%s) GROUP BY learning_id LIMIT %s"
)
_BY_KEYS = (
    "SELECT k.learning_id FROM unnest(%s::bigint[]) WITH ORDINALITY AS u (key, n) CROSS JOIN LATERAL"
    " (SELECT learning_id FROM learning_keys WHERE key = u.key LIMIT %s) AS k ORDER BY u.n"
)
_BY_PATHS = (
    "SELECT k.learning_id FROM unnest(%s::bigint[]) AS u (key) CROSS JOIN LATERAL"
    " (SELECT learning_id, created_at FROM learning_path_keys WHERE repo_key = %s AND key = u.key"
    " ORDER BY created_at DESC LIMIT %s) AS k ORDER BY k.created_at DESC, k.learning_id"
)
_BY_TASK = "SELECT id FROM learnings WHERE repo = %s AND task_type = %s ORDER BY created_at DESC LIMIT %s"
_DOC_COUNTS = "SELECT term, df FROM signature_terms WHERE term = ANY(%s)"
_DOC_COUNTS_JSON = "(SELECT json_object_agg(term, df) FROM signature_terms WHERE term = ANY(%s))"


def _key_values(keys: Sequence[ckeys.Key]) -> tuple[list[int], list[int]]:
    """A query's candidate keys: (line and slot keys, template keys)."""
    return [k.value for k in keys if k.kind != "template"], [k.value for k in keys if k.kind == "template"]


_LEARNING_COLUMNS = (  # as _read_learning reads them
    "id, session_id, repo, file_paths_touched, resolution_summary, ticket_id, task_type, confidence,"
    " access_count, last_accessed_at, created_at, fix, shown_count, helped_count, hurt_count, last_shown_at,"
    " last_useful_at, seen_count, session_count, first_seen_at, last_seen_at, provenance, author, review,"
    " quarantine"
)


def _read_learning(r: Sequence[Any]) -> LearningRow:
    """A `learnings` row read as _LEARNING_COLUMNS (its first 25 values)."""
    return LearningRow(
        r[0], r[1], r[2], list(r[3]), r[4], r[5], r[6], float(r[7]), int(r[8]), r[9], r[10], r[11],
        int(r[12]), int(r[13]), int(r[14]), r[15], r[16], int(r[17]), int(r[18]), r[19], r[20],
        r[21], r[22], r[23], None if r[24] is None else list(r[24]),
    )  # fmt: skip


def _probe_if_idle(conn: psycopg.Connection) -> None:
    """The pool's check at checkout: a connection returned less than PROBE_IDLE seconds ago answered then, so
    it is used as it is (probing every checkout was one round trip of a request's five or six); one idle
    longer may have died with the server and is probed. A connection that breaks in between fails its
    request with a 503 and is discarded by the pool when returned."""
    if conn.closed or time.monotonic() - getattr(conn, "_recall_returned", 0.0) > PROBE_IDLE:
        ConnectionPool.check_connection(conn)


class _Guarded:
    """`with` a pooled connection; connection failures become DatabaseUnavailable with a readable message."""

    def __init__(self, store: PgStore, timeout: float) -> None:
        self.store = store
        self.timeout = timeout
        self._cm: Any = None
        self._conn: Any = None

    def __enter__(self) -> psycopg.Connection:
        self._cm = self.store._pool.connection(timeout=self.timeout)
        try:
            self._conn = self._cm.__enter__()
            return self._conn
        except PoolTimeout as exc:
            stats = self.store._pool.get_stats()
            if stats.get("pool_size", 0) >= self.store._pool.max_size and not stats.get("pool_available", 0):
                raise PoolExhausted(
                    f"all {self.store._pool.max_size} PostgreSQL connections are busy"
                    f" (none free within {self.timeout:g}s); retry shortly"
                ) from exc
            raise DatabaseUnavailable(
                f"PostgreSQL at {self.store.safe_url} is unreachable (no connection within {self.timeout:g}s)"
            ) from exc
        except psycopg.OperationalError as exc:
            raise _translated(self.store, exc) from exc

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        # when it was returned (_probe_if_idle), noted here: the pool's `reset` hook would hand every return to
        # its worker thread, a thread hop per request (~10 % of a request's CPU at 1M; docs/benchmarks.md)
        self._conn._recall_returned = time.monotonic()
        try:
            self._cm.__exit__(exc_type, exc, tb)
        except psycopg.Error as err:  # the commit itself failed: nothing was acknowledged
            raise _translated(self.store, err) from err
        if isinstance(exc, psycopg.Error) and not isinstance(exc, StoreError):
            raise _translated(self.store, exc) from exc
        return False


def _translated(store: PgStore, exc: BaseException) -> StoreError:
    """A psycopg error as the store's own: an outage (503) or a refused value (422). PostgreSQL's own text
    (index names, values) is logged, never put in the message a client sees."""
    state = getattr(exc, "sqlstate", None) or ""
    log.warning("postgresql error", extra={"fields": {"sqlstate": state, "error": _first_line(exc)[:300]}})
    if not state or state.startswith(_OUTAGE_STATES):
        return DatabaseUnavailable(
            f"PostgreSQL at {store.safe_url} is unreachable or failing ({type(exc).__name__})"
        )
    return ValueRefused(f"the learnings store cannot hold this value (PostgreSQL SQLSTATE {state})")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# ---------------------------------------------------------------------- schema


def _fill_signature_keys(conn: psycopg.Connection) -> None:
    """Candidate keys of the signatures stored before migration 6 (computed in Python: keys.py)."""
    with conn.cursor(name="recall_keys_backfill") as read, conn.cursor() as write:
        read.itersize = 5000
        read.execute("SELECT learning_id, normalized FROM signatures")
        while rows := read.fetchmany(5000):
            pairs = {(k.value, lid) for lid, normalized in rows for k in ckeys.keys_of(normalized)}
            write.executemany(
                "INSERT INTO learning_keys (key, learning_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                sorted(pairs, key=lambda p: (p[0], str(p[1]))),
            )


def _version_holding(sql: str) -> int:
    """The version of the migration whose SQL holds `sql` (found by content: versions get renumbered when
    branches merge)."""
    return next(v for v, text in enumerate(MIGRATIONS, start=1) if sql in text)


# Python steps of a migration, run after its SQL in the same transaction (by version)
AFTER_MIGRATION: dict[int, Callable[[psycopg.Connection], None]] = {
    _version_holding("CREATE TABLE IF NOT EXISTS learning_keys"): _fill_signature_keys
}


def migrate(conn: psycopg.Connection) -> int:
    """Apply pending MIGRATIONS (append-only). Returns the schema version now in place."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS recall_schema (version integer NOT NULL, applied_at timestamptz NOT NULL)"
        )
        current = conn.execute("SELECT coalesce(max(version), 0) FROM recall_schema").fetchone()[0]
        if current > len(MIGRATIONS):
            raise StoreError(
                f"the PostgreSQL learnings schema is version {current}, newer than this recall supports"
                f" ({len(MIGRATIONS)}); upgrade recall"
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            conn.execute(MIGRATIONS[version - 1])
            if version in AFTER_MIGRATION:
                AFTER_MIGRATION[version](conn)
            conn.execute("INSERT INTO recall_schema (version, applied_at) VALUES (%s, now())", (version,))
        _check_unchecked(conn)
    return len(MIGRATIONS)


def _check_unchecked(conn: psycopg.Connection, batch: int = 1000) -> None:
    """The quarantine decision for learnings stored before it existed (a partial index finds them: a
    no-op once done)."""
    while True:
        rows = conn.execute(
            "SELECT id, resolution_summary, fix FROM learnings WHERE quarantine IS NULL LIMIT %s", (batch,)
        ).fetchall()
        if not rows:
            return
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE learnings SET quarantine = %s WHERE id = %s",
                [(Jsonb(quarantine_reasons(text, fix)), lid) for lid, text, fix in rows],
            )


# ---------------------------------------------------------------------- internals


def _aware(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _terms(normalized: str) -> list[str]:
    return sorted({t for t in sigs.tokens(normalized) if len(t) <= TERM_MAX})


def _signature_keys(normalized: Iterable[str]) -> list[int]:
    """The distinct candidate keys of a learning's signatures (keys.py), sorted (writers lock in one order)."""
    return sorted({k.value for text in normalized for k in ckeys.keys_of(text)})


def _count_terms(conn: psycopg.Connection, normalized_texts: list[str], delta: int) -> None:
    """signature_terms.df += delta for each distinct token (sorted: concurrent writers lock in one order)."""
    terms = sorted({t for text in normalized_texts for t in _terms(text)})
    if not terms:
        return
    conn.execute(
        "INSERT INTO signature_terms (term, df) SELECT t, %s FROM unnest(%s::text[]) AS t ORDER BY t"
        " ON CONFLICT (term) DO UPDATE SET df = signature_terms.df + EXCLUDED.df",
        (delta, terms),
    )


def _learning_row(learning: Learning, now: datetime) -> tuple[Any, ...]:
    return (
        learning.id,
        learning.session_id,
        learning.repo,
        Jsonb(dedupe(learning.file_paths_touched)),
        learning.resolution_summary,
        resolution_key(learning.resolution_summary),
        learning.ticket_id,
        learning.task_type.value,
        learning.confidence,
        learning.access_count,
        _aware(learning.last_accessed_at),
        _aware(learning.created_at) or now,
        now,
        Jsonb(learning.fix.model_dump(mode="json")) if learning.fix else None,
        learning.shown_count,
        learning.helped_count,
        learning.hurt_count,
        _aware(learning.last_shown_at),
        _aware(learning.last_useful_at),
        *_safety(learning),
    )


def _safety(learning: Learning) -> tuple[str, str | None, str, Jsonb]:
    provenance, author, review, reasons = safety_columns(learning)
    return provenance, author, review, Jsonb(reasons)
