"""What a team does to its learnings, written once for both stores: count outcomes (the lifecycle), list and
filter them for review, sum them up, edit a resolution, forget, merge duplicates, and record every change a
person made (who, when, before/after) in `learning_events`.

`StoreCore` (core.py) inherits this; an adapter supplies its dialect through the small hooks below
(placeholders, timestamps, JSON values, deleting a learning inside a transaction). Every SQL text here runs
unchanged on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from recall_agent import selfcheck
from recall_agent.learnings import lifecycle
from recall_agent.learnings.records import parse_id, quarantine_reasons, resolution_key, signature_rows
from recall_agent.learnings.types import StoredLearning

if TYPE_CHECKING:
    from recall_agent.learnings.types import Candidate

SORTS = {
    "newest": "created_at DESC, id DESC",
    "oldest": "created_at, id",
    "most-used": "(shown_count + access_count) DESC, created_at DESC, id DESC",
    "most-hurt": "hurt_count DESC, created_at DESC, id DESC",
}
STATUSES = ("active", "never-used", "hurting", "dormant", "helped", "quarantined", "unverified", "pending")
PAGE_MAX = 200
SEARCH_COUNT_MAX = 10_000  # a text search counts its matches up to this many
# "hurting" and "dormant" as SQL over a learnings row (the rules of lifecycle.py)
HURTING_SQL = (
    f"(hurt_count >= {lifecycle.HURT_MIN} AND 3 * (helped_count + 1) < helped_count + hurt_count + 2)"
)
NEVER_USED_SQL = "(shown_count = 0 AND access_count = 0)"
# the trust tiers of safety/trust.py as SQL (a stored quarantine is a JSON list; '[]' when clean)
QUARANTINED_SQL = "(review <> 'approved' AND quarantine IS NOT NULL AND CAST(quarantine AS TEXT) <> '[]')"
PENDING_SQL = "(review = 'pending')"
UNVERIFIED_SQL = "(review <> 'approved' AND provenance = 'agent' AND helped_count = 0)"


def _dormant_sql() -> str:
    return f"(NOT {HURTING_SQL} AND created_at < ? AND (last_useful_at IS NULL OR last_useful_at < ?))"


@dataclass
class ReviewFilter:
    """Which learnings a review lists. `repos`: the repositories the asker may see (None: all)."""

    text: str = ""
    repo: str | None = None
    repos: frozenset[str] | None = None
    task_type: str | None = None
    older_than_days: float | None = None
    newer_than_days: float | None = None
    status: str | None = None  # one of STATUSES
    sort: str = "newest"

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise ValueError(f"status: one of {', '.join(STATUSES)}, not {self.status!r}")
        if self.sort not in SORTS:
            raise ValueError(f"sort: one of {', '.join(SORTS)}, not {self.sort!r}")


@dataclass
class Stats:
    total: int = 0
    active: int = 0
    dormant: int = 0
    hurting: int = 0
    never_used: int = 0
    shown: int = 0
    helped: int = 0
    hurt: int = 0
    recalled: int = 0  # /recall answers that listed one (access_count)
    repos: list[dict[str, Any]] = field(default_factory=list)  # per repository, most learnings first
    top: list[dict[str, Any]] = field(default_factory=list)  # the most used learnings

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Curation:
    """Mixin of StoreCore: the curation API over the adapter's connections and dialect hooks."""

    # ------------------------------------------------------------------ dialect (adapters override)

    def _q(self, sql: str) -> str:
        """`sql` with the adapter's placeholders (written here with `?`)."""
        return sql

    def _ts(self, value: datetime | None) -> Any:
        return value

    def _dt(self, value: Any) -> datetime | None:
        return value

    def _jparam(self, value: Any) -> Any:
        return value

    def _jread(self, value: Any) -> Any:
        return value

    def _delete_in(self, conn: Any, lid: Any) -> bool:
        raise NotImplementedError

    # case-insensitive LIKE: SQLite's LIKE already is (for ASCII), PostgreSQL's is ILIKE
    _ilike = "LIKE"

    # ------------------------------------------------------------------ lifecycle counts

    def record_outcome(self, ids: Sequence[UUID | str], outcome: str, now: datetime | None = None) -> int:
        """Count an outcome (lifecycle.OUTCOMES) for each learning; helped/hurt also move confidence ±0.1.
        Returns how many learnings were found."""
        if outcome not in lifecycle.OUTCOMES:
            raise ValueError(f"outcome: one of {', '.join(lifecycle.OUTCOMES)}, not {outcome!r}")
        keys = [self._key(parse_id(i)) for i in dict.fromkeys(str(i) for i in ids)]
        if not keys or self.read_only:
            return 0
        at = self._ts(now or datetime.now(UTC))
        step = lifecycle.CONFIDENCE_STEP[outcome]
        sets = {
            "shown": "shown_count = shown_count + 1, last_shown_at = ?",
            "helped": "helped_count = helped_count + 1, last_useful_at = ?",
            "hurt": "hurt_count = hurt_count + 1, updated_at = ?",
        }[outcome]
        sql = self._q(
            f"UPDATE learnings SET {sets}, confidence = MIN(1.0, MAX(0.0, confidence + ?)) WHERE id IN ({_marks(keys)})"
        )
        with self._writing(f"record {outcome}", changes="data") as conn:
            return _rowcount(conn.execute(self._minmax(sql), (at, step, *keys)))

    def _minmax(self, sql: str) -> str:
        """SQLite's scalar MIN/MAX are PostgreSQL's LEAST/GREATEST (adapters override)."""
        return sql

    # ------------------------------------------------------------------ review: list, show, stats

    def _where(self, f: ReviewFilter, now: datetime) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if f.repos is not None:
            if not f.repos:
                return "1 = 0", []
            clauses.append(f"repo IN ({_marks(f.repos)})")
            args += sorted(f.repos)
        if f.repo:
            clauses.append("repo = ?")
            args.append(f.repo)
        if f.task_type:
            clauses.append("task_type = ?")
            args.append(f.task_type)
        if f.older_than_days is not None:
            clauses.append("created_at < ?")
            args.append(self._ts(now - timedelta(days=f.older_than_days)))
        if f.newer_than_days is not None:
            clauses.append("created_at >= ?")
            args.append(self._ts(now - timedelta(days=f.newer_than_days)))
        if f.text.strip():
            like, op = _like(f.text.strip()), self._ilike
            # the matching ids first (one pass over each table), then the filters and the order: scanning
            # in date order and testing each row costs a random read per learning (4x slower at 100k)
            clauses.append(
                f"id IN (SELECT id FROM learnings WHERE resolution_summary {op} ? ESCAPE '\\'"
                " OR CAST(id AS TEXT) LIKE ? ESCAPE '\\'"
                f" UNION SELECT learning_id FROM signatures WHERE text {op} ? ESCAPE '\\')"
            )
            args += [like, like.lstrip("%"), like]
        status, cutoff = self._status_sql(f.status, now)
        if status:
            clauses.append(status)
            args += cutoff
        return " AND ".join(clauses) or "1 = 1", args

    def _status_sql(self, status: str | None, now: datetime) -> tuple[str, list[Any]]:
        cut = lifecycle.dormant_cutoff(now)
        cutoff = [self._ts(cut)] * 2 if cut is not None else []
        dormant = _dormant_sql() if cut is not None else "1 = 0"
        return {
            None: ("", []),
            "never-used": (NEVER_USED_SQL, []),
            "hurting": (HURTING_SQL, []),
            "dormant": (dormant, cutoff),
            "active": (f"NOT {HURTING_SQL} AND NOT {dormant}" if cutoff else f"NOT {HURTING_SQL}", cutoff),
            "helped": ("helped_count > 0", []),
            "quarantined": (QUARANTINED_SQL, []),
            "unverified": (UNVERIFIED_SQL, []),
            "pending": (PENDING_SQL, []),
        }[status]

    def review(
        self, f: ReviewFilter, offset: int = 0, limit: int = 50, now: datetime | None = None
    ) -> tuple[list[StoredLearning], int]:
        """One page of the learnings `f` selects (with their signatures) and how many it selects in all."""
        now = now or datetime.now(UTC)
        where, args = self._where(f, now)
        limit, offset = max(1, min(PAGE_MAX, limit)), max(0, offset)
        order = f"SELECT id FROM learnings WHERE {where} ORDER BY {SORTS[f.sort]}"
        with self._reading("list learnings") as conn:
            if f.text.strip():
                # a text search scans every row once: the page and the count come from that one scan
                # (counted up to SEARCH_COUNT_MAX) instead of two
                hits = [r[0] for r in conn.execute(self._q(order + " LIMIT ?"), (*args, SEARCH_COUNT_MAX))]
                total, ids = len(hits), hits[offset : offset + limit]
            else:
                count = f"SELECT count(*) FROM learnings WHERE {where}"
                total = int(conn.execute(self._q(count), args).fetchone()[0])
                ids = [
                    r[0] for r in conn.execute(self._q(order + " LIMIT ? OFFSET ?"), (*args, limit, offset))
                ]
            found = self._load(conn, ids)
        return [c.learning for c in found], total

    def resolve_id(self, text: str) -> UUID:
        """A full id from a full or shortened one (at least 4 characters, as `recall review` prints them);
        ValueError when none or several learnings start with it."""
        text = text.strip().lower()
        if len(text) < 4 or any(c not in "0123456789abcdef-" for c in text):
            return parse_id(text)
        with self._reading("find a learning") as conn:
            rows = conn.execute(
                self._q("SELECT id FROM learnings WHERE CAST(id AS TEXT) LIKE ? ORDER BY id LIMIT 2"),
                (text + "%",),
            ).fetchall()
        if not rows:
            raise ValueError(f"no learning with id {text}")
        if len(rows) > 1:
            raise ValueError(f"several learnings have ids starting with {text}; give more of the id")
        return UUID(str(rows[0][0]))

    def stale(
        self, f: ReviewFilter, roots: dict[str, Path], limit: int = 50, offset: int = 0, scan_max: int = 5000
    ) -> tuple[list[StoredLearning], int]:
        """Learnings `f` selects whose evidence no longer fits their repository's checkout (`roots`: name ->
        folder; other repositories are not looked at): a page of them and how many of the first
        `scan_max` were stale."""
        visible = set(roots) if f.repos is None else set(roots) & set(f.repos)
        f = replace(f, repos=frozenset(visible))
        found: list[StoredLearning] = []
        seen = 0
        while seen < scan_max:
            rows, _ = self.review(f, seen, PAGE_MAX)
            if not rows:
                break
            seen += len(rows)
            found += [r for r in rows if selfcheck.check(r.fix, roots[r.repo]).verdict == "stale"]
        return found[offset : offset + limit], len(found)

    def learning(self, learning_id: UUID | str) -> StoredLearning | None:
        """One learning as stored (signatures included), without pydantic."""
        with self._reading("read a learning") as conn:
            found = self._load(conn, [self._key(parse_id(learning_id))])
        return found[0].learning if found else None

    def stats(self, repos: frozenset[str] | None = None, now: datetime | None = None, top: int = 10) -> Stats:
        """The totals; cached until a write changes the data (or the hour turns: dormancy moves with time)."""
        when = now or datetime.now(UTC)
        with self._reading("sum up learnings") as conn:
            generation = self._generations(conn)  # type: ignore[attr-defined]
        key = (repos, top, generation, when.replace(minute=0, second=0, microsecond=0))
        cache = self.__dict__.setdefault("_stats_cache", {})
        if key not in cache:
            if len(cache) > 64:
                cache.clear()
            cache[key] = self._stats(repos, when, top)
        return replace(cache[key], repos=list(cache[key].repos), top=list(cache[key].top))

    def _stats(self, repos: frozenset[str] | None, now: datetime, top: int) -> Stats:
        where, args = self._where(ReviewFilter(repos=repos), now)
        cut = lifecycle.dormant_cutoff(now)
        dormant, dargs = (_dormant_sql(), [self._ts(cut)] * 2) if cut is not None else ("1 = 0", [])
        sql = (
            f"SELECT count(*), sum(CASE WHEN {HURTING_SQL} THEN 1 ELSE 0 END),"
            f" sum(CASE WHEN {dormant} THEN 1 ELSE 0 END), sum(CASE WHEN {NEVER_USED_SQL} THEN 1 ELSE 0 END),"
            " sum(shown_count), sum(helped_count), sum(hurt_count), sum(access_count)"
            f" FROM learnings WHERE {where}"
        )
        per_repo = (
            f"SELECT repo, count(*), sum(CASE WHEN {NEVER_USED_SQL} THEN 1 ELSE 0 END), sum(helped_count),"
            f" sum(hurt_count), sum(shown_count) FROM learnings WHERE {where} GROUP BY repo"
            " ORDER BY count(*) DESC, repo LIMIT 50"
        )
        most = (
            f"SELECT id FROM learnings WHERE {where} AND shown_count + access_count > 0"
            " ORDER BY shown_count + access_count DESC, id LIMIT ?"
        )
        with self._reading("sum up learnings") as conn:
            row = conn.execute(self._q(sql), (*dargs, *args)).fetchone()
            repos_rows = conn.execute(self._q(per_repo), args).fetchall()
            top_ids = [r[0] for r in conn.execute(self._q(most), (*args, top))]
            tops = self._load(conn, top_ids)
        total, hurting, dormant_n, never, shown, helped, hurt, recalled = (int(v or 0) for v in row)
        return Stats(
            total=total,
            active=total - hurting - dormant_n,
            dormant=dormant_n,
            hurting=hurting,
            never_used=never,
            shown=shown,
            helped=helped,
            hurt=hurt,
            recalled=recalled,
            repos=[
                {
                    "repo": r[0],
                    "learnings": int(r[1]),
                    "never_used": int(r[2] or 0),
                    "helped": int(r[3] or 0),
                    "hurt": int(r[4] or 0),
                    "shown": int(r[5] or 0),
                }
                for r in repos_rows
            ],  # fmt: skip
            top=[
                {
                    "id": str(c.learning.id),
                    "repo": c.learning.repo,
                    "hits": c.learning.shown_count + c.learning.access_count,
                    "error": (c.learning.error_signatures or [""])[0][:200],
                }
                for c in tops
            ],  # fmt: skip
        )

    # ------------------------------------------------------------------ changes a person makes

    def edit_resolution(self, learning_id: UUID | str, text: str, actor: str) -> StoredLearning | None:
        """Replace the resolution (the caller validated and redacted `text`); None when the id is unknown."""
        lid = self._key(parse_id(learning_id))
        with self._writing("edit a learning", changes="data") as conn:
            found = self._load(conn, [lid])
            if not found:
                return None
            old = found[0].learning
            reasons = quarantine_reasons(text, old.fix)  # the new text is judged again
            conn.execute(
                self._q(
                    "UPDATE learnings SET resolution_summary = ?, resolution_key = ?, quarantine = ?, updated_at = ?"
                    " WHERE id = ?"
                ),
                (text, resolution_key(text), self._jparam(reasons), self._ts(datetime.now(UTC)), lid),
            )
            old.quarantine = reasons
            self._event(conn, lid, old.repo, actor, "edit",
                        {"resolution_summary": old.resolution_summary}, {"resolution_summary": text})  # fmt: skip
        old.resolution_summary = text
        return old

    def approve(self, learning_id: UUID | str, actor: str) -> StoredLearning | None:
        """A person vouches for a learning: injected automatically from now on, quarantined, unverified or
        posted for review as it was (safety/trust.py). Recorded with who and when; None when unknown."""
        lid = self._key(parse_id(learning_id))
        with self._writing("approve a learning", changes="data") as conn:
            found = self._load(conn, [lid])
            if not found:
                return None
            old = found[0].learning
            conn.execute(
                self._q("UPDATE learnings SET review = 'approved', updated_at = ? WHERE id = ?"),
                (self._ts(datetime.now(UTC)), lid),
            )
            before = {"review": old.review, "provenance": old.provenance, "quarantine": old.quarantine}
            self._event(conn, lid, old.repo, actor, "approve", before, {"review": "approved"})
        old.review = "approved"
        return old

    def forget(self, learning_id: UUID | str, actor: str) -> StoredLearning | None:
        """Delete a learning, keeping what it was in the change record; None when the id is unknown."""
        lid = self._key(parse_id(learning_id))
        with self._writing("forget a learning") as conn:
            found = self._load(conn, [lid])
            if not found:
                return None
            old = found[0].learning
            self._event(conn, lid, old.repo, actor, "forget", _as_json(old), None)
            self._delete_in(conn, lid)
        return old

    def merge(self, keep: UUID | str, others: Sequence[UUID | str], actor: str) -> StoredLearning:
        """Fold `others` into `keep`: every error signature and file is kept, the counts are summed, the
        latest use and the highest confidence win; each merged learning is recorded, then removed.
        ValueError for an unknown id, a learning of another repository, or `keep` among `others`."""
        kid = self._key(parse_id(keep))
        oids = [self._key(parse_id(o)) for o in dict.fromkeys(str(o) for o in others)]
        if not oids:
            raise ValueError("merge: give at least one learning to merge into the kept one")
        if str(kid) in {str(o) for o in oids}:
            raise ValueError("merge: the kept learning cannot be merged into itself")
        with self._writing("merge learnings") as conn:
            loaded = {str(c.learning.id): c for c in self._load(conn, [kid, *oids])}
            missing = [str(i) for i in [kid, *oids] if str(i) not in loaded]
            if missing:
                raise ValueError(f"merge: no learning with id {', '.join(missing)}")
            kept = loaded[str(kid)]
            for oid in oids:
                other = loaded[str(oid)]
                if other.learning.repo != kept.learning.repo:
                    raise ValueError(
                        f"merge: {oid} is a learning of {other.learning.repo!r}, not {kept.learning.repo!r}"
                    )
                self._fold(conn, kid, kept, other)
                self._event(conn, kid, kept.learning.repo, actor, "merge", _as_json(other.learning),
                            {"into": str(kid)})  # fmt: skip
                self._delete_in(conn, oid)
            self._save_counts(conn, kid, kept.learning)
        return kept.learning

    def _fold(self, conn: Any, kid: Any, kept: Candidate, other: Candidate) -> None:
        a, b = kept.learning, other.learning
        have = set(a.error_signatures)  # every distinct signature stays, even one of the same fingerprint
        fresh = [
            row
            for text in dict.fromkeys(b.error_signatures)
            if text not in have
            for row in signature_rows([text])
        ]
        start = self._merge_state(conn, kid).next_position  # type: ignore[attr-defined]
        self._insert_signatures(conn, kid, fresh, start)  # type: ignore[attr-defined]
        kept.signatures.extend(fresh)
        a.error_signatures.extend(r.text for r in fresh)
        paths = [p for p in b.file_paths_touched if p not in a.file_paths_touched]
        self._insert_files(conn, kid, paths)  # type: ignore[attr-defined]
        a.file_paths_touched.extend(paths)
        a.shown_count += b.shown_count
        a.helped_count += b.helped_count
        a.hurt_count += b.hurt_count
        a.access_count += b.access_count
        a.confidence = max(a.confidence, b.confidence)
        a.ticket_id = a.ticket_id or b.ticket_id
        a.fix = a.fix or b.fix
        a.last_useful_at = _latest(a.last_useful_at, b.last_useful_at)
        a.last_shown_at = _latest(a.last_shown_at, b.last_shown_at)
        a.last_accessed_at = _latest(a.last_accessed_at, b.last_accessed_at)

    def _save_counts(self, conn: Any, kid: Any, a: StoredLearning) -> None:
        conn.execute(
            self._q(
                "UPDATE learnings SET file_paths_touched = ?, shown_count = ?, helped_count = ?, hurt_count = ?,"
                " access_count = ?, confidence = ?, ticket_id = ?, fix = ?, last_useful_at = ?, last_shown_at = ?,"
                " last_accessed_at = ?, updated_at = ? WHERE id = ?"
            ),
            (
                self._jparam(a.file_paths_touched), a.shown_count, a.helped_count, a.hurt_count,
                a.access_count, a.confidence, a.ticket_id, self._jparam(a.fix) if a.fix else None,
                self._ts(a.last_useful_at), self._ts(a.last_shown_at), self._ts(a.last_accessed_at),
                self._ts(datetime.now(UTC)), kid,
            ),
        )  # fmt: skip

    def duplicate_groups(self, repos: frozenset[str] | None = None, limit: int = 200) -> list[list[str]]:
        """Learnings of one repository that share an error fingerprint (the same cause lines after folding):
        groups of ids, oldest first, the largest groups first."""
        where, args = self._where(ReviewFilter(repos=repos), datetime.now(UTC))
        sql = (
            "SELECT l.repo, s.fingerprint, l.id, l.created_at FROM signatures s JOIN learnings l ON l.id = s.learning_id"
            " WHERE s.fingerprint IN (SELECT s2.fingerprint FROM signatures s2 GROUP BY s2.fingerprint"
            " HAVING count(DISTINCT s2.learning_id) > 1)"
            f" AND l.id IN (SELECT id FROM learnings WHERE {where}) ORDER BY l.created_at, l.id"
        )
        with self._reading("find duplicate learnings") as conn:
            rows = conn.execute(self._q(sql), args).fetchall()
        return _groups(rows)[:limit]

    def same_cause_groups(
        self, repos: frozenset[str] | None = None, threshold: float = 0.85, scan_max: int = 20_000
    ) -> list[list[str]]:
        """Learnings of one repository whose errors the fitted same-cause decision (retrieval.py, issue 23)
        matches at `threshold` or more: each learning's signatures asked as queries of its repository (one
        retrieval per signature, so this takes seconds per thousand learnings). Groups as duplicate_groups."""
        from recall_agent.learnings.retrieval import retrieve
        from recall_agent.learnings.wire import RetrievalRequest

        pairs: list[tuple[str, str, str, Any]] = []
        seen = 0
        while seen < scan_max:
            rows, _ = self.review(ReviewFilter(repos=repos, sort="oldest"), seen, PAGE_MAX)
            if not rows:
                break
            seen += len(rows)
            for row in rows:
                for text in row.error_signatures:
                    request = RetrievalRequest(repo=row.repo, match_type="error_signature", error_text=text,
                                               max_results=20, min_similarity_error=threshold)  # fmt: skip
                    for m in retrieve(self, request, record_access=False).matches:  # type: ignore[arg-type]
                        if m.repo == row.repo and m.learning_id != row.id:
                            key = "|".join(sorted((str(row.id), str(m.learning_id))))
                            pairs += [(row.repo, key, str(row.id), row.created_at),
                                      (row.repo, key, str(m.learning_id), m.created_at)]  # fmt: skip
        pairs.sort(key=lambda p: (p[3], p[2]))
        return _groups(pairs)

    # ------------------------------------------------------------------ the change record

    def _event(
        self, conn: Any, lid: Any, repo: str, actor: str, action: str, before: Any, after: Any
    ) -> None:
        conn.execute(
            self._q(
                "INSERT INTO learning_events (learning_id, repo, at, actor, action, before, after)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)"
            ),
            (lid, repo, self._ts(datetime.now(UTC)), actor[:200], action,
             None if before is None else self._jparam(before), None if after is None else self._jparam(after)),
        )  # fmt: skip

    def history(self, learning_id: UUID | str) -> list[dict[str, Any]]:
        """The recorded changes of one learning (and of those merged into it), oldest first."""
        lid = self._key(parse_id(learning_id))
        sql = self._q(
            "SELECT learning_id, repo, at, actor, action, before, after FROM learning_events"
            " WHERE learning_id = ? ORDER BY at, actor"
        )
        with self._reading("read the change record") as conn:
            return [self._event_dict(r) for r in conn.execute(sql, (lid,))]

    def iter_events(self, repos: frozenset[str] | None = None, batch: int = 500) -> Iterator[dict[str, Any]]:
        """Every recorded change, oldest first (the export of the change record)."""
        where, args = "1 = 1", []
        if repos is not None:
            where, args = (f"repo IN ({_marks(repos)})", sorted(repos)) if repos else ("1 = 0", [])
        after: Any = 0
        while True:
            sql = self._q(
                f"SELECT learning_id, repo, at, actor, action, before, after, {self._event_key}"
                f" FROM learning_events WHERE {where} AND {self._event_key} > ? ORDER BY {self._event_key} LIMIT ?"
            )
            with self._reading("read the change record") as conn:
                rows = conn.execute(sql, (*args, after, batch)).fetchall()
            if not rows:
                return
            after = rows[-1][7]
            yield from (self._event_dict(r) for r in rows)

    _event_key = "rowid"

    def _event_dict(self, r: Sequence[Any]) -> dict[str, Any]:
        at = self._dt(r[2])
        return {
            "learning_id": str(r[0]),
            "repo": r[1],
            "at": at.isoformat() if at else None,
            "actor": r[3],
            "action": r[4],
            "before": self._jread(r[5]),
            "after": self._jread(r[6]),
        }


# ---------------------------------------------------------------------- helpers


def _marks(values: Any) -> str:
    return ",".join("?" * len(values))


def _rowcount(cursor: Any) -> int:
    return max(0, int(getattr(cursor, "rowcount", 0) or 0))


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return max(a, b)


def _as_json(learning: StoredLearning) -> dict[str, Any]:
    return learning.to_model().model_dump(mode="json")


def _groups(rows: list[Sequence[Any]]) -> list[list[str]]:
    """Union of learnings (within a repository) that share a fingerprint."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[tuple[str, str], str] = {}
    order: dict[str, int] = {}
    for repo, fp, lid, _ in rows:
        lid = str(lid)
        order.setdefault(lid, len(order))
        key = (repo, fp)
        if key in first:
            a, b = root(first[key]), root(lid)
            if a != b:
                parent[max(a, b, key=order.__getitem__)] = min(a, b, key=order.__getitem__)
        else:
            first[key] = lid
            root(lid)
    groups: dict[str, list[str]] = {}
    for lid in order:
        groups.setdefault(root(lid), []).append(lid)
    found = [g for g in groups.values() if len(g) > 1]
    return sorted(found, key=lambda g: (-len(g), order[g[0]]))
