"""The MCP tools, defined once for both servers: names, arguments, descriptions, results (a contract).

- `recall` — the /recall answer: the seed's Markdown as text content, the `--format json` document as
  structured content.
- `recall_learn` — store how an error was fixed (the `recall learn` path, redaction included).
- `recall_forget`, `recall_index`, `recall_context` (known pitfalls + a task's code area) — only in the local server (`recall mcp`): they act on this machine's
  store and this repository's index, which a team server's clients do not own.

A `Backend` answers the tools: `recall_agent.mcp.local` in-process from the working folder (as the CLI),
`recall_agent.mcp.team` from the stores of `recall serve`. Arguments are validated by the SDK against the
signatures below (strict types, the CLI's ranges and choices); a bad one is an MCP tool error that names
it, and the server keeps serving. A refused call raises `ToolError` with one readable line.
"""

import json
from typing import Annotated, Any, Literal, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from recall_agent import __version__
from recall_agent.client import main as client_main
from recall_agent.client import query as client_query
from recall_agent.client.main import Asked

__all__ = ["Backend", "LearnRequest", "RecallAnswer", "ToolError", "build_server"]

# the CLI's choices, one source of truth (Literal of a tuple = Literal of its items)
Scope = Literal[client_query.SCOPES]  # type: ignore[valid-type]
TaskType = Literal[client_query.TASK_TYPES]  # type: ignore[valid-type]

INSTRUCTIONS = """\
recall is this team's memory of coding-agent sessions plus code sense for the repository.
Call `recall` with the exact error text whenever a command, test or build fails (before trying a fix):
it returns prior fixes of the same error (learnings), what the code involved is and what depends on it
(architecture), and known bad patterns (antipatterns), with sources. Ask it about unfamiliar symbols or
files too ("who calls build_request", "blast radius of pkg.module"). After you fixed an error, call
`recall_learn` with the error and what fixed it, so the next agent finds it.
"""

LOW, HIGH = client_query.MAX_RESULTS_RANGE

QueryArg = Annotated[
    str,
    Field(
        description=(
            "What to look up, verbatim: an error message or traceback (paste it whole, do not paraphrase), "
            "a symbol, a file path, or a question about the code such as 'who calls build_request', "
            "'blast radius of httpx._models', 'what changes with src/models.py' or 'what's risky in my "
            "change'. Leave empty to use the last error of this session (else an "
            "overview of what is known for the repository)."
        ),
        strict=True,
    ),
]
ScopeArg = Annotated[
    Scope,
    Field(
        description=(
            "Which knowledge to ask: 'learnings' (prior fixes of this error, by any agent), 'architecture' "
            "(what a symbol/file is, callers, dependents, blast radius, what changes with it, hotspots, "
            "owners, change risk, tests to run), 'antipatterns' (known bad "
            "patterns matching the text or present in the current diff), or 'all' (default)."
        )
    ),
]
RepoArg = Annotated[
    str | None,
    Field(
        description=(
            "Repository to filter learnings by (default: the current repository's identity, its origin URL "
            "such as github.com/o/r, else its first commit; on a team server, one of its repositories)."
        ),
        min_length=1,
        max_length=client_query.REPO_MAX,
        strict=True,
    ),
]
TaskTypeArg = Annotated[
    TaskType | None,
    Field(
        description=(
            "Kind of work, to find learnings from similar tasks in this repository (useful with an empty "
            "query): ci_fix, migration, feature, refactor, bug_fix, test, docs, dependency, unknown."
        )
    ),
]
MaxResultsArg = Annotated[
    int,
    Field(description=f"Results per section, {LOW}-{HIGH} (default 5).", ge=LOW, le=HIGH, strict=True),
]


class BackendDocument(BaseModel):
    """One backend of the answer: what was sent, what came back, or why nothing did."""

    queried: bool
    transport: str | None = None
    payload: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    failure: dict[str, Any] | None = None


