"""What every learnings store does, written once: merging on add, candidate generation for retrieval.py, and
the caches that keep candidate generation fast. A store (SQLite `store.py`, PostgreSQL `pg_store.py`) is a
thin adapter that supplies connections and the SQL of its database through the hooks below.

Merging: one learning per cause per repository (consolidate.py). A learning of the same repo whose
resolution is the same and shares a signature fingerprint, else the one the fitted same-cause decision
picks, is updated instead of a new row inserted: its counts, sessions, first/last seen, every distinct error
text, every fix ranked by how often it worked (the top one shown), file paths unioned, confidence the max,
the first ticket wins. A learning without error signatures merges only on the same repo + resolution.

Caches (per store object, so per process or server worker): a term's document count and a full-text query's
ranked learning ids cost a scan of the term's index entries each time (~1 ms per common term); loaded
candidates cost two queries. Each cache is keyed by a *generation* the adapter keeps in its database and
every writer bumps in its own transaction: the index generation when signatures change, the data generation
when anything ranking reads changes. Access counts bump neither: ranking never reads them, and a server's
workers write them every second, which used to throw every worker's caches away as often (the tail of
bench/bench_server.py). So a cached candidate's access_count may be behind; `get()` reads the row itself.

A request's several candidate calls share one `session()`: one connection (PostgreSQL: one pool checkout
instead of three) and one generation check.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from uuid import UUID

from recall_agent.learnings.consolidate import Consolidation
from recall_agent.learnings.curation import Curation
from recall_agent.learnings.records import (
    dedupe,
    parse_id,
    path_basename,
    read_task_type,
    resolution_key,
    signature_rows,
)
from recall_agent.learnings.types import Candidate, SignatureRow, StoredLearning

if TYPE_CHECKING:  # the read path stays free of pydantic; only writes and exports take wire models
    from recall_agent.models import Learning

Changes = Literal["index", "data", "access"]  # signatures (and data) / ranking data / access counts only
MAX_QUERY_TERMS = 4  # the rarest query terms sent to the full-text index
CACHE_MAX = 50_000  # entries of each cache before it is dropped whole


def wanted_terms(terms: Sequence[str]) -> list[str]:
    """The query terms a full-text candidate read considers (lower-cased, distinct, at most 64)."""
    return [t for t in dict.fromkeys(t.lower() for t in terms) if t][:64]


def context_paths(file_paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """The distinct paths of a context query and their distinct basenames."""
    paths = [p for p in dict.fromkeys(file_paths) if p]
    return paths, list(dict.fromkeys(path_basename(p) for p in paths))


class LearningRow(NamedTuple):
    """A `learnings` row as the adapter reads it, converted to Python values."""

    id: UUID
    session_id: str | None
    repo: str
    file_paths_touched: list[str]
    resolution_summary: str
    ticket_id: str | None
    task_type: str
    confidence: float
    access_count: int
    last_accessed_at: datetime | None
    created_at: datetime  # NOT NULL in both schemas
    fix: dict[str, Any] | None = None  # the learning's fix evidence (models.FixEvidence as JSON)
    shown_count: int = 0
    helped_count: int = 0
    hurt_count: int = 0
    last_shown_at: datetime | None = None
    last_useful_at: datetime | None = None
    seen_count: int = 1
    session_count: int = 0
    first_seen_at: datetime | None = None
    last_seen_at: datetime | None = None
    provenance: str = "legacy"
    author: str | None = None
    review: str = "none"
    quarantine: list[str] | None = None


class MergeState(NamedTuple):
    """What merging needs of the learning merged into."""

    file_paths: list[str]
    confidence: float
    ticket_id: str | None
    fingerprints: set[str]
    next_position: int
    fix: dict[str, Any] | None = None


class StoreCore(Consolidation, Curation, ABC):
    """The store API (`add`, `add_many`, `get`, `iter_all`) and `CandidateStore` over an adapter's SQL."""

    read_only: bool = False
    # terms in more signatures than this are not asked of the full-text index (None: no bound); a store that
    # bounds them finds what such words share by its candidate keys (pg_store.py)
    max_term_docs: int | None = None

    def __init__(self) -> None:
        self._cache_lock = threading.Lock()
        self._index_gen: Hashable = None
        self._data_gen: Hashable = None
        self._doc_counts: dict[str, int] = {}
        self._ranked: dict[tuple[tuple[str, ...], bool, int], list[str]] = {}
        self._candidates: dict[Hashable, Candidate] = {}
        self._session = threading.local()  # .fresh: caches checked in this thread's open session

    # ------------------------------------------------------------------ adapter: connections

    @abstractmethod
    def _reading(self, action: str) -> AbstractContextManager[Any]:
        """A connection for reads; store failures become StoreError naming `action`."""

    @abstractmethod
    def _writing(self, action: str, *, changes: Changes = "index") -> AbstractContextManager[Any]:
        """A write transaction, committed on exit, that bumps the generations of what it `changes`."""

    @abstractmethod
    def _generations(self, conn: Any) -> tuple[Hashable, Hashable]:
        """(index generation, data generation) as committed now, by any connection."""

    @contextmanager
    def _pinned(self) -> Iterator[None]:
        """Adapter hook: keep one reading connection for this thread until exit (default: nothing to do)."""
        yield

    # ------------------------------------------------------------------ adapter: SQL

    @abstractmethod
    def _lock_resolution(self, conn: Any, repo: str, key: str) -> None:
        """Serialize concurrent writers of one repo + resolution, so a duplicate merges, never forks (`key`
        "" serializes every writer of the repo: one learning per cause is decided across resolutions)."""

    @abstractmethod
    def _merge_target(self, conn: Any, repo: str, key: str, fingerprints: list[str]) -> Any | None: ...

    @abstractmethod
    def _merge_state(self, conn: Any, lid: Any) -> MergeState: ...

    @abstractmethod
    def _update_merged(
        self,
        conn: Any,
        lid: Any,
        paths: list[str],
        confidence: float,
        ticket: str | None,
        fix: dict[str, Any] | None,
    ) -> None: ...

    @abstractmethod
    def _exists(self, conn: Any, lid: Any) -> bool: ...

    @abstractmethod
    def _insert_learning(self, conn: Any, learning: Learning, key: str, paths: list[str]) -> None: ...

    @abstractmethod
    def _insert_signatures(self, conn: Any, lid: Any, rows: list[SignatureRow], start: int) -> None: ...

    @abstractmethod
    def _insert_files(self, conn: Any, lid: Any, paths: list[str]) -> None: ...

    @abstractmethod
    def _learning_rows(self, conn: Any, ids: list[Any]) -> Iterator[LearningRow]: ...

    @abstractmethod
    def _signature_rows(self, conn: Any, ids: list[Any]) -> Iterator[tuple[Any, SignatureRow]]:
        """(learning id, row) for the learnings `ids`, each learning's rows in position order."""

    def _candidate_rows(self, conn: Any, ids: list[Any]) -> Iterator[tuple[LearningRow, list[SignatureRow]]]:
        """Each learning of `ids` (any order, unknown ids skipped) with its signature rows in position order.
        Two queries by default; an adapter may read both in one (pg_store.py: a round trip fewer for every
        candidate the cache lacks)."""
        sigs: dict[str, list[SignatureRow]] = {}
        for lid, row in self._signature_rows(conn, ids):
            sigs.setdefault(str(lid), []).append(row)
        for r in self._learning_rows(conn, ids):
            yield r, sigs.get(str(r.id), [])

    @abstractmethod
    def _page(self, conn: Any, after: tuple[Any, Any] | None, batch: int) -> list[tuple[Any, Any]]:
        """(created_at, id) of the next `batch` learnings after `after`, oldest first."""

    @abstractmethod
    def _ids_by_fingerprint(self, conn: Any, fingerprints: list[str], limit: int) -> list[Any]: ...

    @abstractmethod
    def _doc_counts_of(self, conn: Any, terms: list[str]) -> dict[str, int]:
        """How many signatures hold each term (terms the index does not know may be left out)."""

    @abstractmethod
    def _ranked_ids(self, conn: Any, terms: list[str], require_all: bool, limit: int) -> list[Any]:
        """Learning ids whose signatures hold all (or any) of `terms`, best full-text rank first."""

    @abstractmethod
    def _ids_in_repo(
        self, conn: Any, repo: str, fps: list[str], terms: list[str], require_all: bool, limit: int
    ) -> list[Any]:
        """Learnings of `repo` with a signature of one of `fps`, then its best full-text hits on all (or any)
        of `terms`: the same-cause lookup at write time (consolidate.py)."""

    @abstractmethod
    def _ids_by_paths(
        self, conn: Any, repo: str, paths: list[str], bases: list[str], limit: int
    ) -> list[Any]:
        """Learnings of `repo` that touched one of `paths` or a file named one of `bases`, newest first."""

    @abstractmethod
    def _ids_by_task(self, conn: Any, repo: str, task_type: str, limit: int) -> list[Any]:
        """Learnings of `repo` with `task_type`, newest first."""

    def _key(self, learning_id: UUID) -> Any:
        """The adapter's id value for a learning id (SQLite stores text, PostgreSQL uuid)."""
        return learning_id

    def _cache_key(self, lid: Any) -> Hashable:
        """The candidate cache's key of an adapter id or a learning's UUID: one key for both (SQLite's ids
        are text, so text; an adapter whose ids are UUIDs may use them as they are)."""
        return str(lid)

    # ------------------------------------------------------------------ store API

    def add(self, learning: Learning, *, consolidate: bool = True) -> tuple[UUID, bool]:
        """Store a learning, or merge it into an existing one (module docstring). Returns (id, merged) once
        the write has committed. `consolidate` False keeps a learning of another resolution as its own row
        even when it is the same cause (what a recall before issue 34 stored; `recall review merge` and
        the migration fold such rows)."""
        with self._writing("add a learning") as conn:
            return self._add(conn, learning, consolidate)

    def add_many(self, learnings: Sequence[Learning], *, consolidate: bool = True) -> list[tuple[UUID, bool]]:
        """add() for many learnings in one transaction (all or nothing)."""
        with self._writing("add learnings") as conn:
            return [self._add(conn, learning, consolidate) for learning in learnings]

    def get(self, learning_id: UUID | str) -> Learning | None:
        lid = self._key(parse_id(learning_id))
        with self._reading("read a learning") as conn:
            found = self._load(conn, [lid], fixes=True)
        return found[0].learning.to_model() if found else None

    def iter_all(self, batch: int = 500) -> Iterator[Learning]:
        """Every learning, oldest first, in batches (keyset pagination, so a large store streams)."""
        after: tuple[Any, Any] | None = None
        while True:
            with self._reading("list learnings") as conn:
                keys = self._page(conn, after, batch)
                if not keys:
                    return
                loaded = self._load(conn, [k[1] for k in keys], fixes=True)
            after = keys[-1]
            yield from (c.learning.to_model() for c in loaded)

    # ------------------------------------------------------------------ CandidateStore

    def candidates_by_fingerprint(self, fingerprints: Sequence[str], limit: int) -> list[Candidate]:
        fps = list(dict.fromkeys(fingerprints))
        if not fps:
            return []
        with self._reading("search learnings") as conn:
            self._refresh_caches(conn)
            return self._cached_candidates(conn, self._ids_by_fingerprint(conn, fps, limit))

    def candidates_by_terms(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        wanted = wanted_terms(terms)
        if not wanted:
            return []
        with self._reading("search learnings") as conn:
            self._refresh_caches(conn)
            rare = self._rarest(conn, wanted)
            if not rare:
                return []
            # all of the rarest terms first (small, precise); any of them only if that finds nothing
            ids: list[Any] = []
            for require_all in (True, False) if len(rare) > 1 else (False,):
                ids = self._cached_ranked(conn, rare, require_all, limit * 4)
                if ids:
                    break
            return self._cached_candidates(conn, list(dict.fromkeys(ids))[:limit])

    def candidates_by_context(
        self, repo: str, file_paths: Sequence[str], task_type: str | None, limit: int
    ) -> list[Candidate]:
        paths, bases = context_paths(file_paths)
        if not paths and not task_type:
            return []
        with self._reading("search learnings") as conn:
            self._refresh_caches(conn)
            # two indexed queries (one with `paths OR task type` walks the repository's learnings)
            ids = self._ids_by_paths(conn, repo, paths, bases, limit) if paths else []
            ids += self._ids_by_task(conn, repo, task_type, limit) if task_type else []
            return self._cached_candidates(conn, list(dict.fromkeys(ids))[: limit * 2])

    # ------------------------------------------------------------------ merging

    def _add(self, conn: Any, learning: Learning, consolidate: bool = True) -> tuple[UUID, bool]:
        rows = signature_rows(learning.error_signatures)
        key = resolution_key(learning.resolution_summary)
        paths = dedupe(learning.file_paths_touched)
        self._lock_resolution(conn, learning.repo, "")  # one cause, one row: across resolutions too
        # the same resolution with a shared fingerprint (a plain lookup), else the fitted same-cause decision
        target = self._merge_target(conn, learning.repo, key, [r.fingerprint for r in rows])
        lid = self._key(learning.id)
        if target is None and self._exists(conn, lid):  # an id that names another learning: a conflict
            raise ValueError(f"a different learning with id {learning.id} already exists")
        if target is None and rows and consolidate:
            target = self._same_cause(conn, learning.repo, rows, learning)
        if target is not None:
            self._occur(conn, target, learning, rows, paths)
            return UUID(str(target)), True
        self._insert_learning(conn, learning, key, paths)
        self._insert_signatures(conn, lid, rows, start=0)
        self._insert_files(conn, lid, paths)
        self._record_first(conn, lid, learning)
        return learning.id, False

    # ------------------------------------------------------------------ reading

    def _load(self, conn: Any, ids: list[Any], *, fixes: bool = False) -> list[Candidate]:
        """Candidates for ids, in the order given (unknown ids skipped); `fixes`: with every fix of each
        (ranking never reads them)."""
        if not ids:
            return []
        by_id: dict[str, Candidate] = {}
        for r, rows in self._candidate_rows(conn, ids):
            learning = StoredLearning(**{**r._asdict(), "task_type": read_task_type(r.task_type)})
            learning.error_signatures.extend(row.text for row in rows)
            by_id[str(r.id)] = Candidate(learning=learning, signatures=rows)
        if fixes:
            for lid, found in self._fixes_of(conn, [i for i in ids if str(i) in by_id]).items():
                by_id[lid].learning.fixes = found if len(found) > 1 else []
        return [by_id[str(i)] for i in ids if str(i) in by_id]

    # ------------------------------------------------------------------ caches

    @contextmanager
    def session(self) -> Iterator[None]:
        """One request's reads: a pinned connection, caches checked once (module docstring)."""
        if getattr(self._session, "open", False):
            yield
            return
        with self._pinned():
            self._session.open, self._session.fresh = True, False
            try:
                yield
            finally:
                self._session.open = self._session.fresh = False

    def _refresh_caches(self, conn: Any) -> None:
        """Drop what a commit (ours or another connection's) may have made stale; once per session."""
        if getattr(self._session, "fresh", False):
            return
        self._session.fresh = getattr(self._session, "open", False)
        index_gen, data_gen = self._generations(conn)
        with self._cache_lock:
            if index_gen != self._index_gen or len(self._doc_counts) + len(self._ranked) > 2 * CACHE_MAX:
                self._doc_counts = {}
                self._ranked = {}
                self._index_gen = index_gen
            if data_gen != self._data_gen or len(self._candidates) > CACHE_MAX:
                self._candidates = {}
                self._data_gen = data_gen

    def _rarest(self, conn: Any, terms: list[str]) -> list[str]:
        """The MAX_QUERY_TERMS terms present in the fewest signatures: they discriminate, and a match on
        common words would rank half the store. Terms absent from the store (or in more than
        max_term_docs signatures) are dropped."""
        docs = self._doc_counts
        unknown = [t for t in terms if t not in docs]
        if unknown:
            found = self._doc_counts_of(conn, unknown)
            docs.update((t, found.get(t, 0)) for t in unknown)
        bound = self.max_term_docs
        present = [t for t in terms if docs.get(t) and (bound is None or docs[t] <= bound)]
        return sorted(present, key=lambda t: (docs[t], t))[:MAX_QUERY_TERMS]

    def _cached_ranked(self, conn: Any, terms: list[str], require_all: bool, limit: int) -> list[Any]:
        key = (tuple(terms), require_all, limit)
        hits = self._ranked.get(key)
        if hits is None:
            hits = self._ranked[key] = self._ranked_ids(conn, terms, require_all, limit)
        return hits

    def _cached_candidates(self, conn: Any, ids: list[Any]) -> list[Candidate]:
        """`_load` through the candidate cache (callers only read candidates, never change them); the
        caller has called `_refresh_caches` on this connection."""
        cache, key = self._candidates, self._cache_key
        keyed = [(i, key(i)) for i in ids]  # str(UUID) is Python code: once per id
        missing = [i for i, k in keyed if k not in cache]
        if missing:
            cache.update((key(c.learning.id), c) for c in self._load(conn, missing))
        return [cache[k] for _, k in keyed if k in cache]
