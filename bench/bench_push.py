"""Push context benchmarks (issue 35).

Task localisation on SWE-bench tasks from the issue text alone: for each SWE-ContextBench case of its Python
splits (Lite and Verified; the Multilingual split and the Full split's other languages are reserved and
never read) whose repository is fetched under --mirrors, the repository's Python files are exported at the
task's base commit and indexed once (cached under bench/.cache/push-tasks/), and the issue text, then its
title alone, go through the UserPromptSubmit ranking (`push.task.rank`). Measured per task: the rank of the
gold patch's files (Acc@1, Acc@3 = what the hook names, Acc@5), the gate's confidence, the ranking's
latency, every candidate's features (for bench/fit_push.py); a BM25 ranking of the repository's files
(SQLite FTS5 `bm25()` over each file's path and text) side by side. Split by project (`FIT_PROJECTS`).

    nice python bench/bench_push.py --prepare             # export and index every task (slow, cached)
    nice python bench/bench_push.py [--prepared-only]      # rows -> bench/results/push_localisation.json
    nice python bench/bench_push.py --replay               # prevented failures: bench/results/push_sessions.json
    nice python bench/bench_push.py --django-latency       # the ranking's p50/p95 on Django's tree
    python bench/bench_push.py --hook-latency CHECKOUT     # real `recall hook` processes
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
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
    # round robin over the projects: a run stopped early still has every project
    order: dict[str, int] = {}
    keyed = []
    for case in seen.values():
        order[case["project"]] = order.get(case["project"], 0) + 1
        keyed.append((order[case["project"]], case["project"], case["instance_id"], case))
    return [k[-1] for k in sorted(keyed, key=lambda k: k[:3])]


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
    """Files ranked by SQLite FTS5's BM25 over path and text (Python and config files), the index built once
    per task next to its tree."""
    db = root.parent / "bm25.sqlite"
    fresh = not db.exists()
    conn = sqlite3.connect(db)
    if fresh:
        conn.execute("CREATE VIRTUAL TABLE d USING fts5(path, body, tokenize=\"unicode61 tokenchars '_'\")")
        for p in root.rglob("*"):
            if p.is_file() and p.suffix in (".py", ".pyi", ".cfg", ".toml") and ".git" not in p.parts:
                try:
                    text = p.read_text("utf-8", "replace")
                except OSError:
                    continue
                conn.execute("INSERT INTO d VALUES (?, ?)", (str(p.relative_to(root)), text))
        conn.commit()
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:64]
    try:
        if not words:
            return []
        expr = " OR ".join(f'"{w}"' for w in words)
        return [
            r[0]
            for r in conn.execute("SELECT path FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 20", (expr,))
        ]
    finally:
        conn.close()


def rank_of(gold: list[str], ranked: list[str]) -> int | None:
    for i, path in enumerate(ranked):
        if path in gold:
            return i + 1
    return None


def prepare(case: dict, mirrors: Path) -> Path:
    """The task's Python files at its base commit under TASKS_CACHE/<task>/<repo name>, indexed once by
    `recall index`'s indexer (no history) into TASKS_CACHE/home; a later run reuses both."""
    from recall_agent.architecture import graph, indexer

    root = TASKS_CACHE / case["instance_id"] / case["project"].split("__")[1]
    done = root.parent / "indexed.json"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    export(mirrors / REPOS[case["project"]] / "repo", case["base_commit"], root)
    t0 = time.perf_counter()
    conn = graph.connect(graph.store_path(root.resolve(), TASKS_CACHE / "home"))
    indexer.update(conn, root.resolve(), progress=False, summary=False)
    conn.close()
    done.write_text(json.dumps({"index_s": round(time.perf_counter() - t0, 1)}))
    return root


