"""Team storage against a real PostgreSQL (started by .ci/services; skipped only when
RECALL_TEST_DATABASE_URL is unset). Each test gets its own fresh database.

Outages are real: the server reaches PostgreSQL through a loopback TCP relay (tests/server_fixtures.py)
that the test takes down and brings back.
"""

from __future__ import annotations

import concurrent.futures
import os
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import with_db as _with_db
from server_fixtures import RunningServer, TcpProxy, start_server

from recall_agent.learnings import signatures as sigs
from recall_agent.models import Learning

PG_URL = os.environ.get("RECALL_TEST_DATABASE_URL", "")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="RECALL_TEST_DATABASE_URL is unset (source .ci/services)"),
]
LEARN = "/v1/learnings"


@pytest.fixture
def pg_store(pg_url: str):
    from recall_agent.learnings.pg_store import PgStore

    store = PgStore(pg_url)
    yield store
    store.close()


def make(repo: str = "shop", error: str = "KeyError: 'user_id'", fix: str = "Use dict.get", **kw) -> Learning:
    return Learning(repo=repo, error_signatures=[error] if error else [], resolution_summary=fix, **kw)


# --------------------------------------------------------------------------- the store itself


def test_store_crud_merge_and_conflict(pg_store) -> None:
    first = make(file_paths_touched=["app/models.py"], ticket_id="T-1")
    lid, merged = pg_store.add(first)
    assert (lid, merged) == (first.id, False)
    # same repo + same resolution (modulo case/space) + same fingerprint (line numbers normalize away) → merge
    again = make(
        error="KeyError: 'user_id'",
        fix="  use DICT.get ",
        file_paths_touched=["app/views.py"],
        confidence=0.95,
    )
    assert pg_store.add(again) == (first.id, True)
    stored = pg_store.get(first.id)
    assert stored.file_paths_touched == ["app/models.py", "app/views.py"]
    assert stored.confidence == 0.95 and stored.ticket_id == "T-1"
    assert stored.error_signatures == ["KeyError: 'user_id'"]
    assert pg_store.count() == 1
    # other repo → a separate learning
    assert pg_store.add(make(repo="billing"))[1] is False
    with pytest.raises(ValueError, match="already exists"):  # another cause under a used id
        pg_store.add(make(id=first.id, error="ValueError: coupon expired", fix="something else"))
    assert pg_store.adjust_confidence(first.id, -2) == 0.0
    assert pg_store.adjust_confidence(uuid.uuid4(), 0.1) is None
    assert sorted(x.repo for x in pg_store.iter_all(batch=1)) == ["billing", "shop"]
    assert pg_store.delete(first.id) is True and pg_store.delete(first.id) is False
    assert pg_store.count() == 1


def test_candidates_match_the_sqlite_store(pg_store, isolated_recall_env: Path) -> None:
    """Both stores generate the same candidates for the same data: one ranking gives one answer."""
    from recall_agent.learnings.store import open_store

    data = [
        make(
            error="ModuleNotFoundError: No module named 'yaml'",
            fix="pip install pyyaml",
            file_paths_touched=["pyproject.toml"],
            task_type="dependency",
        ),
        make(
            error="TypeError: 'NoneType' object is not subscriptable",
            fix="guard None",
            file_paths_touched=["app/views.py"],
            task_type="bug_fix",
        ),
        make(
            error="ImportError: cannot import name 'Foo' from 'pkg.models'",
            fix="break the cycle",
            file_paths_touched=["pkg/models.py"],
            task_type="refactor",
        ),
        make(repo="billing", error="ModuleNotFoundError: No module named 'requests'", fix="add requests"),
    ]
    with open_store(isolated_recall_env) as lite:
        for item in data:
            lite.add(item)
            pg_store.add(item)
        fp = sigs.fingerprint("ModuleNotFoundError: No module named 'yaml'")
        queries = [
            ("fingerprint", lambda s: s.candidates_by_fingerprint([fp], 5)),
            ("terms", lambda s: s.candidates_by_terms(["modulenotfounderror", "yaml"], 5)),
            ("terms-none", lambda s: s.candidates_by_terms(["zzzunknown"], 5)),
            ("context-file", lambda s: s.candidates_by_context("shop", ["src/APP/views.py"], None, 5)),
            ("context-type", lambda s: s.candidates_by_context("shop", [], "refactor", 5)),
        ]
        for label, query in queries:
            got_pg = {c.learning.id for c in query(pg_store)}
            got_lite = {c.learning.id for c in query(lite)}
            assert got_pg == got_lite, label
        assert {c.learning.id for c in pg_store.candidates_by_terms(["modulenotfounderror", "yaml"], 5)} >= {
            data[0].id
        }
        cand = pg_store.candidates_by_fingerprint([fp], 5)[0]
        assert cand.signatures[0].fingerprint == fp and cand.signatures[0].row_id is not None
        pg_store.record_access([data[0].id])
        assert pg_store.get(data[0].id).access_count == 1


