"""`recall hook <Event>`, `recall install [--project|--user]`, `recall uninstall [--project|--user]`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

KNOWN_EVENTS = ("PostToolUseFailure", "PostToolUse", "Stop", "SessionEnd", "SessionStart", "UserPromptSubmit")
_BY_FOLDED = {e.lower(): e for e in KNOWN_EVENTS}

HOOK_HELP = """usage: recall hook <Event>

Claude Code and Codex CLI hook handler: reads the hook JSON on stdin, always exits 0 within its time cap.
Events: PostToolUseFailure (recall prior fixes for the error; a PostToolUse that carries a failure, from
Claude Code versions before PostToolUseFailure, is treated the same), Stop and SessionEnd (read the
session's transcript and capture the errors it fixed as learnings). From Codex CLI: PostToolUse of a
shell call whose exit code (read from the rollout) is not 0, and Stop. Problems go to
$RECALL_HOME/logs/hooks.log, never to the agent.

Environment: AGENT_LEARNING_RETRIEVAL_URL (query a server), RECALL_SERVER_URL + RECALL_TOKEN (store
captured learnings on a team server), RECALL_HOOK_MIN_SIMILARITY (default 0.85), RECALL_HOOK_MAX_INJECT
(default 2), RECALL_TICKET_PATTERN (regex for the ticket id in the branch name; default ABC-123 forms).
"""


def canonical_event(name: str) -> str:
    return _BY_FOLDED.get(name.replace("-", "").replace("_", "").lower(), name)


def hook_main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(HOOK_HELP)
        return 0
    import os

    # pydantic would scan every installed package's entry points for plugins: ~50 ms a hook can't spare
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from recall_agent.hooks import runtime

    if not argv:
        runtime.log("hook", "`recall hook` called without an event name; nothing done")
        return 0
    event = canonical_event(argv[0])

    def work() -> dict[str, object] | None:
        payload = runtime.read_payload()
        if runtime.nothing_to_do(event, payload):
            return None
        if payload is not None and event in ("SessionStart", "UserPromptSubmit"):
            from recall_agent.hooks import push  # light: no redaction, no session state

            return push.handle(event, payload)
        from recall_agent.hooks.handlers import handle

        return handle(event, payload)

    return runtime.run(event, work)


def _scope_parser(prog: str, description: str) -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(prog=prog, description=description)
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--project", action="store_true", help="the project's .claude/settings.json (default)")
    scope.add_argument("--user", action="store_true", help="your ~/.claude/settings.json (all projects)")
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="project folder (default: the git top-level of the current folder, else the current folder)",
    )
    parser.add_argument(
        "--codex",
        action="store_true",
        help="Codex CLI instead of Claude Code: hooks.json (the project's .codex/ or $CODEX_HOME), "
        "`recall mcp` in config.toml, and with --project a short AGENTS.md section",
    )
    return parser


def _project(args: argparse.Namespace) -> Path:
    from recall_agent import repo

    cwd = repo.current_dir()
    return Path(args.dir or repo.toplevel(cwd) or cwd).resolve()


def _target(args: argparse.Namespace) -> Path:
    from recall_agent import repo
    from recall_agent.hooks.install import settings_path

    cwd = repo.current_dir()  # $PWD when the folder was deleted under us (Path.cwd() raises)
    project = args.dir or repo.toplevel(cwd) or cwd
    return settings_path("user" if args.user else "project", Path(project).resolve())


def install_main(argv: list[str]) -> int:
    parser = _scope_parser(
        "recall install",
        "Add recall's Claude Code hooks (auto-recall on failed tool calls, capture of resolved errors) to "
        "settings.json. Idempotent; other hooks and settings are kept.",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="with --codex: make the changes that need consent (turn Codex's hooks feature on when your "
        "config.toml turned it off; add the AGENTS.md section) without asking",
    )
    args = parser.parse_args(argv)
    if args.codex:
        code = _codex("recall install", args, install=True)
        if code == 0:
            _offer_import(args)
        return code
    code = _change_settings(
        "recall install",
        args,
        "install",
        lambda count, path: f"recall hooks installed for {count} events in {path}",
    )
    if code == 0:
        _offer_import(args)
    return code


def _offer_import(args: argparse.Namespace) -> None:
    """One line about the sessions already on disk and how to learn from them; never imports."""
    from recall_agent import repo
    from recall_agent.hooks.import_cli import install_offer

    here = repo.current_dir()  # $PWD when the folder was deleted under us (Path.cwd() raises)
    project = None if args.user else (args.dir or repo.toplevel(here) or here)
    try:
        line = install_offer(Path(project).resolve() if project else None)
    except OSError:
        return
    if line:
        print(line)


def uninstall_main(argv: list[str]) -> int:
    parser = _scope_parser(
        "recall uninstall", "Remove recall's hooks from settings.json; everything else is kept."
    )
    args = parser.parse_args(argv)
    if args.codex:
        return _codex("recall uninstall", args, install=False)
    return _change_settings(
        "recall uninstall",
        args,
        "uninstall",
        lambda n, path: f"removed {n} recall hook(s) from {path}" if n else f"no recall hooks in {path}",
    )


def _codex(command: str, args: argparse.Namespace, install: bool) -> int:
    """`recall install --codex` / `recall uninstall --codex`: one line per change, one on error."""
    from recall_agent.hooks import codex_install as codex
    from recall_agent.hooks.install import SettingsError

    p = codex.plan("user" if args.user else "project", _project(args))
    try:
        if install:
            consent = args.yes or _asked(p)
            lines = codex.install(p, consent)
        else:
            lines = codex.uninstall(p)
    except SettingsError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def _asked(p: object) -> bool:
    """On a terminal, ask before the changes that need consent (only when there are some)."""
    from recall_agent.hooks import codex_install as codex

    assert isinstance(p, codex.Plan)
    version = codex.codex_version()
    user = codex.codex_home() / "config.toml"
    wanted = [str(c) for c in dict.fromkeys([user, p.config])
              if codex.hooks_turned_off(c, version if c == user else None)]  # fmt: skip
    if p.agents is not None and not codex.has_agents_section(p.agents):
        wanted.append(f"add a short recall section to {p.agents}")
    if not wanted or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    print("recall install --codex would also:\n  " + "\n  ".join(
        [f"turn Codex hooks on in {w}" if w.endswith(".toml") else w for w in wanted]))  # fmt: skip
    try:
        return input("Go ahead? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _change_settings(
    command: str, args: argparse.Namespace, action: str, report: Callable[[int, Path], str]
) -> int:
    """Run install.install / install.uninstall on the chosen settings.json: one line out, one on error."""
    from recall_agent.hooks import install as settings

    path = _target(args)
    try:
        count = getattr(settings, action)(path)
    except settings.SettingsError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 1
    print(report(count, path))
    return 0
