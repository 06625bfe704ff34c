"""Antipattern engine (federation role `qdrant`): known bad patterns the question is about, and those
already present in the files it names or the working tree changes.

Light at import: the catalog, tree-sitter, qdrant-client and the embedding model load on the first query.
See docs/antipatterns.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recall_agent.models import FederationResult

__all__ = ["query"]


def query(text: str, repo_path: str | None, *, limit: int = 5) -> list[FederationResult]:
    """Antipattern results for `text` in the repository at `repo_path` (None: the cwd's git repository)."""
    from recall_agent.antipatterns.engine import query as _query

    return _query(text, repo_path, limit=limit)
