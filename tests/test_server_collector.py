"""The server's garbage collector (recall_agent/server/collector.py) with CPython's real collector: what the
started server holds is frozen, automatic full collections are off, and its own full collections come at
idle moments (or late, under constant load) and still reclaim reference cycles that lived long."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from collections.abc import Iterator

import pytest

from recall_agent.server.collector import NEVER, Collector


@pytest.fixture
def collector() -> Iterator[Collector]:
    before = gc.get_threshold()
    c = Collector(interval=0.3, tick=0.05)
    yield c
    c.stop()
    gc.unfreeze()  # this test process's objects: collected as before
    gc.set_threshold(*before)


class Cycle:
    def __init__(self) -> None:
        self.me = self


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_start_freezes_and_turns_automatic_full_collections_off(collector: Collector) -> None:
    before = gc.get_threshold()
    collector.start()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (before[0], before[1], NEVER)
    collector.stop()
    assert gc.get_threshold() == before


def test_a_long_lived_cycle_is_reclaimed_at_an_idle_moment(collector: Collector) -> None:
    collector.start()
    cycle = Cycle()
    ref = weakref.ref(cycle)
    gc.collect(1)  # survives the young generations: now only a full collection can reclaim it
    del cycle
    gc.collect(1)
    assert ref() is not None
    assert _wait_for(lambda: ref() is None, 3.0)
    assert collector.full_collections >= 1


def test_no_full_collection_mid_request_until_twice_the_interval(collector: Collector) -> None:
    """A request in flight defers the full collection; under constant load it still comes, at 2 x interval."""
    release = threading.Event()

    async def app(scope, receive, send) -> None:
        while not release.is_set():
            await asyncio.sleep(0.01)

    tracked = collector.tracking(app)
    worker = threading.Thread(target=asyncio.run, args=(tracked({"type": "http"}, None, None),))
    worker.start()
    try:
        assert _wait_for(lambda: collector.in_flight == 1, 5.0)  # in flight before the collector starts
        started = time.monotonic()
        collector.start()
        assert _wait_for(lambda: collector.full_collections >= 1, 5.0)
        assert time.monotonic() - started >= 2 * collector.interval  # not at the first interval
    finally:
        release.set()
        worker.join(5)
    assert collector.in_flight == 0
