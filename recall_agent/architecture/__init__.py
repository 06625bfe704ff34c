"""Architecture engine: a per-repository code graph (tree-sitter) answering symbol, dependency and
blast-radius questions. Light at import: the indexer, SQLite store and grammars load on first query.

    from recall_agent.architecture import query
    query("blast radius of httpx._models", "/path/to/httpx")  # -> list[FederationResult]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recall_agent.models import FederationResult

ENGINE = "recall-index"
ROLES = frozenset({"memgraph", "repowise"})

__all__ = ["ENGINE", "query"]


def query(
    text: str, repo_path: str, *, roles: set[str] | None = None, limit: int = 5
) -> list[FederationResult]:
    """Answer `text` about the repository containing `repo_path`, indexing what changed first.

    Graph questions come back with source "memgraph", symbol/file questions with "repowise"; every result
    has engine="recall-index" and the engine's own rank (0 = best). `roles` restricts the roles it may
    answer as (None = both). Raises ValueError when `repo_path` is not a folder.
    """
    from recall_agent.architecture.engine import answer
    from recall_agent.architecture.indexer import RepositoryError, open_index
    from recall_agent.models import FederationResult, content_hash

    allowed = ROLES if roles is None else ROLES & {str(r) for r in roles}
    if not allowed or not text.strip():
        return []
    try:
        conn, stats = open_index(repo_path, progress=False, summary=False)
    except RepositoryError as exc:
        raise ValueError(str(exc)) from None
    try:
        answers = answer(conn, stats.root, text, allowed, max(1, limit))
    finally:
        conn.close()
    return [
        FederationResult(
            content=a.content,
            source=a.role,
            rank=i,
            content_hash=content_hash(a.content),
            engine=ENGINE,
            repo=stats.root.name,
            **a.extras,
        )
        for i, a in enumerate(answers[:limit])
    ]
