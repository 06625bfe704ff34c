"""What the team server answers, shared by its HTTP routes (`app.py`) and its MCP tools (`recall_agent/mcp/team.py`):
its settings, the body a learning is posted as, and the rules that shape an answer — which repositories a
federation request sees, which learnings a token may see, and what is stored of a posted learning.
Kept apart from the ASGI app so the MCP mount and the routes import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from recall_agent import federation
from recall_agent.learnings.wire import RetrievalResponse
from recall_agent.models import (
    ERROR_TEXT_MAX,
    NO_NUL,
    SIGNATURES_MAX,
    FederationRequest,
    FederationResponse,
    Learning,
)
from recall_agent.server.auth import Principal
from recall_agent.server.collector import Collector
from recall_agent.server.scope import federation_repos
from recall_agent.server.store import LearningsBackend

MAX_BODY = 1024 * 1024  # a learning is at most a few KB; 1 MiB leaves room and stops abuse
BODY_TIMEOUT = 10.0


@dataclass
class Settings:
    backend: LearningsBackend
    repos: list[str] = field(default_factory=list)  # configured repositories (resolved paths)
    principals: list[Principal] = field(default_factory=list)
    require_auth: bool = False
    max_body: int = MAX_BODY
    body_timeout: float = BODY_TIMEOUT
    host: str = "127.0.0.1"  # the bound address: on loopback, /mcp accepts only loopback Host headers
    review_posted: bool = False  # --review-posted: a posted learning is injected nowhere until approved
    collector: Collector | None = None  # `recall serve`: full garbage collections at its own times


class LearningPaste(Learning):
    """The body of POST /v1/learnings: a Learning whose error signatures may be whole tool outputs or logs
    (up to the body limit); the stored learning keeps each one's decisive part, at most ERROR_TEXT_MAX."""

    error_signatures: list[Annotated[str, Field(max_length=MAX_BODY, pattern=NO_NUL)]] = Field(
        default_factory=list, max_length=SIGNATURES_MAX
    )


async def federation_answer(
    request: FederationRequest, configured: list[str], principal: Principal | None
) -> FederationResponse:
    """The federation node as this server answers it (the route and the MCP tool): only the configured
    repositories the token may see; ScopeError for a request it may not make."""
    repos = federation_repos(request.repo_path, configured, principal)
    if not repos:
        return FederationResponse(
            query=request.query,
            results=[],
            backends_queried=[],
            error_message="this server has no repository to answer from (start it with --repo PATH)",
        )
    return await federation.execute(request, repos=repos)


def visible_matches(result: RetrievalResponse, principal: Principal) -> RetrievalResponse:
    """Drop matches from repositories the token may not see (error matches search every repo)."""
    return result.only([m for m in result.matches if principal.may_see_repo(m.repo)])


def _decisive_learning(body: Learning, author: str | None, review: bool, provenance: str | None) -> Learning:
    """The wire Learning of a pasted one: long error signatures cut to their decisive part."""
    from recall_agent.learnings.extract import decisive

    data = body.model_dump()
    # a posted learning's lifecycle starts here, whatever the body claims (the counts are the server's)
    data.update(shown_count=0, helped_count=0, hurt_count=0, last_shown_at=None, last_useful_at=None)
    # so do its occurrences: this post is one time the cause was met, with its one fix
    data.update(seen_count=1, session_count=0, first_seen_at=None, last_seen_at=None, fixes=[])
    # and so does its trust (safety/trust.py): attributed to the token that posted it, provenance from its
    # fix evidence, awaiting review when the server asks for it, the quarantine decided by the store
    if provenance is None:  # a post without fix evidence is its token's word, like a person's own note
        provenance = None if body.fix else "person"
    data.update(provenance=provenance, author=author, review="pending" if review else "none", quarantine=None)
    data["error_signatures"] = [
        s if len(s) <= ERROR_TEXT_MAX else decisive(s, ERROR_TEXT_MAX) for s in body.error_signatures
    ]
    return Learning.model_validate(data)


def stored_form(
    body: Learning, principal: Principal | None = None, review: bool = False, provenance: str | None = None
) -> Learning:
    """What is stored of a posted learning: its decisive error text, every field redacted, attributed to
    the token that posted it (`principal`), awaiting review when `review`. `provenance`: who wrote it (an
    agent, for the MCP tool); else what its fix evidence says, and a person's word without evidence."""
    return _redacted(_decisive_learning(body, principal.name if principal else None, review, provenance))


def _redacted(learning: Learning) -> Learning:
    from recall_agent.redact import redact_learning

    return redact_learning(learning)
