"""The backend of `/mcp` on `recall serve`: the tools answered by the server's own stores and engines.

Everything the HTTP routes enforce holds here too, with the same functions: the token's scopes (`read` for
`recall`, `write` for `recall_learn`), its repository allow-list (a learnings query or a write for another
repository is refused, matches from repositories it may not see are dropped, the federation asks only the
allowed configured repositories), and redaction before a learning is stored. The payloads are the
client's (`recall_agent.client.query.build_payloads`) and the answer is the client's display, so an agent on `/mcp`
reads what `recall` prints with the two backend URLs pointed at this server.

There is no session here: an empty query is the seed's auto mode (or task-context mode with `repo` /
`task_type`) for the repository the call names, else the server's only (first allowed) repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import ValidationError

from recall_agent import repo as repo_rule
from recall_agent.client import query as client_query
from recall_agent.client.fanout import BackendOutcome
from recall_agent.client.main import Asked
from recall_agent.errors import describe
from recall_agent.mcp.tools import Context, LearnRequest, LearnResult, RecallAnswer, ToolError
from recall_agent.models import FederationRequest, LearningRetrievalRequest
from recall_agent.server.answers import LearningPaste, federation_answer, stored_form, visible_matches
from recall_agent.server.auth import Principal
from recall_agent.server.scope import ScopeError, repo_name
from recall_agent.server.store import StoreUnavailable

if TYPE_CHECKING:
    from recall_agent.server.answers import Settings

TRANSPORT = "server"


class TeamBackend:
    local = False

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # ------------------------------------------------------------------ recall

    async def recall(self, args: client_query.Args, ctx: Context) -> RecallAnswer:
        from recall_agent.client.context import Context as ClientContext

        principal = _authorized(ctx, "read", self.settings.require_auth)
        repo = args.repo or self._default_repo(principal)
        payloads = client_query.build_payloads(args, repo, args.query)
        outcomes = {
            name: BackendOutcome(name, payload, TRANSPORT, failure=_SKIPPED if payload is None else None)
            for name, payload in payloads.items()
        }
        # refusals first: a ToolError raised inside the task group would reach the SDK as a crash
        learnings = _learnings_request(payloads.get("learnings"), principal)
        federation_request = self._federation_request(payloads.get("federation"), args.repo, outcomes)
        refused: list[ScopeError] = []
        async with anyio.create_task_group() as tg:
            if learnings is not None:
                tg.start_soon(self._learnings, outcomes["learnings"], learnings, principal)
            if federation_request is not None:
                tg.start_soon(
                    self._federation, outcomes["federation"], federation_request, principal, refused
                )
        if refused:
            raise ToolError(refused[0].detail)
        here = ClientContext(Path("/"), repo, None, None, None)
        return await anyio.to_thread.run_sync(RecallAnswer.of, Asked(args, here, args.query, outcomes))

    async def _learnings(
        self, outcome: BackendOutcome, request: LearningRetrievalRequest, principal: Principal | None
    ) -> None:
        try:
            result = await self.settings.backend.retrieve(request)
        except StoreUnavailable as exc:
            outcome.failure = {"kind": "unavailable", "message": f"learnings store unavailable: {exc}"}
            return
        if principal and not principal.unrestricted:
            result = visible_matches(result, principal)
        outcome.response = result.to_wire()

    async def _federation(
        self,
        outcome: BackendOutcome,
        request: FederationRequest,
        principal: Principal | None,
        refused: list[ScopeError],
    ) -> None:
        try:
            result = await federation_answer(request, self.settings.repos, principal)
        except ScopeError as exc:  # the token may not see the repository: a refusal, raised by recall()
            refused.append(exc)
            return
        except Exception as exc:  # an engine bug is this backend's failure, shown as such (as the client)
            outcome.failure = {"kind": "error", "message": describe(exc)}
            return
        outcome.response = result.model_dump(mode="json")

    def _default_repo(self, principal: Principal | None) -> str:
        """The first configured repository this token may see, else the server's own (its working folder's)."""
        allowed = [
            repo_name(r)
            for r in self.settings.repos
            if principal is None or principal.may_see_repo(repo_name(r))
        ]
        if allowed:
            return allowed[0]
        here = repo_rule.current_dir()
        return repo_rule.name(here, repo_rule.toplevel(here))

    def _federation_request(
        self, payload: dict | None, repo: str | None, outcomes: dict[str, BackendOutcome]
    ) -> FederationRequest | None:
        """The federation payload, pointed at the configured repository named `repo` (if any). A `repo` the
        server does not index leaves the federation out, saying why; its learnings still answer."""
        if payload is None:
            return None
        if repo and self.settings.repos:
            named = [r for r in self.settings.repos if repo_name(r) == repo]
            if not named:
                names = ", ".join(sorted(repo_name(r) for r in self.settings.repos))
                message = f"repo '{repo}' is not one of this server's repositories ({names})"
                outcomes["federation"].failure = {"kind": "unavailable", "message": message}
                return None
            payload = {**payload, "repo_path": named[0]}
        return FederationRequest.model_validate(payload)

    # ------------------------------------------------------------------ recall_learn

    async def learn(self, request: LearnRequest, ctx: Context) -> LearnResult:
        principal = _authorized(ctx, "write", self.settings.require_auth)
        repo = request.repo or self._default_repo(principal)
        if principal and not principal.may_see_repo(repo):
            raise ToolError(f"repo: token '{principal.name}' may not write repo '{repo}'")
        try:
            learning = LearningPaste.model_validate(
                {
                    "repo": repo,
                    "error_signatures": [request.error],
                    "resolution_summary": request.resolution,
                    "file_paths_touched": request.files,
                    "task_type": request.task_type or "unknown",
                    "ticket_id": request.ticket,
                }
            )
        except ValidationError as exc:
            raise ToolError(_invalid(exc)) from None
        try:
            # the route's stored form (decisive error text, every field redacted): CPU work, off the loop
            stored = await anyio.to_thread.run_sync(  # an agent's note (safety/trust.py)
                stored_form, learning, principal, self.settings.review_posted, "agent"
            )
            learning_id, merged = await self.settings.backend.add(stored)
        except StoreUnavailable as exc:
            raise ToolError(f"learnings store unavailable: {exc}") from None
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return LearnResult(id=str(learning_id), merged=merged)

    async def forget(self, learning_id: str) -> str:  # not offered on a team server (local = False)
        raise ToolError("recall_forget is not available on a team server")

    async def index(self) -> tuple[str, dict[str, Any]]:
        raise ToolError("recall_index is not available on a team server")


_SKIPPED = {"kind": "skipped", "message": "no query text to send"}
# the Learning fields behind the tool's arguments, for error messages that name the argument
_ARGUMENT_OF = {
    "error_signatures": "error",
    "resolution_summary": "resolution",
    "file_paths_touched": "files",
    "ticket_id": "ticket",
}


def _learnings_request(payload: dict | None, principal: Principal | None) -> LearningRetrievalRequest | None:
    if payload is None:
        return None
    request = LearningRetrievalRequest.model_validate(payload)
    if principal and not principal.may_see_repo(request.repo):
        raise ToolError(f"repo: token '{principal.name}' may not read repo '{request.repo}'")
    return request


def _principal(ctx: Context) -> Principal | None:
    request = ctx.request_context.request
    scope = getattr(request, "scope", None) or {}
    return scope.get("state", {}).get("principal")


def _authorized(ctx: Context, needed: str, require_auth: bool) -> Principal | None:
    """The caller's token (None on a server without tokens), refused without the tool's scope. (The Guard
    already refused a request without a valid token; a tool never runs unauthenticated regardless.)"""
    principal = _principal(ctx)
    if principal is None and require_auth:
        raise ToolError("unauthorized: this server needs a bearer token")
    if principal is not None and not principal.may(needed):
        raise ToolError(f"forbidden: token '{principal.name}' lacks the '{needed}' scope")
    return principal


def _invalid(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ())]
    field = _ARGUMENT_OF.get(loc[0], loc[0]) if loc else "input"
    return f"{field}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}"
