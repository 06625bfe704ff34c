"""This repository's known pitfalls, for the start of a session.

A candidate is a cause the store learned in this repository (learnings sharing a signature fingerprint are
one cause). Left out before anything is scored: learnings the lifecycle retired (hurting, dormant), ones
that check stale against this checkout (`selfcheck`), and ones the trust tiers do not inject by themselves
(`safety.trust`: quarantined, unverified, awaiting review).

Which candidates make the list is a fitted model, not a rule: a logistic over `FEATURES` (how many sessions
met the cause, how often, the share of the repository's known sessions that met it, whether the lesson is
about how the project is run rather than its code, how long ago it was last met), weights as data in
`pitfall_weights.json`, fitted by `bench/fit_pitfalls.py` on the time-ordered replay of the tuning projects'
labelled sessions (`bench/bench_push.py --replay`): the probability that the next session meets the cause.
A line is shown when that is at least the fitted threshold, most likely first, at most MAX_LINES lines and
MAX_TOKENS tokens, framed as data by `safety.injection_block`; "" when nothing qualifies (a short list that
is read beats a wall that is not).

Standard library only (the SessionStart hook's path); the store is read with one read-only connection.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

MAX_LINES = 5
MAX_TOKENS = 300
MAX_ROWS = 2000  # the repository's newest learnings looked at
HEADER = "recall: known pitfalls of this repository (met in earlier sessions here):"
WEIGHTS_FILE = Path(__file__).with_name("pitfall_weights.json")
FEATURES = (
    "log_sessions",  # log(1 + sessions that met the cause)
    "log_seen",  # log(1 + times the cause was met)
    "rate",  # sessions that met it / the repository's sessions the store knows (those that taught something)
    "environment",  # the fix was in how the project is run: a changed command, a folder, an install
    "code_fix",  # the fix edited files
    "log_days",  # log(1 + days since the cause was last met)
    "log_gap",  # log(1 + days between the cause's last meeting and the newest thing the store learned here)
)


@dataclass
class Pitfall:
    item: dict[str, Any]  # the chosen learning as a wire dict (trust, render and selfcheck read it)
    sessions: int
    environment: bool
    error: str = ""
    members: list[str] = field(default_factory=list)
    features: list[float] = field(default_factory=list)  # FEATURES, in order
    probability: float = 0.0  # the fitted model's P(the next session meets this cause)
    fingerprints: list[str] = field(default_factory=list)  # its members' signature fingerprints

    @property
    def rank(self) -> tuple[float, int, int, str]:
        return (
            -self.probability,
            -self.sessions,
            -int(self.item.get("helped_count") or 0),
            _neg(self.item.get("created_at") or ""),
        )


@cache
def weights() -> dict[str, Any]:
    return json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))


def probability(row: Sequence[float], model: dict[str, Any] | None = None) -> float:
    """P(the next session meets the cause) for a FEATURES row; the model uses the features its weights
    file lists (by name)."""
    model = model or weights()
    values = dict(zip(FEATURES, row, strict=True))
    z = model["bias"] + sum(w * values[f] for w, f in zip(model["weights"], model["features"], strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def threshold() -> float:
    return float(weights()["threshold"])


def _neg(s: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in s[:40])  # newest first inside a tuple sort


def environment_lesson(fix: dict[str, Any] | None) -> bool:
    """A fix in how the project is run, not in its code: a changed command, a folder, an install."""
    if not isinstance(fix, dict):
        return False
    return bool(fix.get("command") or fix.get("folder") or fix.get("packages"))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _names(repo: str | Sequence[str]) -> list[str]:
    """The names a repository's learnings may be filed under (`repo.aliases`: its identity, then its folder's
    name); one name as given."""
    return [repo] if isinstance(repo, str) else list(dict.fromkeys(repo))


def _rows(
    conn: sqlite3.Connection, repo: str | Sequence[str], paths: list[str] | None = None
) -> list[dict[str, Any]]:
    names = _names(repo)
    in_names = ",".join("?" * len(names))
    have = _columns(conn, "learnings")
    wanted = [
        "id", "session_id", "resolution_summary", "fix", "created_at", "last_useful_at", "helped_count",
        "hurt_count", "confidence", "provenance", "author", "review", "quarantine", "session_count",
        "seen_count", "last_seen_at",
    ]  # fmt: skip
    cols = [c for c in wanted if c in have]
    if paths is None:
        cur = conn.execute(
            f"SELECT {', '.join(cols)} FROM learnings WHERE repo IN ({in_names})"
            f" ORDER BY created_at DESC LIMIT {MAX_ROWS}",
            names,
        )
    else:  # learnings whose fix touched one of `paths`
        marks = ",".join("?" * len(paths))
        cur = conn.execute(
            f"SELECT {', '.join('l.' + c for c in cols)} FROM learnings l WHERE l.repo IN ({in_names}) AND l.id IN"
            f" (SELECT learning_id FROM files WHERE path IN ({marks})) ORDER BY l.created_at DESC LIMIT 50",
            (*names, *paths),
        )
    out = []
    for values in cur:
        row = dict(zip(cols, values, strict=True))
        for key in ("fix", "quarantine"):
            try:
                row[key] = json.loads(row[key]) if row.get(key) else None
            except ValueError:
                row[key] = None
        out.append(row)
    return out


def _sessions_of(conn: sqlite3.Connection, ids: list[str]) -> dict[str, set[str]]:
    """Per learning, the sessions it was met in: its own `session_id`, plus the consolidated store's
    `learning_sessions` rows when that table exists."""
    out: dict[str, set[str]] = {}
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "learning_sessions" not in tables or not ids:
        return out
    marks = ",".join("?" * len(ids))
    for lid, sid in conn.execute(
        f"SELECT learning_id, session_id FROM learning_sessions WHERE learning_id IN ({marks})", ids
    ):
        out.setdefault(str(lid), set()).add(str(sid))
    return out


def _groups(
    conn: sqlite3.Connection, ids: list[str]
) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    """Learnings sharing a signature fingerprint are one cause: (learning id -> group id, first error,
    learning id -> its fingerprints)."""
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first_error: dict[str, str] = {}
    fps: dict[str, list[str]] = {}
    by_fp: dict[str, str] = {}
    marks = ",".join("?" * len(ids))
    for lid, fp, text in conn.execute(
        f"SELECT learning_id, fingerprint, text FROM signatures WHERE learning_id IN ({marks})"
        " ORDER BY learning_id, position",
        ids,
    ):
        lid = str(lid)
        first_error.setdefault(lid, str(text))
        fps.setdefault(lid, []).append(str(fp))
        if fp in by_fp:
            a, b = find(lid), find(by_fp[fp])
            if a != b:
                parent[a] = b
        else:
            by_fp[fp] = lid
    return {i: find(i) for i in ids}, first_error, fps


def collect(
    db: Path,
    repo: str | Sequence[str],
    root: Path | None,
    *,
    now: datetime | None = None,
    everything: bool = False,
) -> list[Pitfall]:
    """The repository's pitfalls, most likely met first (module docstring): the candidates the fitted model
    puts at or above its threshold (`everything`: every candidate, scored); `repo`: its name, or every name
    its learnings may be filed under (`repo.aliases`); `now`: the time the session starts."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.5)
    try:
        rows = _rows(conn, repo)
        if not rows:
            return []
        ids = [str(r["id"]) for r in rows]
        group_of, first_error, fps = _groups(conn, ids)
        extra = _sessions_of(conn, ids)
    finally:
        conn.close()
    found = _candidates(rows, group_of, first_error, fps, extra, root, now or datetime.now(UTC))
    model = weights() if WEIGHTS_FILE.exists() else None  # not fitted yet (bench/fit_pitfalls.py): none shown
    for p in found:
        p.probability = probability(p.features, model) if model else 0.0
    if not everything:
        found = [p for p in found if model and p.probability >= float(model["threshold"])]
    return sorted(found, key=lambda p: p.rank)


