"""Learnings retrieval benchmark: quality against two baselines, then latency and size at scale.

Quality (one run, same corpus, same learnings): the corpus `bench/corpus/errors.jsonl` holds real errors
made by really running tools (see bench/corpus/generate.py). Instance 0 of every cause is recorded as a
learning; instances 1-3 are the queries that should find it; distractors (near misses: same exception
type / tool / code, different cause) and unrelated errors have no learning and must find nothing.

  recall          recall's retrieval (normalized signatures: fingerprint + lexical), threshold 0.85
  recall+dense    the same, with dense evidence blended in for undecided lexical scores
  bm25-raw        BM25 (rank-bm25) over the raw text, top hit (BM25 has no calibrated threshold)
  dense-origin    the origin design: cosine of embed("Error: " + text[:2000]) >= 0.85 (wordllama model)

R@1: the right learning is the first match. MRR: 1/rank of the right learning among the <= 5 returned.
False-match rate: share of no-learning queries that returned any match.

Scale: stores of 10k and 100k learnings (the corpus' signatures with their quoted names, identifiers and
numbers replaced, so they are distinct errors of the same shapes); query p50/p99 of `execute_sync` (opens
the store, as a CLI call does) over the corpus queries; on-disk store size.

Real-world corpus (`bench/corpus/realworld/`, issue 14): 60 causes reported by 3-5 different people in
public threads, 40 near misses, split into a tuning and a held-out half by cause (`split.json`, committed
before tuning). The first report of each cause is the learning, the other reports are queries, near
misses must match nothing. Each half runs same-repo (learning and query in one repo) and cross-repo (the
learning was recorded in another repo). Systems: recall (this checkout), the release (`git archive` of
--release, run in a subprocess on the same data) and BM25 over the raw text. For every miss it records
whether the right learning was the top candidate below the threshold (threshold miss) or not the top
candidate at all (ranking miss).

    python bench/bench_learnings.py              # a few minutes on 2 cores
    python bench/bench_learnings.py --quick      # quality only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from uuid import UUID

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpora import HALVES, all_sets  # noqa: E402  (bench/ is on sys.path: this script's folder)
from release import package_in, release_tree  # noqa: E402

from recall_agent.learnings import execute_sync, retrieval  # noqa: E402
from recall_agent.learnings.store import open_store  # noqa: E402
from recall_agent.models import Learning, LearningRetrievalRequest  # noqa: E402

CORPUS = ROOT / "bench" / "corpus" / "errors.jsonl"
REALWORLD = ROOT / "bench" / "corpus" / "realworld"
RELEASE = "200406f"  # main when issue 14 started: "the current release"
CASCADE = "87d8fdf"  # main when issue 23 started: today's cascade of constants
RW_REPO, RW_OTHER_REPO = "app", "other-team-svc"
HELDOUT = ROOT / "bench" / "corpus" / "heldout.jsonl"
RESULTS = ROOT / "bench" / "results" / "learnings.json"
REPO = "bench-repo"
DENSE_BLEND = 0.3


def load_corpus(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def quality(tmp: Path, rows: list[dict]) -> tuple[dict, list[str]]:
    """The four systems side by side on one corpus; also recall's misses."""
    learn, positives, negatives = split(rows)
    queries = positives + negatives
    truth = [q["cause"] if q["kind"] == "cause" else None for q in queries]
    out: dict = {}
    ranked, extra = run_recall(tmp / "q-a", learn, queries, dense_weight=0.0)
    out["recall"] = metrics(ranked, truth) | extra
    misses = [
        f"{q['cause']}#{q['instance']} -> {r[0] if r else 'nothing'}"
        for q, r, t in zip(queries, ranked, truth, strict=True)
        if (t is not None and (not r or r[0] != t)) or (t is None and r)
    ]
    ranked, extra = run_recall(tmp / "q-b", learn, queries, dense_weight=DENSE_BLEND)
    out["recall+dense"] = metrics(ranked, truth) | extra | {"dense_weight": DENSE_BLEND}
    out["bm25-raw"] = metrics(run_bm25(learn, queries), truth)
    out["dense-origin"] = metrics(run_dense_origin(learn, queries), truth)
    return out, misses


