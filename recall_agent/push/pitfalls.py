"""This repository's known pitfalls, for the start of a session.

A pitfall is a cause the store learned in this repository that an agent is likely to meet again:

- **recurring**: its error (same signature fingerprint, across the repository's learnings) was met in two or
  more sessions. A store with per-learning session counts (`session_count`, the `learning_sessions` table of
  the consolidated store) counts those too;
- **an environment lesson**: the fix was not in the code but in how the project is run: a changed command
  (`git push --set-upstream`, the right interpreter or test runner), a folder, an install (fix evidence
  `command`, `folder`, `packages`).

Left out: learnings the lifecycle retired (hurting, dormant), ones that check stale against this checkout
(`selfcheck`), and ones the trust tiers do not inject by themselves (`safety.trust`: quarantined,
unverified, awaiting review). Most useful first: the most sessions, then environment lessons, then the
most helped, then the newest. At most MAX_LINES lines and MAX_TOKENS tokens, framed as data by
`safety.injection_block`; "" when there is nothing.

Standard library only (the SessionStart hook's path); the store is read with one read-only connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_LINES = 5
MAX_TOKENS = 300
MAX_ROWS = 2000  # the repository's newest learnings looked at
HEADER = "recall: known pitfalls of this repository (met in earlier sessions here):"


@dataclass
class Pitfall:
    item: dict[str, Any]  # the chosen learning as a wire dict (trust, render and selfcheck read it)
    sessions: int
    environment: bool
    error: str = ""
    members: list[str] = field(default_factory=list)

    @property
    def rank(self) -> tuple[int, int, int, str]:
        return (
            -self.sessions,
            -int(self.environment),
            -int(self.item.get("helped_count") or 0),
            _neg(self.item.get("created_at") or ""),
        )


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


def _groups(conn: sqlite3.Connection, ids: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Learnings sharing a signature fingerprint are one cause: (learning id -> group id, first error)."""
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first_error: dict[str, str] = {}
    by_fp: dict[str, str] = {}
    marks = ",".join("?" * len(ids))
    for lid, fp, text in conn.execute(
        f"SELECT learning_id, fingerprint, text FROM signatures WHERE learning_id IN ({marks})"
        " ORDER BY learning_id, position",
        ids,
    ):
        lid = str(lid)
        first_error.setdefault(lid, str(text))
        if fp in by_fp:
            a, b = find(lid), find(by_fp[fp])
            if a != b:
                parent[a] = b
        else:
            by_fp[fp] = lid
    return {i: find(i) for i in ids}, first_error


def collect(db: Path, repo: str | Sequence[str], root: Path | None) -> list[Pitfall]:
    """The repository's pitfalls, most useful first (module docstring); `repo`: its name, or every name its
    learnings may be filed under (`repo.aliases`)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.5)
    try:
        rows = _rows(conn, repo)
        if not rows:
            return []
        ids = [str(r["id"]) for r in rows]
        group_of, first_error = _groups(conn, ids)
        extra = _sessions_of(conn, ids)
    finally:
        conn.close()
    return _pick(rows, group_of, first_error, extra, root)


def _pick(
    rows: list[dict[str, Any]],
    group_of: dict[str, str],
    first_error: dict[str, str],
    extra: dict[str, set[str]],
    root: Path | None,
) -> list[Pitfall]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(group_of[str(r["id"])], []).append(r)
    out: list[Pitfall] = []
    for members in groups.values():
        sessions: set[str] = set()
        counted = 0
        for m in members:
            if m.get("session_id"):
                sessions.add(str(m["session_id"]))
            sessions |= extra.get(str(m["id"]), set())
            counted += int(m.get("session_count") or 0)
        n_sessions = max(len(sessions), counted)
        env = any(environment_lesson(m.get("fix")) for m in members)
        if n_sessions < 2 and not env:
            continue
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
        out.append(
            Pitfall(
                best, n_sessions, env, first_error.get(str(best["id"]), ""), [str(m["id"]) for m in members]
            )
        )
    return sorted(out, key=lambda p: p.rank)


def showable(m: dict[str, Any], root: Path | None) -> bool:
    """May this stored learning be pushed by itself? Active in its lifecycle (neither hurting nor dormant),
    not stale against the checkout `root` (`selfcheck`), trusted (`safety.trust`: not quarantined, not
    unverified, not awaiting review)."""
    from datetime import datetime

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
        from datetime import UTC

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
