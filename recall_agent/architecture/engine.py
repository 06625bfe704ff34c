"""Answer one free-text question about a repository: understand → look up → query → render.

Graph questions answer as role `memgraph`, symbol and file questions as role `repowise`. When the caller
allows only `repowise` (the seed's `--scope architecture` sends `force_backends=["repowise"]` although the
scope means "Repowise + Memgraph"), a graph question is still answered, as role `repowise`; when it allows
only `memgraph`, a lookup answers with the subject's blast radius.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recall_agent.architecture import queries as q
from recall_agent.architecture import render
from recall_agent.architecture.understand import HISTORY_INTENTS, Intent, understand

if TYPE_CHECKING:
    from recall_agent.architecture.origins import Origins

_WORD = re.compile(r"\w+")


@dataclass
class Answer:
    content: str
    role: str  # memgraph | repowise
    extras: dict = field(default_factory=dict)


def answer(
    conn: sqlite3.Connection, root: Path, text: str, roles: set[str] | None = None, limit: int = 5
) -> list[Answer]:
    roles = set(roles) if roles else {"memgraph", "repowise"}
    intent = understand(text)
    if intent.action == "cycles":
        return _cycles(conn, root, _pick("memgraph", roles), q.clean_subject(intent.subject, root))
    if intent.action == "auto":
        return _auto(conn, root, intent, roles, limit)
    if intent.action in HISTORY_INTENTS:
        return _history(conn, root, intent, roles)
    found = q.lookup(conn, intent.subject, root, fuzzy=False)  # closest names only when answering "unknown"
    words_not_a_name = " " in q.clean_subject(intent.subject, root)
    if not found.targets and words_not_a_name and intent.action != "lookup":
        # "what depends on the json tag module": the subject described in words, when one file clearly is it
        found = q.Lookup(_file_described(conn, intent.subject), "words")
    if not found.targets:
        if not conn.execute("SELECT 1 FROM files WHERE lang IS NOT NULL LIMIT 1").fetchone():
            return [Answer(f"No source files indexed in {root.name} ({root}).", _pick(intent.role, roles))]
        asked_where = intent.action == "lookup" and words_not_a_name  # "where is the retry logic"
        if asked_where and (about := _concepts(conn, text, roles, limit)):
            return about
        subject = q.clean_subject(intent.subject, root)
        closest = q.closest_names(conn, subject) if subject else []
        content = render.unknown(subject, closest, root.name)
        if cap := _cap_caveat(conn):
            content = f"{content}\nNote: {cap}."
        return [Answer(content, _pick(intent.role, roles), {"answer": "unknown", "closest": closest})]
    # the most likely match gets the full answer; other matches of an ambiguous name get one compact list
    out = [_one(conn, intent, found.targets[0], roles)]
    if len(found.targets) > 1 and limit > 1:
        content = render.other_matches(q.clean_subject(intent.subject, root), found.targets[1:])
        out.append(Answer(content, _pick("repowise", roles), {"answer": "other_matches"}))
    return out


def _pick(preferred: str, roles: set[str]) -> str:
    return (
        preferred if preferred in roles else next(iter(sorted(roles & {"memgraph", "repowise"})), preferred)
    )


def _extras(target: q.Target, action: str) -> dict:
    return {"answer": action, "target": target.display, "location": target.location, "kind": target.kind}


def _one(conn: sqlite3.Connection, intent: Intent, target: q.Target, roles: set[str]) -> Answer:
    result = _graph_or_card(conn, intent, target, roles)
    caveat = _parse_caveat(conn, target, intent.action)
    if caveat:
        result.content = f"{result.content}\n{caveat}"
    if intent.action != "lookup" and "memgraph" not in roles:
        # the seed's `--scope architecture` forces role repowise only: the graph answer it asked for is
        # still the right content, so repowise carries it (the client asked repowise, not memgraph)
        result.role = "repowise"
    return result


def _cap_caveat(conn: sqlite3.Connection) -> str:
    """The user capped the files indexed and the cap applied: every answer says so."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'capped'").fetchone()
    if not row or not row[0].isdigit() or row[0] == "0":
        return ""
    from recall_agent.architecture.indexer import cap_note

    return cap_note(int(row[0]))


