"""Schemathesis against a real `recall serve` (its own /openapi.json), on SQLite and on PostgreSQL: every
request is counted from the server's JSON access log (status, ms), so 5xx are the server's own word; timeouts
are requests schemathesis gave up on (--request-timeout) or that took longer than it in the log.

Positive and negative cases, NUL allowed in generated strings, all phases (examples, coverage, fuzzing,
stateful). The federation engines are canned (tests/server_fixtures.py) so the fuzzer drives the HTTP
layer and the learnings store, not the indexer.

    python bench/bench_fuzz.py                      # ~10k+ requests per store
    python bench/bench_fuzz.py --examples 200 --stores sqlite
PostgreSQL: RECALL_TEST_DATABASE_URL (`source .ci/services`); a fresh database is created and dropped.
CI replays a fixed example set instead: tests/test_server_fuzz.py.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
RESULTS = ROOT / "bench" / "results" / "fuzz.json"
TIMEOUT = 5.0
ENGINES = {"architecture": {"memgraph": ["m"], "repowise": ["r"]}, "antipatterns": {"qdrant": ["q"]}}


def fresh_database(base: str) -> tuple[str, str]:
    import psycopg

    name = f"recall_fuzz_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=f"/{name}")), name


def drop_database(base: str, name: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_store(store: str, examples: int, seed: int, tmp: Path) -> dict:
    from server_fixtures import start_server

    repo = tmp / "repo"
    repo.mkdir(parents=True)
    env = {
        "RECALL_HOME": str(tmp / "home"),
        "RECALL_TOKEN": "",
        "RECALL_DATABASE_URL": "",
        "PYTHONPATH": str(ROOT),
    }
    db_name = base = None
    if store == "postgresql":
        base = os.environ["RECALL_TEST_DATABASE_URL"]
        env["RECALL_DATABASE_URL"], db_name = fresh_database(base)
    srv = start_server(tmp, ["--repo", str(repo)], env=env, fake_engines=ENGINES, wait=120)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "schemathesis.cli",
                "run",
                srv.url + "/openapi.json",
                "--mode",
                "all",
                "-n",
                str(examples),
                "--seed",
                str(seed),
                "--checks",
                "not_a_server_error",
                "--continue-on-failure",
                "--request-timeout",
                str(TIMEOUT),
                "--generation-allow-x00",
                "true",
                "--generation-database",
                "none",
                "--suppress-health-check",
                "all",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=3600,
        )
    finally:
        srv.stop()
        if db_name and base:
            drop_database(base, db_name)
    took = time.perf_counter() - t0
    access = [line for line in srv.log_lines() if line.get("event") == "access"]
    statuses = Counter(line["status"] for line in access)
    slow = sum(line["ms"] >= TIMEOUT * 1000 for line in access)
    cli_timeouts = proc.stdout.count("Read timed out") + proc.stdout.count("ReadTimeout")
    errors = [line for line in srv.log_lines() if line.get("level") == "error"]
    return {
        "store": store,
        "requests": len(access),
        "status": {str(k): v for k, v in sorted(statuses.items())},
        "5xx": sum(v for k, v in statuses.items() if k >= 500),
        "timeouts": max(slow, cli_timeouts),
        "max_ms": max((line["ms"] for line in access), default=0),
        "seconds": round(took, 1),
        "schemathesis_exit": proc.returncode,
        "schemathesis_tail": proc.stdout.strip().splitlines()[-12:],
        "server_errors": [e.get("event") for e in errors][:10],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=1500, help="max examples per operation and phase")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--stores", nargs="*", default=["sqlite", "postgresql"])
    args = ap.parse_args()
    if "postgresql" in args.stores and not os.environ.get("RECALL_TEST_DATABASE_URL"):
        print("RECALL_TEST_DATABASE_URL unset: PostgreSQL skipped (source .ci/services)", file=sys.stderr)
        args.stores = [s for s in args.stores if s != "postgresql"]
    rows = []
    for store in args.stores:
        with tempfile.TemporaryDirectory(prefix=f"recall-fuzz-{store}-") as tmp:
            row = run_store(store, args.examples, args.seed, Path(tmp))
        rows.append(row)
        print(
            f"{store}: {row['requests']} requests, 5xx {row['5xx']}, timeouts {row['timeouts']}",
            file=sys.stderr,
        )
    print("\n| store | requests | 2xx | 4xx | 5xx | timeouts | slowest | wall |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        ok = sum(v for k, v in row["status"].items() if k.startswith("2"))
        bad = sum(v for k, v in row["status"].items() if k.startswith("4"))
        print(
            f"| {row['store']} | {row['requests']} | {ok} | {bad} | {row['5xx']} | {row['timeouts']} | "
            f"{row['max_ms']:.0f} ms | {row['seconds']:.0f} s |"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps({"examples": args.examples, "seed": args.seed, "runs": rows}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