class RecallDocument(BaseModel):
    """The `recall --format json` document: scope, context, and each backend's payload/response/failure."""

    scope: Scope
    context: dict[str, Any] | None = None
    learnings: BackendDocument
    federation: BackendDocument


class LearnResult(BaseModel):
    id: str = Field(description="The learning's id (UUID); pass it to recall_forget to delete it.")
    merged: bool = Field(
        description="True when an identical learning existed and this one was merged into it."
    )


class RecallAnswer(BaseModel):
    markdown: str
    document: dict[str, Any]

    @classmethod
    def of(cls, asked: Asked) -> "RecallAnswer":
        """The client's two renderings of one answer (CPU work: call it off the event loop)."""
        document = json.loads(client_main.render(asked, "json"))
        return cls(markdown=client_main.render(asked, "markdown"), document=document)


class LearnRequest(BaseModel):
    error: str
    resolution: str
    files: list[str] = Field(default_factory=list)
    repo: str | None = None
    task_type: str | None = None
    ticket: str | None = None


class Backend(Protocol):
    local: bool  # offer recall_forget and recall_index

    async def recall(self, args: client_query.Args, ctx: Context) -> RecallAnswer: ...

    async def learn(self, request: LearnRequest, ctx: Context) -> LearnResult: ...

    async def forget(self, learning_id: str) -> str: ...

    async def index(self) -> tuple[str, dict[str, Any]]: ...


