"""`recall serve` under load: learnings queries/s and latency at 100k learnings, SQLite vs PostgreSQL;
8 concurrent writers x 500 learnings must store exactly 4000.

The server runs as its own process (`python -m recall_agent serve` on 127.0.0.1); this script is the load
generator, a second process driving it with async httpx (a fixed number of concurrent connections for a
fixed time). Both share the machine's 2 cores, so the numbers are a floor for a dedicated server.

Store contents: `--size` synthetic learnings over 20 repositories, made from 16 real error shapes with
distinct names (so they are distinct errors); loaded with the stores' bulk paths (SQLite `add_many`,
PostgreSQL `bulk_load`, i.e. COPY) — the write path itself is measured by the writers test.
Query mix (all against repo "bench-repo"): 50% a stored error seen again (other line numbers and paths:
same fingerprint), 30% a new error of a known shape (lexical candidates, usually no match), 20% task
context (file paths + task type).

Each server first answers `--warmup` distinct queries (default 2,000, never timed), as a server that has been
up for a while has: its caches hold term counts, ranked full-text hits and loaded learnings, never answers.
The previous release (`--release`, default the commit before the lean-core work) runs the same load on its
own copy of each store in the same run. Before each load, an in-process breakdown of one request (wall,
CPU and store time per query kind, cold and warm caches, the access-count flush) is measured on the store.

    python bench/bench_server.py                       # 100k learnings, 10 s per store, 16 connections, 2 workers
    python bench/bench_server.py --size 10000 --duration 5
    # several `recall serve` processes (hosts behind a balancer) on one store, at a million learnings:
    python bench/bench_server.py --size 1000000 --stores postgresql --workers 1 --processes 1,2 \
        --results bench/results/server-1m.json
PostgreSQL: RECALL_BENCH_DATABASE_URL or RECALL_TEST_DATABASE_URL (a fresh database is created and dropped
there; `source .ci/services` starts one); without either only SQLite runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from release import LEAN_CORE_BASE, package_in, release_tree  # noqa: E402  (bench/: this script's folder)

from recall_agent.config import DEFAULT_RETRIEVAL_PATH  # noqa: E402
from recall_agent.models import Learning  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "server.json"
REPO = "bench-repo"
REPOS = [REPO] + [f"repo-{i}" for i in range(19)]
TARGET_RPS, TARGET_P99_MS = 500, 50.0
BREAKDOWN_SLICE = slice(10_000, 12_000)  # in-process breakdown queries: not among the load's first 10k
WARMUP_SLICE = slice(12_000, 20_000)  # server warm-up queries: not among the timed ones either

SHAPES = [
    "ModuleNotFoundError: No module named '{a}'",
    "ImportError: cannot import name '{A}' from '{a}.{b}' (/srv/app/{a}/{b}.py)",
    "KeyError: '{a}_{b}'",
    "AttributeError: '{A}' object has no attribute '{a}_{b}'",
    "TypeError: {a}_{b}() got an unexpected keyword argument '{b}'",
    "FileNotFoundError: [Errno 2] No such file or directory: '/srv/data/{a}/{b}.json'",
    "error[E0425]: cannot find value `{a}_{b}` in this scope\n --> src/{a}.rs:{n}:{m}",
    "src/{a}.ts({n},{m}): error TS2304: Cannot find name '{A}'.",
    "django.db.utils.OperationalError: no such table: {a}_{b}",
    'npm ERR! code ERESOLVE\nnpm ERR! Could not resolve dependency: peer {a}@"^{n}.0.0" from {b}@{m}.1.0',
    'psycopg.errors.UndefinedColumn: column "{a}_{b}" does not exist\nLINE {n}: SELECT {a}_{b} FROM {b}',
    'AssertionError: assert {n} == {m}\n  File "tests/test_{a}.py", line {n}, in test_{b}',
    "fatal: pathspec '{a}/{b}.txt' did not match any files",
    "ValueError: invalid literal for int() with base 10: '{a}'",
    "go: module github.com/{a}/{b}@latest found, but does not contain package github.com/{a}/{b}/{A}",
    'java.lang.NullPointerException: Cannot invoke "{A}.{a}()" because "{b}" is null',
]
TASKS = ["ci_fix", "migration", "feature", "refactor", "bug_fix", "test", "docs", "dependency"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))


def _error(rng: random.Random, shape: str, a: str, b: str) -> str:
    return shape.format(
        a=a, b=b, A=a.capitalize() + b.capitalize(), n=rng.randint(1, 400), m=rng.randint(1, 80)
    )


def make_learnings(size: int, seed: int = 11) -> list[tuple[Learning, str, str, str]]:
    """(learning, shape, a, b): the names let queries re-create the same error with other numbers."""
    rng = random.Random(seed)
    out = []
    for n in range(size):
        shape = SHAPES[n % len(SHAPES)]
        a, b = f"{_word(rng)}{n}", _word(rng)
        learning = Learning(
            repo=REPO if n % 4 == 0 else rng.choice(REPOS),
            error_signatures=[_error(rng, shape, a, b)],
            resolution_summary=f"Fix #{n}: {_word(rng)} the {_word(rng)} before calling {a}",
            file_paths_touched=[f"src/{_word(rng)}/mod_{n % 997}.py"],
            task_type=TASKS[n % len(TASKS)],
        )
        out.append((learning, shape, a, b))
    return out


def make_queries(data: list[tuple[Learning, str, str, str]], count: int, seed: int = 5) -> list[dict]:
    rng = random.Random(seed)
    same_repo = [d for d in data if d[0].repo == REPO]
    queries = []
    for i in range(count):
        kind = i % 10
        if kind < 5:  # a stored error seen again (other numbers/paths: same fingerprint)
            _, shape, a, b = rng.choice(same_repo)
            queries.append(
                {"match_type": "error_signature", "error_text": _error(rng, shape, a, b), "repo": REPO}
            )
        elif kind < 8:  # a new error of a known shape
            shape = rng.choice(SHAPES)
            text = _error(rng, shape, _word(rng) + "x", _word(rng))
            queries.append({"match_type": "auto", "error_text": text, "repo": REPO, "file_paths": []})
        else:  # task context
            queries.append(
                {
                    "match_type": "task_context",
                    "repo": REPO,
                    "file_paths": [f"src/pkg/mod_{rng.randint(0, 996)}.py"],
                    "task_type": rng.choice(TASKS),
                }
            )
    return queries


# --------------------------------------------------------------------------- server process


class Server:
    def __init__(self, env: dict[str, str], log: Path, workers: int = 1) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("w")
        tree = Path(env["PYTHONPATH"]) if env.get("PYTHONPATH") else None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", package_in(tree)]
            + ["serve", "--port", str(self.port), "--log-level", "warning"]
            + ["--workers", str(workers)],
            env={**os.environ, **env},
            cwd=tree
            or ROOT,  # `-m` puts the working directory first on sys.path: the tree's package, not ours
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=10).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError(f"server did not start; see {log}")

    def cpu_seconds(self) -> float:
        """User + system CPU of the server process and its descendants (uvicorn's workers) so far."""
        return sum(_proc_cpu(pid) for pid in _descendants(self.proc.pid))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in task.read_text().split())
    return out


