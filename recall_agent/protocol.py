"""The wire protocol's vocabulary without pydantic: the enums and the limits every wire model uses.

`recall_agent/models.py` builds the pydantic wire models from these; the in-process read path (the CLI's
learnings node, the on-error hook) uses them directly, so it never imports pydantic.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

ERROR_TEXT_MAX = 4000
RESOLUTION_MAX = 2000
TICKET_MAX = 64
TASK_TYPE_MAX = 64
REPO_MAX = 128
PATH_MAX = 4096
PATHS_MAX = 200  # file paths in one learning or one query
SIGNATURES_MAX = 20  # error signatures in one posted learning
# distinct error texts one stored learning keeps (one learning per cause gathers the texts of every time it was
# met: learnings/consolidate.py); beyond it an occurrence is counted, its text not kept
STORED_SIGNATURES_MAX = 200
FIXES_MAX = 200  # distinct fixes one stored learning keeps (the least frequent dropped first)
MAX_RESULTS_RANGE = (1, 20)
# counters: the largest integer every JSON parser reads exactly (and SQLite / PostgreSQL bigint store); an
# OpenAPI maximum of 2**63 - 1 is printed as a float that rounds above it, and fuzzers then send values it rejects
COUNTER_MAX = 2**53 - 1

# request defaults of the learnings node (wire-protocol.md)
DEFAULT_MAX_RESULTS = 5
DEFAULT_MIN_SIMILARITY_ERROR = 0.85
DEFAULT_MIN_SIMILARITY_CONTEXT = 0.70


class MatchType(StrEnum):
    ERROR_SIGNATURE = "error_signature"
    TASK_CONTEXT = "task_context"
    AUTO = "auto"


class TaskType(StrEnum):
    CI_FIX = "ci_fix"
    MIGRATION = "migration"
    FEATURE = "feature"
    REFACTOR = "refactor"
    BUG_FIX = "bug_fix"
    TEST = "test"
    DOCS = "docs"
    DEPENDENCY = "dependency"
    UNKNOWN = "unknown"


class BackendRole(StrEnum):
    """Federation backends are roles, named after the origin's engines; `engine` says who really answered."""

    MEMGRAPH = "memgraph"
    REPOWISE = "repowise"
    QDRANT = "qdrant"


def content_hash(content: str) -> str:
    """The sha256 of a result's content: what the federation node de-duplicates by."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