def _text_result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def build_server(backend: Backend) -> MCPServer:
    server = MCPServer("recall", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    async def recall(
        ctx: Context,
        query: QueryArg = "",
        scope: ScopeArg = "all",
        repo: RepoArg = None,
        task_type: TaskTypeArg = None,
        max_results: MaxResultsArg = client_query.MAX_RESULTS_DEFAULT,
    ) -> Annotated[CallToolResult, RecallDocument]:
        args = client_query.Args(
            scope=scope,
            repo=repo,
            task_type=task_type,
            max_results=max_results,
            format="json",
            query=client_query.clean_text(query).strip(),
        )
        answer = await backend.recall(args, ctx)
        return _text_result(answer.markdown, answer.document)

    server.add_tool(
        recall,
        name="recall",
        title="Recall prior fixes, architecture and antipatterns",
        description=(
            "Look up an error, a symbol, a file or a question about this code in recall: prior fixes of "
            "the same error by earlier agent sessions (learnings, with similarity, age and files touched), "
            "architecture context (definitions, callers, dependents, blast radius) and known antipatterns, "
            "with sources. Call it first whenever something fails, with the error text verbatim. Returns "
            "one Markdown answer (text) and the same data as JSON (structured content). A backend that is "
            "down is named in the answer; the others still answer."
        ),
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )

    async def recall_learn(
        ctx: Context,
        error: Annotated[
            str,
            Field(
                description="The error text that was fixed, verbatim (the message line or the whole traceback).",
                min_length=1,
                strict=True,
            ),
        ],
        resolution: Annotated[
            str,
            Field(
                description=(
                    "What fixed it, in one to three sentences another agent can act on: the cause and the "
                    "change (e.g. 'PyYAML was missing from requirements.txt; added it and reinstalled')."
                ),
                min_length=1,
                strict=True,
            ),
        ],
        files: Annotated[
            list[Annotated[str, Field(strict=True)]] | None,
            Field(
                description="Paths of the files the fix touched, relative to the repository root.",
                max_length=200,
            ),
        ] = None,
        repo: Annotated[
            str | None,
            Field(
                description="Repository the fix belongs to (default: the current repository).",
                min_length=1,
                max_length=client_query.REPO_MAX,
                strict=True,
            ),
        ] = None,
        task_type: Annotated[
            TaskType | None,
            Field(description="Kind of work the fix was part of (default: unknown)."),
        ] = None,
        ticket: Annotated[
            str | None,
            Field(
                description="Ticket or issue id, if the work had one (e.g. 'OPS-142').",
                max_length=64,
                strict=True,
            ),
        ] = None,
    ) -> Annotated[CallToolResult, LearnResult]:
        request = LearnRequest(
            error=error,
            resolution=resolution,
            files=files or [],
            repo=repo,
            task_type=task_type,
            ticket=ticket,
        )
        result = await backend.learn(request, ctx)
        verb = "Merged into the existing learning" if result.merged else "Stored learning"
        return _text_result(f"{verb} {result.id}.", result.model_dump())

    server.add_tool(
        recall_learn,
        name="recall_learn",
        title="Teach recall how an error was fixed",
        description=(
            "Record how an error was fixed, so `recall` returns the fix to the next agent that meets the "
            "same error (in this or another repository). Call it once the fix is verified (tests pass, "
            "command succeeds). Secrets in the text are redacted before storing. Returns the learning's id."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    if backend.local:
        _add_local_tools(server, backend)
    server.middleware.append(_UnknownArguments(server))
    return server


class _UnknownArguments:
    """An argument name the tool does not take is a tool error that names it. (The SDK drops unknown
    names silently: `recall` called with `error=...` meant for recall_learn would answer auto mode.)"""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.known: dict[str, list[str]] | None = None

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if (
            ctx.method == "tools/call"
            and isinstance(params, dict)
            and isinstance(params.get("arguments"), dict)
        ):
            if self.known is None:
                tools = await self.server.list_tools()
                self.known = {t.name: list(t.input_schema.get("properties", {})) for t in tools}
            name = params.get("name")
            takes = self.known.get(name) if isinstance(name, str) else None
            unknown = sorted(set(params["arguments"]) - set(takes)) if takes is not None else []
            if unknown:
                message = (
                    f"Error executing tool {name}: unknown argument(s) {', '.join(map(repr, unknown))}; "
                    f"{name} takes: {', '.join(takes) or 'no arguments'}"
                )
                return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
        return await call_next(ctx)


def _add_local_tools(server: MCPServer, backend: Backend) -> None:
    async def recall_forget(
        id: Annotated[  # noqa: A002 - the argument's name is what the model sees
            str,
            Field(
                description="The learning's id (UUID), as returned by recall_learn or shown by recall --format json.",
                strict=True,
            ),
        ],
    ) -> str:
        return await backend.forget(id)

    server.add_tool(
        recall_forget,
        name="recall_forget",
        title="Delete a learning",
        description="Delete one learning from this machine's recall store by id (e.g. a wrong or outdated fix).",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
    )

    async def recall_index() -> CallToolResult:
        text, summary = await backend.index()
        return _text_result(text, summary)

    async def recall_context(
        task: Annotated[
            str,
            Field(
                description=(
                    "The task you are starting, in the user's words (e.g. 'fix the typo in place_order'). "
                    "Leave empty for the repository's known pitfalls only."
                ),
                max_length=20_000,
                strict=True,
            ),
        ] = "",
    ) -> CallToolResult:
        text, data = await backend.context(task)  # type: ignore[attr-defined]
        return _text_result(text, data)

    server.add_tool(
        recall_context,
        name="recall_context",
        title="What to know before starting: known pitfalls and the code a task is about",
        description=(
            "Call once at the start of a session or task (agents without recall's hooks): this "
            "repository's known pitfalls from earlier sessions (commands that need flags, the folder to "
            "run from, the interpreter, installs) and, for a task, the files and symbols it is most likely "
            "about. The same context recall's SessionStart and UserPromptSubmit hooks inject. Empty text "
            "when there is nothing worth saying."
        ),
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )

    server.add_tool(
        recall_index,
        name="recall_index",
        title="Index this repository for architecture questions",
        description=(
            "Build or refresh the architecture index of the current repository (symbols, imports, calls) "
            "and its git history (co-changes, hotspots, owners), and report their status: files, symbols, "
            "languages, commits. Only changed files and new commits are read again. Call it when a `recall` "
            "answer says the architecture index timed out or the history is not read yet, or after large "
            "changes."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
