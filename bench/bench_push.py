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
SESSIONS_DIR = Path("/work/cache/bench/sessions")
LABELS_DIR = ROOT / "bench" / "sessions"  # labels and the project split (labels.py)
REPLAY_RESULTS = ROOT / "bench" / "results" / "push_sessions.json"
BENCH_REPO = "jiayuanz3+SWEContextBench"
SPLITS = ("SWEContextBench Lite", "SWEContextBench Verified")  # Python only; Multilingual is reserved
REPOS = {  # case prefix -> mirror folder
    "psf__requests": "psf+requests",
    "pallets__flask": "pallets+flask",
    "pytest-dev__pytest": "pytest-dev+pytest",
    "pylint-dev__pylint": "pylint-dev+pylint",
    "mwaskom__seaborn": "mwaskom+seaborn",
    "astropy__astropy": "astropy+astropy",
    "pydata__xarray": "pydata+xarray",
    "sympy__sympy": "sympy+sympy",
    "sphinx-doc__sphinx": "sphinx-doc+sphinx",
}
# The project split, made before any tuning: the fit half tunes the ranking and confidence models
# (bench/fit_push.py), the rest is held out. The first six projects were split by hand before the first run
# (issue 35, round 1); projects added later go by sha256('project:' + name).digest()[0] % 2 == 0 -> fit
# (split.json's rule), fixed 2026-12-05 before their first run: sphinx-doc fit, sympy held out. django,
# matplotlib and scikit-learn are too large for the mirror (> 500 MB) and are not measured for accuracy.
FIT_PROJECTS = frozenset(
    {"psf__requests", "pallets__flask", "pylint-dev__pylint", "pydata__xarray", "sphinx-doc__sphinx"}
)
TASKS_CACHE = ROOT / "bench" / ".cache" / "push-tasks"  # each task's tree at its base commit, and its index
CODE_SUFFIXES = (".py", ".pyi")
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
        if not any(p.endswith(CODE_SUFFIXES) for p in _DIFF.findall(case["patch"])):
            continue  # a patch of changelog entries only (some pytest cases): no code file to find
        per_repo[prefix] = per_repo.get(prefix, 0) + 1
        case["split"], case["project"] = split, prefix
        seen[case["instance_id"]] = case
    return list(seen.values())


def export(git_dir: Path, commit: str, dest: Path) -> None:
    # source and config files only: mirrors may lack large data blobs (astropy's), which the ranking never reads
    spec = [":(glob)**/*.py"]  # every pathspec must match something: Python files only
    archive = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "archive", commit, "--", *spec], stdout=subprocess.PIPE
    )
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

    gold = sorted(p for p in set(_DIFF.findall(case["patch"])) if p.endswith(CODE_SUFFIXES))
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
        # the title alone: as short as what a user types at a prompt
        title = _title(prompt)
        conn = task.open_index(root.resolve())
        assert conn is not None
        t_ranked, t_row = task.rank(conn, title, limit=10)
        conn.close()
        t_files = [p for p, _, _ in t_ranked]
        t_bm25 = bm25_rank(root, title)
        (graph.store_path(root.resolve(), home)).unlink(missing_ok=True)
    files = [p for p, _, _ in ranked]
    return {
        "instance_id": case["instance_id"], "split": case["split"], "project": case["project"],
        "fit": case["project"] in FIT_PROJECTS, "gold": gold, "ranked": files[:10], "features": row,
        "confidence": confidence, "rank": rank_of(gold, files), "bm25": bm25[:10],
        "bm25_rank": rank_of(gold, bm25), "latency_ms": round(latency_ms, 1), "index_s": round(index_s, 1),
        "title": {"text": title, "ranked": t_files[:10], "features": t_row, "rank": rank_of(gold, t_files),
                  "bm25": t_bm25[:10], "bm25_rank": rank_of(gold, t_bm25)},
    }  # fmt: skip


def _title(problem: str) -> str:
    for raw in problem.splitlines():
        line = raw.strip().lstrip("#").strip()
        if len(line.split()) >= 3:
            return line[:300]
    return problem.strip()[:300]


