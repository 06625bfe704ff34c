"""`recall import-sessions [PATH ...] [--agent claude|codex|all] [--all] [--since DATE] [--dry-run]`: learn
from past Claude Code and Codex CLI sessions."""

from __future__ import annotations

import argparse
import re
import sys
import time
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

DESCRIPTION = """Read Claude Code session transcripts and Codex CLI rollouts and store every error that was fixed later in the same
session as a learning, by the rules the recall hooks use live (the failing call, the later successful run
of the same command, the files edited in between, the branch's ticket, the agent's own explanation).
Secrets are redacted before anything is stored; what the hooks or an earlier import already stored is not
stored again. Default: this project's sessions."""


def _since(value: str) -> float:
    """DATE as YYYY-MM-DD, an ISO date-time, or N days ago as `Nd`; seconds since the epoch."""
    days = re.fullmatch(r"\A\s*(\d{1,5})\s*d\s*\Z", value)  # \A..\Z: linear under search too
    if days:
        return (datetime.now(UTC) - timedelta(days=int(days.group(1)))).timestamp()
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a date: {value!r} (use YYYY-MM-DD, an ISO date-time, or 30d for 30 days ago)"
        ) from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recall import-sessions", description=DESCRIPTION)
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="transcript files or folders (default: this project's folder under ~/.claude/projects)",
    )
    parser.add_argument("--all", action="store_true", help="every project's sessions")
    parser.add_argument(
        "--agent",
        choices=("claude", "codex", "all"),
        default="all",
        help="whose sessions: Claude Code's (~/.claude/projects), Codex CLI's ($CODEX_HOME/sessions), "
        "or all that exist (default)",
    )
    parser.add_argument(
        "--since", type=_since, metavar="DATE", help="only sessions written on or after DATE (or Nd)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would be stored, store nothing")
    parser.add_argument(
        "--reread",
        action="store_true",
        help="read sessions imported before again, even unchanged ones (what is known is still not stored twice)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, only the summary")
    return parser


def _targets(args: argparse.Namespace) -> tuple[list[Any], str] | str:
    """(sessions to read, what they are) or an error message."""
    from recall_agent import repo
    from recall_agent.capture.readers import CLI_NAMES
    from recall_agent.capture.sessions import (
        all_project_folders,
        codex_sessions,
        project_folders,
        sessions_in,
    )

    wanted = set(CLI_NAMES.values()) if args.agent == "all" else {CLI_NAMES[args.agent]}
    if args.paths:
        missing = [str(p) for p in args.paths if not p.exists()]
        if missing:
            return f"no such file or folder: {', '.join(missing)}"
        return [s for s in sessions_in(list(args.paths)) if s.agent in wanted], "the given paths"
    cwd = None if args.all else repo.current_dir()
    found = []
    if "claude-code" in wanted:
        found += sessions_in(all_project_folders() if cwd is None else project_folders(cwd))
    if "codex" in wanted:
        found += codex_sessions(cwd)
    return found, "every project" if cwd is None else f"this project ({cwd})"


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    found = _targets(args)
    if isinstance(found, str):
        print(f"recall import-sessions: {found}", file=sys.stderr)
        return 2
    sessions, scope = found
    too_old = 0
    if args.since is not None:
        kept = [s for s in sessions if s.mtime() >= args.since]
        too_old, sessions = len(sessions) - len(kept), kept
    if not sessions:
        from recall_agent.config import claude_projects_dir, codex_sessions_dir

        whose = {"claude": "Claude Code", "codex": "Codex CLI"}.get(args.agent, "Claude Code or Codex CLI")
        print(
            f"recall import-sessions: no {whose} sessions found for {scope}"
            + (f" ({too_old} older than --since)" if too_old else "")
            + f"; Claude Code keeps them under {claude_projects_dir()}/<project>/, Codex CLI under "
            f"{codex_sessions_dir()}/YYYY/MM/DD/ (try --all, or pass a PATH)"
        )
        return 0
    return _run(sessions, args, too_old)


def _ledger(args: argparse.Namespace) -> Any:
    """What earlier imports read, unless told to read again or learnings go to a team server."""
    import os

    from recall_agent.config import recall_home
    from recall_agent.hooks.importer import Ledger

    if args.reread or os.environ.get("RECALL_SERVER_URL"):
        return None
    return Ledger(recall_home())


def _file_under_identities(home: Path) -> None:
    """Sessions of a gone folder read before one of them showed its repository's URL were filed under the
    folder's name: the migration's rules (learnings/reidentify.py) file them under the identity now."""
    from recall_agent import repo
    from recall_agent.learnings import reidentify
    from recall_agent.learnings.store import open_store

    with open_store(home) as store:
        reidentify.run(store, reidentify.Resolver(home, [repo.current_dir()]))


