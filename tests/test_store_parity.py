"""One behaviour on both stores: the same table of awkward and bad inputs, sent to a real `recall serve` on
SQLite and to one on PostgreSQL, is accepted or refused identically (issue 15, point 7)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from server_fixtures import start_server

from recall_agent.config import DEFAULT_RETRIEVAL_PATH

PG_URL = os.environ.get("RECALL_TEST_DATABASE_URL", "")
LEARN = "/v1/learnings"
CJK = "漢字" * 500  # 1000 characters, 3000 bytes: over PostgreSQL's btree row limit if indexed whole


def learning(**kw: object) -> dict:
    return {
        "repo": "shop",
        "error_signatures": ["KeyError: 'user_id'"],
        "resolution_summary": "use .get",
    } | kw


# (case, route, body as raw JSON or a dict)
CASES: list[tuple[str, str, object]] = [
    ("plain", LEARN, learning()),
    ("cjk resolution", LEARN, learning(resolution_summary=CJK)),
    ("cjk path", LEARN, learning(file_paths_touched=["src/" + CJK + ".py"])),
    ("cjk signature", LEARN, learning(error_signatures=["ValueError: " + CJK])),
    ("cjk one long token", LEARN, learning(error_signatures=["E: " + "字" * 3000])),
    ("cjk ticket", LEARN, learning(ticket_id="漢" * 64)),
    ("access_count 2^40", LEARN, learning(access_count=2**40)),
    ("access_count max", LEARN, learning(access_count=2**53 - 1)),
    ("access_count over", LEARN, learning(access_count=2**53)),
    ("NUL resolution", LEARN, learning(resolution_summary="use\x00get")),
    ("NUL path", LEARN, learning(file_paths_touched=["a\x00b"])),
    ("NUL signature", LEARN, learning(error_signatures=["E\x00"])),
    ("NUL repo", LEARN, learning(repo="sh\x00op")),
    ("surrogate path", LEARN, b'{"repo":"shop","resolution_summary":"x","file_paths_touched":["\\ud800"]}'),
    ("surrogate resolution", LEARN, b'{"repo":"shop","resolution_summary":"x \\udc00"}'),
    (
        "emoji everywhere",
        LEARN,
        learning(repo="🛒", resolution_summary="🔥" * 500, file_paths_touched=["🐍.py"]),
    ),
    ("query cjk", DEFAULT_RETRIEVAL_PATH, {"repo": "shop", "error_text": CJK, "file_paths": ["src/" + CJK]}),
    ("query NUL", DEFAULT_RETRIEVAL_PATH, {"repo": "shop", "error_text": "E\x00"}),
    ("query surrogate", DEFAULT_RETRIEVAL_PATH, b'{"repo":"shop","error_text":"E \\ud800"}'),
    ("query long token", DEFAULT_RETRIEVAL_PATH, {"repo": "shop", "error_text": "x" * 4000}),
]


def _send(url: str, route: str, body: object) -> httpx.Response:
    if isinstance(body, bytes):
        return httpx.post(url + route, content=body, headers={"content-type": "application/json"}, timeout=30)
    return httpx.post(url + route, json=body, timeout=30)


def _answers(tmp_path: Path, env: dict[str, str]) -> dict[str, tuple[int, str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    srv = start_server(tmp_path, [], env=env)
    try:
        out = {}
        for name, route, body in CASES:
            r = _send(srv.url, route, body)
            out[name] = (r.status_code, r.text)
        # and after all that, the store still answers (a refused value did not break anything)
        out["health after"] = (httpx.get(srv.url + "/health").status_code, "")
        return out
    finally:
        srv.stop()


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="RECALL_TEST_DATABASE_URL is unset (source .ci/services)")
def test_sqlite_and_postgresql_accept_and_refuse_the_same_inputs(tmp_path: Path, pg_url: str) -> None:
    sqlite = _answers(tmp_path / "sqlite", {"RECALL_DATABASE_URL": "", "RECALL_HOME": str(tmp_path / "h1")})
    postgres = _answers(tmp_path / "pg", {"RECALL_DATABASE_URL": pg_url, "RECALL_HOME": str(tmp_path / "h2")})
    table = {name: (sqlite[name][0], postgres[name][0]) for name in sqlite}
    assert {n: s for n, (s, p) in table.items() if s != p} == {}, table
    for name, (status, body) in postgres.items():
        assert status < 500, (name, body)
        assert "SQLSTATE" not in body or status == 422  # never a raw PostgreSQL message
        assert "learnings_merge" not in body and "btree" not in body
    assert table["cjk resolution"] == (201, 201) and table["cjk path"] == (201, 201)
    assert table["access_count 2^40"] == (201, 201)
    assert table["NUL path"] == (422, 422) and table["surrogate path"] == (422, 422)
    assert table["health after"] == (200, 200)


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="RECALL_TEST_DATABASE_URL is unset (source .ci/services)")
def test_a_newer_postgresql_schema_stops_the_server_with_one_line(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    from recall_agent.learnings.pg_store import PgStore

    with PgStore(pg_url) as store:
        store.count()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO recall_schema VALUES (99, now())")
    r = subprocess.run(
        [sys.executable, "-m", "recall_agent", "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "RECALL_DATABASE_URL": pg_url, "RECALL_HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "newer than this recall supports" in lines[0], r.stderr
