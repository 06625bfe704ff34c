"""Candidate keys on PostgreSQL (issue 39): a query reads learnings by equality on a B-tree, a learning posted
is found by its decisive value and by its message template, the context query gives the learnings the old
join gave, and a store migrated from before the keys gets them for what it already held."""

from __future__ import annotations

import contextlib
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


def _mixed_store_items() -> list[Learning]:
    """Errors of several shapes (some sharing a template, some a line), paths sharing basenames, task types."""
    now = datetime.now(UTC)
    shapes = [
        "KeyError: '{w}_id'",
        "ModuleNotFoundError: No module named '{w}'",
        'Traceback (most recent call last):\n  File "app/{w}.py", line 3, in run\nTypeError: {w}() missing 1'
        " required positional argument: 'x'",
        "src/{w}.ts(3,4): error TS2304: Cannot find name '{w}'.",
    ]
    return [
        Learning(
            repo="shop" if i % 4 else "billing",
            error_signatures=[shapes[i % len(shapes)].format(w=f"name{i % 37}")] if i % 9 else [],
            resolution_summary=f"fix {i}",
            file_paths_touched=[f"src/d{i % 5}/mod_{i % 13}.py"],
            task_type=["bug_fix", "ci_fix", "feature"][i % 3],
            created_at=now - timedelta(minutes=i),
        )
        for i in range(400)
    ]


def test_prefetch_gives_the_answers_of_the_reads_it_replaces_in_fewer_statements(pg_url: str) -> None:
    """PgStore.prefetch reads a request's first candidate reads in one statement; every answer is the one a
    store without it gives (a read whose arguments it did not read asks the database as before), and the
    requests run fewer statements. Each side on a fresh store object (no cache carried over)."""
    from recall_agent.learnings.pg_store import PgStore

    loader = PgStore(pg_url)
    loader.bulk_load(_mixed_store_items())
    loader.close()
    texts = [
        "KeyError: 'name3_id'",  # stored again
        "KeyError: 'nothing_like_it_id'",  # the template only
        "ModuleNotFoundError: No module named 'name5'\nduring import of plugins",
        'Traceback (most recent call last):\n  File "x/y.py", line 9, in go\nTypeError: name2() missing 1'
        " required positional argument: 'x'",
        "something happened somewhere",  # noise
        "src/name7.ts(30,1): error TS2304: Cannot find name 'name7'.",
    ]
    requests = [
        LearningRetrievalRequest(match_type=mt, error_text=t, repo=repo, file_paths=paths, task_type=task)
        for t in texts
        for mt, repo, paths, task in (
            ("error_signature", "shop", [], None),
            ("auto", "billing", ["lib/d1/mod_4.py"], "bug_fix"),
        )
    ] + [
        LearningRetrievalRequest(match_type="task_context", repo="shop", file_paths=p, task_type=task)
        for p, task in (
            (["src/d2/mod_2.py"], None),
            (["other/mod_9.py", "src/d0/mod_0.py"], "ci_fix"),
            ([], "feature"),
        )
    ]
    now = datetime.now(UTC)
    answers, statements = {}, {}
    for side in ("prefetch", "separate reads"):
        answers[side], statements[side] = _answered(pg_url, requests, now, prefetch=side == "prefetch")
    assert answers["prefetch"] == answers["separate reads"]
    assert sum(map(len, answers["prefetch"])) > len(requests)  # the requests do find learnings
    assert statements["prefetch"] < 0.7 * statements["separate reads"], statements


def _answered(
    pg_url: str, requests: list[LearningRetrievalRequest], now: datetime, *, prefetch: bool
) -> tuple[list[list[dict]], int]:
    """The wire form of each request's matches on a fresh store object, and the statements they ran."""
    from recall_agent.learnings.pg_store import PgStore

    store = PgStore(pg_url)
    store.check_schema(5.0)
    count = [0]
    real = psycopg.Connection.execute

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        count[0] += 1
        return real(self, *args, **kwargs)

    try:
        with (
            mock.patch.object(psycopg.Connection, "execute", counted),
            contextlib.nullcontext() if prefetch else mock.patch.object(PgStore, "prefetch", None),
        ):
            answers = [
                [m.to_wire() for m in retrieval.retrieve(store, r, now=now, record_access=False).matches]
                for r in requests
            ]
    finally:
        store.close()
    return answers, count[0]


def test_a_candidate_read_in_one_statement_is_the_one_read_in_two(pg_store) -> None:
    from recall_agent.learnings.core import StoreCore

    pg_store.bulk_load(_mixed_store_items())
    pg_store.add(
        Learning(
            repo="shop", error_signatures=["KeyError: 'a'", "KeyError: 'b'\nagain"], resolution_summary="two"
        )
    )
    with pg_store._conn() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM learnings ORDER BY created_at")]
        one = list(pg_store._candidate_rows(conn, ids))
        two = list(StoreCore._candidate_rows(pg_store, conn, ids))
    assert sorted(one, key=lambda r: str(r[0].id)) == sorted(two, key=lambda r: str(r[0].id))
    assert any(len(rows) == 2 for _, rows in one) and any(not rows for _, rows in one)