def print_table(title: str, table: dict) -> None:
    print(title)
    print(f"{'system':<14} {'R@1':>6} {'MRR':>6} {'false-match':>12} {'wrong-top':>10}")
    for name, m in table.items():
        print(
            f"{name:<14} {m['R@1']:>6.3f} {m['MRR']:>6.3f} {m['false_match_rate']:>12.3f} {m['wrong_top_rate']:>10.3f}"
        )


def split(rows: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    learn = [r for r in rows if r["kind"] == "cause" and r["instance"] == 0]
    positives = [r for r in rows if r["kind"] == "cause" and r["instance"] > 0]
    negatives = [r for r in rows if r["kind"] != "cause"]
    return learn, positives, negatives


def metrics(ranked: list[list[str]], truth: list[str | None]) -> dict[str, float]:
    """ranked[i]: returned cause ids (best first) for query i; truth[i]: the right cause or None."""
    pos = [(r, t) for r, t in zip(ranked, truth, strict=True) if t is not None]
    neg = [r for r, t in zip(ranked, truth, strict=True) if t is None]
    r1 = sum(1 for r, t in pos if r and r[0] == t) / len(pos)
    mrr = sum(1 / (r.index(t) + 1) for r, t in pos if t in r) / len(pos)
    wrong_top = sum(1 for r, t in pos if r and r[0] != t) / len(pos)
    fmr = sum(1 for r in neg if r) / len(neg)
    return {
        "R@1": round(r1, 4),
        "MRR": round(mrr, 4),
        "false_match_rate": round(fmr, 4),
        "wrong_top_rate": round(wrong_top, 4),
        "positives": len(pos),
        "negatives": len(neg),
    }


# --------------------------------------------------------------------------- systems


def run_recall(
    home: Path, learn: list[dict], queries: list[dict], dense_weight: float
) -> tuple[list[list[str]], dict]:
    store = open_store(home)
    by_id: dict[UUID, str] = {}
    for r in learn:
        lid, _ = store.add(
            Learning(repo=REPO, error_signatures=[r["text"]], resolution_summary=r["resolution"]),
            consolidate=False,  # one row per labelled learning: the ranking is measured, not the merging
        )
        by_id[lid] = r["cause"]
    ranked, sims_pos, sims_neg, dense_calls = [], [], [], 0
    for q in queries:
        req = LearningRetrievalRequest(match_type="error_signature", error_text=q["text"], repo=REPO)
        dense = retrieval.DenseScorer() if dense_weight > 0 else None
        res = retrieval.retrieve(store, req, dense_weight=dense_weight, dense=dense, record_access=False)
        dense_calls += int(res.dense_used)
        ranked.append([by_id[m.learning_id] for m in res.matches])
        top = res.matches[0].similarity if res.matches else 0.0
        (sims_pos if q["kind"] == "cause" else sims_neg).append(top)
    store.close()
    return ranked, {"queries_needing_dense": dense_calls}


CAL_BINS = [(0.0, 0.6), (0.6, 0.8), (0.8, 0.85), (0.85, 0.9999), (0.9999, 1.01)]


def calibration(home: Path, queries: list[dict], by_cause: dict[str, str]) -> list[dict]:
    """Every (query, candidate) pair recall scores, at threshold 0: share that is really the same cause,
    per similarity band. A calibrated similarity puts wrong pairs low and right pairs high."""
    store = open_store(home)
    pairs: list[tuple[float, bool]] = []
    for q in queries:
        req = LearningRetrievalRequest(
            match_type="error_signature",
            error_text=q["text"],
            repo=REPO,
            min_similarity_error=0.0,
            max_results=20,
        )
        for m in retrieval.retrieve(store, req, record_access=False).matches:
            pairs.append((m.similarity, by_cause.get(str(m.learning_id)) == q["cause"]))
    store.close()
    out = []
    for lo, hi in CAL_BINS:
        inside = [ok for sim, ok in pairs if lo <= sim < hi]
        out.append(
            {
                "band": f"{lo:.2f}-{min(hi, 1.0):.2f}" if hi < 1.01 else "1.00 (same fingerprint)",
                "pairs": len(inside),
                "same_cause": round(sum(inside) / len(inside), 3) if inside else None,
            }
        )
    return out


def tokenize_raw(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def run_bm25(learn: list[dict], queries: list[dict]) -> list[list[str]]:
    from rank_bm25 import BM25Okapi

    bm = BM25Okapi([tokenize_raw(r["text"]) for r in learn])
    out = []
    for q in queries:
        scores = bm.get_scores(tokenize_raw(q["text"]))
        order = np.argsort(-scores)[:5]
        out.append([learn[i]["cause"] for i in order if scores[i] > 0])
    return out


def run_dense_origin(learn: list[dict], queries: list[dict], threshold: float = 0.85) -> list[list[str]]:
    from recall_agent.embeddings import embed

    lv = embed(["Error: " + r["text"][:2000] for r in learn])
    qv = embed(["Error: " + q["text"][:2000] for q in queries])
    sims = qv @ lv.T
    out = []
    for row in sims:
        order = [i for i in np.argsort(-row)[:5] if row[i] >= threshold]
        out.append([learn[i]["cause"] for i in order])
    return out


# --------------------------------------------------------------------------- side by side (issue 23)


def set_job(qset: dict, cross_repo: bool) -> tuple[dict, list[str | None]]:
    """A corpus set (bench/corpora.py) as a runner job: the learnings recorded in one repo (or another
    team's repo, cross-repo), the queries asked from RW_REPO."""
    learnings = [
        {
            "key": lr["key"],
            "repo": RW_OTHER_REPO if cross_repo else RW_REPO,
            "text": lr["text"],
            "resolution": lr["resolution"],
        }
        for lr in qset["learnings"]
    ]
    wide = {"wide_repo": RW_OTHER_REPO} if cross_repo else {}
    queries = [{"text": q["text"], "repo": RW_REPO} | wide for q in qset["queries"]]
    return {"learnings": learnings, "queries": queries}, [q["truth"] for q in qset["queries"]]


def run_runner(pythonpath: Path, job: dict) -> dict:
    import subprocess

    package = package_in(None if pythonpath == ROOT else pythonpath)
    env = dict(os.environ, PYTHONPATH=str(pythonpath), PYTHONSAFEPATH="1", RECALL_BENCH_PACKAGE=package)
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "realworld_runner.py")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        cwd=str(pythonpath),
        check=True,
    )
    return json.loads(out.stdout)


