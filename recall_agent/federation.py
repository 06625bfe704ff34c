"""The federation node: route a question to knowledge engines by keyword, ask them at once, merge.

`execute(request) -> FederationResponse` follows the wire protocol (../shared/docs/wire-protocol.md):

1. **Routing.** Keywords pick *roles*: `memgraph` (graph questions: dependencies, imports, blast radius,
   circular, transitive, callers, affects, what changes with, tests to run), `repowise` (codebase
   questions: a file path, class, method, symbol, "where is", hotspots, owners, risky), `qdrant` (antipattern questions: pattern, smell, duplicate, code quality). No keyword → all
   three. `force_backends` replaces routing.
2. **Engines.** Each role is answered by an engine (a plain sync function) looked up in `ENGINES`; the
   engines run concurrently in worker threads under one deadline. The real engines are
   `recall_agent.architecture.query` (memgraph + repowise) and `recall_agent.antipatterns.query` (qdrant). Tests and
   embedders swap them with `use_engines(...)` (the seam) — nothing else in this module knows about them.
3. **Merge.** Results of all engines are interleaved by each engine's own rank, de-duplicated by the
   sha256 of their content, and numbered with one `rank` counter over the merged list.

An engine that cannot be imported, raises, or misses the deadline is named in `error_message`; its role is
listed in `backends_queried` only if it actually ran. Nothing is ever invented in its place.

`execute_sync(Request(...))` is the same node for recall's own in-process client (the CLI's fan-out): a
plain request it built itself, engines in daemon threads joined against the same deadline, and a plain
`Response` whose `to_wire()` is exactly the JSON of `FederationResponse`. It imports neither pydantic nor
anyio (with the architecture engine, a third of a CLI answer's cold start); a dict is validated first.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_agent import repo
from recall_agent.errors import describe
from recall_agent.protocol import BackendRole, content_hash

if TYPE_CHECKING:
    from recall_agent.models import FederationRequest, FederationResponse, FederationResult

ENV_REPOS = "RECALL_REPOS"  # os.pathsep-separated repositories the server answers for
ENV_DEADLINE = "RECALL_FEDERATION_DEADLINE"  # seconds; the client's own budget is 10 s
DEFAULT_DEADLINE = 8.0
DEFAULT_LIMIT = 5
NO_REPOSITORY = "no repository to answer from (this server has none configured: start it with --repo PATH)"  # results per engine; antipattern detections are never cut by it (engine.MAX_DETECTIONS)
ROLE_ORDER = (BackendRole.MEMGRAPH, BackendRole.REPOWISE, BackendRole.QDRANT)

# --------------------------------------------------------------------------- routing

_PATHLIKE = r"(?<![\w.-])[\w.-]+/[\w./-]+|(?<![\w-])[\w-]+\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|kt|c|cc|cpp|h|hpp|cs|rb|php)\b"
ROUTES: dict[BackendRole, re.Pattern[str]] = {
    BackendRole.MEMGRAPH: re.compile(
        r"\bdepend\w*|\bimport(?:s|ed|ing|ers?)?\b|\bblast[ -]?radius\b|\bcircular\b|\bcycles?\b"
        r"|\btransitive\w*|\bcallers?\b|\bcall(?:ed|s)? by\b|\bwho (?:calls|uses|imports)\b|\bused by\b"
        r"|\busages?\b|\bimpact\w*|\bwhat breaks\b|\bbreaks? if\b|\breverse dep\w*|\bcall graph\b"
        r"|\baffect(?:s|ed|ing)?\b|\bchanges? (?:together )?with\b|\bco-?chang\w*|\btests? to run\b",
        re.IGNORECASE,
    ),
    BackendRole.REPOWISE: re.compile(
        r"\bwhere (?:is|are)\b|\bdefin(?:ed|es|ition)\b|\bclass(?:es)?\b|\bmethods?\b|\bfunctions?\b"
        r"|\bsymbols?\b|\bfiles?\b|\bmodules?\b|\bwhat (?:is|does)\b|\bimplement\w*"
        r"|\bhot ?spots?\b|\bwho (?:knows|owns|wrote|maintains)\b|\bowners?(?:hip)?\b|\bbus factor\b|\brisky\b|"
        + _PATHLIKE,
        re.IGNORECASE,
    ),
    BackendRole.QDRANT: re.compile(
        r"\b(?:anti[- ]?)?patterns?\b|\bsmells?\b|\bsmelly\b|\bduplicat\w*|\bcode quality\b|\bquality\b"
        r"|\bbad practices?\b|\bbest practices?\b|\bcode review\b|\bhardcod\w*|\bsmell\w*",
        re.IGNORECASE,
    ),
}


def route(query: str) -> list[BackendRole]:
    """Roles whose keywords occur in the query, in canonical order; all three when none occur."""
    roles = [role for role in ROLE_ORDER if ROUTES[role].search(query)]
    return roles or list(ROLE_ORDER)


# --------------------------------------------------------------------------- engines (the seam)

# An engine call: (query text, repo path or None, roles it may answer, limit) -> results
# (FederationResult models or dicts of the same fields)
EngineCall = Callable[[str, str | None, set[str], int], list[Any]]


@dataclass(frozen=True)
class Engine:
    name: str  # named in error_message, e.g. "architecture"
    roles: frozenset[BackendRole]
    call: EngineCall
    needs_repo: bool = True


def _architecture(text: str, repo_path: str | None, roles: set[str], limit: int) -> list[dict]:
    if repo_path is None:
        raise RuntimeError(
            "no project here: run inside a git repository or a folder with a project manifest,"
            " or index one first with `recall index PATH`"
        )
    # the wire fields as a plain dict: no pydantic on the in-process path
    return _engine_function("recall_agent.architecture", "query_wire")(
        text, repo_path, roles=roles, limit=limit
    )


def _antipatterns(text: str, repo_path: str | None, roles: set[str], limit: int) -> list[FederationResult]:
    return _engine_function("recall_agent.antipatterns")(text, repo_path, limit=limit)


def _engine_function(module_name: str, name: str = "query") -> Callable[..., list[Any]]:
    """`module.<name>`, or ImportError (= engine unavailable) when the module or function is missing."""
    func = getattr(importlib.import_module(module_name), name, None)
    if not callable(func):
        raise ImportError(f"{module_name} has no {name}()")
    return func


DEFAULT_ENGINES: tuple[Engine, ...] = (
    Engine("architecture", frozenset({BackendRole.MEMGRAPH, BackendRole.REPOWISE}), _architecture),
    Engine("antipatterns", frozenset({BackendRole.QDRANT}), _antipatterns, needs_repo=False),
)
ENGINES: list[Engine] = list(DEFAULT_ENGINES)


@contextlib.contextmanager
def use_engines(*engines: Engine) -> Iterator[None]:
    """Answer with these engines instead of the real ones while the block runs (tests, embedders)."""
    saved = list(ENGINES)
    ENGINES[:] = engines
    try:
        yield
    finally:
        ENGINES[:] = saved


# --------------------------------------------------------------------------- repositories

_configured_repos: list[str] = []


def configure_repos(paths: list[str]) -> None:
    """The repositories this process answers for (the server's --repo); replaces RECALL_REPOS."""
    _configured_repos[:] = [str(Path(p).expanduser().resolve()) for p in paths]


def configured_repos() -> list[str]:
    if _configured_repos:
        return list(_configured_repos)
    env = os.environ.get(ENV_REPOS, "")
    return [str(Path(p).expanduser().resolve()) for p in env.split(os.pathsep) if p.strip()]


def resolve_repos(request_repo: str | None) -> list[str | None]:
    """request field → the configured repositories → cwd's project (git top-level, else the folder recall
    indexed or the nearest with a project manifest) → [None] (no repository)."""
    if request_repo:  # the caller's own folder (in-process); `recall serve` checks it first (server/scope.py)
        return [os.path.realpath(request_repo)]  # no `~` expansion; a symlink loop stays unresolved
    repos = configured_repos()
    if repos:
        return list(repos)
    root = repo.project_root(repo.current_dir())  # git top-level, else an indexed or manifest folder
    return [str(root) if root else None]


# --------------------------------------------------------------------------- plain request and response


@dataclass
class Request:
    """The request as recall's own client builds it (field for field the wire `FederationRequest`); its
    argument parser has already cut and cleaned the query, so nothing here is untrusted."""

    query: str
    force_backends: list[BackendRole] | None = None
    correlation_id: str | None = None
    repo_path: str | None = None

    def __post_init__(self) -> None:
        if self.force_backends is not None:
            self.force_backends = [BackendRole(b) for b in self.force_backends]


@dataclass
class Result:
    """One merged result (wire `FederationResult`); `extras` are the contract's extra fields, in order."""

    content: str
    source: BackendRole
    rank: int
    content_hash: str
    engine: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "source": str(self.source),
            "rank": self.rank,
            "content_hash": self.content_hash,
            "engine": self.engine,
            **self.extras,
        }


