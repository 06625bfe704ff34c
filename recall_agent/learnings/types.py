"""The small interface the ranking needs from a learnings store (SQLite here, PostgreSQL in pg_store.py).

`retrieval.py` ranks over any object that satisfies `CandidateStore`; a store only has to *generate*
candidates (cheaply, from its indexes) and record accesses. Everything that decides a score lives in
`retrieval.py`, so every backend ranks the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from uuid import UUID

if TYPE_CHECKING:  # keep `import recall_agent.learnings` free of pydantic
    from recall_agent.models import Learning


class StoreError(RuntimeError):
    """The learnings store cannot be used (corrupt, read-only, newer schema, unreachable). Message is for users."""


@dataclass(frozen=True)
class SignatureRow:
    """One stored error signature of a learning, as indexed."""

    text: str  # the signature as recorded (redacted), shown back to users
    normalized: str  # signatures.normalize(text)
    fingerprint: str  # signatures.fingerprint(text)
    embedding: bytes | None = None  # float32 little-endian vector of `normalized`, or None
    embedding_model: str | None = None  # embeddings.model_id() that produced `embedding`
    row_id: int | None = None  # the store's id for this row (lets retrieval cache embeddings), if any


@dataclass(slots=True)
class StoredLearning:
    """A learning as a store reads it back (the fields of the wire `Learning`), without pydantic: the
    values were validated when they were written."""

    id: UUID
    repo: str
    resolution_summary: str
    created_at: datetime
    session_id: str | None = None
    file_paths_touched: list[str] = field(default_factory=list)
    error_signatures: list[str] = field(default_factory=list)
    ticket_id: str | None = None
    task_type: str = "unknown"
    confidence: float = 0.8
    access_count: int = 0
    last_accessed_at: datetime | None = None
    fix: dict[str, Any] | None = None  # models.FixEvidence as JSON
    shown_count: int = 0
    helped_count: int = 0
    hurt_count: int = 0
    last_shown_at: datetime | None = None
    last_useful_at: datetime | None = None
    provenance: str = "legacy"  # safety/trust.py
    author: str | None = None
    review: str = "none"
    quarantine: list[str] | None = None  # reasons; None: not checked yet

    def to_model(self) -> Learning:
        """The wire model (for export and the write paths; costs the pydantic import)."""
        from recall_agent.models import FixEvidence, Learning

        fields = asdict(self)
        fix = fields.pop("fix")
        return Learning.model_construct(**fields, fix=FixEvidence.model_validate(fix) if fix else None)


@dataclass
class Candidate:
    """A learning that might answer the query, with the signature rows retrieval scores against."""

    learning: StoredLearning
    signatures: list[SignatureRow] = field(default_factory=list)


@runtime_checkable
class CandidateStore(Protocol):
    """Candidate generation + access recording. Implementations return at most `limit` candidates each,
    best-first by their own cheap order; duplicates across calls are fine (retrieval de-duplicates).
    A store may also offer `session()`, a context manager retrieval opens around one request's candidate
    calls (core.StoreCore's: one connection, one cache check)."""

    def candidates_by_fingerprint(self, fingerprints: Sequence[str], limit: int) -> list[Candidate]:
        """Learnings having a signature whose fingerprint is one of `fingerprints` (any repo)."""
        ...

    def candidates_by_terms(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        """Learnings whose normalized signatures share the most of `terms` (full-text, any repo)."""
        ...

    def candidates_by_context(
        self, repo: str, file_paths: Sequence[str], task_type: str | None, limit: int
    ) -> list[Candidate]:
        """Learnings of `repo` that touched one of `file_paths` (full path or basename) or have `task_type`."""
        ...

    def record_access(self, ids: Sequence[UUID]) -> None:
        """access_count += 1 and last_accessed_at = now for each id (a read-only store may skip this)."""
        ...