def decision_metrics(ranked: list[list[str]], truth: list[str | None]) -> dict[str, float]:
    """The four figures of issue 23 for one (system, corpus, half, scope): of the queries that have a
    learning, R@1 (it is returned first), not-returned (nothing returned) and wrong-top-1 (another
    learning first); of the queries that have none, the false-match rate (anything returned)."""
    pos = [(r, t) for r, t in zip(ranked, truth, strict=True) if t is not None]
    neg = [r for r, t in zip(ranked, truth, strict=True) if t is None]
    return {
        "R@1": round(sum(1 for r, t in pos if r and r[0] == t) / len(pos), 4),
        "not_returned": round(sum(1 for r, _ in pos if not r) / len(pos), 4),
        "wrong_top1": round(sum(1 for r, t in pos if r and r[0] != t) / len(pos), 4),
        "false_match_rate": round(sum(1 for r in neg if r) / len(neg), 4) if neg else None,
        "positives": len(pos),
        "negatives": len(neg),
    }


PR_THRESHOLDS = [round(0.05 * i, 2) for i in range(21)]


def pr_points(results: list[dict], truth: list[str | None]) -> list[dict]:
    """Precision and recall of "show the best candidate when its similarity >= t", per threshold t: a
    shown learning is right when it is the query's own (a shown learning for a no-learning query, or the
    wrong one, is a false match). From the runner's threshold-0 scores, so one run gives the whole curve."""
    npos = sum(1 for t in truth if t is not None)
    nneg = len(truth) - npos
    out = []
    for thr in PR_THRESHOLDS:
        shown = right = false_neg = 0
        for res, t in zip(results, truth, strict=True):
            top = res["all"][0] if res["all"] else None
            if top is None or top[1] < thr:
                continue
            shown += 1
            if top[0] == t:
                right += 1
            elif t is None:
                false_neg += 1
        out.append(
            {
                "threshold": thr,
                "precision": round(right / shown, 4) if shown else None,
                "recall": round(right / npos, 4) if npos else None,
                "false_match_rate": round(false_neg / nneg, 4) if nneg else None,
                "counts": {
                    "shown": shown,
                    "right": right,
                    "false_on_no_learning": false_neg,
                    "positives": npos,
                    "no_learning": nneg,
                },
            }
        )
    return out


