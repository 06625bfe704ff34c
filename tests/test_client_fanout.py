"""Fan-out in-process: remote URLs that are down or slow (pytest-httpx), and in-process nodes that are
missing, raise or block (the budget must still hold)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import types

import httpx
import pytest

from recall_agent.client import fanout

L_PAY = {"match_type": "error_signature", "error_text": "boom", "repo": "r", "max_results": 5}
F_PAY = {"query": "boom"}
L_URL = "http://recall.example.invalid/v1/nodes/node_agent_learning_retrieval_effect/execute"
F_URL = "http://recall.example.invalid/v1/nodes/node_knowledge_query_federation_orchestrator/execute"
F_RESPONSE = {
    "query": "boom",
    "results": [{"content": "def boom()", "source": "repowise", "rank": 0, "content_hash": "0" * 64}],
    "backends_queried": ["repowise"],
    "error_message": None,
}


@pytest.fixture
def remote_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_LEARNING_RETRIEVAL_URL", L_URL)
    monkeypatch.setenv("KNOWLEDGE_FEDERATION_URL", F_URL)


def test_remote_learnings_down(httpx_mock, remote_urls) -> None:
    httpx_mock.add_exception(httpx.ConnectError("[Errno 111] Connection refused"), url=L_URL)
    httpx_mock.add_response(url=F_URL, json=F_RESPONSE)
    outcomes = fanout.run({"learnings": L_PAY, "federation": F_PAY})
    assert outcomes["learnings"].failure["kind"] == "connection"
    assert L_URL in outcomes["learnings"].failure["message"]
    assert outcomes["learnings"].response is None
    assert outcomes["federation"].response == F_RESPONSE and outcomes["federation"].failure is None
    sent = {str(r.url): r.read() for r in httpx_mock.get_requests()}
    assert sent[F_URL] == b'{"query":"boom"}'


def test_remote_federation_slow_is_cut(httpx_mock, remote_urls, monkeypatch) -> None:
    monkeypatch.setattr(fanout, "REQUEST_TIMEOUT_S", 0.5)

    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200, json=F_RESPONSE)

    httpx_mock.add_response(url=L_URL, json={"matches": [], "query_ms": 1})
    httpx_mock.add_callback(hang, url=F_URL)
    start = time.monotonic()
    outcomes = fanout.run({"learnings": L_PAY, "federation": F_PAY})
    assert time.monotonic() - start < 3
    assert outcomes["federation"].failure["kind"] == "timeout"
    assert outcomes["learnings"].response == {"matches": [], "query_ms": 1}


def test_remote_read_timeout(httpx_mock, remote_urls) -> None:
    httpx_mock.add_exception(httpx.ReadTimeout("timed out"), url=L_URL)
    httpx_mock.add_response(url=F_URL, status_code=422, json={"detail": [{"loc": ["body", "query"]}]})
    outcomes = fanout.run({"learnings": L_PAY, "federation": F_PAY})
    assert outcomes["learnings"].failure["kind"] == "timeout"
    assert outcomes["federation"].failure["kind"] == "http_status"
    assert "HTTP 422" in outcomes["federation"].failure["message"]
    assert "query" in outcomes["federation"].failure["message"]


def _fake_node(monkeypatch, name: str, execute) -> None:
    module = types.ModuleType(name)
    module.execute = execute
    monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(fanout.NODES, "learnings", name)


def test_in_process_node_missing(monkeypatch) -> None:
    monkeypatch.setitem(fanout.NODES, "learnings", "recall_no_such_node_module")
    outcomes = fanout.run({"learnings": L_PAY})
    failure = outcomes["learnings"].failure
    assert failure["kind"] == "unavailable"
    assert "recall_no_such_node_module not installed" in failure["message"]


def test_in_process_node_that_blocks_is_cut_and_abandoned(monkeypatch) -> None:
    async def blocking_execute(payload):
        time.sleep(5)  # blocks its event loop: only a thread boundary can cut this
        return {"matches": [], "query_ms": 5000}

    _fake_node(monkeypatch, "client_test_blocking_node", blocking_execute)
    monkeypatch.setattr(fanout, "REQUEST_TIMEOUT_S", 0.5)
    start = time.monotonic()
    outcomes = fanout.run({"learnings": L_PAY})
    assert time.monotonic() - start < 2
    assert outcomes["learnings"].failure == {"kind": "timeout", "message": "timeout after 0.5 s"}
    assert outcomes["learnings"].abandoned_thread is not None
    assert outcomes["learnings"].abandoned_thread.daemon


def test_in_process_node_that_raises(monkeypatch) -> None:
    async def bad_execute(payload):
        raise ValueError("1 validation error for LearningRetrievalRequest\nrepo\n  too long")

    _fake_node(monkeypatch, "client_test_raising_node", bad_execute)
    outcomes = fanout.run({"learnings": L_PAY})
    assert outcomes["learnings"].failure == {
        "kind": "error",
        "message": "1 validation error for LearningRetrievalRequest; repo; too long",  # no class name
    }


def test_in_process_node_gets_a_copy_and_model_is_dumped(monkeypatch) -> None:
    seen = {}

    class Response:
        def model_dump(self, mode: str) -> dict:
            return {"matches": [], "query_ms": 2, "mode": mode}

    async def execute(payload):
        seen.update(payload)
        payload["repo"] = "mutated"
        return Response()

    _fake_node(monkeypatch, "client_test_model_node", execute)
    outcomes = fanout.run({"learnings": L_PAY})
    assert seen == L_PAY and L_PAY["repo"] == "r"
    assert outcomes["learnings"].response == {"matches": [], "query_ms": 2, "mode": "json"}


def test_in_process_node_gets_its_plain_request_and_wire_answer(monkeypatch) -> None:
    """A node with a `Request` type and a synchronous body (the learnings node) gets the client's payload as
    that type, not a dict to validate, without an event loop; its plain response is turned into the JSON
    it would have sent over HTTP."""
    from recall_agent.learnings import RetrievalRequest, RetrievalResponse

    seen = []

    async def execute(request):
        raise AssertionError("the synchronous body is used")

    def execute_sync(request):
        seen.append(request)
        return RetrievalResponse(query_ms=4)

    _fake_node(monkeypatch, "client_test_plain_node", execute)
    sys.modules["client_test_plain_node"].Request = RetrievalRequest
    sys.modules["client_test_plain_node"].execute_sync = execute_sync
    outcomes = fanout.run({"learnings": L_PAY})
    assert seen == [RetrievalRequest(**L_PAY)]
    assert outcomes["learnings"].response == {
        "matches": [],
        "query_ms": 4,
        "error_matches_count": 0,
        "context_matches_count": 0,
    }


def test_skipped_backend_is_not_called(monkeypatch) -> None:
    outcomes = fanout.run({"federation": None})
    assert outcomes["federation"].failure["kind"] == "skipped"
    assert outcomes["federation"].response is None and outcomes["federation"].transport == "in-process"


def test_mixed_http_and_blocking_in_process_node(httpx_mock, monkeypatch) -> None:
    """One backend over HTTP (anyio path), the other in-process and blocking: both budgets hold."""

    async def blocking_execute(payload):
        time.sleep(5)
        return {"matches": [], "query_ms": 5000}

    _fake_node(monkeypatch, "client_test_blocking_node_2", blocking_execute)
    monkeypatch.setattr(fanout, "REQUEST_TIMEOUT_S", 0.5)
    monkeypatch.setenv("KNOWLEDGE_FEDERATION_URL", F_URL)
    httpx_mock.add_response(url=F_URL, json=F_RESPONSE)
    start = time.monotonic()
    outcomes = fanout.run({"learnings": L_PAY, "federation": F_PAY})
    assert time.monotonic() - start < 2
    assert (outcomes["learnings"].transport, outcomes["federation"].transport) == ("in-process", "http")
    assert outcomes["learnings"].failure == {"kind": "timeout", "message": "timeout after 0.5 s"}
    assert outcomes["federation"].response == F_RESPONSE


def test_process_exits_at_the_budget_with_a_hung_in_process_node(tmp_path) -> None:
    """A real process whose learnings node never returns: the answer is printed and the process ends."""
    code = (
        "import sys, time, types\n"
        "node = types.ModuleType('client_test_hung_node')\n"
        "async def execute(payload):\n"
        "    time.sleep(60)\n"
        "node.execute = execute\n"
        "sys.modules['client_test_hung_node'] = node\n"
        "from recall_agent.client import fanout\n"
        "fanout.NODES['learnings'] = 'client_test_hung_node'\n"
        "fanout.REQUEST_TIMEOUT_S = 1.0\n"
        "from recall_agent.client.main import main\n"
        "sys.exit(main(['--scope', 'learnings', 'boom']))\n"
    )
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert time.monotonic() - start < 10
    assert proc.returncode == 0, proc.stderr
    assert "[Learnings] unavailable (timeout after 1 s). Partial results shown." in proc.stdout


def test_in_process_federation_timeout_suggests_indexing(monkeypatch) -> None:
    async def slow_federation(payload):
        time.sleep(3)
        return {"query": "q", "results": []}

    module = types.ModuleType("client_test_slow_federation")
    module.execute = slow_federation
    monkeypatch.setitem(sys.modules, "client_test_slow_federation", module)
    monkeypatch.setitem(fanout.NODES, "federation", "client_test_slow_federation")
    monkeypatch.setattr(fanout, "REQUEST_TIMEOUT_S", 0.3)
    outcomes = fanout.run({"federation": F_PAY})
    assert outcomes["federation"].failure["kind"] == "timeout"
    assert "run `recall index` once" in outcomes["federation"].failure["message"]