def summary(rows: list[dict], threshold: float) -> dict:
    from recall_agent.push import task

    def acc(key: str, k: int, part: list[dict]) -> float:
        return (
            round(sum(1 for r in part if r[key] is not None and r[key] <= k) / len(part), 3) if part else 0.0
        )

    out = {}
    titles = [{**r, **r["title"]} for r in rows if "title" in r]  # the title alone as the prompt
    for name, part in (
        ("fit", [r for r in rows if r["fit"]]),
        ("held_out", [r for r in rows if not r["fit"]]),
        ("fit_titles", [r for r in titles if r["fit"]]),
        ("held_out_titles", [r for r in titles if not r["fit"]]),
    ):
        # the confidence of the weights in use (fit_push.py may have refitted them since the row was made)
        answered = [r for r in part if task.probability(r["features"]) >= threshold]
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
    ap.add_argument("--replay", action="store_true", help="prevented failures on labelled real sessions")
    ap.add_argument("--labels", type=Path, default=LABELS_DIR)
    ap.add_argument(
        "--hook-latency",
        type=Path,
        metavar="CHECKOUT",
        help="time the real `recall hook` processes in CHECKOUT (indexed first) and print p50/p95",
    )
    args = ap.parse_args()
    if args.hook_latency:
        out = hook_latency(args.hook_latency)
        (ROOT / "bench" / "results" / "push_hook_latency.json").write_text(json.dumps(out, indent=1))
        return 0
    if args.replay:
        t0 = time.perf_counter()
        out = replay(args.labels, SESSIONS_DIR)
        out["load_average"] = os.getloadavg()
        out["seconds"] = round(time.perf_counter() - t0)
        out["command"] = "nice python bench/bench_push.py --replay"
        REPLAY_RESULTS.write_text(json.dumps(out, indent=1))
        return 0
    done = {r["instance_id"]: r for r in json.loads(RESULTS.read_text())["rows"]} if RESULTS.exists() else {}
    done = {k: r for k, r in done.items() if r["gold"] and "title" in r}
    for r in done.values():
        r["fit"] = r["project"] in FIT_PROJECTS
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


# --------------------------------------------------------------------------- prevented failures (replay)


