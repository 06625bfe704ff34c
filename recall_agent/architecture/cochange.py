"""Which files change with a file (or a set of files), from the history store: a fitted ranking model.

For each query file, its last `QUERY_COMMITS` non-bulk commits give the candidates (every file they also
touched) and, with the import graph's direct neighbours and the tests reaching it, one row of features per
candidate: how often they changed together, how recently (in days and in the query file's own commits),
in how small commits, whether an import joins them, how busy the candidate is on its own. A logistic
model turns the row into the probability that the candidate belongs to the same change; its weights are
data (`cochange_weights.json`), fitted by `bench/bench_history.py --fit` on the tuning half of the history
benchmark. Nothing here imports numpy: scoring is a dot product.
"""

from __future__ import annotations

import bisect
import json
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Protocol

DAY = 86_400
QUERY_COMMITS = 1_000  # newest commits of a query file read per question (bounds the latency)
WEIGHTS_FILE = Path(__file__).with_name("cochange_weights.json")

FEATURES = (
    "log_support",  # log(1 + commits shared)
    "confidence",  # shared / the query file's commits
    "reverse_confidence",  # shared / the candidate's commits
    "recent_30d",  # log(1 + Σ exp(-age / 30 days)) over shared commits
    "recent_1y",  # the same with a year
    "small_commits",  # log(1 + Σ 1 / (files in the commit - 1))
    "recent_rank",  # Σ 1 / k over shared commits, k = 1 for the query file's newest commit
    "last_rank",  # 1 / k of the newest shared commit
    "imports",  # an import edge joins them (either way)
    "test_reach",  # the candidate is a test that reaches the query file through imports
    "same_folder",
    "log_commits",  # log(1 + the candidate's own commits)
    "is_test",
    "name_match",  # words their file names share (Jaccard): test_foo.py, foo_test.go, t7810-grep.sh ~ grep.c
    "partner_recent",  # exp(-days since the candidate last changed / 30)
    "partner_90d",  # log(1 + the candidate's commits in the last 90 days)
    "partner_gap",  # log(1 + commits in the repository since the candidate last changed)
    "coverage",  # share of the query files it changed with (1 or 0 for a single file)
    "overlap",  # the most query files one of its commits held, as a share (TARMAQ's largest rule)
    "log_support_any",  # log(1 + its commits with any query file)
)


class Graph(Protocol):
    """The import graph in terms of history files (lineages)."""

    def neighbors(self, file: int) -> set[int]: ...

    def tests_reaching(self, file: int) -> set[int]: ...


@dataclass
class Partner:
    file: int
    path: str
    score: float  # the model's probability that it belongs to the same change
    support: int  # commits shared with the query file(s)
    confidence: float  # support / commits of the query file (the best query file)
    last: int  # time of the newest shared commit (0: none)
    imports: bool  # an import edge joins it to a query file
    is_test: bool = False
    features: list[float] = field(default_factory=list)


@dataclass
class _Evidence:
    support: int = 0
    recent_30d: float = 0.0
    recent_1y: float = 0.0
    small: float = 0.0
    recent_rank: float = 0.0
    last_rank: float = 0.0
    last: int = 0
    commits: list[int] = field(default_factory=list)


@cache
def weights() -> dict:
    return json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))


def linear(row: list[float], model: dict) -> float:
    """The model's score of one feature row (what candidates are ranked by)."""
    return model["bias"] + sum(w * x for w, x in zip(model["weights"], row, strict=True))


def probability(row: list[float], model: dict, z: float | None = None) -> float:
    """The model's probability for one feature row: its linear score through the fitted calibration
    (`calibration`: score knots and probabilities, isotonic, interpolated), else a logistic link."""
    z = linear(row, model) if z is None else z
    knots = model.get("calibration")
    if not knots:
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
    scores, probs = knots["scores"], knots["probs"]
    i = bisect.bisect_left(scores, z)
    if i == 0:
        return probs[0]
    if i == len(scores):
        return probs[-1]
    lo, hi = scores[i - 1], scores[i]
    if hi <= lo:
        return probs[i]
    return probs[i - 1] + (probs[i] - probs[i - 1]) * (z - lo) / (hi - lo)


# --------------------------------------------------------------------------- reading the store


