"""Push context benchmark (issue 35): task localisation on SWE-bench tasks from the issue text alone.

For each SWE-ContextBench case of its Python splits (Lite and Verified; the Multilingual split and the Full
split's other languages are reserved and never read) whose repository is fetched under --mirrors, the
repository is exported at the task's base commit, indexed by `recall index`'s indexer (no history), and
the issue text goes through the UserPromptSubmit ranking (`push.task.rank`). Measured per task: the rank of
the gold patch's files among the ranked files (Acc@1, Acc@3 = what the hook names, Acc@5), the model's
confidence, the ranking's latency; a BM25 ranking of the repository's files (SQLite FTS5 `bm25()` over
each file's path and text) side by side in the same run.

Split by project: `FIT_PROJECTS` tune the confidence model (`bench/fit_push.py`), the rest are held out.

    nice python bench/bench_push.py --mirrors /work/.mirror [--limit-per-repo N]

Rows go to bench/results/push_localisation.json (one per task; a rerun skips tasks already there).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "push_localisation.json"
BENCH_REPO = "jiayuanz3+SWEContextBench"
SPLITS = ("SWEContextBench Lite", "SWEContextBench Verified")  # Python only; Multilingual is reserved
REPOS = {  # case prefix -> mirror folder
    "psf__requests": "psf+requests",
    "pallets__flask": "pallets+flask",
    "pytest-dev__pytest": "pytest-dev+pytest",
    "pylint-dev__pylint": "pylint-dev+pylint",
    "mwaskom__seaborn": "mwaskom+seaborn",
    "astropy__astropy": "astropy+astropy",
}
FIT_PROJECTS = frozenset({"psf__requests", "pytest-dev__pytest", "pallets__flask"})
_DIFF = re.compile(r"^diff --git a/(\S+) b/", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def cases(mirrors: Path, limit: int) -> list[dict]:
    bench = mirrors / BENCH_REPO / "repo"
    names = subprocess.run(
        ["git", "-C", str(bench), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True
    ).stdout.splitlines()
    seen: dict[str, dict] = {}
    per_repo: dict[str, int] = {}
    for name in sorted(names):
        split, _, file = name.removeprefix("cases/").partition("/")
        if split not in SPLITS or not file.endswith(".json"):
            continue
        prefix = file.rsplit("-", 1)[0]
        if prefix not in REPOS or not (mirrors / REPOS[prefix] / "repo").exists():
            continue
        case = json.loads(subprocess.run(["git", "-C", str(bench), "show", f"HEAD:{name}"],
                                         capture_output=True, text=True).stdout)  # fmt: skip
        if case["instance_id"] in seen or per_repo.get(prefix, 0) >= limit:
            continue
        per_repo[prefix] = per_repo.get(prefix, 0) + 1
        case["split"], case["project"] = split, prefix
        seen[case["instance_id"]] = case
    return list(seen.values())


def export(git_dir: Path, commit: str, dest: Path) -> None:
    archive = subprocess.Popen(["git", "--git-dir", str(git_dir), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.wait()
    subprocess.run(["git", "init", "-q", str(dest)], check=True)  # a checkout root for the indexer


def bm25_rank(root: Path, query: str) -> list[str]:
    """Files ranked by SQLite FTS5's BM25 over path and text (Python files and docs the gold patches touch)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE d USING fts5(path, body, tokenize=\"unicode61 tokenchars '_'\")")
    for p in root.rglob("*"):
        if p.is_file() and p.suffix in (".py", ".pyi", ".cfg", ".toml") and ".git" not in p.parts:
            try:
                conn.execute(
                    "INSERT INTO d VALUES (?, ?)", (str(p.relative_to(root)), p.read_text("utf-8", "replace"))
                )
            except OSError:
                continue
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:64]
    if not words:
        return []
    expr = " OR ".join(f'"{w}"' for w in words)
    return [
        r[0] for r in conn.execute("SELECT path FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 20", (expr,))
    ]


def rank_of(gold: list[str], ranked: list[str]) -> int | None:
    for i, path in enumerate(ranked):
        if path in gold:
            return i + 1
    return None


