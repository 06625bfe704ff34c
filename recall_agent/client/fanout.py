"""Ask both backends at once, 10 s total and 9 s per request; each failure is kept on its own.

With an HTTP backend the fan-out is an anyio task group; with only in-process nodes it is plain threads
joined against the same deadline (see `run`).

Transport per backend: HTTP POST of the seed's payload when its URL variable is set (httpx is imported only
then), else the node function in-process (`recall_agent.learnings.execute` / `recall_agent.federation.execute`). An
in-process node runs in a daemon thread with its own event loop, so even a node that blocks can be cut at
the budget and cannot keep the process alive afterwards.

Failure kinds: `timeout`, `connection`, `http_status`, `bad_response`, `unavailable` (node not installed),
`error` (the node raised), `skipped` (nothing to ask).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recall_agent.errors import describe

TOTAL_BUDGET_S = 10.0
REQUEST_TIMEOUT_S = 9.0
POLL_S = 0.005
BODY_SNIPPET = 200

ENV_URLS = {"learnings": "AGENT_LEARNING_RETRIEVAL_URL", "federation": "KNOWLEDGE_FEDERATION_URL"}
NODES = {"learnings": "recall_agent.learnings", "federation": "recall_agent.federation"}
# the list each backend's response must carry for us to display it
RESPONSE_LIST = {"learnings": "matches", "federation": "results"}


@dataclass
class BackendOutcome:
    name: str
    payload: dict | None
    transport: str = "in-process"  # "http" | "in-process"
    response: dict | None = None
    failure: dict | None = None  # {"kind": ..., "message": ...}
    abandoned_thread: threading.Thread | None = field(default=None, repr=False)


class BackendFailure(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


def backend_url(name: str) -> str | None:
    return os.environ.get(ENV_URLS[name]) or None


# --------------------------------------------------------------------------- HTTP


def _snippet(body: str) -> str:
    import re

    text = re.sub(r"<[^<>]+>", " ", body)  # an HTML error page -> its words
    text = " ".join(text.split())
    return text[:BODY_SNIPPET] + ("…" if len(text) > BODY_SNIPPET else "")


def _auth_headers() -> dict[str, str]:
    token = os.environ.get("RECALL_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}


def _tls_for(url: str) -> Any:
    """What httpx verifies TLS with. Its default loads the CA bundle into a new context on every client
    (~40 ms idle, ~190 ms under load: the cost that made a refused http:// backend slower than the
    in-process node), even for a plain http:// URL that never uses TLS; build it only for https. An
    http:// request cannot reach TLS later: redirects are not followed."""
    if url[:6].lower() == "https:":
        return True
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # never used; creating it loads no certificates


async def post_json(url: str, payload: dict, timeout_s: float = REQUEST_TIMEOUT_S) -> Any:
    if "httpx" not in sys.modules:
        # Optional imports recall never uses, blocked for this process (httpx and httpcore fall back
        # cleanly on ImportError): httpx's own CLI (click + rich, ~190 ms), trio (~100 ms; this fan-out
        # runs on asyncio) and h2 (~20 ms; recall speaks HTTP/1.1), which httpcore imports when installed.
        for optional in ("httpx._main", "trio", "h2"):
            sys.modules.setdefault(optional, None)  # type: ignore[arg-type]
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout_s, verify=_tls_for(url)) as client:
            resp = await client.post(url, json=payload, headers=_auth_headers())
    except httpx.TimeoutException:
        raise BackendFailure("timeout", f"timeout after {_secs(timeout_s)} s: {url}") from None
    except httpx.ConnectError as exc:
        raise BackendFailure("connection", f"connection refused: {url} ({exc})") from None
    except httpx.HTTPError as exc:
        raise BackendFailure("connection", f"{describe(exc)} ({url})") from None
    if not 200 <= resp.status_code < 300:
        reason = f"HTTP {resp.status_code} {resp.reason_phrase}".strip()
        raise BackendFailure("http_status", f"{reason}: {_snippet(resp.text)} ({url})")
    try:
        return resp.json()
    except ValueError:
        kind = resp.headers.get("content-type", "no content-type")
        raise BackendFailure("bad_response", f"not JSON ({kind}): {_snippet(resp.text)} ({url})") from None


# --------------------------------------------------------------------------- in-process


def _load_node(name: str) -> Callable[[dict], Any]:
    """A function that answers a payload with the node in-process. A node with a plain request type
    (`Request`) and a synchronous body (`execute_sync`), as the learnings node has, is called directly: no
    event loop to import (asyncio is ~55 ms of cold start) and no validation layer (the payload is the
    client's own; its argument parser checked every value). Any other node's `execute` gets the payload
    dict, validates it, and runs in an event loop of its own."""
    module_name = NODES[name]
    try:
        module = importlib.import_module(module_name)
        execute = module.execute
    except ImportError as exc:
        raise BackendFailure("unavailable", f"in-process node {module_name} not installed ({exc})") from None
    except AttributeError:
        raise BackendFailure("unavailable", f"{module_name} has no execute() yet") from None
    sync, request_type = getattr(module, "execute_sync", None), getattr(module, "Request", None)
    if sync is not None and request_type is not None:
        return lambda payload: sync(request_type(**payload))

    def run(payload: dict) -> Any:
        import asyncio

        return asyncio.run(execute(dict(payload)))

    return run


def _to_plain(response: Any) -> Any:
    """The response as JSON data, as it would have come over HTTP."""
    if hasattr(response, "to_wire"):
        return response.to_wire()
    if hasattr(response, "model_dump"):
        return response.model_dump(mode="json")
    return response


