"""Antipattern engine benchmark: detector precision/recall, semantic top-3 accuracy, latency.

    python3 bench/bench_antipatterns.py            # full run (~2-3 min on the 2-core machine)
    python3 bench/bench_antipatterns.py --quick    # skips the cold-process latency runs
    python3 bench/bench_antipatterns.py --mixed-only   # only the mixed questions, this checkout + release

Data: bench/antipatterns_labeled/ (written for this benchmark, apart from the catalog's own examples).
1. Detectors: every shipped detector over every labeled snippet; micro precision/recall against the
   complete labels, overall and per file kind.
2. Matching: top-1/top-3 accuracy of the engine's ranking (cosine of the offline embeddings blended with
   BM25) next to a lexical-only and a semantic-only baseline; and how many off-topic questions wrongly get
   an answer above the engine's threshold.
2b. Mixed questions (mixed_queries.yaml, issue 28): code with words around it, as people ask, through the
   whole `query()` in a folder that is no repository, for this checkout and the release side by side
   (`--release COMMIT`, default the main commit before issue 28): top-1/top-3 per half, and how many got
   no result at all.
3. Latency: `query()` in a fresh process (cold: imports, catalog, model) and repeated in one process
   (warm), with and without detection work (a working tree with the 134 snippets as changed files), for the
   default in-memory index and for Qdrant local mode.
Prints tables and writes bench/results/antipatterns.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from release import package_in, release_tree  # noqa: E402  (bench/ is on sys.path: this script's folder)

from recall_agent.antipatterns.catalog import load_catalog  # noqa: E402
from recall_agent.antipatterns.engine import MIN_SCORE, rank_entries  # noqa: E402
from recall_agent.antipatterns.source import ScanContext  # noqa: E402

DATA = ROOT / "bench" / "antipatterns_labeled"
RESULTS = ROOT / "bench" / "results" / "antipatterns.json"
RELEASE = "87d8fdf"  # main before issue 28 (mixed questions, error origins)
EXT = {"python": "py", "javascript": "js", "typescript": "ts", "sql": "sql", "shell": "sh", "yaml": "yml"}


def load_data() -> tuple[list[dict], list[dict], list[str]]:
    snippets = yaml.safe_load((DATA / "snippets.yaml").read_text())["snippets"]
    q = yaml.safe_load((DATA / "queries.yaml").read_text())
    return snippets, q["queries"], q.get("negatives", [])


# --------------------------------------------------------------------------- 1. detectors


def bench_detectors(snippets: list[dict]) -> dict:
    catalog = load_catalog()
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    misses, false_alarms = [], []
    for s in snippets:
        ctx = ScanContext(s["code"], s["kind"])
        fired = {e.id for e in catalog.entries.values() for d in e.detectors if d.find(ctx)}
        expected = set(s["expect"])
        tp, fp, fn = len(fired & expected), len(fired - expected), len(expected - fired)
        for key in (s["kind"], "all"):
            counts = per_kind[key]
            counts[0] += tp
            counts[1] += fp
            counts[2] += fn
        misses += [f"{s['id']}: {i}" for i in sorted(expected - fired)]
        false_alarms += [f"{s['id']}: {i}" for i in sorted(fired - expected)]

    def pr(c: list[int]) -> dict:
        tp, fp, fn = c
        return {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        }

    return {
        "snippets": len(snippets),
        "clean_snippets": sum(1 for s in snippets if not s["expect"]),
        "labels": sum(len(s["expect"]) for s in snippets),
        "by_kind": {k: pr(v) for k, v in sorted(per_kind.items())},
        "misses": misses,
        "false_alarms": false_alarms,
    }


def bench_wild() -> dict:
    """Every detector over this repository's own Python sources: unlabeled, read the findings by hand."""
    catalog = load_catalog()
    files = sorted([*(ROOT / "recall_agent").rglob("*.py"), *(ROOT / "bench").glob("*.py")])
    findings = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        ctx = ScanContext(path.read_text(errors="replace"), "python", rel)
        for e in catalog.entries.values():
            for d in e.detectors:
                findings += [f"{e.id} {rel}:{h.line}: {h.snippet[:80]}" for h in d.find(ctx)]
    return {"files": len(files), "findings": findings}


# --------------------------------------------------------------------------- 2. matching


