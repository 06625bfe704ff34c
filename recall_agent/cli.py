"""`recall` entry point: dispatches subcommands to their packages, everything else is a /recall query.

Subcommand modules are imported only when their subcommand runs, so a plain `recall "<error>"` never
pays for the server, the parsers or the embedding model.
"""

from __future__ import annotations

import importlib
import sys

# subcommand -> "module:function"; each function takes argv (after the subcommand) and returns an exit code
SUBCOMMANDS: dict[str, str] = {
    "learn": "recall_agent.learnings.cli:learn_main",
    "export": "recall_agent.learnings.cli:export_main",
    "forget": "recall_agent.learnings.cli:forget_main",
    "review": "recall_agent.learnings.review_cli:review_main",  # list, fix, forget, merge learnings (issue 26)
    "stats": "recall_agent.learnings.review_cli:stats_main",
    "index": "recall_agent.architecture.cli:main",
    "serve": "recall_agent.server.main:main",
    "hook": "recall_agent.hooks.cli:hook_main",
    "install": "recall_agent.hooks.cli:install_main",
    "uninstall": "recall_agent.hooks.cli:uninstall_main",
    "import-sessions": "recall_agent.hooks.import_cli:main",  # learn from existing Claude Code sessions (issue 12)
    "catalog": "recall_agent.antipatterns.cli:main",  # validate/browse the antipattern catalog (issue 5)
    "mcp": "recall_agent.mcp.cli:main",  # the tools over MCP stdio (issue 11)
    "push": "recall_agent.push.cli:main",  # show/switch the context pushed at session and task start (issue 35)
    "doctor": "recall_agent.doctor:main",  # what is installed and working, with fixes (issue 24)
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SUBCOMMANDS:
        module_name, func_name = SUBCOMMANDS[args[0]].split(":")
        func = getattr(importlib.import_module(module_name), func_name)
        return int(func(args[1:]) or 0)
    from recall_agent.client.main import main as client_main

    return client_main(args)


if __name__ == "__main__":
    sys.exit(main())