def _parse_caveat(conn: sqlite3.Connection, target: q.Target, action: str) -> str:
    """Say so when the answer rests on files the grammar could not read whole, and how much it missed."""
    row = conn.execute("SELECT note, unread, lines FROM files WHERE id = ?", (target.file_id,)).fetchone()
    own = bool(row and "syntax errors" in (row[0] or ""))
    others = unread = lines = 0
    if action in ("blast", "dependents", "callers", "tests"):
        from recall_agent.architecture.indexer import lang_stats

        totals = (lang_stats(conn) or {}).get(target.lang or "")
        if totals is not None:  # recorded at the last change: no scan of every file per answer
            others = totals[1] - int(own)
            unread = totals[2] - (int(row[1]) if own else 0)
            lines = totals[3]
        else:
            others, unread = conn.execute(
                "SELECT count(*), coalesce(sum(unread), 0) FROM files"
                " WHERE lang = ? AND id != ? AND note LIKE 'syntax errors%'",
                (target.lang, target.file_id),
            ).fetchone()
            if others:
                lines = conn.execute(
                    "SELECT sum(lines) FROM files WHERE lang = ?", (target.lang,)
                ).fetchone()[0]
    parts = [cap] if (cap := _cap_caveat(conn)) else []
    if own:
        parts.append(f"{target.path} has syntax errors: {row[1]} of its {row[2]} lines were not read")
    if others:
        share = f" ({unread:,} of {lines:,} lines, {unread / lines:.1%})" if lines else ""
        parts.append(
            f"{others:,} other {target.lang} {'files have' if others > 1 else 'file has'} lines the grammar could not"
            f" read{share}, so a dependency or call written there is not counted"
        )
    return f"Note: {'; '.join(parts)}." if parts else ""


def _graph_or_card(conn: sqlite3.Connection, intent: Intent, target: q.Target, roles: set[str]) -> Answer:
    action = intent.action
    if action == "lookup" and "repowise" not in roles:
        action = "blast"
    extras = _extras(target, action)
    if action == "lookup":
        return Answer(card(conn, target), "repowise", extras)
    if action == "blast":
        radius = q.blast_summary(conn, target, intent.depth or q.MAX_DEPTH)
        tests = q.tests_touching(conn, target, radius.dependents)  # every test file of the radius is listed
        extras |= {"direct_dependents": radius.depths.get(1, 0), "transitive_dependents": radius.size}
        content = render.blast(target, radius, tests, intent.depth)
        from recall_agent.architecture.evolution import blast_line

        if changes := blast_line(conn, Path(graph_root(conn)), target):
            content = f"{content}\n{changes}"
        return Answer(content, "memgraph", extras)
    if action == "dependents":
        direct = q.direct_dependents(conn, target)
        size = q.radius_size(conn, target, intent.depth or q.MAX_DEPTH)
        extras |= {"direct_dependents": len(direct), "transitive_dependents": size}
        return Answer(render.dependents(target, direct, size), "memgraph", extras)
    if action == "dependencies":
        internal, external = q.dependencies(conn, target.file_id)
        return Answer(render.dependencies(target, internal, external), "memgraph", extras)
    if action == "callers":
        if target.is_file:
            direct = q.direct_dependents(conn, target)
            return Answer(render.dependents(target, direct, q.radius_size(conn, target)), "memgraph", extras)
        hits = q.callers(conn, target)
        extras["call_sites"] = len(hits)
        return Answer(render.callers(target, hits), "memgraph", extras)
    if action == "callees":
        return Answer(render.callees(target, q.callees(conn, target)), "memgraph", extras)
    # tests
    return Answer(render.tests(target, q.tests_touching(conn, target)), "memgraph", extras)