def test_concurrent_writers_store_exactly_every_learning(pg_store) -> None:
    def writer(w: int) -> list[bool]:
        return [pg_store.add(make(error=f"E{w}x{i}: boom", fix=f"fix {w}-{i}"))[1] for i in range(50)]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        merged = [m for batch in pool.map(writer, range(8)) for m in batch]
    assert merged.count(False) == 400
    assert pg_store.count() == 400


def test_concurrent_duplicates_merge_into_one(pg_store) -> None:
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: pg_store.add(make()), range(16)))
    assert len({lid for lid, _ in results}) == 1
    assert [m for _, m in results].count(False) == 1
    assert pg_store.count() == 1


def test_newer_schema_is_refused(pg_url: str) -> None:
    import psycopg

    from recall_agent.learnings.pg_store import PgStore
    from recall_agent.learnings.types import StoreError

    with PgStore(pg_url) as store:
        store.count()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO recall_schema VALUES (99, now())")
    with PgStore(pg_url) as store, pytest.raises(StoreError, match="newer than this recall supports"):
        store.count()


# --------------------------------------------------------------------------- the server on PostgreSQL


def test_server_writes_learnings_to_postgresql(
    tmp_path: Path, pg_url: str, isolated_recall_env: Path
) -> None:
    srv = start_server(tmp_path, env={"RECALL_DATABASE_URL": pg_url})
    try:
        health = httpx.get(srv.url + "/health").json()
        assert health["store"] == "postgresql" and health["learnings"] == 0
        r = httpx.post(
            srv.url + LEARN,
            json={
                "repo": "shop",
                "resolution_summary": "pin urllib3<2",
                "error_signatures": ["ImportError: urllib3 v2"],
            },
        )
        assert r.status_code == 201 and r.json()["merged"] is False
        assert httpx.get(srv.url + "/health").json()["learnings"] == 1
    finally:
        srv.stop()
    from recall_agent.learnings.pg_store import PgStore

    with PgStore(pg_url) as store:
        assert store.get(r.json()["id"]).resolution_summary == "pin urllib3<2"
    assert not (isolated_recall_env / "learnings.db").exists()  # nothing went to the embedded store


def _post_until_acknowledged(url: str, body: dict, deadline: float) -> int:
    while time.monotonic() < deadline:
        try:
            r = httpx.post(url + LEARN, json=body, timeout=10)
        except httpx.TransportError:
            time.sleep(0.2)
            continue
        if r.status_code != 503:
            return r.status_code
        time.sleep(0.2)
    return 0


def test_postgresql_outage_is_503_then_recovers_without_losing_acknowledged_writes(
    tmp_path: Path, pg_url: str
) -> None:
    target = urlsplit(pg_url)
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 5432)
    proxy.up()
    via_proxy = _with_db(pg_url, target.path.lstrip("/"), netloc=f"{target.username}@127.0.0.1:{proxy.port}")
    srv: RunningServer = start_server(tmp_path, env={"RECALL_DATABASE_URL": via_proxy})
    acknowledged: list[str] = []
    try:
        for i in range(5):
            r = httpx.post(srv.url + LEARN, json={"repo": "shop", "resolution_summary": f"before {i}"})
            assert r.status_code == 201
            acknowledged.append(r.json()["id"])

        proxy.down()
        down = httpx.post(srv.url + LEARN, json={"repo": "shop", "resolution_summary": "during"}, timeout=20)
        assert down.status_code == 503
        assert "PostgreSQL at" in down.json()["detail"] and "unreachable" in down.json()["detail"]
        assert down.headers["retry-after"] == "5"
        health = httpx.get(srv.url + "/health", timeout=20)
        assert health.status_code == 503 and health.json()["status"] == "unavailable"
        query = httpx.post(
            srv.url + "/v1/nodes/node_agent_learning_retrieval_effect/execute",
            json={"repo": "shop", "error_text": "KeyError: x"},
            timeout=20,
        )
        assert query.status_code == 503

        proxy.up()
        deadline = time.monotonic() + 30
        for i in range(5):
            body = {"repo": "shop", "resolution_summary": f"after {i}", "id": str(uuid.uuid4())}
            assert _post_until_acknowledged(srv.url, body, deadline) == 201, srv.log()
            acknowledged.append(body["id"])
        assert httpx.get(srv.url + "/health").json()["learnings"] == 10
    finally:
        srv.stop()
        proxy.down()
    from recall_agent.learnings.pg_store import PgStore

    with PgStore(pg_url) as store:
        stored = {str(x.id) for x in store.iter_all()}
        assert set(acknowledged) <= stored
        assert "during" not in {x.resolution_summary for x in store.iter_all()}