def pooled_pr(per_corpus: dict[str, list[dict]]) -> list[dict]:
    """One curve over several corpora's queries (their counts summed per threshold)."""
    out = []
    for i, thr in enumerate(PR_THRESHOLDS):
        c = {
            k: sum(pts[i]["counts"][k] for pts in per_corpus.values())
            for k in next(iter(per_corpus.values()))[i]["counts"]
        }
        out.append(
            {
                "threshold": thr,
                "precision": round(c["right"] / c["shown"], 4) if c["shown"] else None,
                "recall": round(c["right"] / c["positives"], 4) if c["positives"] else None,
                "false_match_rate": round(c["false_on_no_learning"] / c["no_learning"], 4)
                if c["no_learning"]
                else None,
                "counts": c,
            }
        )
    return out


def side_by_side(tmp: Path, release: str | None, cascade: str | None, only: str | None = None) -> dict:
    """The release, today's cascade and the learned decision on every corpus set, both halves (or `only`
    one, while tuning), same-repo and cross-repo, in one run on the same data."""
    systems: list[tuple[str, Path]] = [("learned", ROOT)]
    if cascade:
        systems.append((f"cascade {cascade}", release_tree(tmp, cascade)))
    if release:
        systems.append((f"release {release}", release_tree(tmp, release)))
    out: dict = {
        "systems": [n for n, _ in systems],
        "cells": {},
        "pr": {},
        "corpus": {},
        "loadavg_start": _loadavg(),
    }
    for half in (only,) if only else HALVES:
        for qset in all_sets(half):
            out["corpus"][f"{qset['name']} {half}"] = {
                "learnings": len(qset["learnings"]),
                "positive_queries": sum(1 for q in qset["queries"] if q["truth"]),
                "no_learning_queries": sum(1 for q in qset["queries"] if not q["truth"]),
            }
            for scope in ("same-repo", "cross-repo"):
                job, truth = set_job(qset, cross_repo=scope == "cross-repo")
                cell: dict = {}
                for name, path in systems:
                    res = run_runner(path, job)
                    cell[name] = decision_metrics([r["ranked"] for r in res["results"]], truth)
                    cell[name]["p50_ms"] = round(statistics.median(res["ms"]), 2)
                    if scope == "same-repo":  # the curves: same-repo, where the threshold decides alone
                        out["pr"].setdefault(half, {}).setdefault(qset["name"], {})[name] = pr_points(
                            res["results"], truth
                        )
                    if name == "learned":
                        cell[name]["misses"] = [
                            f"{t} -> {r['ranked'][0] if r['ranked'] else 'nothing'}"
                            for r, t in zip(res["results"], truth, strict=True)
                            if t is not None and (not r["ranked"] or r["ranked"][0] != t)
                        ]
                        cell[name]["false_matches"] = [
                            f"{q['text'][:60]!r} -> {r['ranked'][0]} ({r['why'][0] if r['why'] else ''})"
                            for r, t, q in zip(res["results"], truth, job["queries"], strict=True)
                            if t is None and r["ranked"]
                        ]
                out["cells"][f"{qset['name']} {half} {scope}"] = cell
    out["loadavg_end"] = _loadavg()
    for by_corpus in out["pr"].values():  # the thread corpora pooled: the real pastes
        threads = {c: v for c, v in by_corpus.items() if c != "synthetic"}
        if threads:
            by_corpus["threads pooled"] = {
                name: pooled_pr({c: v[name] for c, v in threads.items()}) for name in out["systems"]
            }
    return out


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def print_side_by_side(sbs: dict) -> None:
    print("corpus:", json.dumps(sbs["corpus"]))
    print(
        f"{'corpus half scope':<32}{'system':<18}{'R@1':>7}{'not-ret':>9}{'wrong-1':>9}{'FMR':>7}{'p50 ms':>8}"
    )
    for col, cell in sbs["cells"].items():
        for name in sbs["systems"]:
            m = cell[name]
            fmr = f"{m['false_match_rate']:.3f}" if m["false_match_rate"] is not None else "-"
            print(
                f"{col:<32}{name:<18}{m['R@1']:>7.3f}{m['not_returned']:>9.3f}{m['wrong_top1']:>9.3f}"
                f"{fmr:>7}{m['p50_ms']:>8.2f}"
            )


