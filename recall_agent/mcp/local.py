"""The backend of `recall mcp` (stdio): the CLI's own code paths, run from the server's working folder.

`recall` is `recall [options] [query]` without the process: context detection (repository, the session's
last error), the seed's payloads, the fan-out (in-process nodes, or HTTP when the backend URL variables are
set) and the display. `recall_learn` is `recall learn` (`recall_agent.learnings.cli.record`: validation,
redaction, the local store). Blocking work runs in worker threads, so one slow call never stalls the
server's event loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio.to_thread

from recall_agent.client import query as client_query
from recall_agent.errors import describe
from recall_agent.mcp.tools import Context, LearnRequest, LearnResult, RecallAnswer, ToolError


class LocalBackend:
    local = True

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def recall(self, args: client_query.Args, ctx: Context) -> RecallAnswer:
        return await anyio.to_thread.run_sync(self._recall, args, abandon_on_cancel=True)

    def _recall(self, args: client_query.Args) -> RecallAnswer:
        from recall_agent.client.main import ask

        return RecallAnswer.of(ask(args, cwd=self.cwd))

    async def learn(self, request: LearnRequest, ctx: Context) -> LearnResult:
        return await anyio.to_thread.run_sync(self._learn, request)

    def _learn(self, request: LearnRequest) -> LearnResult:
        import os

        from recall_agent.learnings.cli import Refused, default_repo, record
        from recall_agent.learnings.types import StoreError

        data = {
            "repo": request.repo or default_repo(self.cwd),
            "error_signatures": [request.error],
            "resolution_summary": request.resolution,
            "file_paths_touched": request.files,
            "task_type": request.task_type or "unknown",
            "ticket_id": request.ticket,
            "session_id": os.environ.get("CLAUDE_SESSION_ID") or None,
        }
        try:
            learning_id, merged = record(data)
        except (Refused, StoreError, ValueError) as exc:
            raise ToolError(str(exc)) from None
        return LearnResult(id=str(learning_id), merged=merged)

    async def forget(self, learning_id: str) -> str:
        return await anyio.to_thread.run_sync(_forget, learning_id)

    async def index(self) -> tuple[str, dict[str, Any]]:
        return await anyio.to_thread.run_sync(_index, self.cwd, abandon_on_cancel=True)

    async def context(self, task: str) -> tuple[str, dict[str, Any]]:
        return await anyio.to_thread.run_sync(_context, self.cwd, task, abandon_on_cancel=True)


def _context(cwd: Path, task: str) -> tuple[str, dict[str, Any]]:
    """The pushed context (`recall_agent.push.service`) for one call: pitfalls, then the task's code area."""
    from recall_agent.push import ledger, service

    pitfalls = service.session_start(str(cwd))
    area = service.task_start(task, str(cwd), record=True, kind="mcp") if task.strip() else ""
    text = "\n\n".join(t for t in (pitfalls, area) if t)
    return text, {"pitfalls": pitfalls, "task": area, "tokens": ledger.tokens(text)}


def _forget(learning_id: str) -> str:
    from recall_agent.learnings.records import parse_id
    from recall_agent.learnings.store import default_path, open_store
    from recall_agent.learnings.types import StoreError

    try:
        lid = parse_id(learning_id)
    except ValueError as exc:
        raise ToolError(f"id: {exc}") from None
    if not default_path().exists():
        raise ToolError(f"id: no learning with id {lid}")
    try:
        with open_store() as store:  # kept in the change record, as the agent's (docs/review.md)
            deleted = store.forget(lid, "agent (mcp)") is not None
    except StoreError as exc:
        raise ToolError(str(exc)) from None
    if not deleted:
        raise ToolError(f"id: no learning with id {lid}")
    return f"Forgot learning {lid}."


def _index(cwd: Path) -> tuple[str, dict[str, Any]]:
    import sqlite3

    from recall_agent.architecture import graph
    from recall_agent.architecture.cli import _summary_dict, _summary_text, index_history
    from recall_agent.architecture.indexer import RepositoryError, find_repo_root, update

    try:
        root = find_repo_root(str(cwd))
        conn = graph.connect(graph.store_path(root))
    except RepositoryError as exc:
        raise ToolError(f"cannot index {cwd}: {exc}") from None
    except (OSError, sqlite3.Error) as exc:
        raise ToolError(f"cannot open the index store under $RECALL_HOME: {exc}") from None
    try:
        stats = update(conn, root, progress=False)
        hist = index_history(root)
    except (OSError, sqlite3.Error) as exc:
        raise ToolError(f"indexing {root} failed: {describe(exc)}") from None
    finally:
        conn.close()
    return _summary_text(stats, hist), _summary_dict(stats, hist)