def _proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


# --------------------------------------------------------------------------- load


class Connection:
    """One keep-alive HTTP/1.1 connection speaking just enough of the protocol to POST JSON and read the
    answer (Content-Length bodies). The load generator shares the 2 cores with the server: httpx cost
    ~1.5 ms of CPU per request, this costs ~0.1 ms, so the numbers measure the server, not the client."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, payload: dict) -> tuple[int, bytes]:
        try:
            return await self._post(path, payload)
        except (asyncio.IncompleteReadError, ConnectionError):
            # the server closed an idle keep-alive connection (uvicorn: after 5 s): reconnect once, as
            # HTTP clients do; only a connection that was already open can be stale
            await self.close()
            return await self._post(path, payload)

    async def _post(self, path: str, payload: dict) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        body = json.dumps(payload).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        status_line, *headers = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        length = next(int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:"))
        data = await self.reader.readexactly(length)
        if any(h.lower() == "connection: close" for h in headers):
            await self.close()
        return int(status_line.split()[1]), data

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def _load(
    urls: list[str],
    queries: list[dict],
    duration: float,
    concurrency: int,
    warmup: list[dict] | None = None,
    cpu: object = None,
) -> dict:
    """`concurrency` connections for `duration` seconds, spread round-robin over the servers in `urls`
    (several `recall serve` processes behind a balancer); `cpu()` is called as the timed load starts and
    ends (the servers' CPU time)."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    per_server = [0] * len(urls)  # requests answered by each server process
    conns = [Connection(urls[k % len(urls)]) for k in range(concurrency)]
    load_before = os.getloadavg()
    stop_at = 0.0

    async def worker(offset: int) -> None:
        i, conn = offset, conns[offset]
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            status, _ = await conn.post(DEFAULT_RETRIEVAL_PATH, queries[i % len(queries)])
            latencies.append((time.perf_counter() - t0) * 1000)
            statuses[status] = statuses.get(status, 0) + 1
            per_server[offset % len(urls)] += 1
            i += concurrency

    # warm-up: imports, connections, and with `warmup` the caches of a server that has been answering for a
    # while (term counts, ranked full-text hits, loaded learnings: never answers; no timed query repeats);
    # every server process answers all of them (each holds its own caches)
    servers = min(len(urls), concurrency)  # conns[j] talks to urls[j] for j < servers
    for k, q in enumerate(warmup or queries[-50:]):
        for j in range(servers):
            await conns[j if servers > 1 else k % concurrency].post(DEFAULT_RETRIEVAL_PATH, q)
    if cpu:
        cpu()  # type: ignore[operator]
    started, client_cpu = time.perf_counter(), time.process_time()
    stop_at = started + duration
    await asyncio.gather(*(worker(k) for k in range(concurrency)))
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu  # this load generator's own CPU on the same cores
    if cpu:
        cpu()  # type: ignore[operator]
    for conn in conns:
        await conn.close()
    latencies.sort()
    return {
        "requests": len(latencies),
        "seconds": round(elapsed, 2),
        "req_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "per_server_requests": per_server,
        "client_cpu_ms_per_request": round(client_cpu * 1000 / max(1, len(latencies)), 3),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


OPEN_LOOP_CONNECTIONS = 64  # connections an open-loop load may use at once (a request waits for a free one)


async def _open_loop(urls: list[str], queries: list[dict], duration: float, rate: float) -> dict:
    """Requests sent on a fixed schedule (`rate` a second, whatever the answers' pace), over up to
    OPEN_LOOP_CONNECTIONS keep-alive connections spread over the servers; a request's latency counts from
    its scheduled send time, so time spent waiting for a free connection or behind a late generator counts
    as queueing. The closed-loop load (16 connections, each sending its next request when the last is
    answered) measures the saturated servers; this one, the latency a given request rate sees."""
    free: asyncio.Queue[Connection] = asyncio.Queue()
    for k in range(OPEN_LOOP_CONNECTIONS):
        free.put_nowait(Connection(urls[k % len(urls)]))
    latencies: list[float] = []
    statuses: dict[int, int] = {}

    async def send(i: int, at: float) -> None:
        conn = await free.get()
        try:
            status, _ = await conn.post(DEFAULT_RETRIEVAL_PATH, queries[i % len(queries)])
        finally:
            free.put_nowait(conn)
        latencies.append((time.perf_counter() - at) * 1000)
        statuses[status] = statuses.get(status, 0) + 1

    load_before = os.getloadavg()
    started = time.perf_counter()
    tasks = []
    for i in range(int(duration * rate)):
        at = started + i / rate
        if (delay := at - time.perf_counter()) > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(send(i, at)))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    while not free.empty():
        await free.get_nowait().close()
    latencies.sort()
    return {
        "rate": rate,
        "requests": len(latencies),
        "req_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "loadavg_before": [round(x, 2) for x in load_before],
    }


async def _writers(urls: list[str], writers: int, each: int) -> dict:
    """`writers` concurrent writers, spread over the servers in `urls`, `each` new learnings apiece."""
    rng = random.Random(99)
    statuses: dict[int, int] = {}
    clients = [httpx.AsyncClient(base_url=url, timeout=60) for url in urls]
    async with contextlib.AsyncExitStack() as stack:
        for c in clients:
            await stack.enter_async_context(c)

        async def writer(w: int) -> None:
            client = clients[w % len(clients)]
            for i in range(each):
                body = {
                    "repo": REPOS[(w + i) % len(REPOS)],
                    "error_signatures": [f"RuntimeError: writer {w} item {i} failed in '{_word(rng)}'"],
                    "resolution_summary": f"writer {w} fixed item {i}",
                    "file_paths_touched": [f"src/w{w}/i{i}.py"],
                }
                r = await client.post("/v1/learnings", json=body)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

        started = time.perf_counter()
        await asyncio.gather(*(writer(w) for w in range(writers)))
        elapsed = time.perf_counter() - started
        stored = (await clients[-1].get("/health")).json()["learnings"]
    return {
        "writers": writers,
        "servers": len(urls),
        "each": each,
        "stored": stored,
        "exact": stored == writers * each and statuses == {201: writers * each},
        "seconds": round(elapsed, 2),
        "writes_per_s": round(writers * each / elapsed, 1),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
    }


# --------------------------------------------------------------------------- stores


def fill_sqlite(home: Path, data: list[tuple[Learning, str, str, str]]) -> float:
    from recall_agent.learnings.store import open_store

    t0 = time.perf_counter()
    with open_store(home) as store:
        for i in range(0, len(data), 2000):
            store.add_many([d[0] for d in data[i : i + 2000]], consolidate=False)  # the load, not the merging
    return time.perf_counter() - t0


FILL_PROCESSES = 3  # parallel COPY fillers (each normalizes and keys its share: the fill is CPU-bound)
FILL_PG = (
    "import sys\n"
    "from recall_agent.learnings.pg_store import PgStore\n"
    "from recall_agent.models import Learning\n"
    "part, parts = int(sys.argv[3]), int(sys.argv[4])\n"
    "lines = open(sys.argv[2]).read().splitlines()\n"
    "batches = [lines[i : i + 5000] for i in range(0, len(lines), 5000)][part::parts]\n"
    "with PgStore(sys.argv[1]) as store:\n"
    "    for batch in batches:\n"
    "        store.bulk_load([Learning.model_validate_json(line) for line in batch])\n"
)


def fill_pg(url: str, data: list[tuple[Learning, str, str, str]], work: Path) -> float:
    t0 = time.perf_counter()
    fill_with(None, url, data, work)
    return time.perf_counter() - t0


def fill_with(release: Path | None, url: str, data: list[tuple[Learning, str, str, str]], work: Path) -> None:
    """Bulk-load `data` with FILL_PROCESSES processes of `release`'s own code (None: this checkout; the
    release has its schema and its bulk path), then VACUUM ANALYZE."""
    import psycopg

    rows = work / "learnings.jsonl"
    if not rows.exists():
        rows.write_text("".join(learning.model_dump_json() + "\n" for learning, *_ in data))
    env = {**os.environ, "PYTHONPATH": str(release or ROOT)}
    code = FILL_PG.replace("recall_agent.", package_in(release) + ".")
    procs = [
        subprocess.Popen(  # cwd: `-c` puts the working directory first on sys.path, ahead of PYTHONPATH
            [sys.executable, "-c", code, url, str(rows), str(k), str(FILL_PROCESSES)],
            env=env,
            cwd=release or ROOT,
        )
        for k in range(FILL_PROCESSES)
    ]
    if any(p.wait() for p in procs):
        raise RuntimeError("a fill process failed")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


class PgDatabase:
    """A fresh database on the bench's PostgreSQL server, dropped afterwards."""

    def __init__(self, admin_url: str) -> None:
        import psycopg

        self.admin_url = admin_url
        self.name = "recall_bench_" + uuid.uuid4().hex[:10]
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        self.url = urlunsplit(urlsplit(admin_url)._replace(path="/" + self.name))

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


class KeptDatabase:
    """A named database on the bench's server, kept between runs (`--database`): filled once, reused while it
    holds `size` learnings (a million takes minutes to fill)."""

    def __init__(self, admin_url: str, name: str) -> None:
        import psycopg

        self.name = name
        with psycopg.connect(admin_url, autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
        self.url = urlunsplit(urlsplit(admin_url)._replace(path="/" + name))

    def holds(self, size: int) -> bool:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            if not conn.execute("SELECT to_regclass('learnings')").fetchone()[0]:
                return False
            return conn.execute("SELECT count(*) FROM learnings").fetchone()[0] == size

    def reset(self, admin_url: str) -> None:
        """Empty it again (a fill that did not finish)."""
        import psycopg

        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        """Kept: nothing to do."""


def open_database(admin_url: str, name: str | None) -> PgDatabase | KeptDatabase:
    return KeptDatabase(admin_url, name) if name else PgDatabase(admin_url)


def start_servers(env: dict[str, str], log: Path, processes: int, workers: int) -> list[Server]:
    """`processes` separate `recall serve` processes (each `--workers workers`) on one store."""
    servers: list[Server] = []
    try:
        for n in range(processes):
            servers.append(Server(env, log.with_name(f"{log.stem}-{n}.log"), workers))
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


def save_partial(results: dict, args: argparse.Namespace) -> None:
    """What is measured so far, so a long run that fails late keeps its figures (`partial: true`)."""
    if not args.no_save:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps({**results, "partial": True}, indent=2) + "\n")


def run_store(
    label: str, env: dict[str, str], work: Path, queries: list[dict], args: argparse.Namespace
) -> dict:
    """The load against 1, 2, … server processes (`--processes`) on the same store; the first count's
    figures at the top level, every count's under `by_processes`."""
    by_processes: dict[str, dict] = {}
    for processes in args.processes:
        servers = start_servers(env, work / f"server-{label}-p{processes}.log", processes, args.workers)
        urls = [s.url for s in servers]
        warmup = queries[WARMUP_SLICE][: args.warmup] if args.warmup else None
        try:
            cpu: list[float] = []
            db_cpu: list[float] = []
            database = env.get("RECALL_DATABASE_URL", "")
            sample = functools.partial(cpu_of, servers, cpu, database, db_cpu)
            loaded = asyncio.run(_load(urls, queries, args.duration, args.concurrency, warmup, cpu=sample))
            if db_cpu:  # backends that closed during the load are missed: a floor
                loaded["postgres_cpu_ms_per_request"] = round(
                    (db_cpu[1] - db_cpu[0]) * 1000 / max(1, loaded["requests"]), 2
                )
            loaded["server_cpu_ms_per_request"] = round(
                (cpu[1] - cpu[0]) * 1000 / max(1, loaded["requests"]), 2
            )
            # one connection: the service time of a request, without queueing behind others
            single = asyncio.run(_load(urls[:1], queries[::-1], min(args.duration, 5.0), 1))
            # --rate: the same servers at a fixed request rate (open loop), beside the closed-loop figures
            scheduled = (
                asyncio.run(_open_loop(urls, args.open_queries, args.duration, args.rate))
                if args.rate
                else None
            )
        finally:
            for server in servers:
                server.stop()
        by_processes[str(processes)] = {
            **loaded,
            "one_connection": {k: single[k] for k in ("req_per_s", "p50_ms", "p99_ms", "requests")},
            **({"open_loop": scheduled} if scheduled else {}),
        }
        print(
            f"{label} x{processes}: {loaded['req_per_s']} req/s, p99 {loaded['p99_ms']} ms, load"
            f" {loaded['loadavg_before'][0]}",
            flush=True,
        )
    first = by_processes[str(args.processes[0])]
    return {**first, "by_processes": by_processes}


def cpu_of(servers: list[Server], into: list[float], database_url: str, db_into: list[float]) -> None:
    """The servers' CPU seconds so far, and (PostgreSQL on this machine) their database backends'."""
    into.append(sum(s.cpu_seconds() for s in servers))
    if database_url:
        db_into.append(_backend_cpu(database_url))


def _backend_cpu(url: str) -> float:
    """CPU seconds of the PostgreSQL backends serving recall on `url`'s database (same machine: /proc)."""
    if not url:
        return 0.0
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        pids = [
            r[0]
            for r in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND application_name = 'recall'"
            )
        ]
    return sum(_proc_cpu(pid) for pid in pids)


