"""On-error hook latency: real `recall hook` processes against a store of 10k learnings.

Store: the 62 real causes of `bench/corpus/errors.jsonl` (instance 0 recorded as learnings of repo
`bench-repo`) plus synthetic learnings of the same shapes (new quoted names, identifiers, subjects) up to
10,000. Each timed run is one fresh process, exactly as Claude Code spawns it:

  hit    PostToolUseFailure with another instance of a recorded cause (expects additionalContext)
  miss   PostToolUseFailure with a distractor / unrelated error (expects silence)
  ok     PostToolUse of a successful Bash command (what an older `recall install` still registers; the
         plugin registers no hook for successes any more)
  stop   Stop of a session whose transcript holds one fixed error (the capture engine reads it, stores it)
  stop_3mb  Stop on a 3 MB transcript of real sessions (three SWE-ContextBench transcripts joined, from
         bench/sessions/fetch.py's cache), read from its start: what a first Stop pays at most
  http   the hit scenario with AGENT_LEARNING_RETRIEVAL_URL pointing at `recall serve` on the same store
         (the hook then imports no pydantic: stdlib urllib + recall's own modules)

Wall time is measured around the process (start to exit). On this shared 2-core machine wall time depends
on the load of other jobs, so the table also shows the same-moment cost of a bare `python -c pass` and of
`python -c "import recall_agent.models"` (pydantic), the load average, and the hook's CPU time (user+sys).
A `-X importtime` breakdown of one on-error run says where the start-up time goes.

    python bench/bench_hooks.py            # ~3-6 minutes on a loaded 2-core machine
    python bench/bench_hooks.py --runs 10  # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus" / "errors.jsonl"
RESULTS = ROOT / "bench" / "results" / "hooks.json"
REPO = "bench-repo"
# what the capture engine writes: a captured learning verified by a passing run. Without it a learning is an
# unverified agent's note, which the hook never injects (safety/trust.py), and "hit" would time no injection
CAPTURED = {"provenance": "captured", "fix": {"verified_by": "python -m pytest tests"}}
STORE_SIZE = 10_000

_QUOTED = re.compile(r"('|\"|`)([^'\"`\n]{1,60})\1")
_IDENT = re.compile(r"\b[a-z]+_[a-z0-9_]+\b")


def load_corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def _mutate(text: str, rng: random.Random, n: int) -> str:
    def word() -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))

    text = _QUOTED.sub(lambda m: f"{m.group(1)}{word()}_{n}{m.group(1)}", text)
    text = _IDENT.sub(lambda m: f"{word()}_{word()}", text)
    first, _, rest = text.partition("\n")
    return f"{first} ({word()}_{word()})" + (f"\n{rest}" if rest else "")


def build_store(home: Path, rows: list[dict], size: int) -> float:
    from recall_agent.learnings.signatures import normalize
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning

    learn = [r for r in rows if r["kind"] == "cause" and r["instance"] == 0]
    bases = [normalize(r["text"]) for r in learn]
    rng = random.Random(11)
    started = time.perf_counter()
    with open_store(home) as store:
        batch = []
        for n in range(size - len(learn)):
            batch.append(
                Learning(
                    repo=rng.choice([REPO] + [f"repo-{i}" for i in range(20)]),
                    error_signatures=[_mutate(bases[n % len(bases)], rng, n)],
                    resolution_summary=f"fix #{n}: {learn[n % len(learn)]['resolution']}",
                    file_paths_touched=[f"src/mod_{n % 997}.py"],
                    **CAPTURED,
                )
            )
            if len(batch) == 2000:
                store.add_many(batch, consolidate=False)  # mutated copies kept apart: a store of this size
                batch = []
        batch += [
            Learning(repo=REPO, error_signatures=[r["text"]], resolution_summary=r["resolution"], **CAPTURED)
            for r in learn
        ]
        store.add_many(batch, consolidate=False)
        assert store.count() >= size - 5, store.count()
    return time.perf_counter() - started


def timed(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, cwd=cwd, capture_output=True, timeout=30)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"hook exited {proc.returncode}: {proc.stderr.decode()[:300]}")
    return wall, cpu, proc.stdout.decode()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def summary(walls: list[float], cpus: list[float] | None = None) -> dict[str, float]:
    out = {
        "n": len(walls),
        "p50_ms": round(statistics.median(walls) * 1000),
        "p95_ms": round(pct(walls, 95) * 1000),
        "max_ms": round(max(walls) * 1000),
    }
    if cpus:
        out["cpu_p50_ms"] = round(statistics.median(cpus) * 1000)
        out["cpu_p95_ms"] = round(pct(cpus, 95) * 1000)
    return out


def failure_payload(sid: str, cwd: Path, text: str, n: int) -> bytes:
    return json.dumps(
        {
            "session_id": sid,
            "transcript_path": str(cwd / "none.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": f"python -m pytest tests/test_{n}.py"},
            "tool_use_id": f"toolu_{n}",
            "error": text,
            "is_interrupt": False,
        }
    ).encode()


def importtime_breakdown(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> dict[str, int]:
    """Cumulative import microseconds of the top-level groups on one on-error run."""
    proc = subprocess.run(
        cmd[:1] + ["-X", "importtime"] + cmd[1:], input=stdin, env=env, cwd=cwd, capture_output=True
    )
    groups: dict[str, int] = {}
    for line in proc.stderr.decode().splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not m:
            continue
        self_us, name = int(m.group(1)), m.group(4)
        if name.startswith("recall."):
            key = ".".join(name.split(".")[:3]) if name.startswith("recall_agent.learnings") else name
        elif name.startswith(("pydantic", "annotated_types", "typing_extensions")):
            key = "pydantic (+ pydantic_core, typing_extensions)"
        elif name in ("site",) or len(m.group(3)) > 0 and name.split(".")[0] in ("certifi", "importlib"):
            key = "site (.pth files: editable install, certifi)"
        else:
            key = "stdlib and other"
        groups[key] = groups.get(key, 0) + self_us
    return dict(sorted(groups.items(), key=lambda kv: -kv[1]))


@contextmanager
def recall_serve(env: dict[str, str], cwd: Path) -> Iterator[str]:
    """`recall serve` on a free 127.0.0.1 port with `env` (its RECALL_HOME); yields the learnings node's URL."""
    import socket
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "recall_agent", "serve", "--port", str(port), "--log-level", "error"],
        env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("recall serve did not start") from None
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/v1/nodes/node_agent_learning_retrieval_effect/execute"
    finally:
        server.terminate()
        server.wait(timeout=30)


