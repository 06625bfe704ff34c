"""The issue's "done": one `recall serve`, two clients with the URLs pointed at it share learnings.

Clients are real `python -m recall_agent` processes, each with its own RECALL_HOME (so nothing is shared except
through the server). Responses are checked field by field against the wire protocol, on the embedded
store and (when RECALL_TEST_DATABASE_URL is set) on PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from server_fixtures import RunningServer, start_server

from recall_agent.config import DEFAULT_FEDERATION_PATH, DEFAULT_RETRIEVAL_PATH
from recall_agent.models import (
    FederationResponse,
    LearningRetrievalResponse,
    MatchType,
    TaskType,
    content_hash,
)

ERROR = "ModuleNotFoundError: No module named 'yaml'"
FIX = "Added pyyaml to [project.dependencies] in pyproject.toml and reinstalled."
PG_URL = os.environ.get("RECALL_TEST_DATABASE_URL", "")


def checkout(root: Path, name: str) -> Path:
    repo = root / name
    (repo / ".git").mkdir(parents=True)
    return repo


def client(cwd: Path, home: Path, server: RunningServer, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "RECALL_HOME": str(home),
        "AGENT_LEARNING_RETRIEVAL_URL": server.url + DEFAULT_RETRIEVAL_PATH,
        "KNOWLEDGE_FEDERATION_URL": server.url + DEFAULT_FEDERATION_PATH,
    }
    return subprocess.run(
        [sys.executable, "-m", "recall_agent", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def check_retrieval_wire(body: dict) -> None:
    """Every field of the origin's response model, by name, type and range."""
    assert set(body) == {"matches", "query_ms", "error_matches_count", "context_matches_count"}
    assert isinstance(body["query_ms"], int) and body["query_ms"] >= 0
    assert isinstance(body["error_matches_count"], int) and body["error_matches_count"] >= 0
    assert isinstance(body["context_matches_count"], int) and body["context_matches_count"] >= 0
    scores = [m["combined_score"] for m in body["matches"]]
    assert scores == sorted(scores, reverse=True)
    origin = {
        "learning_id", "match_type", "similarity", "freshness_score", "combined_score", "repo",
        "resolution_summary", "error_signatures", "file_paths_touched", "ticket_id", "task_type",
        "age_days", "created_at",
    }  # fmt: skip
    for m in body["matches"]:
        assert origin <= set(m), origin - set(m)
        extras = {"score", "confidence", "why", "fix", "shown_count", "helped_count", "hurt_count", "last_useful_at",
                  "state", "check", "provenance", "author", "review", "quarantine",  # the server's
                  "trust", "injected_automatically"}  # the client's decision (docs/client.md)  # fmt: skip
        assert set(m) - origin <= extras  # recall's documented extras only (docs/learnings.md)
        assert str(uuid.UUID(m["learning_id"])) == m["learning_id"]
        assert m["match_type"] in {t.value for t in MatchType}
        for key in ("similarity", "freshness_score", "combined_score"):
            assert isinstance(m[key], float | int) and 0 <= m[key] <= 1, key
        assert m["score"] == m["combined_score"]
        assert isinstance(m["repo"], str) and isinstance(m["resolution_summary"], str)
        assert all(isinstance(x, str) for x in m["error_signatures"] + m["file_paths_touched"])
        assert m["ticket_id"] is None or isinstance(m["ticket_id"], str)
        assert m["task_type"] in {t.value for t in TaskType}
        assert isinstance(m["age_days"], int) and m["age_days"] >= 0
        created = datetime.fromisoformat(m["created_at"].replace("Z", "+00:00"))
        assert created.utcoffset() is not None and created.utcoffset().total_seconds() == 0
    LearningRetrievalResponse.model_validate(body)


def check_federation_wire(body: dict) -> None:
    assert set(body) == {"query", "results", "backends_queried", "error_message"}
    assert body["error_message"] is None or isinstance(body["error_message"], str)
    assert set(body["backends_queried"]) <= {"memgraph", "repowise", "qdrant"}
    for i, r in enumerate(body["results"]):
        assert {"content", "source", "rank", "content_hash"} <= set(r)
        assert r["source"] in body["backends_queried"]
        assert r["rank"] == i and r["content_hash"] == content_hash(r["content"])
    FederationResponse.model_validate(body)


def share_learnings(tmp_path: Path, server: RunningServer) -> str:
    alice, bob = checkout(tmp_path / "alice", "shop"), checkout(tmp_path / "bob", "shop")
    # Alice's session records the fix the way the capture hooks do (POST /v1/learnings)
    recorded = httpx.post(
        server.url + "/v1/learnings",
        json={
            "repo": "shop",
            "session_id": "alice-1",
            "error_signatures": [ERROR],
            "resolution_summary": FIX,
            "file_paths_touched": ["pyproject.toml"],
            "ticket_id": "SHOP-42",
            "task_type": "dependency",
        },
    )
    assert recorded.status_code == 201
    lid = recorded.json()["id"]

    # Bob, another machine's client (own RECALL_HOME), hits the same error and asks
    shown = client(bob, tmp_path / "bob-home", server, "--scope", "learnings", ERROR)
    assert shown.returncode == 0, shown.stderr
    assert FIX in shown.stdout
    assert "SHOP-42" in shown.stdout and "pyproject.toml" in shown.stdout
    assert "unavailable" not in shown.stdout

    as_json = client(bob, tmp_path / "bob-home", server, "--format", "json", "--scope", "learnings", ERROR)
    report = json.loads(as_json.stdout)
    assert report["learnings"]["transport"] == "http"
    assert report["learnings"]["payload"] == {
        "match_type": "error_signature",
        "error_text": ERROR,
        "repo": "shop",
        "max_results": 5,
    }  # the seed's payload, unchanged
    body = report["learnings"]["response"]
    check_retrieval_wire(body)
    assert [m["learning_id"] for m in body["matches"]] == [lid]
    assert body["matches"][0]["similarity"] == 1.0 and body["error_matches_count"] == 1
    assert not (tmp_path / "bob-home" / "learnings.db").exists()  # Bob's answer came from the server

    # the same request straight over HTTP, and a context query, also satisfy the wire models
    direct = httpx.post(server.url + DEFAULT_RETRIEVAL_PATH, json=report["learnings"]["payload"]).json()
    check_retrieval_wire(direct)
    context = httpx.post(
        server.url + DEFAULT_RETRIEVAL_PATH,
        json={
            "match_type": "task_context",
            "repo": "shop",
            "task_type": "dependency",
            "file_paths": ["pyproject.toml"],
        },
    ).json()
    check_retrieval_wire(context)
    assert [m["match_type"] for m in context["matches"]] == ["task_context"]
    assert alice.exists()
    return lid


