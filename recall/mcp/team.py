"""The backend of `/mcp` on `recall serve`: the tools answered by the server's own stores and engines.

Everything the HTTP routes enforce holds here too, with the same functions: the token's scopes (`read` for
`recall`, `write` for `recall_learn`), its repository allow-list (a learnings query or a write for another
repository is refused, matches from repositories it may not see are dropped, the federation asks only the
allowed configured repositories), and redaction before a learning is stored. The payloads are the
client's (`recall.client.query.build_payloads`) and the answer is the client's display, so an agent on `/mcp`
reads what `recall` prints with the two backend URLs pointed at this server.

There is no session here: an empty query is the seed's auto mode (or task-context mode with `repo` /
`task_type`) for the repository the call names, else the server's only (first allowed) repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from fastapi import HTTPException
from pydantic import ValidationError

from recall import federation
from recall import repo as repo_rule
from recall.client import query as client_query
from recall.client.fanout import BackendOutcome
from recall.client.main import Asked
from recall.mcp.tools import Context, LearnRequest, LearnResult, RecallAnswer, ToolError
from recall.models import FederationRequest, Learning, LearningRetrievalRequest
from recall.server.app import _federation_repos, _redacted, _visible
from recall.server.auth import Principal
from recall.server.store import StoreUnavailable

if TYPE_CHECKING:
    from recall.server.app import Settings

TRANSPORT = "server"


class TeamBackend:
    local = False

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # ------------------------------------------------------------------ recall

    async def recall(self, args: client_query.Args, ctx: Context) -> RecallAnswer:
        from recall.client.context import Context as ClientContext

        principal = _authorized(ctx, "read", self.settings.require_auth)
        repo = args.repo or self._default_repo(principal)
        payloads = client_query.build_payloads(args, repo, args.query)
        outcomes = {
            name: BackendOutcome(name, payload, TRANSPORT, failure=_SKIPPED if payload is None else None)
            for name, payload in payloads.items()
        }
        # refusals first: a ToolError raised inside the task group would reach the SDK as a crash
        learnings = _learnings_request(payloads.get("learnings"), principal)
        repos = self._federation_repos(args.repo, principal) if payloads.get("federation") else None
        if isinstance(repos, str):  # learnings of a repository this server does not index: no federation
            outcomes["federation"].failure = {"kind": "unavailable", "message": repos}
        async with anyio.create_task_group() as tg:
            if learnings is not None:
                tg.start_soon(self._learnings, outcomes["learnings"], learnings, principal)
            if payloads.get("federation") and not isinstance(repos, str):
                tg.start_soon(self._federation, outcomes["federation"], repos)
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
            result = _visible(result, principal)
        outcome.response = result.model_dump(mode="json")

    async def _federation(self, outcome: BackendOutcome, repos: list[str] | None) -> None:
        request = FederationRequest.model_validate(outcome.payload)
        try:
            result = await federation.execute(request, repos=repos)
        except Exception as exc:  # an engine bug is this backend's failure, shown as such (as the client)
            outcome.failure = {"kind": "error", "message": f"{type(exc).__name__}: {exc}"[:400]}
            return
        outcome.response = result.model_dump(mode="json")

    def _allowed_repos(self, principal: Principal | None) -> list[str]:
        return [r for r in self.settings.repos if principal is None or principal.may_see_repo(r)]

    def _default_repo(self, principal: Principal | None) -> str:
        """The first repository this token may see, else the server's own (its working folder's)."""
        allowed = self._allowed_repos(principal)
        if allowed:
            return Path(allowed[0]).name
        here = repo_rule.current_dir()
        return repo_rule.name(here, repo_rule.toplevel(here))

    def _federation_repos(self, repo: str | None, principal: Principal | None) -> list[str] | str | None:
        """The configured repositories named `repo` (all the token may see without one): the routes' rule.
        A `repo` the server does not index gives the reason as a string (the learnings still answer);
        one the token may not see is refused."""
        if repo and self.settings.repos:
            named = [r for r in self.settings.repos if Path(r).name == repo]
            if not named:
                names = ", ".join(sorted({Path(r).name for r in self._allowed_repos(principal)})) or "none"
                return f"repo '{repo}' is not one of this server's repositories ({names})"
            return _checked(lambda: _federation_repos(named[0], self.settings.repos, principal))
        return _checked(lambda: _federation_repos(None, self.settings.repos, principal))

    # ------------------------------------------------------------------ recall_learn

    async def learn(self, request: LearnRequest, ctx: Context) -> LearnResult:
        principal = _authorized(ctx, "write", self.settings.require_auth)
        repo = request.repo or self._default_repo(principal)
        if principal and not principal.may_see_repo(repo):
            raise ToolError(f"repo: token '{principal.name}' may not write repo '{repo}'")
        try:
            learning = Learning.model_validate(
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
            # redaction runs its regexes over user text: CPU work, kept off the event loop
            redacted = await anyio.to_thread.run_sync(_redacted, learning)
            learning_id, merged = await self.settings.backend.add(redacted)
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


def _checked(resolve: Any) -> Any:
    try:
        return resolve()
    except HTTPException as exc:
        raise ToolError(str(exc.detail)) from None


def _invalid(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ())]
    field = _ARGUMENT_OF.get(loc[0], loc[0]) if loc else "input"
    return f"{field}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}"
