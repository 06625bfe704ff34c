"""Installing recall, and what the plugin's launcher costs each hook.

Hook costs (real processes, wall time around each, runs interleaved so that both sides see the same load):

  entry      `RECALL_BIN=<recall> sh hooks/recall-hook PostToolUse` on an idle tool call: what
             `recall install` writes into settings, and what the plugin ran before it had a launcher
  launcher   `sh bin/recall hook PostToolUse` with the plugin's environment built (${CLAUDE_PLUGIN_DATA}
             holds a current environment for this pyproject.toml): the plugin's hook command now
  first-use  `sh bin/recall hook PostToolUse` with an empty ${CLAUDE_PLUGIN_DATA}: start the background
             build, say so, exit (the build itself is not timed here: RECALL_PYTHON names no Python,
             so it stops at once; a fresh data folder each run)

With --full, also the installs themselves, once each (they download recall's dependencies from the package
index, so they depend on the network as much as on the machine):

  make install      a clean HOME, PATH=/usr/local/bin:/usr/bin:/bin, Debian's /usr/bin/python3
  plugin build      `python3 -I recall_agent/bootstrap/plugin.py <root> --build-into <data>` (what the
                    first hook starts in the background), with /usr/bin/python3

    python bench/bench_install.py            # hook costs, ~1 minute
    python bench/bench_install.py --full     # and the installs, ~3 more minutes
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "install.json"
HOOK_JSON = json.dumps({"session_id": "bench-session", "hook_event_name": "PostToolUse", "tool_name": "Bash"})
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def timed(cmd: list[str], env: dict[str, str], stdin: str = HOOK_JSON) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, env=env, capture_output=True, text=True, timeout=120)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{cmd} failed: {done.stderr[-500:]}")
    return elapsed


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
        "max_ms": round(ordered[-1], 1),
    }


def fresh_data(folder: Path, recall: str) -> Path:
    """A plugin data folder whose current environment counts as built from this checkout: its bin/recall is
    the machine's recall (an idle hook never runs it) and it holds this pyproject.toml."""
    env = folder / "venvs" / "env-bench"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "recall").symlink_to(recall)
    shutil.copyfile(ROOT / "pyproject.toml", env / "recall-pyproject.toml")
    (folder / "current").symlink_to("venvs/env-bench")
    return folder


def hook_costs(runs: int, first_use_runs: int, work: Path) -> dict[str, dict[str, float]]:
    recall = shutil.which("recall") or ""
    if not recall:
        raise SystemExit("recall is not on PATH (make dev)")
    base = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PLUGIN_DATA", "RECALL_BIN")}
    base["RECALL_HOME"] = str(work / "recall-home")
    entry_env = {**base, "RECALL_BIN": recall}
    launcher_env = {**base, "CLAUDE_PLUGIN_DATA": str(fresh_data(work / "data", recall))}
    entry = ["sh", str(ROOT / "hooks" / "recall-hook"), "PostToolUse"]
    launcher = ["sh", str(ROOT / "bin" / "recall"), "hook", "PostToolUse"]
    times: dict[str, list[float]] = {"entry": [], "launcher": [], "first-use": []}
    for _ in range(runs):
        times["entry"].append(timed(entry, entry_env))
        times["launcher"].append(timed(launcher, launcher_env))
    for i in range(first_use_runs):
        env = {**base, "PATH": SYSTEM_PATH, "CLAUDE_PLUGIN_DATA": str(work / f"first-{i}"),
               "RECALL_PYTHON": str(work / "no-python")}  # fmt: skip
        times["first-use"].append(timed(launcher, env))
    return {name: summary(values) for name, values in times.items()}


def full_installs(work: Path) -> dict[str, float]:
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    env.update(HOME=str(home), PATH=SYSTEM_PATH, LANG="C.UTF-8")
    start = time.perf_counter()
    done = subprocess.run(["make", "-C", str(ROOT), "install", "PYTHON=/usr/bin/python3"], env=env,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    make_s = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    subprocess.run(["make", "-C", str(ROOT), "uninstall"], env=env, capture_output=True, timeout=600)
    data = work / "plugin-data"
    data.mkdir()
    start = time.perf_counter()
    with open(data / "setup.log", "w") as log:
        built = subprocess.run(
            ["/usr/bin/python3", "-I", str(ROOT / "recall_agent" / "bootstrap" / "plugin.py"), str(ROOT),
             "--build-into", str(data)],
            env={**env, "RECALL_PYTHON": "/usr/bin/python3"}, stdout=log, stderr=subprocess.STDOUT, timeout=1800,
        )  # fmt: skip
    build_s = time.perf_counter() - start
    if built.returncode != 0:
        raise SystemExit((data / "setup.log").read_text()[-2000:])
    return {"make_install_s": round(make_s, 1), "plugin_build_s": round(build_s, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--first-use-runs", type=int, default=30)
    parser.add_argument("--full", action="store_true", help="also time make install and the plugin's build")
    args = parser.parse_args()
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    with tempfile.TemporaryDirectory(prefix="recall-bench-install-") as tmp:
        work = Path(tmp)
        result: dict[str, object] = {"hooks": hook_costs(args.runs, args.first_use_runs, work)}
        if args.full:
            result["installs"] = full_installs(work)
    result["loadavg_before"] = load_before
    result["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
    result["python"] = sys.version.split()[0]
    print(f"{'hook command':<12} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, row in result["hooks"].items():  # type: ignore[union-attr]
        print(f"{name:<12} {row['n']:>4} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['max_ms']:>8}")
    if "installs" in result:
        print(json.dumps(result["installs"]))
    print("load average before/after:", " ".join(load_before), "/", " ".join(result["loadavg_after"]))  # type: ignore[arg-type]
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
