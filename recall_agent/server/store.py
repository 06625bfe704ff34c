"""Where `recall serve` keeps learnings: the embedded SQLite store, or PostgreSQL for a team.

Both backends answer through the learnings package's own retrieval (one ranking everywhere); they differ
only in the store underneath. Store calls are blocking, so they run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol
from uuid import UUID

import anyio.to_thread

from recall_agent.config import ENV_DATABASE_URL
from recall_agent.learnings.wire import RetrievalRequest, RetrievalResponse
from recall_agent.models import Learning, LearningRetrievalRequest

log = logging.getLogger("recall_agent.server")


class StoreUnavailable(RuntimeError):
    """The store cannot answer right now (PostgreSQL down, SQLite locked/corrupt). Served as 503."""

    retry_after = 5


class StoreBusy(StoreUnavailable):
    """Every store connection is busy (the database itself is up). Served as 503 with Retry-After: 1."""

    retry_after = 1


class StoreRefused(RuntimeError):
    """The store cannot hold a value of the request. Served as 422."""


HEALTH_TIMEOUT = 1.0  # /health answers within this, whatever the request workers are doing
_health_threads = anyio.CapacityLimiter(2)  # its own threads: never queued behind busy requests


class LearningsBackend(Protocol):
    name: str

    async def retrieve(self, request: LearningRetrievalRequest) -> RetrievalResponse: ...

    async def add(self, learning: Learning) -> tuple[UUID, bool]: ...

    async def health(self) -> dict[str, Any]: ...

    async def run(self, func: Any, *args: Any, write: bool = False) -> Any: ...

    def close(self) -> None: ...


def _store_errors() -> tuple[type[BaseException], ...]:
    from recall_agent.learnings.types import StoreError

    return (StoreError,)


CLOSE_PATIENCE = 5.0  # seconds the last flush of access counts is retried at shutdown


class AccessRecorder:
    """Access counts (access_count, last_accessed_at) written in batches off the request path: one write a
    second instead of one per query (a SQLite write holds the store's lock through its fsync). Pending
    counts are flushed at shutdown; a crash loses at most ~1 s of access counts, never a learning.

    `store` should not be the one requests read through when that store serializes its callers (SQLite:
    one connection behind a lock): a flush of a second's counts takes tens of ms at 100k learnings, and
    every request of the worker would wait for it (bench/bench_server.py's p99). `owned` stores are
    closed with the recorder."""

    def __init__(self, store: Any, interval: float = 1.0, *, owned: bool = False) -> None:
        self.store, self.interval, self.owned = store, interval, owned
        self._pending: Counter[UUID] = Counter()
        self.written = 0  # accesses the store took over this recorder's life (the shutdown line says it)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="recall-access-counts", daemon=True)
        self._thread.start()

    def note(self, ids: list[UUID]) -> None:
        with self._lock:
            self._pending.update(ids)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush()

    def flush(self) -> bool:
        """Write the pending counts; False (counts kept for the next flush, bounded) when the store refused."""
        with self._lock:
            batch, self._pending = self._pending, Counter()
        try:
            self.store.record_accesses(batch)  # one statement (SQLite: one transaction) for the batch
        except Exception as exc:  # store down or locked: keep the counts for the next flush (bounded)
            log.warning("access counts not recorded yet", extra={"fields": {"error": str(exc)[:200]}})
            with self._lock:
                if len(self._pending) < 100_000:
                    self._pending.update(batch)
            return False
        self.written += sum(batch.values())
        return True

    def close(self, patience: float = CLOSE_PATIENCE) -> None:
        """Stop the flushing thread and write what is pending. The last flush is retried for `patience`
        seconds: at shutdown every worker flushes at once, and a SQLite writer can find the file locked by
        another's write and checkpoint for longer than its busy timeout on a loaded machine."""
        self._stop.set()
        self._thread.join(timeout=10)
        deadline = time.monotonic() + patience
        while not self.flush() and time.monotonic() < deadline:
            time.sleep(0.2)
        with self._lock:
            unwritten = sum(self._pending.values())
        log.info("access counts", extra={"fields": {"written": self.written, "unwritten": unwritten}})
        if self.owned:
            self.store.close()


def answer(
    store: Any, request: LearningRetrievalRequest, access: AccessRecorder | None = None
) -> RetrievalResponse:
    """The learnings node over a given store (`recall_agent.learnings.answer`); with an AccessRecorder the access
    counts are written in batches off the request path instead of per query."""
    from recall_agent.learnings import answer as node_answer

    response = node_answer(store, request, record_access=access is None)
    if access is not None:
        access.note([m.learning_id for m in response.matches])
    return response


_PROBE = RetrievalRequest(
    repo="recall-health-probe",
    error_text="HealthProbeError: store self-check",
    file_paths=["health/probe.py"],
)


INTEGRITY_INTERVAL = 10.0


def quick_check(path: Any) -> str | None:
    """SQLite's own consistency check of the file (read-only connection); None when it is sound."""
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as conn:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    except sqlite3.Error:  # locked, unreadable right now: not a verdict on the file
        return None
    return None if rows == ["ok"] else " ".join("; ".join(rows).split())[:300]


def _probe(store: Any) -> int:
    from recall_agent.learnings import answer as node_answer

    count = store.count()
    node_answer(store, _PROBE, record_access=False)
    return count


SQLITE_THREADS = 8  # SQLite: one connection behind a lock, so more threads would only wait for it
# PostgreSQL reads: ranking is CPU work under the GIL, so threads only need to cover a request's waits on the
# database (one computes while another waits). With a thread per pooled connection (16), every request in
# flight took turns at the GIL at each of its round trips and the unlucky ones waited the longest
# (bench_server.py's p99 at 1M halved with 2; docs/benchmarks.md, issue 39's fourth round); queued here they
# are answered in turn.
PG_READ_THREADS = 2
PG_WRITE_THREADS = 4  # writes wait on locks and commits, not the GIL: their own threads, never behind reads


class _StoreBackend:
    """What both backends share: a store, the recorder that batches its access counts, and the threads that
    run store calls (reads and writes apart)."""

    store: Any
    access: AccessRecorder
    closed = False
    threads: ThreadPoolExecutor | None = None
    write_threads: ThreadPoolExecutor | None = None

    broken: str | None = None  # SQLite: a corrupt file does not heal

    async def run(self, func: Any, *args: Any, write: bool = False) -> Any:
        """`func(store, *args)` in a worker thread (the review page's reads and writes); a write is refused
        while the store is known to be corrupt."""
        if write and self.broken:
            raise StoreUnavailable(self.broken)
        return await self._call(func, self.store, *args, write=write)

    async def _call(self, func: Any, *args: Any, limiter: Any = None, write: bool = False) -> Any:
        raise NotImplementedError

    async def _in_thread(self, func: Any, *args: Any, limiter: Any = None, write: bool = False) -> Any:
        """`func(*args)` off the event loop: with a `limiter` (health) in anyio's threads, abandoned on
        cancel; else in this backend's own pool for reads or for writes. Its hop costs ~20 µs of CPU
        against anyio's ~50 (a CapacityLimiter, a cancel scope and a Condition per call)."""
        if limiter is not None:
            return await anyio.to_thread.run_sync(func, *args, limiter=limiter, abandon_on_cancel=True)
        return await asyncio.get_running_loop().run_in_executor(
            self._executor(write), functools.partial(func, *args)
        )

    def _executor(self, write: bool) -> ThreadPoolExecutor:
        if write:
            if self.write_threads is None:
                self.write_threads = ThreadPoolExecutor(self._thread_count(True), "recall-store-write")
            return self.write_threads
        if self.threads is None:
            self.threads = ThreadPoolExecutor(self._thread_count(False), thread_name_prefix="recall-store")
        return self.threads

    def _thread_count(self, write: bool) -> int:
        return SQLITE_THREADS

    def close(self) -> None:  # idempotent: the app's lifespan and the process exit both call it
        if not self.closed:
            self.closed = True
            for threads in (self.threads, self.write_threads):
                if threads is not None:
                    threads.shutdown(wait=True)  # store calls in flight end before the store closes
            self.access.close()
            self.store.close()


class SqliteBackend(_StoreBackend):
    """The embedded store under $RECALL_HOME, shared by every request of this process."""

    name = "sqlite"

    def __init__(self) -> None:
        from recall_agent.learnings import integrity
        from recall_agent.learnings.store import open_store

        try:
            self.store = open_store()
        except _store_errors() as exc:
            raise StoreUnavailable(str(exc)) from exc
        # a server never starts writing into a damaged file: the whole check once, at start
        problem = quick_check(self.store.path)
        if problem:
            self.store.close()
            raise StoreUnavailable(integrity.damaged_message(self.store.path, problem))
        integrity.note_sound(self.store.path)
        try:
            # access counts through a connection of their own: WAL lets requests read while it writes
            self.access = AccessRecorder(open_store(path=self.store.path), owned=True)
        except _store_errors() as exc:
            self.store.close()
            raise StoreUnavailable(str(exc)) from exc
        self.broken: str | None = None  # a corrupt file does not heal: /health stays 503 once seen
        self._checked_at = 0.0
        self._checking = threading.Lock()

    async def retrieve(self, request: LearningRetrievalRequest) -> RetrievalResponse:
        return await self._call(answer, self.store, request, self.access)

    async def add(self, learning: Learning) -> tuple[UUID, bool]:
        if self.broken:
            raise StoreUnavailable(self.broken)
        return await self._call(self.store.add, learning, write=True)

    async def health(self) -> dict[str, Any]:
        """Ok only when the store really answers: a count and a retrieval (full-text index, candidate rows)
        through the same code as requests; a count alone reads pages a corrupt file may still have intact."""
        self._check_integrity_soon()
        if self.broken:
            raise StoreUnavailable(self.broken)
        with anyio.move_on_after(HEALTH_TIMEOUT):
            count = await self._call(_probe, self.store, limiter=_health_threads)
            return {"store": self.name, "path": str(self.store.path), "learnings": count}
        raise StoreUnavailable(f"learnings store {self.store.path} did not answer within {HEALTH_TIMEOUT:g}s")

    def _check_integrity_soon(self) -> None:
        """`PRAGMA quick_check` in a background thread at most every INTEGRITY_INTERVAL seconds (it reads the
        whole file: never on the request path); a failure marks the store broken."""
        if time.monotonic() - self._checked_at < INTEGRITY_INTERVAL or not self._checking.acquire(
            blocking=False
        ):
            return
        self._checked_at = time.monotonic()

        def check() -> None:
            try:
                problem = quick_check(self.store.path)
                if problem:
                    self.broken = f"learnings store {self.store.path} is corrupt ({problem}); move it aside"
            finally:
                self._checking.release()

        threading.Thread(target=check, name="recall-integrity-check", daemon=True).start()

    async def _call(self, func: Any, *args: Any, limiter: Any = None, write: bool = False) -> Any:
        try:
            return await self._in_thread(func, *args, limiter=limiter, write=write)
        except _store_errors() as exc:
            if "corrupt" in str(exc):
                self.broken = str(exc)
            raise StoreUnavailable(str(exc)) from exc


class PostgresBackend(_StoreBackend):
    """PostgreSQL through a connection pool (recall_agent/learnings/pg_store.py)."""

    name = "postgresql"

    def __init__(self, url: str) -> None:
        from recall_agent.learnings.pg_store import DatabaseUnavailable, PgStore
        from recall_agent.learnings.types import StoreError

        self.store = PgStore(url)
        try:
            self.store.check_schema(3.0)  # a newer schema stops the server here, with one line
        except DatabaseUnavailable:
            pass  # down at start: serve 503 until it is back
        except StoreError as exc:
            self.store.close()
            raise StoreUnavailable(str(exc)) from exc
        self.access = AccessRecorder(self.store)

    def _thread_count(self, write: bool) -> int:
        return min(PG_WRITE_THREADS if write else PG_READ_THREADS, self.store.pool_max)

    async def retrieve(self, request: LearningRetrievalRequest) -> RetrievalResponse:
        return await self._call(answer, self.store, request, self.access)

    async def add(self, learning: Learning) -> tuple[UUID, bool]:
        return await self._call(self.store.add, learning, write=True)

    async def health(self) -> dict[str, Any]:
        with anyio.move_on_after(HEALTH_TIMEOUT):
            count = await self._call(self.store.count, HEALTH_TIMEOUT, limiter=_health_threads)
            return {"store": self.name, "database": self.store.safe_url, "learnings": count}
        raise StoreUnavailable(
            f"PostgreSQL at {self.store.safe_url} did not answer within {HEALTH_TIMEOUT:g}s"
        )

    async def _call(self, func: Any, *args: Any, limiter: Any = None, write: bool = False) -> Any:
        from recall_agent.learnings.pg_store import DatabaseUnavailable, PoolExhausted, ValueRefused
        from recall_agent.learnings.types import StoreError

        try:
            return await self._in_thread(func, *args, limiter=limiter, write=write)
        except PoolExhausted as exc:
            raise StoreBusy(str(exc)) from exc
        except ValueRefused as exc:
            raise StoreRefused(str(exc)) from exc
        except (DatabaseUnavailable, StoreError) as exc:
            raise StoreUnavailable(str(exc)) from exc


def backend_from_env() -> LearningsBackend:
    url = os.environ.get(ENV_DATABASE_URL, "").strip()
    return PostgresBackend(url) if url else SqliteBackend()
