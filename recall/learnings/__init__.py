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
    from recall.models import LearningRetrievalRequest, LearningRetrievalResponse

__all__ = ["StoreError", "execute", "execute_sync"]


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
    from recall.learnings.retrieval import retrieve
    from recall.learnings.store import default_path, open_store

    if req.error_text is None and not req.file_paths and not req.task_type:
        return LearningRetrievalResponse(query_ms=_ms(started))
    if not default_path(home).exists():  # nothing learned yet: answer without creating anything
        return LearningRetrievalResponse(query_ms=_ms(started))
    with open_store(home) as store:
        result = retrieve(store, req)
    return LearningRetrievalResponse(
        matches=result.matches,
        query_ms=_ms(started),
        error_matches_count=result.error_matches_count,
        context_matches_count=result.context_matches_count,
    )


async def execute(
    request: LearningRetrievalRequest | dict[str, Any], *, home: Path | None = None
) -> LearningRetrievalResponse:
    """Retrieve learnings for an error and/or a task context (see module docstring)."""
    import asyncio

    from recall.models import LearningRetrievalRequest

    if not isinstance(request, LearningRetrievalRequest):
        request = LearningRetrievalRequest.model_validate(request)  # fail fast, before the thread hop
    return await asyncio.to_thread(execute_sync, request, home=home)


def _ms(started: float) -> int:
    return max(0, int((time.perf_counter() - started) * 1000))
