"""MCP tool-call latency: `recall mcp` over stdio (warm server) and `/mcp` on `recall serve` over
streamable HTTP, p50/p95, next to the CLI's cold start for the same questions.

Data (not written for this benchmark):
- errors: bench/corpus/errors.jsonl, real errors made by really running tools (bench/corpus/generate.py).
  Instance 0 of every cause is taught through `recall_learn` (over stdio: that is timed too); the other
  instances and the no-learning errors are the queries, in corpus order.
- repository: the source of `httpx` as installed from PyPI, copied into a temporary git repository; the
  architecture questions name its real symbols ("who calls _merge_cookies"...).

Every client is the official SDK's (`mcp.ClientSession` over `stdio_client` / `streamable_http_client`);
the server processes live across calls, as an agent's do. Both sessions stay open and each question is
asked on every path in turn (stdio, HTTP /mcp, the plain wire route, and every Nth question a CLI process
per scope), so the shared machine's load falls on all rows alike. The first call of each session is
reported apart (it pays imports). Equality: for every question a CLI process answers, its stdout is
compared with the MCP text content for the same question in the same folder.

    python bench/bench_mcp.py [--calls 40] [--cli-every 4]

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
from contextlib import AsyncExitStack
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


async def timed(session, name: str, args: dict) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = await session.call_tool(name, args)
    elapsed = (time.perf_counter() - t0) * 1000
    if result.is_error:
        raise SystemExit(f"{name} {args} failed: {text(result)[:300]}")
    return elapsed, result


def cli(cmd_args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", *cmd_args], env=env, cwd=cwd, capture_output=True, text=True
    )
    elapsed = (time.perf_counter() - t0) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"recall {cmd_args[:2]} failed: {proc.stderr[:300]}")
    return elapsed, proc.stdout


async def measure(
    url: str,
    repo: Path,
    env: dict[str, str],
    learn: list[dict],
    queries: list[str],
    questions: list[str],
    cli_every: int,
) -> dict:
    """Both MCP sessions open at once and every question asked on each path in turn (stdio, HTTP, the
    wire route, now and then a CLI process), so the shared machine's load falls on all rows alike."""
    times: dict[str, list[float]] = {}
    same = compared = 0

    def note(row: str, ms: float) -> None:
        times.setdefault(row, []).append(ms)

    async def cli_row(row: str, argv: list[str], mcp_text: str) -> None:
        nonlocal same, compared
        ms, out = await anyio.to_thread.run_sync(cli, argv, env, repo)
        note(row, ms)
        same, compared = same + (out == mcp_text), compared + 1

    async with AsyncExitStack() as stack:
        t0 = time.perf_counter()
        stdio = await stack.enter_async_context(stdio_session(repo))
        start = {"spawn_and_initialize_ms": round((time.perf_counter() - t0) * 1000, 1)}
        http = await stack.enter_async_context(http_session(url + "/mcp"))
        wire = await stack.enter_async_context(httpx.AsyncClient(base_url=url))
        warm = {"query": queries[0], "scope": "learnings"}
        start["stdio_first_call_ms"] = round((await timed(stdio, "recall", warm))[0], 1)
        start["http_first_call_ms"] = round((await timed(http, "recall", warm))[0], 1)
        for row in learn:
            args = {"error": row["text"], "resolution": row["resolution"], "task_type": "dependency"}
            note("stdio: recall_learn", (await timed(stdio, "recall_learn", args))[0])
        for i, query in enumerate(queries):
            args = {"query": query, "scope": "learnings"}
            ms, result = await timed(stdio, "recall", args)
            note("stdio: recall, scope learnings", ms)
            note("HTTP /mcp: recall, scope learnings", (await timed(http, "recall", args))[0])
            payload = {"match_type": "error_signature", "error_text": query[:4000], "repo": repo.name}
            t1 = time.perf_counter()
            (
                await wire.post("/v1/nodes/node_agent_learning_retrieval_effect/execute", json=payload)
            ).raise_for_status()
            note(
                "HTTP wire route: learnings node (no MCP, for comparison)", (time.perf_counter() - t1) * 1000
            )
            note("stdio: recall, scope all", (await timed(stdio, "recall", {"query": query}))[0])
            note("HTTP /mcp: recall, scope all", (await timed(http, "recall", {"query": query}))[0])
            question = {"query": questions[i], "scope": "architecture"}
            ms, arch = await timed(stdio, "recall", question)
            note("stdio: recall, scope architecture", ms)
            note("HTTP /mcp: recall, scope architecture", (await timed(http, "recall", question))[0])
            if i % cli_every == 0:
                await cli_row(
                    "CLI cold start: recall, scope learnings", ["--scope", "learnings", query], text(result)
                )
                await cli_row(
                    "CLI cold start: recall, scope architecture",
                    ["--scope", "architecture", questions[i]],
                    text(arch),
                )
                note(
                    "CLI cold start: recall, scope all",
                    (await anyio.to_thread.run_sync(cli, [query], env, repo))[0],
                )
    return {"start": start, "times": times, "same_answer_as_cli": f"{same}/{compared}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40, help="questions per warm row (default 40)")
    parser.add_argument(
        "--cli-every", type=int, default=4, help="one CLI process per row every N questions (default 4)"
    )
    opts = parser.parse_args()
    learn, queries = load_corpus()
    queries = queries[: opts.calls]
    questions = (ARCHITECTURE_QUESTIONS * (len(queries) // len(ARCHITECTURE_QUESTIONS) + 1))[: len(queries)]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        work = Path(tmp)
        repo = make_repo(work)
        env = bench_env(work)
        os.environ.update(env)  # the SDK's stdio client passes this environment to `recall mcp`
        subprocess.run(
            [sys.executable, "-m", "recall_agent", "index", "--quiet", str(repo)], env=env, check=True
        )
        server = start_server(work, ["--repo", str(repo)], env=env)
        try:
            measured = anyio.run(measure, server.url, repo, env, learn, queries, questions, opts.cli_every)
        finally:
            server.stop()
    rows = {
        name: summary(values)
        for name, values in sorted(measured["times"].items(), key=lambda kv: _order(kv[0]))
    }
    results = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "load_average_after": os.getloadavg(),
        "corpus": {"learned": len(learn), "queries": len(queries), "architecture_questions": len(questions)},
        "start": measured["start"],
        "same_answer_as_cli": measured["same_answer_as_cli"],
        "rows": rows,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nMCP tool-call latency (client side, ms); corpus: {len(learn)} learned, {len(queries)} queries")
    print(f"{'path':62} {'n':>4} {'p50':>8} {'p95':>8} {'max':>8}")
    for name, row in rows.items():
        print(f"{name:62} {row['n']:>4} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['max_ms']:>8}")
    start = measured["start"]
    print(
        f"stdio spawn + initialize {start['spawn_and_initialize_ms']} ms; first call: "
        f"stdio {start['stdio_first_call_ms']} ms, HTTP {start['http_first_call_ms']} ms; "
        f"MCP text == CLI stdout: {results['same_answer_as_cli']}; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


def _order(row: str) -> tuple[int, str]:
    return (
        ["stdio", "HTTP /mcp", "HTTP wire", "CLI"].index(
            next(p for p in ("stdio", "HTTP /mcp", "HTTP wire", "CLI") if row.startswith(p))
        ),
        row,
    )


if __name__ == "__main__":
    sys.exit(main())