@dataclass
class Response:
    """The node's answer (wire `FederationResponse`); `to_wire()` is its JSON body."""

    query: str
    results: list[Result] = field(default_factory=list)
    backends_queried: list[str] = field(default_factory=list)
    error_message: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "results": [r.to_wire() for r in self.results],
            "backends_queried": list(self.backends_queried),
            "error_message": self.error_message,
        }


_RESULT_FIELDS = ("content", "source", "rank", "content_hash", "engine")


def _result(raw: Any, engine: Engine) -> Result:
    """An engine's result (a FederationResult or a dict of its fields) as a plain Result; content_hash is
    always recomputed so it matches the content. Raises for a result the wire model would refuse."""
    data = raw.model_dump() if hasattr(raw, "model_dump") else dict(raw)
    content, rank = data.get("content"), data.get("rank", 0)
    if not isinstance(content, str) or not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
        raise ValueError(f"bad result from the {engine.name} engine: content {content!r:.40}, rank {rank!r}")
    engine_name = data.get("engine")
    return Result(
        content=content,
        source=BackendRole(data.get("source")),
        rank=rank,
        content_hash=content_hash(content),
        engine=engine.name if engine_name is None and "engine" not in data else engine_name,
        extras={k: v for k, v in data.items() if k not in _RESULT_FIELDS},
    )


