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
    sql = (
        "SELECT file, count(*), sum(time >= ?), sum(time >= ?), sum(fix > 0), sum(fix > 0 AND time >= ?),"
        " count(DISTINCT author), min(time), max(time) FROM changes WHERE bulk = 0 AND commit_id < ?"
    )
    args = (d90, d365, d365, h.before)
    if len(files) > 500:  # most of the repository: one pass over every change beats 500-file lookups
        rows = h.conn.execute(sql + " GROUP BY file", args).fetchall()
        return [FileStats(r[0], files[r[0]], *r[1:]) for r in rows if r[0] in files]
    marks = ",".join("?" * len(files))
    rows = h.conn.execute(sql + f" AND file IN ({marks}) GROUP BY file", (*args, *files)).fetchall()
    return [FileStats(r[0], files[r[0]], *r[1:]) for r in rows]


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


def owners(h: History, files: list[int] | None) -> tuple[list[Owner], int]:
    """Authors of the files' non-bulk commits (None: the whole repository's), most commits first, and how
    many commits there were."""
    if files is not None and not files:
        return [], 0
    where = "bulk = 0 AND commit_id < ?"
    args: tuple = (h.before,)
    if files is None:
        pass
    elif len(files) <= 500:
        where += f" AND file IN ({','.join('?' * len(files))})"
        args += tuple(files)
    else:  # a large folder: its ids as one JSON parameter (SQLite caps bound parameters)
        chosen = set(files)
        where += " AND file IN (SELECT value FROM json_each(?))"
        args += (json.dumps(sorted(chosen)),)
    rows = h.conn.execute(
        "SELECT a.name, count(DISTINCT c.commit_id), max(c.time), count(DISTINCT CASE WHEN c.time >= ? THEN"
        f" c.commit_id END) FROM changes c JOIN authors a ON a.id = c.author WHERE {where}"
        " GROUP BY c.author ORDER BY 2 DESC, 3 DESC",
        (h.now - 365 * DAY, *args),
    ).fetchall()
    total = h.conn.execute(f"SELECT count(DISTINCT commit_id) FROM changes WHERE {where}", args).fetchone()[0]
    return [Owner(*r) for r in rows], total


def bus_factor(found: list[Owner], total: int) -> int:
    """The fewest authors whose commits cover BUS_SHARE of the changes."""
    covered = 0
    for i, owner in enumerate(found, 1):
        covered += owner.changes
        if covered >= BUS_SHARE * total:
            return i
    return len(found)
