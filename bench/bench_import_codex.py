"""`recall import-sessions --agent codex`: how fast it reads a large Codex CLI history.

A history of `--mb` (default 1,024 MB) of Codex rollouts is made under /tmp in Codex's layout
(`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) by repeating the real rollouts of the Codex
corpus (bench/sessions/sources-codex.json, fetched by bench/sessions/fetch.py into bench/.cache), each copy
with a session id of its own; every fourth copy is compressed as `.jsonl.zst`, as newer Codex versions
write them. Then the real command runs on it as a process (fresh RECALL_HOME): once from scratch, and once
more (every file unchanged: skipped by the ledger). MB/s is of the uncompressed bytes, wall time.

    python3 bench/bench_import_codex.py              # writes bench/results/import-codex.json
    python3 bench/bench_import_codex.py --mb 100     # a quick run
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
import uuid
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPUS = BENCH / ".cache" / "sessions" / "codex-mise"
RESULTS = BENCH / "results" / "import-codex.json"


def _with_new_id(data: bytes, old: str, new: str) -> bytes:
    first, _, rest = data.partition(b"\n")
    return first.replace(old.encode(), new.encode()) + b"\n" + rest


def generate(root: Path, mb: int) -> dict[str, float]:
    import zstandard

    sources = sorted(CORPUS.glob("*.jsonl"))
    if not sources:
        raise SystemExit(f"no rollouts in {CORPUS}: run python3 bench/sessions/fetch.py first")
    started = time.monotonic()
    written = raw = files = compressed = 0
    zc = zstandard.ZstdCompressor(level=3)
    while raw < mb * 1_000_000:
        for src in sources:
            data = src.read_bytes()
            old = json.loads(data.partition(b"\n")[0])["payload"]["id"]
            sid = str(uuid.uuid4())
            data = _with_new_id(data, old, sid)
            day = root / "sessions" / "2026" / f"{1 + files % 12:02d}" / f"{1 + files % 28:02d}"
            day.mkdir(parents=True, exist_ok=True)
            name = f"rollout-2026-01-01T00-00-{files % 60:02d}-{sid}.jsonl"
            if files % 4 == 3:
                blob = zc.compress(data)
                (day / (name + ".zst")).write_bytes(blob)
                written += len(blob)
                compressed += 1
            else:
                (day / name).write_bytes(data)
                written += len(data)
            raw += len(data)
            files += 1
            if raw >= mb * 1_000_000:
                break
    return {"sessions": files, "compressed": compressed, "bytes": raw, "on_disk": written,
            "generate_s": time.monotonic() - started}  # fmt: skip


def run_import(codex_home: Path, home: Path, *extra: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("RECALL_SERVER_URL",)}
    env |= {"CODEX_HOME": str(codex_home), "RECALL_HOME": str(home), "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", "import-sessions", "--all", "--agent", "codex", "-q", *extra],
        env=env, capture_output=True, text=True, cwd=home.parent,
    )  # fmt: skip
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"import failed: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "summary": proc.stdout.strip(),
            "max_rss_mb": round(after.ru_maxrss / 1024, 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--keep", action="store_true", help="keep the generated history under /tmp")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="recall-import-codex-", dir="/tmp"))
    try:
        gen = generate(root / "codex", args.mb)
        print(f"generated {gen['sessions']} rollouts ({gen['compressed']} as .zst), {gen['bytes'] / 1e6:.0f} MB "
              f"({gen['on_disk'] / 1e6:.0f} MB on disk) in {gen['generate_s']:.0f} s")  # fmt: skip
        first = run_import(root / "codex", root / "home")
        again = run_import(root / "codex", root / "home")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    mbytes = float(gen["bytes"]) / 1e6
    out = {"load_average": os.getloadavg(), "cpus": os.cpu_count(), "history": gen, "first": first, "again": again,
           "command": "python3 bench/bench_import_codex.py " + " ".join(sys.argv[1:])}  # fmt: skip
    for name in ("first", "again"):
        run = out[name]
        run["mb_per_s"] = round(mbytes / float(run["wall_s"]), 1)  # type: ignore[arg-type]
        print(
            f"{name:<6} {run['wall_s']:>7} s  {run['mb_per_s']:>7} MB/s  cpu {run['cpu_s']} s  {run['summary']}"
        )
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
