"""Answers from the repository's history: what changes with a file, hotspots, who knows it, what is risky
in a change and which tests to run for it. Each answer joins the history store (history.py) to the code
graph where it helps (imports, tests reaching a file), and says so when there is no history to use.

A question keeps the history current like the code index: a new commit is walked on the spot (up to
`QUERY_WALK_MAX` of them within `QUERY_BUDGET` seconds); a longer history waits for `recall index`.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from recall_agent import worktree
from recall_agent.architecture import churn, cochange, history, render
from recall_agent.architecture import queries as q
from recall_agent.architecture.target import Target

QUERY_BUDGET = 3.0  # seconds a question may spend walking new commits
QUERY_WALK_MAX = 5_000  # new commits a question walks itself; more waits for `recall index`
PARTNERS_SHOWN = 8
BLAST_PARTNERS = 5
# usual partners missing from a change: the model's first three (the benchmark's top 3 holds a file of
# the change for 64-66 % of commits), unless their chance is too small to mention
LEFT_OUT_SHOWN = 3
LEFT_OUT_FLOOR = 0.1
TEST_REACH_DEPTH = 3
_REV_CHARS = re.compile(r"[\w./@^~{}-]{1,400}")


def is_range(text: str) -> bool:
    """`A..B`, `A...B`, `main..` — what `git log` takes as a range of commits."""
    return ".." in text and bool(_REV_CHARS.fullmatch(text))


@dataclass
class Opened:
    """The history of a repository for one question, or why there is none (`note`)."""

    h: cochange.History | None
    line: int = 0
    note: str = ""
    conn: sqlite3.Connection | None = None
    prefix: str | None = None  # the root's folder inside the work tree (None: not asked yet)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def open_history(root: Path, *, walk: bool = True) -> Opened:
    """The history store of `root`, brought up to HEAD when that is quick; a note instead when it cannot be."""
    repo = history.inspect(root)
    if not repo.usable:
        return Opened(None, note=repo.note, prefix=repo.prefix)
    store = history.store_path(root)
    note = ""
    if walk:
        pending = _pending(root, store, repo.head)
        if pending == 0:
            pass  # current
        elif pending is None or pending <= QUERY_WALK_MAX:
            stats = history.update(root, budget=QUERY_BUDGET, repo=repo)
            if stats.partial:
                note = "the history is still being read (run `recall index` once to finish it)"
        else:
            note = f"{pending:,}+ commits are not read yet: run `recall index` once to read the history"
    if not store.exists():
        return Opened(None, note=note or "the history is not indexed yet (run `recall index`)")
    conn = history.connect(store)
    h = cochange.History(conn)
    commits = conn.execute("SELECT count(*) FROM (SELECT 1 FROM commits WHERE merge = 0 LIMIT 2)").fetchone()[
        0
    ]
    if commits < 2:
        conn.close()
        return Opened(
            None,
            note=f"{root.name} has {commits} commit{'s' if commits != 1 else ''}: no history to learn from yet",
        )
    return Opened(h, int(history.meta(conn, "line") or 0), note, conn, prefix=repo.prefix)


def _pending(root: Path, store: Path, head: str) -> int | None:
    """Commits a question would have to walk (capped at QUERY_WALK_MAX + 1): 0 when the store is current,
    None when git cannot say."""
    last = None
    if store.exists():
        conn = history.connect(store)
        try:
            last = history.meta(conn, "last")
        finally:
            conn.close()
    if last == head:
        return 0
    rev = f"{last}..{head}" if last else head
    try:
        proc = history.git(root, "log", "--format=%h", f"--max-count={QUERY_WALK_MAX + 1}", rev)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return len(proc.stdout.split()) if proc.returncode == 0 else None


# --------------------------------------------------------------------------- the graph, in history files


class IndexGraph:
    """The code index's import graph seen through history files (current paths on HEAD's line)."""

    def __init__(self, code: sqlite3.Connection, h: cochange.History, line: int) -> None:
        self.code, self.h, self.line = code, h, line
        self._reach: dict[int, set[int]] = {}

    def file_of(self, path: str) -> int | None:
        row = self.h.conn.execute(
            "SELECT f.id FROM files f JOIN paths p ON p.id = f.path WHERE p.path = ? AND f.alive AND f.line = ?",
            (path, self.line),
        ).fetchone()
        return row[0] if row else None

    def _files_of(self, paths: list[str]) -> set[int]:
        return {f for p in paths if (f := self.file_of(p)) is not None}

    def _target(self, file: int) -> Target | None:
        path = self.h.paths([file]).get(file)
        found = q.lookup(self.code, path, fuzzy=False).targets if path else []
        return next((t for t in found if t.is_file and t.path == path), None)

    def neighbors(self, file: int) -> set[int]:
        target = self._target(file)
        if target is None:
            return set()
        paths = [
            r[0]
            for r in self.code.execute(
                "SELECT f.path FROM edges e JOIN files f ON f.id = e.dst WHERE e.src = ?"
                " UNION SELECT f.path FROM edges e JOIN files f ON f.id = e.src WHERE e.dst = ?",
                (target.file_id, target.file_id),
            )
        ]
        return self._files_of(paths) - {file}

    def tests_reaching(self, file: int) -> set[int]:
        if file not in self._reach:
            target = self._target(file)
            radius = q.blast_radius(self.code, target, TEST_REACH_DEPTH) if target else []
            self._reach[file] = self._files_of([d.path for d in radius if d.is_test])
        return self._reach[file]


# --------------------------------------------------------------------------- answers


@dataclass
class Reply:
    content: str
    action: str
    extras: dict = field(default_factory=dict)


def _subject_file(
    code: sqlite3.Connection, graph: IndexGraph, subject: str, root: Path
) -> tuple[int | None, str, str]:
    """(history file, its path, how the subject was read) for a path, module or symbol named in a question."""
    text = q.clean_subject(subject, root)
    file = graph.file_of(text)
    if file is not None:
        return file, text, ""
    found = q.lookup(code, text, root)
    if found.targets:
        t = found.targets[0]
        how = "" if t.is_file else f"`{t.display}` is in {t.path}; history is kept per file"
        return graph.file_of(t.path), t.path, how
    rows = graph.h.conn.execute(
        "SELECT f.id, p.path FROM files f JOIN paths p ON p.id = f.path WHERE f.alive AND f.line = ?"
        " AND substr(p.path, -?) = ? ORDER BY length(p.path) LIMIT 2",
        (graph.line, len(text) + 1, "/" + text),
    ).fetchall()
    if len(rows) == 1:
        return rows[0][0], rows[0][1], ""
    return None, text, ""


def cochange_answer(code: sqlite3.Connection, opened: Opened, subject: str, root: Path) -> Reply:
    h = opened.h
    graph = IndexGraph(code, h, opened.line)
    file, path, how = _subject_file(code, graph, subject, root)
    if file is None:
        return Reply(
            f"No commit in the history of {root.name} touches `{path}`.", "cochange", {"target": path}
        )
    found = cochange.partners(h, [file], graph, limit=PARTNERS_SHOWN)
    commits = h.commits_of(file)
    content = render.cochange(path, len(commits), commits[-1][1] if commits else 0, found, how)
    extras = {
        "target": path,
        "location": path,
        "kind": "file",
        "partners": [p.path for p in found],
        "without_import": [p.path for p in found if not p.imports],
    }
    return Reply(content, "cochange", extras)


def blast_line(code: sqlite3.Connection, root: Path, target: Target) -> str:
    """The blast radius answer's "Changes with it" line ("" when there is no history to read)."""
    opened = open_history(root)
    try:
        if opened.h is None:
            return ""
        graph = IndexGraph(code, opened.h, opened.line)
        file = graph.file_of(target.path)
        if file is None:
            return ""
        partners = cochange.partners(opened.h, [file], graph, limit=BLAST_PARTNERS)
        return render.changes_with(partners, target.path)
    finally:
        opened.close()


