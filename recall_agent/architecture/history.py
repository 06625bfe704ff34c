"""A repository's git history, from one streamed `git log`, in its own SQLite file next to the code graph.

Per file (a *lineage*: renames followed through the log's rename records, so `a.py` renamed to `b.py` is one
file) it keeps every commit that touched it, with the commit's time, author (the name git records, after
`.mailmap`), size (files in the commit) and whether it was a fix (its message, an issue it closes, or a
merged branch named like a fix). Merge commits carry no changes; bulk commits (more than `PAIR_CUTOFF`
files, or a reformat by their message) are kept but make no pairs, no churn and no ownership; vendored and
generated paths (lock files, `vendor/`, minified, protobuf output) are not stored at all.

The walk runs oldest first (`--reverse`), so an update after new commits only walks `last..HEAD`, an
interrupted walk continues where it stopped, and a rewritten history (rebase, branch switch) undoes the
commits that left it before adding the new ones. Only the newest `MAX_COMMITS` commits are read.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA_VERSION = "2"
MAX_COMMITS = int(os.environ.get("RECALL_HISTORY_MAX_COMMITS", 100_000))
# A commit touching more files than this makes no co-change pairs: mass renames, reformatting, licence
# headers and imports of vendored code say nothing about which files belong together, and one such commit
# of n files makes n(n-1)/2 pairs. The value was chosen on the tuning half of the history benchmark
# (docs/benchmarks.md, "History"); code-maat drops commits over 30 files, repowise over 200.
PAIR_CUTOFF = int(os.environ.get("RECALL_HISTORY_PAIR_CUTOFF", 50))
BATCH = 2_000  # commits per committed transaction: an interrupted walk keeps its work
# git maps whole packs and caches delta bases by default (450 MB resident on git.git's 500 MB of packs);
# these caps keep it near 150 MB and make the walk faster, not slower
GIT_MEMORY = (
    "-c",
    "core.packedGitLimit=64m",
    "-c",
    "core.packedGitWindowSize=8m",
    "-c",
    "core.deltaBaseCacheLimit=16m",
    "-c",
    "diff.renameLimit=1000",
)
GIT_TIMEOUT = 10.0  # seconds for the small git calls (HEAD, status)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS commits (
    id INTEGER PRIMARY KEY,          -- walk order: a parent always has a smaller id than its children
    sha TEXT NOT NULL UNIQUE,
    time INTEGER NOT NULL,           -- author time, unix seconds
    author INTEGER NOT NULL,
    files INTEGER NOT NULL,          -- files the commit touched (vendored ones included)
    fix INTEGER NOT NULL DEFAULT 0,  -- 1: its message says fix; 2: merged from a fix branch
    bulk INTEGER NOT NULL DEFAULT 0, -- 1: over PAIR_CUTOFF files or a reformat: no pairs, churn, ownership
    merge INTEGER NOT NULL DEFAULT 0,
    parent INTEGER,                  -- first parent's id (NULL: outside the walked window)
    children INTEGER NOT NULL DEFAULT 0,
    line INTEGER NOT NULL DEFAULT 0  -- history line: a root commit starts one, a commit joins its parent's
);
CREATE INDEX IF NOT EXISTS commits_time ON commits(time);
CREATE TABLE IF NOT EXISTS paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,          -- a lineage: one file through its renames
    path INTEGER NOT NULL,           -- its current name (the last one, when deleted)
    alive INTEGER NOT NULL DEFAULT 1,
    line INTEGER NOT NULL DEFAULT 0  -- the history line whose names it follows
);
CREATE INDEX IF NOT EXISTS files_path ON files(path);
CREATE TABLE IF NOT EXISTS changes (
    file INTEGER NOT NULL,
    commit_id INTEGER NOT NULL,
    status TEXT NOT NULL,            -- A M D R T
    path INTEGER NOT NULL,           -- the name in that commit
    old INTEGER,                     -- for R: the name before
    -- copied from the commit, so counts per file or author need no join (git.git: 330 ms → 50 ms)
    bulk INTEGER NOT NULL DEFAULT 0,
    time INTEGER NOT NULL DEFAULT 0,
    author INTEGER NOT NULL DEFAULT 0,
    fix INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (file, commit_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS changes_commit ON changes(commit_id, file);
"""

_FORMAT = "%x01%H%x1f%at%x1f%aN%x1f%P%x1f%s%x1f%b"