def run_writers(label: str, env: dict[str, str], work: Path, args: argparse.Namespace) -> dict:
    processes = max(args.processes)
    servers = start_servers(env, work / f"writers-{label}.log", processes, args.workers)
    try:
        return asyncio.run(_writers([s.url for s in servers], 8, 500))
    finally:
        for server in servers:
            server.stop()


# --------------------------------------------------------------------------- per-request breakdown

KINDS = ("stored error again", "new error", "task context")  # make_queries' mix: 5 / 3 / 2 of every 10


def _kind(i: int) -> str:
    return KINDS[0] if i % 10 < 5 else KINDS[1] if i % 10 < 8 else KINDS[2]


def breakdown(store: object, queries: list[dict], count: int = 2000) -> dict:
    """Where one request's server time goes, measured in-process over the filled store (no HTTP): the
    ranking's wall and CPU time per query kind, split into the store session (candidate reads: SQL and
    caches) and the rest (normalizing the query, scoring, building the answer); and what one access-count
    flush costs (a worker writes one a second). The first `count` queries run twice: cold caches, then
    warm (what a long-running worker sees for repeated questions)."""
    import contextlib

    from recall_agent.learnings import answer, request_of

    session_s = [0.0]
    inner = store.session  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def timed_session():  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        with inner():
            yield
        session_s[0] += time.perf_counter() - t0

    store.session = timed_session  # type: ignore[attr-defined]
    requests = [request_of(q) for q in queries[:count]]
    out: dict = {}
    try:
        for label in ("cold", "warm"):
            per_kind: dict[str, dict[str, list[float]]] = {
                k: {"wall": [], "cpu": [], "store": []} for k in KINDS
            }
            for i, req in enumerate(requests):
                session_s[0] = 0.0
                w0, c0 = time.perf_counter(), time.process_time()
                answer(store, req, record_access=False)  # type: ignore[arg-type]
                row = per_kind[_kind(i)]
                row["wall"].append((time.perf_counter() - w0) * 1000)
                row["cpu"].append((time.process_time() - c0) * 1000)
                row["store"].append(session_s[0] * 1000)
            out[label] = {kind: _spread(rows) for kind, rows in per_kind.items()}
    finally:
        del store.session  # type: ignore[attr-defined]
    ids = [c.learning.id for c in store.candidates_by_context(REPO, [], "ci_fix", 1000)]  # type: ignore[attr-defined]
    flushes = []
    for _ in range(5):
        t0 = time.perf_counter()
        store.record_access(ids)  # type: ignore[attr-defined]
        flushes.append((time.perf_counter() - t0) * 1000)
    out["access_flush_ms"] = {"ids": len(ids), "median": round(statistics.median(flushes), 2)}
    return out