def run_http(
    cmd: list[str], env: dict[str, str], project: Path, hits: list[dict], rng: random.Random, runs: int,
    walls: list[float], cpus: list[float],
) -> int:  # fmt: skip
    """The hit scenario against `recall serve` (started once, stopped after); returns how many injected."""
    with recall_serve(env, project) as url:
        http_env = env | {"AGENT_LEARNING_RETRIEVAL_URL": url}
        injected = 0
        for i in range(runs):
            row = rng.choice(hits)
            payload = failure_payload(f"x{i}", project, row["text"], i)
            w, c, out = timed(cmd + ["PostToolUseFailure"], payload, http_env, project)
            walls.append(w)
            cpus.append(c)
            injected += bool(out.strip())
        return injected


def fixed_transcript(path: Path, project: Path, error: str, n: int) -> Path:
    """A transcript as the client writes it: a failing test run, an edit, the same run passing."""
    run = f"python -m pytest tests/test_{n}.py"
    target = str(project / "src" / f"mod_{n}.py")
    lines = [
        _use(f"f{n}", "Bash", {"command": run}), _result(f"f{n}", "Exit code 1\n" + error, True),
        _say("The import fails because the package was missing from requirements.txt."),
        _use(f"e{n}", "Edit", {"file_path": target, "old_string": "x = 1", "new_string": "x = 2"}),
        _result(f"e{n}", "The file has been updated.", False),
        _use(f"p{n}", "Bash", {"command": run}), _result(f"p{n}", "1 passed", False),
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _use(tid: str, name: str, tool_input: dict) -> dict:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tid, "name": name, "input": tool_input}]}}  # fmt: skip


def _result(tid: str, text: str, is_error: bool) -> dict:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}]}}  # fmt: skip