def run_case(case: dict, mirrors: Path, home: Path) -> dict:
    from recall_agent.architecture import graph, indexer
    from recall_agent.push import task

    gold = sorted(set(_DIFF.findall(case["patch"])))
    with tempfile.TemporaryDirectory(prefix="push-") as tmp:
        root = Path(tmp) / case["project"].split("__")[1]
        root.mkdir()
        export(mirrors / REPOS[case["project"]] / "repo", case["base_commit"], root)
        t0 = time.perf_counter()
        conn = graph.connect(graph.store_path(root.resolve(), home))
        indexer.update(conn, root.resolve(), progress=False, summary=False)
        conn.close()
        index_s = time.perf_counter() - t0
        prompt = case["problem_statement"]
        t1 = time.perf_counter()
        conn = task.open_index(root.resolve())  # what the hook does: open read-only, rank, score
        assert conn is not None
        ranked, row = task.rank(conn, prompt, limit=10)
        confidence = task.probability(row)
        conn.close()
        latency_ms = (time.perf_counter() - t1) * 1000
        bm25 = bm25_rank(root, prompt)
        (graph.store_path(root.resolve(), home)).unlink(missing_ok=True)
    files = [p for p, _, _ in ranked]
    return {
        "instance_id": case["instance_id"], "split": case["split"], "project": case["project"],
        "fit": case["project"] in FIT_PROJECTS, "gold": gold, "ranked": files[:10], "features": row,
        "confidence": confidence, "rank": rank_of(gold, files), "bm25": bm25[:10],
        "bm25_rank": rank_of(gold, bm25), "latency_ms": round(latency_ms, 1), "index_s": round(index_s, 1),
    }  # fmt: skip


def summary(rows: list[dict], threshold: float) -> dict:
    def acc(key: str, k: int, part: list[dict]) -> float:
        return (
            round(sum(1 for r in part if r[key] is not None and r[key] <= k) / len(part), 3) if part else 0.0
        )

    out = {}
    for name, part in (
        ("fit", [r for r in rows if r["fit"]]),
        ("held_out", [r for r in rows if not r["fit"]]),
    ):
        answered = [r for r in part if r["confidence"] >= threshold]
        lat = sorted(r["latency_ms"] for r in part)
        out[name] = {
            "tasks": len(part),
            "acc1": acc("rank", 1, part), "acc3": acc("rank", 3, part), "acc5": acc("rank", 5, part),
            "bm25_acc1": acc("bm25_rank", 1, part), "bm25_acc5": acc("bm25_rank", 5, part),
            "answered": len(answered),
            "answered_acc1": acc("rank", 1, answered), "answered_acc3": acc("rank", 3, answered),
            "p50_ms": round(statistics.median(lat), 1) if lat else None,
            "p95_ms": round(lat[max(0, int(0.95 * len(lat)) - 1)], 1) if lat else None,
        }  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--limit-per-repo", type=int, default=12)
    ap.add_argument("--report", action="store_true", help="only print the table of the saved rows")
    args = ap.parse_args()
    done = {r["instance_id"]: r for r in json.loads(RESULTS.read_text())["rows"]} if RESULTS.exists() else {}
    if not args.report:
        home = Path(tempfile.mkdtemp(prefix="push-home-"))
        os.environ["RECALL_HOME"] = str(home)
        for case in cases(args.mirrors, args.limit_per_repo):
            if case["instance_id"] in done:
                continue
            try:
                done[case["instance_id"]] = run_case(case, args.mirrors, home)
            except Exception as exc:  # one repository that fails to export/index must not lose the rest
                print(f"{case['instance_id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            r = done[case["instance_id"]]
            print(f"{r['instance_id']:32} rank {r['rank']} bm25 {r['bm25_rank']} conf {r['confidence']:.2f} "
                  f"{r['latency_ms']} ms (index {r['index_s']} s)", flush=True)  # fmt: skip
            _save(list(done.values()))
    from recall_agent.push import task

    rows = list(done.values())
    table = summary(rows, task.threshold())
    _save(rows, table)
    for half, s in table.items():
        print(f"{half:9} {json.dumps(s)}")
    print(f"load average {os.getloadavg()}")
    return 0


def _save(rows: list[dict], table: dict | None = None) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    data = {"command": "nice python bench/bench_push.py --mirrors /work/.mirror", "rows": rows}
    if table:
        data["summary"] = table
        data["load_average"] = os.getloadavg()
    RESULTS.write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
