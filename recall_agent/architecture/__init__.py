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

__all__ = ["ENGINE", "query", "query_wire"]


def query(
    text: str, repo_path: str, *, roles: set[str] | None = None, limit: int = 5
) -> list[FederationResult]:
    """Answer `text` about the repository containing `repo_path`, indexing what changed first.

    Graph questions come back with source "memgraph", symbol/file questions with "repowise"; every result
    has engine="recall-index" and the engine's own rank (0 = best). `roles` restricts the roles it may
    answer as (None = both). Raises ValueError when `repo_path` is not a folder.
    """
    from recall_agent.models import FederationResult

    return [FederationResult(**r) for r in query_wire(text, repo_path, roles=roles, limit=limit)]


def query_wire(text: str, repo_path: str, *, roles: set[str] | None = None, limit: int = 5) -> list[dict]:
    """`query` as plain dicts of the FederationResult fields (the federation node's in-process path,
    which imports no pydantic)."""
    from recall_agent.architecture.engine import answer
    from recall_agent.architecture.indexer import RepositoryError
    from recall_agent.protocol import content_hash

    allowed = ROLES if roles is None else ROLES & {str(r) for r in roles}
    if not allowed or not text.strip():
        return []
    try:
        conn, root = _open(repo_path, text)
    except RepositoryError as exc:
        raise ValueError(str(exc)) from None
    try:
        answers = answer(conn, root, text, allowed, max(1, limit))
    finally:
        conn.close()
    return [
        {
            "content": a.content,
            "source": a.role,
            "rank": i,
            "content_hash": content_hash(a.content),
            "engine": ENGINE,
            "repo": root.name,
            **a.extras,
        }
        for i, a in enumerate(answers[:limit])
    ]


def _open(repo_path: str, text: str):
    """The repository's index, brought up to date first, except for questions the history alone answers
    (hotspots, owners): they read an existing index as it is and skip the walk of the work tree."""
    from recall_agent.architecture import graph
    from recall_agent.architecture.indexer import find_repo_root, open_index
    from recall_agent.architecture.understand import HISTORY_ONLY, understand

    if understand(text).action in HISTORY_ONLY:
        root = find_repo_root(repo_path)
        store = graph.store_path(root)
        if store.exists():
            return graph.connect(store), root
    conn, stats = open_index(repo_path, progress=False, summary=False, trust_fresh=True)
    return conn, stats.root
