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
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from recall_agent import repo
from recall_agent.errors import describe
from recall_agent.models import (
    BackendRole,
    FederationRequest,
    FederationResponse,
    FederationResult,
    content_hash,
)

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
EngineCall = Callable[[str, str | None, set[str], int], list[FederationResult]]


@dataclass(frozen=True)
class Engine:
    name: str  # named in error_message, e.g. "architecture"
    roles: frozenset[BackendRole]
    call: EngineCall
    needs_repo: bool = True


def _architecture(text: str, repo_path: str | None, roles: set[str], limit: int) -> list[FederationResult]:
    if repo_path is None:
        raise RuntimeError(
            "no project here: run inside a git repository or a folder with a project manifest,"
            " or index one first with `recall index PATH`"
        )
    return _engine_function("recall_agent.architecture")(text, repo_path, roles=roles, limit=limit)


def _antipatterns(text: str, repo_path: str | None, roles: set[str], limit: int) -> list[FederationResult]:
    return _engine_function("recall_agent.antipatterns")(text, repo_path, limit=limit)


def _engine_function(module_name: str) -> Callable[..., list[FederationResult]]:
    """`module.query`, or ImportError (= engine unavailable) when the module or function is missing."""
    func = getattr(importlib.import_module(module_name), "query", None)
    if not callable(func):
        raise ImportError(f"{module_name} has no query()")
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


# --------------------------------------------------------------------------- execute


@dataclass
class _Outcome:
    engine: Engine
    repo: str | None
    results: list[FederationResult] = field(default_factory=list)
    error: str | None = None
    started: bool = False
    done: bool = False


def _deadline() -> float:
    try:
        return max(0.1, float(os.environ.get(ENV_DEADLINE, DEFAULT_DEADLINE)))
    except ValueError:
        return DEFAULT_DEADLINE


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
    req = request if isinstance(request, FederationRequest) else FederationRequest.model_validate(request)
    roles = _requested_roles(req)
    if repos is not None and not repos:  # the caller (a server) has no repository: read no folder at all
        return FederationResponse(query=req.query, error_message=NO_REPOSITORY)
    repos = list(repos) if repos is not None else resolve_repos(req.repo_path)
    outcomes = [
        _Outcome(engine, repo_path)
        for engine in list(ENGINES)
        if engine.roles & set(roles)
        for repo_path in (repos if engine.needs_repo else repos[:1])
    ]
    budget = _deadline() if deadline is None else deadline
    with anyio.move_on_after(budget):
        async with anyio.create_task_group() as tg:
            for outcome in outcomes:
                tg.start_soon(_run, outcome, req.query, roles, limit)
    return _merge(req.query, roles, outcomes, budget)


def _requested_roles(req: FederationRequest) -> list[BackendRole]:
    if req.force_backends:
        return [role for role in ROLE_ORDER if role in set(req.force_backends)]
    return route(req.query)


async def _run(outcome: _Outcome, query: str, roles: list[BackendRole], limit: int) -> None:
    wanted = {str(r) for r in roles if r in outcome.engine.roles}
    outcome.started = True
    t0 = time.perf_counter()
    try:
        results = await anyio.to_thread.run_sync(
            outcome.engine.call, query, outcome.repo, wanted, limit, abandon_on_cancel=True
        )
        outcome.results = [_coerce(r, outcome.engine) for r in results or []]
        outcome.results = [r for r in outcome.results if r.source in wanted]
    except ImportError as exc:
        outcome.started = False  # never ran: its roles must not be claimed as queried
        outcome.error = f"{outcome.engine.name} engine unavailable ({exc})"
    except Exception as exc:  # an engine failure is reported, never raised to the caller
        outcome.error = f"{outcome.engine.name} engine failed after {time.perf_counter() - t0:.1f}s: " + (
            describe(exc)
        )
    outcome.done = True


def _coerce(result: Any, engine: Engine) -> FederationResult:
    """Accept FederationResult or dict; content_hash is always recomputed so it matches the content."""
    data = result.model_dump() if isinstance(result, FederationResult) else dict(result)
    data["content_hash"] = content_hash(str(data.get("content", "")))
    data.setdefault("rank", 0)
    data.setdefault("engine", engine.name)
    return FederationResult.model_validate(data)


def _merge(
    query: str, roles: list[BackendRole], outcomes: list[_Outcome], budget: float
) -> FederationResponse:
    role_index = {role: i for i, role in enumerate(ROLE_ORDER)}
    pooled: list[tuple[int, int, int, FederationResult]] = []
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
    merged: list[FederationResult] = []
    for *_, result in pooled:
        if result.content_hash in seen:
            continue
        seen.add(result.content_hash)
        merged.append(result.model_copy(update={"rank": len(merged)}))
    return FederationResponse(
        query=query,
        results=merged,
        backends_queried=[str(role) for role in ROLE_ORDER if role in queried],
        error_message="; ".join(errors) or None,
    )


def _repo_note(outcome: _Outcome, outcomes: list[_Outcome]) -> str:
    repos = {o.repo for o in outcomes if o.engine is outcome.engine}
    return f" [repo {outcome.repo}]" if len(repos) > 1 and outcome.repo else ""
