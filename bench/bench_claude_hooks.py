"""What recall's hooks add to the real Claude Code client, per step, with and without the plugin.

The real `claude -p` (headless) runs a scripted session against the Messages API mock of
`tests/claude_fixtures.py`, in a fresh checkout of a repository whose check fails, with recall's plugin
loaded (`--plugin-dir`) or without it, alternating so both see the same machine load. The store holds
`--store` learnings (bench_hooks.py's corpus-based store) plus what earlier sessions captured, so the
failure is a hit: the prior fix is injected. Each session:

  idle_bash     `echo` that succeeds (x2)                                 the common case: no recall hook
  idle_write    Write of a new file                                       no recall hook
  failure       `python3 check.py` fails                                  lookup + injection
  edit_open     Edit while the error is open                              no recall hook
  resolve       `python3 check.py` passes                                 no recall hook
  session_end   last answer -> process exit                               Stop (the capture reads the
                                                                          transcript) + SessionEnd

Two more kinds of session: `with_http` runs the plugin with `AGENT_LEARNING_RETRIEVAL_URL` set to
`recall serve` on the same store (the failure hook asks the server instead of importing the learnings
node); `floor` loads a plugin whose hooks are `cat >/dev/null` on the same events, the least any hook can
cost on this machine at this moment. After each round the same-moment cost of `sh -c true`, `python -c
pass` and `python -c 'import recall_agent.models'` (pydantic) is measured too: the machine is shared.

Step time is what the client takes from the end of the mock's tool_use answer to its next request (tool
run, hooks, client work); `added` is the with-plugin figure minus the median without it. The client's
own debug log gives each recall hook's duration too (`hook_ms`, process start to exit, as it waited).

    python bench/bench_claude_hooks.py                 # 10 sessions of each kind, ~5 minutes
    python bench/bench_claude_hooks.py --sessions 4    # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench"), str(ROOT)]
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)

from bench_hooks import build_store, load_corpus, pct, recall_serve  # noqa: E402
from claude_fixtures import (  # noqa: E402
    MessagesMock,
    Turn,
    claude_binary,
    claude_env,
    fix_script,
    make_checkout,
    run_claude,
)

RESULTS = ROOT / "bench" / "results" / "claude_hooks.json"
STEPS = ["idle_bash", "idle_bash", "idle_write", "failure", "read", "edit_open", "resolve"]
_HOOK_LINE = re.compile(
    r"Hooks: (\w+)(?::(\w+))? \[[^\]\n]*\] \(plugin (\w+)@inline\) finished with status 0 \((\d+)ms\)"
)
# the cheapest hook a plugin can have, on the same events: the floor recall's idle path is compared with
FLOOR_HOOKS = {
    event: [{**({"matcher": "*"} if event.startswith("Post") else {}),
             "hooks": [{"type": "command", "command": "cat >/dev/null", "timeout": 5}]}]
    for event in ("PostToolUseFailure", "Stop", "SessionEnd")  # the events recall's plugin registers
}  # fmt: skip


def script(project: Path) -> list[Turn]:
    """Three idle calls, then the fixture's fix: fail, read, edit, pass, explain."""
    return [
        Turn.tool("Bash", {"command": "echo idle-1", "description": "Say something"}),
        Turn.tool("Bash", {"command": "echo idle-2", "description": "Say something"}),
        Turn.tool("Write", {"file_path": str(project / "notes.txt"), "content": "notes\n"}),
        *fix_script(project),
    ]


KINDS = ("without", "floor", "with", "with_http")


def floor_plugin(work: Path) -> Path:
    folder = work / "floor-plugin"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / "hooks").mkdir()
    manifest = {
        "name": "floor",
        "version": "0.0.1",
        "description": "cat >/dev/null hooks",
        "author": {"name": "bench"},
    }
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"hooks": FLOOR_HOOKS}))
    return folder


def one_session(work: Path, n: int, kind: str, env_extra: dict[str, str]) -> dict[str, object]:
    plugin = {"without": None, "floor": work / "floor-plugin"}.get(kind, ROOT)
    project = make_checkout(work / f"{kind}-{n}")
    debug = project.parent / "debug.log"
    with MessagesMock(script(project)) as api:
        env = claude_env(api, work / "home", **env_extra)
        proc = run_claude(api, project, work / "home", "make the check pass", plugin_dir=plugin,
                          debug_file=debug, env=env)  # fmt: skip
        ended = time.monotonic()
    if proc.returncode != 0 or api.errors:
        raise SystemExit(f"claude failed: {proc.stderr[-800:]} {api.errors}")
    main = api.main_requests
    if len(main) != len(STEPS) + 1:
        raise SystemExit(f"expected {len(STEPS) + 1} model requests, got {len(main)}")
    steps: dict[str, list[float]] = {}
    for name, done, following in zip(STEPS, main, main[1:], strict=False):
        steps.setdefault(name, []).append(following.arrived - done.answered)
    steps["session_end"] = [ended - main[-1].answered]
    injected = "recall: a prior fix for this error" in main[STEPS.index("failure") + 1].latest_text()
    hooks: dict[str, list[float]] = {}
    for match in _HOOK_LINE.finditer(debug.read_text()):
        event, tool, _plugin, ms = match.groups()
        name = f"{event}:{tool}" if tool else event
        if event == "PostToolUse":  # the log is in call order: Bash and Write before the failure are idle
            seen = sum(len(v) for k, v in hooks.items() if k.startswith(f"{name} "))
            name += " idle" if (tool, seen) in (("Bash", 0), ("Bash", 1), ("Write", 0)) else " open error"
        hooks.setdefault(name, []).append(int(ms) / 1000)
    return {"steps": steps, "injected": injected, "hooks": hooks}


