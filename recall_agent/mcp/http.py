"""`/mcp` on `recall serve`: the tools over MCP's streamable HTTP transport.

Stateless, JSON responses: every POST is one self-contained exchange, so any `--workers` process can
answer it and nothing is kept between calls. Authentication is the server's own (`recall_agent.server.http.Guard`
asks every /mcp request for a valid bearer token when tokens are configured); each tool then checks its
scope and the token's repositories (`recall_agent.mcp.team`). Bound to a loopback address, the SDK's DNS
rebinding protection accepts only loopback Host/Origin headers.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall_agent.mcp.team import TeamBackend
from recall_agent.mcp.tools import build_server
from recall_agent.server.http import MCP_PATH

if TYPE_CHECKING:
    from recall_agent.server.answers import Settings


@dataclass
class McpMount:
    app: Any  # ASGI app answering MCP_PATH
    running: AbstractAsyncContextManager[None]  # enter in the server's lifespan


def mount(settings: Settings) -> McpMount:
    server = build_server(TeamBackend(settings))
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        stateless_http=True,
        max_request_body_size=settings.max_body,
        host=settings.host,
    )
    return McpMount(app, server.session_manager.run())