def replay(labels_dir: Path, sessions_dir: Path) -> dict:
    """Per project, sessions in time order: the session-start list from what the store learned of the
    earlier sessions, scored against the session's labelled failures, then the session captured into the
    store (the capture engine of `recall import-sessions`). Covered: a recurring failure (its labelled
    cause met in an earlier session of the project, not transient, not a scratch slip) whose error a listed
    line carries. Precision: listed lines whose error the session then met."""
    sys.path.insert(0, str(labels_dir))
    import labels as L  # noqa: N812 - the labelling module of issue-33-data

    from recall_agent.capture.sessions import SessionFiles
    from recall_agent.hooks import importer
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning
    from recall_agent.push import ledger, pitfalls

    os.environ["RECALL_DORMANT_DAYS"] = "0"  # the sessions are months old: dormancy would retire everything
    by_half: dict[str, dict] = {}
    for half in ("tune", "heldout"):
        rows = L.load_projects(halves=(half,))
        projects: dict[str, list] = {}
        for label in rows:
            projects.setdefault(label.project, []).append(label)
        tot = {"projects": 0, "sessions": 0, "recurring": 0, "covered": 0, "env_recurring": 0,
               "env_covered": 0, "lines": 0, "needed_lines": 0, "tokens": []}  # fmt: skip
        for _project, labels in sorted(projects.items()):
            labels.sort(key=lambda lb: lb.started)
            home = Path(tempfile.mkdtemp(prefix="push-replay-"))
            os.environ["RECALL_HOME"] = str(home)
            seen_causes: set[str] = set()
            tot["projects"] += 1
            for label in labels:
                db = home / "learnings.db"
                listed: list = []
                if db.exists():
                    with sqlite3.connect(db) as conn:
                        repos = [r[0] for r in conn.execute("SELECT DISTINCT repo FROM learnings")]
                    found = sorted(
                        (p for r in repos for p in pitfalls.collect(db, r, None)), key=lambda p: p.rank
                    )
                    text, n = pitfalls.block(found)
                    listed = found[:n]
                    if text:
                        tot["tokens"].append(ledger.tokens(text))
                tot["sessions"] += 1
                entries = [*label.episodes, *label.unfixed]
                needed = set()
                for e in entries:
                    c = L.cause(e)
                    recurring = (
                        c and c in seen_causes and L.transient(e) is not True and e.get("kind") != "scratch"
                    )
                    hit = [i for i, p in enumerate(listed) if L.keyed_on_error([p.error], e)]
                    needed.update(hit)
                    if recurring:
                        tot["recurring"] += 1
                        tot["covered"] += bool(hit)
                        if e.get("kind") == "environment" or (e.get("fix") or {}).get("kind") in (
                            "command",
                            "install",
                        ):
                            tot["env_recurring"] += 1
                            tot["env_covered"] += bool(hit)
                tot["lines"] += len(listed)
                tot["needed_lines"] += len(needed)
                for e in entries:
                    c = L.cause(e)
                    if c:
                        seen_causes.add(c)
                path = (
                    label.path
                    if getattr(label, "path", None)
                    else sessions_dir / label.corpus / f"{label.session}.jsonl"
                )
                result = importer.read_session(SessionFiles(Path(path)))
                if result.learnings:
                    with open_store() as store:
                        store.add_many([Learning.model_validate(d) for d in result.learnings])
        toks = sorted(tot.pop("tokens"))
        tot["tokens_p50"] = toks[len(toks) // 2] if toks else 0
        tot["tokens_max"] = toks[-1] if toks else 0
        tot["sessions_with_list"] = len(toks)
        tot["coverage"] = round(tot["covered"] / tot["recurring"], 3) if tot["recurring"] else None
        tot["env_coverage"] = (
            round(tot["env_covered"] / tot["env_recurring"], 3) if tot["env_recurring"] else None
        )
        tot["precision"] = round(tot["needed_lines"] / tot["lines"], 3) if tot["lines"] else None
        by_half[half] = tot
        print(half, json.dumps(tot), flush=True)
    return by_half


def _pct(xs: list[float], q: float) -> float:
    return round(xs[max(0, int(q * len(xs)) - 1)], 1)


def hook_latency(checkout: Path, runs: int = 30) -> dict:
    """Wall time of real `python -m recall_agent hook <Event>` processes (interpreter start included):
    a non-task prompt, a task prompt, a session start, in CHECKOUT with its index built first."""
    home = Path(tempfile.mkdtemp(prefix="push-lat-"))
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "recall_agent", "index", str(checkout)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    cases = {
        "prompt: thanks": ("UserPromptSubmit", {"prompt": "thanks"}),
        "prompt: task": (
            "UserPromptSubmit",
            {"prompt": "fix the error handling when the config file is missing"},
        ),
        "session start": ("SessionStart", {"source": "startup"}),
    }
    out: dict = {"checkout": str(checkout), "runs": runs}
    for name, (event, extra) in cases.items():
        payload = json.dumps({"session_id": "lat", "cwd": str(checkout), "hook_event_name": event, **extra})
        import resource

        times, cpu = [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "recall_agent", "hook", event], input=payload.encode(),
                           env=env, capture_output=True)  # fmt: skip
            times.append((time.perf_counter() - t0) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        times.sort()
        cpu.sort()
        out[name] = {"wall_p50_ms": _pct(times, 0.5), "wall_p95_ms": _pct(times, 0.95),
                     "cpu_p50_ms": _pct(cpu, 0.5), "cpu_p95_ms": _pct(cpu, 0.95)}  # fmt: skip
        print(name, out[name], flush=True)
    out["load_average"] = os.getloadavg()
    print("load average", out["load_average"])
    return out


if __name__ == "__main__":
    raise SystemExit(main())