# --------------------------------------------------------------------------- execute


@dataclass
class _Outcome:
    engine: Engine
    repo: str | None
    results: list[Result] = field(default_factory=list)
    error: str | None = None
    started: bool = False
    done: bool = False


def _deadline() -> float:
    try:
        return max(0.1, float(os.environ.get(ENV_DEADLINE, DEFAULT_DEADLINE)))
    except ValueError:
        return DEFAULT_DEADLINE


def _plan(req: Request | FederationRequest, roles: list[BackendRole], repos: list[str]) -> list[_Outcome]:
    return [
        _Outcome(engine, repo_path)
        for engine in list(ENGINES)
        if engine.roles & set(roles)
        for repo_path in (repos if engine.needs_repo else repos[:1])
    ]


async def execute(
    request: FederationRequest | dict[str, Any],
    *,
    deadline: float | None = None,
    limit: int = DEFAULT_LIMIT,
    repos: list[str] | None = None,
) -> FederationResponse:
    """Answer one federation request (raises pydantic.ValidationError for a bad dict).

    `repos` (the server passes it after its access checks) replaces the request's repository resolution;
    an empty list means "no repository": nothing is read and `error_message` says so.
    """
    import anyio

    from recall_agent.models import FederationRequest, FederationResponse

    req = request if isinstance(request, FederationRequest) else FederationRequest.model_validate(request)
    roles = _requested_roles(req)
    if repos is not None and not repos:  # the caller (a server) has no repository: read no folder at all
        return FederationResponse(query=req.query, error_message=NO_REPOSITORY)
    outcomes = _plan(req, roles, list(repos) if repos is not None else resolve_repos(req.repo_path))
    budget = _deadline() if deadline is None else deadline
    with anyio.move_on_after(budget):
        async with anyio.create_task_group() as tg:
            for outcome in outcomes:
                tg.start_soon(_run, outcome, req.query, roles, limit)
    return FederationResponse.model_validate(_merge(req.query, roles, outcomes, budget).to_wire())


def request_of(request: Request | FederationRequest | dict[str, Any]) -> Request:
    """The plain request; a dict is validated with the wire model first (ValidationError names the field)."""
    if isinstance(request, Request):
        return request
    from recall_agent.models import FederationRequest

    if not isinstance(request, FederationRequest):
        request = FederationRequest.model_validate(request)
    data = request.model_dump()
    data["correlation_id"] = str(data["correlation_id"]) if data["correlation_id"] else None
    return Request(**data)


