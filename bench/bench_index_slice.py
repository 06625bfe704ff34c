"""CPU per file of `recall index`'s work on a fixed slice of a large tree, this checkout and a release run side
by side at the same moment, and whether both write the same rows.

The slice is every Nth block of 300 files in `git ls-files` order (as bench/profile_index.py). Each side runs
in its own process: every file parsed in-process (`indexer._parse_chunk`, what a parse worker does), then
the rows bulk-written to a throwaway SQLite file (what the parent does); CPU time of each step per parsed
file, and a digest of every table's rows. The two sides run at the same time, `--rounds` times, so a shared
machine's load falls on both alike (one after the other, CPU time moved ±15% between runs on this VM).

    python3 bench/bench_index_slice.py bench/.cache/kernel/linux-source-6.1 --release 4c93050 --rounds 3
    # instructions by function (deterministic, load-free), one side over every 8th file of the slice:
    valgrind --tool=callgrind --callgrind-out-file=cg.out python3 bench/bench_index_slice.py <tree> \
        --side --stride 8 --no-rows && callgrind_annotate --inclusive=yes cg.out
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BLOCK = 300


def slice_paths(tree: Path, every: int, offset: int) -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True, check=True).stdout
    return [rel for i, rel in enumerate(listed.splitlines()) if (i // BLOCK) % every == offset]


def measure(tree: Path, every: int, offset: int, stride: int = 1, rows: bool = True) -> dict:
    """One side (run with the checkout to measure first on sys.path); `stride`: every Nth file of the slice
    (a smaller run under valgrind), `rows`: digest the tables."""
    from recall_agent.architecture import graph, indexer

    jobs = []
    for rel in slice_paths(tree, every, offset):
        st = (tree / rel).stat()
        jobs.append((rel, st.st_mtime_ns, st.st_size, None))
    jobs = jobs[::stride]
    for suffix in (".c", ".h"):  # grammars loaded and queries compiled before the clock starts
        indexer._parse_chunk(str(tree), [j for j in jobs if j[0].endswith(suffix)][:1])
    started = time.process_time()
    parsed = [p for i in range(0, len(jobs), 40) for p in indexer._parse_chunk(str(tree), jobs[i : i + 40])]
    parse_cpu = time.process_time() - started
    count = sum(1 for p in parsed if p.lang)
    with tempfile.TemporaryDirectory() as tmp:
        conn = graph.connect(Path(tmp) / "slice.sqlite")
        started = time.process_time()
        with indexer._bulk_build(conn, True):
            for i in range(0, len(parsed), indexer.BATCH_FILES):
                with indexer._transaction(conn):
                    first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM symbols").fetchone()[0]
                    next_symbol = [first]
                    for p in parsed[i : i + indexer.BATCH_FILES]:
                        indexer._write_parsed(conn, p, next_symbol, fresh=True)
        write_cpu = time.process_time() - started
        digest = {}
        tables = ("files", "symbols", "imports", "calls", "sites", "file_text", "symbol_text", "site_text")
        for table in tables if rows else ():
            found = sorted(map(repr, map(tuple, conn.execute(f"SELECT * FROM {table}"))))
            digest[table] = [len(found), hashlib.sha256("\n".join(found).encode()).hexdigest()[:16]]
        conn.close()
    return {
        "files": len(jobs),
        "parsed": count,
        "parse_ms_per_file": round(1000 * parse_cpu / count, 3),
        "write_ms_per_file": round(1000 * write_cpu / count, 3),
        "cpu_ms_per_file": round(1000 * (parse_cpu + write_cpu) / count, 3),
        "loadavg": round(os.getloadavg()[0], 2),
        "rows": digest,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path, help="a git checkout (the kernel: bench_large_repo.py unpacks it)")
    ap.add_argument("--release", default="", help="the commit measured beside this checkout (required)")
    ap.add_argument("--every", type=int, default=40, help="every Nth block of 300 files")
    ap.add_argument("--offset", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--results", type=Path, default=HERE / "results" / "index_slice.json")
    ap.add_argument("--side", action="store_true", help="measure this checkout only (JSON on stdout)")
    ap.add_argument("--stride", type=int, default=1, help="with --side: every Nth file of the slice")
    ap.add_argument("--no-rows", action="store_true", help="with --side: no digest of the rows")
    args = ap.parse_args()
    tree = args.tree.resolve()
    if args.side:
        print(json.dumps(measure(tree, args.every, args.offset, args.stride, not args.no_rows)))
        return 0
    if not args.release:
        ap.error("--release is required (the commit measured beside this checkout)")
    sys.path.insert(0, str(HERE))
    from release import package_in, release_tree

    runs: dict[str, list[dict]] = {"checkout": [], f"release {args.release}": []}
    with tempfile.TemporaryDirectory() as tmp:
        rel = release_tree(Path(tmp), args.release)
        if package_in(rel) != "recall_agent":
            raise SystemExit(f"{args.release} predates the recall_agent package")
        sides = {"checkout": str(ROOT), f"release {args.release}": str(rel)}
        for _ in range(args.rounds):
            procs = {
                label: subprocess.Popen(
                    [sys.executable, __file__, str(tree), "--side"]
                    + ["--every", str(args.every), "--offset", str(args.offset)],
                    env={**os.environ, "PYTHONPATH": path},
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for label, path in sides.items()
            }
            for label, proc in procs.items():
                out, _ = proc.communicate()
                if proc.returncode:
                    raise SystemExit(f"{label} failed")
                runs[label].append(json.loads(out))
    for label, rows in runs.items():
        for r in rows:
            print(f"{label:<18} parsed {r['parsed']}  CPU ms/file: parse {r['parse_ms_per_file']:>6}"
                  f"  write {r['write_ms_per_file']:>6}  total {r['cpu_ms_per_file']:>6}  load {r['loadavg']}")  # fmt: skip
    same = all(r["rows"] == runs["checkout"][0]["rows"] for rows in runs.values() for r in rows)
    print(f"same rows on both sides: {same}")
    result = {"tree": str(tree), "every": args.every, "offset": args.offset, "same_rows": same, "runs": runs}
    args.results.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved {args.results.relative_to(ROOT) if args.results.is_relative_to(ROOT) else args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