def _spread(rows: dict[str, list[float]]) -> dict:
    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 2)

    return {
        "n": len(rows["wall"]),
        "wall_p50": pct(rows["wall"], 0.5),
        "wall_p99": pct(rows["wall"], 0.99),
        "cpu_p50": pct(rows["cpu"], 0.5),
        "cpu_p99": pct(rows["cpu"], 0.99),
        "store_p50": pct(rows["store"], 0.5),
        "store_p99": pct(rows["store"], 0.99),
    }


# --------------------------------------------------------------------------- quality


def quality(pg_admin: str | None) -> dict:
    """The learnings benchmark's quality run (bench/bench_learnings.py: corpus, split, metrics) with the
    same ranking over the SQLite store and over PostgreSQL: the numbers must be equal."""
    import bench_learnings as bl

    from recall_agent.learnings import retrieval
    from recall_agent.learnings.store import open_store
    from recall_agent.models import LearningRetrievalRequest

    learn, positives, negatives = bl.split(bl.load_corpus())
    queries = positives + negatives
    truth = [q["cause"] if q["kind"] == "cause" else None for q in queries]

    def run(store: object) -> tuple[list[list[str]], list[list[tuple[str, float]]]]:
        by_id = {}
        for r in learn:
            lid, _ = store.add(
                Learning(repo=bl.REPO, error_signatures=[r["text"]], resolution_summary=r["resolution"]),
                consolidate=False,
            )
            by_id[lid] = r["cause"]
        ranked, scored = [], []
        for q in queries:
            req = LearningRetrievalRequest(match_type="error_signature", error_text=q["text"], repo=bl.REPO)
            matches = retrieval.retrieve(store, req, record_access=False).matches
            ranked.append([by_id[m.learning_id] for m in matches])
            scored.append([(by_id[m.learning_id], m.similarity) for m in matches])
        return ranked, scored

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp)) as lite:
        lite_ranked, lite_scored = run(lite)
    out["sqlite"] = bl.metrics(lite_ranked, truth)
    if pg_admin:
        from recall_agent.learnings.pg_store import PgStore

        db = PgDatabase(pg_admin)
        try:
            with PgStore(db.url) as pg:
                pg_ranked, pg_scored = run(pg)
        finally:
            db.drop()
        out["postgresql"] = bl.metrics(pg_ranked, truth)
        out["identical_answers"] = round(
            sum(a == b for a, b in zip(lite_scored, pg_scored, strict=True)) / len(queries), 4
        )
    out["queries"] = len(queries)
    return out