def card(conn: sqlite3.Connection, target: q.Target) -> str:
    if target.is_file:
        defines = [
            (r[0], r[1])
            for r in conn.execute(
                "SELECT name, kind FROM symbols WHERE file_id = ? AND instr(qualname, '.') = 0 ORDER BY"
                " kind NOT IN ('class','interface','struct','trait','enum'), substr(name, 1, 1) = '_', line",
                (target.file_id,),
            )
        ]
        imports = conn.execute(
            "SELECT count(DISTINCT dst) FROM edges WHERE src = ?", (target.file_id,)
        ).fetchone()[0]
        call_sites = None
    else:
        defines = [
            (r[0], r[1])
            for r in conn.execute(
                "SELECT name, kind FROM symbols WHERE file_id = ? AND qualname LIKE ? ESCAPE '\\'"
                " AND instr(substr(qualname, ?), '.') = 0 ORDER BY substr(name, 1, 1) = '_', line",
                (target.file_id, q._like_escape(target.qualname) + ".%", len(target.qualname) + 2),
            )
        ]
        imports = 0
        call_sites = q.callers(conn, target)
    direct = q.direct_dependents(conn, target)
    radius = q.blast_summary(conn, target)
    tests = q.tests_touching(conn, target, radius.dependents)
    return render.card(
        target,
        defines=defines,
        imports=imports,
        direct=direct,
        radius_size=radius.size,
        tests=tests,
        call_sites=call_sites,
    )


def _cycles(conn: sqlite3.Connection, root: Path, role: str, within: str = "") -> list[Answer]:
    """Import cycles of the repository, or only those touching files under `within` (a folder or module)."""
    prefix = within.replace(".", "/") if within and "/" not in within else within
    found, total = q.import_cycles(conn, within=prefix.rstrip("/"))
    scope = f"{root.name}/{prefix}" if prefix else root.name
    return [Answer(render.cycles(found, total, scope), role, {"answer": "cycles", "cycles": total})]


def _auto(conn: sqlite3.Connection, root: Path, intent: Intent, roles: set[str], limit: int) -> list[Answer]:
    """Free text (an error, a sentence): an import error explained, then cards for the repository names it
    mentions; nothing if none."""
    from recall_agent.architecture.diagnose import diagnose
    from recall_agent.architecture.origins import locate

    out: list[Answer] = []
    found = locate(conn, root, intent.text)
    everyday = _everyday(conn, root, intent.text)
    if everyday and found.sites and all(s.is_test for s in found.sites):
        found.sites = []  # a test's string literal is evidence of nothing when the code answers
    raised_here = bool(found.sites) and not found.sites[0].is_test
    if raised_here or found.frames:  # the raise site first
        out.append(Answer(render.origins(found), _pick("repowise", roles), _origin_extras(found)))
    out.extend(Answer(text, _pick("repowise", roles), extras) for text, extras in everyday)
    if found.sites and not raised_here and not found.frames and not everyday:
        out.append(Answer(render.origins(found), _pick("repowise", roles), _origin_extras(found)))
    if explained := diagnose(conn, root, intent.text):
        out.append(Answer(explained, _pick("repowise", roles), {"answer": "import_error"}))
    seen: set[tuple[int, int | None]] = set()
    for name in intent.candidates:
        found = q.lookup(conn, name, root, fuzzy=False)
        if found.match in ("case-insensitive", "module-suffix") or len(found.targets) > 3:
            continue  # too loose for text nobody addressed to us
        for target in found.targets[:1]:
            key = (target.file_id, target.symbol_id)
            if key in seen:
                continue
            seen.add(key)
            if "repowise" in roles:
                out.append(Answer(card(conn, target), "repowise", _extras(target, "lookup")))
            elif "memgraph" in roles:
                out.append(_one(conn, Intent("blast", name), target, roles))
        if len(out) >= limit:
            break
    if not out and _reads_like_a_question(intent.text):
        return _concepts(conn, intent.text, roles, limit)
    return out


def _everyday(conn: sqlite3.Connection, root: Path, text: str) -> list[tuple[str, dict]]:
    """The everyday errors the code answers without learnings: a missing module or package, a missing
    command, a failing test by its id (each says which kind of answer it is)."""
    from recall_agent.architecture import commands, failing, missing

    out = []
    for found in (
        missing.answer(conn, root, text),
        commands.answer(root, text),
        failing.answer(conn, root, text),
    ):
        if found:
            out.append(found)
    return out


