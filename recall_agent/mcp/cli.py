"""`recall mcp [--cwd DIR]`: recall's tools over MCP's stdio transport, for any MCP client.

The client starts it in (or passes `--cwd`) the repository the agent works in; from there it answers as
the CLI does: in-process nodes by default, HTTP backends when AGENT_LEARNING_RETRIEVAL_URL /
KNOWLEDGE_FEDERATION_URL are set, learnings stored in $RECALL_HOME. stdout carries only the protocol
(the SDK points file descriptor 1 at stderr while it serves); diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="recall mcp",
        description=(
            "Serve recall's tools (recall, recall_learn, recall_forget, recall_index) to an MCP client over "
            "stdio. Register it once, e.g. `claude mcp add recall -- recall mcp` (README: Cursor, Codex)."
        ),
        epilog="For a team server, `recall serve` offers the same tools at /mcp (streamable HTTP).",
    )
    p.add_argument(
        "--cwd",
        type=Path,
        metavar="DIR",
        help="the repository to answer for (default: the folder the client starts recall in)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cwd is not None:
        folder = args.cwd.expanduser()
        if not folder.is_dir():
            print(f"recall mcp: --cwd {folder}: not a directory", file=sys.stderr)
            return 2
        os.chdir(folder)
    # recall installs no pydantic plugins (see recall_agent.client.main.ask)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from recall_agent import repo

    try:
        from recall_agent.mcp.local import LocalBackend
        from recall_agent.mcp.tools import build_server
    except ImportError as exc:  # an environment installed before recall depended on the SDK
        print(f"recall mcp: the MCP SDK is not installed ({exc}); pip install 'mcp>=2.3,<3'", file=sys.stderr)
        return 1

    server = build_server(LocalBackend(repo.current_dir()))
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0
