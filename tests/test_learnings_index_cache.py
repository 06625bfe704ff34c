"""Both stores cache full-text lookups (term document counts, ranked hits) and loaded candidates; every
write must show, whether made through the same store object or another one (another server worker)."""

from __future__ import annotations

from collections.abc import Callable
from uuid import uuid4

import pytest

from recall_agent.learnings.store import open_store
from recall_agent.models import Learning


@pytest.fixture(params=["sqlite", "postgres"])
def open_store_(request: pytest.FixtureRequest) -> Callable:
    """Opens a store object on one shared database (SQLite file or PostgreSQL database) per call."""
    if request.param == "sqlite":
        return open_store
    from recall_agent.learnings.pg_store import PgStore

    url = request.getfixturevalue("pg_url")
    return lambda: PgStore(url)


def _learning(error: str, fix: str, repo: str = "r") -> Learning:
    return Learning(id=uuid4(), repo=repo, error_signatures=[error], resolution_summary=fix)


def _ids(store, terms: list[str]) -> set[str]:
    return {str(c.learning.id) for c in store.candidates_by_terms(terms, 20)}


def test_own_writes_and_deletes_show_in_term_candidates(open_store_: Callable) -> None:
    with open_store_() as store:
        first = _learning("KeyError: 'flux_capacitor_setting'", "add the key to settings.toml")
        store.add(first)
        terms = ["flux_capacitor_setting", "keyerror"]
        assert _ids(store, terms) == {str(first.id)}
        # another repository (in one repository the same cause is one learning)
        second = _learning("KeyError: 'flux_capacitor_setting' in loader", "load defaults first", "r2")
        store.add(second)
        assert _ids(store, terms) == {str(first.id), str(second.id)}
        assert store.delete(first.id)
        assert _ids(store, terms) == {str(second.id)}


def test_another_connections_write_shows_in_term_candidates(open_store_: Callable) -> None:
    with open_store_() as reader, open_store_() as writer:
        terms = ["quantum_flux_mode", "attributeerror"]
        assert _ids(reader, terms) == set()  # caches "absent" for these terms
        added = _learning("AttributeError: 'Engine' object has no attribute 'quantum_flux_mode'", "rename it")
        writer.add(added)
        assert _ids(reader, terms) == {str(added.id)}


def test_access_counts_keep_results_the_same(open_store_: Callable) -> None:
    with open_store_() as store:
        added = _learning("ValueError: bad ripple_width_px value", "clamp ripple_width_px")
        store.add(added)
        terms = ["ripple_width_px", "valueerror"]
        assert _ids(store, terms) == {str(added.id)}
        store.record_access([added.id])
        assert _ids(store, terms) == {str(added.id)}
        assert store.get(added.id).access_count == 1


def test_candidates_show_merges_and_access_counts(open_store_: Callable) -> None:
    with open_store_() as store:
        added = _learning("OSError: cannot open tachyon_buffer_path", "create the tachyon buffer dir")
        store.add(added)
        fp = store.candidates_by_terms(["tachyon_buffer_path"], 20)[0].signatures[0].fingerprint
        assert store.candidates_by_fingerprint([fp], 20)[0].learning.access_count == 0
        store.record_access([added.id])
        merged = Learning(
            repo="r",
            error_signatures=[
                "OSError: cannot open tachyon_buffer_path",
                "PermissionError: tachyon_buffer_path",
            ],
            resolution_summary="create the tachyon buffer dir",
            file_paths_touched=["buffers/tachyon.py"],
        )
        assert store.add(merged) == (added.id, True)
        (cand,) = store.candidates_by_fingerprint([fp], 20)
        assert cand.learning.access_count == 1
        assert cand.learning.file_paths_touched == ["buffers/tachyon.py"]
        assert len(cand.signatures) == 2


def test_access_counts_from_another_worker_keep_the_caches(open_store_: Callable) -> None:
    """A server's workers write access counts every second: that must not throw the other workers' caches
    away (ranking never reads the counts), while a confidence change, which ranking reads, must show."""
    with open_store_() as reader, open_store_() as writer:
        added = _learning("ImportError: cannot import name 'warp_coil' from 'engine'", "rename warp_coil")
        writer.add(added)
        (cached,) = reader.candidates_by_terms(["warp_coil", "importerror"], 20)
        writer.record_access([added.id])
        (again,) = reader.candidates_by_terms(["warp_coil", "importerror"], 20)
        assert again is cached  # served from the cache, not reloaded
        writer.adjust_confidence(added.id, -0.3)
        (changed,) = reader.candidates_by_terms(["warp_coil", "importerror"], 20)
        assert changed is not cached and round(changed.learning.confidence, 2) == 0.5
        assert reader.get(added.id).access_count == 1  # get() reads the row itself


def test_one_request_takes_one_pooled_connection(pg_url: str) -> None:
    from recall_agent.learnings import RetrievalRequest, answer
    from recall_agent.learnings.pg_store import PgStore

    with PgStore(pg_url) as store:
        store.add(_learning("KeyError: 'dilithium_ratio'", "default dilithium_ratio to 1"))
        request = RetrievalRequest(repo="r", error_text="KeyError: 'dilithium_ratio'", file_paths=["a.py"])
        answer(store, request, record_access=False)  # warm: schema check, caches
        before = store._pool.get_stats().get("requests_num", 0)
        response = answer(store, request, record_access=False)
        assert [m.resolution_summary for m in response.matches] == ["default dilithium_ratio to 1"]
        # fingerprint, full-text and context candidates, and the generation check: one checkout
        assert store._pool.get_stats().get("requests_num", 0) - before == 1
