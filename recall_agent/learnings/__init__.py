"""Learnings node: how an agent fixed this same error before.

`await execute(request)` answers POST /v1/nodes/node_agent_learning_retrieval_effect/execute in-process.
A plain `RetrievalRequest` (`wire.py`, what recall's own client and hooks build) is used as it is; a dict
is untrusted input and is validated with the wire model first (unknown keys, lengths and ranges raise
pydantic.ValidationError). It opens the SQLite store under $RECALL_HOME, ranks with `retrieval.py` and
returns a plain `RetrievalResponse` (`to_wire()` is the JSON body). A broken store raises `StoreError`
(the client reports the learnings backend unavailable).

`import recall_agent.learnings` loads only the standard library, and so does a lookup with a plain request: no
pydantic, numpy or embedding model (tests/test_client_cold_path.py checks it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_agent.config import learnings_db
from recall_agent.learnings.types import StoreError
from recall_agent.learnings.wire import RetrievalRequest, RetrievalResponse

if TYPE_CHECKING:
    from recall_agent.learnings.types import CandidateStore
    from recall_agent.models import LearningRetrievalRequest

__all__ = [
    "Request",
    "RetrievalRequest",
    "RetrievalResponse",
    "StoreError",
    "answer",
    "execute",
    "execute_sync",
    "request_of",
]

Request = RetrievalRequest  # the node's in-process request type (the client's fan-out builds it)


def request_of(request: RetrievalRequest | LearningRetrievalRequest | dict[str, Any]) -> RetrievalRequest:
    """The plain request; a dict is validated with the wire model (ValidationError names the field)."""
    if isinstance(request, RetrievalRequest):
        return request
    from recall_agent.models import LearningRetrievalRequest

    if not isinstance(request, LearningRetrievalRequest):
        request = LearningRetrievalRequest.model_validate(request)
    return RetrievalRequest.from_model(request)


def answer(
    store: CandidateStore,
    request: RetrievalRequest | LearningRetrievalRequest,
    *,
    record_access: bool = True,
    started: float | None = None,
) -> RetrievalResponse:
    """The node's answer over any CandidateStore (SQLite here, PostgreSQL on a team server): nothing to
    match on is an empty answer, else the ranking of `retrieval.py`."""
    from recall_agent.learnings.retrieval import retrieve

    started = time.perf_counter() if started is None else started
    req = request_of(request)
    if not req.has_query():
        return RetrievalResponse(query_ms=_ms(started))
    result = retrieve(store, req, record_access=record_access)
    return RetrievalResponse(
        matches=result.matches,
        query_ms=_ms(started),
        error_matches_count=result.error_matches_count,
        context_matches_count=result.context_matches_count,
    )


def execute_sync(
    request: RetrievalRequest | LearningRetrievalRequest | dict[str, Any], *, home: Path | None = None
) -> RetrievalResponse:
    """The synchronous body of `execute` (for threads and callers without an event loop)."""
    started = time.perf_counter()
    req = request_of(request)
    # nothing to match on, or nothing learned yet: answer without opening (or creating, or even importing)
    # the store
    if not req.has_query() or not learnings_db(home).exists():
        return RetrievalResponse(query_ms=_ms(started))
    from recall_agent.learnings.store import open_store

    with open_store(home) as store:
        return answer(store, req, started=started)


async def execute(
    request: RetrievalRequest | LearningRetrievalRequest | dict[str, Any], *, home: Path | None = None
) -> RetrievalResponse:
    """Retrieve learnings for an error and/or a task context (see module docstring)."""
    import asyncio

    req = request_of(request)  # fail fast on a bad dict, before the thread hop
    return await asyncio.to_thread(execute_sync, req, home=home)


def _ms(started: float) -> int:
    return max(0, int((time.perf_counter() - started) * 1000))
