"""The FastAPI app of `recall serve`: the two node routes, learning writes, health, OpenAPI, and the MCP
tools at /mcp (`recall_agent.mcp.http`).

The routes only wrap the nodes (`recall_agent.learnings` retrieval over the configured store,
`recall_agent.federation.execute`) and add what a shared server needs: repository access checks per token,
redaction before storing, and error answers that name the problem (4xx) or the unavailable store (503).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, get_args
from uuid import UUID

import anyio.to_thread
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, create_model, model_validator

import recall_agent
from recall_agent.config import DEFAULT_FEDERATION_PATH, DEFAULT_RETRIEVAL_PATH
from recall_agent.models import (
    NO_NUL,
    NOT_BLANK,
    FederationRequest,
    FederationResponse,
    LearningOutcome,
    LearningRetrievalRequest,
    LearningRetrievalResponse,
    OutcomeCounted,
)
from recall_agent.server.answers import (
    LearningPaste,
    Settings,
    federation_answer,
    stored_form,
    visible_matches,
)
from recall_agent.server.auth import Principal
from recall_agent.server.http import LEARNINGS_PATH, MCP_PATH, OUTCOMES_PATH, AccessLog, Guard, replay
from recall_agent.server.scope import ScopeError
from recall_agent.server.store import StoreRefused, StoreUnavailable

log = logging.getLogger("recall_agent.server")

_NUMBER = (int, float)
_STRING = (datetime, datetime | None, UUID, UUID | None)


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside `Model`, `Model | None` or `list[Model]`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _nested_model(arg)) is not None:
            return found
    return None


def _json_type_errors(model: type[BaseModel], data: Any, where: str = "") -> list[str]:
    """The fields of `data` (and of the models nested in it, `fixes[0].last_seen_at`) whose JSON type is
    wrong: a number that is not a JSON number, a timestamp or id that is not a JSON string."""
    if not isinstance(data, dict):
        return []  # not an object: pydantic's own error names it
    errors: list[str] = []
    for name, field in model.model_fields.items():
        if name not in data:
            continue
        value, path = data[name], f"{where}{name}"
        if field.annotation in _NUMBER:
            if isinstance(value, bool) or not isinstance(value, _NUMBER):
                errors.append(f"{path}: must be a JSON number")
        elif field.annotation in _STRING:
            if value is not None and not isinstance(value, str):
                errors.append(f"{path}: must be a JSON string")
        elif (inner := _nested_model(field.annotation)) is not None:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    errors += _json_type_errors(inner, item, f"{path}[{i}].")
            else:
                errors += _json_type_errors(inner, value, f"{path}.")
    return errors


def _strict_json_types(model: type[BaseModel]) -> Any:
    """`model`, except that numbers must be JSON numbers and timestamps/ids JSON strings, in nested models
    too: pydantic's lax mode would read `false` or `"5"` as a number and `0` as a date, and a wrong type
    must be a 422 that names the field."""

    def json_types(cls: type, data: Any) -> Any:
        if bad := _json_type_errors(model, data):
            raise ValueError("; ".join(bad))
        return data

    strict = create_model(
        model.__name__,
        __base__=model,
        __validators__={"json_types": model_validator(mode="before")(classmethod(json_types))},
    )
    strict.__doc__ = model.__doc__
    return strict


RetrievalBody = _strict_json_types(LearningRetrievalRequest)


LearningBody = _strict_json_types(LearningPaste)
FederationBody = _strict_json_types(FederationRequest)  # one behaviour on every route
OutcomeBody = _strict_json_types(LearningOutcome)


class LearningWritten(BaseModel):
    id: UUID
    merged: bool


class Problem(BaseModel):
    detail: str


def create_app(settings: Settings) -> Any:
    """The ASGI application: FastAPI and the MCP endpoint (`/mcp`), wrapped in the guard (auth, body
    limits) and the access log."""
    from recall_agent.mcp.http import mount

    mcp = mount(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            async with mcp.running:
                if settings.collector:
                    settings.collector.start()  # the started server's objects frozen (collector.py)
                try:
                    yield
                finally:
                    if settings.collector:
                        settings.collector.stop()
        finally:
            # graceful shutdown (also in each --workers process, which a re-raised SIGTERM ends before any
            # atexit): flush access counts and close the store even when the MCP manager's exit failed
            await anyio.to_thread.run_sync(settings.backend.close)

    app = FastAPI(
        lifespan=lifespan,
        title="recall",
        version=recall_agent.__version__,
        description="Prior fixes, architecture and antipatterns for coding agents (docs/server.md).",
    )
    app.state.settings = settings
    _install_error_handlers(app)
    _install_routes(app, settings)
    from recall_agent.server.ui.routes import install as install_review_page

    install_review_page(app, settings)  # /ui/: the review page (docs/review.md)
    guarded = Guard(
        _fast_retrieval(_by_path(app, MCP_PATH, mcp.app), settings),
        principals=settings.principals,
        require_auth=settings.require_auth,
        max_body=settings.max_body,
        body_timeout=settings.body_timeout,
    )
    logged = AccessLog(guarded)
    return settings.collector.tracking(logged) if settings.collector else logged


def _by_path(app: Any, path: str, other: Any) -> Any:
    """`other` answers `path` (and below it), `app` everything else."""

    async def dispatch(scope: dict[str, Any], receive: Any, send: Any) -> None:
        here = scope["type"] == "http" and (scope["path"] == path or scope["path"].startswith(path + "/"))
        await (other if here else app)(scope, receive, send)

    return dispatch


def _fast_retrieval(app: Any, settings: Settings) -> Any:
    """The learnings node's POST answered without FastAPI's routing, dependency solving and middleware
    stack, the largest share of a request's CPU after the ranking itself (docs/benchmarks.md, issue 39):
    a body FastAPI would accept as it is (JSON that the route's own strict model validates, a repository the
    token may read) is answered here by the same code as the route (`_retrieval_answer`), and a store error
    by the same handlers. Anything else (malformed JSON, a field error, a forbidden repository) goes to the
    FastAPI app with its body, which answers it exactly as before."""

    async def dispatch(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != DEFAULT_RETRIEVAL_PATH:
            await app(scope, receive, send)
            return
        message = await receive()  # the Guard replays the whole body in one message
        if message["type"] != "http.request" or message.get("more_body", False):
            await app(scope, replay(message, receive), send)
            return
        principal = scope.get("state", {}).get("principal")
        try:
            body = RetrievalBody.model_validate(json.loads(message.get("body", b"")))
        except Exception:  # malformed JSON, a field error, too deep: FastAPI names the problem
            body = None
        if body is None or (principal and not principal.may_see_repo(body.repo)):
            await app(scope, replay(message, receive), send)
            return
        try:
            response: Response = Response(
                await _retrieval_answer(settings.backend, body, principal), media_type="application/json"
            )
        except StoreRefused as exc:
            response = _refused(exc)
        except StoreUnavailable as exc:
            response = _unavailable(exc)
        await response(scope, receive, send)

    return dispatch


async def _retrieval_answer(backend: Any, body: Any, principal: Principal | None) -> bytes:
    """The learnings node's answer for a validated body whose repository the token may read."""
    result = await backend.retrieve(body)
    if principal and not principal.unrestricted:
        result = visible_matches(result, principal)
    return result.to_json()