def hotspots_answer(opened: Opened, within: str, root: Path) -> Reply:
    prefix = within.strip().strip("/").replace("\\", "/")
    ranked = churn.hotspots(opened.h, opened.line, prefix)
    scope = f"{root.name}/{prefix}" if prefix else root.name
    content = render.hotspots(scope, ranked, churn.HOT_P)
    hot = [s.path for s in ranked if s.p_fix >= churn.HOT_P]
    return Reply(content, "hotspots", {"target": scope, "hotspots": hot, "files": len(ranked)})


def owners_answer(code: sqlite3.Connection, opened: Opened, subject: str, root: Path) -> Reply:
    h = opened.h
    graph = IndexGraph(code, h, opened.line)
    text = q.clean_subject(subject, root).strip("/")
    folder = churn.current_files(h, opened.line, text) if graph.file_of(text) is None else {}
    file, path, how = _subject_file(code, graph, text, root) if text and not folder else (None, "", "")
    if file is not None:
        files, scope = [file], path
    else:
        if not folder:
            return Reply(
                f"No commit in the history of {root.name} touches `{text}`.", "owners", {"target": text}
            )
        files, scope = list(folder), (f"{text}/" if text else root.name)
    found, total = churn.owners(h, files if text else None)
    factor = churn.bus_factor(found, total)
    content = render.owners(scope, found, total, factor, h.now, how)
    return Reply(
        content, "owners", {"target": scope, "owners": [o.name for o in found[:5]], "bus_factor": factor}
    )