def summarize(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values) * 1000),
        "p95_ms": round(pct(values, 95) * 1000),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10, help="sessions with and without the plugin each")
    parser.add_argument("--store", type=int, default=10_000, help="learnings in the store")
    args = parser.parse_args()
    if claude_binary() is None:
        raise SystemExit("claude is not installed: npm install -g @anthropic-ai/claude-code (see .ci/run)")
    version = os.popen("claude --version").read().strip()
    work = Path(tempfile.mkdtemp(prefix="bench-claude-"))
    home = work / "recall-home"
    try:
        build_store(home, load_corpus(), args.store)
        floor_plugin(work)
        scripts = sysconfig.get_path("scripts")  # the real recall script first, no version-manager shim
        env_extra = {
            "RECALL_HOME": str(home),
            "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")]),
        }
        runs: dict[str, list[dict[str, object]]] = {kind: [] for kind in KINDS}
        baseline: dict[str, list[float]] = {}
        with recall_serve(os.environ | env_extra, work) as url:
            http_extra = env_extra | {"AGENT_LEARNING_RETRIEVAL_URL": url}
            for n in range(args.sessions + 1):  # session 0 of each kind warms caches and teaches the fix
                for kind in KINDS:
                    result = one_session(work, n, kind, http_extra if kind == "with_http" else env_extra)
                    if n:
                        runs[kind].append(result)
                if n:
                    baselines(baseline)
        report = tabulate(runs, baseline, version, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nsaved {RESULTS.relative_to(ROOT)}")


BASELINES = {
    "sh -c true": ["/bin/sh", "-c", "true"],
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import recall_agent.models'": [sys.executable, "-c", "import recall_agent.models"],
}


def baselines(into: dict[str, list[float]]) -> None:
    """The same moment's cost of a bare shell, a bare interpreter and the wire models (pydantic)."""
    for name, cmd in BASELINES.items():
        started = time.perf_counter()
        subprocess.run(cmd, check=True)
        into.setdefault(name, []).append(time.perf_counter() - started)


def tabulate(
    runs: dict[str, list[dict[str, object]]],
    baseline: dict[str, list[float]],
    version: str,
    args: argparse.Namespace,
) -> dict:
    def collect(kind: str, key: str) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for run in runs[kind]:
            for name, values in run[key].items():  # type: ignore[union-attr]
                out.setdefault(name, []).extend(values)
        return out

    without = collect("without", "steps")
    print(f"Claude Code {version}, {args.sessions} sessions of each kind, store {args.store} learnings, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    report: dict[str, object] = {"client": version, "sessions": args.sessions, "store": args.store}
    print("same-moment baselines: " + ", ".join(
        f"{name} p50 {summarize(v)['p50_ms']} ms p95 {summarize(v)['p95_ms']} ms" for name, v in baseline.items()))  # fmt: skip
    report["baselines"] = {name: summarize(v) for name, v in baseline.items()}
    for kind in KINDS[1:]:
        steps = collect(kind, "steps")
        print(f"\n{kind}: step time in ms (model's tool_use answered -> client's next request)")
        print(
            f"{'step':12} {'without p50':>11} {kind + ' p50':>14} {kind + ' p95':>14} {'added p50':>10} {'added p95':>10}"
        )
        rows = {}
        for name in [*dict.fromkeys(STEPS), "session_end"]:
            base = statistics.median(without[name])
            row = {
                "without": summarize(without[name]),
                kind: summarize(steps[name]),
                "added_p50_ms": round((statistics.median(steps[name]) - base) * 1000),
                "added_p95_ms": round((pct(steps[name], 95) - base) * 1000),
            }
            rows[name] = row
            print(f"{name:12} {row['without']['p50_ms']:>11} {row[kind]['p50_ms']:>14} {row[kind]['p95_ms']:>14} "
                  f"{row['added_p50_ms']:>10} {row['added_p95_ms']:>10}")  # fmt: skip
        hook_rows = {name: summarize(values) for name, values in sorted(collect(kind, "hooks").items())}
        print("hook durations as the client logged them for this plugin (process start to exit):")
        for name, row in hook_rows.items():
            print(f"  {name:28} n={row['n']:>3} p50 {row['p50_ms']:>4} ms  p95 {row['p95_ms']:>4} ms")
        injected = sum(bool(r["injected"]) for r in runs[kind])
        print(f"prior fix injected after the failure: {injected}/{len(runs[kind])} sessions")
        report[kind] = {"steps": rows, "hooks": hook_rows, "injected": f"{injected}/{len(runs[kind])}"}
    report["load_avg_end"] = os.getloadavg()
    return report


if __name__ == "__main__":
    main()
