"""Cold start of the /recall client: `recall --scope learnings "x"` with nothing configured, and the same
client answering from a store of 1,000 learnings (opens it, ranks, renders the match).

Compares against `python -c pass` (median of N runs each, interleaved so machine load hits all rows alike),
times the installed `recall` script too, runs the previous release (`git archive` of `--release`, on
PYTHONPATH) on the same rows in the same loop, and breaks the in-process path down with
`python -X importtime` so the cost of each import (learnings node, pydantic models, jinja2, asyncio) is
visible.

    python bench/bench_cold_start.py [--runs 15] [--release 57950d8]

Prints a table and writes bench/results/cold_start.json. Goals: <= 250 ms wall for the recall row, and
<= 6x `python -c pass` in the same run (issue 13).
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

from release import LEAN_CORE_BASE, package_in, release_tree

GOAL_MS = 250.0
GOAL_RATIO = 6.0  # x `python -c pass`, same run
RELEASE = LEAN_CORE_BASE
STORE_SIZE = 1000
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "cold_start.json"
# modules that must never load on a plain query (server, parsers, ML, vector store)
FORBIDDEN = ("fastapi", "uvicorn", "tree_sitter", "qdrant_client", "numpy", "wordllama", "torch", "psycopg")
# import-time rows worth reporting (cumulative microseconds, as -X importtime prints them)
WATCH = (
    "recall_agent.client.main",
    "recall_agent.learnings",
    "recall_agent.models",
    "pydantic",
    "jinja2",
    "anyio",
    "asyncio",
    "httpx",
    "recall_agent.learnings.store",
    "recall_agent.learnings.retrieval",
)


STUB_NODE = (
    "import sys, types\n"
    "node = types.ModuleType('bench_stub_node')\n"
    "async def execute(payload):\n"
    "    return {'matches': [], 'query_ms': 0}\n"
    "node.execute = execute\n"
    "node.Request = dict\n"  # the learnings node's fast path: a plain request, a synchronous body
    "node.execute_sync = lambda request: {'matches': [], 'query_ms': 0}\n"
    "sys.modules['bench_stub_node'] = node\n"
    "from recall_agent.client import fanout\n"
    "fanout.NODES['learnings'] = 'bench_stub_node'\n"
    "from recall_agent.client.main import main\n"
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


def node_cost(env: dict[str, str], cwd: Path, stored_error: str) -> dict:
    """The learnings node in a fresh process, over the 1,000-learning store: import time, and the first
    answer as the client asks for it (a plain request; the release validated a dict) and for a dict (an
    untrusted caller's input, validated by the wire model)."""
    ask = "'match_type': 'error_signature', 'error_text': QUERY, 'repo': 'bench-repo', 'max_results': 5"
    code = (
        "import sys, time\n"
        "QUERY = sys.argv[1]\n"
        "t0 = time.perf_counter()\n"
        "import recall_agent.learnings as L\n"
        "t1 = time.perf_counter()\n"
        f"L.execute_sync(L.RetrievalRequest(**{{{ask}}}) if sys.argv[2] == 'plain' else {{{ask}}})\n"
        "t2 = time.perf_counter()\n"
        "print((t1 - t0) * 1000, (t2 - t1) * 1000)\n"
    )
    out: dict = {}
    for kind in ("plain", "dict"):
        runs = [
            subprocess.run(
                [sys.executable, "-c", code, stored_error, kind],
                env=env,
                cwd=cwd,
                capture_output=True,
                text=True,
            )
            for _ in range(5)
        ]
        pairs = [tuple(map(float, r.stdout.split())) for r in runs if r.returncode == 0 and r.stdout.strip()]
        if not pairs:
            return {
                "error": runs[0].stderr.strip().splitlines()[-1] if runs[0].stderr.strip() else "no output"
            }
        out["import_ms_median"] = round(statistics.median(p[0] for p in pairs), 1)
        out[f"first_answer_{kind}_ms_median"] = round(statistics.median(p[1] for p in pairs), 1)
    return out


FILL = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from recall_agent.learnings.store import open_store\n"
    "from recall_agent.models import Learning\n"
    "rows = [Learning.model_validate(json.loads(line)) for line in open(sys.argv[2])]\n"
    "with open_store(Path(sys.argv[1])) as store:\n"
    "    store.add_many(rows)\n"
)