# vendored and generated paths: never stored (they change with everything and belong to nobody)
VENDORED_DIRS = frozenset(
    {"node_modules", "bower_components", "vendor", "vendors", "third_party", "third-party", "site-packages"}
)
LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        "mix.lock",
        "flake.lock",
    }
)
_GENERATED = re.compile(
    r"(?:[.-]min\.(?:js|mjs|cjs|css)|_pb2(?:_grpc)?\.pyi?|\.pb\.(?:go|cc|h)|\.generated\.\w+)$"
)

# a fix, by its subject (the SZZ keywords), a closing reference or a Fixes: trailer in its body
_FIX_SUBJECT = re.compile(
    r"\b(?:fix(?:e[sd]|ing)?|bug(?:fix)?s?|hotfix|regression|crash(?:es|ed|ing)?|segfault|revert(?:s|ed)?"
    r"|broken|leaks?)\b",
    re.IGNORECASE,
)
_FIX_BODY = re.compile(
    r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s*(?:#|gh-|[A-Z][A-Z0-9]+-)\d+|^Fixes:\s*[0-9a-f]{7,40}\b",
    re.IGNORECASE | re.MULTILINE,
)
_BULK_SUBJECT = re.compile(
    r"^\s*style(?:\([^)]{0,80}\))?:|\b(?:re-?format(?:ted|ting|s)?|auto-?format(?:ted|ting)?"
    r"|(?:apply|run|ran|use)\s+(?:black|prettier|ruff\s+format|gofmt|clang-format|rustfmt|isort|yapf|autopep8)"
    r"|whitespace\s+(?:cleanup|fix(?:es)?)|licen[cs]e\s+headers?|copyright\s+(?:years?|headers?))\b",
    re.IGNORECASE,
)
_MERGED_BRANCH = re.compile(
    r"^Merge (?:(?:remote-tracking )?branch '([^']{1,200})'|pull request #\d+ from (\S{1,200}))"
)
_FIX_BRANCH = re.compile(r"(?:^|[/_.-])(?:fix|fixes|bugfix|hotfix|bug)(?:[/_.-]|$)", re.IGNORECASE)
FIX_BRANCH_DEPTH = 200  # commits followed back from a merged fix branch's tip


def is_vendored(path: str) -> bool:
    parts = path.split("/")
    if parts[-1] in LOCK_FILES or _GENERATED.search(parts[-1]):
        return True
    return any(p in VENDORED_DIRS for p in parts[:-1])


def is_fix(subject: str, body: str) -> bool:
    return bool(_FIX_SUBJECT.search(subject) or _FIX_BODY.search(body))


def is_bulk(subject: str, files: int) -> bool:
    return files > PAIR_CUTOFF or bool(_BULK_SUBJECT.search(subject))


def fix_branch(subject: str) -> bool:
    """A merge of a branch named like a fix (`Merge branch 'jk/fix-leak'`, `… from user/bugfix-42`)."""
    m = _MERGED_BRANCH.match(subject)
    return bool(m and _FIX_BRANCH.search(m.group(1) or m.group(2)))


# --------------------------------------------------------------------------- repository state


@dataclass
class Repo:
    """What git says about the folder: where history is, or why there is none (`note`)."""

    root: Path
    head: str = ""
    shallow: bool = False
    prefix: str = ""  # the folder's path inside the git work tree ("" at the top)
    note: str = ""  # non-empty: no usable history, and why

    @property
    def usable(self) -> bool:
        return not self.note


def git(root: Path, *args: str, timeout: float = GIT_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "core.quotepath=off", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
    )


def inspect(root: Path) -> Repo:
    """HEAD and shallowness of the repository at `root`, or a note saying why history cannot be read."""
    repo = Repo(root)
    if shutil.which("git") is None:
        repo.note = "git is not installed, so there is no history to read"
        return repo
    try:
        proc = git(root, "rev-parse", "--is-shallow-repository", "--show-prefix", "HEAD")
    except (OSError, subprocess.TimeoutExpired) as exc:
        repo.note = f"git did not answer ({exc.__class__.__name__})"
        return repo
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) < 3:
        err = next((ln for ln in proc.stderr.splitlines() if ln.strip()), "")
        if "not a git repository (or any" in err:
            repo.note = f"{root.name} is not a git repository"
        elif "unknown revision" in err or "ambiguous argument 'HEAD'" in err:
            repo.note = f"{root.name} has no commits yet"
        else:
            repo.note = f"git cannot read this repository's history ({err.strip()[:200] or 'no HEAD'})"
        return repo
    repo.shallow, repo.prefix, repo.head = lines[0] == "true", lines[1], lines[2]
    if repo.shallow:
        repo.note = (
            f"{root.name} is a shallow clone: its history is cut, so co-changes, hotspots and owners would "
            "mislead (`git fetch --unshallow` brings the rest)"
        )
    return repo


