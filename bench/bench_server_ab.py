"""This checkout against the release on one kept PostgreSQL store, interleaved: release, this checkout,
release, this checkout … each with the same queries and warm-up, so a machine whose load drifts during the
run (other jobs on shared cores) weighs on both alike. Prints one row per run and saves every row.

bench_server.py runs the release after this checkout and loads each once; on a loaded machine the order
alone moved the release's 2-process figure by 60 % (docs/benchmarks.md, issue 39 round 3). Needs a database
bench_server.py kept (`--database`) with `--size` learnings, in a schema both commits read:

    source .ci/services
    python bench/bench_server_ab.py --database recall_i39r3_1m --size 1000000 --release 9069176 \\
        --processes 2 --rounds 2 --results bench/results/server-pg-1m-ab.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_server as b  # noqa: E402
from release import release_tree  # noqa: E402


def run_once(tree: Path, url: str, queries: list[dict], work: Path, args: argparse.Namespace) -> dict:
    env = {"RECALL_HOME": str(work / "home"), "RECALL_DATABASE_URL": url, "PYTHONPATH": str(tree)}
    servers = b.start_servers(env, work / "server.log", args.processes, 1)
    cpu: list[float] = []
    db_cpu: list[float] = []
    try:
        warmup = queries[b.WARMUP_SLICE][: args.warmup]
        loaded = asyncio.run(
            b._load(
                [s.url for s in servers],
                queries,
                args.duration,
                args.concurrency,
                warmup,
                cpu=lambda: b.cpu_of(servers, cpu, url, db_cpu),
            )
        )
    finally:
        for server in servers:
            server.stop()
    requests = max(1, loaded["requests"])
    loaded["server_cpu_ms_per_request"] = round((cpu[1] - cpu[0]) * 1000 / requests, 2)
    loaded["postgres_cpu_ms_per_request"] = round((db_cpu[1] - db_cpu[0]) * 1000 / requests, 2)
    return loaded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--database", required=True, help="a database bench_server.py kept, holding --size learnings"
    )
    ap.add_argument("--size", type=int, default=1_000_000, help="learnings it holds (default 1000000)")
    ap.add_argument("--release", default="9069176", help="commit run as the release (default 9069176)")
    ap.add_argument("--processes", type=int, default=2, help="recall serve processes (default 2)")
    ap.add_argument("--rounds", type=int, default=2, help="release/this pairs (default 2)")
    ap.add_argument("--duration", type=float, default=15.0, help="seconds of timed load per run (default 15)")
    ap.add_argument("--concurrency", type=int, default=16, help="connections (default 16)")
    ap.add_argument(
        "--warmup", type=int, default=2000, help="untimed queries per server first (default 2000)"
    )
    ap.add_argument("--results", type=Path, help="JSON written (default: print only)")
    args = ap.parse_args()
    admin = os.environ.get("RECALL_BENCH_DATABASE_URL") or os.environ.get("RECALL_TEST_DATABASE_URL")
    if not admin:
        print(
            "set RECALL_BENCH_DATABASE_URL or RECALL_TEST_DATABASE_URL (source .ci/services)", file=sys.stderr
        )
        return 2
    url = urlunsplit(urlsplit(admin)._replace(path="/" + args.database))
    if not b.KeptDatabase(admin, args.database).holds(args.size):
        print(
            f"{args.database} does not hold {args.size} learnings: fill it with bench_server.py --database",
            file=sys.stderr,
        )
        return 2
    queries = b.make_queries(b.make_learnings(args.size), 20_000)
    rows = []
    with tempfile.TemporaryDirectory(prefix="recall-bench-ab-") as tmp:
        work = Path(tmp)
        trees = {f"release {args.release}": release_tree(work, args.release), "this checkout": b.ROOT}
        for n in range(args.rounds):
            for label, tree in trees.items():
                row = {"label": label, "round": n, **run_once(tree, url, queries, work, args)}
                rows.append(row)
                print(
                    f"{label:18} round {n}: {row['req_per_s']:6.1f} req/s  p50 {row['p50_ms']:6.2f}  p99"
                    f" {row['p99_ms']:7.2f} ms  server {row['server_cpu_ms_per_request']} + postgres"
                    f" {row['postgres_cpu_ms_per_request']} + client {row['client_cpu_ms_per_request']} ms CPU/req"
                    f"  per process {row['per_server_requests']}  load {row['loadavg_before'][0]}",
                    flush=True,
                )
    if args.results:
        keep = ("size", "processes", "duration", "concurrency", "warmup", "release", "database")
        args.results.write_text(
            json.dumps({**{k: getattr(args, k) for k in keep}, "rows": rows}, indent=2) + "\n"
        )
        print(f"saved {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