def fill_store(home: Path, learnings: Path, env: dict[str, str]) -> None:
    """A store of STORE_SIZE learnings, written by the code under test (its own schema)."""
    subprocess.run([sys.executable, "-c", FILL, str(home), str(learnings)], env=env, check=True)


def write_learnings(path: Path) -> str:
    """bench_server's synthetic learnings (16 real error shapes) as JSON lines; returns one stored error."""
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_server

    data = bench_server.make_learnings(STORE_SIZE)
    path.write_text("".join(learning.model_dump_json() + "\n" for learning, *_ in data))
    return next(learning.error_signatures[0] for learning, *_ in data if learning.repo == bench_server.REPO)


def summarize(samples: list[tuple[float, float]]) -> dict:
    walls = sorted(s[0] for s in samples)
    return {
        "runs": len(samples),
        "median_ms": round(statistics.median(walls), 1),
        "min_ms": round(walls[0], 1),
        "p90_ms": round(walls[max(0, int(len(walls) * 0.9) - 1)], 1),
        "cpu_median_ms": round(statistics.median(s[1] for s in samples), 1),
    }


EMPTY = 'recall --scope learnings "x"'
STORED = 'recall --scope learnings "<stored error>", 1k store'


def commands_of(
    release: str | None, script: str | None, stored_error: str, release_package: str = "recall"
) -> dict[str, tuple[list[str], str]]:
    """Row name -> (command, which environment: "empty" | "store" | "http" | "release-…" variants)."""
    recall = [sys.executable, "-m", "recall_agent", "--scope", "learnings"]
    rows = {
        "python -c pass": ([sys.executable, "-c", "pass"], "empty"),
        "python -m recall_agent --help": ([sys.executable, "-m", "recall_agent", "--help"], "empty"),
        # the client's own cost: same command, the learnings node replaced by one that answers at once
        "client only (instant stub node)": (
            [sys.executable, "-c", STUB_NODE, "--scope", "learnings", "x"],
            "empty",
        ),
        EMPTY: ([*recall, "x"], "empty"),
        STORED: ([*recall, stored_error], "store"),
        EMPTY + " (HTTP, refused)": ([*recall, "x"], "http"),
    }
    if script:
        rows[EMPTY + " (installed script)"] = ([script, "--scope", "learnings", "x"], "empty")
    if release:
        old = [sys.executable, "-m", release_package, "--scope", "learnings"]
        rows[f"release {release}: {EMPTY}"] = ([*old, "x"], "release-empty")
        rows[f"release {release}: {STORED}"] = ([*old, stored_error], "release-store")
        rows[f"release {release}: {EMPTY} (HTTP, refused)"] = ([*old, "x"], "release-http")
    return rows