# --------------------------------------------------------------------------- store


def store_path(root: Path, home: Path | None = None) -> Path:
    from recall_agent.architecture import graph

    return graph.store_path(root, home).with_suffix(".history.sqlite")


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA synchronous=NORMAL")
    version = _meta(conn, "schema") if _has_meta(conn) else None
    if version == SCHEMA_VERSION:
        return conn
    conn.execute("PRAGMA journal_mode=WAL")
    if version is not None:  # an older layout: it is a cache, start again
        _drop(conn)
    conn.executescript(SCHEMA)
    _set_meta(conn, "schema", SCHEMA_VERSION)
    return conn


def _drop(conn: sqlite3.Connection) -> None:
    for table in ("changes", "files", "paths", "commits", "authors", "meta"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")


def _has_meta(conn: sqlite3.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone())


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    return _meta(conn, key)


# --------------------------------------------------------------------------- the walk


@dataclass
class Commit:
    sha: str
    time: int
    author: str
    parents: list[str]
    subject: str
    body: str
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (status, path, old path or "")


def parse_log(stream, chunk: int = 1 << 20):
    """Commits from `git log -z --name-status --format=<_FORMAT>` output, one at a time (bounded memory)."""
    current: Commit | None = None
    pending: list[str] = []  # status, then its path(s)
    rest = b""
    while True:
        data = stream.read(chunk)
        if not data:
            break
        tokens = (rest + data).split(b"\0")
        rest = tokens.pop()
        for raw in tokens:
            current = _token(raw.decode("utf-8", "replace"), current, pending)
            if isinstance(current, tuple):
                done, current = current
                yield done
    if rest:
        current = _token(rest.decode("utf-8", "replace"), current, pending)
        if isinstance(current, tuple):
            done, current = current
            yield done
    if current is not None:
        yield current


def _token(tok: str, current, pending: list[str]):
    """Feed one NUL-separated token; returns the commit being read, or (finished commit, new commit)."""
    tok = tok.lstrip("\n")
    if tok.startswith("\x01"):
        sha, at, author, parents, subject, body = (tok[1:].split("\x1f", 5) + [""] * 6)[:6]
        new = Commit(sha, int(at or 0), author, parents.split(), subject, body)
        pending.clear()
        return (current, new) if current is not None else new
    if current is None or not tok:
        return current
    if not pending:
        pending.append(tok)
        return current
    status = pending[0]
    if status[:1] in "RC" and len(pending) == 1:
        pending.append(tok)  # the old name; the new one follows
        return current
    old = pending[1] if len(pending) > 1 else ""
    current.changes.append((status[:1], tok, old))
    pending.clear()
    return current


@dataclass
class HistoryStats:
    root: Path
    store: Path
    note: str = ""  # why there is no history (no git, shallow, no commits), else ""
    commits: int = 0  # commits in the store
    added: int = 0  # commits walked this time
    removed: int = 0  # commits undone (a rewritten history)
    files: int = 0
    rebuilt: bool = False
    partial: bool = False  # stopped by the time budget; the next run continues
    seconds: float = 0.0
    head: str = ""


class _Walk:
    """One walk's state: current names → lineages, path/author/commit ids, rows waiting for the next flush."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.paths: dict[str, int] = {}
        self.authors: dict[str, int] = dict(conn.execute("SELECT name, id FROM authors"))
        # names are per history line: an unrelated history merged in as a subtree (git.git's git-gui and
        # gitk, with their own root Makefile) must not take over the main line's files
        self.names: dict[tuple[int, str], int] = {
            (line, p): f
            for f, p, line in conn.execute(
                "SELECT f.id, p.path, f.line FROM files f JOIN paths p ON p.id = f.path WHERE alive"
            )
        }
        self.line = 0  # the history line of the commit being added
        self.line_of: dict[int, int] = {}  # this walk's commits
        self.next_line = (conn.execute("SELECT max(line) FROM commits").fetchone()[0] or 0) + 1
        self.next_file = (conn.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1
        self.next_commit = (conn.execute("SELECT max(id) FROM commits").fetchone()[0] or 0) + 1
        self.ids: dict[str, int] = {}  # sha -> id, this walk's commits (older ones are looked up)
        self.parent_of: dict[int, int | None] = {}  # this walk's commits
        self.kids: dict[int, int] = {}  # children counted in this walk, per commit
        self.kids_new: dict[int, int] = {}  # ... not yet written
        self.touched: dict[int, tuple[str, bool, int]] = {}  # lineage -> (current name, alive, line)
        self.rows_commits: list[tuple] = []
        self.rows_changes: list[tuple] = []
        self.fix_marks: set[int] = set()
        self.last = ""

    def path_id(self, path: str) -> int:
        pid = self.paths.get(path)
        if pid is None:
            row = self.conn.execute("SELECT id FROM paths WHERE path = ?", (path,)).fetchone()
            pid = (
                row[0] if row else self.conn.execute("INSERT INTO paths(path) VALUES (?)", (path,)).lastrowid
            )
            self.paths[path] = pid
        return pid

    def author_id(self, name: str) -> int:
        aid = self.authors.get(name)
        if aid is None:
            aid = self.conn.execute("INSERT INTO authors(name) VALUES (?)", (name,)).lastrowid
            self.authors[name] = aid
        return aid

    def commit_id(self, sha: str) -> int | None:
        cid = self.ids.get(sha)
        if cid is None:
            row = self.conn.execute("SELECT id FROM commits WHERE sha = ?", (sha,)).fetchone()
            cid = row[0] if row else None
        return cid

    def lineage(self, status: str, path: str, old: str) -> int:
        """The file a change belongs to, moving names along renames (commits come oldest first)."""
        line = self.line
        if status == "R":
            lid = self.names.pop((line, old), None) or self._new()
        elif status == "A":
            lid = self._new()
        else:
            lid = self.names.get((line, path)) or self._new()
        if status == "D":
            self.names.pop((line, path), None)
            self.touched[lid] = (path, False, line)
            return lid
        replaced = self.names.get((line, path))
        if replaced is not None and replaced != lid:  # a name taken over without a deletion first
            self.touched[replaced] = (path, False, line)
        self.names[(line, path)] = lid
        self.touched[lid] = (path, True, line)
        return lid

    def _new(self) -> int:
        lid = self.next_file
        self.next_file += 1
        return lid

    def add(self, c: Commit) -> None:
        cid = self.next_commit
        self.next_commit += 1
        self.ids[c.sha] = cid
        self.last = c.sha
        merge = len(c.parents) > 1
        parent_ids = [self.commit_id(p) for p in c.parents]
        self.parent_of[cid] = parent_ids[0] if parent_ids else None
        self.line = self._line(c, parent_ids)
        self.line_of[cid] = self.line
        for pid in parent_ids:
            if pid is not None:
                self.kids[pid] = self.kids.get(pid, 0) + 1
                self.kids_new[pid] = self.kids_new.get(pid, 0) + 1
        if merge and fix_branch(c.subject):
            self._mark_branch(parent_ids[1])
        bulk = int(is_bulk(c.subject, len(c.changes)))
        fix = int(not merge and is_fix(c.subject, c.body))
        author = self.author_id(c.author or "unknown")
        self.rows_commits.append(
            (
                cid,
                c.sha,
                c.time,
                author,
                len(c.changes),
                fix,
                bulk,
                int(merge),
                self.parent_of[cid],
                self.line,
            )
        )
        seen: set[int] = set()
        for status, path, old in c.changes:
            if is_vendored(path):
                continue
            lid = self.lineage(status, path, old)
            if lid not in seen:
                seen.add(lid)
                old_id = self.path_id(old) if old else None
                self.rows_changes.append(
                    (lid, cid, status, self.path_id(path), old_id, bulk, c.time, author, fix)
                )

    def _line(self, c: Commit, parent_ids: list[int | None]) -> int:
        """A root commit starts a history line; any other commit continues its first parent's (line 0 when
        that parent lies before the walked window)."""
        if not c.parents:
            line = self.next_line
            self.next_line += 1
            return line
        first = parent_ids[0]
        if first is None:
            return 0
        if first in self.line_of:
            return self.line_of[first]
        row = self.conn.execute("SELECT line FROM commits WHERE id = ?", (first,)).fetchone()
        return row[0] if row else 0

    def _mark_branch(self, cid: int | None) -> None:
        """Mark a merged fix branch: first parents back from its tip, up to the commit it forked from."""
        for _ in range(FIX_BRANCH_DEPTH):
            if cid is None or self._children(cid) > 1:
                return  # outside the window, or the fork point (it belongs to the mainline)
            self.fix_marks.add(cid)
            cid = self.parent_of[cid] if cid in self.parent_of else self._stored_parent(cid)

    def _children(self, cid: int) -> int:
        if cid in self.parent_of:  # a commit of this walk: all its children so far are counted here
            return self.kids.get(cid, 0)
        row = self.conn.execute("SELECT children FROM commits WHERE id = ?", (cid,)).fetchone()
        return (row[0] if row else 0) + self.kids.get(cid, 0)

    def _stored_parent(self, cid: int) -> int | None:
        row = self.conn.execute("SELECT parent FROM commits WHERE id = ?", (cid,)).fetchone()
        return row[0] if row else None

    def flush(self) -> None:
        conn = self.conn
        conn.executemany(
            "INSERT INTO commits(id, sha, time, author, files, fix, bulk, merge, parent, line)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            self.rows_commits,
        )
        conn.executemany(
            "INSERT OR IGNORE INTO changes(file, commit_id, status, path, old, bulk, time, author, fix)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            self.rows_changes,
        )
        conn.executemany(
            "UPDATE commits SET children = children + ? WHERE id = ?",
            [(n, c) for c, n in self.kids_new.items()],
        )
        marks = [(c,) for c in self.fix_marks]
        conn.executemany("UPDATE commits SET fix = fix | 2 WHERE id = ? AND merge = 0", marks)
        conn.executemany("UPDATE changes SET fix = fix | 2 WHERE commit_id = ?", marks)
        conn.executemany(
            "INSERT INTO files(id, path, alive, line) VALUES (?,?,?,?)"
            " ON CONFLICT(id) DO UPDATE SET path = excluded.path, alive = excluded.alive",
            [(lid, self.path_id(p), int(alive), line) for lid, (p, alive, line) in self.touched.items()],
        )
        if self.last:
            _set_meta(conn, "last", self.last)
        for rows in (self.rows_commits, self.rows_changes):
            rows.clear()
        self.kids_new.clear()
        self.fix_marks.clear()
        self.touched.clear()


def _log_command(rev: str, max_count: int | None, inside: bool) -> list[str]:
    """The one `git log`: oldest first, names and statuses with renames, NUL-separated. A folder below the
    work tree's top sees only its own files, named relative to it."""
    cmd = ["log", "--reverse", "--date-order", "--name-status", "-M", "-z", f"--format={_FORMAT}"]
    if max_count:
        cmd.append(f"--max-count={max_count}")
    return [*cmd, "--relative", rev, "--", "."] if inside else [*cmd, rev]


