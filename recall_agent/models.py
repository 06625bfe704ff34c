"""Every wire model recall speaks, once (their enums and limits: `recall_agent/protocol.py`).

Field names, enums and ranges follow ../shared/docs/wire-protocol.md (the origin's omnimemory/omnimarket
models). Any client written against those models works against recall unchanged, so changing a name or a
range here is a protocol change.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    computed_field,
    field_validator,
    model_validator,
)

from recall_agent.protocol import (  # noqa: F401  (the vocabulary is part of this module's API)
    COUNTER_MAX,
    DEFAULT_MAX_RESULTS,
    DEFAULT_MIN_SIMILARITY_CONTEXT,
    DEFAULT_MIN_SIMILARITY_ERROR,
    ERROR_TEXT_MAX,
    FIXES_MAX,
    MAX_RESULTS_RANGE,
    PATH_MAX,
    PATHS_MAX,
    REPO_MAX,
    RESOLUTION_MAX,
    SIGNATURES_MAX,
    STORED_SIGNATURES_MAX,
    TASK_TYPE_MAX,
    TICKET_MAX,
    BackendRole,
    MatchType,
    TaskType,
    content_hash,
)

# "has a character that is not white space" as a schema pattern, so the published OpenAPI says what the
# validator enforces: Python's str.isspace() is Unicode White_Space plus the separators U+001C-U+001F
# and no NUL anywhere (PostgreSQL text cannot hold it; both stores refuse it alike)
NOT_BLANK = r"^[^\x00]*[^\s\x1c-\x1f\x00][^\x00]*$"
NO_NUL = r"^[^\x00]*$"


def _storable(model: BaseModel) -> BaseModel:
    """Every string of the model can be stored by both stores: no NUL (PostgreSQL text refuses it) and no
    lone surrogate (not UTF-8). A ValueError naming the field is a 422, never a 409 or a 500."""
    for name in model.__class__.model_fields:
        value = getattr(model, name)
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            if "\x00" in text:
                raise ValueError(f"{name}: must not contain a NUL character")
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"{name}: must be valid Unicode (a lone surrogate is not)") from None
    return model


class WireModel(BaseModel):
    """Base of every wire model. Schemas are built on first use, not at import: the CLI's cold path
    imports this module and touches only one or two of the models."""

    model_config = ConfigDict(defer_build=True)


Provenance = Literal["captured", "agent", "person", "imported", "legacy"]
Review = Literal["none", "pending", "approved"]


def utcnow() -> datetime:
    return datetime.now(UTC)


# --------------------------------------------------------------------------- learnings node


class LearningRetrievalRequest(WireModel):
    """POST /v1/nodes/node_agent_learning_retrieval_effect/execute"""

    model_config = ConfigDict(extra="forbid")

    match_type: MatchType = MatchType.AUTO
    error_text: str | None = Field(default=None, max_length=ERROR_TEXT_MAX, pattern=NO_NUL)
    repo: str = Field(min_length=1, max_length=REPO_MAX, pattern=NO_NUL)
    file_paths: list[Annotated[str, Field(max_length=PATH_MAX, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=PATHS_MAX
    )
    task_type: str | None = Field(default=None, max_length=TASK_TYPE_MAX, pattern=NO_NUL)
    max_results: int = Field(default=DEFAULT_MAX_RESULTS, ge=MAX_RESULTS_RANGE[0], le=MAX_RESULTS_RANGE[1])
    min_similarity_error: float = Field(default=DEFAULT_MIN_SIMILARITY_ERROR, ge=0.0, le=1.0)
    min_similarity_context: float = Field(default=DEFAULT_MIN_SIMILARITY_CONTEXT, ge=0.0, le=1.0)

    _storable = model_validator(mode="after")(_storable)


class MatchReason(WireModel):
    """Why an error match matched (recall extra): the components both errors share, so an agent can judge
    the fix before applying it. Empty fields mean "not part of the evidence"."""

    kind: str = Field(
        default="", max_length=200
    )  # exception type or tool/code: "ModuleNotFoundError", "TS7016"
    template: str = Field(default="", max_length=400)  # the matched message line, instance values folded
    subjects: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list, max_length=8)
    frame: str = Field(default="", max_length=200)  # innermost application frame both share, if any
    exact: bool = False  # same fingerprint: the same cause lines after folding
    # the decisive value that differs on an otherwise shared message ("same message, other library: libgthread
    # vs libGL"): why a similar-looking learning scores low
    differs: str = Field(default="", max_length=200)


class LearningMatch(WireModel):
    learning_id: UUID
    match_type: MatchType
    similarity: float = Field(ge=0.0, le=1.0)
    freshness_score: float = Field(ge=0.0, le=1.0)
    combined_score: float = Field(ge=0.0, le=1.0)
    repo: str
    resolution_summary: str
    error_signatures: list[str] = Field(default_factory=list)
    file_paths_touched: list[str] = Field(default_factory=list)
    ticket_id: str | None = None
    task_type: str = TaskType.UNKNOWN.value
    age_days: int = Field(ge=0)
    created_at: datetime
    # recall extras (allowed by the contract): the stored confidence that entered ranking
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    why: MatchReason | None = None  # error matches: the shared components that made the match
    # recall extras: what the fix touched (the asking side checks it against its checkout,
    # recall_agent/selfcheck.py) and the lifecycle (recall_agent/learnings/lifecycle.py)
    fix: dict[str, Any] | None = None
    shown_count: int = Field(default=0, ge=0)
    helped_count: int = Field(default=0, ge=0)
    hurt_count: int = Field(default=0, ge=0)
    last_useful_at: datetime | None = None
    state: Literal["active", "hurting", "dormant"] = "active"
    # recall extras (one learning per cause): how often and in how many sessions this cause was met
    seen_count: int = Field(default=1, ge=0)
    session_count: int = Field(default=0, ge=0)
    # recall extras (recall_agent/safety/trust.py): provenance, the token that posted it, review, quarantine
    provenance: Provenance = "legacy"
    author: str | None = None
    review: Review = "none"
    quarantine: list[str] | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def score(self) -> float:
        """Alias of combined_score for origin clients that read match["score"] (wire doc, known bug)."""
        return self.combined_score


class LearningRetrievalResponse(WireModel):
    matches: list[LearningMatch] = Field(default_factory=list)
    query_ms: int = Field(ge=0)
    error_matches_count: int = Field(default=0, ge=0)
    context_matches_count: int = Field(default=0, ge=0)


class FixFile(WireModel):
    """A file the fix changed: the functions or classes around the change, and the change, shortened."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=PATH_MAX, pattern=NO_NUL)
    symbols: list[Annotated[str, Field(max_length=200, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=10
    )
    change: str | None = Field(default=None, max_length=400, pattern=NO_NUL)

    _storable = model_validator(mode="after")(_storable)


class FixCommand(WireModel):
    """A fix that was a changed command: the one that failed and the one that worked."""

    model_config = ConfigDict(extra="forbid")

    before: str = Field(max_length=1000, pattern=NO_NUL)
    after: str = Field(max_length=1000, pattern=NO_NUL)

    _storable = model_validator(mode="after")(_storable)


class FixFolder(WireModel):
    """A fix about a folder a command needed: it did not exist and a command `created` it (a clone, a
    mkdir), or the shell was already inside it (`shell_inside`: the folder carries over between calls).
    Which of the two applies when the error comes back depends on where the shell is then (selfcheck.py)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=PATH_MAX, pattern=NO_NUL)
    cause: Literal["created", "shell_inside"]

    _storable = model_validator(mode="after")(_storable)


class FixPackage(WireModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=NO_NUL)
    version: str | None = Field(default=None, max_length=64, pattern=NO_NUL)

    _storable = model_validator(mode="after")(_storable)


class FixEvidence(WireModel):
    """What a learning's fix touched, as data (recall extension; optional on POST /v1/learnings):
    `source` says who wrote it — `transcript` (captured from a session), `agent` (the agent's own
    `recall learn`), `manual` (a person)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["transcript", "agent", "manual"] = "manual"
    # which coding agent's session it came from (`claude-code`, `codex`); matching never looks at it
    agent: str | None = Field(default=None, max_length=40, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    # what the fix was about: the project's code, or the environment and its tools (an install, another
    # command or interpreter, a folder, a step run before the check)
    kind: Literal["project", "environment"] | None = None
    files: list[FixFile] = Field(default_factory=list, max_length=50)
    command: FixCommand | None = None
    # commands run between the failure and the run that passed (`go mod tidy`, `mv a b`)
    steps: list[Annotated[str, Field(max_length=1000, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=5
    )
    packages: list[FixPackage] = Field(default_factory=list, max_length=20)
    folder: FixFolder | None = None
    verified_by: str | None = Field(default=None, max_length=1000, pattern=NO_NUL)
    # the error was quoted in the user's prompt (a bug report) and no run of the session failed with it: the
    # learning is keyed by the quoted lines, its fix the source edits a later passing run verified
    reported: StrictBool = False  # a JSON boolean only: the wire schema says boolean (0 or "no" are refused)
    # a task learning: no error at all, keyed by the task line of the user's prompt (a bug report's title);
    # its fix the edits to files that existed before the session, verified by a later passing run of code
    task: StrictBool = False
    # the branch the session was on when it made the fix (the self-check says where a fix lives that this
    # checkout lacks: `recall_agent.branches`)
    branch: str | None = Field(default=None, max_length=250, pattern=NO_NUL)
    # where in the session it came from: the failing tool calls and the call that showed it fixed
    calls: list[Annotated[str, Field(max_length=200, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=21
    )

    _storable = model_validator(mode="after")(_storable)


class FixRecord(WireModel):
    """One fix that worked for a learning's cause (recall extension): its resolution and evidence, how often
    it was recorded and when first and last. A learning's `resolution_summary` is its most frequent fix."""

    model_config = ConfigDict(extra="forbid")

    resolution_summary: str = Field(min_length=1, max_length=RESOLUTION_MAX, pattern=NOT_BLANK)
    fix: FixEvidence | None = None
    count: int = Field(default=1, ge=1, le=COUNTER_MAX)
    first_seen_at: datetime | None = None
    last_seen_at: datetime | None = None

    _storable = model_validator(mode="after")(_storable)


class Learning(WireModel):
    """The stored learning record (origin design), also the body of POST /v1/learnings."""

    model_config = ConfigDict(extra="forbid")

    id: UUID = Field(default_factory=uuid4)
    session_id: str | None = Field(default=None, max_length=128, pattern=NO_NUL)
    repo: str = Field(min_length=1, max_length=REPO_MAX, pattern=NO_NUL)
    file_paths_touched: list[Annotated[str, Field(max_length=PATH_MAX, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=PATHS_MAX
    )
    error_signatures: list[Annotated[str, Field(max_length=ERROR_TEXT_MAX, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=STORED_SIGNATURES_MAX
    )
    resolution_summary: str = Field(min_length=1, max_length=RESOLUTION_MAX, pattern=NOT_BLANK)
    ticket_id: str | None = Field(default=None, max_length=TICKET_MAX, pattern=NO_NUL)
    task_type: TaskType = TaskType.UNKNOWN
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    access_count: int = Field(default=0, ge=0, le=COUNTER_MAX)
    last_accessed_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    fix: FixEvidence | None = None  # recall extension: what the fix touched
    # recall extensions: the lifecycle counts (recall_agent/learnings/lifecycle.py), kept by export/import;
    # a learning posted to the team server starts from zero whatever it says
    shown_count: int = Field(default=0, ge=0, le=COUNTER_MAX)
    helped_count: int = Field(default=0, ge=0, le=COUNTER_MAX)
    hurt_count: int = Field(default=0, ge=0, le=COUNTER_MAX)
    last_shown_at: datetime | None = None
    last_useful_at: datetime | None = None
    # recall extensions (one learning per cause, learnings/consolidate.py), kept by export/import: how often
    # and in how many sessions the cause was met, when first and last, and every fix that worked for it
    # (most frequent first; empty means the resolution above is the only one)
    seen_count: int = Field(default=1, ge=1, le=COUNTER_MAX)
    session_count: int = Field(default=0, ge=0, le=COUNTER_MAX)
    first_seen_at: datetime | None = None
    last_seen_at: datetime | None = None
    fixes: list[FixRecord] = Field(default_factory=list, max_length=FIXES_MAX)
    # recall extensions (recall_agent/safety/trust.py): where it came from, who posted it, its review and its
    # quarantine reasons; every writer sets them itself (a posted body's claims are replaced by the server's)
    provenance: Provenance | None = None
    author: str | None = Field(default=None, max_length=200, pattern=NO_NUL)
    review: Review = "none"
    quarantine: list[Annotated[str, Field(max_length=200)]] | None = Field(default=None, max_length=20)

    @field_validator("resolution_summary")
    @classmethod
    def _resolution_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("resolution_summary must not be blank")
        return v.strip()

    _storable = model_validator(mode="after")(_storable)


class LearningOutcome(WireModel):
    """POST /v1/learnings/outcomes (recall extension): what injected learnings did — `shown` (injected),
    `helped` (the next run passed), `hurt` (the same failure followed); the hooks send it to a team server."""

    model_config = ConfigDict(extra="forbid")

    learning_ids: list[UUID] = Field(min_length=1, max_length=50)
    outcome: Literal["shown", "helped", "hurt"]


class OutcomeCounted(WireModel):
    counted: int = Field(ge=0)


# --------------------------------------------------------------------------- federation node


class FederationRequest(WireModel):
    """POST /v1/nodes/node_knowledge_query_federation_orchestrator/execute"""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=ERROR_TEXT_MAX, pattern=NO_NUL)
    force_backends: list[BackendRole] | None = None
    correlation_id: UUID | None = None
    # recall extension (optional, documented in docs/wire.md): the repository the architecture and
    # antipattern engines look at. Absent: the server's configured repositories / the client's cwd.
    repo_path: str | None = Field(default=None, max_length=4096, pattern=NO_NUL)

    _storable = model_validator(mode="after")(_storable)


class FederationResult(WireModel):
    model_config = ConfigDict(extra="allow")  # extra fields are allowed by the contract

    content: str
    source: BackendRole
    rank: int = Field(ge=0)
    content_hash: str
    # recall extras: which engine really produced this (e.g. "recall-index", "recall-antipatterns")
    engine: str | None = None


class FederationResponse(WireModel):
    query: str
    results: list[FederationResult] = Field(default_factory=list)
    backends_queried: list[str] = Field(default_factory=list)
    error_message: str | None = None


class AntipatternMatch(WireModel):
    """Antipattern match fields of the origin design; carried as extras on qdrant FederationResults."""

    model_config = ConfigDict(extra="allow")

    antipattern_name: str
    similarity_score: float = Field(ge=0.0, le=1.0)
    adjusted_score: float = Field(ge=0.0, le=1.0)
    severity: str
    enforcement: str
    category: str
    description: str
    rationale: str
    explanation: str
    source_ticket: str | None = None
    registry_version: str