def _say(text: str) -> dict:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def real_transcript(path: Path, size: int) -> Path | None:
    """Real transcripts (bench/sessions/fetch.py's SWE-ContextBench cache), largest first, joined until
    `size` bytes; None when the cache is empty."""
    cache = ROOT / "bench" / ".cache" / "sessions" / "swecb"
    files = sorted(cache.glob("*.jsonl"), key=lambda p: p.stat().st_size, reverse=True)
    if not files:
        return None
    with path.open("wb") as out:
        for f in files:
            if out.tell() >= size:
                break
            out.write(f.read_bytes())
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="processes per scenario (default 30)")
    args = ap.parse_args()

    rows = load_corpus()
    hits = [r for r in rows if r["kind"] == "cause" and r["instance"] in (1, 2, 3)]
    misses = [r for r in rows if r["kind"] in ("distractor", "unrelated")]
    rng = random.Random(5)
    results: dict[str, object] = {"machine": {"cores": os.cpu_count(), "load_before": os.getloadavg()}}

    with tempfile.TemporaryDirectory(prefix="recall-bench-hooks-") as tmp:
        tmp_path = Path(tmp)
        home = tmp_path / "home"
        project = tmp_path / REPO
        (project / ".git").mkdir(parents=True)
        (project / ".git" / "HEAD").write_text("ref: refs/heads/fix/BENCH-1\n")
        os.environ["RECALL_HOME"] = str(home)
        build_s = build_store(home, rows, STORE_SIZE)
        print(f"store: {STORE_SIZE} learnings built in {build_s:.1f} s")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AGENT_LEARNING", "RECALL_SERVER", "RECALL_HOOK"))
        }
        env["RECALL_HOME"] = str(home)
        cmd = [sys.executable, "-m", "recall_agent", "hook"]
        big = real_transcript(tmp_path / "big.jsonl", 3_000_000)
        results["stop_3mb_bytes"] = big.stat().st_size if big else 0

        walls: dict[str, list[float]] = {
            k: []
            for k in (
                "hit",
                "miss",
                "ok",
                "stop",
                "stop_3mb",
                "http",
                "python -c pass",
                "import recall_agent.models",
            )
        }
        cpus: dict[str, list[float]] = {k: [] for k in walls}
        injected = 0
        for i in range(args.runs):
            row = rng.choice(hits)
            w, c, out = timed(
                cmd + ["PostToolUseFailure"], failure_payload(f"h{i}", project, row["text"], i), env, project
            )
            walls["hit"].append(w), cpus["hit"].append(c)
            injected += bool(out.strip())
            row = rng.choice(misses)
            w, c, out = timed(
                cmd + ["PostToolUseFailure"], failure_payload(f"m{i}", project, row["text"], i), env, project
            )
            walls["miss"].append(w), cpus["miss"].append(c)
            ok = json.dumps({"session_id": f"fresh{i}", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a", "stderr": ""}}).encode()  # fmt: skip
            w, c, _ = timed(cmd + ["PostToolUse"], ok, env, project)
            walls["ok"].append(w), cpus["ok"].append(c)
            # a session whose miss-error gets fixed, then Stop captures it from the transcript
            sid = f"m{i}"
            transcript = fixed_transcript(tmp_path / f"{sid}.jsonl", project, row["text"], i)
            stop = json.dumps({"session_id": sid, "transcript_path": str(transcript), "cwd": str(project),
                               "hook_event_name": "Stop", "stop_hook_active": False}).encode()  # fmt: skip
            w, c, _ = timed(cmd + ["Stop"], stop, env, project)
            walls["stop"].append(w), cpus["stop"].append(c)
            if big is not None:
                stop = json.dumps({"session_id": f"big{i}", "transcript_path": str(big), "cwd": str(project),
                                   "hook_event_name": "Stop", "stop_hook_active": False}).encode()  # fmt: skip
                w, c, _ = timed(cmd + ["Stop"], stop, env, project)
                walls["stop_3mb"].append(w), cpus["stop_3mb"].append(c)
            for name, code in (
                ("python -c pass", "pass"),
                ("import recall_agent.models", "import recall_agent.models"),
            ):
                w, c, _ = timed([sys.executable, "-c", code], b"", env, project)
                walls[name].append(w), cpus[name].append(c)

        http_injected = run_http(cmd, env, project, hits, rng, args.runs, walls["http"], cpus["http"])

        breakdown = importtime_breakdown(
            cmd + ["PostToolUseFailure"], failure_payload("imp", project, hits[0]["text"], 0), env, project
        )
        # sessions whose resolved error Stop turned into a learning (the store may merge equal learnings,
        # so count on the session side)
        from recall_agent.learnings.store import open_store

        with open_store(home) as store:
            sessions = {lr.session_id for lr in store.iter_all()}
        captured = sum(f"m{i}" in sessions for i in range(args.runs))

    big_ok = bool(walls["stop_3mb"])
    results["store_size"] = STORE_SIZE
    results["scenarios"] = {k: summary(walls[k], cpus[k]) for k in walls}
    results["hit_injected"] = f"{injected}/{args.runs}"
    results["http_injected"] = f"{http_injected}/{args.runs}"
    results["stop_captured"] = f"{captured}/{args.runs}"
    results["stop_3mb_transcript"] = (
        "3 SWE-ContextBench transcripts joined" if big_ok else "not run (fetch.py)"
    )
    results["importtime_self_us_on_error"] = breakdown
    results["machine"]["load_after"] = os.getloadavg()  # type: ignore[index]
    results["command"] = "python bench/bench_hooks.py" + (f" --runs {args.runs}" if args.runs != 30 else "")

    print(
        f"\nload average before {results['machine']['load_before']}, after {results['machine']['load_after']}"
    )  # type: ignore[index]
    print(f"{'scenario':<24}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'cpu p50':>9}{'cpu p95':>9}")
    for name, s in results["scenarios"].items():  # type: ignore[union-attr]
        print(
            f"{name:<24}{s['n']:>4}{s['p50_ms']:>9}{s['p95_ms']:>9}{s['max_ms']:>9}{s['cpu_p50_ms']:>9}{s['cpu_p95_ms']:>9}"
        )
    print(
        f"hits injected: {results['hit_injected']} (http {results['http_injected']}); "
        f"stops captured: {results['stop_captured']}"
    )
    print("\nimport time on one on-error run (self, ms):")
    for name, us in list(breakdown.items())[:12]:
        print(f"  {name:<48}{us / 1000:>8.1f}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nsaved {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