# --------------------------------------------------------------------------- a change: risk and tests


@dataclass
class Change:
    label: str  # "the working tree", "main..HEAD"
    paths: list[str]
    new: list[str] = field(default_factory=list)  # paths no commit has touched yet
    note: str = ""


def working_change(root: Path, rev: str = "", prefix: str | None = None) -> Change:
    """The uncommitted changes (staged, unstaged, untracked) or the files of a range of commits."""
    if rev:
        if not is_range(rev):
            return Change(rev, [], note=f"`{rev}` is not a range of commits (write it as A..B)")
        proc = history.git(root, "log", "--format=", "--name-only", "-z", "--relative", rev, "--", ".")
        if proc.returncode != 0:
            first = next((ln for ln in proc.stderr.splitlines() if ln.strip()), "")
            return Change(rev, [], note=f"git cannot read `{rev}`: {first.strip()[:200]}")
        paths = sorted({p.strip("\n") for p in proc.stdout.split("\0") if p.strip("\n")})
        return Change(rev, paths)
    entries = worktree.status(root, history.GIT_TIMEOUT, "--", ".")
    if entries is None:
        return Change("the working tree", [], note="git status failed")
    if prefix is None:
        prefix = _prefix(root)  # status names files from the work tree's top; a subfolder root drops it
    paths = {path[len(prefix) :] for _, path in entries if path.startswith(prefix)}
    return Change("the working tree", sorted(paths))


def change_of(code: sqlite3.Connection, root: Path, subject: str, prefix: str | None = None) -> Change:
    """What a question calls "the change": the working tree (no subject, "my change"), a range of commits
    (`main..HEAD`), or one file (a path, module or symbol)."""
    text = q.clean_subject(subject, root) if subject else ""
    if not text:
        return working_change(root, prefix=prefix)
    if is_range(text):
        return working_change(root, text)
    target = next(iter(q.lookup(code, text, root).targets), None)
    path = target.path if target is not None else text
    return Change(f"`{path}`", [path])


def _prefix(root: Path) -> str:
    proc = history.git(root, "rev-parse", "--show-prefix")
    return proc.stdout.strip() if proc.returncode == 0 else ""


