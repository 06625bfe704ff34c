"""What a plain query imports (behaviour, not timing): the cold path stays free of server, parser, vector
store and ML code, and the HTTP path does not even load pydantic."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

pytest_plugins = ["client_fixtures"]

HEAVY = ("fastapi", "uvicorn", "tree_sitter", "qdrant_client", "numpy", "wordllama", "torch", "psycopg")
# the MCP server (issue 11) is its own subcommand: a plain query loads nothing of the SDK
MCP = ("mcp", "mcp_types", "recall.mcp", "starlette", "sse_starlette", "httpx2")


def imported_modules(recall_cmd, env, cwd: Path, *argv: str) -> set[str]:
    python, *rest = recall_cmd
    proc = subprocess.run(
        [python, "-X", "importtime", *rest, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {m.group(1) for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", proc.stderr, re.M)}


def loaded(modules: set[str], top: str) -> bool:
    return any(m == top or m.startswith(top + ".") for m in modules)


def test_in_process_learnings_query_stays_light(recall_cmd, client_env, tmp_path: Path) -> None:
    modules = imported_modules(recall_cmd, client_env, tmp_path, "--scope", "learnings", "KeyError: 'id'")
    assert loaded(modules, "recall.learnings")  # the node really ran in-process
    for name in (
        *HEAVY,
        *MCP,
        "httpx",
        "anyio",
        "recall.server",
        "recall.architecture",
        "recall.antipatterns",
    ):
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
        "recall.models",
        "recall.learnings",
        "recall.federation",
        "click",
        "rich",
    ):
        assert not loaded(modules, name), name


def test_help_loads_neither_backend_nor_jinja(recall_cmd, client_env, tmp_path: Path) -> None:
    modules = imported_modules(recall_cmd, client_env, tmp_path, "--help")
    for name in ("jinja2", "asyncio", "pydantic", "httpx", "recall.learnings", "recall.federation"):
        assert not loaded(modules, name), name
