"""One learning per cause per repository (issue 34), written once for both stores.

When a learning is written (capture, `import-sessions`, `recall learn`, the server's POST, an import of an
export), the store first asks whether its repository already holds a learning of the same cause: the
learnings that share a signature's fingerprint or its rarest terms (the indexes retrieval uses, never a
scan), scored by the fitted same-cause decision retrieval makes (`retrieval.score_error`: identical
fingerprint, else the acceptance model at its operating point). If one does, that row is updated instead
of a new one inserted:

- `seen_count` (how often the cause was met), `session_count` (in how many distinct sessions; the session
  ids are in `learning_sessions`), `first_seen_at`, `last_seen_at`;
- every distinct error text is kept as a signature (up to STORED_SIGNATURES_MAX; beyond it an occurrence is
  counted, its text not kept);
- every distinct fix (by resolution, case- and whitespace-insensitive) is kept in `learning_fixes` with its
  evidence, how often it was recorded and when; the learning's shown `resolution_summary` and `fix` are the
  fix recorded most often (among equals: one an agent or a person wrote before a transcript's, then the first).

The same occurrence recorded again (a session already counted, a fix already known, no new error text: the
hook's capture and a later `import-sessions` of that session) changes nothing.

`consolidate_existing` is the data migration `consolidate_causes`: learnings of one repository that share
a (non-fallback) fingerprint are merged, oldest first, with every signature, file, session and fix kept
(`Curation.merge`, recorded in the change record). Learnings that are the same cause only by the model's
judgement are folded by `recall review dedupe --same-cause --apply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from recall_agent.learnings.records import dedupe, resolution_key
from recall_agent.protocol import DEFAULT_MIN_SIMILARITY_ERROR, FIXES_MAX, STORED_SIGNATURES_MAX

if TYPE_CHECKING:
    from recall_agent.learnings.types import SignatureRow, StoredLearning
    from recall_agent.models import Learning

SAME_CAUSE_QUERIES = 4  # a new learning's signatures asked for a same-cause row (its first ones)
SAME_CAUSE_CANDIDATES = 30  # candidate rows of the repository scored per signature
RANKED_HITS = 200  # fingerprint and full-text hits of the repository read per signature
MAX_TERMS = 4  # the rarest terms of a signature sent to the full-text index (core.MAX_QUERY_TERMS)
MIGRATION = "consolidate_causes"
MIGRATION_ACTOR = f"recall (migration {MIGRATION})"


@dataclass
class FixRow:
    """One fix of a learning as `learning_fixes` holds it."""

    key: str
    summary: str
    fix: dict[str, Any] | None
    count: int
    first: datetime
    last: datetime
    stored: bool = False  # already a row of this learning
    changed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"resolution_summary": self.summary, "fix": self.fix, "count": self.count,
                "first_seen_at": self.first, "last_seen_at": self.last}  # fmt: skip


@dataclass
class Occurrence:
    """What one write (or one merged learning) adds to a cause's row."""

    seen: int
    first: datetime
    last: datetime
    sessions: list[str] = field(default_factory=list)
    unnamed_sessions: int = 0  # sessions counted by an import but not named in it
    fixes: list[FixRow] = field(default_factory=list)

    @classmethod
    def of_learning(cls, learning: Learning) -> Occurrence:
        first = _aware(learning.first_seen_at or learning.created_at)
        last = _aware(learning.last_seen_at or learning.created_at)
        fixes = [
            FixRow(resolution_key(f.resolution_summary), f.resolution_summary,
                   f.fix.model_dump(mode="json") if f.fix else None, f.count,
                   _aware(f.first_seen_at or first), _aware(f.last_seen_at or last))
            for f in learning.fixes
        ] or [
            FixRow(resolution_key(learning.resolution_summary), learning.resolution_summary,
                   learning.fix.model_dump(mode="json") if learning.fix else None,
                   learning.seen_count, first, last)
        ]  # fmt: skip
        sessions = [learning.session_id] if learning.session_id else []
        return cls(learning.seen_count, first, last, sessions,
                   max(0, learning.session_count - len(sessions)), fixes)  # fmt: skip


