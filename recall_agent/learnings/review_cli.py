"""`recall review` and `recall stats`: see what the local store holds, which learnings helped, which are
stale or hurting, and fix, forget or merge them. Every change is recorded (who, when, before/after) and
`recall review history --export FILE` writes that record as JSON lines.

    recall review [list] [--search TEXT] [--repo R] [--type T] [--older-than DAYS] [--newer-than DAYS]
                  [--never-used | --hurting | --dormant | --active | --helped | --stale] [--sort S] [--json]
    recall review [--quarantined | --unverified | --pending]   (not injected until approved)
    recall review show ID            recall review edit ID --resolution TEXT
    recall review approve ID... --yes
    recall review forget ID... --yes recall review merge KEEP OTHER... --yes
    recall review dedupe [--apply]   recall review history [ID] [--export FILE]
    recall stats [--repo R] [--json]

Ids may be shortened to their first 8 characters, as the list prints them. Exit codes: 0 done, 1 refused
(one line on stderr, nothing changed), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recall_agent import selfcheck
from recall_agent.learnings import lifecycle
from recall_agent.learnings.curation import SORTS, ReviewFilter
from recall_agent.learnings.types import StoredLearning, StoreError
from recall_agent.safety import render, trust

ACTIONS = ("list", "show", "edit", "approve", "forget", "merge", "dedupe", "history")
STALE_SCAN_MAX = 5000  # learnings checked against the checkout for --stale


def _fail(cmd: str, message: str, code: int = 1) -> int:
    print(f"recall {cmd}: {message}", file=sys.stderr)
    return code


def actor() -> str:
    """Who makes a change from this machine's command line."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER") or "unknown"
    return f"{user} (cli)"


def _store(home: str | None):
    from recall_agent.learnings.store import default_path, open_store

    path = default_path(Path(home) if home else None)
    if not path.exists():
        raise StoreError(f"no learnings yet ({path} does not exist)")
    return open_store(Path(home) if home else None)


# --------------------------------------------------------------------------- parsers


def _parser(action: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"recall review {action}", description=_DESCRIPTIONS[action])
    p.add_argument("--home", help=argparse.SUPPRESS)
    if action == "list":
        p.add_argument(
            "--search", "-s", default="", metavar="TEXT", help="in the error text, resolution or id"
        )
        p.add_argument("--repo", metavar="R", help="only this repository's learnings")
        p.add_argument("--type", dest="task_type", metavar="T", help="only this task type")
        p.add_argument("--older-than", type=float, metavar="DAYS", help="learned more than DAYS ago")
        p.add_argument("--newer-than", type=float, metavar="DAYS", help="learned within the last DAYS")
        status = p.add_mutually_exclusive_group()
        for flag, helptext in (
            ("never-used", "never shown by the hook nor listed by /recall"),
            ("hurting", "the same failure followed it more often than not (no longer injected)"),
            ("dormant", f"not useful for {lifecycle.DEFAULT_DORMANT_DAYS}+ days (RECALL_DORMANT_DAYS)"),
            ("active", "neither hurting nor dormant"),
            ("helped", "helped at least once"),
            ("stale", "cited files or functions gone or rewritten in this checkout"),
            ("quarantined", "instruction-like or dangerous text: not injected until approved"),
            ("unverified", "an agent's note no passing run confirmed: not injected until approved"),
            ("pending", "posted to a server that asks for review: not injected until approved"),
        ):
            status.add_argument(f"--{flag}", dest="status", action="store_const", const=flag, help=helptext)
        p.add_argument("--sort", choices=list(SORTS), default="newest")
        p.add_argument("--limit", type=int, default=50, help="at most this many (default 50, at most 200)")
        p.add_argument("--offset", type=int, default=0, help=argparse.SUPPRESS)
        p.add_argument("--json", action="store_true", help="one JSON object per line")
    elif action in ("show", "edit"):
        p.add_argument("id", metavar="ID")
        if action == "edit":
            p.add_argument(
                "--resolution", required=True, metavar="TEXT", help="the new resolution ('-': stdin)"
            )
        else:
            p.add_argument("--json", action="store_true")
    elif action == "approve":
        p.add_argument("ids", nargs="+", metavar="ID")
        p.add_argument(
            "--yes", action="store_true", help="do it (without --yes, only say what would be approved)"
        )
    elif action == "forget":
        p.add_argument("ids", nargs="+", metavar="ID")
        p.add_argument("--yes", action="store_true", help="do it (without --yes, only say what would go)")
    elif action == "merge":
        p.add_argument("keep", metavar="KEEP", help="the learning that stays")
        p.add_argument("others", nargs="+", metavar="OTHER", help="learnings folded into it, then removed")
        p.add_argument("--yes", action="store_true", help="do it (without --yes, only say what would happen)")
    elif action == "dedupe":
        p.add_argument("--apply", action="store_true", help="merge each group into its oldest learning")
        p.add_argument(
            "--same-cause",
            action="store_true",
            help="group by the fitted same-cause decision /recall uses (slower), not only the fingerprint",
        )
    elif action == "history":
        p.add_argument("id", nargs="?", metavar="ID", help="one learning's changes (default: every change)")
        p.add_argument("--export", metavar="FILE", help="write the change record as JSON lines ('-': stdout)")
    return p


