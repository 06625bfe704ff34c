"""Where the team server's slow requests come from: bench_server.py's closed-loop load on a kept PostgreSQL
store, with every request recorded at the client (server, send time, latency, query kind), every garbage
collection in each server process (`gc.callbacks`, installed by a `sitecustomize` put first on the servers'
path), optionally the servers' access log (the time from the ASGI call to the last byte sent), each server's
CPU and the load generator's own. Prints one summary; `--out` keeps the raw records.

    source .ci/services
    python bench/server_tail.py --database recall_i39r3_1m                     # this checkout
    python bench/server_tail.py --database recall_i39r3_1m --tree 9069176      # the release
    python bench/server_tail.py --database recall_i39r3_1m --access-log --no-full-gc --pool 2

A diagnostic, not a benchmark: its figures went into docs/benchmarks.md (issue 39, fourth round).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_server as b  # noqa: E402
from release import package_in, release_tree  # noqa: E402

SITE = """\
import atexit, gc, json, os, sys, time
_t, _pauses = [0.0], []
def _note(phase, info):
    if phase == "start":
        _t[0] = time.perf_counter()
    else:
        _pauses.append([info["generation"], (time.perf_counter() - _t[0]) * 1000, time.time()])
gc.callbacks.append(_note)
atexit.register(lambda: json.dump(_pauses, open(os.environ["TAIL_GC_OUT"] + f"/gc-{os.getpid()}.json", "w")))
if os.environ.get("TAIL_NO_FULL_GC"):
    gc.set_threshold(700, 10, 2**31 - 1)