def _candidates(
    rows: list[dict[str, Any]],
    group_of: dict[str, str],
    first_error: dict[str, str],
    fps: dict[str, list[str]],
    extra: dict[str, set[str]],
    root: Path | None,
    now: datetime,
) -> list[Pitfall]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(group_of[str(r["id"])], []).append(r)
    known: set[str] = set()  # the repository's sessions the store knows of
    newest = max(
        (d for r in rows if (d := _dt(r.get("last_seen_at") or r.get("created_at"), datetime))), default=now
    )
    for r in rows:
        if r.get("session_id"):
            known.add(str(r["session_id"]))
        known |= extra.get(str(r["id"]), set())
    out: list[Pitfall] = []
    for members in groups.values():
        sessions: set[str] = set()
        counted = seen = 0
        last = None
        for m in members:
            if m.get("session_id"):
                sessions.add(str(m["session_id"]))
            sessions |= extra.get(str(m["id"]), set())
            counted += int(m.get("session_count") or 0)
            seen += int(m.get("seen_count") or 1)
            when = _dt(m.get("last_seen_at") or m.get("created_at"), datetime)
            last = when if last is None or (when and when > last) else last
        n_sessions = max(len(sessions), counted, 1)
        env = any(environment_lesson(m.get("fix")) for m in members)
        code = any(isinstance(m.get("fix"), dict) and m["fix"].get("files") for m in members)
        days = max(0.0, (now - last).total_seconds() / 86400) if last else 365.0
        gap = max(0.0, (newest - last).total_seconds() / 86400) if last else 365.0
        features = [
            math.log1p(n_sessions), math.log1p(seen), n_sessions / max(len(known), n_sessions),
            float(env), float(code), math.log1p(days), math.log1p(gap),
        ]  # fmt: skip
        usable = [m for m in members if showable(m, root)]
        if not usable:
            continue
        best = max(
            usable,
            key=lambda m: (
                environment_lesson(m.get("fix")),
                int(m.get("helped_count") or 0) - int(m.get("hurt_count") or 0),
                float(m.get("confidence") or 0),
                m.get("created_at") or "",
            ),
        )
        member_ids = [str(m["id"]) for m in members]
        out.append(
            Pitfall(
                best,
                n_sessions,
                env,
                first_error.get(str(best["id"]), ""),
                member_ids,
                features,
                fingerprints=[fp for i in member_ids for fp in fps.get(i, [])],
            )  # fmt: skip
        )
    return out