def execute_sync(
    request: Request | FederationRequest | dict[str, Any],
    *,
    deadline: float | None = None,
    limit: int = DEFAULT_LIMIT,
    repos: list[str] | None = None,
) -> Response:
    """`execute` without pydantic or an event loop (recall's in-process client): the engines run in
    daemon threads joined against the deadline; one still running then is reported as timed out and
    left behind (it cannot keep the process alive)."""
    req = request_of(request)
    roles = _requested_roles(req)
    if repos is not None and not repos:
        return Response(query=req.query, error_message=NO_REPOSITORY)
    outcomes = _plan(req, roles, list(repos) if repos is not None else resolve_repos(req.repo_path))
    budget = _deadline() if deadline is None else deadline
    threads = [
        threading.Thread(target=_run_sync, args=(o, req.query, roles, limit), daemon=True) for o in outcomes
    ]
    for thread in threads:
        thread.start()
    until = time.monotonic() + budget
    for thread in threads:
        thread.join(max(0.0, until - time.monotonic()))
    # an engine still running is cut: merge a frozen view of it, not what its thread may write later
    outcomes = [
        _Outcome(o.engine, o.repo, started=True) if t.is_alive() else o
        for o, t in zip(outcomes, threads, strict=True)
    ]
    return _merge(req.query, roles, outcomes, budget)


def _requested_roles(req: Request | FederationRequest) -> list[BackendRole]:
    if req.force_backends:
        return [role for role in ROLE_ORDER if role in set(req.force_backends)]
    return route(req.query)


def _wanted(outcome: _Outcome, roles: list[BackendRole]) -> set[str]:
    return {str(r) for r in roles if r in outcome.engine.roles}


@contextlib.contextmanager
def _reported(outcome: _Outcome) -> Iterator[None]:
    """Run an engine: an engine that cannot be imported never ran, one that raises failed; both are
    reported, never raised to the caller. A cancellation (the deadline) leaves the outcome not done."""
    outcome.started = True
    t0 = time.perf_counter()
    try:
        yield
    except ImportError as exc:
        outcome.started = False  # never ran: its roles must not be claimed as queried
        outcome.error = f"{outcome.engine.name} engine unavailable ({exc})"
    except Exception as exc:  # an engine failure is reported, never raised to the caller
        outcome.error = f"{outcome.engine.name} engine failed after {time.perf_counter() - t0:.1f}s: " + (
            describe(exc)
        )
    outcome.done = True


def _keep(outcome: _Outcome, results: list[Any] | None, wanted: set[str]) -> None:
    plain = [_result(r, outcome.engine) for r in results or []]
    outcome.results = [r for r in plain if r.source in wanted]


async def _run(outcome: _Outcome, query: str, roles: list[BackendRole], limit: int) -> None:
    import anyio.to_thread

    from recall_agent.models import FederationResult

    wanted = _wanted(outcome, roles)
    with _reported(outcome):
        results = await anyio.to_thread.run_sync(
            outcome.engine.call, query, outcome.repo, wanted, limit, abandon_on_cancel=True
        )
        _keep(outcome, results, wanted)
        for result in outcome.results:  # what the wire model refuses is this engine's failure
            FederationResult.model_validate(result.to_wire())


def _run_sync(outcome: _Outcome, query: str, roles: list[BackendRole], limit: int) -> None:
    wanted = _wanted(outcome, roles)
    with _reported(outcome):
        _keep(outcome, outcome.engine.call(query, outcome.repo, wanted, limit), wanted)


def _merge(query: str, roles: list[BackendRole], outcomes: list[_Outcome], budget: float) -> Response:
    role_index = {role: i for i, role in enumerate(ROLE_ORDER)}
    pooled: list[tuple[int, int, int, Result]] = []
    errors: list[str] = []
    queried: set[BackendRole] = set()
    for n, outcome in enumerate(outcomes):
        if outcome.started:
            queried |= outcome.engine.roles & set(roles)
        if outcome.error:
            errors.append(outcome.error + _repo_note(outcome, outcomes))
        elif not outcome.done:
            errors.append(
                f"{outcome.engine.name} engine timed out after {budget:g}s" + _repo_note(outcome, outcomes)
            )
        else:
            pooled += [(r.rank, role_index[r.source], n, r) for r in outcome.results]
    pooled.sort(key=lambda item: item[:3])
    seen: set[str] = set()
    merged: list[Result] = []
    for *_, result in pooled:
        if result.content_hash in seen:
            continue
        seen.add(result.content_hash)
        merged.append(replace(result, rank=len(merged)))
    return Response(
        query=query,
        results=merged,
        backends_queried=[str(role) for role in ROLE_ORDER if role in queried],
        error_message="; ".join(errors) or None,
    )


def _repo_note(outcome: _Outcome, outcomes: list[_Outcome]) -> str:
    repos = {o.repo for o in outcomes if o.engine is outcome.engine}
    return f" [repo {outcome.repo}]" if len(repos) > 1 and outcome.repo else ""