def test_two_clients_share_learnings_through_the_server(tmp_path: Path) -> None:
    server = start_server(tmp_path, env={"RECALL_HOME": str(tmp_path / "server-home")})
    try:
        lid = share_learnings(tmp_path, server)
    finally:
        server.stop()
    from recall_agent.learnings.store import open_store

    with open_store(tmp_path / "server-home") as store:
        stored = store.get(lid)
    # four queries returned it (two client runs, the direct repeat, the context query): access counts are
    # batched off the request path and flushed at shutdown
    assert stored.access_count == 4 and stored.last_accessed_at is not None


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="RECALL_TEST_DATABASE_URL is unset (source .ci/services)")
def test_two_clients_share_learnings_through_postgresql(tmp_path: Path) -> None:
    import psycopg

    name = "recall_t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = PG_URL.rsplit("/", 1)[0] + "/" + name
    server = start_server(
        tmp_path, env={"RECALL_DATABASE_URL": url, "RECALL_HOME": str(tmp_path / "server-home")}
    )
    try:
        assert httpx.get(server.url + "/health").json()["store"] == "postgresql"
        share_learnings(tmp_path, server)
    finally:
        server.stop()
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_client_architecture_and_antipatterns_from_the_server_real_engines(tmp_path: Path) -> None:
    """The real engines behind the server, on a tiny repository it is configured for."""
    repo = checkout(tmp_path, "tinyshop")
    (repo / "models.py").write_text(
        "class Order:\n    def total(self):\n        return sum(i.price for i in self.items)\n"
    )
    (repo / "service.py").write_text(
        "from models import Order\n\n\ndef checkout(order: Order):\n    try:\n        return order.total()\n"
        "    except:\n        pass\n"
    )
    env = {"RECALL_HOME": str(tmp_path / "server-home"), "RECALL_FEDERATION_DEADLINE": "45"}  # cold engines
    server = start_server(tmp_path, ["--repo", str(repo)], env=env)
    try:
        graph = httpx.post(
            server.url + DEFAULT_FEDERATION_PATH, json={"query": "what depends on models.py"}, timeout=60
        )
        body = graph.json()
        check_federation_wire(body)
        assert body["backends_queried"] == ["memgraph", "repowise"] and body["error_message"] is None
        assert any(r["source"] == "memgraph" and "service.py" in r["content"] for r in body["results"])
        assert all(r["engine"] == "recall-index" for r in body["results"])

        # the client, run from its own checkout of the repo, through HTTP
        shown = client(
            repo, tmp_path / "client-home", server, "--format", "json", "--scope", "architecture", "Order"
        )
        fed = json.loads(shown.stdout)["federation"]
        assert fed["transport"] == "http" and fed["payload"]["force_backends"] == ["repowise"]
        check_federation_wire(fed["response"])
        assert any("models.Order" in r["content"] for r in fed["response"]["results"])

        smells = httpx.post(
            server.url + DEFAULT_FEDERATION_PATH,
            json={"query": "bare except antipattern in service.py", "force_backends": ["qdrant"]},
            timeout=60,
        ).json()
        check_federation_wire(smells)
        assert smells["backends_queried"] == ["qdrant"]
        assert smells["error_message"] is None
        assert any("service.py" in r["content"] and r["source"] == "qdrant" for r in smells["results"])
        assert all(
            "antipattern_name" in r and r["engine"] == "recall-antipatterns" for r in smells["results"]
        )
    finally:
        server.stop()


def test_capture_hooks_post_learnings_to_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks' capture (recall_agent/hooks/capture.py) writes to the server when RECALL_SERVER_URL is set."""
    from recall_agent.hooks import capture

    server = start_server(tmp_path, env={"RECALL_HOME": str(tmp_path / "server-home")})
    try:
        monkeypatch.setenv("RECALL_SERVER_URL", server.url)
        written = capture.store(
            [{"repo": "shop", "error_signatures": [ERROR], "resolution_summary": FIX, "session_id": "s-9"}]
        )
        assert written == 1
        answer = httpx.post(
            server.url + DEFAULT_RETRIEVAL_PATH,
            json={"match_type": "error_signature", "error_text": ERROR, "repo": "shop"},
        ).json()
        check_retrieval_wire(answer)
        assert [m["resolution_summary"] for m in answer["matches"]] == [FIX]
    finally:
        server.stop()
    from recall_agent.config import recall_home

    assert not (recall_home() / "learnings.db").exists()  # nothing fell back to the local store
