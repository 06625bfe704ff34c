"""`recall [options] [query…]` — the /recall client: parse, detect context, fan out, display.

Called by recall_agent/cli.py for every command line that is not a subcommand. Exit codes: 0 whenever recall
ran (even with every backend down: backends are advisory), 2 for a bad command line, 1 for an internal
error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from recall_agent import repo
from recall_agent.client import query
from recall_agent.client.query import UsageError
from recall_agent.errors import describe

if TYPE_CHECKING:
    from recall_agent.client.context import Context
    from recall_agent.client.fanout import BackendOutcome

STDIN_MAX_BYTES = 4 * 1024 * 1024  # more than enough for any error; the query is cut to 4000 chars anyway

HELP = """\
usage: recall [--scope SCOPE] [--repo NAME] [--type TASK_TYPE] [--format markdown|json]
              [--max-results N] [--session ID] [--stdin] [--] [QUERY ...]

Ask prior agent learnings, architecture and antipatterns about an error or a piece of code, and print
one Markdown answer with sources. Backends are advisory: recall exits 0 even when they are down.

  QUERY                 error text, symbol, file or question; words after the options, verbatim.
                        No query: the session's last error (hooks state or Claude Code transcript),
                        else auto mode for the current repo.
  --scope SCOPE         learnings | architecture | antipatterns | all (default: all)
  --repo NAME           filter learnings by repository (default: this checkout's identity, e.g. github.com/o/r)
  --type TASK_TYPE      filter learnings by task type: ci_fix, migration, feature, refactor, bug_fix,
                        test, docs, dependency, unknown
  --format FORMAT       markdown (default) or json (scope, payloads, raw responses, failures)
  --max-results N       results per backend section, 1-20 (default: 5)
  --session ID          Claude Code session id to read the last error from (default: $CLAUDE_SESSION_ID)
  --stdin               read the argument line (options, then query text) from standard input;
                        safe for text with quotes, $ and backticks: recall --stdin <<'EOF' ... EOF
  --                    end of options: everything after is query text (e.g. `recall -- learn more`)
  -h, --help            show this help

Backends: in-process by default; HTTP when AGENT_LEARNING_RETRIEVAL_URL / KNOWLEDGE_FEDERATION_URL are set.
Other commands: recall learn | export | forget | review | stats | index | catalog | serve | mcp | hook |
install | uninstall | import-sessions | push | doctor (each has --help).

examples:
  recall "ImportError: cannot import name 'Foo' from 'bar'"
  recall --scope architecture HandlerContextInjection
  recall --repo omnibase_infra --type migration
  recall --format json --scope learnings "ModuleNotFoundError: No module named 'yaml'"
"""


def _read_stdin() -> str:
    data = sys.stdin.buffer.read(STDIN_MAX_BYTES) if sys.stdin else b""
    return data.decode("utf-8", "replace")


def parse(argv: list[str]) -> query.Args:
    args = query.parse_argv(argv)
    if args.stdin and not args.help:
        if args.query:
            raise UsageError("give the query as words or on stdin (--stdin), not both")
        query.parse_argument_line(_read_stdin(), args)
    return args


def _context_line(args: query.Args, ctx: Context, error_text: str) -> str:
    from recall_agent.client.display import one_line

    if args.query:
        return ""
    if error_text:
        first = next((ln for ln in error_text.splitlines() if ln.strip()), error_text)
        return f"Query: the last error of this session ({ctx.error_source}): {one_line(first, 160)}"
    if args.repo or args.task_type:
        return ""
    return f"Query: none given and no recent error found; auto mode for repo {ctx.repo}."


def _redact_outgoing(payloads: dict, fanout: ModuleType) -> None:
    """Text that leaves the process (HTTP backends) goes through recall_agent.redact first; in-process, the
    query is neither stored nor sent, so it is left as typed."""
    if not any(payload and fanout.backend_url(name) for name, payload in payloads.items()):
        return
    try:
        from recall_agent.redact import redact
    except ImportError:
        return
    for name, payload in payloads.items():
        if payload and fanout.backend_url(name):
            for key in ("error_text", "query"):
                if isinstance(payload.get(key), str):
                    payload[key] = redact(payload[key])


def _write(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8", "replace"))
    sys.stdout.flush()


@dataclass
class Asked:
    """One /recall question and what the backends answered (before display)."""

    args: query.Args
    ctx: Context
    error_text: str
    outcomes: dict[str, BackendOutcome]


def ask(args: query.Args, cwd: Path | None = None, started: float | None = None) -> Asked:
    """Detect the context of `cwd` (default: the working folder), build the payloads and fan out.

    Never raises for a backend's failure; `started` (time.monotonic()) starts the 10 s budget."""
    from recall_agent.client import context, fanout

    started = time.monotonic() if started is None else started
    ctx = context.detect(cwd=cwd, session_id=args.session, want_error=not args.query)
    error_text = args.query or query.clean_text(ctx.last_error or "")
    if args.repo:  # `--repo shop` inside a checkout of github.com/o/shop asks for its identity
        from dataclasses import replace

        args = replace(args, repo=repo.resolve_name(args.repo, ctx.cwd))
    payloads = query.build_payloads(args, ctx.repo, error_text)
    _redact_outgoing(payloads, fanout)
    federation = payloads.get("federation")
    project = repo.project_root(ctx.cwd) if federation is not None else None
    if federation is not None and project and not fanout.backend_url("federation"):
        federation["repo_path"] = str(project)  # in-process only: the wire payload stays the seed's
    # recall installs no pydantic plugins; skipping pydantic's scan of every installed distribution's entry
    # points saves ~30 ms on the in-process path (PYDANTIC_DISABLE_PLUGINS is pydantic's own switch)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    outcomes = fanout.run(payloads, deadline=started + fanout.TOTAL_BUDGET_S)
    _self_check(outcomes, ctx)
    return Asked(args, ctx, error_text, outcomes)


def _self_check(outcomes: dict[str, BackendOutcome], ctx: Context) -> None:
    """Each learning of this repository checks itself against this checkout (selfcheck.py):
    marked "may be stale" or "another case here" (and listed after the others) or "already applied
    here"; a folder fix is checked against the folder this command runs in."""
    outcome = outcomes.get("learnings")
    response = outcome.response if outcome is not None else None
    matches = response.get("matches") if isinstance(response, dict) else None
    if not isinstance(matches, list):
        return
    from recall_agent import selfcheck

    found = [m for m in matches if isinstance(m, dict)]
    response["matches"] = selfcheck.annotate(
        found, ctx.repo_root or ctx.cwd, (ctx.repo, repo.name(ctx.cwd, ctx.repo_root)), ctx.cwd
    )


def render(asked: Asked, fmt: str) -> str:
    """The answer as the seed's Markdown, or as the `--format json` document."""
    from recall_agent.client import display

    args, ctx = asked.args, asked.ctx
    if fmt == "json":
        info = {
            "repo": ctx.repo,
            "repo_root": str(ctx.repo_root) if ctx.repo_root else None,
            "error_source": None if args.query else ctx.error_source,
        }
        return display.render_json(args.scope, asked.outcomes, info)
    line = _context_line(args, ctx, asked.error_text)
    return display.render_markdown(args.scope, asked.outcomes, args.max_results, line)


def run(args: query.Args, started: float) -> int:
    asked = ask(args, started=started)
    _write(render(asked, args.format))
    if any(o.abandoned_thread and o.abandoned_thread.is_alive() for o in asked.outcomes.values()):
        sys.stderr.flush()
        os._exit(0)  # a node still running past the budget must not hold the answer hostage
    return 0


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()  # the 10 s budget counts from here, imports included
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse(argv)
        if args.help:
            _write(HELP)
            return 0
        if args.version:
            from recall_agent import __version__

            _write(f"recall {__version__}\n")
            return 0
        return run(args, started)
    except UsageError as exc:
        print(f"recall: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # one readable line, never a traceback
        print(f"recall: internal error: {describe(exc)}", file=sys.stderr)
        return 1
