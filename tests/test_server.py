"""`recall serve` as a real process on 127.0.0.1: routes, bad input, auth, logs, shutdown.

Every test talks HTTP to a server started with `python -m recall_agent serve` (or, for federation answers we
control, the same server with canned engines: tests/server_fixtures.py). Stored learnings are checked by
opening the server's real SQLite file.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from server_fixtures import RunningServer, start_server

from recall_agent.config import DEFAULT_FEDERATION_PATH, DEFAULT_RETRIEVAL_PATH
from recall_agent.models import FederationResponse, content_hash

LEARN = "/v1/learnings"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token shape the redactor knows


@pytest.fixture
def server(tmp_path: Path, isolated_recall_env: Path):
    srv = start_server(tmp_path, ["--body-timeout", "1.5"])
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory):
    """One server for the read-only bad-input cases (a start costs seconds on this machine)."""
    tmp = tmp_path_factory.mktemp("shared-server")
    srv = start_server(
        tmp, env={"RECALL_HOME": str(tmp / "home"), "RECALL_TOKEN": "", "RECALL_DATABASE_URL": ""}
    )
    yield srv
    srv.stop()


def learning(**overrides) -> dict:
    body = {
        "repo": "shop",
        "error_signatures": ["ModuleNotFoundError: No module named 'yaml'"],
        "resolution_summary": "Added pyyaml to the dev dependencies in pyproject.toml.",
        "file_paths_touched": ["pyproject.toml"],
        "task_type": "dependency",
    }
    return body | overrides


# --------------------------------------------------------------------------- learnings writes


def test_health_names_the_store(server: RunningServer, isolated_recall_env: Path) -> None:
    r = httpx.get(server.url + "/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["store"] == "sqlite"
    assert body["path"] == str(isolated_recall_env / "learnings.db")
    assert body["learnings"] == 0


def test_post_learning_stores_redacted_and_merges_duplicates(
    server: RunningServer, isolated_recall_env: Path
) -> None:
    first = httpx.post(
        server.url + LEARN, json=learning(resolution_summary=f"Rotated token {SECRET} and pinned pyyaml")
    )
    assert first.status_code == 201, first.text
    lid = UUID(first.json()["id"])
    assert first.json() == {"id": str(lid), "merged": False}

    again = httpx.post(
        server.url + LEARN,
        json=learning(
            resolution_summary=f"Rotated token {SECRET} and pinned pyyaml", file_paths_touched=["uv.lock"]
        ),
    )
    assert again.status_code == 201
    assert again.json() == {"id": str(lid), "merged": True}

    from recall_agent.learnings.store import open_store

    with open_store(isolated_recall_env) as store:
        assert store.count() == 1
        stored = store.get(lid)
    assert stored is not None
    assert SECRET not in stored.resolution_summary
    assert "<redacted:" in stored.resolution_summary
    assert stored.file_paths_touched == ["pyproject.toml", "uv.lock"]
    assert httpx.get(server.url + "/health").json()["learnings"] == 1
    assert SECRET not in server.log()


def test_reused_id_for_a_different_learning_is_a_conflict(server: RunningServer) -> None:
    lid = "7f8d4f1e-2a65-4d0e-9a43-55b9a8a1f001"
    assert httpx.post(server.url + LEARN, json=learning(id=lid)).status_code == 201
    r = httpx.post(server.url + LEARN, json=learning(id=lid, resolution_summary="Something else entirely"))
    assert r.status_code == 409
    assert lid in r.json()["detail"]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("path", "body", "status", "names"),
    [
        (LEARN, b'{"repo": "shop", "resolution_summary": ', 400, "malformed JSON body"),
        (LEARN, json.dumps(learning(colour="blue")).encode(), 422, "colour: unknown field"),
        (
            LEARN,
            json.dumps(learning(confidence=1.5)).encode(),
            422,
            "confidence: Input should be less than or equal to 1",
        ),
        (LEARN, json.dumps(learning(resolution_summary="   ")).encode(), 422, "resolution_summary"),
        (LEARN, json.dumps(learning(task_type="party")).encode(), 422, "task_type"),
        (LEARN, json.dumps(learning(repo="")).encode(), 422, "repo"),
        (LEARN, b"[1, 2]", 422, "body: expected a JSON object"),
        # found by the fuzzer: a counter past 64 bits overflowed SQLite (a 500)
        (LEARN, json.dumps(learning(access_count=2**64)).encode(), 422, "access_count"),
        # found by the fuzzer: a nested fix's timestamp or count of the wrong JSON type was read laxly (0 as
        # a date) and the learning stored; it is a 422 naming the nested field, like a top-level one
        (
            LEARN,
            json.dumps(learning(fixes=[{"resolution_summary": "x", "last_seen_at": 0}])).encode(),
            422,
            "fixes[0].last_seen_at: must be a JSON string",
        ),
        (
            LEARN,
            json.dumps(learning(fixes=[{"resolution_summary": "x", "count": "2"}])).encode(),
            422,
            "fixes[0].count: must be a JSON number",
        ),
        (
            DEFAULT_RETRIEVAL_PATH,
            json.dumps({"repo": "shop", "max_results": 21}).encode(),
            422,
            "max_results",
        ),
        (
            DEFAULT_RETRIEVAL_PATH,
            json.dumps({"repo": "shop", "max_results": "many"}).encode(),
            422,
            "max_results",
        ),
        (
            DEFAULT_RETRIEVAL_PATH,
            json.dumps({"repo": "shop", "match_type": "vibes"}).encode(),
            422,
            "match_type",
        ),
        (DEFAULT_RETRIEVAL_PATH, json.dumps({"error_text": "x"}).encode(), 422, "repo: Field required"),
        # the retrieval route answers a body that validates itself (app._fast_retrieval); anything else goes
        # on to FastAPI, which names the problem as on every other route
        (DEFAULT_RETRIEVAL_PATH, b'{"repo": "shop", "error_text": ', 400, "malformed JSON body"),
        (
            DEFAULT_RETRIEVAL_PATH,
            json.dumps({"repo": "shop", "colour": "blue"}).encode(),
            422,
            "colour: unknown field",
        ),
        (DEFAULT_RETRIEVAL_PATH, b"[1, 2]", 422, "body: expected a JSON object"),
        (
            DEFAULT_RETRIEVAL_PATH,
            json.dumps({"repo": "shop", "max_results": True}).encode(),
            422,
            "max_results: must be a JSON number",
        ),
        (
            DEFAULT_RETRIEVAL_PATH,
            json.dumps({"repo": "shop", "min_similarity_error": -0.1}).encode(),
            422,
            "min_similarity_error",
        ),
        (DEFAULT_FEDERATION_PATH, json.dumps({"query": ""}).encode(), 422, "query"),
        # found by the fuzzer: a NUL in repo_path made path resolution raise (a 500)
        (DEFAULT_FEDERATION_PATH, json.dumps({"query": "x", "repo_path": "a\u0000b"}).encode(), 422, "NUL"),
        (
            DEFAULT_FEDERATION_PATH,
            json.dumps({"query": "x", "force_backends": ["neo4j"]}).encode(),
            422,
            "force_backends",
        ),
        (
            DEFAULT_FEDERATION_PATH,
            json.dumps({"query": "x", "correlation_id": "nope"}).encode(),
            422,
            "correlation_id",
        ),
        # the federation route validates as strictly as the learnings routes (a number is no id)
        (
            DEFAULT_FEDERATION_PATH,
            json.dumps({"query": "x", "correlation_id": 5}).encode(),
            422,
            "correlation_id: must be a JSON string",
        ),
    ],
)
def test_bad_input_is_a_4xx_naming_the_problem(
    shared_server: RunningServer, path: str, body: bytes, status: int, names: str
) -> None:
    r = httpx.post(shared_server.url + path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert names in r.json()["detail"]


def test_ten_megabyte_body_is_refused_with_413(shared_server: RunningServer) -> None:
    huge = json.dumps(learning(resolution_summary="x" * 10_000_000)).encode()
    r = httpx.post(shared_server.url + LEARN, content=huge, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "too large" in r.json()["detail"] and "1048576" in r.json()["detail"]


def test_chunked_body_over_the_limit_is_refused_with_413(shared_server: RunningServer) -> None:
    def chunks():
        for _ in range(40):
            yield b"x" * 65536  # 2.5 MiB without a Content-Length

    r = httpx.post(shared_server.url + LEARN, content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_slow_client_gets_408(server: RunningServer) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/learnings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 200\r\n\r\n{"repo":'
        )
        t0 = time.monotonic()
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        waited = time.monotonic() - t0
    reply = reply.decode()
    assert reply.startswith("HTTP/1.1 408")
    assert "client too slow" in reply
    assert 1.0 < waited < 8


def test_unknown_route_and_wrong_method_are_4xx(shared_server: RunningServer) -> None:
    assert httpx.get(shared_server.url + "/v1/nowhere").status_code == 404
    assert httpx.get(shared_server.url + LEARN).status_code == 405


# --------------------------------------------------------------------------- federation through HTTP

ENGINES = {
    "architecture": {"memgraph": ["models.py is imported by 4 modules"], "repowise": ["class Learning"]},
    "antipatterns": {"qdrant": ["hardcoded topic string"]},
}


def test_federation_route_serves_the_node(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    srv = start_server(tmp_path, ["--repo", str(repo)], fake_engines=ENGINES)
    try:
        r = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": "what imports models.py"})
        assert r.status_code == 200
        resp = FederationResponse.model_validate(r.json())
        body = r.json()
        assert set(body) == {"query", "results", "backends_queried", "error_message"}
        assert body["query"] == "what imports models.py"
        assert body["backends_queried"] == ["memgraph", "repowise"]
        assert body["error_message"] is None
        assert [x["content"] for x in body["results"]] == [
            f"models.py is imported by 4 modules (repo={repo})",
            f"class Learning (repo={repo})",
        ]
        for i, res in enumerate(resp.results):
            assert res.rank == i and res.content_hash == content_hash(res.content)
            assert body["results"][i]["engine"] == "fake"

        forced = httpx.post(
            srv.url + DEFAULT_FEDERATION_PATH,
            json={"query": "what imports models.py", "force_backends": ["qdrant"]},
        ).json()
        assert forced["backends_queried"] == ["qdrant"]
        assert [x["source"] for x in forced["results"]] == ["qdrant"]

        outside = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": "x", "repo_path": "/etc"})
        assert outside.status_code == 403
        assert "not one of this server's repositories" in outside.json()["detail"]
        # a client's checkout elsewhere with the same folder name stands for the configured repository
        same_name = httpx.post(
            srv.url + DEFAULT_FEDERATION_PATH, json={"query": "class", "repo_path": "/home/alice/src/shop"}
        )
        assert same_name.status_code == 200
        assert same_name.json()["results"][0]["content"] == f"class Learning (repo={repo})"
        inside = httpx.post(
            srv.url + DEFAULT_FEDERATION_PATH, json={"query": "class", "repo_path": str(repo)}
        )
        assert inside.status_code == 200 and inside.json()["results"][0]["content"].endswith(f"(repo={repo})")
    finally:
        srv.stop()


def test_federation_names_a_missing_engine(tmp_path: Path) -> None:
    srv = start_server(
        tmp_path, ["--repo", str(tmp_path)], fake_engines={"antipatterns": {"qdrant": ["dup loop"]}}
    )
    try:
        body = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": "anything at all"}).json()
    finally:
        srv.stop()
    assert body["backends_queried"] == ["qdrant"]
    assert [x["content"] for x in body["results"]] == [f"dup loop (repo={tmp_path.resolve()})"]
    assert (
        body["error_message"] is None
    )  # no engine for memgraph/repowise registered at all: nothing ran, nothing failed


# --------------------------------------------------------------------------- security


def test_refuses_to_bind_off_loopback_without_a_token(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "recall_agent", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "refusing to listen on 0.0.0.0 without a token" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[[tokens]]\nname='x'\ntoken='short'\n", "at least 16"),
        ("[[tokens]]\nname='x'\ntoken='0123456789abcdef'\nscopes=['admin']\n", "scopes must be"),
        ("[[tokens]]\nname='x'\n", "exactly one of `token` or `sha256`"),
        ("tokens = 3\n", "no [[tokens]] entries"),
        ("[[tokens]\n", "not valid TOML"),
    ],
)
def test_bad_token_file_is_one_readable_line(tmp_path: Path, content: str, message: str) -> None:
    tf = tmp_path / "tokens.toml"
    tf.write_text(content)
    r = subprocess.run(
        [sys.executable, "-m", "recall_agent", "serve", "--token-file", str(tf), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


READER = "reader-token-0123456789"
WRITER = "writer-token-0123456789"
SHOP_ONLY = "shop-only-token-012345"


@pytest.fixture
def secured(tmp_path: Path, isolated_recall_env: Path):
    import hashlib

    tf = tmp_path / "tokens.toml"
    tf.write_text(
        f"""