# --------------------------------------------------------------------------- main


def _counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts like 1,2, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected counts of at least 1, got {text!r}")
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="learnings in each store (default 100000)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of load per store (default 10)")
    ap.add_argument("--concurrency", type=int, default=16, help="concurrent connections (default 16)")
    ap.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="uvicorn workers of each server process (default: one per core)",
    )
    ap.add_argument(
        "--processes",
        type=_counts,
        default=[1],
        help="separate `recall serve` processes on one store, load spread over them; a list runs each"
        " (default 1; e.g. --workers 1 --processes 1,2)",
    )
    ap.add_argument("--pg", dest="stores", action="store_const", const=["postgresql"], help="PostgreSQL only")
    ap.add_argument(
        "--stores",
        type=lambda t: [x for x in t.split(",") if x],
        default=["sqlite", "postgresql"],
        help="stores to run (default sqlite,postgresql)",
    )
    ap.add_argument("--results", type=Path, default=RESULTS, help=f"JSON written (default {RESULTS.name})")
    ap.add_argument(
        "--warmup",
        type=int,
        default=2000,
        help="distinct queries each server answers before the timed load (default 2000; 0: 50, imports only)",
    )
    ap.add_argument(
        "--release",
        default=LEAN_CORE_BASE,
        help=f"commit run side by side as the previous release (default {LEAN_CORE_BASE}; '' skips)",
    )
    ap.add_argument(
        "--database",
        help="PostgreSQL: a database of this name, kept after the run and reused while it holds --size"
        " learnings (default: a fresh one, dropped)",
    )
    ap.add_argument("--release-database", help="the same for the release's store")
    ap.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="also load each server set at this many requests a second on a fixed schedule (open loop;"
        " latency from the scheduled send), reported beside the closed-loop figures (default: off)",
    )
    ap.add_argument(
        "--no-save", action="store_true", help="print only; do not write bench/results/server.json"
    )
    args = ap.parse_args()
    pg_admin = os.environ.get("RECALL_BENCH_DATABASE_URL") or os.environ.get("RECALL_TEST_DATABASE_URL")

    data = make_learnings(args.size)
    queries = make_queries(data, 20_000)  # no query repeats within a run (caches see only real reuse)
    # --rate: 10,000 more, asked by no other load (the first 20,000 are the same as `queries`)
    args.open_queries = make_queries(data, 30_000)[20_000:] if args.rate else []
    results: dict = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "size": args.size,
        "duration_s": args.duration,
        "concurrency": args.concurrency,
        "workers": args.workers,
        "processes": args.processes,
        "warmup_queries": args.warmup,
        "release": {"commit": args.release or None, "stores": {}},
        "targets": {"req_per_s": TARGET_RPS, "p99_ms": TARGET_P99_MS},
        "stores": {},
    }
    if (ROOT / "bench" / "corpus" / "errors.jsonl").exists():
        results["quality"] = quality(pg_admin)
    with tempfile.TemporaryDirectory(prefix="recall-bench-server-") as tmp:
        work = Path(tmp)
        release = release_tree(work, args.release) if args.release else None
        if "sqlite" in args.stores:
            run_sqlite(results, data, queries, work, release, args)
        if "postgresql" in args.stores and pg_admin:
            run_postgresql(results, data, queries, work, release, args, pg_admin)
        elif "postgresql" in args.stores:
            print(
                "PostgreSQL skipped: set RECALL_BENCH_DATABASE_URL or RECALL_TEST_DATABASE_URL",
                file=sys.stderr,
            )

    print_table(results)
    if not args.no_save:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=2) + "\n")
        print(f"saved {args.results}")
    return 0