def _walk(
    conn: sqlite3.Connection,
    root: Path,
    rev: str,
    max_count: int | None,
    deadline: float | None,
    inside: bool,
) -> tuple[int, bool]:
    """Stream `git log` over `rev` into the store; returns (commits added, stopped early)."""
    walk = _Walk(conn)
    proc = subprocess.Popen(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "core.quotepath=off",
            *GIT_MEMORY,
            *_log_command(rev, max_count, inside),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
    )
    added, stopped = 0, False
    try:
        conn.execute("BEGIN IMMEDIATE")
        for commit in parse_log(proc.stdout):
            walk.add(commit)
            added += 1
            if added % BATCH == 0:
                walk.flush()
                conn.execute("COMMIT")
                if deadline is not None and time.monotonic() > deadline:
                    stopped = True
                    break
                conn.execute("BEGIN IMMEDIATE")
        else:
            walk.flush()
            conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        killed = proc.poll() is None
        if killed:
            proc.kill()
        proc.stdout.close()  # type: ignore[union-attr]
        code = proc.wait()
    if code != 0 and not killed:
        raise HistoryError(f"git log failed (exit {code}) on {rev}")
    return added, stopped


class HistoryError(Exception):
    """git could not walk the history (a revision vanished, the repository broke under us)."""


