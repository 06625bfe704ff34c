"""MCP tool-call latency: `recall mcp` over stdio (warm server) and `/mcp` on `recall serve` over
streamable HTTP, p50/p95, next to the CLI's cold start for the same questions.

Data (not written for this benchmark):
- errors: bench/corpus/errors.jsonl, real errors made by really running tools (bench/corpus/generate.py).
  Instance 0 of every cause is taught through `recall_learn` (over stdio: that is timed too); the other
  instances and the no-learning errors are the queries, in corpus order.
- repository: the source of `httpx` as installed from PyPI, copied into a temporary git repository; the
  architecture questions name its real symbols ("who calls _merge_cookies"...).

Every client is the official SDK's (`mcp.ClientSession` over `stdio_client` / `streamable_http_client`);
the server process lives across calls, as an agent's does. The first call of each session is reported
apart (it pays imports and the index check). Equality: for a sample of questions the MCP text content is
compared with what `recall` prints for the same question in the same folder.

    python bench/bench_mcp.py [--calls 40] [--cli-runs 8]

Prints a table and writes bench/results/mcp.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus" / "errors.jsonl"
RESULTS = ROOT / "bench" / "results" / "mcp.json"
sys.path.insert(0, str(ROOT / "tests"))

from mcp_fixtures import http_session, stdio_session, text  # noqa: E402
from server_fixtures import start_server  # noqa: E402

ARCHITECTURE_QUESTIONS = [
    "who calls _merge_cookies",
    "blast radius of httpx._models",
    "where is BaseTransport defined",
    "who calls encode_request",
    "what depends on httpx._urls",
    "who uses Timeout",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(pct(values, 0.95), 1),
        "max_ms": round(max(values), 1),
    }


def load_corpus() -> tuple[list[dict], list[str]]:
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    learn = [r for r in rows if r["kind"] == "cause" and r["instance"] == 0]
    queries = [r["text"] for r in rows if not (r["kind"] == "cause" and r["instance"] == 0)]
    return learn, queries


def make_repo(work: Path) -> Path:
    import httpx as installed

    repo = work / "httpx-src"
    shutil.copytree(
        Path(installed.__file__).parent, repo / "httpx", ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def bench_env(work: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("AGENT_LEARNING_RETRIEVAL_URL", "KNOWLEDGE_FEDERATION_URL")
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its bytecode cached
    env.update(RECALL_HOME=str(work / "home"), CLAUDE_CONFIG_DIR=str(work / "claude"), PYTHONPATH=str(ROOT))
    return env


async def timed_calls(session, calls: list[tuple[str, dict]]) -> tuple[list[float], list]:
    times, results = [], []
    for name, args in calls:
        t0 = time.perf_counter()
        result = await session.call_tool(name, args)
        times.append((time.perf_counter() - t0) * 1000)
        if result.is_error:
            raise SystemExit(f"{name} {args} failed: {text(result)[:300]}")
        results.append(result)
    return times, results


def cli(cmd_args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "recall", *cmd_args], env=env, cwd=cwd, capture_output=True, text=True
    )
    elapsed = (time.perf_counter() - t0) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"recall {cmd_args[:2]} failed: {proc.stderr[:300]}")
    return elapsed, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40, help="tool calls per warm row (default 40)")
    parser.add_argument("--cli-runs", type=int, default=8, help="CLI processes per cold row (default 8)")
    opts = parser.parse_args()
    learn, queries = load_corpus()
    queries = queries[: opts.calls]
    questions = (ARCHITECTURE_QUESTIONS * (opts.calls // len(ARCHITECTURE_QUESTIONS) + 1))[: opts.calls]
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        work = Path(tmp)
        repo = make_repo(work)
        env = bench_env(work)
        os.environ.update(env)  # the SDK's stdio client passes this environment to `recall mcp`
        subprocess.run([sys.executable, "-m", "recall", "index", "--quiet", str(repo)], env=env, check=True)

        learn_calls = [
            ("recall_learn", {"error": r["text"], "resolution": r["resolution"], "task_type": "dependency"})
            for r in learn
        ]
        learnings_calls = [("recall", {"query": q, "scope": "learnings"}) for q in queries]
        all_calls = [("recall", {"query": q}) for q in queries]
        arch_calls = [("recall", {"query": q, "scope": "architecture"}) for q in questions]

        async def over_stdio() -> dict:
            t0 = time.perf_counter()
            async with stdio_session(repo) as session:
                started = (time.perf_counter() - t0) * 1000
                first, _ = await timed_calls(
                    session, [("recall", {"query": queries[0], "scope": "learnings"})]
                )
                out = {"spawn_and_initialize_ms": round(started, 1), "first_call_ms": round(first[0], 1)}
                out["learn"], _ = await timed_calls(session, learn_calls)
                out["learnings"], results = await timed_calls(session, learnings_calls)
                out["all"], _ = await timed_calls(session, all_calls)
                out["architecture"], arch = await timed_calls(session, arch_calls)
                out["texts"] = [text(r) for r in results[:5]] + [text(r) for r in arch[:3]]
                return out

        stdio = anyio.run(over_stdio)
        rows["stdio: recall, scope learnings"] = summary(stdio["learnings"])
        rows["stdio: recall, scope all"] = summary(stdio["all"])
        rows["stdio: recall, scope architecture"] = summary(stdio["architecture"])
        rows["stdio: recall_learn"] = summary(stdio["learn"])

        # the same questions as CLI processes (cold start each), and the answers compared
        cli_rows = {"learnings": [], "all": [], "architecture": []}
        same = 0
        samples = [("learnings", ["--scope", "learnings", q]) for q in queries[:5]]
        samples += [("architecture", ["--scope", "architecture", q]) for q in questions[:3]]
        for i, (kind, argv) in enumerate(samples):
            elapsed, out = cli(argv, env, repo)
            cli_rows[kind].append(elapsed)
            same += out == stdio["texts"][i]
        for i in range(opts.cli_runs):
            cli_rows["learnings"].append(
                cli(["--scope", "learnings", queries[i % len(queries)]], env, repo)[0]
            )
            cli_rows["all"].append(cli([queries[i % len(queries)]], env, repo)[0])
            cli_rows["architecture"].append(cli(["--scope", "architecture", questions[i]], env, repo)[0])
        for kind, values in cli_rows.items():
            rows[f"CLI cold start: recall, scope {kind}"] = summary(values)

        server = start_server(work, ["--repo", str(repo)], env=env)
        try:
            url = server.url + "/mcp"

            async def over_http() -> dict:
                async with http_session(url) as session:
                    first, _ = await timed_calls(
                        session, [("recall", {"query": queries[0], "scope": "learnings"})]
                    )
                    out = {"first_call_ms": round(first[0], 1)}
                    out["learnings"], _ = await timed_calls(session, learnings_calls)
                    out["all"], _ = await timed_calls(session, all_calls)
                    out["architecture"], _ = await timed_calls(session, arch_calls)
                    return out

            http = anyio.run(over_http)
            wire = []
            with httpx.Client(base_url=server.url) as client:
                for q in queries:
                    payload = {"match_type": "error_signature", "error_text": q[:4000], "repo": repo.name}
                    t0 = time.perf_counter()
                    client.post(
                        "/v1/nodes/node_agent_learning_retrieval_effect/execute", json=payload
                    ).raise_for_status()
                    wire.append((time.perf_counter() - t0) * 1000)
        finally:
            server.stop()
        rows["HTTP /mcp: recall, scope learnings"] = summary(http["learnings"])
        rows["HTTP /mcp: recall, scope all"] = summary(http["all"])
        rows["HTTP /mcp: recall, scope architecture"] = summary(http["architecture"])
        rows["HTTP wire route: learnings node (no MCP, for comparison)"] = summary(wire)

    results = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "corpus": {"learned": len(learn), "queries": len(queries), "architecture_questions": len(questions)},
        "stdio_start": {k: stdio[k] for k in ("spawn_and_initialize_ms", "first_call_ms")},
        "http_first_call_ms": http["first_call_ms"],
        "same_answer_as_cli": f"{same}/{len(samples)}",
        "rows": rows,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nMCP tool-call latency (client side, ms); corpus: {len(learn)} learned, {len(queries)} queries")
    print(f"{'path':62} {'n':>4} {'p50':>8} {'p95':>8} {'max':>8}")
    for name, row in rows.items():
        print(f"{name:62} {row['n']:>4} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['max_ms']:>8}")
    print(
        f"stdio: spawn + initialize {stdio['spawn_and_initialize_ms']} ms, first call {stdio['first_call_ms']} ms; "
        f"HTTP first call {http['first_call_ms']} ms; MCP text == CLI stdout: {results['same_answer_as_cli']}"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