def test_server_starts_while_postgresql_is_down_and_serves_once_it_is_up(tmp_path: Path, pg_url: str) -> None:
    target = urlsplit(pg_url)
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 5432)  # not up yet
    via_proxy = _with_db(pg_url, target.path.lstrip("/"), netloc=f"{target.username}@127.0.0.1:{proxy.port}")
    srv = start_server(tmp_path, env={"RECALL_DATABASE_URL": via_proxy})
    try:
        assert httpx.get(srv.url + "/health", timeout=20).status_code == 503
        proxy.up()
        body = {"repo": "shop", "resolution_summary": "late start"}
        assert _post_until_acknowledged(srv.url, body, time.monotonic() + 30) == 201, srv.log()
        assert httpx.get(srv.url + "/health").json()["learnings"] == 1
    finally:
        srv.stop()
        proxy.down()


def test_add_many_and_bulk_load(pg_store) -> None:
    results = pg_store.add_many(
        [make(error=f"E{i}: x", fix=f"fix {i}") for i in range(5)] + [make(error="E0: x", fix="FIX 0")]
    )
    assert [m for _, m in results] == [False] * 5 + [True]
    assert results[5][0] == results[0][0]
    fresh = [
        make(error=f"ValueError: bad '{i}_thing'", fix=f"bulk {i}", file_paths_touched=[f"src/m{i}.py"])
        for i in range(50)
    ]
    assert pg_store.bulk_load(fresh) == 50
    assert pg_store.count() == 55
    got = pg_store.get(fresh[7].id)
    assert got.error_signatures == ["ValueError: bad '7_thing'"] and got.file_paths_touched == ["src/m7.py"]
    # the bulk rows are indexed like added ones: found by fingerprint, terms and context
    assert fresh[7].id in {
        c.learning.id for c in pg_store.candidates_by_terms(sigs.tokens("ValueError: bad '7_thing'"), 5)
    }
    assert [
        c.learning.id
        for c in pg_store.candidates_by_fingerprint([sigs.fingerprint("ValueError: bad '7_thing'")], 5)
    ] == [fresh[7].id]
    assert [c.learning.id for c in pg_store.candidates_by_context("shop", ["m7.py"], None, 5)] == [
        fresh[7].id
    ]
    with pytest.raises(ValueError, match="already stored"):
        pg_store.bulk_load([make(id=fresh[0].id, fix="again")])
    assert pg_store.count() == 55


# --------------------------------------------------------------------------- several servers, one database