def bench_matching(queries: list[dict], negatives: list[str]) -> dict:
    catalog = load_catalog()
    out: dict[str, dict] = {}
    tiers = sorted({q.get("tier", "direct") for q in queries})
    for mode in ("blended", "lexical", "semantic"):
        top1 = top3 = shown = 0
        failures = []
        by_tier: dict[str, list[int]] = {t: [0, 0] for t in tiers}
        for q in queries:
            ranked, _ = rank_entries(catalog, q["q"], mode)
            ids = [m.entry.id for m in ranked]
            ok = {q["expect"], *q.get("also", [])}
            if ids[:1] and ids[0] in ok:
                top1 += 1
            by_tier[q.get("tier", "direct")][1] += 1
            if ok & {m.entry.id for m in ranked[:3] if m.blended >= MIN_SCORE}:
                shown += 1  # what the engine really prints: in the top 3 and above its threshold
            if ok & set(ids[:3]):
                top3 += 1
                by_tier[q.get("tier", "direct")][0] += 1
            else:
                failures.append(f"{q['q']!r}: expected {q['expect']}, got {ids[:3]}")
        n = len(queries)
        out[mode] = {
            "top1": round(top1 / n, 3),
            "top3": round(top3 / n, 3),
            "top3_above_threshold": round(shown / n, 3) if mode == "blended" else None,
            "top3_by_tier": {t: round(h / c, 3) for t, (h, c) in by_tier.items() if c},
            "failures": failures,
        }
    answered = []
    for text in negatives:
        ranked, _ = rank_entries(catalog, text, "blended")
        if ranked and ranked[0].blended >= MIN_SCORE:
            answered.append(f"{text!r} -> {ranked[0].entry.id} ({ranked[0].blended:.2f})")
    out["off_topic"] = {"questions": len(negatives), "wrongly_answered": answered, "threshold": MIN_SCORE}
    out["queries"] = len(queries)
    out["tiers"] = {t: sum(1 for q in queries if q.get("tier", "direct") == t) for t in tiers}
    return out


# --------------------------------------------------------------------------- 2b. mixed questions

_MIXED_RUNNER = """
import json, sys, tempfile
from {pkg}.antipatterns import query
questions = json.load(sys.stdin)
out = []
with tempfile.TemporaryDirectory() as empty:
    for q in questions:
        res = [r for r in query(q, empty, limit=5) if (r.model_extra or {{}}).get("match_kind") != "note"]
        out.append([(r.model_extra or {{}}).get("antipattern_id") for r in res])
print(json.dumps(out))
"""


