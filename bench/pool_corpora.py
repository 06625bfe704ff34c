"""Pool a bench_capture result's per-corpus counts over a group of corpora (issue 33).

    python3 bench/pool_corpora.py bench/results/capture_round15_halves.json --half projects-heldout \
        --group new wakil flutter-docker-image cc-backend orpheus [--group older ...]

Prints stored, precision, recall and right resolutions of each system in the file (recall and the release
side by side) over each group's corpora, and over the rest of the half (the corpora in no group). It reads a saved result only: the figures
are the benchmark's own counts, summed, for reporting a part of a half (the projects a round added) beside
the whole; like the half's aggregate, they choose nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COUNTS = ("stored", "real", "found", "useful_labelled", "right")


def pooled(corpora: dict[str, dict], names: set[str]) -> dict[str, float | int | None]:
    """Summed counts of `names` and the figures they give (None where a denominator is 0)."""
    c = {k: sum(int(v.get(k) or 0) for name, v in corpora.items() if name in names) for k in COUNTS}

    def ratio(a: str, b: str) -> float | None:
        return round(c[a] / c[b], 3) if c[b] else None

    return c | {"precision": ratio("real", "stored"), "recall": ratio("found", "useful_labelled"),
                "right_resolution": ratio("right", "real")}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a bench_capture.py --out JSON")
    ap.add_argument(
        "--half", default="projects-heldout", help="the half in the file (default projects-heldout)"
    )
    ap.add_argument(
        "--group",
        nargs="+",
        action="append",
        required=True,
        metavar=("NAME", "CORPUS"),
        help="a name, then corpora (repeat for more groups)",
    )
    args = ap.parse_args(argv)
    if any(len(g) < 2 for g in args.group):
        ap.error("--group: a name, then at least one corpus")
    groups = [(g[0], set(g[1:])) for g in args.group]
    grouped = set().union(*(names for _name, names in groups))
    try:
        half = json.loads(args.results.read_text())["halves"][args.half]
    except (OSError, ValueError, KeyError) as exc:
        print(f"pool_corpora: cannot read half {args.half!r} of {args.results}: {exc}", file=sys.stderr)
        return 2
    for system, r in half.items():
        if not isinstance(r, dict) or "corpora" not in r:
            continue
        unknown = grouped - set(r["corpora"])
        if unknown:
            print(f"pool_corpora: not in {args.half}: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        for title, names in [*groups, ("the rest", set(r["corpora"]) - grouped)]:
            p = pooled(r["corpora"], names)
            figures = " / ".join("—" if p[k] is None else f"{p[k]:.3f}" for k in ("precision", "recall",
                                                                                   "right_resolution"))  # fmt: skip
            print(f"{system:<20}{title:<12} stored {p['stored']:>5}  P / R / right {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