def run_sqlite(
    results: dict, data: list, queries: list[dict], work: Path, release: Path | None, args
) -> None:
    home = work / "sqlite-home"
    fill_s = fill_sqlite(home, data)
    from recall_agent.learnings.store import open_store

    with open_store(home) as store:
        parts = breakdown(store, queries[BREAKDOWN_SLICE])
    if release:  # the same file (schema 1 in both): the release reads it as it is
        shutil.copytree(home, work / "release-sqlite-home")
    env = {"RECALL_HOME": str(home), "RECALL_DATABASE_URL": ""}
    results["stores"]["sqlite"] = {
        "fill_s": round(fill_s, 1),
        **run_store("sqlite", env, work, queries, args),
        "breakdown": parts,
    }
    save_partial(results, args)
    results["stores"]["sqlite"]["writers"] = run_writers(
        "sqlite", {"RECALL_HOME": str(work / "sqlite-writers"), "RECALL_DATABASE_URL": ""}, work, args
    )
    save_partial(results, args)
    if release:
        env = {"RECALL_HOME": str(work / "release-sqlite-home"), "RECALL_DATABASE_URL": ""}
        results["release"]["stores"]["sqlite"] = run_store(
            "release-sqlite", {**env, "PYTHONPATH": str(release)}, work, queries, args
        )
        save_partial(results, args)


