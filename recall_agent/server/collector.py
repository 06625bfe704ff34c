"""The garbage collector of a `recall serve` process: full collections when the server chooses, not mid-load.

CPython's automatic full (generation 2) collection walks every object the collector tracks, and runs each
time the long-lived ones have grown by a quarter. A server's long-lived objects are its modules, app and
pool (~120,000 objects) and its candidate caches (~10 per cached learning, up to core.CACHE_MAX learnings),
so while the caches fill, a full collection ran every few seconds and stopped the whole process for
150–750 ms at a million learnings (3 per process in 15 s of bench_server.py's load): every request in
flight waited for it, the largest share of the p99 (docs/benchmarks.md, issue 39's fourth round).

Here, once the server has started:
- what exists then (modules, app, pool) is frozen (`gc.freeze`): no collection walks it again;
- automatic full collections are off; the young generations are collected as before (a few ms each), and
  they reclaim what requests leave behind, which dies young;
- a full collection runs every FULL_INTERVAL seconds at the first second no request is in flight, or after
  2 × FULL_INTERVAL whatever the load, so reference cycles that lived long are still reclaimed.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

log = logging.getLogger("recall_agent.server")

FULL_INTERVAL = 300.0  # seconds between full collections (while requests are in flight: up to twice this)
NEVER = 2**31 - 1  # a generation-2 threshold that automatic collection never reaches
TICK = 1.0  # how often the collector looks for an idle moment


class Collector:
    """Counts requests in flight (`tracking` wraps the ASGI app) and runs the full collections."""

    def __init__(self, interval: float = FULL_INTERVAL, tick: float = TICK) -> None:
        self.interval, self.tick = interval, tick
        self.in_flight = 0
        self.full_collections = 0
        self._thresholds: tuple[int, int, int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tracking(self, app: Any) -> Any:
        """`app` with its HTTP requests counted while in flight."""

        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            self.in_flight += 1  # the event loop's thread only: no lock
            try:
                await app(scope, receive, send)
            finally:
                self.in_flight -= 1

        return counted

    def start(self) -> None:
        """Freeze what the started server holds, turn automatic full collections off, start the thread."""
        if self._thread is not None:
            return
        gc.collect()
        gc.freeze()
        self._thresholds = gc.get_threshold()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, NEVER)
        self._thread = threading.Thread(target=self._run, name="recall-gc", daemon=True)
        self._thread.start()
        log.info(
            "garbage collector",
            extra={"fields": {"frozen": gc.get_freeze_count(), "full_every_s": self.interval}},
        )

    def stop(self) -> None:
        """Stop the thread and give CPython its own thresholds back (frozen objects stay frozen)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=10)
        self._thread = None
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.tick):
            waited = time.monotonic() - last
            if waited >= 2 * self.interval or (waited >= self.interval and self.in_flight == 0):
                self.collect()
                last = time.monotonic()

    def collect(self) -> None:
        t0 = time.perf_counter()
        found = gc.collect()
        self.full_collections += 1
        log.info(
            "full garbage collection",
            extra={
                "fields": {
                    "ms": round((time.perf_counter() - t0) * 1000, 1),
                    "unreachable": found,
                    "in_flight": self.in_flight,
                }
            },
        )
