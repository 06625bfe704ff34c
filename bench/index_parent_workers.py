"""A whole `recall index` of a tree from scratch, with the CPU time of the parent (walk, writes, resolve) and of
the parse processes apart, and the phases. Run with `PYTHONPATH` set to the checkout to measure; two checkouts
started at the same moment share the machine's load alike (their CPU times compare, their wall times do not).

    PYTHONPATH=<checkout> python3 bench/index_parent_workers.py <tree> <empty folder for the index> > run.json
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    tree, home = Path(sys.argv[1]), Path(sys.argv[2])
    os.environ["RECALL_HOME"] = str(home)
    from recall_agent.architecture import graph, indexer

    started = time.perf_counter()
    conn = graph.connect(home / "index.sqlite")
    stats = indexer.update(conn, tree, progress=False)
    wall = time.perf_counter() - started
    own, pool = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "wall": round(wall, 1),
        "parent_cpu": round(own.ru_utime + own.ru_stime, 1),
        "workers_cpu": round(pool.ru_utime + pool.ru_stime, 1),
        "parent_maxrss_mb": own.ru_maxrss // 1024,
        "worker_maxrss_mb": pool.ru_maxrss // 1024,
        "phases": stats.phases,
        "symbols": stats.symbols,
        "calls": stats.calls,
        "edges": stats.edges,
        "files": stats.files,
        "load": os.getloadavg(),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":  # the parse pool spawns: its processes import this file without running it
    sys.exit(main())