def risk_answer(code: sqlite3.Connection, opened: Opened, rev: str, root: Path) -> Reply:
    """The change's usual partners left out, hotspots and fixes (with history), dependents and tests."""
    h = opened.h
    change = change_of(code, root, rev, opened.prefix)
    if change.note or not change.paths:
        text = change.note or f"No changes in {change.label} of {root.name}."
        return Reply(text, "risk", {"target": change.label, "files": []})
    graph = IndexGraph(code, h, opened.line) if h is not None else None
    files = {p: graph.file_of(p) if graph else None for p in change.paths}
    known = [f for f in files.values() if f is not None]
    left_out: list[cochange.Partner] = []
    ranked: list[cochange.Partner] = []
    stats: list[churn.FileStats] = []
    if h is not None:
        change.new = [p for p, f in files.items() if f is None]
        if known:
            ranked = cochange.partners(h, known, graph, limit=None)
            left_out = [p for p in ranked[:LEFT_OUT_SHOWN] if p.score >= LEFT_OUT_FLOOR]
            stats = churn.score(churn.file_stats(h, {f: p for p, f in files.items() if f is not None}), h.now)
    radii = {p: q.blast_radius(code, t) for p in change.paths if (t := _file_target(code, p)) is not None}
    tests = tests_for(code, change.paths, ranked, radii)
    radius = {p: len(r) for p, r in radii.items()}
    content = render.risk(change.label, change.paths, change.new, left_out, stats, radius, tests, churn.HOT_P)
    extras = {
        "target": change.label,
        "files": change.paths,
        "left_out": [p.path for p in left_out],
        "hotspots": [s.path for s in stats if s.p_fix >= churn.HOT_P],
        "tests": [t.path for t in tests],
    }
    return Reply(content, "risk", extras)


def _file_target(code: sqlite3.Connection, path: str) -> Target | None:
    found = q.lookup(code, path, fuzzy=False).targets
    return next((t for t in found if t.is_file and t.path == path), None)


@dataclass
class TestToRun:
    path: str
    score: float  # the co-change model's probability (0: only the graph reaches it)
    how: str  # "imports it", "transitive (depth 2)", …; "" when only history links it
    together: int  # commits it shared with the changed files


def tests_for(
    code: sqlite3.Connection, paths: list[str], ranked: list[cochange.Partner], radii: dict | None = None
) -> list[TestToRun]:
    """Tests for changed files: the tests among the files the model ranks for them (`ranked`: history and
    imports together) first, then the ones only the import graph reaches, nearest first (`radii`: blast
    radii already computed, by path)."""
    out: dict[str, TestToRun] = {}
    reach = cochange.FEATURES.index("test_reach")
    for p in ranked:
        if p.is_test and (p.support or p.features[reach]):
            out[p.path] = TestToRun(p.path, p.score, "", p.support)
    for path in paths:
        target = _file_target(code, path)
        if target is None:
            continue
        if target.is_test:
            out.setdefault(path, TestToRun(path, 1.0, "changed", 0))
            continue
        for d in q.tests_touching(code, target, (radii or {}).get(path)):
            how = d.how if d.how != q.TEST_TRANSITIVE else f"depth {d.depth}"
            t = out.setdefault(d.path, TestToRun(d.path, 0.0, how, 0))
            t.how = t.how or how
    return sorted(out.values(), key=lambda t: (-t.score, t.how == "", t.path))


def tests_answer(code: sqlite3.Connection, opened: Opened, subject: str, root: Path) -> Reply:
    """Tests for a file, a range of commits or (by default) the working tree's changes."""
    h = opened.h
    graph = IndexGraph(code, h, opened.line) if h is not None else None
    change = change_of(code, root, subject, opened.prefix)
    if change.note or not change.paths:
        return Reply(
            change.note or f"No changes in {change.label} of {root.name}.", "tests_to_run", {"tests": []}
        )
    known = [f for p in change.paths if graph is not None and (f := graph.file_of(p)) is not None]
    ranked = cochange.partners(h, known, graph, limit=None) if h is not None and known else []
    tests = tests_for(code, change.paths, ranked)
    content = render.tests_to_run(change.label, change.paths, tests)
    return Reply(content, "tests_to_run", {"target": change.label, "tests": [t.path for t in tests]})
