"""Cold start of the /recall client: `recall --scope learnings "x"` with nothing configured.

Compares against `python -c pass` (median of N runs each, interleaved so machine load hits all rows alike),
times the installed `recall` script too, and breaks the in-process path down with `python -X importtime`
so the cost of each import (learnings node, pydantic models, jinja2, anyio) is visible.

    python bench/bench_cold_start.py [--runs 15]

Prints a table and writes bench/results/cold_start.json. Goal: <= 250 ms wall for the recall row.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

GOAL_MS = 250.0
RESULTS = Path(__file__).resolve().parent / "results" / "cold_start.json"
# modules that must never load on a plain query (server, parsers, ML, vector store)
FORBIDDEN = ("fastapi", "uvicorn", "tree_sitter", "qdrant_client", "numpy", "wordllama", "torch", "psycopg")
# import-time rows worth reporting (cumulative microseconds, as -X importtime prints them)
WATCH = (
    "recall.client.main",
    "recall.learnings",
    "recall.models",
    "pydantic",
    "jinja2",
    "anyio",
    "asyncio",
    "httpx",
)


STUB_NODE = (
    "import sys, types\n"
    "node = types.ModuleType('bench_stub_node')\n"
    "async def execute(payload):\n"
    "    return {'matches': [], 'query_ms': 0}\n"
    "node.execute = execute\n"
    "sys.modules['bench_stub_node'] = node\n"
    "from recall.client import fanout\n"
    "fanout.NODES['learnings'] = 'bench_stub_node'\n"
    "from recall.client.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def clean_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var in (
        "AGENT_LEARNING_RETRIEVAL_URL",
        "KNOWLEDGE_FEDERATION_URL",
        "CLAUDE_SESSION_ID",
        "RECALL_TOKEN",
    ):
        env.pop(var, None)
    # a normal machine caches bytecode; with PYTHONDONTWRITEBYTECODE set (as on the project's machines) every
    # run would recompile recall's own sources, which is not what a user's `recall` pays after install
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["RECALL_HOME"] = str(home / "recall-home")
    env["CLAUDE_CONFIG_DIR"] = str(home / "claude")
    return env


def installed_script() -> str | None:
    """The console script next to the real interpreter (not a pyenv shim, which adds its own startup)."""
    candidate = Path(sysconfig.get_path("scripts")) / "recall"
    if candidate.is_file():
        return str(candidate)
    found = shutil.which("recall")
    return found if found and "shims" not in found else None


def time_once(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall ms, CPU ms = user + sys of the child). CPU time is what machine load distorts least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:300]}")
    return elapsed, cpu


def import_breakdown(cmd: list[str], env: dict[str, str], cwd: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd[1:]], env=env, cwd=cwd, capture_output=True, text=True
    )
    cumulative: dict[str, int] = {}
    top_level = 0
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)", line)
        if m:
            name, total = m.group(4), int(m.group(2))
            cumulative[name] = max(cumulative.get(name, 0), total)
            top_level += total if len(m.group(3)) == 1 else 0
    return {
        "cumulative_ms": {name: round(cumulative[name] / 1000, 1) for name in WATCH if name in cumulative},
        "total_import_ms": round(top_level / 1000, 1),
        "forbidden_loaded": [
            m for m in FORBIDDEN if any(n == m or n.startswith(m + ".") for n in cumulative)
        ],
    }


def node_cost(env: dict[str, str], cwd: Path) -> dict:
    """The learnings node in a fresh process: import time and the first execute() (what the client waits for)."""
    code = (
        "import time, asyncio\n"
        "t0 = time.perf_counter()\n"
        "import recall.learnings as L\n"
        "t1 = time.perf_counter()\n"
        "asyncio.run(L.execute({'match_type': 'error_signature', 'error_text': 'x', 'repo': 'r', 'max_results': 5}))\n"
        "t2 = time.perf_counter()\n"
        "print((t1 - t0) * 1000, (t2 - t1) * 1000)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)
        for _ in range(5)
    ]
    pairs = [tuple(map(float, r.stdout.split())) for r in runs if r.returncode == 0 and r.stdout.strip()]
    if not pairs:
        return {"error": runs[0].stderr.strip().splitlines()[-1] if runs[0].stderr.strip() else "no output"}
    return {
        "import_ms_median": round(statistics.median(p[0] for p in pairs), 1),
        "first_execute_ms_median": round(statistics.median(p[1] for p in pairs), 1),
    }


def summarize(samples: list[tuple[float, float]]) -> dict:
    walls = sorted(s[0] for s in samples)
    return {
        "runs": len(samples),
        "median_ms": round(statistics.median(walls), 1),
        "min_ms": round(walls[0], 1),
        "p90_ms": round(walls[max(0, int(len(walls) * 0.9) - 1)], 1),
        "cpu_median_ms": round(statistics.median(s[1] for s in samples), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per command (default 15, min 10)")
    opts = parser.parse_args()
    runs = max(10, opts.runs)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cwd = tmp_path / "project"
        cwd.mkdir()
        env = clean_env(tmp_path)
        query = ["--scope", "learnings", "x"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -m recall --help": [sys.executable, "-m", "recall", "--help"],
            'python -m recall --scope learnings "x"': [sys.executable, "-m", "recall", *query],
        }
        # the client's own cost: same command, the learnings node replaced by one that answers at once
        commands["client only (instant stub node)"] = [sys.executable, "-c", STUB_NODE, *query]
        script = installed_script()
        if script:
            commands['recall --scope learnings "x" (installed script)'] = [script, *query]
        http_env = dict(env, AGENT_LEARNING_RETRIEVAL_URL="http://127.0.0.1:9/v1/nodes/x/execute")
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        samples['python -m recall --scope learnings "x" (HTTP, refused)'] = []
        for cmd in commands.values():  # warm the page cache and the template cache
            time_once(cmd, env, cwd)
        for _ in range(runs):
            for name, cmd in commands.items():
                samples[name].append(time_once(cmd, env, cwd))
            samples['python -m recall --scope learnings "x" (HTTP, refused)'].append(
                time_once(commands['python -m recall --scope learnings "x"'], http_env, cwd)
            )
        rows = {name: summarize(values) for name, values in samples.items()}
        baseline = rows["python -c pass"]["median_ms"]
        cpu_baseline = rows["python -c pass"]["cpu_median_ms"]
        for row in rows.values():
            row["over_python_ms"] = round(row["median_ms"] - baseline, 1)
            row["cpu_over_python_ms"] = round(row["cpu_median_ms"] - cpu_baseline, 1)
        breakdown = import_breakdown(commands['python -m recall --scope learnings "x"'], env, cwd)
        http_breakdown = import_breakdown(commands['python -m recall --scope learnings "x"'], http_env, cwd)
        node = node_cost(env, cwd)

    target = rows['python -m recall --scope learnings "x"']["median_ms"]
    print(f"{'command (ms)':58} {'median':>8} {'min':>8} {'p90':>8} {'+python':>8} {'cpu':>8} {'+py cpu':>8}")
    for name, row in rows.items():
        print(
            f"{name:58} {row['median_ms']:8.1f} {row['min_ms']:8.1f} {row['p90_ms']:8.1f} "
            f"{row['over_python_ms']:8.1f} {row['cpu_median_ms']:8.1f} {row['cpu_over_python_ms']:8.1f}"
        )
    print(f"\ngoal <= {GOAL_MS:.0f} ms wall: {'met' if target <= GOAL_MS else 'NOT met'} ({target:.1f} ms)")
    print("in-process path, cumulative import ms:", breakdown["cumulative_ms"])
    print("HTTP path, cumulative import ms:", http_breakdown["cumulative_ms"])
    print("forbidden modules loaded:", breakdown["forbidden_loaded"] or "none")
    print("learnings node in a fresh process:", node)

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "cold_start",
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "python": sys.executable,
                "python_version": platform.python_version(),
                "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
                "goal_ms": GOAL_MS,
                "goal_met": target <= GOAL_MS,
                "rows": rows,
                "imports_in_process": breakdown,
                "imports_http": http_breakdown,
                "learnings_node": node,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nsaved {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