# --------------------------------------------------------------------------- scale


_QUOTED = re.compile(r"('|\"|`)([^'\"`\n]{1,60})\1")
_IDENT = re.compile(r"\b[a-z]+_[a-z0-9_]+\b")


def mutate(normalized: str, rng: random.Random, n: int) -> str:
    """A distinct error of the same shape: new quoted names and identifiers, plus one new subject."""

    def word() -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))

    text = _QUOTED.sub(lambda m: f"{m.group(1)}{word()}_{n}{m.group(1)}", normalized)
    text = _IDENT.sub(lambda m: f"{word()}_{word()}", text)
    first, _, rest = text.partition("\n")
    return f"{first} ({word()}_{word()})" + (f"\n{rest}" if rest else "")


def build_scale_store(
    home: Path, learn: list[dict], size: int, seed: int = 7
) -> tuple[float, dict[UUID, str]]:
    """`size` synthetic learnings over 21 repos (signatures stored as normalized text, as agents' learnings
    mostly are), then the corpus' real learnings. Returns the build time (s) and real learning id -> cause."""
    from recall_agent.learnings.signatures import normalize

    rng = random.Random(seed)
    bases = [normalize(r["text"]) for r in learn]
    store = open_store(home)
    started = time.perf_counter()
    batch: list[Learning] = []
    repos = [REPO] + [f"repo-{i}" for i in range(20)]
    for n in range(size):
        base = learn[n % len(learn)]
        batch.append(
            Learning(
                repo=rng.choice(repos),
                error_signatures=[mutate(bases[n % len(bases)], rng, n)],
                resolution_summary=f"fix #{n}: {base['resolution']}",
                file_paths_touched=[f"src/mod_{n % 997}.py"],
            )
        )
        if len(batch) == 2000:
            store.add_many(batch, consolidate=False)  # distinct fixes of mutated copies: kept apart
            batch = []
    if batch:
        store.add_many(batch, consolidate=False)
    ids = store.add_many(
        [
            Learning(repo=REPO, error_signatures=[r["text"]], resolution_summary=r["resolution"])
            for r in learn
        ],
        consolidate=False,
    )
    store.close()
    return time.perf_counter() - started, {lid: r["cause"] for (lid, _), r in zip(ids, learn, strict=True)}


def latency(home: Path, queries: list[dict], rounds: int, by_id: dict[UUID, str]) -> dict[str, float]:
    """p50/p99 of execute_sync (store opened per call, as the CLI does) and quality among the crowd."""
    times, ranked = [], []
    for n in range(rounds):
        for q in queries:
            t0 = time.perf_counter()
            res = execute_sync(
                {"error_text": q["text"], "repo": REPO, "match_type": "auto", "file_paths": ["src/mod_3.py"]},
                home=home,
            )
            times.append((time.perf_counter() - t0) * 1000)
            if n == 0:
                ranked.append(
                    [
                        by_id.get(m.learning_id, "synthetic")
                        for m in res.matches
                        if m.match_type == "error_signature"
                    ]
                )
    times.sort()
    truth = [q["cause"] if q["kind"] == "cause" else None for q in queries]
    quality = metrics(ranked, truth)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p99_ms": round(times[min(len(times) - 1, int(len(times) * 0.99))], 2),
        "queries": len(times),
        "R@1": quality["R@1"],
        "false_match_rate": quality["false_match_rate"],
    }


