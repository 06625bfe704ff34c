"""Per-file history facts from the history store: churn, fixes, authors; hotspots and ownership.

A hotspot is a file likely to need a fix soon: a logistic model of "a fix commit touches it in the next
90 days" over its recent and total changes, its fixes and its authors (weights in `hotspot_weights.json`,
fitted by `bench/bench_history.py --fit` on the tuning half). It is flagged when that probability is at
least `HOT_P`, so a quiet repository of a small team has few hotspots or none, whatever its shape.
Bulk commits (see history.py) count for nothing here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from recall_agent.architecture.cochange import DAY, History, probability

WEIGHTS_FILE = Path(__file__).with_name("hotspot_weights.json")
HOT_P = 0.5  # flagged as a hotspot from this probability of a fix within 90 days
BUS_SHARE = 0.8  # the bus factor: fewest authors covering this share of the changes

HOT_FEATURES = (
    "log_changes_90d",
    "log_changes_1y",
    "log_changes",
    "fix_share",  # (fixes + 1) / (changes + 2): a file with one commit, a fix, is not 100 % fixes
    "log_fixes_1y",
    "log_authors",
    "log_age_days",
)


@cache
def weights() -> dict:
    return json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))


@dataclass
class FileStats:
    file: int
    path: str
    changes: int
    changes_90d: int
    changes_1y: int
    fixes: int
    fixes_1y: int
    authors: int
    first: int
    last: int
    p_fix: float = 0.0

    @property
    def fix_share(self) -> float:
        return self.fixes / self.changes if self.changes else 0.0

    def features(self, now: int) -> list[float]:
        return [
            math.log1p(self.changes_90d),
            math.log1p(self.changes_1y),
            math.log1p(self.changes),
            (self.fixes + 1) / (self.changes + 2),
            math.log1p(self.fixes_1y),
            math.log1p(self.authors),
            math.log1p(max(0, now - self.first) / DAY),
        ]


def current_files(h: History, line: int, prefix: str = "") -> dict[int, str]:
    """Files that exist at the indexed HEAD (on its history line), optionally under a folder."""
    prefix = prefix.strip("/")
    sql = "SELECT f.id, p.path FROM files f JOIN paths p ON p.id = f.path WHERE f.alive AND f.line = ?"
    args: list = [line]
    if prefix:
        sql += " AND (p.path = ? OR substr(p.path, 1, ?) = ?)"
        args += [prefix, len(prefix) + 1, prefix + "/"]
    return dict(h.conn.execute(sql, args))


def file_stats(h: History, files: dict[int, str]) -> list[FileStats]:
    """Churn, fixes and authors of each file as of `h.before`, non-bulk commits only."""
    if not files:
        return []
    d90, d365 = h.now - 90 * DAY, h.now - 365 * DAY
    ids = list(files)
    out = []
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        rows = h.conn.execute(
            "SELECT c.file, count(*), sum(k.time >= ?), sum(k.time >= ?), sum(k.fix > 0),"
            " sum(k.fix > 0 AND k.time >= ?), count(DISTINCT k.author), min(k.time), max(k.time)"
            " FROM changes c JOIN commits k ON k.id = c.commit_id"
            f" WHERE c.file IN ({','.join('?' * len(chunk))}) AND c.bulk = 0 AND c.commit_id < ? GROUP BY c.file",
            (d90, d365, d365, *chunk, h.before),
        ).fetchall()
        out += [FileStats(r[0], files[r[0]], *r[1:]) for r in rows]
    return out


def score(stats: list[FileStats], now: int) -> list[FileStats]:
    model = weights()["model"]
    for s in stats:
        s.p_fix = probability(s.features(now), model)
    return sorted(stats, key=lambda s: (-s.p_fix, -s.changes_90d, s.path))


def hotspots(h: History, line: int, prefix: str = "") -> list[FileStats]:
    """The files under `prefix` ranked by their probability of a fix within 90 days."""
    return score(file_stats(h, current_files(h, line, prefix)), h.now)


@dataclass
class Owner:
    name: str
    changes: int
    last: int
    changes_1y: int


def owners(h: History, files: list[int]) -> tuple[list[Owner], int]:
    """Authors of the files' non-bulk commits, most commits first, and how many commits there were."""
    if not files:
        return [], 0
    marks = ",".join("?" * len(files))
    rows = h.conn.execute(
        "SELECT a.name, count(DISTINCT k.id), max(k.time), count(DISTINCT CASE WHEN k.time >= ? THEN k.id END)"
        " FROM changes c JOIN commits k ON k.id = c.commit_id JOIN authors a ON a.id = k.author"
        f" WHERE c.file IN ({marks}) AND c.bulk = 0 AND c.commit_id < ? GROUP BY a.id ORDER BY 2 DESC, 3 DESC",
        (h.now - 365 * DAY, *files, h.before),
    ).fetchall()
    total = h.conn.execute(
        f"SELECT count(DISTINCT commit_id) FROM changes WHERE file IN ({marks}) AND bulk = 0 AND commit_id < ?",
        (*files, h.before),
    ).fetchone()[0]
    return [Owner(*r) for r in rows], total


def bus_factor(found: list[Owner], total: int) -> int:
    """The fewest authors whose commits cover BUS_SHARE of the changes."""
    covered = 0
    for i, owner in enumerate(found, 1):
        covered += owner.changes
        if covered >= BUS_SHARE * total:
            return i
    return len(found)