def _run_node_in_thread(name: str, payload: dict, box: dict) -> None:
    try:
        box["value"] = _to_plain(_load_node(name)(payload))
    except BackendFailure as exc:
        box["error"] = exc
    except Exception as exc:  # the node raised: its own failure, shown as such
        # a validation error names the model on line 1 and the field on lines 2-3: keep those
        box["error"] = BackendFailure("error", describe(exc))


def _start_node(outcome: BackendOutcome) -> dict[str, Any]:
    """Run the node in a daemon thread; the returned box receives "value" or "error"."""
    box: dict[str, Any] = {}
    assert outcome.payload is not None
    thread = threading.Thread(
        target=_run_node_in_thread, args=(outcome.name, outcome.payload, box), daemon=True
    )
    thread.start()
    outcome.abandoned_thread = thread  # cleared when it finishes in time
    return box


def _finish_node(outcome: BackendOutcome, box: dict[str, Any]) -> Any:
    outcome.abandoned_thread = None
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def call_in_process(outcome: BackendOutcome) -> Any:
    import anyio

    box = _start_node(outcome)
    thread = outcome.abandoned_thread
    while thread is not None and thread.is_alive():
        await anyio.sleep(POLL_S)
    return _finish_node(outcome, box)


# --------------------------------------------------------------------------- fan-out


def _secs(seconds: float) -> str:
    return f"{seconds:.1f}".removesuffix(".0")


def _budgets(deadline: float | None) -> tuple[float, float]:
    """(total, per request) seconds left. The deadline comes from the client's start, so slow imports
    before the fan-out eat into the same 10 s rather than adding to it."""
    left = TOTAL_BUDGET_S if deadline is None else deadline - time.monotonic()
    left = max(0.1, min(left, TOTAL_BUDGET_S))
    return left, min(REQUEST_TIMEOUT_S, left)


def _timeout(outcome: BackendOutcome, seconds: float) -> dict:
    message = f"timeout after {_secs(seconds)} s"
    if outcome.name == "federation" and outcome.transport == "in-process":
        message += "; a first query in a large repository builds its index: run `recall index` once"
    return {"kind": "timeout", "message": message}


def _check_shape(name: str, response: Any) -> dict:
    key = RESPONSE_LIST[name]
    if not isinstance(response, dict):
        raise BackendFailure("bad_response", f"expected a JSON object, got {type(response).__name__}")
    if not isinstance(response.get(key), list):
        raise BackendFailure("bad_response", f"response has no '{key}' list")
    return response


async def _ask(outcome: BackendOutcome, request_s: float) -> None:
    import anyio

    url = backend_url(outcome.name)
    try:
        with anyio.fail_after(request_s):
            if url:
                raw = await post_json(url, outcome.payload or {}, request_s)
            else:
                raw = await call_in_process(outcome)
        outcome.response = _check_shape(outcome.name, raw)
    except TimeoutError:
        outcome.failure = _timeout(outcome, request_s)
    except BackendFailure as exc:
        outcome.failure = {"kind": exc.kind, "message": exc.message}


def plan(payloads: dict[str, dict | None]) -> dict[str, BackendOutcome]:
    outcomes = {}
    for name, payload in payloads.items():
        outcome = BackendOutcome(name, payload, "http" if backend_url(name) else "in-process")
        if payload is None:
            outcome.failure = {"kind": "skipped", "message": "no query text to send"}
        outcomes[name] = outcome
    return outcomes


async def _fan_out(outcomes: dict[str, BackendOutcome], deadline: float | None) -> None:
    import anyio

    total_s, request_s = _budgets(deadline)
    pending = [o for o in outcomes.values() if o.payload is not None]
    with anyio.move_on_after(total_s):
        async with anyio.create_task_group() as tg:
            for outcome in pending:  # learnings first: its result is listed first, too
                tg.start_soon(_ask, outcome, request_s)
    for outcome in pending:
        if outcome.response is None and outcome.failure is None:
            outcome.failure = {"kind": "timeout", "message": f"cut at the {TOTAL_BUDGET_S:g} s budget"}


def _fan_out_threads(outcomes: dict[str, BackendOutcome], deadline: float | None) -> None:
    """All backends in-process: node threads joined against one deadline; no event loop needed here."""
    _, request_s = _budgets(deadline)
    pending = [o for o in outcomes.values() if o.payload is not None]
    join_until = time.monotonic() + request_s
    boxes = [(outcome, _start_node(outcome)) for outcome in pending]  # learnings starts first
    for outcome, box in boxes:
        thread = outcome.abandoned_thread
        if thread is not None:
            thread.join(max(0.0, join_until - time.monotonic()))
            if thread.is_alive():
                outcome.failure = _timeout(outcome, request_s)
                continue
        try:
            outcome.response = _check_shape(outcome.name, _finish_node(outcome, box))
        except BackendFailure as exc:
            outcome.failure = {"kind": exc.kind, "message": exc.message}


def run(payloads: dict[str, dict | None], deadline: float | None = None) -> dict[str, BackendOutcome]:
    """Query every backend that has a payload; never raises for a backend's failure.

    With any HTTP backend the fan-out runs on anyio (httpx is async). With only in-process nodes it runs
    on plain threads: each node brings its own event loop, and skipping anyio's backend import saves
    ~50 ms of cold start (measured in bench/bench_cold_start.py). Budgets are the same on both paths:
    `deadline` (time.monotonic(), default now + 10 s) bounds everything, each request gets at most 9 s.
    """
    outcomes = plan(payloads)
    active = [o for o in outcomes.values() if o.payload is not None]
    if any(o.transport == "http" for o in active):
        import anyio

        anyio.run(_fan_out, outcomes, deadline)
    elif active:
        _fan_out_threads(outcomes, deadline)
    return outcomes