REWRITE_MAX = 5_000  # commits undone one by one after a rewrite; more than that, the store starts again


def update(
    root: Path,
    *,
    budget: float | None = None,
    max_commits: int = MAX_COMMITS,
    repo: Repo | None = None,
    full: bool = False,
) -> HistoryStats:
    """Bring the history store of `root` up to HEAD (or as far as `budget` seconds allow)."""
    started = time.monotonic()
    repo = repo or inspect(root)
    stats = HistoryStats(root, store_path(root), head=repo.head)
    if not repo.usable:
        stats.note = repo.note
        return stats
    conn = connect(stats.store)
    try:
        _bring_up_to_date(conn, root, repo, stats, started, budget, max_commits, full)
        fill(conn, stats)
    finally:
        conn.close()
    stats.seconds = time.monotonic() - started
    return stats


def _bring_up_to_date(
    conn, root: Path, repo: Repo, stats: HistoryStats, started: float, budget, max_commits, full
) -> None:
    if full:
        _reset(conn)
        stats.rebuilt = True
    last = _meta(conn, "last")
    if last == repo.head:
        return
    if last:
        gone = _revs(root, f"{repo.head}..{last}")
        if gone is None or len(gone) > REWRITE_MAX:  # the old tip vanished, or too much to undo
            _reset(conn)
            stats.rebuilt, last = True, None
        elif gone:
            stats.removed = _undo(conn, gone)
    deadline = started + budget if budget is not None else None
    rev = f"{last}..{repo.head}" if last else repo.head
    stats.added, stats.partial = _walk(
        conn, root, rev, None if last else max_commits, deadline, bool(repo.prefix)
    )
    _set_meta(conn, "root", str(root))
    _set_meta(conn, "head", repo.head if not stats.partial else _meta(conn, "last") or "")
    row = conn.execute("SELECT line FROM commits ORDER BY id DESC LIMIT 1").fetchone()
    _set_meta(conn, "line", str(row[0] if row else 0))  # HEAD's history line: the one current names follow
    _set_meta(conn, "indexed_at", str(time.time()))