# --------------------------------------------------------------------------- routes

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "description": text}
    for code, text in {
        400: "Malformed JSON",
        401: "Missing or invalid bearer token",
        403: "Token lacks the scope or the repository",
        408: "Body not received in time",
        413: "Body too large",
        422: "A field is missing, unknown, of the wrong type or out of range",
        503: "The learnings store is unavailable",
    }.items()
}


def _install_routes(app: FastAPI, settings: Settings) -> None:
    backend = settings.backend

    @app.post(
        DEFAULT_RETRIEVAL_PATH,
        response_model=LearningRetrievalResponse,
        responses=_ERRORS,
        summary="Learnings node: prior fixes for an error or a task context",
    )
    async def retrieval_execute(body: RetrievalBody, request: Request) -> Response:
        principal = _principal(request)
        if principal and not principal.may_see_repo(body.repo):
            raise HTTPException(403, f"forbidden: token '{principal.name}' may not read repo '{body.repo}'")
        return Response(await _retrieval_answer(backend, body, principal), media_type="application/json")

    @app.post(
        DEFAULT_FEDERATION_PATH,
        response_model=FederationResponse,
        responses=_ERRORS,
        summary="Federation node: architecture and antipattern answers, routed by keyword",
    )
    async def federation_execute(body: FederationBody, request: Request) -> Response:
        try:
            result = await federation_answer(body, settings.repos, _principal(request))
        except ScopeError as exc:
            raise HTTPException(exc.status, exc.detail) from exc
        return Response(result.model_dump_json(), media_type="application/json")

    @app.post(
        LEARNINGS_PATH,
        response_model=LearningWritten,
        status_code=201,
        responses=_ERRORS | {409: {"model": Problem, "description": "Id already used by another learning"}},
        summary="Record a learning (redacted before it is stored; the learning of the same cause is updated)",
    )
    async def learnings_add(body: LearningBody, request: Request) -> Response:
        principal = _principal(request)
        if principal and not principal.may_see_repo(body.repo):
            raise HTTPException(403, f"forbidden: token '{principal.name}' may not write repo '{body.repo}'")
        try:
            learning = await anyio.to_thread.run_sync(  # CPU work off the event loop
                stored_form, body, principal, settings.review_posted
            )
            learning_id, merged = await backend.add(learning)
        except ValueError as exc:  # the store refuses an id that names a different learning
            raise HTTPException(409, str(exc)) from exc
        written = LearningWritten(id=learning_id, merged=merged)
        return Response(written.model_dump_json(), status_code=201, media_type="application/json")

    @app.post(
        OUTCOMES_PATH,
        response_model=OutcomeCounted,
        responses=_ERRORS,
        summary="Count what injected learnings did (shown / helped / hurt): the lifecycle (docs/review.md)",
    )
    async def learnings_outcome(body: OutcomeBody, request: Request) -> Response:
        principal = _principal(request)
        repos = None if principal is None or principal.unrestricted else principal.repos
        counted = await backend.run(_count_outcome, body.learning_ids, body.outcome, repos, write=True)
        return Response(OutcomeCounted(counted=counted).model_dump_json(), media_type="application/json")

    @app.get("/health", summary="Liveness and store status (503 while the store is unavailable)")
    async def health() -> JSONResponse:
        try:
            store = await backend.health()
        except StoreUnavailable as exc:
            return JSONResponse({"status": "unavailable", "store": backend.name, "detail": str(exc)}, 503)
        return JSONResponse({"status": "ok", "version": recall_agent.__version__, **store})


