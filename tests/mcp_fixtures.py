"""Helpers for the MCP tests: the official SDK's own clients, over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

T = TypeVar("T")


@asynccontextmanager
async def stdio_session(
    cwd: Path, *extra: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """`python -m recall_agent mcp` started in `cwd`, as an MCP client (Claude Code, Cursor…) starts it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recall_agent", "mcp", *extra],
        cwd=str(cwd),
        env={**os.environ, **(env or {})},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def run(session_factory: Callable[[], Any], body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Open a session, run `body` in it, close it: one synchronous call for a test."""

    async def main() -> T:
        async with session_factory() as session:
            return await body(session)

    return anyio.run(main)


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")