def _run(sessions: list[Any], args: argparse.Namespace, too_old: int) -> int:
    from recall_agent.config import recall_home
    from recall_agent.hooks.importer import Sink, learning_line, read_sessions, workers_for
    from recall_agent.learnings.types import StoreError

    ledger = _ledger(args)
    unchanged = [s for s in sessions if ledger and ledger.unchanged(s)]
    sessions = [s for s in sessions if not (ledger and ledger.unchanged(s))]
    if not sessions:
        print(
            f"recall import-sessions: {len(unchanged)} session(s) unchanged since they were imported; nothing "
            "to read (--reread reads them again)."
        )
        return 0

    sink = None
    if not args.dry_run:
        try:
            sink = Sink()
        except StoreError as exc:
            print(f"recall import-sessions: {exc}", file=sys.stderr)
            return 1
    started = time.monotonic()
    totals = {"errors": 0, "resolved": 0, "learnings": 0, "bad_lines": 0, "bytes": 0, "transcripts": 0}
    totals |= {"claude-code": 0, "codex": 0}
    failed: list[str] = []
    planned: list[dict[str, Any]] = []
    try:
        with _progress(len(sessions), quiet=args.quiet) as bar:
            for files, result in zip(sessions, read_sessions(sessions, workers_for(sessions)), strict=True):
                totals["bytes"] += files.size()
                totals["transcripts"] += len(files.paths())
                totals[files.agent] = totals.get(files.agent, 0) + 1
                if result.failed:
                    failed.append(result.failed)
                for key in ("errors", "resolved", "bad_lines"):
                    totals[key] += getattr(result, key)
                totals["learnings"] += len(result.learnings)
                if sink is not None:
                    sink.add(result.learnings)
                    if ledger and not result.failed:
                        ledger.note(files)
                else:
                    planned.extend(result.learnings)
                if bar is not None:
                    bar(totals, sink)
        if sink is not None:
            sink.close()
            if ledger:
                ledger.save(recall_home())
            _file_under_identities(recall_home())
    except StoreError as exc:  # the store went bad mid-way (disk full, locked): what was written stays
        print(f"recall import-sessions: {exc}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    if args.dry_run:
        for learning in planned:
            print(learning_line(learning))
    print(_summary(len(sessions), totals, sink, failed, too_old, len(unchanged), elapsed, args.dry_run))
    for reason in failed[:5]:
        print(f"  skipped {reason[:300]}", file=sys.stderr)
    return 0


def _summary(
    sessions: int,
    totals: dict[str, int],
    sink: Any,
    failed: list[str],
    too_old: int,
    unchanged: int,
    elapsed: float,
    dry_run: bool,
) -> str:
    mb = totals["bytes"] / 1e6
    parts = [
        f"{sessions} session(s) read ({_per_agent(totals)}; {totals['transcripts']} transcript files, "
        f"{mb:.1f} MB, {elapsed:.1f} s)",
        f"{totals['errors']} error(s) met, {totals['resolved']} resolved in the same session",
    ]
    if dry_run:
        parts.append(f"{totals['learnings']} learning(s) would be stored (dry run: nothing stored)")
    else:
        c = sink.counts
        parts.append(
            f"{c.new} learning(s) stored, {c.merged} merged into identical ones, {c.known} already known"
        )
    if failed:
        parts.append(f"{len(failed)} file(s) skipped (unreadable)")
    if totals["bad_lines"]:
        parts.append(f"{totals['bad_lines']} unreadable line(s) skipped")
    if too_old:
        parts.append(f"{too_old} session(s) older than --since left out")
    if unchanged:
        parts.append(f"{unchanged} session(s) unchanged since they were imported, not read again")
    return "recall import-sessions: " + "; ".join(parts) + "."


def _per_agent(totals: dict[str, int]) -> str:
    return f"{totals.get('claude-code', 0)} Claude Code, {totals.get('codex', 0)} Codex"


def _progress(total: int, quiet: bool) -> Any:
    """A live line on a terminal (stderr): sessions read, errors met, learnings stored. Nothing otherwise."""
    if quiet or not sys.stderr.isatty():
        return nullcontext(None)
    return _RichProgress(total)


class _RichProgress:
    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("sessions"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task("import", total=total, detail="")

    def __enter__(self) -> Any:
        self.progress.__enter__()
        return self.update

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def update(self, totals: dict[str, int], sink: Any) -> None:
        stored = totals["learnings"]
        if sink is not None:
            stored = sink.counts.new + sink.counts.merged + len(sink.pending)
        detail = f"{totals['errors']} errors, {totals['resolved']} resolved, {stored} learnings"
        self.progress.update(self.task, advance=1, detail=detail)


def install_offer(project: Path | None) -> str | None:
    """The line `recall install` prints when past sessions exist: how many (Claude Code's and Codex CLI's),
    and the command that imports them (`project` None: every project, for a user-wide install). Counting
    only: nothing is read but each rollout's first line (its folder)."""
    from recall_agent.capture.sessions import (
        all_project_folders,
        codex_sessions,
        project_folders,
        sessions_in,
    )

    folders = all_project_folders() if project is None else project_folders(project)
    claude = sum(1 for s in sessions_in(folders) if not s.main.name.startswith("agent-")) if folders else 0
    codex = len(codex_sessions(project))
    if not claude and not codex:
        return None
    command = "recall import-sessions --all" if project is None else "recall import-sessions"
    where = "on this machine" if project is None else "for this project"
    found = " and ".join(
        [f"{claude} earlier Claude Code session(s)"] * bool(claude)
        + [f"{codex} earlier Codex CLI session(s)"] * bool(codex)
    )
    return (
        f"Found {found} {where}: `{command}` learns the fixes in them (nothing is imported until you run it)."
    )