def run_case(case: dict, mirrors: Path) -> dict:
    from recall_agent.push import task

    gold = sorted(p for p in set(_DIFF.findall(case["patch"])) if p.endswith(CODE_SUFFIXES))
    root = prepare(case, mirrors).resolve()
    index_s = json.loads((root.parent / "indexed.json").read_text())["index_s"]
    out: dict = {
        "instance_id": case["instance_id"], "split": case["split"], "project": case["project"],
        "fit": case["project"] in FIT_PROJECTS, "gold": gold, "index_s": index_s,
    }  # fmt: skip
    # the whole issue text, then its title alone (as short as what a user types at a prompt)
    for key, prompt in (("text", case["problem_statement"]), ("title", _title(case["problem_statement"]))):
        t1 = time.perf_counter()
        conn = task.open_index(root)  # what the hook does: open read-only, rank, score
        assert conn is not None
        ranked, row = task.rank(conn, prompt, limit=10)
        confidence = task.probability(row)
        conn.close()
        latency_ms = (time.perf_counter() - t1) * 1000
        conn = task.open_index(root)
        assert conn is not None
        candidates = task.candidates(conn, prompt)  # every candidate's features, for bench/fit_push.py
        conn.close()
        bm25 = bm25_rank(root, prompt)
        files = [p for p, _, _ in ranked]
        out[key] = {
            "ranked": files[:10], "features": row, "confidence": confidence, "rank": rank_of(gold, files),
            "bm25": bm25[:10], "bm25_rank": rank_of(gold, bm25), "latency_ms": round(latency_ms, 1),
            "candidates": [{"path": c.path, "x": c.x, "gold": c.path in gold} for c in candidates],
        }  # fmt: skip
    return out


def _title(problem: str) -> str:
    from recall_agent.push import cues

    return cues.title(problem)