"""


def start(tree: Path, url: str, work: Path, n: int, args: argparse.Namespace) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "RECALL_HOME": str(work / "home"),
        "RECALL_DATABASE_URL": url,
        "PYTHONPATH": f"{work / 'site'}{os.pathsep}{tree}",
        "TAIL_GC_OUT": str(work),
        **({"TAIL_NO_FULL_GC": "1"} if args.no_full_gc else {}),
        **({"RECALL_PG_POOL": str(args.pool)} if args.pool else {}),
    }
    level = "info" if args.access_log else "warning"
    proc = subprocess.Popen(
        [sys.executable, "-m", package_in(None if tree == b.ROOT else tree), "serve", "--port", str(port)]
        + ["--log-level", level, "--workers", "1"],
        env=env,
        cwd=tree,
        stdout=(work / f"server-{n}.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/health", timeout=10).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"server {n} did not start; see {work}/server-{n}.log")


async def load(urls: list[str], queries: list[dict], args: argparse.Namespace, procs: list) -> dict:
    conns = [b.Connection(urls[k % len(urls)]) for k in range(args.concurrency)]
    for q in queries[b.WARMUP_SLICE][: args.warmup]:
        for j in range(min(len(urls), args.concurrency)):
            await conns[j].post(b.DEFAULT_RETRIEVAL_PATH, q)
    records: list[tuple[int, float, float, int]] = []
    stop_at = time.perf_counter() + args.duration

    async def worker(offset: int) -> None:
        i = offset
        while time.perf_counter() < stop_at:
            t0, sent = time.perf_counter(), time.time()
            await conns[offset].post(b.DEFAULT_RETRIEVAL_PATH, queries[i % len(queries)])
            records.append((offset % len(urls), sent, (time.perf_counter() - t0) * 1000, i % 10))
            i += args.concurrency

    load_before, cpu0, server0 = os.getloadavg()[0], time.process_time(), [b._proc_cpu(p.pid) for p in procs]
    started = time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(args.concurrency)))
    elapsed = time.perf_counter() - started
    server = [b._proc_cpu(p.pid) - c for p, c in zip(procs, server0, strict=True)]
    for conn in conns:
        await conn.close()
    return {
        "records": records,
        "seconds": elapsed,
        "client_cpu_s": time.process_time() - cpu0,
        "server_cpu_s": server,
        "load_before": load_before,
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 1) if ordered else 0.0


def access_ms(log: Path, since: float) -> list[float]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "access" and entry.get("path") == b.DEFAULT_RETRIEVAL_PATH:
            stamp = time.mktime(time.strptime(entry["ts"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
            if stamp >= int(since):
                out.append(entry["ms"])
    return out


def summary(run: dict, work: Path, n_servers: int, access_log: bool) -> dict:
    records = run["records"]
    lat = [r[2] for r in records]
    start = min(r[1] for r in records)
    out: dict = {
        "req_per_s": round(len(lat) / run["seconds"], 1),
        "client_ms": {q: pct(lat, v) for q, v in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))},
        "per_server_requests": [sum(1 for r in records if r[0] == k) for k in range(n_servers)],
        "client_cpu_ms_per_request": round(run["client_cpu_s"] * 1000 / len(lat), 3),
        "server_cpu_ms_per_request": round(sum(run["server_cpu_s"]) * 1000 / len(lat), 3),
        "load_before": round(run["load_before"], 2),
        "slow_over_100ms": sum(1 for x in lat if x > 100),
    }
    if access_log:
        ms = [x for k in range(n_servers) for x in access_ms(work / f"server-{k}.log", start)]
        out["server_ms"] = {
            q: pct(ms, v) for q, v in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
        }
    out["collections"] = {}
    for f in sorted(work.glob("gc-*.json")):
        pauses = [p for p in json.loads(f.read_text()) if p[2] >= start]
        young = [p[1] for p in pauses if p[0] < 2]
        out["collections"][f.stem] = {
            "full_ms": [round(p[1], 1) for p in pauses if p[0] == 2],
            "young": len(young),
            "young_p90_ms": pct(young, 0.9),
            "young_max_ms": pct(young, 1.0),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database", required=True, help="a database bench_server.py kept (--database)")
    ap.add_argument("--size", type=int, default=1_000_000, help="learnings it holds (default 1000000)")
    ap.add_argument("--tree", default="", help="a commit to run instead of this checkout (e.g. the release)")
    ap.add_argument("--processes", type=int, default=2, help="recall serve processes (default 2)")
    ap.add_argument("--concurrency", type=int, default=16, help="connections (default 16)")
    ap.add_argument("--duration", type=float, default=15.0, help="seconds of timed load (default 15)")
    ap.add_argument(
        "--warmup", type=int, default=2000, help="untimed queries per server first (default 2000)"
    )
    ap.add_argument("--access-log", action="store_true", help="servers at --log-level info: server-side ms")
    ap.add_argument("--no-full-gc", action="store_true", help="servers without automatic full collections")
    ap.add_argument("--pool", type=int, help="RECALL_PG_POOL of the servers")
    ap.add_argument("--out", type=Path, help="keep the raw records and logs in this folder")
    args = ap.parse_args()
    admin = os.environ.get("RECALL_BENCH_DATABASE_URL") or os.environ.get("RECALL_TEST_DATABASE_URL")
    if not admin:
        print("set RECALL_TEST_DATABASE_URL (source .ci/services)", file=sys.stderr)
        return 2
    url = urlunsplit(urlsplit(admin)._replace(path="/" + args.database))
    queries = b.make_queries(b.make_learnings(args.size), 20_000)
    with tempfile.TemporaryDirectory(prefix="recall-tail-") as tmp:
        work = args.out or Path(tmp)
        (work / "site").mkdir(parents=True, exist_ok=True)
        (work / "site" / "sitecustomize.py").write_text(SITE)
        tree = release_tree(Path(tmp), args.tree) if args.tree else b.ROOT
        procs, urls = [], []
        try:
            for n in range(args.processes):
                proc, base = start(tree, url, work, n, args)
                procs.append(proc)
                urls.append(base)
            run = asyncio.run(load(urls, queries, args, procs))
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(30)
        result = summary(run, work, len(urls), args.access_log)
        if args.out:
            (work / "records.json").write_text(json.dumps(run["records"]))
    print(json.dumps({"tree": args.tree or "this checkout", **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
