"""Candidate keys on PostgreSQL (issue 39): a query reads learnings by equality on a B-tree, a learning posted
is found by its decisive value and by its message template, the context query gives the learnings the old
join gave, and a store migrated from before the keys gets them for what it already held."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from unittest import mock

import psycopg
import pytest

from recall_agent.learnings import keys as ckeys
from recall_agent.learnings import retrieval
from recall_agent.learnings import signatures as sigs
from recall_agent.learnings.features import Query
from recall_agent.models import Learning, LearningRetrievalRequest

PG_URL = os.environ.get("RECALL_TEST_DATABASE_URL", "")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="RECALL_TEST_DATABASE_URL is unset (source .ci/services)"),
]


@pytest.fixture
def pg_store(pg_url: str):
    from recall_agent.learnings.pg_store import PgStore

    store = PgStore(pg_url)
    yield store
    store.close()


def _filler(n: int) -> list[Learning]:
    """n other KeyErrors (another key each): the template key is common, the word `keyerror` too."""
    return [
        Learning(repo="shop", error_signatures=[f"KeyError: 'field_{i}'"], resolution_summary=f"fix {i}")
        for i in range(n)
    ]


def test_python_and_sql_compute_the_same_key(pg_store) -> None:
    with pg_store._conn() as conn:
        for text in ("repo:shop", "path:src/漢字.py", "base:"):
            assert conn.execute("SELECT recall_key(%s)", (text,)).fetchone()[0] == ckeys.key_of(text)


def test_a_learning_is_found_by_its_decisive_value_and_by_its_template(pg_store) -> None:
    wanted = Learning(
        repo="shop",
        error_signatures=["Traceback (most recent call last):\nKeyError: 'user_id'"],
        resolution_summary="use .get('user_id')",
    )
    pg_store.bulk_load([*_filler(300), wanted])
    pg_store.add(Learning(repo="shop", error_signatures=["KeyError: 'order_id'"], resolution_summary="x"))

    def found(text: str) -> set[str]:
        q = Query.from_text(text)
        return {
            c.learning.resolution_summary
            for c in pg_store.candidates_by_keys(ckeys.keys_of(q.normalized), 20)
        }

    # another line around it (so another fingerprint): the same line / the same value finds it
    assert wanted.resolution_summary in found("During handling of the above exception\nKeyError: 'user_id'")
    assert wanted.resolution_summary in found("ValueError: 'user_id' is missing\nKeyError: 'user_id'")
    # a message of the same template about another key: same-template learnings, a bounded few
    other = found("KeyError: 'account_id'")
    assert other and len(other) <= 20 and all(s.startswith(("fix ", "use", "x")) for s in other)
    # a learning stored by add() (not the bulk path) has its keys too
    assert "x" in found("KeyError: 'order_id'\n+ while reading the cart")


def test_the_answer_is_the_same_learning_through_keys(pg_store) -> None:
    """The whole ranking over the keyed store: the stored error with a new context line still answers."""
    wanted = Learning(repo="shop", error_signatures=["KeyError: 'user_id'"], resolution_summary="use .get")
    pg_store.bulk_load([*_filler(50), wanted])
    req = LearningRetrievalRequest(
        match_type="error_signature", error_text="KeyError: 'user_id'\nwhile handling request 42", repo="shop"
    )
    matches = retrieval.retrieve(pg_store, req, record_access=False).matches
    assert matches and matches[0].learning_id == wanted.id


def test_the_key_query_reads_the_index_only(pg_store) -> None:
    pg_store.bulk_load(_filler(2000))
    q = Query.from_text("KeyError: 'field_7'")
    values = [k.value for k in ckeys.keys_of(q.normalized)]
    with psycopg.connect(pg_store.url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE learning_keys")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN (ANALYZE, BUFFERS) SELECT k.learning_id FROM unnest(%s::bigint[]) WITH ORDINALITY"
                " AS u (key, n) CROSS JOIN LATERAL (SELECT learning_id FROM learning_keys WHERE key = u.key"
                " LIMIT 10) AS k ORDER BY u.n",
                (values,),
            )
        )
    assert "Index Only Scan using learning_keys_pkey" in plan, plan
    assert "Seq Scan on learning_keys" not in plan, plan


def test_context_candidates_are_those_of_the_join_they_replace(pg_store) -> None:
    """learning_path_keys gives the newest learnings of the repo touching the path or its basename, as the
    query over files + learnings did (generated store: basenames shared by many learnings and repos)."""
    now = datetime.now(UTC)
    items = [
        Learning(
            repo="shop" if i % 3 else "billing",
            error_signatures=[],
            resolution_summary=f"r{i}",
            file_paths_touched=[f"src/d{i % 7}/mod_{i % 11}.py", f"lib/x{i}.py"],
            created_at=now - timedelta(minutes=i),
        )
        for i in range(600)
    ]
    pg_store.bulk_load(items)
    pg_store.add(Learning(repo="shop", resolution_summary="late", file_paths_touched=["src/d0/mod_0.py"]))
    with pg_store._conn() as conn:
        for paths in (["src/d1/mod_1.py"], ["other/mod_4.py", "lib/x9.py"], ["nothing.py"]):
            bases = [p.rsplit("/", 1)[-1] for p in paths]
            old = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM learnings WHERE repo = %s AND id IN (SELECT learning_id FROM files WHERE"
                    " path = ANY(%s) OR basename = ANY(%s)) ORDER BY created_at DESC, id LIMIT 25",
                    ("shop", paths, bases),
                )
            ]
            assert pg_store._ids_by_paths(conn, "shop", paths, bases, 25) == old, paths


def test_a_store_from_before_the_keys_gets_them_when_migrated(pg_url: str) -> None:
    from recall_agent.learnings import pg_store as pgs

    before = next(i for i, m in enumerate(pgs.MIGRATIONS) if "CREATE TABLE IF NOT EXISTS learning_keys" in m)
    lid = uuid.uuid4()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with mock.patch.object(pgs, "MIGRATIONS", pgs.MIGRATIONS[:before]):
            pgs.migrate(conn)
        now = datetime.now(UTC)
        conn.execute(
            "INSERT INTO learnings (id, repo, resolution_summary, resolution_key, created_at, updated_at)"
            " VALUES (%s, 'shop', 'use .get', 'use .get', %s, %s)",
            (lid, now, now),
        )
        text = "KeyError: 'user_id'"
        conn.execute(
            "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint, tsv)"
            " VALUES (%s, 0, %s, %s, %s, ''::tsvector)",
            (lid, text, sigs.normalize(text), sigs.fingerprint(text)),
        )
        conn.execute(
            "INSERT INTO files (learning_id, path, basename) VALUES (%s, 'app/x.py', 'x.py')", (lid,)
        )
    store = pgs.PgStore(pg_url)
    try:
        keyed = store.candidates_by_keys(ckeys.keys_of(sigs.normalize("KeyError: 'user_id'\n+ elsewhere")), 5)
        assert [c.learning.id for c in keyed] == [lid]
        assert [c.learning.id for c in store.candidates_by_context("shop", ["y/x.py"], None, 5)] == [lid]
    finally:
        store.close()
