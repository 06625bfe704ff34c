"""CPU time of `recall index` from scratch, this checkout against a release, on one folder: the figure that
carries over from a loaded machine (wall time does not). Both run one parse process
(`RECALL_INDEX_WORKERS=1`: every file parsed in the indexing process, so its CPU time is the whole cost),
alternately, `--rounds` times each, under the same conditions.

    python bench/bench_index_cpu.py /path/to/folder --release 092b9df   # bench/results/index_cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from release import package_in, release_tree  # noqa: E402


def index_cpu(folder: Path, home: Path, package: str, pythonpath: str) -> dict:
    if home.exists():
        shutil.rmtree(home)
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": pythonpath, "RECALL_INDEX_WORKERS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", package, "index", str(folder), "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    summary, _ = json.JSONDecoder().raw_decode(out.stdout[out.stdout.index("{") :])
    return {
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "wall_s": round(wall, 1),
        "loadavg": round(load, 2),
        "files": summary.get("files"),
        "symbols": summary.get("symbols"),
        "calls": summary.get("calls"),
        "phases_s": summary.get("phases_s"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--release", required=True, help="the commit measured beside this checkout")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--results", type=Path, default=HERE / "results" / "index_cpu.json")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"checkout": [], f"release {args.release}": []}
    with tempfile.TemporaryDirectory() as tmp:
        rel = release_tree(Path(tmp), args.release)
        for _ in range(args.rounds):
            runs["checkout"].append(index_cpu(args.folder, Path(tmp) / "home-a", "recall_agent", str(ROOT)))
            runs[f"release {args.release}"].append(
                index_cpu(args.folder, Path(tmp) / "home-b", package_in(rel), str(rel))
            )
    for label, rows in runs.items():
        for r in rows:
            print(f"{label:<20} cpu {r['cpu_s']:>7} s  wall {r['wall_s']:>7} s  load {r['loadavg']:>5}  files {r['files']}"
                  f"  symbols {r['symbols']}  calls {r['calls']}  phases {r['phases_s']}")  # fmt: skip
    args.results.write_text(json.dumps({"folder": str(args.folder), "runs": runs}, indent=2) + "\n")
    print(f"saved {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
