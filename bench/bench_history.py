"""Git history in the blast radius (issue 25): replay real histories the way ROSE was evaluated.

For the last `N` commits of 2–30 files of each repository, with only the history before that commit:
give the first changed file (and, separately, all files but one) and score whether the other files (the
left-out one) come back in the top 1 / 3 / 10 answers. Side by side in one run, on the same commits:

- recall: `cochange.candidates` + the fitted model (`cochange_weights.json`), import graph included;
- code-maat's coupling with its defaults: shared revisions / average revisions, min-revs 5, min-shared-revs
  5, min-coupling 30 %, change sets over 30 files dropped, renames not followed;
- repowise's weighting: the last 2,000 commits, pair weight Σ exp(-age / 180 days) ≥ 2, commits over 200
  files make no pairs, renames not followed;
- the import graph alone: files with a direct import edge to a query file (most query files first, then
  the least connected neighbour first).

The evaluation commits of each repository are split before anything is tuned: the older half is the
tuning half, the newer half is held out (`bench/history/split.json` records each repository's pinned HEAD
and the first commit of each half). `--fit` fits the model's weights on the tuning halves only and writes
`recall_agent/architecture/cochange_weights.json`. The import graph is recall's own index of the tree as
it was just before the first evaluation commit (`git archive`), so no later edge leaks in.

Also measured: history index time and memory (a fresh process per repository, git's memory separately),
the update after ~100 new commits, and answer latency through `recall_agent.architecture.query()`.

Repositories: bring each with the search tool's `fetch` (`github:git/git`, …: a bare clone with history
under /work/.mirror/<owner>+<name>/repo, or set RECALL_MIRRORS); the script clones them into
bench/.cache/history/ (git-ignored) and never commits them.

    python3 bench/bench_history.py            # replay with the committed weights, print, save JSON
    python3 bench/bench_history.py --fit      # fit the weights on the tuning halves first
    python3 bench/bench_history.py cobra gson # some repositories only

Results: bench/results/history.json.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "history"
SPLIT = HERE / "history" / "split.json"
RESULTS = HERE / "results" / "history.json"
MIRRORS = Path(os.environ.get("RECALL_MIRRORS", "/work/.mirror"))
sys.path.insert(0, str(ROOT))

from recall_agent.architecture import churn, cochange, history  # noqa: E402

REPOS = {  # short name -> (owner/name, main language)
    "git": ("git/git", "C"),
    "pytest": ("pytest-dev/pytest", "Python"),
    "vue": ("vuejs/core", "TypeScript"),
    "ripgrep": ("BurntSushi/ripgrep", "Rust"),
    "gson": ("google/gson", "Java"),
    "cobra": ("spf13/cobra", "Go"),
}
N_EVAL = 400  # evaluation commits per repository (the newest that qualify), half tuning, half held out
MIN_FILES, MAX_FILES = 2, 30
KS = (1, 3, 10)
METHODS = ("recall", "code-maat", "repowise", "imports")


# --------------------------------------------------------------------------- repositories


def clone(name: str) -> Path:
    """A local clone (no work tree) of the fetched mirror, reset to the pinned HEAD when one is recorded."""
    slug, _ = REPOS[name]
    dest = CACHE / "repos" / name
    if not dest.exists():
        mirror = MIRRORS / slug.replace("/", "+") / "repo"
        if not mirror.exists():
            sys.exit(f"bench_history: {mirror} is missing: fetch github:{slug} with the search tool first")
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", str(mirror), str(dest)], check=True)
    pinned = _split().get(name, {}).get("head")
    if pinned and _git(dest, "rev-parse", "HEAD").strip() != pinned:
        _git(dest, "reset", "-q", "--hard", pinned)
    return dest


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _split() -> dict:
    return json.loads(SPLIT.read_text()) if SPLIT.exists() else {}


# --------------------------------------------------------------------------- index time and memory

_INDEX_CHILD = """
import json, resource, sys, time
from pathlib import Path
from recall_agent.architecture import history
started = time.perf_counter()
stats = history.update(Path(sys.argv[1]))
# VmHWM: this process's own peak (ru_maxrss would carry the forking parent's size across exec);
# git's peak is its ru_maxrss as a waited-for child (at least this process's size when it forked)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"seconds": time.perf_counter() - started, "commits": stats.commits, "files": stats.files,
  "added": stats.added, "note": stats.note, "python_mb": hwm / 1024,
  "git_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def index_in_child(repo: Path, home: Path, **env_extra: str) -> dict:
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(ROOT), **env_extra}
    out = subprocess.run(
        [sys.executable, "-c", _INDEX_CHILD, str(repo)], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def update_after_new_commits(name: str, repo: Path, target: int = 100) -> dict:
    """Index the history as it was ~`target` commits ago, move HEAD back, time the update."""
    head = _git(repo, "rev-parse", "HEAD").strip()
    base, k = head, 1
    while True:  # the first-parent ancestor with at least `target` commits after it
        base = _git(repo, "rev-parse", f"{head}~{k}").strip()
        n = int(_git(repo, "rev-list", "--count", f"{base}..{head}"))
        if n >= target:
            break
        k += max(1, (target - n) // 4)
    home = CACHE / "home-update" / name
    shutil.rmtree(home, ignore_errors=True)
    try:
        _git(repo, "update-ref", "HEAD", base)
        index_in_child(repo, home)
    finally:
        _git(repo, "update-ref", "HEAD", head)
    runs = [index_in_child(repo, home)]
    return {"new_commits": n, "seconds": runs[0]["seconds"], "added": runs[0]["added"]}


# --------------------------------------------------------------------------- the replay data


@dataclass
class Replay:
    name: str
    conn: object
    commits: list[tuple[int, int, int]]  # (id, time, files) of non-merge commits, oldest first
    changes: dict[int, list[tuple[int, str, str]]]  # commit id -> [(file, status, path)]
    eval_ids: list[int] = field(default_factory=list)
    split_at: int = 0  # first held-out commit id
    line: int = 0


def load(name: str, repo: Path, home: Path) -> Replay:
    os.environ["RECALL_HOME"] = str(home)
    store = history.store_path(repo)
    conn = history.connect(store)
    commits = conn.execute("SELECT id, time, files FROM commits WHERE merge = 0 ORDER BY id").fetchall()
    changes: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for cid, file, status, path in conn.execute(
        "SELECT c.commit_id, c.file, c.status, p.path FROM changes c JOIN paths p ON p.id = c.path"
        " ORDER BY c.commit_id, p.path"
    ):
        changes[cid].append((file, status, path))
    line = int(history.meta(conn, "line") or 0)
    return Replay(name, conn, commits, changes, line=line)


def choose_eval(rp: Replay, split: dict) -> None:
    """The newest N_EVAL non-bulk commits of 2–30 stored files with at least two files that existed before;
    the older half tunes, the newer half is held out."""
    bulk = {r[0] for r in rp.conn.execute("SELECT id FROM commits WHERE bulk = 1")}
    chosen = []
    for cid, _, _ in reversed(rp.commits):
        files = rp.changes.get(cid, [])
        if cid in bulk or not MIN_FILES <= len(files) <= MAX_FILES:
            continue
        if sum(1 for _, status, _ in files if status != "A") < 2:
            continue
        chosen.append(cid)
        if len(chosen) == N_EVAL:
            break
    chosen.reverse()
    rp.eval_ids = chosen
    shas = dict(rp.conn.execute("SELECT id, sha FROM commits"))
    if "first_held_out" in split:  # recorded before tuning: the halves never move
        by_sha = {v: k for k, v in shas.items()}
        rp.split_at = by_sha[split["first_held_out"]]
        assert shas[chosen[0]] == split["first_eval"], "the evaluation commits moved: re-pin the split"
    else:
        rp.split_at = chosen[len(chosen) // 2]
        split.update(first_eval=shas[chosen[0]], first_held_out=shas[rp.split_at], n_eval=len(chosen))


def queries(rp: Replay, cid: int) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(files of the commit that existed before it, in git's order; all its files)."""
    files = rp.changes[cid]
    before = [(f, p) for f, status, p in files if status != "A"]
    return before, [(f, p) for f, _, p in files]


# --------------------------------------------------------------------------- the import graph


class SplitGraph:
    """recall's import graph of the tree just before the first evaluation commit, in history files."""

    def __init__(self, edges: list[tuple[str, str]], tests: set[str], path_to_file: dict[str, int]) -> None:
        self.adj: dict[int, set[int]] = defaultdict(set)
        self.dependents: dict[int, set[int]] = defaultdict(set)
        self.tests = {path_to_file[p] for p in tests if p in path_to_file}
        for src, dst in edges:
            a, b = path_to_file.get(src), path_to_file.get(dst)
            if a is None or b is None or a == b:
                continue
            self.adj[a].add(b)
            self.adj[b].add(a)
            self.dependents[b].add(a)
        self._reach: dict[int, set[int]] = {}

    def neighbors(self, file: int) -> set[int]:
        return self.adj.get(file, set())

    def tests_reaching(self, file: int) -> set[int]:
        if file not in self._reach:
            seen, frontier = {file}, {file}
            for _ in range(3):
                frontier = {d for f in frontier for d in self.dependents.get(f, ())} - seen
                seen |= frontier
            self._reach[file] = (seen - {file}) & self.tests
        return self._reach[file]


def split_graph(name: str, rp: Replay, repo: Path) -> tuple[SplitGraph, dict]:
    first = rp.eval_ids[0]
    sha = rp.conn.execute("SELECT sha FROM commits WHERE id = ?", (first,)).fetchone()[0]
    tree = CACHE / "trees" / name
    home = CACHE / "home-graph" / name
    if not (tree / ".bench-done").exists():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", f"{sha}^"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        (tree / ".bench-done").write_text(sha)
    saved = os.environ.get("RECALL_HOME")
    os.environ["RECALL_HOME"] = str(home)
    try:
        from recall_agent.architecture.indexer import open_index

        started = time.perf_counter()
        code, stats = open_index(tree, progress=False)
        seconds = time.perf_counter() - started
        edges = code.execute(
            "SELECT DISTINCT s.path, d.path FROM edges e JOIN files s ON s.id = e.src JOIN files d ON d.id = e.dst"
        ).fetchall()
        tests = {r[0] for r in code.execute("SELECT path FROM files WHERE is_test = 1")}
        code.close()
    finally:
        if saved is not None:
            os.environ["RECALL_HOME"] = saved
    names: dict[str, int] = {}
    lines = dict(rp.conn.execute("SELECT id, line FROM files"))
    for cid in sorted(c for c in rp.changes if c < first):
        for file, status, path in rp.changes[cid]:
            if lines.get(file) != rp.line:
                continue
            if status == "D":
                names.pop(path, None)
            else:
                names[path] = file
    return SplitGraph(edges, tests, names), {"files": stats.files, "edges": len(edges), "seconds": seconds}


# --------------------------------------------------------------------------- the baselines


class PathIndex:
    """Commits per raw path (no renames followed), for the baselines."""

    def __init__(self, rp: Replay, max_files: int) -> None:
        self.max_files = max_files
        self.by_path: dict[str, list[int]] = defaultdict(list)
        self.files_of: dict[int, list[str]] = {}
        self.size = {cid: n for cid, _, n in rp.commits}
        for cid, _, n in rp.commits:
            if n > max_files:
                continue
            paths = [p for _, _, p in rp.changes.get(cid, [])]
            self.files_of[cid] = paths
            for p in paths:
                self.by_path[p].append(cid)

    def revs(self, path: str, before: int) -> int:
        return bisect.bisect_left(self.by_path.get(path, []), before)

    def commits(self, path: str, before: int, since: int = 0) -> list[int]:
        ids = self.by_path.get(path, [])
        return ids[bisect.bisect_left(ids, since) : bisect.bisect_left(ids, before)]


def code_maat(idx: PathIndex, query: list[str], before: int) -> list[str]:
    """code-maat's `coupling` with its defaults, for each query path; a candidate keeps its best degree."""
    best: dict[str, tuple[float, float]] = {}
    for q in query:
        shared: Counter[str] = Counter()
        for cid in idx.commits(q, before):
            shared.update(p for p in idx.files_of[cid] if p != q)
        revs_q = idx.revs(q, before)
        for c, n in shared.items():
            avg = (revs_q + idx.revs(c, before)) / 2
            degree = 100.0 * n / avg
            if avg >= 5 and n >= 5 and 30 <= degree <= 100:
                best[c] = max(best.get(c, (0.0, 0.0)), (degree, avg))
    return [p for p, _ in sorted(best.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))]


def repowise(
    idx: PathIndex, rp: Replay, pos: dict[int, int], query: list[str], before: int, now: int
) -> list[str]:
    """repowise's co-change weighting: the last 2,000 commits, Σ exp(-age/180 d) per pair, kept when ≥ 2."""
    i = pos[before]
    since = rp.commits[max(0, i - 2000)][0]
    score: dict[str, float] = defaultdict(float)
    for q in query:
        for cid in idx.commits(q, before, since):
            t = rp.commits[pos[cid]][1]
            w = math.exp(-max(0, now - t) / 86400 / 180)
            for p in idx.files_of[cid]:
                if p != q:
                    score[p] += w
    return [p for p, s in sorted(score.items(), key=lambda kv: (-kv[1], kv[0])) if s >= 2]


def graph_tests(graph: SplitGraph, query: list[int], h: cochange.History) -> list[int]:
    """Tests reaching the query files through imports, nearest first (the static "tests for X")."""
    depth: dict[int, int] = {}
    for q in query:
        seen, frontier = {q}, {q}
        for d in range(1, 11):
            frontier = {x for f in frontier for x in graph.dependents.get(f, ())} - seen
            seen |= frontier
            for t in frontier & graph.tests:
                depth[t] = min(depth.get(t, d), d)
    paths = h.paths(depth)
    return sorted(depth, key=lambda f: (depth[f], paths.get(f, "")))


def imports_only(graph: SplitGraph, query: list[int], h: cochange.History) -> list[int]:
    count: Counter[int] = Counter()
    for q in query:
        count.update(graph.neighbors(q) - set(query))
    about = h.about(count)
    paths = h.paths(count)
    alive = [f for f in count if f in about and about[f][3]]
    return sorted(alive, key=lambda f: (-count[f], len(graph.neighbors(f)), paths.get(f, "")))


# --------------------------------------------------------------------------- the replay


@dataclass
class Query:
    repo: str
    commit: int
    half: str  # tuning | held-out
    kind: str  # first | all-but-one
    targets: set[int]
    target_paths: set[str]
    ranked: dict[str, list] = field(default_factory=dict)  # method -> files (ids) or paths
    rows: list[list[float]] = field(default_factory=list)  # recall's candidates, FEATURES order
    row_files: list[int] = field(default_factory=list)
    row_paths: list[str] = field(default_factory=list)
    seconds: float = 0.0


def cases(rp: Replay, cid: int, graph: SplitGraph) -> list[tuple[str, list, list]]:
    """(kind, given files, wanted files) of one evaluation commit."""
    before, _ = queries(rp, cid)
    out = [("first", [before[0]], before[1:])]
    out += [("all-but-one", before[:i] + before[i + 1 :], [before[i]]) for i in range(len(before))]
    tests = [(f, p) for f, p in before if f in graph.tests or cochange.is_test_path(p)]
    code = [(f, p) for f, p in before if (f, p) not in tests]
    if tests and code:  # which tests to run for the code this commit changed
        out.append(("tests", code, tests))
    return out


def replay(rp: Replay, graph: SplitGraph) -> list[Query]:
    maat = PathIndex(rp, 30)
    wise = PathIndex(rp, 200)
    pos = {cid: i for i, (cid, _, _) in enumerate(rp.commits)}
    times = {cid: t for cid, t, _ in rp.commits}
    out: list[Query] = []
    for cid in rp.eval_ids:
        half = "held-out" if cid >= rp.split_at else "tuning"
        h = cochange.History(rp.conn, before=cid)
        for kind, given, wanted in cases(rp, cid, graph):
            q = Query(rp.name, cid, half, kind, {f for f, _ in wanted}, {p for _, p in wanted})
            started = time.perf_counter()
            found = cochange.candidates(h, [f for f, _ in given], graph)
            q.seconds = time.perf_counter() - started
            q.row_files = list(found)
            q.rows = [found[f][0] for f in q.row_files]
            q.row_paths = [found[f][1].path for f in q.row_files]
            paths = [p for _, p in given]
            maat_list = code_maat(maat, paths, cid)
            wise_list = repowise(wise, rp, pos, paths, cid, times[cid])
            if kind == "tests":
                q.ranked["code-maat"] = [p for p in maat_list if cochange.is_test_path(p)][:10]
                q.ranked["repowise"] = [p for p in wise_list if cochange.is_test_path(p)][:10]
                q.ranked["imports"] = graph_tests(graph, [f for f, _ in given], h)[:10]
            else:
                q.ranked["code-maat"] = maat_list[:10]
                q.ranked["repowise"] = wise_list[:10]
                q.ranked["imports"] = imports_only(graph, [f for f, _ in given], h)[:10]
            out.append(q)
    return out


TEST_ROW = (
    cochange.FEATURES.index("is_test"),
    cochange.FEATURES.index("log_support"),
    cochange.FEATURES.index("test_reach"),
)


def _replayed(name: str, rp: Replay, graph: SplitGraph, cached: bool) -> list[Query]:
    """The replay's queries, or (with --cached, while working on the fit) the ones the last run saved."""
    import pickle

    saved = CACHE / f"replay-{name}.pkl"
    if cached and saved.exists():
        return pickle.loads(saved.read_bytes())
    qs = replay(rp, graph)
    saved.write_bytes(pickle.dumps(qs))
    return qs


def score_recall(qs: list[Query], model: dict) -> None:
    """recall's answer per query: the model's ranking; for "tests", the test files among it (as
    `evolution.tests_for` ranks them), then the tests only the graph reaches."""
    is_test, support, reach = TEST_ROW
    for q in qs:
        m = model["one" if q.kind == "first" else "many"]
        rows = zip(q.row_files, q.rows, q.row_paths or [""] * len(q.rows), strict=True)
        if q.kind == "tests":
            rows = [(f, r, p) for f, r, p in rows if r[is_test] and (r[support] or r[reach])]
        # the product's order (cochange.rank): score, then commits together, then path
        scored = sorted(rows, key=lambda frp: (-cochange.linear(frp[1], m), -frp[1][support], frp[2], frp[0]))
        q.ranked["recall"] = [f for f, _, _ in scored[:10]]
        if q.kind == "tests":
            q.ranked["recall"] += [f for f in q.ranked["imports"] if f not in q.ranked["recall"]]
            q.ranked["recall"] = q.ranked["recall"][:10]


def hit(q: Query, method: str, k: int) -> bool:
    top = q.ranked.get(method, [])[:k]
    wanted = q.target_paths if method in ("code-maat", "repowise") else q.targets
    return any(x in wanted for x in top)


def summarize(qs: list[Query]) -> dict:
    """Hit rates per method and k: a commit's first-file query counts once; its all-but-one queries are
    averaged within the commit first, so big commits do not outweigh small ones."""
    out: dict = {}
    for kind in ("first", "all-but-one", "tests"):
        sel = [q for q in qs if q.kind == kind]
        out[kind] = {"n": 0}
        groups = _by_commit(sel) if kind == "all-but-one" else [[q] for q in sel]
        out[kind]["n"] = len(groups)
        for method in METHODS:
            out[kind][method] = {
                f"top{k}": round(
                    statistics.fmean([statistics.fmean(hit(q, method, k) for q in g) for g in groups]), 4
                )
                if groups
                else None
                for k in KS
            }
    return out


def _by_commit(qs: list[Query]) -> list[list[Query]]:
    groups: dict[tuple[str, int], list[Query]] = defaultdict(list)
    for q in qs:
        groups[(q.repo, q.commit)].append(q)
    return list(groups.values())


# --------------------------------------------------------------------------- fitting


def _logistic(x, y, w, l2: float = 1.0) -> tuple[float, list[float]]:
    """L2 logistic regression by Newton's method on standardized features; weights on the raw scale."""
    from logistic import fit_logistic

    w = w * len(w) / w.sum()
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    coef, bias = fit_logistic((x - mean) / std, y, l2, sample_weight=w)
    weights = coef / std
    return float(bias - (coef * mean / std).sum()), [float(v) for v in weights]


def _listwise(groups, l2: float = 0.01, iters: int = 300, lr: float = 0.05):
    """Softmax over each query's candidates (the positives' share of the mass), fitted with Adam: it
    ranks the candidates of one query against each other, which is what the answer shows."""
    import numpy as np

    allx = np.vstack([x for x, _ in groups])
    mean, std = allx.mean(axis=0), allx.std(axis=0)
    std[std == 0] = 1.0
    xs = [((x - mean) / std, y) for x, y in groups if y.sum()]
    w = np.zeros(allx.shape[1])
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, iters + 1):
        g = l2 * w
        for x, y in xs:
            s = x @ w
            e = np.exp(s - s.max())
            p = e / e.sum()
            post = p * y
            g -= (post / post.sum() - p) @ x / len(xs)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w / std


def fit(qs: list[Query]) -> dict:
    """The co-change model on the tuning half, one for a single query file and one for several. Two ways
    to fit the ranking are tried with 2-fold cross-validation inside the tuning half (folds by a hash of
    the commit): a listwise softmax over each query's candidates, and plain logistic regression; the one
    with the better top-3 is fitted on the whole tuning half, then its score gets one logistic calibration
    so the answer's p is a probability of "in the same change"."""
    import numpy as np

    out = {}
    for kind, label in (("first", "one"), ("all-but-one", "many")):
        sel = [q for q in qs if q.kind == kind and q.half == "tuning" and q.rows]
        groups = [
            (np.array(q.rows, dtype=float), np.array([float(f in q.targets) for f in q.row_files]))
            for q in sel
        ]
        folds = [int(hashlib.sha1(f"{q.repo}:{q.commit}".encode()).hexdigest(), 16) % 2 for q in sel]
        trials = {"listwise": _listwise, "pointwise": _pointwise}
        cv = {name: _cv_top3(sel, groups, folds, fitter) for name, fitter in trials.items()}
        method = max(cv, key=lambda n: cv[n])
        direction = trials[method](groups)
        score = np.concatenate([x @ direction for x, _ in groups])
        y = np.concatenate([y for _, y in groups])
        out[label] = {
            "bias": 0.0,
            "weights": [round(float(d), 6) for d in direction],
            "calibration": _isotonic(score, y),
            "method": method,
            "cv_top3": {n: round(v, 4) for n, v in cv.items()},
            "rows": int(len(y)),
            "positives": int(y.sum()),
            "queries": len(sel),
        }
        print(f"fit {label}: {method} (2-fold top-3 on the tuning half: {out[label]['cv_top3']})")
    return out


def _isotonic(score, y, bins: int = 200) -> dict:
    """Probability as a non-decreasing function of the score (pool adjacent violators over quantile bins
    of the tuning half's scores): a logistic link was overconfident at the top (0.8 said, 0.56 seen)."""
    import numpy as np

    order = np.argsort(score, kind="stable")
    chunks = [c for c in np.array_split(order, min(bins, len(order))) if len(c)]
    blocks = [[float(score[c].mean()), float(y[c].mean()), len(c)] for c in chunks]  # score, p, weight
    merged: list[list[float]] = []
    for b in blocks:
        merged.append(b)
        while len(merged) > 1 and merged[-2][1] > merged[-1][1]:
            s2, p2, n2 = merged.pop()
            s1, p1, n1 = merged.pop()
            n = n1 + n2
            merged.append([(s1 * n1 + s2 * n2) / n, (p1 * n1 + p2 * n2) / n, n])
    return {"scores": [round(b[0], 6) for b in merged], "probs": [round(b[1], 6) for b in merged]}


def _pointwise(groups):
    import numpy as np

    x = np.vstack([x for x, _ in groups])
    y = np.concatenate([y for _, y in groups])
    return np.array(_logistic(x, y, np.ones(len(y)))[1])


def _cv_top3(sel: list[Query], groups, folds: list[int], fitter) -> float:
    """Top-3 hit rate (all-but-one queries averaged per commit first) of `fitter` in 2-fold CV."""
    import numpy as np

    per_commit: dict[tuple[str, int], list[float]] = defaultdict(list)
    for k in (0, 1):
        direction = fitter([g for g, f in zip(groups, folds, strict=True) if f != k])
        for q, (x, y), f in zip(sel, groups, folds, strict=True):
            if f == k:
                top = np.argsort(-(x @ direction), kind="stable")[:3]
                per_commit[(q.repo, q.commit)].append(float(y[top].max()))
    return statistics.fmean(statistics.fmean(v) for v in per_commit.values())


def write_weights(models: dict, repos: list[str]) -> None:
    doc = {
        "features": list(cochange.FEATURES),
        "one": models["one"],
        "many": models["many"],
        "fitted_on": {
            "script": "bench/bench_history.py --fit",
            "half": "tuning (the older half of each repository's evaluation commits, bench/history/split.json)",
            "repositories": {r: REPOS[r][0] for r in repos},
        },
    }
    cochange.WEIGHTS_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    cochange.weights.cache_clear()


# --------------------------------------------------------------------------- the pair cutoff


def cutoff_study(names: list[str], cutoffs: list[int], replays: dict) -> dict:
    """Top-3 (2-fold CV inside the tuning half, the model refitted each time) with each pair cutoff: the
    history is indexed again with RECALL_HISTORY_PAIR_CUTOFF; commit and file ids do not depend on it, so
    the same evaluation commits and import graph serve every cutoff. Tuning half only."""
    import numpy as np

    out: dict = {}
    for cutoff in cutoffs:
        qs: list[Query] = []
        for name in names:
            repo, _, rp, graph = replays[name]
            home = CACHE / "home-cutoff" / f"{name}-{cutoff}"
            if not history.store_path(repo, home).exists():
                index_in_child(repo, home, RECALL_HISTORY_PAIR_CUTOFF=str(cutoff))
            conn = history.connect(history.store_path(repo, home))
            for cid in rp.eval_ids:
                if cid >= rp.split_at:
                    continue
                h = cochange.History(conn, before=cid)
                for kind, given, wanted in cases(rp, cid, graph):
                    if kind == "tests":
                        continue
                    q = Query(name, cid, "tuning", kind, {f for f, _ in wanted}, {p for _, p in wanted})
                    found = cochange.candidates(h, [f for f, _ in given], graph)
                    q.row_files = list(found)
                    q.rows = [found[f][0] for f in q.row_files]
                    qs.append(q)
            conn.close()
        res = {}
        for kind, fitter in (("first", _listwise), ("all-but-one", _pointwise)):
            sel = [q for q in qs if q.kind == kind and q.rows]
            groups = [
                (np.array(q.rows, dtype=float), np.array([float(f in q.targets) for f in q.row_files]))
                for q in sel
            ]
            folds = [int(hashlib.sha1(f"{q.repo}:{q.commit}".encode()).hexdigest(), 16) % 2 for q in sel]
            res[kind] = round(_cv_top3(sel, groups, folds, fitter), 4)
        out[str(cutoff)] = res
        print(f"pair cutoff {cutoff}: 2-fold top-3 on the tuning half {res}")
    return out


# --------------------------------------------------------------------------- hotspots

HOT_WINDOW = 90 * 86400


@dataclass
class HotPoint:
    repo: str
    half: str
    paths: list[str]
    rows: list[list[float]]
    labels: list[int]  # a fix commit touched it in the next 90 days
    churn_90d: list[int]


def hot_points(rp: Replay) -> list[HotPoint]:
    """Every file that exists at T, its features as of T and whether a fix touched it within 90 days.
    Held out: T = the last commit's time - 90 days; tuning: four earlier T, 90 days apart (their label
    windows end before the held-out T)."""
    last = rp.commits[-1][1]
    held = last - HOT_WINDOW
    out = []
    for half, t in [("held-out", held)] + [("tuning", held - k * HOT_WINDOW) for k in (1, 2, 3, 4)]:
        before = next((cid for cid, ct, _ in rp.commits if ct > t), None)
        if before is None:
            continue
        h = cochange.History(rp.conn, before=before)
        lines = dict(rp.conn.execute("SELECT id, line FROM files"))
        about = h.about([f for f, line in lines.items() if line == rp.line])
        files = {
            f: p
            for f, p in h.paths([f for f, a in about.items() if a[3]]).items()
            if f in about and about[f][3]
        }
        stats = churn.file_stats(h, files)
        fixed = {
            r[0]
            for r in rp.conn.execute(
                "SELECT DISTINCT c.file FROM changes c JOIN commits k ON k.id = c.commit_id"
                " WHERE k.fix > 0 AND c.bulk = 0 AND k.time > ? AND k.time <= ?",
                (t, t + HOT_WINDOW),
            )
        }
        out.append(
            HotPoint(
                rp.name,
                half,
                [s.path for s in stats],
                [s.features(h.now) for s in stats],
                [int(s.file in fixed) for s in stats],
                [s.changes_90d for s in stats],
            )
        )
    return out


def fit_hotspots(points: list[HotPoint]) -> dict:
    import numpy as np

    x = np.array([r for p in points if p.half == "tuning" for r in p.rows], dtype=float)
    y = np.array([v for p in points if p.half == "tuning" for v in p.labels], dtype=float)
    bias, weights = _logistic(x, y, np.ones(len(y)), l2=1.0)
    return {
        "features": list(churn.HOT_FEATURES),
        "model": {
            "bias": round(bias, 6),
            "weights": [round(w, 6) for w in weights],
            "rows": int(len(y)),
            "positives": int(y.sum()),
        },
        "fitted_on": {
            "script": "bench/bench_history.py --fit",
            "half": "tuning (four 90-day windows before the held-out one, per repository)",
        },
    }


def hot_summary(points: list[HotPoint], model: dict) -> dict:
    """Precision of the first 10 files, and of the flag, for recall's model, plain 90-day churn and
    repowise's rule (top 25 % of files by 90-day commits, at least one)."""
    out: dict = {}
    for half in ("tuning", "held-out"):
        sel = [p for p in points if p.half == half]
        if not sel:
            continue
        res: dict = {
            "points": len(sel),
            "files": sum(len(p.labels) for p in sel),
            "base_rate": round(statistics.fmean(v for p in sel for v in p.labels), 4),
        }
        p10 = {"recall": [], "churn": []}
        flag = {"recall": [0, 0], "repowise": [0, 0]}  # flagged, of them fixed
        for p in sel:
            probs = [cochange.probability(r, model) for r in p.rows]
            for name, key in (("recall", probs), ("churn", p.churn_90d)):
                order = sorted(range(len(p.labels)), key=lambda i: (-key[i], p.paths[i]))[:10]
                p10[name].append(statistics.fmean(p.labels[i] for i in order) if order else 0.0)
            for i, pr in enumerate(probs):
                if pr >= churn.HOT_P:
                    flag["recall"][0] += 1
                    flag["recall"][1] += p.labels[i]
            ranked = sorted(range(len(p.labels)), key=lambda i: p.churn_90d[i])
            for rank, i in enumerate(ranked):
                if rank / len(ranked) >= 0.75 and p.churn_90d[i] > 0:
                    flag["repowise"][0] += 1
                    flag["repowise"][1] += p.labels[i]
        for name, vals in p10.items():
            res[f"precision_at_10_{name}"] = round(statistics.fmean(vals), 4)
        for name, (n, ok) in flag.items():
            res[f"flagged_{name}"] = n
            res[f"flag_precision_{name}"] = round(ok / n, 4) if n else None
        out[half] = res
    return out


# --------------------------------------------------------------------------- latency


def latency(repo: Path, home: Path, rp: Replay, runs: int = 20) -> dict:
    """Answers through `recall_agent.architecture.query()` on the checked-out clone (warm index)."""
    from recall_agent.architecture import query

    os.environ["RECALL_HOME"] = str(home)
    busiest = rp.conn.execute(
        "SELECT p.path FROM files f JOIN paths p ON p.id = f.path JOIN changes c ON c.file = f.id"
        " WHERE f.alive AND f.line = ? GROUP BY f.id ORDER BY count(*) DESC LIMIT ?",
        (rp.line, runs),
    ).fetchall()
    paths = [r[0] for r in busiest if (repo / r[0]).is_file()]
    query("hotspots", str(repo))  # warm: code index and history are current
    out: dict[str, list[float]] = defaultdict(list)
    questions = [("cochange", f"what changes with {p}") for p in paths]
    questions += [("owners", f"who knows {p}") for p in paths[:5]]
    questions += [("blast", f"blast radius of {p}") for p in paths[:5]]
    questions += [("hotspots", "hotspots")] * 3
    for kind, text in questions:
        started = time.perf_counter()
        answers = query(text, str(repo), limit=3)
        out[kind].append(time.perf_counter() - started)
        assert answers, text
    with _working_change(repo, paths[:2]):
        for _ in range(3):
            started = time.perf_counter()
            query("what's risky in my change", str(repo), limit=3)
            out["risk"].append(time.perf_counter() - started)
    return {
        k: {"p50_ms": round(1000 * statistics.median(v), 1), "max_ms": round(1000 * max(v), 1), "n": len(v)}
        for k, v in out.items()
    }


class _working_change:
    """Uncommitted edits to a few files for the duration of a block (restored after)."""

    def __init__(self, repo: Path, paths: list[str]) -> None:
        self.repo, self.paths, self.saved = repo, paths, {}

    def __enter__(self):
        for p in self.paths:
            f = self.repo / p
            self.saved[p] = f.read_bytes()
            f.write_bytes(self.saved[p] + b"\n")
        return self

    def __exit__(self, *exc):
        for p, data in self.saved.items():
            (self.repo / p).write_bytes(data)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="*", help=f"some of {', '.join(REPOS)} (default: all)")
    parser.add_argument("--fit", action="store_true", help="fit the model on the tuning halves first")
    parser.add_argument("--no-timing", action="store_true", help="skip index timing, update and latency")
    parser.add_argument(
        "--cutoffs", help="comma-separated pair cutoffs to compare on the tuning half (e.g. 20,30,50,100,200)"
    )
    parser.add_argument(
        "--cached",
        action="store_true",
        help="reuse the last replay's candidates (bench/.cache/history/replay-*.pkl)",
    )
    args = parser.parse_args(argv)
    names = args.repos or list(REPOS)
    split = _split()
    report: dict = {"load_before": _load(), "repos": {}}
    all_queries: list[Query] = []
    hot: list[HotPoint] = []
    replays = {}
    for name in names:
        repo = clone(name)
        entry = split.setdefault(name, {})
        entry.setdefault("head", _git(repo, "rev-parse", "HEAD").strip())
        home = CACHE / "home" / name
        info: dict = {"repository": REPOS[name][0], "language": REPOS[name][1], "head": entry["head"]}
        if not args.no_timing:  # from scratch, timed; else only brought up to date (a schema change rebuilds)
            shutil.rmtree(home, ignore_errors=True)
        info["index"] = index_in_child(repo, home)
        if info["index"]["added"]:
            print(
                f"{name}: history of {info['index']['commits']} commits in {info['index']['seconds']:.1f} s"
            )
        if not args.no_timing:
            info["update"] = update_after_new_commits(name, repo)
        rp = load(name, repo, home)
        choose_eval(rp, entry)
        graph, info["graph"] = split_graph(name, rp, repo)
        started = time.perf_counter()
        qs = _replayed(name, rp, graph, args.cached)
        info["replay_seconds"] = round(time.perf_counter() - started, 1)
        info["eval_commits"] = {
            "tuning": sum(c < rp.split_at for c in rp.eval_ids),
            "held-out": sum(c >= rp.split_at for c in rp.eval_ids),
        }
        print(f"{name}: {len(qs)} queries replayed in {info['replay_seconds']} s")
        all_queries += qs
        hot += hot_points(rp)
        replays[name] = (repo, home, rp, graph)
        report["repos"][name] = info
    SPLIT.parent.mkdir(parents=True, exist_ok=True)
    SPLIT.write_text(json.dumps(split, indent=1) + "\n")
    if args.cutoffs:
        report["pair_cutoff"] = cutoff_study(names, [int(c) for c in args.cutoffs.split(",")], replays)
        (RESULTS.parent / "history_cutoff.json").write_text(
            json.dumps(report["pair_cutoff"], indent=1) + "\n"
        )
        return 0
    if args.fit:
        write_weights(fit(all_queries), names)
        churn.WEIGHTS_FILE.write_text(json.dumps(fit_hotspots(hot), indent=1) + "\n")
        churn.weights.cache_clear()
    score_recall(all_queries, cochange.weights())
    report["hotspots"] = {
        name: hot_summary([p for p in hot if p.repo == name], churn.weights()["model"]) for name in names
    }
    report["hotspots"]["all"] = hot_summary(hot, churn.weights()["model"])
    for name in names:
        mine = [q for q in all_queries if q.repo == name]
        info = report["repos"][name]
        for half in ("tuning", "held-out"):
            info[half] = summarize([q for q in mine if q.half == half])
        secs = sorted(q.seconds for q in mine)
        info["candidates_ms"] = {
            "p50": round(1000 * statistics.median(secs), 1),
            "p95": round(1000 * secs[int(0.95 * (len(secs) - 1))], 1),
            "p99": round(1000 * secs[int(0.99 * (len(secs) - 1))], 1),
            "max": round(1000 * secs[-1], 1),
        }
        if not args.no_timing:
            repo, home, rp, _ = replays[name]
            info["latency"] = latency(repo, home, rp)
    for half in ("tuning", "held-out"):
        report[half] = summarize([q for q in all_queries if q.half == half])
    report["load_after"] = _load()
    print_table(report, names)
    print_hot(report["hotspots"])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    return 0


def print_hot(hot: dict) -> None:
    print(
        "\nhotspots: a fix within 90 days — precision of the first 10 (recall | 90-day churn), flagged (recall p≥0.5 | repowise top 25%)"
    )
    for name, halves in hot.items():
        for half, r in halves.items():
            print(
                f"{name:8} {half:9} files {r['files']:>6} base {r['base_rate']:.2f}  p@10 {r['precision_at_10_recall']:.2f} | "
                f"{r['precision_at_10_churn']:.2f}  flagged {r['flagged_recall']} ({r['flag_precision_recall']}) | "
                f"{r['flagged_repowise']} ({r['flag_precision_repowise']})"
            )


def _load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def print_table(report: dict, names: list[str]) -> None:
    for kind in ("first", "all-but-one", "tests"):
        print(f"\n{kind}: top-1 / top-3 / top-10 hit rate (tuning | held-out)")
        print(f"{'repo':10} {'n':>9} " + " ".join(f"{m:>26}" for m in METHODS))
        rows = [(n, report["repos"][n]) for n in names] + [("all", report)]
        for name, info in rows:
            cells = []
            for m in METHODS:
                parts = []
                for half in ("tuning", "held-out"):
                    r = info[half][kind][m]
                    parts.append(
                        "/".join("-" if r[f"top{k}"] is None else f"{100 * r[f'top{k}']:.0f}" for k in KS)
                    )
                cells.append(" | ".join(parts))
            n = f"{info['tuning'][kind]['n']}|{info['held-out'][kind]['n']}"
            print(f"{name:10} {n:>9} " + " ".join(f"{c:>26}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