[[tokens]]
name = "reader"
token = "{READER}"
scopes = ["read"]

[[tokens]]
name = "writer"
sha256 = "{hashlib.sha256(WRITER.encode()).hexdigest()}"
scopes = ["read", "write"]

[[tokens]]
name = "shop-only"
token = "{SHOP_ONLY}"
scopes = ["read", "write"]
repos = ["shop"]
"""
    )
    srv = start_server(
        tmp_path, ["--token-file", str(tf)], env={"RECALL_TOKEN": "env-token-abcdefghijklmnop"}
    )
    yield srv
    srv.stop()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_tokens_scopes_and_repo_allow_lists(secured: RunningServer) -> None:
    url = secured.url
    missing = httpx.post(url + LEARN, json=learning())
    assert missing.status_code == 401 and "missing Authorization" in missing.json()["detail"]
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = httpx.post(url + LEARN, json=learning(), headers=auth("writer-token-0123456780"))
    assert wrong.status_code == 401 and "invalid bearer token" in wrong.json()["detail"]
    assert (
        httpx.post(url + LEARN, json=learning(), headers={"Authorization": f"Basic {WRITER}"}).status_code
        == 401
    )

    ro = httpx.post(url + LEARN, json=learning(), headers=auth(READER))
    assert ro.status_code == 403 and "lacks the 'write' scope" in ro.json()["detail"]

    assert httpx.post(url + LEARN, json=learning(), headers=auth(WRITER)).status_code == 201
    assert (
        httpx.post(url + LEARN, json=learning(), headers=auth("env-token-abcdefghijklmnop")).json()["merged"]
        is True
    )
    other = httpx.post(url + LEARN, json=learning(repo="payments"), headers=auth(SHOP_ONLY))
    assert other.status_code == 403 and "may not write repo 'payments'" in other.json()["detail"]
    assert httpx.post(url + LEARN, json=learning(repo="shop"), headers=auth(SHOP_ONLY)).status_code == 201

    read_other = httpx.post(url + DEFAULT_RETRIEVAL_PATH, json={"repo": "payments"}, headers=auth(SHOP_ONLY))
    assert read_other.status_code == 403 and "may not read repo 'payments'" in read_other.json()["detail"]
    assert httpx.post(url + DEFAULT_RETRIEVAL_PATH, json={"repo": "shop"}).status_code == 401

    # health and the OpenAPI document stay open: they carry no data
    assert httpx.get(url + "/health").status_code == 200
    assert httpx.get(url + "/openapi.json").status_code == 200


def test_access_log_is_json_without_secrets_or_bodies(secured: RunningServer) -> None:
    httpx.post(
        secured.url + LEARN, json=learning(resolution_summary="marker-body-text-xyz"), headers=auth(WRITER)
    )
    httpx.post(secured.url + LEARN, json=learning(), headers=auth("not-a-real-token-but-long"))
    secured.stop()
    log = secured.log()
    for secret in (
        WRITER,
        READER,
        SHOP_ONLY,
        "not-a-real-token-but-long",
        "env-token-abcdefghijklmnop",
        "marker-body-text-xyz",
    ):
        assert secret not in log
    access = [e for e in secured.log_lines() if e.get("event") == "access" and e["path"] == LEARN]
    assert [(e["status"], e["token"]) for e in access] == [(201, "writer"), (401, None)]
    assert all(e["method"] == "POST" and e["ms"] >= 0 and e["client"] == "127.0.0.1" for e in access)


def test_graceful_shutdown_on_sigterm(server: RunningServer) -> None:
    assert httpx.post(server.url + LEARN, json=learning()).status_code == 201
    assert server.stop() == 0
    events = [e["event"] for e in server.log_lines()]
    assert events[0] == "starting" and events[-1] == "stopped"
    # full garbage collections at the server's own times, what the started server held frozen (collector.py)
    collector = [e for e in server.log_lines() if e["event"] == "garbage collector"]
    assert len(collector) == 1 and collector[0]["frozen"] > 10_000 and collector[0]["full_every_s"] == 300


def test_workers_share_one_port_and_one_store(tmp_path: Path, isolated_recall_env: Path) -> None:
    srv = start_server(tmp_path, ["--workers", "2"])
    try:
        ids = {
            httpx.post(srv.url + LEARN, json=learning(resolution_summary=f"fix {i}", repo=f"shop{i}")).json()[
                "id"
            ]
            for i in range(6)  # six repositories: in one, the same cause is one learning
        }
        assert len(ids) == 6
        query = {
            "match_type": "error_signature",
            "error_text": learning()["error_signatures"][0],
            "repo": "shop",
        }
        answers = [httpx.post(srv.url + DEFAULT_RETRIEVAL_PATH, json=query).json() for _ in range(4)]
        assert all({m["learning_id"] for m in a["matches"]} <= ids and a["matches"] for a in answers)
        assert httpx.get(srv.url + "/health").json()["learnings"] == 6
    finally:
        assert srv.stop() == 0
    pids = {
        line.split("[")[-1].rstrip("]")
        for line in (e["event"] for e in srv.log_lines())
        if line.startswith("Started server process")
    }
    assert len(pids) == 2
    assert sum(e["event"] == "garbage collector" for e in srv.log_lines()) == 2  # each worker's own
    from recall_agent.learnings.store import open_store

    # each worker says at shutdown what its recorder wrote: together the four answers' matches, none left over
    shown = sum(len(a["matches"]) for a in answers)
    said = [e for e in srv.log_lines() if e["event"] == "access counts"]
    assert len(said) == 2 and all(e["unwritten"] == 0 for e in said), srv.log()
    assert sum(e["written"] for e in said) == shown, srv.log()
    with open_store(isolated_recall_env) as store:  # and the file holds what they wrote
        counted = sum(x.access_count for x in store.iter_all())
    assert counted == shown, srv.log()


def test_access_counts_pending_at_shutdown_wait_for_another_writer(tmp_path: Path) -> None:
    """At shutdown every worker flushes at once: a flush that finds the file locked for longer than the
    busy timeout is retried, not dropped."""
    import sqlite3
    import threading

    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning
    from recall_agent.server.store import AccessRecorder

    db = tmp_path / "learnings.db"
    with open_store(path=db) as store:
        learning_id, _ = store.add(
            Learning(repo="shop", error_signatures=["KeyError: 'a'"], resolution_summary="x")
        )
    recorder_store = open_store(path=db)
    recorder_store._conn.execute("PRAGMA busy_timeout = 50")  # the lock outlasts one attempt
    recorder = AccessRecorder(recorder_store, interval=3600, owned=True)
    recorder.note([learning_id, learning_id])
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another worker's write, still open
    release = threading.Timer(1.0, lambda: other.execute("ROLLBACK"))
    release.start()
    recorder.close()
    release.join()
    other.close()
    with open_store(path=db) as store:
        assert [x.access_count for x in store.iter_all()] == [2]