def summary(rows: list[dict], threshold: float) -> dict:
    """Per half (fit / held-out), prompt (the issue text / its title) and split (both, Lite, Verified)."""

    def acc(key: str, k: int, part: list[dict]) -> float:
        return (
            round(sum(1 for r in part if r[key] is not None and r[key] <= k) / len(part), 3) if part else 0.0
        )

    out = {}
    for half, fit in (("fit", True), ("held_out", False)):
        for prompt in ("text", "title"):
            for split in ("", "Lite", "Verified"):
                part = [
                    r[prompt] for r in rows if r["fit"] == fit and (not split or r["split"].endswith(split))
                ]
                answered = [r for r in part if r["confidence"] >= threshold]
                lat = sorted(r["latency_ms"] for r in part)
                out[f"{half}/{prompt}" + (f"/{split}" if split else "")] = {
                    "tasks": len(part),
                    "acc1": acc("rank", 1, part), "acc3": acc("rank", 3, part), "acc5": acc("rank", 5, part),
                    "bm25_acc1": acc("bm25_rank", 1, part), "bm25_acc5": acc("bm25_rank", 5, part),
                    "answered": len(answered), "answered_acc3": acc("rank", 3, answered),
                    "p50_ms": round(statistics.median(lat), 1) if lat else None,
                    "p95_ms": _pct(lat, 0.95) if lat else None,
                }  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--limit-per-repo", type=int, default=60)
    ap.add_argument("--prepare", action="store_true", help="only export and index the tasks (cached)")
    ap.add_argument(
        "--prepared-only", action="store_true", help="skip the tasks not exported and indexed yet"
    )
    ap.add_argument("--report", action="store_true", help="only print the table of the saved rows")
    ap.add_argument("--replay", action="store_true", help="prevented failures on labelled real sessions")
    ap.add_argument("--labels", type=Path, default=LABELS_DIR)
    ap.add_argument(
        "--hook-latency",
        type=Path,
        metavar="CHECKOUT",
        help="time the real `recall hook` processes in CHECKOUT (indexed first) and print p50/p95",
    )
    ap.add_argument("--django-latency", action="store_true", help="the ranking's p50/p95 on Django's tree")
    args = ap.parse_args()
    if args.django_latency:
        out = django_latency(args.mirrors)
        (ROOT / "bench" / "results" / "push_django_latency.json").write_text(json.dumps(out, indent=1))
        return 0
    if args.hook_latency:
        out = hook_latency(args.hook_latency)
        (ROOT / "bench" / "results" / "push_hook_latency.json").write_text(json.dumps(out, indent=1))
        return 0
    if args.replay:
        t0 = time.perf_counter()
        out = replay(args.labels, SESSIONS_DIR)
        out["thresholds"] = threshold_curve()
        out["previous_rule"] = previous_rule()
        out["load_average"] = os.getloadavg()
        out["seconds"] = round(time.perf_counter() - t0)
        out["command"] = "nice python bench/bench_push.py --replay"
        REPLAY_RESULTS.write_text(json.dumps(out, indent=1))
        return 0
    os.environ["RECALL_HOME"] = str(TASKS_CACHE / "home")  # where prepare() put each task's index
    if args.report:
        rows = json.loads(RESULTS.read_text())["rows"]
    else:
        rows = []
        for case in cases(args.mirrors, args.limit_per_repo):
            if args.prepared_only and not (TASKS_CACHE / case["instance_id"] / "indexed.json").exists():
                continue
            try:
                if args.prepare:
                    prepare(case, args.mirrors)
                    print(case["instance_id"], "indexed", flush=True)
                    continue
                r = run_case(case, args.mirrors)
            except Exception as exc:  # one repository that fails to export/index must not lose the rest
                print(f"{case['instance_id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            rows.append(r)
            t = r["text"]
            print(f"{r['instance_id']:32} rank {t['rank']} bm25 {t['bm25_rank']} conf {t['confidence']:.2f} "
                  f"{t['latency_ms']} ms; title rank {r['title']['rank']}", flush=True)  # fmt: skip
        if args.prepare:
            return 0
    from recall_agent.push import task

    for r in rows:
        r["fit"] = r["project"] in FIT_PROJECTS
    table = summary(rows, task.threshold())
    _save(rows, table)
    for half, s in table.items():
        print(f"{half:22} {json.dumps(s)}")
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


REPLAY_ROWS = ROOT / "bench" / ".cache" / "push-replay-rows.json"  # every candidate, for fit_pitfalls.py


def replay(labels_dir: Path, sessions_dir: Path) -> dict:
    """Per project, sessions in time order: the session-start list from what the store learned of the
    earlier sessions, scored against the session's labelled failures, then the session captured into the
    store (the capture engine of `recall import-sessions`).

    A failure is *recurring* when its labelled cause was met in an earlier session of the project (not
    transient, not a scratch slip). A listed line *covers* it by cause when the line's learning was captured
    from a failure of that cause (a learning's causes: the labelled failures of its sessions whose error its
    signatures hold, carried by signature fingerprint), or by error when the line's shown error holds the
    failure's error line (the stricter count of earlier rounds). A line is *needed* when the session meets
    one of its causes (or its error). Every candidate (listed or not) is saved with its features and whether
    it was needed, for bench/fit_pitfalls.py."""
    sys.path.insert(0, str(labels_dir))
    import labels as L  # noqa: N812 - the labelling module of bench/sessions

    from recall_agent.capture.sessions import SessionFiles
    from recall_agent.hooks import importer
    from recall_agent.learnings import signatures
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning
    from recall_agent.push import ledger, pitfalls

    os.environ["RECALL_DORMANT_DAYS"] = "0"  # the sessions are months old: dormancy would retire everything
    by_half: dict[str, dict] = {}
    saved: list[dict] = []
    for half in ("tune", "heldout"):
        rows = L.load_projects(halves=(half,))
        projects: dict[str, list] = {}
        for label in rows:
            projects.setdefault(label.project, []).append(label)
        tot = {"projects": 0, "sessions": 0, "recurring": 0, "covered": 0, "env_recurring": 0,
               "env_covered": 0, "covered_by_error": 0, "env_covered_by_error": 0, "env_in_store": 0,
               "lines": 0, "needed_lines": 0, "tokens": []}  # fmt: skip
        for project, labels in sorted(projects.items()):
            labels.sort(key=lambda lb: lb.started)
            home = Path(tempfile.mkdtemp(prefix="push-replay-"))
            os.environ["RECALL_HOME"] = str(home)
            seen_causes: set[str] = set()
            fp_causes: dict[str, set[str]] = {}
            tot["projects"] += 1
            for label in labels:
                db = home / "learnings.db"
                now = pitfalls._dt(label.started, datetime) or datetime.now(UTC)
                found: list = []
                if db.exists():
                    with sqlite3.connect(db) as conn:
                        repos = [r[0] for r in conn.execute("SELECT DISTINCT repo FROM learnings")]
                    found = sorted(
                        (p for r in repos for p in pitfalls.collect(db, r, None, now=now, everything=True)),
                        key=lambda p: p.rank,
                    )
                causes_of = [set().union(*(fp_causes.get(fp, set()) for fp in p.fingerprints)) for p in found]
                shown = [i for i, p in enumerate(found) if pitfalls.WEIGHTS_FILE.exists()
                         and p.probability >= pitfalls.threshold()]  # fmt: skip
                text, n = pitfalls.block([found[i] for i in shown])
                listed = shown[:n]
                if text:
                    tot["tokens"].append(ledger.tokens(text))
                tot["sessions"] += 1
                entries = [*label.episodes, *label.unfixed]
                met = {L.cause(e) for e in entries if L.cause(e)}
                needed = [bool(causes_of[i] & met) or any(L.keyed_on_error([p.error], e) for e in entries)
                          for i, p in enumerate(found)]  # fmt: skip
                in_store = set().union(*causes_of) if causes_of else set()
                recurring_rows = []
                for e in entries:
                    c = L.cause(e)
                    recurring = (
                        c and c in seen_causes and L.transient(e) is not True and e.get("kind") != "scratch"
                    )
                    if not recurring:
                        continue
                    env = e.get("kind") == "environment" or (e.get("fix") or {}).get("kind") in (
                        "command", "install",
                    )  # fmt: skip
                    covers = [
                        i for i, p in enumerate(found) if c in causes_of[i] or L.keyed_on_error([p.error], e)
                    ]
                    recurring_rows.append({"env": bool(env), "covered_by": covers})
                    by_cause = any(c in causes_of[i] for i in listed)
                    by_error = any(L.keyed_on_error([found[i].error], e) for i in listed)
                    tot["recurring"] += 1
                    tot["covered"] += by_cause or by_error
                    tot["covered_by_error"] += by_error
                    if env:
                        tot["env_recurring"] += 1
                        tot["env_covered"] += by_cause or by_error
                        tot["env_covered_by_error"] += by_error
                        tot["env_in_store"] += c in in_store
                tot["lines"] += len(listed)
                tot["needed_lines"] += sum(needed[i] for i in listed)
                saved.append({
                    "project": project, "half": half, "session": label.session,
                    "candidates": [{"x": [round(v, 4) for v in p.features], "needed": needed[i],
                                    "tokens": ledger.tokens("- " + pitfalls.line(p))}
                                   for i, p in enumerate(found)],
                    "recurring": recurring_rows,
                })  # fmt: skip
                for e in entries:
                    if L.cause(e):
                        seen_causes.add(str(L.cause(e)))
                path = (
                    label.path
                    if getattr(label, "path", None)
                    else sessions_dir / label.corpus / f"{label.session}.jsonl"
                )
                result = importer.read_session(SessionFiles(Path(path)))
                for d in result.learnings:
                    sigs = [str(t) for t in d.get("error_signatures") or []]
                    causes = {str(L.cause(e)) for e in entries if L.cause(e) and L.keyed_on_error(sigs, e)}
                    for t in sigs:
                        fp_causes.setdefault(signatures.fingerprint(t), set()).update(causes)
                if result.learnings:
                    with open_store() as store:
                        store.add_many([Learning.model_validate(d) for d in result.learnings])
        toks = sorted(tot.pop("tokens"))
        tot["tokens_p50"] = toks[len(toks) // 2] if toks else 0
        tot["tokens_max"] = toks[-1] if toks else 0
        tot["sessions_with_list"] = len(toks)
        for key, num, den in (
            ("coverage", "covered", "recurring"),
            ("env_coverage", "env_covered", "env_recurring"),
            ("env_coverage_by_error", "env_covered_by_error", "env_recurring"),
            ("env_ceiling", "env_in_store", "env_recurring"),
            ("precision", "needed_lines", "lines"),
        ):
            tot[key] = round(tot[num] / tot[den], 3) if tot[den] else None  # fmt: skip
        by_half[half] = tot
        print(half, json.dumps(tot), flush=True)
    REPLAY_ROWS.write_text(json.dumps({"features": list(pitfalls.FEATURES), "sessions": saved}))
    return by_half


DJANGO_SDIST = (
    "django-5.2.8.tar.gz"  # `pip download --no-deps --no-binary :all: django==5.2.8` (its tests too)
)


def django_latency(mirrors: Path, runs: int = 1) -> dict:
    """The ranking's latency on a django-sized tree: Django 5.2.8's source distribution (2,818 Python files,
    its tests included; github.com/django/django is larger than the mirror takes), indexed once, then the
    hook's path (open the index read-only, rank, score) for each django issue text of SWE-ContextBench's
    Lite and Verified splits and for its title. Not an accuracy figure: the tree is not the tasks' commit."""
    from recall_agent.architecture import graph, indexer
    from recall_agent.push import task

    cache = ROOT / "bench" / ".cache" / "django"
    root = (cache / DJANGO_SDIST.removesuffix(".tar.gz")).resolve()
    if not root.exists():
        subprocess.run(["tar", "-xzf", str(cache / DJANGO_SDIST), "-C", str(cache)], check=True)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = cache / "home"
    os.environ["RECALL_HOME"] = str(home)
    t0 = time.perf_counter()
    conn = graph.connect(graph.store_path(root, home))
    indexer.update(conn, root, progress=False, summary=False)
    conn.close()
    index_s = time.perf_counter() - t0
    bench = mirrors / BENCH_REPO / "repo"
    names = subprocess.run(["git", "-C", str(bench), "ls-tree", "-r", "--name-only", "HEAD"],
                           capture_output=True, text=True).stdout.splitlines()  # fmt: skip
    texts = []
    for name in names:
        split, _, file = name.removeprefix("cases/").partition("/")
        if split in SPLITS and file.startswith("django__django-") and file.endswith(".json"):
            case = json.loads(subprocess.run(["git", "-C", str(bench), "show", f"HEAD:{name}"],
                                             capture_output=True, text=True).stdout)  # fmt: skip
            texts.append(case["problem_statement"])
    out: dict = {"tree": DJANGO_SDIST, "files": None, "index_s": round(index_s, 1), "issues": len(texts)}
    conn = task.open_index(root)
    assert conn is not None
    out["files"] = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    conn.close()
    for key, prompts in (("text", texts), ("title", [_title(t) for t in texts])):
        lat = []
        for _ in range(runs):
            for prompt in prompts:
                t1 = time.perf_counter()
                conn = task.open_index(root)
                assert conn is not None
                ranked, row = task.rank(conn, prompt, limit=10)
                task.probability(row)
                conn.close()
                lat.append((time.perf_counter() - t1) * 1000)
        lat.sort()
        out[key] = {
            "n": len(lat),
            "p50_ms": _pct(lat, 0.5),
            "p95_ms": _pct(lat, 0.95),
            "max_ms": round(lat[-1], 1),
        }
        print(key, out[key], flush=True)
    out["load_average"] = os.getloadavg()
    out["command"] = "nice python bench/bench_push.py --django-latency"
    print("load average", out["load_average"])
    return out


def threshold_curve() -> dict:
    """Both halves' lists at other thresholds of the shipped model (a report for whoever sets it: the
    threshold itself is fitted on the tuning projects only, bench/fit_pitfalls.py)."""
    import numpy as np
    from fit_pitfalls import NO_CAUSES, USED, lists

    from recall_agent.push import pitfalls

    model = json.loads(pitfalls.WEIGHTS_FILE.read_text())
    if list(model["features"]) != list(USED):
        return {}
    sessions = json.loads(REPLAY_ROWS.read_text())["sessions"]
    w, b = np.array(model["weights"]), float(model["bias"])
    out = {}
    for half in ("tune", "heldout"):
        part = [s for s in sessions if s["half"] == half and s["project"] not in NO_CAUSES]
        out[half] = {str(t): lists(part, w, b, t) for t in (0.03, 0.05, 0.08, 0.12, 0.2)}
    return out


def previous_rule() -> dict:
    """The rule main had before the fitted list (a cause met in two or more sessions, or an environment
    lesson; most sessions, then environment lessons, then newest; 5 lines, 300 tokens), applied to the same
    replay's candidates: the side-by-side of the list that was replaced."""
    import math

    from fit_pitfalls import tally

    from recall_agent.push import pitfalls

    f = {name: i for i, name in enumerate(pitfalls.FEATURES)}

    def pick(s: dict) -> list[int]:
        cands = [(i, c["x"]) for i, c in enumerate(s["candidates"])
                 if round(math.expm1(c["x"][f["log_sessions"]])) >= 2 or c["x"][f["environment"]] > 0]  # fmt: skip
        cands.sort(key=lambda ic: (-ic[1][f["log_sessions"]], -ic[1][f["environment"]], ic[1][f["log_days"]]))
        return [i for i, _ in cands]

    sessions = json.loads(REPLAY_ROWS.read_text())["sessions"]
    return {half: tally([s for s in sessions if s["half"] == half], pick) for half in ("tune", "heldout")}


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
