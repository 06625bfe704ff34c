"""`recall index [PATH]`: build or refresh the architecture index of a repository and print a summary."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys

from recall_agent.errors import describe


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall index",
        description=(
            "Index a repository for /recall architecture questions (symbols, imports, calls; tree-sitter) "
            "and its git history (co-changes, hotspots, owners). Only files changed and commits made since "
            "the last run are read again; queries also do this automatically."
        ),
        epilog='Example: recall index . && recall --scope architecture "blast radius of pkg.module"',
    )
    parser.add_argument("path", nargs="?", default=".", help="a folder inside the repository (default: .)")
    parser.add_argument(
        "--full",
        action="store_true",
        help="re-parse every file and re-read the whole history, not only changes",
    )
    parser.add_argument("--no-history", action="store_true", help="do not read the git history")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    parser.add_argument(
        "--max-files",
        type=_count,
        metavar="N",
        help="index at most N files (default: every file; also RECALL_INDEX_MAX_FILES); 0 means no cap",
    )
    parser.add_argument(
        "--query", metavar="TEXT", help='answer one question after indexing, e.g. "who calls Client.send"'
    )
    return parser


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of files, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from recall_agent.architecture import graph
    from recall_agent.architecture.indexer import RepositoryError, cap_note, find_repo_root, update

    try:
        root = find_repo_root(args.path)
        conn = graph.connect(graph.store_path(root))
    except RepositoryError as exc:
        print(f"recall index: {exc}", file=sys.stderr)
        return 2
    except (OSError, sqlite3.Error) as exc:
        print(f"recall index: cannot open the index store under $RECALL_HOME: {exc}", file=sys.stderr)
        return 1
    try:
        stats = update(
            conn, root, progress=False if args.quiet else None, force=args.full, cap=args.max_files
        )
        if stats.capped:
            print(f"recall index: WARNING: {cap_note(stats.capped)}", file=sys.stderr)
        hist = None if args.no_history else index_history(root, full=args.full)
        if args.query:
            from recall_agent.architecture.engine import answer

            for i, a in enumerate(answer(conn, root, args.query)):
                print(f"### [{a.role}] {i}\n{a.content}\n")
            return 0
    except RepositoryError as exc:
        print(f"recall index: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("recall index: interrupted (the index keeps what was committed)", file=sys.stderr)
        return 130
    except (OSError, sqlite3.Error) as exc:
        print(f"recall index: {describe(exc)}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    if args.json:
        print(json.dumps(_summary_dict(stats, hist), indent=2))
    elif not args.quiet:
        print(_summary_text(stats, hist))
    return 0


def index_history(root, *, full: bool = False):
    """Read the repository's git history into its store (history.py); stats with a note when it has none."""
    from recall_agent.architecture import history

    try:
        return history.update(root, full=full)
    except history.HistoryError as exc:
        stats = history.HistoryStats(root, history.store_path(root))
        stats.note = str(exc)
        return stats


def _history_dict(hist) -> dict:
    return {
        "commits": hist.commits,
        "files": hist.files,
        "added": hist.added,
        "removed": hist.removed,
        "rebuilt": hist.rebuilt,
        "seconds": round(hist.seconds, 3),
        "note": hist.note,
        "store": str(hist.store),
    }


def _history_text(hist) -> str:
    if hist.note:
        return f"History: none read ({hist.note})"
    changed = f"{hist.added} new commits read" + (
        f", {hist.removed} rewritten ones undone" if hist.removed else ""
    )
    return f"History: {hist.commits} commits, {hist.files} files ({changed} in {hist.seconds:.2f} s)"


def _summary_dict(stats, hist=None) -> dict:
    size = stats.store.stat().st_size if stats.store.exists() else 0
    return {
        "root": str(stats.root),
        "store": str(stats.store),
        "store_bytes": size,
        "files": stats.files,
        "parsed": stats.parsed,
        "removed": stats.removed,
        "skipped": stats.skipped,
        "symbols": stats.symbols,
        "import_edges": stats.edges,
        "calls": stats.calls,
        "syntax_errors": stats.syntax_errors,
        "unread_lines": stats.unread_lines,
        "lines": stats.lines,
        "languages": stats.languages,
        "seconds": round(stats.seconds, 3),
        "phases_s": {k: round(v, 3) for k, v in stats.phases.items()},
        "capped_at": stats.capped,
        "notes": stats.notes,
        **({"history": _history_dict(hist)} if hist is not None else {}),
    }


def _summary_text(stats, hist=None) -> str:
    langs = ", ".join(f"{lang} {n}" for lang, n in stats.languages.items()) or "no source files"
    size = stats.store.stat().st_size if stats.store.exists() else 0
    lines = [
        f"Indexed {stats.root.name} ({stats.root}) in {stats.seconds:.2f} s: "
        f"{stats.parsed} files parsed, {stats.removed} removed, {stats.files} in the index ({langs})",
        f"{stats.symbols} symbols · {stats.edges} import edges · {stats.calls} call sites · "
        f"{stats.skipped} skipped",
        f"Store: {stats.store} ({size / 1e6:.1f} MB)",
    ]
    notes = [n for n in stats.notes if "syntax errors" not in n][:10]
    if stats.syntax_errors:
        by_lang = ", ".join(f"{lang} {n}" for lang, n in stats.syntax_errors_by_lang.items())
        share = stats.unread_lines / stats.lines if stats.lines else 0.0
        lines.append(
            f"{stats.syntax_errors} file(s) with syntax errors were indexed partially ({by_lang}):"
            f" {stats.unread_lines:,} of {stats.lines:,} lines ({share:.1%}) unread, the rest indexed"
        )
    lines += [f"  note: {n}" for n in notes]
    if hist is not None:
        lines.append(_history_text(hist))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