def run_postgresql(
    results: dict, data: list, queries: list[dict], work: Path, release: Path | None, args, pg_admin: str
) -> None:
    db = open_database(pg_admin, args.database)
    try:
        kept = isinstance(db, KeptDatabase) and db.holds(len(data))
        if isinstance(db, KeptDatabase) and not kept:
            db.reset(pg_admin)
        fill_p = 0.0 if kept else fill_pg(db.url, data, work)
        from recall_agent.learnings.pg_store import PgStore

        with PgStore(db.url) as store:
            parts = breakdown(store, queries[BREAKDOWN_SLICE])
        env = {"RECALL_HOME": str(work / "pg-home"), "RECALL_DATABASE_URL": db.url}
        results["stores"]["postgresql"] = {
            "fill_s": round(fill_p, 1) if not kept else f"kept database {args.database}",
            **run_store("pg", env, work, queries, args),
            "breakdown": parts,
        }
        save_partial(results, args)
    finally:
        db.drop()
    db = PgDatabase(pg_admin)
    try:
        env = {"RECALL_HOME": str(work / "pg-writers"), "RECALL_DATABASE_URL": db.url}
        results["stores"]["postgresql"]["writers"] = run_writers("pg", env, work, args)
        save_partial(results, args)
    finally:
        db.drop()
    if release:  # its own database: the release refuses this checkout's newer schema
        db = open_database(pg_admin, args.release_database)
        try:
            if not (isinstance(db, KeptDatabase) and db.holds(len(data))):
                if isinstance(db, KeptDatabase):
                    db.reset(pg_admin)
                fill_with(release, db.url, data, work)
            env = {"RECALL_HOME": str(work / "release-pg-home"), "RECALL_DATABASE_URL": db.url}
            results["release"]["stores"]["postgresql"] = run_store(
                "release-pg", {**env, "PYTHONPATH": str(release)}, work, queries, args
            )
        finally:
            db.drop()