def _ask(url: str, error: str, repo: str = "shop") -> list[dict]:
    body = {"match_type": "error_signature", "error_text": error, "repo": repo}
    r = httpx.post(url + "/v1/nodes/node_agent_learning_retrieval_effect/execute", json=body, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["matches"]


def test_two_servers_on_one_database_see_each_others_writes(
    tmp_path: Path, pg_url: str, isolated_recall_env: Path
) -> None:
    """Two `recall serve` processes (two hosts behind a balancer) on one PostgreSQL: what one stores, the
    other answers at once, although its caches held the earlier answer (the generations live in the
    database: core.py)."""
    env = {"RECALL_DATABASE_URL": pg_url}
    a = start_server(tmp_path, env=env)
    b = start_server(tmp_path, env=env)
    error = "KeyError: 'cart_total'\n  File \"shop/cart.py\", line 12, in total"
    try:
        first = {"repo": "shop", "error_signatures": [error], "resolution_summary": "default the total to 0"}
        assert httpx.post(a.url + LEARN, json=first).status_code == 201
        seen = _ask(b.url, error.replace("line 12", "line 40"))  # B's caches now hold this answer
        assert [m["resolution_summary"] for m in seen] == ["default the total to 0"]
        for _ in range(3):  # warm: the same question again is served from B's caches
            assert len(_ask(b.url, error)) == 1
        # A merges a new file into the learning and stores a second fix for the same error
        merged = {**first, "file_paths_touched": ["shop/cart.py"]}
        assert httpx.post(a.url + LEARN, json=merged).json()["merged"] is True
        second = {
            "repo": "shop",
            "error_signatures": [error],
            "resolution_summary": "compute the total lazily",
        }
        # the same cause with another fix: the same learning, met 3 times, both fixes kept (issue 34)
        assert httpx.post(a.url + LEARN, json=second).json()["merged"] is True
        after = _ask(b.url, error.replace("line 12", "line 41"))
        assert [m["resolution_summary"] for m in after] == ["default the total to 0"]
        old = after[0]
        assert old["file_paths_touched"] == ["shop/cart.py"]  # the merge, not B's cached copy
        assert old["seen_count"] == 3
        assert httpx.get(b.url + "/health").json()["learnings"] == 1
        # and the other way round: A has answered "nothing" for an error, B stores a fix, A answers it
        coupon = "ValueError: coupon code 'SPRING' has expired"
        assert _ask(a.url, coupon) == []
        third = {"repo": "shop", "error_signatures": [coupon], "resolution_summary": "check the expiry first"}
        assert httpx.post(b.url + LEARN, json=third).status_code == 201
        assert [m["resolution_summary"] for m in _ask(a.url, coupon)] == ["check the expiry first"]
    finally:
        a.stop()
        b.stop()


def test_access_counts_of_a_batch_are_one_write(pg_store) -> None:
    """The server's flush adds each learning's count of answers in one statement (server/store.py)."""
    a, _ = pg_store.add(make())
    b, _ = pg_store.add(make(error="ValueError: bad coupon", fix="check the coupon"))
    pg_store.record_accesses({a: 3, b: 1})
    pg_store.record_accesses({a: 2})
    assert pg_store.get(a).access_count == 5 and pg_store.get(b).access_count == 1
    assert pg_store.get(a).last_accessed_at is not None


def test_server_counts_every_answer_and_reads_while_writes_wait(
    tmp_path: Path, pg_url: str, isolated_recall_env: Path
) -> None:
    """Reads and writes run on threads of their own (server/store.py): writes blocked on a lock (more of them
    than there are threads of either kind) do not hold up a question. Access counts, batched off the
    request path, are all there after the server stops."""
    import psycopg

    srv = start_server(tmp_path, env={"RECALL_DATABASE_URL": pg_url})
    error = "KeyError: 'cart_total'"
    try:
        first = {"repo": "shop", "error_signatures": [error], "resolution_summary": "default the total to 0"}
        learning_id = httpx.post(srv.url + LEARN, json=first).json()["id"]
        for _ in range(5):
            assert len(_ask(srv.url, error)) == 1
        with psycopg.connect(pg_url) as blocker:
            blocker.execute("LOCK TABLE learnings IN SHARE MODE")  # inserts wait, reads do not
            with concurrent.futures.ThreadPoolExecutor(6) as pool:
                writes = [
                    pool.submit(
                        httpx.post,
                        srv.url + LEARN,
                        json={
                            "repo": "shop",
                            "error_signatures": [f"OSError: disk {n} full"],
                            "resolution_summary": f"free disk {n}",
                        },  # fmt: skip
                        timeout=60,
                    )
                    for n in range(6)
                ]
                time.sleep(1.0)
                assert not any(w.done() for w in writes)  # all waiting on the lock
                t0 = time.monotonic()
                assert len(_ask(srv.url, error)) == 1
                assert time.monotonic() - t0 < 5
                blocker.rollback()
                assert [w.result().status_code for w in writes] == [201] * 6
    finally:
        srv.stop()
    from recall_agent.learnings.pg_store import PgStore

    with PgStore(pg_url) as store:
        assert store.get(learning_id).access_count == 6