def environments(tmp: Path, release_dir: Path | None, learnings: Path) -> dict[str, dict[str, str]]:
    envs: dict[str, dict[str, str]] = {}
    for prefix, pythonpath in [("", None), ("release-", release_dir)] if release_dir else [("", None)]:
        base = clean_env(tmp / f"{prefix}home")
        if pythonpath:
            base["PYTHONPATH"] = str(pythonpath)
        store = dict(base, RECALL_HOME=str(tmp / f"{prefix}store-home"))
        fill_store(Path(store["RECALL_HOME"]), learnings, store)
        envs[prefix + "empty"] = base
        envs[prefix + "store"] = store
        envs[prefix + "http"] = dict(
            base, AGENT_LEARNING_RETRIEVAL_URL="http://127.0.0.1:9/v1/nodes/x/execute"
        )
    return envs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per command (default 15, min 10)")
    parser.add_argument(
        "--release",
        default=RELEASE,
        help=f"commit measured as the previous release (default {RELEASE}; '' skips)",
    )
    opts = parser.parse_args()
    runs = max(10, opts.runs)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cwd = tmp_path / "project"
        cwd.mkdir()
        stored_error = write_learnings(tmp_path / "learnings.jsonl")
        release_dir = release_tree(tmp_path, opts.release) if opts.release else None
        envs = environments(tmp_path, release_dir, tmp_path / "learnings.jsonl")
        commands = commands_of(
            opts.release or None,
            installed_script(),
            stored_error,
            package_in(release_dir) if release_dir else "",
        )
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for cmd, env in commands.values():  # warm the page cache and the template cache
            time_once(cmd, envs[env], cwd)
        for _ in range(runs):
            for name, (cmd, env) in commands.items():
                samples[name].append(time_once(cmd, envs[env], cwd))
        rows = {name: summarize(values) for name, values in samples.items()}
        baseline = rows["python -c pass"]["median_ms"]
        cpu_baseline = rows["python -c pass"]["cpu_median_ms"]
        for row in rows.values():
            row["over_python_ms"] = round(row["median_ms"] - baseline, 1)
            row["cpu_over_python_ms"] = round(row["cpu_median_ms"] - cpu_baseline, 1)
            row["x_python"] = round(row["median_ms"] / baseline, 2)
        breakdown = import_breakdown(commands[EMPTY][0], envs["empty"], cwd)
        store_breakdown = import_breakdown(commands[STORED][0], envs["store"], cwd)
        http_breakdown = import_breakdown(commands[EMPTY][0], envs["http"], cwd)
        release_breakdown = (
            import_breakdown(commands[f"release {opts.release}: {STORED}"][0], envs["release-store"], cwd)
            if opts.release
            else None
        )
        node = node_cost(envs["store"], cwd, stored_error)

    target = rows[EMPTY]
    print(
        f"{'command (ms)':72} {'median':>7} {'min':>7} {'p90':>7} {'+python':>8} {'x python':>8} {'cpu':>7}"
    )
    for name, row in rows.items():
        print(
            f"{name:72} {row['median_ms']:7.1f} {row['min_ms']:7.1f} {row['p90_ms']:7.1f} "
            f"{row['over_python_ms']:8.1f} {row['x_python']:8.2f} {row['cpu_median_ms']:7.1f}"
        )
    met_ms = target["median_ms"] <= GOAL_MS
    met_ratio = all(rows[name]["x_python"] <= GOAL_RATIO for name in (EMPTY, STORED))
    print(f"\ngoal <= {GOAL_MS:.0f} ms wall: {'met' if met_ms else 'NOT met'} ({target['median_ms']:.1f} ms)")
    print(
        f"goal <= {GOAL_RATIO:g}x python -c pass (empty and 1k store): {'met' if met_ratio else 'NOT met'}"
        f" ({target['x_python']:.2f}x, {rows[STORED]['x_python']:.2f}x)"
    )
    print("in-process path, cumulative import ms:", breakdown["cumulative_ms"])
    print("in-process path, 1k store, cumulative import ms:", store_breakdown["cumulative_ms"])
    if release_breakdown:
        print("release, 1k store, cumulative import ms:", release_breakdown["cumulative_ms"])
    print("HTTP path, cumulative import ms:", http_breakdown["cumulative_ms"])
    print("forbidden modules loaded:", breakdown["forbidden_loaded"] or "none")
    print("learnings node in a fresh process, 1k store:", node)

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "cold_start",
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "python": sys.executable,
                "python_version": platform.python_version(),
                "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
                "release": opts.release or None,
                "goal_ms": GOAL_MS,
                "goal_met": met_ms,
                "goal_ratio": GOAL_RATIO,
                "goal_ratio_met": met_ratio,
                "rows": rows,
                "imports_in_process": breakdown,
                "imports_in_process_store": store_breakdown,
                "imports_release_store": release_breakdown,
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