_DESCRIPTIONS = {
    "list": "List and filter the learnings of the local store (newest first).",
    "show": "Show one learning: error, resolution, files, evidence, counts, its check here, its history.",
    "edit": "Replace a learning's resolution (redacted; recorded with who and when).",
    "approve": "Vouch for learnings: quarantined, unverified or posted ones are injected automatically from now on.",
    "forget": "Delete learnings (what they were stays in the change record).",
    "merge": "Merge duplicates into one learning: every error signature kept, counts summed.",
    "dedupe": "Find learnings of one repository that share an error fingerprint (the same cause).",
    "history": "The change record: who edited, forgot or merged what, when, before and after.",
}


def review_main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n", 1)[1].rstrip())
        return 0
    action = argv[0] if argv and argv[0] in ACTIONS else "list"
    rest = argv[1:] if argv and argv[0] in ACTIONS else argv
    args = _parser(action).parse_args(rest)
    if action == "list" and not _exists(args.home):
        print("0 learnings (nothing learned yet)", file=sys.stderr)
        return 0
    try:
        with _store(args.home) as store:
            return _RUN[action](store, args)
    except (StoreError, ValueError) as exc:
        return _fail("review", str(exc))
    except BrokenPipeError:
        return 0


def _exists(home: str | None) -> bool:
    from recall_agent.learnings.store import default_path

    return default_path(Path(home) if home else None).exists()


# --------------------------------------------------------------------------- actions


def _repo_arg(given: str | None) -> str | None:
    from recall_agent.learnings.cli import repo_arg

    return repo_arg(given)


def _list(store: Any, args: argparse.Namespace) -> int:
    stale = args.status == "stale"
    f = ReviewFilter(
        text=args.search,
        repo=_repo_arg(args.repo),
        task_type=args.task_type,
        older_than_days=args.older_than,
        newer_than_days=args.newer_than,
        status=None if stale else args.status,
        sort=args.sort,
    )
    limit = max(1, min(200, args.limit))
    if stale:
        rows, total = _stale(store, f, limit)
    else:
        rows, total = store.review(f, args.offset, limit)
    now = datetime.now(UTC)
    for row in rows:
        print(json.dumps(_row_json(row, now)) if args.json else _row_line(row, now))
    if not args.json:
        more = f" (showing {len(rows)}; --limit/--offset for more)" if total > len(rows) else ""
        noun = "stale learning" if stale else "learning"
        print(f"{total} {noun}{'' if total == 1 else 's'}{more}", file=sys.stderr)
    return 0


def _stale(store: Any, f: ReviewFilter, limit: int) -> tuple[list[StoredLearning], int]:
    """Learnings of this checkout's repository whose evidence no longer fits it."""
    from recall_agent import repo

    cwd = repo.current_dir()
    top = repo.toplevel(cwd)
    names = repo.aliases(cwd, top)
    if f.repo and f.repo not in names:
        raise ValueError(f"--stale checks this checkout ({names[0]}); run it inside {f.repo}'s checkout")
    return store.stale(f, dict.fromkeys(names, top or cwd), limit, 0, STALE_SCAN_MAX)


