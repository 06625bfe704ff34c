"""`recall learn`, `recall export`, `recall forget`: record, dump and remove learnings in the local store.

Exit codes: 0 done, 1 the store or the input was refused (one line on stderr, nothing changed),
2 bad arguments (argparse). Error text and resolutions are redacted (recall_agent.redact) before they are stored.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from recall_agent.learnings.extract import decisive
from recall_agent.learnings.types import StoreError
from recall_agent.models import ERROR_TEXT_MAX, RESOLUTION_MAX, Learning, TaskType

TASK_TYPES = [t.value for t in TaskType]


class Refused(Exception):
    """Input recall will not store; the message is the one line the user sees."""


# --------------------------------------------------------------------------- shared helpers


def default_repo(cwd: Path | None = None) -> str:
    """The name of the git top-level folder of cwd, else cwd's name: the rule the client uses when it asks
    (recall_agent.repo), so what `recall learn` records is what `recall "<error>"` looks up."""
    from recall_agent import repo

    cwd = cwd or repo.current_dir()
    return repo.name(cwd, repo.toplevel(cwd))


def _validation_message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or "input"
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if field == "task_type":
        msg = f"unknown task type {err.get('input')!r} (one of: {', '.join(TASK_TYPES)})"
    return f"{field}: {msg}"


def _fail(cmd: str, message: str, code: int = 1) -> int:
    print(f"recall {cmd}: {message}", file=sys.stderr)
    return code


def _open_store(home: str | None):
    from recall_agent.learnings.store import open_store

    return open_store(Path(home) if home else None)


def build_learning(data: dict[str, Any]) -> Learning:
    """Validate a learning from user input, redacting every stored field. Raises Refused."""
    data = dict(data)
    sigs = data.get("error_signatures") or []
    if not isinstance(sigs, list) or not all(isinstance(s, str) for s in sigs):
        raise Refused("error_signatures: must be a list of strings")
    # a whole tool output or log is welcome: what is stored is its decisive part (at most the wire limit)
    sigs = [sig if len(sig) <= ERROR_TEXT_MAX else decisive(sig, ERROR_TEXT_MAX) for sig in sigs]
    resolution = data.get("resolution_summary")
    if isinstance(resolution, str):
        if not resolution.strip():
            raise Refused("resolution_summary: must not be empty")
        if len(resolution) > RESOLUTION_MAX:
            raise Refused(f"resolution is {len(resolution)} characters; the limit is {RESOLUTION_MAX}")
    data["error_signatures"] = [s for s in sigs if s.strip()]
    try:
        learning = Learning.model_validate(data)
    except ValidationError as exc:
        raise Refused(_validation_message(exc)) from None
    from recall_agent.redact import redact_learning

    return redact_learning(learning)  # free text, file paths, ticket and session id


def record(data: dict[str, Any], home: str | None = None) -> tuple[UUID, bool]:
    """Store one learning the way `recall learn` does (validated, redacted): (id, merged into an existing
    one). A learning the agent writes in a session (`fix.source` agent) supersedes what the capture stored
    automatically for the same error in that session: those are removed. Raises Refused for input recall
    will not store, StoreError/ValueError when the store refuses."""
    learning = build_learning(data)
    if not learning.error_signatures:
        raise Refused("error text must not be empty")
    with _open_store(home) as store:
        lid, merged = store.add(learning)
        if learning.session_id and learning.fix is not None and learning.fix.source == "agent":
            _supersede(store, learning, lid)
        return lid, merged


def _supersede(store: Any, learning: Learning, keep: UUID) -> int:
    """Remove the automatic (transcript) learnings of `learning`'s session that the matching engine finds
    for its errors (the same decision `/recall` makes: the same cause)."""
    from recall_agent.learnings import answer
    from recall_agent.learnings.wire import RetrievalRequest

    doomed = set()
    for text in learning.error_signatures:
        request = RetrievalRequest(
            repo=learning.repo, match_type="error_signature", error_text=text, max_results=20
        )
        for match in answer(store, request, record_access=False).matches:
            old = store.get(match.learning_id)
            automatic = old is not None and old.fix is not None and old.fix.source == "transcript"
            if automatic and old.session_id == learning.session_id and str(old.id) != str(keep):
                doomed.add(old.id)
    return sum(store.delete(lid) for lid in doomed)


# --------------------------------------------------------------------------- recall learn


def _learn_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="recall learn",
        description="Record how an error was fixed, so /recall finds it next time. Prints the learning's id.",
        epilog="example: recall learn --error \"ModuleNotFoundError: No module named 'yaml'\" "
        '--resolution "pip install pyyaml" --file requirements.txt --type dependency',
    )
    p.add_argument(
        "--error",
        action="append",
        default=[],
        metavar="TEXT",
        help=f"error text (repeatable; '-' reads stdin; longer than {ERROR_TEXT_MAX} characters, its decisive "
        "error lines are kept)",
    )
    p.add_argument(
        "--resolution", metavar="TEXT", help=f"what fixed it (at most {RESOLUTION_MAX} characters)"
    )
    p.add_argument(
        "--file", action="append", default=[], metavar="PATH", help="a file touched by the fix (repeatable)"
    )
    p.add_argument("--repo", metavar="R", help="repository name (default: the git top-level folder's name)")
    p.add_argument(
        "--type",
        dest="task_type",
        default="unknown",
        metavar="T",
        help=f"task type: {', '.join(TASK_TYPES)} (default: unknown)",
    )
    p.add_argument("--ticket", metavar="ID", help="ticket id (at most 64 characters)")
    p.add_argument("--session", metavar="ID", help="agent session id (default: $CLAUDE_SESSION_ID)")
    p.add_argument("--confidence", type=float, default=0.8, metavar="F", help="0-1 (default 0.8)")
    p.add_argument(
        "--from-jsonl",
        metavar="FILE",
        help="bulk import: one learning JSON object per line (the `recall export` format; '-' = stdin)",
    )
    p.add_argument("--home", help=argparse.SUPPRESS)
    return p


def learn_main(argv: list[str]) -> int:
    args = _learn_parser().parse_args(argv)
    if args.from_jsonl:
        if args.error or args.resolution:
            return _fail("learn", "--from-jsonl cannot be combined with --error/--resolution", 2)
        return _import_jsonl(args.from_jsonl, args.home)
    if not args.error:
        return _fail("learn", "at least one --error TEXT is required (or --from-jsonl FILE)", 2)
    if args.resolution is None:
        return _fail("learn", "--resolution TEXT is required", 2)
    errors = [_read_stdin(STDIN_MAX) if e == "-" else e for e in args.error]
    session = args.session or os.environ.get("CLAUDE_SESSION_ID") or None
    if args.task_type not in TASK_TYPES:
        return _fail("learn", f"unknown task type {args.task_type!r} (one of: {', '.join(TASK_TYPES)})")
    data = {
        "repo": args.repo or default_repo(),
        "error_signatures": errors,
        "resolution_summary": args.resolution,
        "file_paths_touched": args.file,
        "task_type": args.task_type,
        "ticket_id": args.ticket,
        "session_id": session,
        "confidence": args.confidence,
        # who wrote it: the agent, inside a session (it supersedes the automatic capture), or a person
        "fix": {"source": "agent" if session else "manual", "files": [{"path": f} for f in args.file[:50]]},
    }
    try:
        lid, merged = record(data, args.home)
    except (Refused, StoreError, ValueError) as exc:
        return _fail("learn", str(exc))
    print(lid)
    if merged:
        print(
            f"recall learn: merged into existing learning {lid} (same error, same resolution)",
            file=sys.stderr,
        )
    return 0


STDIN_MAX = 1024 * 1024  # a pasted log is kept to its decisive part; a 100 MB pipe is not read into memory


def _read_stdin(limit: int) -> str:
    """At most `limit` characters of stdin (longer is refused by the length check; a 100 MB pipe is not
    read into memory), then the rest is drained so the writer does not get SIGPIPE."""
    text = sys.stdin.read(limit)
    while sys.stdin.read(1 << 16):
        pass
    return text


def _jsonl_lines(path: str) -> Iterator[tuple[int, str]]:
    fh = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    try:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield n, line
    finally:
        if fh is not sys.stdin:
            fh.close()


def _import_jsonl(path: str, home: str | None) -> int:
    if path != "-" and not Path(path).is_file():
        return _fail("learn", f"no such file: {path}")
    added = merged = failed = 0
    try:
        with _open_store(home) as store:
            for n, line in _jsonl_lines(path):
                try:
                    data = json.loads(line)
                    if not isinstance(data, dict):
                        raise Refused("expected a JSON object")
                    # the person importing vouches for the file; its trust claims are not taken over
                    data.update(provenance="imported", author=None, review="none", quarantine=None)
                    _, was_merged = store.add(build_learning(data))
                except json.JSONDecodeError as exc:
                    failed += 1
                    print(f"recall learn: {path}:{n}: not JSON ({exc.msg})", file=sys.stderr)
                    continue
                except (Refused, ValueError) as exc:
                    failed += 1
                    print(f"recall learn: {path}:{n}: {exc}", file=sys.stderr)
                    continue
                merged += was_merged
                added += not was_merged
    except StoreError as exc:
        return _fail("learn", str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        return _fail("learn", f"cannot read {path}: {exc}")
    print(f"imported {added} new, {merged} merged, {failed} rejected")
    return 1 if failed else 0


# --------------------------------------------------------------------------- recall export


def export_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="recall export",
        description="Write every learning as JSON lines (the format `recall learn --from-jsonl` imports).",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout (atomically)")
    p.add_argument("--repo", metavar="R", help="only this repository's learnings")
    p.add_argument("--home", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    from recall_agent.learnings.store import default_path

    if not default_path(Path(args.home) if args.home else None).exists():
        if args.output:
            Path(args.output).write_text("")
        return 0
    tmp: Path | None = None
    try:
        with _open_store(args.home) as store:
            if args.output:
                tmp = Path(args.output).with_name(f".{Path(args.output).name}.{os.getpid()}.tmp")
                out = tmp.open("w", encoding="utf-8")
            else:
                out = sys.stdout
            count = 0
            for learning in store.iter_all():
                if args.repo and learning.repo != args.repo:
                    continue
                out.write(learning.model_dump_json() + "\n")
                count += 1
            if tmp is not None:
                out.close()
                tmp.replace(args.output)
                print(f"exported {count} learnings to {args.output}", file=sys.stderr)
    except StoreError as exc:
        return _fail("export", str(exc))
    except OSError as exc:
        return _fail("export", f"cannot write {args.output}: {exc.strerror or exc}")
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()
    return 0


# --------------------------------------------------------------------------- recall forget


def forget_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="recall forget", description="Delete learnings by id.")
    p.add_argument(
        "ids", nargs="+", metavar="ID", help="learning id (UUID, as printed by recall learn/export)"
    )
    p.add_argument("--home", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    from recall_agent.learnings.records import parse_id

    try:
        ids = [parse_id(i) for i in args.ids]
    except ValueError as exc:
        return _fail("forget", str(exc))
    from recall_agent.learnings.review_cli import actor

    missing = []
    try:
        with _open_store(args.home) as store:
            for lid in ids:
                if store.forget(lid, actor()) is not None:  # kept in the change record (docs/review.md)
                    print(f"forgot {lid}")
                else:
                    missing.append(str(lid))
    except StoreError as exc:
        return _fail("forget", str(exc))
    if missing:
        return _fail("forget", f"no learning with id {', '.join(missing)}")
    return 0
