"""`recall catalog check|list|show`: validate and browse the merged antipattern catalog.

`check` is what a team runs (or CI) after editing `.recall/antipatterns/*.yaml`: every file and entry is
validated, and every detector is run against its entry's own bad example (must fire) and good example
(must not). Exit 0 when all is well, 1 when anything is wrong (one line per problem on stdout).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recall_agent.antipatterns.catalog import Antipattern, Catalog, load_catalog


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall catalog",
        description="Validate and browse the antipattern catalog: shipped entries, then "
        "$RECALL_HOME/antipatterns/*.yaml, then <repo>/.recall/antipatterns/*.yaml (later wins by id).",
    )
    parser.add_argument(
        "--repo", metavar="PATH", help="repository whose .recall/antipatterns to include (default: cwd)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{check,list,show}")
    sub.add_parser("check", help="validate catalogs and test every detector against its own examples")
    ls = sub.add_parser("list", help="one line per entry: id, severity, category, origin, detectors, name")
    ls.add_argument("--origin", choices=["shipped", "user", "repo"], help="only entries from this layer")
    show = sub.add_parser("show", help="one entry in full")
    show.add_argument("id")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    repo = Path(args.repo or ".").expanduser()
    if not repo.is_dir():
        print(f"recall catalog: --repo {repo}: not a directory", file=sys.stderr)
        return 2
    catalog = load_catalog(repo.resolve())
    if args.command == "check":
        return _check(catalog)
    if args.command == "list":
        return _list(catalog, args.origin)
    return _show(catalog, args.id)


def example_failures(entry: Antipattern) -> list[str]:
    """Detectors that miss their bad example or fire on their good example."""
    from recall_agent.antipatterns.source import ScanContext

    problems = []
    for i, det in enumerate(entry.detectors):
        kind = entry.example_language if entry.example_language in det.file_kinds else det.file_kinds[0]
        try:
            if not det.find(ScanContext(det.bad or entry.bad_example, kind)):
                problems.append(f"detectors[{i}]: does not fire on its bad example")
            if det.find(ScanContext(det.good or entry.good_example, kind)):
                problems.append(f"detectors[{i}]: fires on its good example")
        except Exception as exc:  # a detector that crashes is reported like any other problem
            problems.append(f"detectors[{i}]: failed: {type(exc).__name__}: {exc}")
    return problems


def _check(catalog: Catalog) -> int:
    problems = list(catalog.errors)
    for entry in catalog.entries.values():
        problems += [f"{entry.source_file}: (id {entry.id}).{p}" for p in example_failures(entry)]
    for line in problems:
        print(line)
    layers = {
        o: sum(1 for e in catalog.entries.values() if e.origin == o) for o in ("shipped", "user", "repo")
    }
    summary = ", ".join(f"{n} {o}" for o, n in layers.items() if n)
    detectors = sum(len(e.detectors) for e in catalog.entries.values())
    print(f"{len(catalog.entries)} entries ({summary}), {detectors} detectors, {len(problems)} problem(s)")
    return 1 if problems else 0


def _list(catalog: Catalog, origin: str | None) -> int:
    for e in sorted(catalog.entries.values(), key=lambda e: e.id):
        if origin and e.origin != origin:
            continue
        kinds = ",".join(sorted({d.kind for d in e.detectors})) or "-"
        print(f"{e.id:<40} {e.severity:<8} {e.category:<15} {e.origin:<7} {kinds:<22} {e.name}")
    return 0


def _show(catalog: Catalog, entry_id: str) -> int:
    entry = catalog.entries.get(entry_id)
    if entry is None:
        print(
            f"recall catalog: no entry with id {entry_id!r} (see `recall catalog list`)",
            file=sys.stderr,
        )
        return 1
    print(f"{entry.name}  [{entry.id}]")
    print(
        f"severity {entry.severity}, enforcement {entry.enforcement}, category {entry.category}, "
        f"languages {', '.join(entry.languages)}, from {entry.origin} ({entry.source_file})"
    )
    for label, text in (("What", entry.description), ("Why", entry.rationale), ("Fix", entry.remedy)):
        if text:
            print(f"\n{label}: {text}")
    print(f"\nBad ({entry.example_language}):\n{entry.bad_example.rstrip()}")
    print(f"\nGood:\n{entry.good_example.rstrip()}")
    if entry.detectors:
        print(
            "\nDetectors: " + ", ".join(d.kind + (f" ({', '.join(d.file_kinds)})") for d in entry.detectors)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