def write_latency(home: Path, learn: list[dict], writes: int = 200, seed: int = 11) -> dict[str, float]:
    """p50/p99 of one `store.add` with write-time consolidation (issue 34: the same-cause lookup by the
    fingerprint and full-text indexes, scored by the acceptance model) into the built store: new copies of
    the corpus' errors (other names, other fixes), half of them in the corpus' repository; how many were
    merged into an existing row."""
    from recall_agent.learnings.signatures import normalize

    rng = random.Random(seed)
    store = open_store(home)
    times, merged = [], 0
    for n in range(writes):
        base = learn[n % len(learn)]
        learning = Learning(
            repo=REPO if n % 2 else f"repo-{n % 20}",
            error_signatures=[mutate(normalize(base["text"]), rng, 10_000_000 + n)],
            resolution_summary=f"write #{n}: {base['resolution']}",
        )
        t0 = time.perf_counter()
        merged += store.add(learning)[1]
        times.append((time.perf_counter() - t0) * 1000)
    store.close()
    times.sort()
    return {"write_p50_ms": round(statistics.median(times), 2),
            "write_p99_ms": round(times[min(len(times) - 1, int(len(times) * 0.99))], 2),
            "writes": writes, "writes_merged": merged}  # fmt: skip


def _ids(home: Path) -> dict[UUID, str]:
    """learning id -> cause, for the store run_recall built on the main corpus (resolutions are unique)."""
    store = open_store(home)
    by_resolution = {r["resolution"]: r["cause"] for r in split(load_corpus())[0]}
    ids = {learning.id: by_resolution[learning.resolution_summary] for learning in store.iter_all()}
    store.close()
    return ids


