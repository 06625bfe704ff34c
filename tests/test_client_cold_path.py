"""What a plain query imports (behaviour, not timing): the cold path stays free of server, parser, vector
store and ML code, and the HTTP path does not even load pydantic."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

pytest_plugins = ["client_fixtures"]

HEAVY = ("fastapi", "uvicorn", "tree_sitter", "qdrant_client", "numpy", "wordllama", "torch", "psycopg")
# the MCP server (issue 11) is its own subcommand: a plain query loads nothing of the SDK
MCP = ("mcp", "mcp_types", "recall_agent.mcp", "starlette", "sse_starlette", "httpx2")


def importtime_run(
    recall_cmd, env, cwd: Path, *argv: str, stdin: str | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """A real `recall` process under `python -X importtime`: its result and the modules it imported."""
    python, *rest = recall_cmd
    proc = subprocess.run(
        [python, "-X", "importtime", *rest, *argv],
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    pattern = r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$"
    return proc, {m.group(1) for m in re.finditer(pattern, proc.stderr, re.M)}


def imported_modules(recall_cmd, env, cwd: Path, *argv: str) -> set[str]:
    return importtime_run(recall_cmd, env, cwd, *argv)[1]


def loaded(modules: set[str], top: str) -> bool:
    return any(m == top or m.startswith(top + ".") for m in modules)


def test_in_process_learnings_query_stays_light(recall_cmd, client_env, tmp_path: Path) -> None:
    modules = imported_modules(recall_cmd, client_env, tmp_path, "--scope", "learnings", "KeyError: 'id'")
    assert loaded(modules, "recall_agent.learnings")  # the node really ran in-process
    for name in (
        *HEAVY,
        *MCP,
        "httpx",
        "anyio",
        "recall_agent.server",
        "recall_agent.architecture",
        "recall_agent.antipatterns",
    ):
        assert not loaded(modules, name), name


def test_in_process_architecture_answer_loads_no_wire_models_nor_event_loop(
    recall_cmd, client_env, tmp_path: Path
) -> None:
    """An architecture answer in-process runs the federation node's plain path: the engine and SQLite,
    but no pydantic, no anyio/asyncio (a third of the CLI's cold start on the kernel: issue 39)."""
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / "prices.py").write_text("def total(items):\n    return sum(items)\n")
    (project / "cart.py").write_text("from prices import total\n\n\ndef checkout(c):\n    return total(c)\n")
    proc, modules = importtime_run(
        recall_cmd, client_env, project, "--scope", "architecture", "who calls total"
    )
    assert "cart.py" in proc.stdout  # it really answered
    assert loaded(modules, "recall_agent.architecture.engine")
    for name in ("pydantic", "pydantic_core", "recall_agent.models", "anyio", "asyncio", *MCP):
        assert not loaded(modules, name), name


def test_http_query_loads_no_pydantic_and_no_cli_extras(
    http_backend, recall_cmd, client_env, tmp_path: Path
) -> None:
    env = dict(
        client_env,
        AGENT_LEARNING_RETRIEVAL_URL=http_backend.url("ok", "learnings"),
        KNOWLEDGE_FEDERATION_URL=http_backend.url("ok", "federation"),
    )
    modules = imported_modules(recall_cmd, env, tmp_path, "ImportError: cannot import name 'Foo'")
    assert loaded(modules, "httpx") and loaded(modules, "anyio")
    for name in (
        *HEAVY,
        *MCP,
        "pydantic",
        "recall_agent.models",
        "recall_agent.learnings",
        "recall_agent.federation",
        "click",
        "rich",
    ):
        assert not loaded(modules, name), name


def test_help_loads_neither_backend_nor_jinja(recall_cmd, client_env, tmp_path: Path) -> None:
    modules = imported_modules(recall_cmd, client_env, tmp_path, "--help")
    for name in (
        "jinja2",
        "asyncio",
        "pydantic",
        "httpx",
        "recall_agent.learnings",
        "recall_agent.federation",
    ):
        assert not loaded(modules, name), name


def _learn(recall_cmd, env, cwd: Path, error: str, resolution: str) -> None:
    proc = subprocess.run(
        [*recall_cmd, "learn", "--error", error, "--resolution", resolution],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_in_process_match_loads_no_pydantic(recall_cmd, client_env, tmp_path: Path) -> None:
    """With a learning stored the node opens the store and ranks, and still no wire model is imported:
    the in-process path runs on plain dataclasses (recall_agent/learnings/wire.py)."""
    error = "ModuleNotFoundError: No module named 'requests_oauth'"
    _learn(recall_cmd, client_env, tmp_path, error, "install requests-oauthlib and fix the import")
    proc, modules = importtime_run(recall_cmd, client_env, tmp_path, "--scope", "learnings", error)
    assert "install requests-oauthlib and fix the import" in proc.stdout
    assert loaded(modules, "recall_agent.learnings.retrieval")  # it really ranked
    for name in ("pydantic", "pydantic_core", "recall_agent.models", *HEAVY):
        assert not loaded(modules, name), name


def test_on_error_hook_injects_without_pydantic(recall_cmd, client_env, tmp_path: Path) -> None:
    error = "ModuleNotFoundError: No module named 'requests_oauth'"
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    _learn(recall_cmd, client_env, project, error, "install requests-oauthlib and fix the import")
    payload = {
        "session_id": "cold-1",
        "transcript_path": str(tmp_path / "cold-1.jsonl"),
        "cwd": str(project),
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest"},
        "tool_use_id": "toolu_1",
        "error": f"Exit code 2\n{error}",
    }
    env = dict(client_env, RECALL_HOOK_DEADLINE="20")
    proc, modules = importtime_run(
        recall_cmd, env, tmp_path, "hook", "PostToolUseFailure", stdin=json.dumps(payload)
    )
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "install requests-oauthlib" in context
    assert loaded(modules, "recall_agent.learnings.retrieval")
    for name in ("pydantic", "pydantic_core", "recall_agent.models", *HEAVY):
        assert not loaded(modules, name), name
