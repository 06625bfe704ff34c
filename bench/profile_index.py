"""Where a parse process's CPU goes: `recall index`'s per-file work (read, parse, queries, words, sites, rows)
and the parent's writes, profiled in one process over a slice of a large tree.

The slice is every Nth block of 300 files in `git ls-files` order (blocks keep a folder's files together, as
the real index does, so the identifier cache sees a realistic hit rate). The profile counts CPU time
(`time.process_time`), not wall time, so a loaded machine changes it less; cProfile's own overhead inflates
Python-heavy functions against C ones (tree-sitter's parse, SQLite), so read shares, not absolute seconds.

    python3 bench/profile_index.py bench/.cache/kernel/linux-source-6.1 --every 20   # bench/results/profile_index.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from recall_agent.architecture import graph, indexer  # noqa: E402

BLOCK = 300


def slice_jobs(tree: Path, every: int, offset: int) -> list[tuple[str, int, int, None]]:
    listed = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True, check=True).stdout
    jobs = []
    for i, rel in enumerate(listed.splitlines()):
        if (i // BLOCK) % every == offset:
            st = (tree / rel).stat()
            jobs.append((rel, st.st_mtime_ns, st.st_size, None))
    return jobs


def top(profile: cProfile.Profile, n: int) -> list[dict]:
    stats = pstats.Stats(profile)
    rows = []
    for (file, line, name), (_, calls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(file).name}:{line}({name})" if file != "~" else name
        rows.append(
            {
                "function": where,
                "calls": calls,
                "tottime_s": round(tottime, 3),
                "cumtime_s": round(cumtime, 3),
            }
        )
    rows.sort(key=lambda r: -r["tottime_s"])
    return rows[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path, help="a git checkout (the kernel: bench_large_repo.py unpacks it)")
    ap.add_argument("--every", type=int, default=20, help="profile every Nth block of 300 files")
    ap.add_argument("--offset", type=int, default=3)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--results", type=Path, default=HERE / "results" / "profile_index.json")
    args = ap.parse_args()
    tree = args.tree.resolve()
    jobs = slice_jobs(tree, args.every, args.offset)

    parse = cProfile.Profile(time.process_time)
    started = time.process_time()
    parse.enable()
    parsed = [p for i in range(0, len(jobs), 40) for p in indexer._parse_chunk(str(tree), jobs[i : i + 40])]
    parse.disable()
    parse_cpu = time.process_time() - started

    write = cProfile.Profile(time.process_time)
    with tempfile.TemporaryDirectory() as tmp:
        conn = graph.connect(Path(tmp) / "profile.sqlite")
        started = time.process_time()
        write.enable()
        with indexer._bulk_build(conn, True):
            for i in range(0, len(parsed), indexer.BATCH_FILES):
                with indexer._transaction(conn):
                    next_symbol = [conn.execute("SELECT coalesce(max(id), 0) + 1 FROM symbols").fetchone()[0]]
                    for p in parsed[i : i + indexer.BATCH_FILES]:
                        indexer._write_parsed(conn, p, next_symbol, fresh=True)
        write.disable()
        write_cpu = time.process_time() - started
        conn.close()

    result = {
        "tree": str(tree),
        "files": len(jobs),
        "every": args.every,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "parse_cpu_s": round(parse_cpu, 2),
        "write_cpu_s": round(write_cpu, 2),
        "parse_top": top(parse, args.top),
        "write_top": top(write, args.top),
    }
    print(f"{len(jobs)} files: parse {parse_cpu:.2f} s CPU, write {write_cpu:.2f} s CPU (profiled)")
    for label in ("parse_top", "write_top"):
        print(f"\n{label.split('_')[0]}: {'function':<58} {'calls':>8} {'tottime s':>9} {'cumtime s':>9}")
        for r in result[label][:15]:
            print(f"  {r['function'][:64]:<64} {r['calls']:>8} {r['tottime_s']:>9} {r['cumtime_s']:>9}")
    args.results.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved {args.results.relative_to(ROOT) if args.results.is_relative_to(ROOT) else args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