def print_table(results: dict) -> None:
    if "quality" in results:
        q = results["quality"]
        print(f"\nretrieval quality, learnings corpus ({q['queries']} queries), same ranking on both stores")
        print(f"{'store':<11} {'R@1':>6} {'MRR':>6} {'false match':>11}")
        for name in ("sqlite", "postgresql"):
            if name in q:
                m = q[name]
                print(f"{name:<11} {m['R@1']:>6} {m['MRR']:>6} {m['false_match_rate']:>11}")
        if "identical_answers" in q:
            print(f"identical answers (ids, order, similarity): {q['identical_answers']:.1%}")
    size = results["size"]
    print(
        f"\nrecall serve --workers {results['workers']}, {size:,} learnings, {results['concurrency']} connections,"
        f" {results['duration_s']:g} s per store"
    )
    print(f"{'store':<14} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'requests':>9}  {'non-200':>7}  {'target':<7}"
          f" {'8x500 writes':>12} {'stored':>7} {'writes/s':>8}")  # fmt: skip
    rows = list(results["stores"].items())
    rows += [(f"release:{name[:2]}", r) for name, r in results.get("release", {}).get("stores", {}).items()]
    for name, r in rows:
        w = r.get("writers")
        writes = (
            f" {'exact' if w.get('exact') else 'WRONG':>12} {w.get('stored', '-'):>7} {w.get('writes_per_s', '-'):>8}"
            if w
            else ""
        )
        for processes, one_run in (r.get("by_processes") or {"1": r}).items():
            label = f"{name} x{processes}" if "by_processes" in r else name
            _print_row(label, one_run, writes)
            writes = ""
    for name, r in results["stores"].items():
        if "breakdown" in r:
            print_breakdown(name, r["breakdown"])


def _print_row(label: str, r: dict, writes: str) -> None:
    one = r.get("one_connection", {})
    non_ok = sum(v for k, v in r["statuses"].items() if k != "200")
    ok = r["req_per_s"] >= TARGET_RPS and r["p99_ms"] <= TARGET_P99_MS
    load = r.get("loadavg_before", ["-"])[0]
    cpu = r.get("server_cpu_ms_per_request", "-")
    if "postgres_cpu_ms_per_request" in r:
        cpu = f"{cpu} + postgres {r['postgres_cpu_ms_per_request']}"
    if "client_cpu_ms_per_request" in r:
        cpu = f"{cpu} + load generator {r['client_cpu_ms_per_request']}"
    print(
        f"{label:<14} {r['req_per_s']:>7} {r['p50_ms']:>7} {r['p99_ms']:>7} {r['requests']:>9}  {non_ok:>7}"
        f"  {'met' if ok else 'MISSED':<7} load {load} server cpu {cpu} ms/req{writes}"
    )
    if one:
        print(
            f"{'  1 conn':<14} {one['req_per_s']:>7} {one['p50_ms']:>7} {one['p99_ms']:>7} {one['requests']:>9}"
        )
    if scheduled := r.get("open_loop"):
        print(
            f"{'  open loop':<14} {scheduled['req_per_s']:>7} {scheduled['p50_ms']:>7} {scheduled['p99_ms']:>7}"
            f" {scheduled['requests']:>9}  (sent at {scheduled['rate']:g}/s, latency from the scheduled send)"
        )


def print_breakdown(name: str, parts: dict) -> None:
    print(f"\n{name}: one request in-process (ms; store = candidate reads in the store session)")
    print(f"{'caches':<6} {'query kind':<19} {'wall p50':>8} {'wall p99':>8} {'cpu p50':>8} {'cpu p99':>8}"
          f" {'store p50':>9} {'store p99':>9}")  # fmt: skip
    for label in ("cold", "warm"):
        for kind, r in parts[label].items():
            print(
                f"{label:<6} {kind:<19} {r['wall_p50']:>8} {r['wall_p99']:>8} {r['cpu_p50']:>8} {r['cpu_p99']:>8}"
                f" {r['store_p50']:>9} {r['store_p99']:>9}"
            )
    flush = parts["access_flush_ms"]
    print(f"access-count flush of {flush['ids']} ids: {flush['median']} ms")


if __name__ == "__main__":
    sys.exit(main())