def _age(when: datetime, now: datetime) -> str:
    days = max(0, int((now - when).total_seconds() // 86400))
    return "today" if days == 0 else f"{days}d"


def _first(text: str, limit: int) -> str:
    line = next((ln.strip() for ln in render.clean(text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _tier(row: StoredLearning) -> str:
    return trust.tier(_trust_fields(row))


def _trust_fields(row: StoredLearning) -> dict[str, Any]:
    return trust.fields_of(row)


def _row_line(row: StoredLearning, now: datetime) -> str:
    state = lifecycle.state(row.created_at, row.last_useful_at, row.helped_count, row.hurt_count, now)
    error = _first((row.error_signatures or [""])[0], 60)
    counts = (
        f"met {row.seen_count}x/{row.session_count}s  shown {row.shown_count} helped {row.helped_count}"
        f" hurt {row.hurt_count}"
    )
    tier = _tier(row)
    return (
        f"{str(row.id)[:8]}  {render.visible(row.repo)[:20]:20}  {_age(row.created_at, now):>6}  {counts}  {state:8}  "
        f"{'' if tier == 'trusted' else tier + '  '}{error}  =>  {_first(row.resolution_summary, 60)}"
    )


def _row_json(row: StoredLearning, now: datetime) -> dict[str, Any]:
    data = row.to_model().model_dump(mode="json")
    data["state"] = lifecycle.state(row.created_at, row.last_useful_at, row.helped_count, row.hurt_count, now)
    data["trust"] = _tier(row)
    data["quarantine"] = trust.quarantine_of(_trust_fields(row))
    return data


def _find(store: Any, text: str) -> StoredLearning:
    row = store.learning(store.resolve_id(text))
    if row is None:
        raise ValueError(f"no learning with id {text}")
    return row


def _show(store: Any, args: argparse.Namespace) -> int:
    from recall_agent import repo

    row = _find(store, args.id)
    now = datetime.now(UTC)
    cwd = repo.current_dir()
    here = repo.aliases(cwd)
    verdict = selfcheck.check(row.fix, repo.toplevel(cwd) or cwd) if row.repo in here else selfcheck.UNCHECKED
    history = store.history(row.id)
    if args.json:
        print(json.dumps({**_row_json(row, now), "check": verdict.as_dict(), "history": history}))
        return 0
    print(_details(row, now, verdict, history))
    return 0


def _details(row: StoredLearning, now: datetime, verdict: selfcheck.Check, history: list[dict]) -> str:
    state = lifecycle.state(row.created_at, row.last_useful_at, row.helped_count, row.hurt_count, now)
    lines = [
        f"id:          {row.id}",
        f"repo:        {row.repo}   type: {row.task_type}   ticket: {row.ticket_id or '-'}",
        f"learned:     {row.created_at:%Y-%m-%d} ({_age(row.created_at, now)})   confidence: {row.confidence:.2f}",
        f"used:        shown {row.shown_count}, helped {row.helped_count}, hurt {row.hurt_count}, "
        f"listed by /recall {row.access_count}; last useful: "
        + (f"{row.last_useful_at:%Y-%m-%d}" if row.last_useful_at else "never"),
        f"met:         {row.seen_count} time{'' if row.seen_count == 1 else 's'} in {row.session_count}"
        f" session{'' if row.session_count == 1 else 's'}"
        + (
            f", first {row.first_seen_at:%Y-%m-%d}, last {row.last_seen_at:%Y-%m-%d}"
            if row.last_seen_at and row.first_seen_at
            else ""
        ),
        f"state:       {state}",
        f"trust:       {trust.label(_trust_fields(row)) or _tier(row)}",
    ]
    if verdict.verdict != "unchecked":
        lines.append(f"here:        {verdict.label}" + (f": {verdict.reason}" if verdict.reason else ""))
    lines.append("errors:")
    lines += [f"  - {_first(sig, 200)}" for sig in row.error_signatures]
    lines.append("resolution:")
    lines += [f"  {ln}" for ln in render.clean(row.resolution_summary).splitlines()]
    if len(row.fixes) > 1:
        lines.append("fixes that worked (most often first):")
        lines += [f"  {f['count']}x  {_first(render.clean(f['resolution_summary']), 160)}" for f in row.fixes]
    if row.file_paths_touched:
        lines.append("files:       " + ", ".join(row.file_paths_touched))
    if row.fix:
        lines.append("evidence:    " + json.dumps(row.fix, ensure_ascii=False))
    if history:
        lines.append("history:")
        lines += [f"  {e['at'][:19]}  {e['actor']}  {e['action']}" for e in history]
    return "\n".join(lines)


def _edit(store: Any, args: argparse.Namespace) -> int:
    from recall_agent.learnings.records import clean_resolution
    from recall_agent.redact import redact

    text = sys.stdin.read(64 * 1024) if args.resolution == "-" else args.resolution
    text = redact(clean_resolution(text))
    row = _find(store, args.id)
    store.edit_resolution(row.id, text, actor())
    print(f"edited {row.id}")
    return 0


def _approve(store: Any, args: argparse.Namespace) -> int:
    rows = [_find(store, i) for i in args.ids]
    if not args.yes:
        for row in rows:
            print(f"would approve {row.id}  {_tier(row)}  {_first(row.resolution_summary, 70)}")
        return _fail(
            "review", "nothing approved: add --yes to approve these (they will be injected automatically)"
        )
    for row in rows:
        store.approve(row.id, actor())
        print(f"approved {row.id}")
    return 0


def _forget(store: Any, args: argparse.Namespace) -> int:
    rows = [_find(store, i) for i in args.ids]
    if not args.yes:
        for row in rows:
            print(f"would forget {row.id}  {_first(row.resolution_summary, 70)}")
        return _fail("review", "nothing forgotten: add --yes to forget these")
    for row in rows:
        store.forget(row.id, actor())
        print(f"forgot {row.id}")
    return 0


def _merge(store: Any, args: argparse.Namespace) -> int:
    keep = _find(store, args.keep)
    others = [_find(store, o) for o in args.others]
    if not args.yes:
        print(f"would keep   {keep.id}  {_first(keep.resolution_summary, 70)}")
        for row in others:
            print(f"would merge  {row.id}  {_first(row.resolution_summary, 70)}")
        return _fail("review", "nothing merged: add --yes to merge these")
    kept = store.merge(keep.id, [o.id for o in others], actor())
    print(f"merged {len(others)} into {kept.id} ({len(kept.error_signatures)} error signatures)")
    return 0


def _dedupe(store: Any, args: argparse.Namespace) -> int:
    groups = store.same_cause_groups() if args.same_cause else store.duplicate_groups()
    for group in groups:
        if args.apply:
            kept = store.merge(group[0], group[1:], actor())
            print(f"merged {len(group) - 1} into {kept.id}")
        else:
            print("same cause: " + " ".join(g[:8] for g in group))
    if not groups:
        print("no duplicates", file=sys.stderr)
    elif not args.apply:
        print(f"{len(groups)} group(s); --apply merges each into its oldest learning", file=sys.stderr)
    return 0


def _history(store: Any, args: argparse.Namespace) -> int:
    events = store.history(store.resolve_id(args.id)) if args.id else store.iter_events()
    if args.export and args.export != "-":
        tmp = Path(args.export).with_name(f".{Path(args.export).name}.{os.getpid()}.tmp")
        try:
            with tmp.open("w", encoding="utf-8") as out:
                n = sum(out.write(json.dumps(e, ensure_ascii=False) + "\n") > 0 for e in events)
            tmp.replace(args.export)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            return _fail("review", f"cannot write {args.export}: {exc.strerror or exc}")
        print(f"exported {n} changes to {args.export}", file=sys.stderr)
        return 0
    for e in events:
        print(json.dumps(e, ensure_ascii=False) if args.export else f"{e['at'][:19]}  {e['learning_id'][:8]}  "
              f"{e['actor']}  {e['action']}")  # fmt: skip
    return 0


_RUN = {
    "list": _list,
    "show": _show,
    "edit": _edit,
    "approve": _approve,
    "forget": _forget,
    "merge": _merge,
    "dedupe": _dedupe,
    "history": _history,
}


# --------------------------------------------------------------------------- recall stats


def stats_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="recall stats",
        description="Totals of the local store: active, dormant, hurting, never used, helped/hurt, "
        "the most used learnings and each repository.",
    )
    p.add_argument("--repo", metavar="R", help="only this repository")
    p.add_argument("--json", action="store_true")
    p.add_argument("--home", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    from recall_agent.learnings.curation import Stats

    try:
        if not _exists(args.home):
            s = Stats()
        else:
            with _store(args.home) as store:
                s = store.stats(frozenset({args.repo, _repo_arg(args.repo)}) if args.repo else None)
    except StoreError as exc:
        return _fail("stats", str(exc))
    from recall_agent.push import ledger

    home = Path(args.home) if args.home else None
    pushed = ledger.totals(home, {args.repo, _repo_arg(args.repo) or args.repo} if args.repo else None)
    if args.json:
        print(json.dumps(s.as_dict() | {"push": pushed}))
        return 0
    print(format_stats(s))
    print(format_push(pushed))
    return 0


def format_push(pushed: dict[str, dict[str, int]]) -> str:
    """What recall pushed into contexts before anything failed (issue 35): per kind, count and tokens."""
    names = {"session_start": "session start", "prompt": "task prompt", "mcp": "recall_context (MCP)"}
    parts = [f"{names[k]} {v['count']} ({v['tokens']} tokens, {v['lines']} lines)" for k, v in pushed.items()]
    return "pushed      " + "   ".join(parts)


def format_stats(s: Any) -> str:
    lines = [
        f"learnings   {s.total}   active {s.active}   dormant {s.dormant}   hurting {s.hurting}   "
        f"never used {s.never_used}",
        f"hook        shown {s.shown}   helped {s.helped}   hurt {s.hurt}   /recall listed {s.recalled}",
    ]
    if s.top:
        lines.append("top errors by hits:")
        lines += [
            f"  {t['hits']:>5}  {t['id'][:8]}  {t['repo'][:20]:20}  {_first(t['error'], 70)}" for t in s.top
        ]
    if s.repos:
        lines.append("per repository:")
        lines += [
            f"  {r['repo'][:30]:30}  {r['learnings']:>6} learnings  never used {r['never_used']}  "
            f"helped {r['helped']}  hurt {r['hurt']}"
            for r in s.repos
        ]
    return "\n".join(lines)