def _count_outcome(store: Any, ids: list[UUID], outcome: str, repos: frozenset[str] | None) -> int:
    """Counts for the learnings the token may see (others, and unknown ids, are skipped)."""
    if repos is not None:
        ids = [i for i in ids if (row := store.learning(i)) is not None and row.repo in repos]
    return store.record_outcome(ids, outcome) if ids else 0


def _principal(request: Request) -> Principal | None:
    return request.scope.get("state", {}).get("principal")


# --------------------------------------------------------------------------- errors


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            err = next(e for e in errors if e.get("type") == "json_invalid")
            reason = (err.get("ctx") or {}).get("error", "invalid JSON")
            pos = err["loc"][-1] if len(err.get("loc", ())) > 1 else "?"
            return JSONResponse({"detail": f"malformed JSON body: {reason} (at character {pos})"}, 400)
        problems = [_describe(e) for e in errors]
        return JSONResponse(
            {
                "detail": "invalid request: " + "; ".join(problems[:5]),
                "errors": [
                    {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
                    for e in errors
                ],
            },
            422,
        )

    @app.exception_handler(StoreUnavailable)
    async def unavailable(_: Request, exc: StoreUnavailable) -> JSONResponse:
        return _unavailable(exc)

    @app.exception_handler(StoreRefused)
    async def refused(_: Request, exc: StoreRefused) -> JSONResponse:
        return _refused(exc)


def _unavailable(exc: StoreUnavailable) -> JSONResponse:
    return JSONResponse(
        {"detail": f"learnings store unavailable: {exc}"}, 503, headers={"Retry-After": str(exc.retry_after)}
    )


def _refused(exc: StoreRefused) -> JSONResponse:
    return JSONResponse({"detail": f"invalid request: {exc}"}, 422)


def _describe(error: dict[str, Any]) -> str:
    """One readable phrase naming the field: `max_results: Input should be less than or equal to 20`."""
    loc = [str(p) for p in error.get("loc", ()) if p != "body"]
    where = ".".join(loc) or "body"
    if error.get("type") == "extra_forbidden":
        return f"{where}: unknown field"
    if error.get("type") == "value_error" and not loc:
        return str(error.get("msg", "")).removeprefix("Value error, ")
    if error.get("type") in ("model_attributes_type", "dict_type") and not loc:
        return "body: expected a JSON object"
    if error.get("type") == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern")
        if pattern == NOT_BLANK:
            return f"{where}: must not be blank nor contain a NUL character"
        if pattern == NO_NUL:
            return f"{where}: must not contain a NUL character"
    return f"{where}: {error.get('msg')}"
