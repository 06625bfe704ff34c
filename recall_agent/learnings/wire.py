"""The learnings node's request, matches and response as plain dataclasses: the in-process read path.

Field for field these are the wire models of `recall_agent/models.py` (`LearningRetrievalRequest`,
`MatchReason`, `LearningMatch`, `LearningRetrievalResponse`), without pydantic: the CLI's and the on-error
hook's lookups pass nothing untrusted, and importing pydantic and building its validators was most of
their cold start. Untrusted input (a dict, an HTTP body) is still validated by the pydantic model first
(`from_model`); `to_wire()` gives exactly the JSON the pydantic model would (`model_dump(mode="json")`,
checked by tests/test_learnings_wire.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recall_agent.protocol import (
    DEFAULT_MAX_RESULTS,
    DEFAULT_MIN_SIMILARITY_CONTEXT,
    DEFAULT_MIN_SIMILARITY_ERROR,
    MatchType,
)

if TYPE_CHECKING:
    from uuid import UUID

    from recall_agent.models import LearningRetrievalRequest


@dataclass
class RetrievalRequest:
    """What the ranking reads of a request. Built by recall's own code (the client's payload, which its
    argument parser has range-checked; the hook's query) or from a validated wire model."""

    repo: str
    match_type: MatchType = MatchType.AUTO
    error_text: str | None = None
    file_paths: list[str] = field(default_factory=list)
    task_type: str | None = None
    max_results: int = DEFAULT_MAX_RESULTS
    min_similarity_error: float = DEFAULT_MIN_SIMILARITY_ERROR
    min_similarity_context: float = DEFAULT_MIN_SIMILARITY_CONTEXT

    def __post_init__(self) -> None:
        self.match_type = MatchType(self.match_type)  # a wire string -> the enum

    @classmethod
    def from_model(cls, model: LearningRetrievalRequest) -> RetrievalRequest:
        return cls(**model.model_dump())  # the same field names, by design

    def has_query(self) -> bool:
        return self.error_text is not None or bool(self.file_paths) or bool(self.task_type)


@dataclass
class Reason:
    """Why an error match matched: the components both errors share (wire `MatchReason`)."""

    kind: str = ""
    template: str = ""
    subjects: list[str] = field(default_factory=list)
    frame: str = ""
    exact: bool = False
    differs: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "template": self.template,
            "subjects": list(self.subjects),
            "frame": self.frame,
            "exact": self.exact,
            "differs": self.differs,
        }


@dataclass
class Match:
    """One ranked learning (wire `LearningMatch`; `score` is its alias of combined_score)."""

    learning_id: UUID
    match_type: MatchType
    similarity: float
    freshness_score: float
    combined_score: float
    repo: str
    resolution_summary: str
    age_days: int
    created_at: datetime
    error_signatures: list[str] = field(default_factory=list)
    file_paths_touched: list[str] = field(default_factory=list)
    ticket_id: str | None = None
    task_type: str = "unknown"
    confidence: float | None = None
    why: Reason | None = None
    fix: dict[str, Any] | None = None  # what the fix touched (selfcheck.py checks it against a checkout)
    shown_count: int = 0
    helped_count: int = 0
    hurt_count: int = 0
    last_useful_at: datetime | None = None
    state: str = "active"  # lifecycle.py: active | hurting | dormant
    provenance: str = "legacy"  # safety/trust.py
    author: str | None = None
    review: str = "none"
    quarantine: list[str] | None = None

    @property
    def score(self) -> float:
        return self.combined_score

    def to_wire(self) -> dict[str, Any]:
        return {
            "learning_id": str(self.learning_id),
            "match_type": self.match_type.value,
            "similarity": self.similarity,
            "freshness_score": self.freshness_score,
            "combined_score": self.combined_score,
            "repo": self.repo,
            "resolution_summary": self.resolution_summary,
            "error_signatures": list(self.error_signatures),
            "file_paths_touched": list(self.file_paths_touched),
            "ticket_id": self.ticket_id,
            "task_type": self.task_type,
            "age_days": self.age_days,
            "created_at": iso_datetime(self.created_at),
            "confidence": self.confidence,
            "why": None if self.why is None else self.why.to_wire(),
            "fix": self.fix,
            "shown_count": self.shown_count,
            "helped_count": self.helped_count,
            "hurt_count": self.hurt_count,
            "last_useful_at": None if self.last_useful_at is None else iso_datetime(self.last_useful_at),
            "state": self.state,
            "provenance": self.provenance,
            "author": self.author,
            "review": self.review,
            "quarantine": None if self.quarantine is None else list(self.quarantine),
            "score": self.combined_score,
        }


@dataclass
class RetrievalResponse:
    """The node's answer (wire `LearningRetrievalResponse`)."""

    query_ms: int
    matches: list[Match] = field(default_factory=list)
    error_matches_count: int = 0
    context_matches_count: int = 0

    def to_wire(self) -> dict[str, Any]:
        return {
            "matches": [m.to_wire() for m in self.matches],
            "query_ms": self.query_ms,
            "error_matches_count": self.error_matches_count,
            "context_matches_count": self.context_matches_count,
        }

    def to_json(self) -> bytes:
        """The HTTP body: compact UTF-8 JSON, as pydantic's model_dump_json writes it."""
        import json

        return json.dumps(self.to_wire(), separators=(",", ":"), ensure_ascii=False).encode()

    def only(self, matches: list[Match]) -> RetrievalResponse:
        """The same answer with only `matches` (a subset), counts recomputed."""
        return replace(
            self,
            matches=matches,
            error_matches_count=sum(m.match_type == MatchType.ERROR_SIGNATURE for m in matches),
            context_matches_count=sum(m.match_type == MatchType.TASK_CONTEXT for m in matches),
        )


def iso_datetime(value: datetime) -> str:
    """A datetime as pydantic writes it in JSON: ISO 8601, a zero UTC offset as "Z"."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