def cold_path(home: Path, text: str, runs: int = 5) -> dict:
    """Fresh processes: `import recall_agent.learnings`, and one query against the small corpus store."""
    import subprocess

    env = dict(os.environ, RECALL_HOME=str(home))
    query = (
        "import asyncio, json, sys, time; t = time.perf_counter(); from recall_agent.learnings import execute; "
        f"r = asyncio.run(execute({{'error_text': {text!r}, 'repo': {REPO!r}}})); "
        "print(json.dumps([time.perf_counter() - t, len(r.matches), 'numpy' in sys.modules, "
        "'recall_agent.embeddings' in sys.modules]))"
    )
    imports, queries, heavy, bare = [], [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        bare.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import recall_agent.learnings"], check=True, env=env)
        imports.append((time.perf_counter() - t0) * 1000)
        out = subprocess.run(
            [sys.executable, "-c", query], check=True, env=env, capture_output=True, text=True
        )
        took, found, numpy_loaded, emb_loaded = json.loads(out.stdout)
        queries.append(took * 1000)
        heavy.append(numpy_loaded or emb_loaded)
    return {
        "python_startup_ms_median": round(statistics.median(bare), 1),
        "python_import_recall_learnings_ms_median": round(statistics.median(imports), 1),
        "in_process_import_plus_query_ms_median": round(statistics.median(queries), 1),
        "query_found": found,
        "numpy_or_embeddings_imported": any(heavy),
    }


def store_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.glob("learnings.db*"))


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="quality only (skip the 10k/100k stores)")
    ap.add_argument("--sizes", default="10000,100000", help="store sizes for latency (default 10000,100000)")
    ap.add_argument("--release", default=RELEASE, help=f"commit measured as the release (default {RELEASE})")
    ap.add_argument(
        "--cascade", default=CASCADE, help=f"commit measured as today's cascade (default {CASCADE})"
    )
    ap.add_argument("--decision-only", action="store_true", help="only the side-by-side decision tables")
    ap.add_argument("--half", choices=HALVES, help="only this half (while tuning: the tuning half)")
    args = ap.parse_args()

    rows = load_corpus()
    learn, positives, negatives = split(rows)
    queries = positives + negatives
    results: dict = {
        "corpus": {
            "causes": len(learn),
            "positive_queries": len(positives),
            "no_learning_queries": len(negatives),
            "distractor_queries": sum(1 for r in negatives if r["kind"] == "distractor"),
            "tools": sorted({r["cause"].split("-")[0] for r in rows}),
        },
        "quality": {},
    }
    if args.decision_only:
        with tempfile.TemporaryDirectory() as tmp:
            sbs = side_by_side(Path(tmp), args.release, args.cascade, args.half)
        print_side_by_side(sbs)
        if args.half:  # a look at one half is not a result
            for col, cell in sbs["cells"].items():
                print(col, "misses:", cell["learned"]["misses"], "\nfalse:", cell["learned"]["false_matches"])
            return 0
        prev = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(prev | {"decision": sbs}, indent=2) + "\n")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        results["decision"] = side_by_side(Path(tmp), args.release, args.cascade)
        results["quality"], results["recall_misses"] = quality(Path(tmp), rows)
        home = Path(tmp) / "q-a"  # the store recall's run built: the corpus learnings
        results["cold_path"] = cold_path(home, positives[0]["text"])
        results["calibration"] = calibration(home, queries, {str(k): v for k, v in _ids(home).items()})
        if HELDOUT.exists():
            held = load_corpus(HELDOUT)
            h_learn, h_pos, h_neg = split(held)
            table, misses = quality(Path(tmp) / "heldout", held)
            results["heldout"] = {
                "causes": len(h_learn),
                "positive_queries": len(h_pos),
                "no_learning_queries": len(h_neg),
                "quality": table,
                "recall_misses": misses,
            }

    print(
        f"corpus: {len(learn)} causes, {len(positives)} positive queries, {len(negatives)} no-learning queries"
    )
    print(f"cold path: {results['cold_path']}")
    print(
        "calibration (all scored pairs): "
        + ", ".join(
            f"{b['band']}: {b['pairs']} pairs, {b['same_cause']} same cause" for b in results["calibration"]
        )
    )
    print_side_by_side(results["decision"])
    print_table("main corpus", results["quality"])
    if results["recall_misses"]:
        print("recall misses:", "; ".join(results["recall_misses"]))
    if "heldout" in results:
        h = results["heldout"]
        print_table(
            f"held-out corpus ({h['causes']} causes, {h['positive_queries']} positive, "
            f"{h['no_learning_queries']} no-learning queries; written after tuning)",
            h["quality"],
        )
        if h["recall_misses"]:
            print("held-out recall misses:", "; ".join(h["recall_misses"]))

    previous = json.loads(RESULTS.read_text()).get("scale", {}) if RESULTS.exists() else {}
    if not args.quick:
        results["scale"] = dict(previous)  # sizes not run this time keep their last numbers
        sample = positives[:: max(1, len(positives) // 60)] + negatives[:: max(1, len(negatives) // 20)]
        for size in (int(s) for s in args.sizes.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                home = Path(tmp)
                build_s, by_id = build_scale_store(home, learn, size)
                execute_sync({"error_text": "warm up", "repo": REPO}, home=home)
                lat = latency(home, sample, rounds=2, by_id=by_id) | write_latency(home, learn)
                results["scale"][str(size)] = lat | {
                    "store_mb": round(store_bytes(home) / 2**20, 1),
                    "build_s": round(build_s, 1),
                }
                print(
                    f"{size:>7} learnings: R@1 {lat['R@1']}, false-match {lat['false_match_rate']}, "
                    f"p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms, write p50 {lat['write_p50_ms']} ms"
                    f" p99 {lat['write_p99_ms']} ms ({lat['writes_merged']}/{lat['writes']} merged), "
                    f"store {results['scale'][str(size)]['store_mb']} MB (built in {build_s:.0f} s)"
                )
    elif previous:
        results["scale"] = previous  # --quick keeps the last scale run
    results["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "loadavg_end": _loadavg()}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"saved {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