def _count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM commits").fetchone()[0]


def _reset(conn: sqlite3.Connection) -> None:
    _drop(conn)
    conn.executescript(SCHEMA)
    _set_meta(conn, "schema", SCHEMA_VERSION)


def _revs(root: Path, rev: str) -> list[str] | None:
    """Commit hashes in `rev` (`a..b`), or None when git does not know one of its ends."""
    try:
        proc = git(root, "log", "--format=%H", rev, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.split() if proc.returncode == 0 else None


def _undo(conn: sqlite3.Connection, shas: list[str]) -> int:
    """Take commits that left the history (a rebase, another branch) out again, newest first, moving the
    names of their files back: a rename is undone, a deleted file lives again, an added one is gone."""
    ids = []
    for i in range(0, len(shas), 500):
        chunk = shas[i : i + 500]
        ids += [
            r[0]
            for r in conn.execute(
                f"SELECT id FROM commits WHERE sha IN ({','.join('?' * len(chunk))})", chunk
            )
        ]
    conn.execute("BEGIN IMMEDIATE")
    try:
        for cid in sorted(ids, reverse=True):
            for file, status, path, old in conn.execute(
                "SELECT file, status, path, old FROM changes WHERE commit_id = ?", (cid,)
            ).fetchall():
                if status == "A":
                    conn.execute("UPDATE files SET alive = 0 WHERE id = ?", (file,))
                elif status == "R" and old is not None:
                    conn.execute("UPDATE files SET path = ?, alive = 1 WHERE id = ?", (old, file))
                elif status == "D":
                    conn.execute("UPDATE files SET path = ?, alive = 1 WHERE id = ?", (path, file))
            conn.execute("DELETE FROM changes WHERE commit_id = ?", (cid,))
            parent = conn.execute("SELECT parent FROM commits WHERE id = ?", (cid,)).fetchone()
            if parent and parent[0] is not None:
                conn.execute("UPDATE commits SET children = max(children - 1, 0) WHERE id = ?", (parent[0],))
            conn.execute("DELETE FROM commits WHERE id = ?", (cid,))
        conn.execute("DELETE FROM files WHERE id NOT IN (SELECT DISTINCT file FROM changes)")
        last = conn.execute("SELECT sha FROM commits ORDER BY id DESC LIMIT 1").fetchone()
        if last:
            _set_meta(conn, "last", last[0])
        else:
            conn.execute("DELETE FROM meta WHERE key = 'last'")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(ids)


def fill(conn: sqlite3.Connection, stats: HistoryStats) -> None:
    stats.commits = _count(conn)
    stats.files = conn.execute("SELECT count(*) FROM files WHERE alive").fetchone()[0]