class Consolidation:
    """Mixin of StoreCore: the same-cause lookup at write time and the row update (module docstring). SQL is
    written with `?` placeholders and runs on both stores through the adapter's dialect hooks."""

    # ------------------------------------------------------------------ the same-cause row

    def _same_cause(self, conn: Any, repo: str, rows: list[SignatureRow], new: Learning) -> Any | None:
        """The learning of `repo` the fitted decision calls the same cause as these signatures, if any. A
        learning whose fix evidence names another cause of a folder error (`cd testbed`: the folder did not
        exist vs the shell was already inside) is another cause, whatever the error text says."""
        from recall_agent.learnings import retrieval
        from recall_agent.learnings.features import Query

        best: tuple[float, Any] = (DEFAULT_MIN_SIMILARITY_ERROR, None)
        auto = _injectable_new(new)
        slip = self._same_folder_slip(conn, repo, new, auto)
        if slip is not None:
            return slip
        for row in rows[:SAME_CAUSE_QUERIES]:
            q = Query.from_text(row.text)
            if q.noise:
                continue  # a text without an error line is never matched on (retrieval.py)
            ids = self._candidate_ids(conn, repo, q)
            candidates = self._load(conn, ids[:SAME_CAUSE_CANDIDATES])  # type: ignore[attr-defined]
            for s in retrieval.score_error(self, q, candidates, dense_weight=0.0, dense=None):  # type: ignore[arg-type]
                theirs, mine = _folder_cause(s.candidate.learning.fix), _folder_cause(new.fix)
                if theirs and mine and theirs != mine:
                    continue
                if _injectable_stored(s.candidate.learning) != auto:
                    continue  # a fix of another trust tier never joins this row's fixes (safety/trust.py)
                if s.similarity >= best[0] and (best[1] is None or s.similarity > best[0]):
                    best = (s.similarity, self._key(s.candidate.learning.id))  # type: ignore[attr-defined]
        return best[1]

    def _same_folder_slip(self, conn: Any, repo: str, new: Learning, auto: bool) -> Any | None:
        """A folder fix (the folder did not exist yet and was created; the shell was already inside it) is
        one slip whatever command met it (`cd testbed`, `ls testbed/x`, `find testbed`): a learning of
        `repo` whose fix names the same cause for a folder of the same name is this learning's row. Found
        through the full-text index on the folder's name, never a scan."""
        mine = _folder_key(new.fix)
        if mine is None:
            return None
        ids = self._ids_in_repo(conn, repo, [], [mine[1].lower()], False, RANKED_HITS)  # type: ignore[attr-defined]
        best: tuple[int, Any] = (0, None)
        for start in range(0, len(ids), SAME_CAUSE_CANDIDATES):  # a folder's name is in many errors
            batch = self._load(conn, ids[start : start + SAME_CAUSE_CANDIDATES], fixes=True)  # type: ignore[attr-defined]
            for cand in batch:
                # any of its fixes (the one it shows is the most frequent, which may be another cause's)
                fixes = [f.get("fix") if isinstance(f, dict) else f.fix for f in cand.learning.fixes]
                if mine not in {_folder_key(f) for f in [*fixes, cand.learning.fix]}:
                    continue
                if _injectable_stored(cand.learning) == auto and cand.learning.seen_count > best[0]:
                    best = (cand.learning.seen_count, self._key(cand.learning.id))  # type: ignore[attr-defined]
        return best[1]  # the row met most often: copies made before the rows met fold into it over time

    def _candidate_ids(self, conn: Any, repo: str, q: Any) -> list[Any]:
        """Learnings of `repo` sharing the query's fingerprint, then its full-text hits on the query's rarest
        terms (core.py's rule: all of them first, any of them when that finds too little), both restricted
        to the repository inside the index lookups (a common message stored in many repositories must not
        crowd this one's out), on the write transaction's connection (the caches may not know its rows)."""
        terms = [t for t in dict.fromkeys(t.lower() for t in q.terms()) if t][:64]
        rare: list[str] = []
        if terms:
            docs = self._doc_counts_of(conn, terms)  # type: ignore[attr-defined]
            rare = sorted((t for t in terms if docs.get(t)), key=lambda t: (docs[t], t))[:MAX_TERMS]
        ids: list[Any] = []
        for require_all in (True, False) if len(rare) > 1 else (False,):
            ids = self._ids_in_repo(conn, repo, [q.fingerprint], rare, require_all, RANKED_HITS)  # type: ignore[attr-defined]
            if len(ids) > 1 or not rare:
                break
        return ids

    # ------------------------------------------------------------------ updating the row

    def _occur(self, conn: Any, lid: Any, new: Learning, rows: list[SignatureRow], paths: list[str]) -> None:
        """The cause of row `lid` was met again (`new`): update the row (module docstring)."""
        state = self._merge_state(conn, lid)  # type: ignore[attr-defined]
        texts = [
            r[0] for r in conn.execute(self._q("SELECT text FROM signatures WHERE learning_id = ?"), (lid,))
        ]  # type: ignore[attr-defined]
        have = set(texts)
        room = max(0, STORED_SIGNATURES_MAX - len(texts))
        fresh = [r for r in rows if r.text not in have][:room]
        occ = Occurrence.of_learning(new)
        if not fresh and self._already_counted(conn, lid, occ):
            return
        added = [p for p in paths if p not in state.file_paths]
        confidence = max(state.confidence, new.confidence)
        self._update_merged(conn, lid, state.file_paths + added, confidence,  # type: ignore[attr-defined]
                            state.ticket_id or new.ticket_id, state.fix)  # fmt: skip
        self._insert_signatures(conn, lid, fresh, start=state.next_position)  # type: ignore[attr-defined]
        self._insert_files(conn, lid, added)  # type: ignore[attr-defined]
        self._apply(conn, lid, occ)
        if new.provenance in ("captured", "person") or (
            new.fix and new.fix.source == "transcript" and new.fix.verified_by
        ):
            # an agent's note that a passing run (or a person) now confirms with the same fix (rows of two
            # trust tiers meet here only through the same resolution: `_same_cause` keeps them apart)
            conn.execute(
                self._q("UPDATE learnings SET provenance = ? WHERE id = ? AND provenance = 'agent'"),  # type: ignore[attr-defined]
                (new.provenance or "captured", lid),
            )

    def _already_counted(self, conn: Any, lid: Any, occ: Occurrence) -> bool:
        """This occurrence's sessions are all counted and its fixes all known: the same one recorded again."""
        if not occ.sessions:
            return False
        q = self._q  # type: ignore[attr-defined]
        known = {
            r[0]
            for r in conn.execute(q("SELECT session_id FROM learning_sessions WHERE learning_id = ?"), (lid,))
        }
        keys = {
            r[0]
            for r in conn.execute(
                q("SELECT resolution_key FROM learning_fixes WHERE learning_id = ?"), (lid,)
            )
        }
        return set(occ.sessions) <= known and {f.key for f in occ.fixes} <= keys

    def _record_first(self, conn: Any, lid: Any, new: Learning) -> None:
        """A learning just inserted: its occurrence counts, its session and its fix(es)."""
        self._apply(conn, lid, Occurrence.of_learning(new), first=True)

    def _apply(self, conn: Any, lid: Any, occ: Occurrence, *, first: bool = False) -> FixRow:
        """Add an occurrence's counts, sessions and fixes to row `lid`; the top fix becomes its resolution.
        Returns the top fix."""
        q, ts = self._q, self._ts  # type: ignore[attr-defined]
        seen, sessions, first_at, last_at = 0, 0, occ.first, occ.last
        if not first:
            row = conn.execute(
                q("SELECT seen_count, session_count, first_seen_at, last_seen_at, created_at, resolution_summary,"
                  " fix FROM learnings WHERE id = ?"),
                (lid,),
            ).fetchone()  # fmt: skip
            seen, sessions = int(row[0]), int(row[1])
            created = _aware(self._dt(row[4]))  # type: ignore[attr-defined]
            first_at = min(first_at, _aware(self._dt(row[2])) or created)  # type: ignore[attr-defined]
            last_at = max(last_at, _aware(self._dt(row[3])) or created)  # type: ignore[attr-defined]
            own = FixRow(resolution_key(row[5]), row[5], self._jread(row[6]), max(1, seen),  # type: ignore[attr-defined]
                         _aware(self._dt(row[2])) or created, _aware(self._dt(row[3])) or created,  # type: ignore[attr-defined]
                         changed=True)  # fmt: skip
        insert = q(
            "INSERT INTO learning_sessions (learning_id, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING"
        )
        for sid in dedupe(occ.sessions):
            sessions += max(0, int(getattr(conn.execute(insert, (lid, sid)), "rowcount", 0) or 0))
        sessions += occ.unnamed_sessions
        conn.execute(
            q(
                "UPDATE learnings SET seen_count = ?, session_count = ?, first_seen_at = ?, last_seen_at = ? WHERE id = ?"
            ),
            (seen + occ.seen, sessions, ts(first_at), ts(last_at), lid),
        )
        fixes = {} if first else self._fix_rows(conn, lid)
        if (
            not first and not fixes
        ):  # a row written without its fixes (a bulk load): its own resolution is one
            fixes[own.key] = own
        for f in occ.fixes:
            have = fixes.get(f.key)
            if have is None:
                fixes[f.key] = FixRow(f.key, f.summary, f.fix, f.count, f.first, f.last, changed=True)
                continue
            have.count += f.count
            have.first, have.last = min(have.first, f.first), max(have.last, f.last)
            if f.fix and (not have.fix or f.last >= have.last):
                have.fix = f.fix  # the latest evidence of this fix
            have.changed = True
        ranked = _ranked(list(fixes.values()))
        for f in ranked[FIXES_MAX:]:
            if f.stored:
                conn.execute(
                    q("DELETE FROM learning_fixes WHERE learning_id = ? AND resolution_key = ?"), (lid, f.key)
                )
        for f in ranked[:FIXES_MAX]:
            if f.stored and f.changed:
                conn.execute(
                    q("UPDATE learning_fixes SET resolution_summary = ?, fix = ?, count = ?, first_seen_at = ?,"
                      " last_seen_at = ? WHERE learning_id = ? AND resolution_key = ?"),
                    (f.summary, self._jfix(f.fix), f.count, ts(f.first), ts(f.last), lid, f.key),
                )  # fmt: skip
            elif not f.stored:
                conn.execute(
                    q("INSERT INTO learning_fixes (learning_id, resolution_key, resolution_summary, fix, count,"
                      " first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)"),
                    (lid, f.key, f.summary, self._jfix(f.fix), f.count, ts(f.first), ts(f.last)),
                )  # fmt: skip
        top = ranked[0]
        conn.execute(
            q("UPDATE learnings SET resolution_summary = ?, resolution_key = ?, fix = ? WHERE id = ?"),
            (top.summary, top.key, self._jfix(top.fix), lid),
        )
        return top

    def _jfix(self, fix: dict[str, Any] | None) -> Any:
        return None if fix is None else self._jparam(fix)  # type: ignore[attr-defined]

    def _fix_rows(self, conn: Any, lid: Any) -> dict[str, FixRow]:
        sql = self._q(  # type: ignore[attr-defined]
            "SELECT resolution_key, resolution_summary, fix, count, first_seen_at, last_seen_at"
            " FROM learning_fixes WHERE learning_id = ?"
        )
        return {
            r[0]: FixRow(r[0], r[1], self._jread(r[2]), int(r[3]), _aware(self._dt(r[4])),  # type: ignore[attr-defined]
                         _aware(self._dt(r[5])), stored=True)  # type: ignore[attr-defined]
            for r in conn.execute(sql, (lid,))
        }  # fmt: skip

    def _fixes_of(self, conn: Any, ids: list[Any]) -> dict[str, list[dict[str, Any]]]:
        """Each learning's fixes, most frequent first (for export and `recall review show`)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for lid in ids:
            rows = _ranked(list(self._fix_rows(conn, lid).values()))
            out[str(lid)] = [f.as_dict() for f in rows]
        return out

    def _occurrence_of(self, conn: Any, learning: StoredLearning) -> Occurrence:
        """A stored learning as an occurrence of the row it is merged into (curation's merge)."""
        lid = self._key(learning.id)  # type: ignore[attr-defined]
        sql = self._q("SELECT session_id FROM learning_sessions WHERE learning_id = ?")  # type: ignore[attr-defined]
        sessions = [r[0] for r in conn.execute(sql, (lid,))]
        fixes = list(self._fix_rows(conn, lid).values())
        for f in fixes:
            f.stored = f.changed = False
        first = _aware(learning.first_seen_at or learning.created_at)
        last = _aware(learning.last_seen_at or learning.created_at)
        if not fixes:
            fixes = [FixRow(resolution_key(learning.resolution_summary), learning.resolution_summary,
                            learning.fix, learning.seen_count, first, last)]  # fmt: skip
        return Occurrence(learning.seen_count, first, last, sessions,
                          max(0, learning.session_count - len(sessions)), fixes)  # fmt: skip

    # ------------------------------------------------------------------ the data migration

    def consolidate_existing(self, actor: str = MIGRATION_ACTOR) -> int:
        """Migration `consolidate_causes`: merge the learnings of one repository and one trust tier that share
        a fingerprint (oldest kept); rows of the two tiers stay apart, as at write time (`_same_cause`).
        Idempotent (a consolidated store has no such group). Returns how many were merged."""
        from recall_agent.learnings.curation import _groups

        sql = (
            "SELECT l.repo, s.fingerprint, l.id, l.created_at FROM signatures s JOIN learnings l ON l.id = s.learning_id"
            " WHERE s.normalized NOT LIKE '~ %' AND s.fingerprint IN (SELECT s2.fingerprint FROM signatures s2"
            " GROUP BY s2.fingerprint HAVING count(DISTINCT s2.learning_id) > 1) ORDER BY l.created_at, l.id"
        )
        with self._reading("find learnings of one cause") as conn:  # type: ignore[attr-defined]
            found = conn.execute(sql).fetchall()
            ids = list(dict.fromkeys(self._key(r[2]) for r in found))  # type: ignore[attr-defined]
            auto = {str(c.learning.id): _injectable_stored(c.learning) for c in self._load(conn, ids)}  # type: ignore[attr-defined]
        # the tier is part of the group key: one cause's trusted and untrusted copies are two groups
        rows = [((r[0], auto.get(str(r[2]))), r[1], r[2], r[3]) for r in found]
        merged = 0
        for group in _groups(rows):
            self.merge(group[0], group[1:], actor)  # type: ignore[attr-defined]
            merged += len(group) - 1
        return merged


def _ranked(fixes: list[FixRow]) -> list[FixRow]:
    """The fixes that worked, the most often recorded first; among equals one an agent or a person wrote
    down (`fix.source` agent / manual) before one inferred from a transcript, then the first recorded (a fix
    stays shown until another one has worked more often)."""
    return sorted(fixes, key=lambda f: (-f.count, _inferred(f.fix), f.first.timestamp(), f.key))


def _inferred(fix: dict[str, Any] | None) -> bool:
    return isinstance(fix, dict) and fix.get("source") == "transcript"


def _folder_cause(fix: Any) -> str | None:
    """The cause a folder fix names (models.FixFolder.cause), from a stored dict or a wire model."""
    if fix is None:
        return None
    folder = fix.get("folder") if isinstance(fix, dict) else getattr(fix, "folder", None)
    if folder is None:
        return None
    return folder.get("cause") if isinstance(folder, dict) else getattr(folder, "cause", None)


def _folder_key(fix: Any) -> tuple[str, str] | None:
    """(cause, the folder's name) of a folder fix: `./work/testbed` and `testbed` are one folder."""
    cause = _folder_cause(fix)
    if not cause:
        return None
    folder = fix.get("folder") if isinstance(fix, dict) else getattr(fix, "folder", None)
    path = folder.get("path") if isinstance(folder, dict) else getattr(folder, "path", None)
    name = str(path or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return (str(cause), name) if name and name not in (".", "..") else None


def _aware(dt: datetime | None) -> Any:
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _injectable_new(learning: Learning) -> bool:
    """Whether a learning about to be written would be injected automatically (safety/trust.py): rows of the
    two tiers are never merged, so an untrusted or quarantined fix can never become a trusted row's shown fix
    by being posted more often."""
    from recall_agent.learnings.records import safety_columns
    from recall_agent.safety import trust

    provenance, author, review, reasons = safety_columns(learning)
    fix = learning.fix.model_dump(mode="json") if learning.fix else None
    item = {"provenance": provenance, "author": author, "review": review, "quarantine": reasons, "fix": fix,
            "resolution_summary": learning.resolution_summary, "helped_count": learning.helped_count}  # fmt: skip
    return trust.injectable(item)


def _injectable_stored(stored: Any) -> bool:
    from recall_agent.safety import trust

    return trust.injectable(trust.fields_of(stored))