def _origin_extras(found: Origins) -> dict:
    first = found.sites[0] if found.sites else None
    target = first.path if first else found.frames[0].repo_path
    location = f"{first.path}:{first.line}" if first else f"{target}:{found.frames[0].line}"
    return {
        "answer": "error_origin",
        "target": (first.scope or first.path) if first else target,
        "location": location,
        "kind": "raise site" if first else "frame",
        "sites": [
            {"file": h.path, "line": h.line, "scope": h.scope, "kind": h.kind, "matched": h.matched}
            for h in found.sites[:5]
        ],
        "frames": [{"file": f.repo_path, "line": f.line, "function": f.func} for f in found.frames[:10]],
    }


def _file_described(conn: sqlite3.Connection, subject: str) -> list[q.Target]:
    """The one file a subject in words names: it carries every word and scores well ahead of the next."""
    from recall_agent.architecture import concepts

    hits = concepts.search(conn, subject, limit=2)
    wanted = concepts.terms(subject)
    if not hits or len(hits[0].matched) < len(wanted):
        return []
    if len(hits) > 1 and hits[0].score < DESCRIBED_LEAD * hits[1].score:
        return []
    return q.lookup(conn, hits[0].path, fuzzy=False).targets[:1]


DESCRIBED_LEAD = 1.5  # how far ahead of the next file the described one must score


def _reads_like_a_question(text: str) -> bool:
    """A question or phrase about the code, not an error message: every plain `recall "<error>"` reaches
    this engine too, and an error's words ("Connection reset by peer") are not a request to search."""
    if not 2 <= len(text.split()) <= 40 or ":" in text or "Traceback" in text:
        return False
    return not any(
        w[:1].isupper() and w.endswith(("Error", "Exception", "Warning")) for w in _WORD.findall(text)
    )


def _concepts(conn: sqlite3.Connection, text: str, roles: set[str], limit: int) -> list[Answer]:
    """Files and symbols about a question asked in words ("where are session cookies signed")."""
    from recall_agent.architecture import concepts

    hits = concepts.search(conn, text, limit=max(limit, 5))
    if not hits:
        return []
    extras = {"answer": "concepts", "target": hits[0].path, "location": hits[0].path, "kind": "file"}
    extras["files"] = [h.path for h in hits]
    return [Answer(render.concepts(text, hits), _pick("repowise", roles), extras)]


def graph_root(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
    return row[0] if row else "."


def _history(conn: sqlite3.Connection, root: Path, intent: Intent, roles: set[str]) -> list[Answer]:
    """Questions the history answers (evolution.py); without history, the graph's answer and a note."""
    from recall_agent.architecture import evolution

    role = _pick(intent.role, roles)
    opened = evolution.open_history(root)
    try:
        if opened.h is None and intent.action in ("cochange", "hotspots", "owners"):
            return _without_history(conn, root, intent, roles, opened.note)
        if intent.action == "cochange":
            reply = evolution.cochange_answer(conn, opened, intent.subject, root)
        elif intent.action == "hotspots":
            reply = evolution.hotspots_answer(opened, q.clean_subject(intent.subject, root), root)
        elif intent.action == "owners":
            reply = evolution.owners_answer(conn, opened, intent.subject, root)
        elif intent.action == "risk":
            reply = evolution.risk_answer(conn, opened, intent.subject, root)
        else:
            reply = evolution.tests_answer(conn, opened, intent.subject, root)
    finally:
        opened.close()
    content = reply.content + (f"\nNote: {opened.note}." if opened.note else "")
    return [Answer(content, role, {"answer": reply.action, **reply.extras})]


def _without_history(
    conn: sqlite3.Connection, root: Path, intent: Intent, roles: set[str], note: str
) -> list[Answer]:
    """No history to read: what changes with a file falls back to its blast radius; hotspots and owners
    have no static answer, so the note is the answer."""
    why = f"Note: {note}; this answer comes from the import graph alone."
    if intent.action == "cochange":
        found = q.lookup(conn, intent.subject, root)
        if found.targets:
            answer = _one(conn, Intent("blast", intent.subject), found.targets[0], roles)
            answer.content = f"{answer.content}\n{why}"
            answer.extras["history"] = note
            return [answer]
    return [
        Answer(
            f"No history to answer from: {note}.",
            _pick(intent.role, roles),
            {"answer": intent.action, "history": note},
        )
    ]