def _mixed_answers(tree: Path | None, questions: list[str], home: Path) -> list[list[str]]:
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(tree or ROOT)}
    code = _MIXED_RUNNER.format(pkg=package_in(tree))
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(questions),
        env=env,
        capture_output=True,
        text=True,
        cwd=str(tree or ROOT),  # `-c` puts the working directory first on sys.path
    )
    if done.returncode:
        raise SystemExit(f"mixed-question runner failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def mixed_split(question: str) -> str:
    """The recorded split rule of mixed_queries.yaml."""
    import hashlib

    return "tune" if hashlib.sha256(question.encode()).digest()[0] % 2 == 0 else "held"


def bench_mixed(release: str | None) -> dict:
    queries = yaml.safe_load((DATA / "mixed_queries.yaml").read_text())["queries"]
    wrong = [q["q"] for q in queries if q["split"] != mixed_split(q["q"])]
    if wrong:
        raise SystemExit(f"mixed_queries.yaml: split does not follow the recorded rule: {wrong[:3]}")
    texts = [q["q"] for q in queries]
    out: dict = {"questions": len(queries), "release": release}
    with tempfile.TemporaryDirectory() as tmp:
        trees: dict[str, Path | None] = {"this checkout": None}
        if release:
            trees[f"release {release}"] = release_tree(Path(tmp), release)
        for name, tree in trees.items():
            answers = _mixed_answers(tree, texts, Path(tmp) / f"home-{len(out)}")
            row: dict = {}
            for split in ("tune", "held"):
                idx = [i for i, q in enumerate(queries) if q["split"] == split]
                top1 = top3 = empty = 0
                misses = []
                for i in idx:
                    ok = {queries[i]["expect"], *queries[i].get("also", [])}
                    got = answers[i]
                    top1 += bool(got[:1]) and got[0] in ok
                    top3 += bool(ok & set(got[:3]))
                    empty += not got
                    if not (got[:1] and got[0] in ok):
                        misses.append(f"{texts[i]!r}: expected {queries[i]['expect']}, got {got[:3]}")
                n = len(idx)
                row[split] = {
                    "questions": n,
                    "top1": round(top1 / n, 3),
                    "top3": round(top3 / n, 3),
                    "no_result": empty,
                    "misses": misses,
                }
            out[name] = row
    out["load"] = _load_note()
    return out


def print_mixed(mixed: dict) -> None:
    print(
        f"\n## Mixed questions — {mixed['questions']} (code with words, plain descriptions); {mixed['load']}"
    )
    print(f"{'tree':<22}{'half':<6}{'n':>4}{'top-1':>8}{'top-3':>8}{'no result':>11}")
    for name, row in mixed.items():
        if not isinstance(row, dict) or "tune" not in row:
            continue
        for split in ("tune", "held"):
            r = row[split]
            print(
                f"{name:<22}{split:<6}{r['questions']:>4}{r['top1']:>8.3f}{r['top3']:>8.3f}{r['no_result']:>11}"
            )
    for split in ("tune",):  # misses of the tuning half only: the held-out half is not read while tuning
        for m in mixed["this checkout"][split]["misses"]:
            print(f"  {split} miss: {m}")


# --------------------------------------------------------------------------- 3. latency

_TIMED = """
import json, sys, time
t0 = time.perf_counter()
from recall_agent.antipatterns import query
res = query(sys.argv[1], sys.argv[2])
t1 = time.perf_counter()
warm = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); query(sys.argv[1], sys.argv[2]); warm.append(time.perf_counter() - t)
print(json.dumps({"cold_s": t1 - t0, "warm_s": warm, "results": len(res),
                  "detections": sum(1 for r in res if (r.model_extra or {}).get("match_kind") == "detection"),
                  "index": (res[0].model_extra or {}).get("index") if res else None}))
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=b@b", "-c", "user.name=b", *args], cwd=repo, check=True, capture_output=True
    )


def _repos(tmp: Path, snippets: list[dict]) -> tuple[Path, Path]:
    clean, dirty = tmp / "clean", tmp / "dirty"
    for repo in (clean, dirty):
        repo.mkdir()
        _git(repo, "init", "-q")
        (repo / "README.md").write_text("bench\n")
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", "init")
    for s in snippets:  # every snippet as an untracked file in the working tree
        name = "Dockerfile." + s["id"] if s["kind"] == "dockerfile" else f"{s['id']}.{EXT[s['kind']]}"
        (dirty / name).write_text(s["code"])
    return clean, dirty


def _run(repo: Path, home: Path, index: str, warm_runs: int, question: str) -> dict:
    env = {**os.environ, "RECALL_HOME": str(home), "RECALL_ANTIPATTERNS_INDEX": index}
    env.pop("QDRANT_URL", None)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _TIMED, question, str(repo), str(warm_runs)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=ROOT,
    )
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["process_s"] = time.perf_counter() - t0
    return data


def bench_latency(snippets: list[dict], cold_runs: int, warm_runs: int) -> dict:
    question = "requests.get in async handler"
    rows = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        clean, dirty = _repos(tmp, snippets)
        for index in ("memory", "qdrant"):
            for label, repo in (("no detection", clean), ("detection, 134 changed files", dirty)):
                colds, warms, process, first_build, info = [], [], [], None, {}
                for i in range(cold_runs):
                    home = tmp / f"home-{index}-{label[:2]}"  # run 0 is a first-ever start (index built)
                    r = _run(repo, home, index, warm_runs if i == 0 else 0, question)
                    if i == 0:
                        first_build = r["cold_s"]
                        warms = r["warm_s"]
                        info = {k: r[k] for k in ("results", "detections", "index")}
                    else:
                        colds.append(r["cold_s"])
                        process.append(r["process_s"])
                rows[f"{index} / {label}"] = {
                    "first_run_s": round(first_build or 0, 3),
                    "cold_median_s": round(statistics.median(colds), 3) if colds else None,
                    "process_median_s": round(statistics.median(process), 3) if process else None,
                    "warm_median_ms": round(1000 * statistics.median(warms), 1) if warms else None,
                    "warm_p95_ms": round(1000 * sorted(warms)[int(0.95 * (len(warms) - 1))], 1)
                    if warms
                    else None,
                    **info,
                }
    return {"question": question, "cold_runs": cold_runs, "warm_runs": warm_runs, "rows": rows}


def _load_note() -> str:
    try:
        return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the cold-process latency runs")
    parser.add_argument("--cold-runs", type=int, default=4, help="processes per latency row (first builds)")
    parser.add_argument("--warm-runs", type=int, default=20, help="in-process repeats for warm latency")
    parser.add_argument("--release", default=RELEASE, help="commit measured side by side ('' for none)")
    parser.add_argument("--mixed-only", action="store_true", help="only the mixed questions (issue 28)")
    args = parser.parse_args(argv)
    if args.mixed_only:
        mixed = bench_mixed(args.release or None)
        print_mixed(mixed)
        out = ROOT / "bench" / "results" / "antipatterns_mixed.json"
        out.write_text(json.dumps(mixed, indent=2) + "\n")
        print(f"\nsaved {out.relative_to(ROOT)}")
        return 0
    snippets, queries, negatives = load_data()

    det = bench_detectors(snippets)
    print(
        f"\n## Detectors — {det['snippets']} snippets ({det['clean_snippets']} clean), {det['labels']} labels"
    )
    print(f"{'kind':<12}{'precision':>10}{'recall':>8}{'tp':>5}{'fp':>5}{'fn':>5}")
    for kind, r in det["by_kind"].items():
        print(
            f"{kind:<12}{r['precision'] or 0:>10.3f}{r['recall'] or 0:>8.3f}{r['tp']:>5}{r['fp']:>5}{r['fn']:>5}"
        )
    print("misses:", ", ".join(det["misses"]) or "none")
    print("false alarms:", ", ".join(det["false_alarms"]) or "none")

    wild = bench_wild()
    print(f"\n## Detectors on this repository's own code — {wild['files']} Python files, unlabeled")
    for f in wild["findings"]:
        print("  " + f)

    match = bench_matching(queries, negatives)
    print(f"\n## Matching — {match['queries']} questions")
    tiers = list(match["tiers"])
    print(f"{'ranking':<28}{'top-1':>7}{'top-3':>7}" + "".join(f"{'top-3 ' + t:>18}" for t in tiers))
    names = {
        "blended": "engine (cosine + BM25)",
        "lexical": "lexical only (BM25)",
        "semantic": "semantic only (cosine)",
    }
    for mode, name in names.items():
        r = match[mode]
        print(
            f"{name:<28}{r['top1']:>7.3f}{r['top3']:>7.3f}"
            + "".join(f"{r['top3_by_tier'][t]:>18.3f}" for t in tiers)
        )
    print("questions per tier:", match["tiers"])
    print(
        f"engine: correct entry shown (top 3 and above the {MIN_SCORE} threshold): {match['blended']['top3_above_threshold']:.3f}"
    )
    off = match["off_topic"]
    print(
        f"off-topic questions answered above {off['threshold']}: {len(off['wrongly_answered'])}/{off['questions']}"
    )
    for mode in names:
        for f in match[mode]["failures"]:
            print(f"  {mode} miss:", f)

    mixed = bench_mixed(args.release or None)
    print_mixed(mixed)
    result = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": _load_note()},
        "detectors": det,
        "wild": wild,
        "matching": match,
        "mixed": mixed,
    }
    if not args.quick:
        lat = bench_latency(snippets, args.cold_runs, args.warm_runs)
        print(f"\n## Latency — query({lat['question']!r}); {_load_note()}")
        print(
            f"{'index / files':<44}{'first run':>10}{'cold med':>10}{'process':>9}{'warm med':>10}{'warm p95':>10}"
        )
        for name, r in lat["rows"].items():
            print(
                f"{name:<44}{r['first_run_s']:>9.2f}s{(r['cold_median_s'] or 0):>9.2f}s{(r['process_median_s'] or 0):>8.2f}s"
                f"{(r['warm_median_ms'] or 0):>8.1f}ms{(r['warm_p95_ms'] or 0):>8.1f}ms"
            )
        result["latency"] = lat
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nsaved {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