def showable(m: dict[str, Any], root: Path | None) -> bool:
    """May this stored learning be pushed by itself? Active in its lifecycle (neither hurting nor dormant),
    not stale against the checkout `root` (`selfcheck`), trusted (`safety.trust`: not quarantined, not
    unverified, not awaiting review)."""
    from recall_agent import selfcheck
    from recall_agent.learnings import lifecycle
    from recall_agent.safety import trust

    created = _dt(m.get("created_at"), datetime)
    if created is None or lifecycle.state(
        created, _dt(m.get("last_useful_at"), datetime),
        int(m.get("helped_count") or 0), int(m.get("hurt_count") or 0),
    ) != "active":  # fmt: skip
        return False
    return selfcheck.check(m.get("fix"), root).verdict != "stale" and trust.injectable(m)


def touching(
    db: Path, repo: str | Sequence[str], paths: list[str], root: Path | None, limit: int = 2
) -> list[dict[str, Any]]:
    """Learnings of this repository whose fix touched one of `paths` (a task's files), that may be injected
    (active, not stale here, trusted), most helped and newest first."""
    if not db.exists() or not paths:
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.5)
    try:
        rows = _rows(conn, repo, paths[:10])
    finally:
        conn.close()
    kept = [m for m in rows if showable(m, root)]
    kept.sort(key=lambda m: (-int(m.get("helped_count") or 0), _neg(m.get("created_at") or "")))
    return kept[:limit]


def learning_line(item: dict[str, Any]) -> str:
    from recall_agent.safety import render

    return f"{render.inline(_summary(item), 200)} (id {render.inline(str(item.get('id'))[:8])})"


def _dt(value: object, datetime: Any) -> Any:
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


def line(p: Pitfall) -> str:
    """One pitfall: the error met, the lesson, the changed command, how often; stored text rendered inert."""
    from recall_agent.safety import render

    item = p.item
    summary = render.inline(_summary(item), 200)
    facts = []
    fix = item.get("fix") or {}
    command = fix.get("command") if isinstance(fix, dict) else None
    if isinstance(command, dict) and command.get("after") and str(command["after"]) not in summary:
        facts.append("works: `" + render.inline(str(command["after"]).replace("`", "'"), 120) + "`")
    if p.error:
        facts.append("error: " + render.inline(p.error.splitlines()[0] if p.error else "", 90))
    facts.append(f"met in {p.sessions} sessions" if p.sessions >= 2 else "environment lesson")
    facts.append(f"id {render.inline(str(item.get('id'))[:8])}")
    return f"{summary} ({'; '.join(facts)})"


def _summary(item: dict[str, Any]) -> str:
    from recall_agent.capture import SOURCE_PREFIX

    rows = str(item.get("resolution_summary") or "").splitlines()
    return " ".join(r for r in rows if not r.startswith(SOURCE_PREFIX))


def block(
    pitfalls: list[Pitfall], max_tokens: int = MAX_TOKENS, max_lines: int = MAX_LINES
) -> tuple[str, int]:
    """The framed block (≤ max_tokens estimated tokens, ≤ max_lines lines) and how many lines it holds."""
    from recall_agent.push import ledger
    from recall_agent.safety import injection_block

    chosen = pitfalls[:max_lines]
    while chosen:
        text = injection_block([p.item for p in chosen], HEADER, _liner(chosen))
        if ledger.tokens(text) <= max_tokens:
            return text, len(chosen)
        chosen = chosen[:-1]
    return "", 0


def _liner(chosen: list[Pitfall]) -> Any:
    by_id = {id(p.item): p for p in chosen}
    return lambda item: line(by_id[id(item)])