class History:
    """Read access to one history store, optionally as it was before a commit (`before`: a commit id)."""

    def __init__(self, conn: sqlite3.Connection, before: int | None = None) -> None:
        self.conn = conn
        self.before = (
            before
            if before is not None
            else (conn.execute("SELECT max(id) FROM commits").fetchone()[0] or 0) + 1
        )
        row = conn.execute("SELECT max(time) FROM commits WHERE id < ?", (self.before,)).fetchone()
        self.now = row[0] or 0
        self._paths: dict[int, str] = {}
        self._about: dict[int, tuple[int, int, int, bool, int]] = {}

    def path(self, file: int) -> str:
        if file not in self._paths:
            row = self.conn.execute(
                "SELECT p.path FROM files f JOIN paths p ON p.id = f.path WHERE f.id = ?", (file,)
            ).fetchone()
            self._paths[file] = row[0] if row else ""
        return self._paths[file]

    def commits_of(self, file: int) -> list[tuple[int, int, int]]:
        """(commit id, time, files in it) of the file's non-bulk commits, newest first, capped."""
        return self.conn.execute(
            "SELECT c.commit_id, k.time, k.files FROM changes c JOIN commits k ON k.id = c.commit_id"
            " WHERE c.file = ? AND c.bulk = 0 AND c.commit_id < ? ORDER BY c.commit_id DESC LIMIT ?",
            (file, self.before, QUERY_COMMITS),
        ).fetchall()

    def files_in(self, commit_ids: list[int]) -> Iterable[tuple[int, int]]:
        for i in range(0, len(commit_ids), 500):
            chunk = commit_ids[i : i + 500]
            yield from self.conn.execute(
                f"SELECT commit_id, file FROM changes WHERE commit_id IN ({','.join('?' * len(chunk))})",
                chunk,
            )

    def about(self, files: Iterable[int]) -> dict[int, tuple[int, int, int, bool, int]]:
        """Per file as of `before`: (non-bulk commits, of them in the last 90 days, time of its newest
        commit, whether it still exists, its newest commit's id). Files with no commit before `before` are left out."""
        files = [f for f in files if f not in self._about]
        since = self._since(90)
        for i in range(0, len(files), 500):
            chunk = files[i : i + 500]
            rows = self.conn.execute(
                "SELECT c.file, sum(c.bulk = 0), sum(c.bulk = 0 AND c.commit_id >= ?), max(c.commit_id), c.status"
                f" FROM changes c WHERE c.file IN ({','.join('?' * len(chunk))}) AND c.commit_id < ?"
                " GROUP BY c.file",
                (since, *chunk, self.before),
            ).fetchall()
            newest = {r[3] for r in rows}
            times = dict(self._times(newest))
            for file, n, recent, last, status in rows:  # status: of the newest change (SQLite's max() rule)
                self._about[file] = (n or 0, recent or 0, times.get(last, 0), status != "D", last)
        return self._about

    def _times(self, ids: set[int]) -> Iterable[tuple[int, int]]:
        ids_list = list(ids)
        for i in range(0, len(ids_list), 500):
            chunk = ids_list[i : i + 500]
            yield from self.conn.execute(
                f"SELECT id, time FROM commits WHERE id IN ({','.join('?' * len(chunk))})", chunk
            )

    def _since(self, days: int) -> int:
        """The first commit id at or after `days` before now (ids follow commit order)."""
        row = self.conn.execute(
            "SELECT id FROM commits WHERE time >= ? ORDER BY time LIMIT 1", (self.now - days * DAY,)
        ).fetchone()
        return row[0] if row else self.before

    def paths(self, files: Iterable[int]) -> dict[int, str]:
        missing = [f for f in files if f not in self._paths]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            for fid, path in self.conn.execute(
                "SELECT f.id, p.path FROM files f JOIN paths p ON p.id = f.path"
                f" WHERE f.id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                self._paths[fid] = path
        return self._paths


def is_test_path(path: str) -> bool:
    from recall_agent.architecture.indexer import is_test_path as indexed_test

    return indexed_test(path)


_NOT_NAME_WORDS = frozenset({"test", "tests", "spec", "specs", "t", "index", "init", "main", "mod", "lib"})


@cache
def _name_words(path: str) -> frozenset[str]:
    """The words of a file's name without its suffix, test markers and numbers (`t7810-grep.sh` → grep)."""
    from recall_agent.architecture.words import text_words

    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return frozenset(
        w for w in text_words(stem) if w not in _NOT_NAME_WORDS and not w.lstrip("t").isdigit() and len(w) > 1
    )


def _name_match(a: str, b: str) -> float:
    wa, wb = _name_words(a), _name_words(b)
    return len(wa & wb) / len(wa | wb) if wa and wb and a != b else 0.0


# --------------------------------------------------------------------------- features


def _evidence(h: History, file: int) -> tuple[int, dict[int, _Evidence]]:
    """The query file's commit count and, per file it changed with, the evidence of their shared commits."""
    commits = h.commits_of(file)
    info = {cid: (rank, t, size) for rank, (cid, t, size) in enumerate(commits, 1)}
    found: dict[int, _Evidence] = {}
    for cid, other in h.files_in(list(info)):
        if other == file:
            continue
        rank, t, size = info[cid]
        ev = found.setdefault(other, _Evidence())
        age = max(0, h.now - t) / DAY
        ev.support += 1
        ev.recent_30d += math.exp(-age / 30)
        ev.recent_1y += math.exp(-age / 365)
        ev.small += 1.0 / max(1, size - 1)
        ev.recent_rank += 1.0 / rank
        ev.last_rank = max(ev.last_rank, 1.0 / rank)
        ev.last = max(ev.last, t)
        ev.commits.append(cid)
    return len(commits), found


def candidates(
    h: History, query: list[int], graph: Graph | None = None
) -> dict[int, tuple[list[float], Partner]]:
    """Every candidate partner of the query files with its feature row (FEATURES order)."""
    per_query = [(q, *_evidence(h, q)) for q in query]
    neighbors = {q: graph.neighbors(q) if graph else set() for q in query}
    reaching = {q: graph.tests_reaching(q) if graph else set() for q in query}
    pool: set[int] = set()
    for q, _, found in per_query:
        pool |= set(found) | neighbors[q] | reaching[q]
    pool -= set(query)
    about = h.about(pool)
    paths = h.paths([*pool, *query])
    held: dict[int, int] = {}  # commit id -> how many query files it touched
    for _, _, found in per_query:
        for cid in {c for ev in found.values() for c in ev.commits}:
            held[cid] = held.get(cid, 0) + 1
    query_paths = [paths.get(q, "") for q in query]
    out: dict[int, tuple[list[float], Partner]] = {}
    for c in pool:
        facts = about.get(c)
        path = paths.get(c, "")
        if facts is None or not facts[3] or not path:
            continue  # never committed before, deleted, or unknown
        out[c] = _row(h, c, path, facts, per_query, neighbors, reaching, query_paths, held)
    return out


def _row(h, c, path, facts, per_query, neighbors, reaching, query_paths, held) -> tuple[list[float], Partner]:
    n_c, recent_c, last_c, _, last_id = facts
    test = is_test_path(path)
    folder = path.rpartition("/")[0]
    own = [
        math.log1p(n_c),
        float(test),
        0.0,
        math.exp(-max(0, h.now - last_c) / DAY / 30),
        math.log1p(recent_c),
        math.log1p(max(0, h.before - last_id - 1)),
    ]
    best = [0.0] * 11 + own + [0.0, 0.0, 0.0]
    shared: set[int] = set()
    covered = support = last = 0
    confidence = 0.0
    imports = False
    for (q, n_q, found), q_path in zip(per_query, query_paths, strict=True):
        ev = found.get(c)
        joined = c in neighbors[q]
        reached = c in reaching[q]
        same = q_path.rpartition("/")[0] == folder
        named = _name_match(q_path, path)
        imports |= joined
        best[8] = max(best[8], float(joined))
        best[9] = max(best[9], float(reached))
        best[10] = max(best[10], float(same))
        best[13] = max(best[13], float(named))
        if ev is None:
            continue
        covered += 1
        shared.update(ev.commits)
        support = max(support, ev.support)
        conf = ev.support / n_q if n_q else 0.0
        confidence = max(confidence, conf)
        last = max(last, ev.last)
        for i, v in enumerate(
            (
                math.log1p(ev.support),
                conf,
                ev.support / n_c if n_c else 0.0,
                math.log1p(ev.recent_30d),
                math.log1p(ev.recent_1y),
                math.log1p(ev.small),
                ev.recent_rank,
                ev.last_rank,
            )
        ):
            if v > best[i]:
                best[i] = v
    best[-3] = covered / len(per_query)
    best[-2] = max((held[cid] for cid in shared), default=0) / len(per_query)
    best[-1] = math.log1p(len(shared))
    return best, Partner(c, path, 0.0, support, confidence, last, imports, test, best)


def rank(
    found: dict[int, tuple[list[float], Partner]], multi: bool, model: dict | None = None
) -> list[Partner]:
    """Candidates scored by the fitted model, best first."""
    model = model or weights()["many" if multi else "one"]
    scored = []
    for row, partner in found.values():
        z = linear(row, model)
        partner.score = probability(row, model, z)
        scored.append((z, partner))
    scored.sort(key=lambda zp: (-zp[0], -zp[1].support, zp[1].path))
    return [p for _, p in scored]


def partners(
    h: History, query: list[int], graph: Graph | None = None, limit: int | None = 10
) -> list[Partner]:
    """The files most likely to change with the query files, best first."""
    ranked = rank(candidates(h, query, graph), multi=len(query) > 1)
    return ranked[:limit] if limit else ranked
