"""Learnings node: how an agent fixed this same error before.

`await execute(request)` answers POST /v1/nodes/node_agent_learning_retrieval_effect/execute in-process:
it validates the request (a dict is checked with the wire model: unknown keys, lengths and ranges raise
pydantic.ValidationError), opens the SQLite store under $RECALL_HOME and ranks with `retrieval.py`.
A broken store raises `StoreError` (the client reports the learnings backend unavailable).

`import recall.learnings` loads only the standard library (no pydantic, numpy or embedding model): the
wire models, the store and the ranking load inside the functions.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.learnings.types import StoreError

if TYPE_CHECKING:
    from recall.learnings.types import CandidateStore
    from recall.models import LearningRetrievalRequest, LearningRetrievalResponse

__all__ = ["StoreError", "answer", "execute", "execute_sync"]


def answer(
    store: CandidateStore,
    request: LearningRetrievalRequest,
    *,
    record_access: bool = True,
    started: float | None = None,
) -> LearningRetrievalResponse:
    """The node's answer over any CandidateStore (SQLite here, PostgreSQL on a team server): nothing to
    match on is an empty answer, else the ranking of `retrieval.py` in the wire response."""
    from recall.learnings.retrieval import retrieve
    from recall.models import LearningRetrievalResponse

    started = time.perf_counter() if started is None else started
    if not _has_query(request):
        return LearningRetrievalResponse(query_ms=_ms(started))
    result = retrieve(store, request, record_access=record_access)
    return LearningRetrievalResponse(
        matches=result.matches,
        query_ms=_ms(started),
        error_matches_count=result.error_matches_count,
        context_matches_count=result.context_matches_count,
    )


def execute_sync(
    request: LearningRetrievalRequest | dict[str, Any], *, home: Path | None = None
) -> LearningRetrievalResponse:
    """The synchronous body of `execute` (for threads and callers without an event loop)."""
    from recall.models import LearningRetrievalRequest, LearningRetrievalResponse

    started = time.perf_counter()
    req = (
        request
        if isinstance(request, LearningRetrievalRequest)
        else LearningRetrievalRequest.model_validate(request)
    )
    from recall.learnings.store import default_path, open_store

    # nothing to match on, or nothing learned yet: answer without opening (or creating) the store
    if not _has_query(req) or not default_path(home).exists():
        return LearningRetrievalResponse(query_ms=_ms(started))
    with open_store(home) as store:
        return answer(store, req, started=started)


async def execute(
    request: LearningRetrievalRequest | dict[str, Any], *, home: Path | None = None
) -> LearningRetrievalResponse:
    """Retrieve learnings for an error and/or a task context (see module docstring)."""
    import asyncio

    from recall.models import LearningRetrievalRequest

    if not isinstance(request, LearningRetrievalRequest):
        request = LearningRetrievalRequest.model_validate(request)  # fail fast, before the thread hop
    return await asyncio.to_thread(execute_sync, request, home=home)


def _has_query(request: LearningRetrievalRequest) -> bool:
    return request.error_text is not None or bool(request.file_paths) or bool(request.task_type)


def _ms(started: float) -> int:
    return max(0, int((time.perf_counter() - started) * 1000))
