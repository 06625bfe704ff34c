"""Questions over one repository's graph store: lookup, dependencies, dependents, blast radius, callers,
callees, import cycles, tests touching a file.

Imports are resolved at index time (edges between files). Calls are resolved here, at query time, because
it needs the whole graph: a call site named like a definition counts as a call to it with a confidence that
says how sure the match is (same file, an importing file, a unique name in the repository, or one of many).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from recall_agent.architecture import choice
from recall_agent.architecture.calltypes import Judge
from recall_agent.architecture.target import Target

CLASS_LIKE = ("class", "interface", "struct", "enum", "trait", "type")
MAX_DEPTH = 10
CLOSEST_POOL = 20_000  # names difflib compares an unknown subject with, at most
_KIND_ORDER = {"class": 0, "interface": 0, "struct": 0, "trait": 0, "enum": 1, "type": 1, "function": 2}


@dataclass
class Lookup:
    targets: list[Target]
    match: str  # exact, qualified, name, module-suffix, case-insensitive, none
    closest: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- lookup

_FILE_COLS = "f.id AS file_id, f.path, f.lang, f.module, f.is_test, f.lines, f.doc"
_SYM_COLS = _FILE_COLS + (
    ", s.id AS symbol_id, s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc AS sdoc"
)
_SUFFIX = re.compile(r"\.[A-Za-z+]{1,4}$")


def _file_target(row: sqlite3.Row) -> Target:
    return Target(
        row["file_id"],
        row["path"],
        row["lang"],
        row["module"],
        bool(row["is_test"]),
        row["lines"],
        row["doc"],
    )


def _sym_target(row: sqlite3.Row) -> Target:
    t = _file_target(row)
    t.symbol_id, t.name, t.qualname, t.kind = row["symbol_id"], row["name"], row["qualname"], row["kind"]
    t.line, t.end_line, t.signature, t.doc = row["line"], row["end_line"], row["signature"], row["sdoc"]
    return t


def _rank_symbols(targets: list[Target]) -> list[Target]:
    """The package's own current code first (choice.py), then classes, shallow names, short paths."""
    return sorted(
        targets,
        key=lambda t: (
            choice.rank_key(t.path, t.is_test),
            _KIND_ORDER.get(t.kind, 3),
            t.qualname.count("."),
            len(t.path),
            t.path,
        ),
    )


def _rank_files(targets: list[Target]) -> list[Target]:
    return sorted(targets, key=lambda t: (choice.rank_key(t.path, t.is_test), len(t.path), t.path))


def clean_subject(text: str, root: Path | None = None) -> str:
    text = text.strip().strip("`'\"“”‘’").strip()
    text = re.sub(r"\(\)$", "", text).rstrip(":,;?.!")
    if root is not None and text.startswith("/"):
        with contextlib.suppress(ValueError):
            text = str(Path(text).resolve().relative_to(root))
    return text.removeprefix("./")


def lookup(conn: sqlite3.Connection, text: str, root: Path | None = None, *, fuzzy: bool = True) -> Lookup:
    subject = clean_subject(text, root)
    if not subject:
        return Lookup([], "none")
    for match, finder in (
        ("path", _by_path),
        ("folder", _by_go_folder),
        ("module", _by_module),
        ("qualified", _by_qualified),
        ("name", _by_name),
        ("module-suffix", _by_module_suffix),
        ("case-insensitive", _by_name_nocase),
    ):
        targets = finder(conn, subject)
        if targets and match == "module" and all(choice.rank_class(t.path, t.is_test) for t in targets):
            # `fields` named a loose test script exactly; the package's own `pkg/fields.py` is meant first
            own = [t for t in _by_module_suffix(conn, subject) if not choice.rank_class(t.path, t.is_test)]
            targets = own + [t for t in targets if t.file_id not in {o.file_id for o in own}]
        if targets:
            return Lookup(
                _rank_files(targets) if targets[0].is_file and match != "module" else targets, match
            )
    return Lookup([], "none", closest_names(conn, subject) if fuzzy else [])


def _by_path(conn, subject: str) -> list[Target]:
    """A file by path (or path suffix); `path:line` means the innermost definition around that line."""
    m = re.search(r":(\d+)(?::\d+)?$", subject)
    files = _files_by_path(conn, subject[: m.start()] if m else subject)
    if m and files:
        line = int(m.group(1))
        row = conn.execute(
            f"SELECT {_SYM_COLS} FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE s.file_id = ? AND s.line <= ? AND s.end_line >= ? ORDER BY s.line DESC LIMIT 1",
            (files[0].file_id, line, line),
        ).fetchone()
        if row is not None:
            return [_sym_target(row)]
    return files


def _by_go_folder(conn, subject: str) -> list[Target]:
    """A Go package named by its folder (`internal/tracker`), as by its import path: its files."""
    folder = subject.strip("/")
    if not folder or _SUFFIX.search(folder):
        return []
    from recall_agent.architecture.indexer import lang_stats

    stats = lang_stats(conn)
    if stats is not None and "go" not in stats:  # no Go file indexed: no scan of every path
        return []
    rows = conn.execute(
        f"SELECT {_FILE_COLS} FROM files f WHERE f.lang = 'go' AND (f.path LIKE ? ESCAPE '\\'"
        " OR f.path LIKE ? ESCAPE '\\') ORDER BY f.is_test, length(f.path), f.path LIMIT 200",
        (_like_escape(folder) + "/%", "%/" + _like_escape(folder) + "/%"),
    ).fetchall()
    rows = [r for r in rows if (d := r["path"].rpartition("/")[0]) == folder or d.endswith("/" + folder)]
    return [_file_target(r) for r in rows[:10]]


def _files_by_path(conn, path: str) -> list[Target]:
    if "/" not in path and not _SUFFIX.search(path):
        return []
    parts = path.strip("/").split("/")
    # an absolute path from elsewhere (a traceback into site-packages): try its trailing components
    tails = (
        [path]
        if not path.startswith("/")
        else ["/".join(parts[i:]) for i in range(max(0, len(parts) - 4), len(parts) - 1)]
    )
    for tail in tails:
        rows = conn.execute(
            f"SELECT {_FILE_COLS} FROM files f WHERE f.lang IS NOT NULL AND (f.path = ? OR f.path LIKE ? ESCAPE '\\')"
            " ORDER BY length(f.path) LIMIT 10",
            (tail, "%/" + _like_escape(tail)),
        ).fetchall()
        if rows:
            return [_file_target(r) for r in rows]
    return []


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_MODULE_MATCH = "(f.module = ? OR f.path IN (?, ?, ?, ?))"


def _module_args(dotted: str) -> tuple[str, ...]:
    """Arguments for _MODULE_MATCH: the module name, or its path (namespace packages have no __init__.py,
    so `google.appengine.api` is also looked up as google/appengine/api.py or …/__init__.py)."""
    path = dotted.replace(".", "/")
    return (dotted, f"{path}.py", f"{path}/__init__.py", f"src/{path}.py", f"src/{path}/__init__.py")


def _by_module(conn, subject: str) -> list[Target]:
    rows = conn.execute(
        f"SELECT {_FILE_COLS} FROM files f WHERE {_MODULE_MATCH} AND f.lang IS NOT NULL"
        " ORDER BY f.path LIKE '%.pyi', f.path",
        _module_args(subject),
    ).fetchall()
    return [_file_target(r) for r in rows[:10]]


def _by_qualified(conn, subject: str) -> list[Target]:
    dotted = subject.replace("::", ".").replace("#", ".")
    if "." not in dotted:
        return []
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # longest module prefix first
        module, qual = ".".join(parts[:cut]), ".".join(parts[cut:])
        rows = conn.execute(
            f"SELECT {_SYM_COLS} FROM symbols s JOIN files f ON f.id = s.file_id"
            f" WHERE {_MODULE_MATCH} AND s.qualname = ?",
            (*_module_args(module), qual),
        ).fetchall()
        if rows:
            return _rank_symbols([_sym_target(r) for r in rows])
    rows = conn.execute(
        f"SELECT {_SYM_COLS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.qualname = ? LIMIT 50",
        (dotted,),
    ).fetchall()
    if not rows:  # namespaced languages: `User.Name` for `Acme.Models.User.Name`
        rows = conn.execute(
            f"SELECT {_SYM_COLS} FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE s.name = ? AND s.qualname LIKE ? ESCAPE '\\' LIMIT 50",
            (parts[-1], "%." + _like_escape(dotted)),
        ).fetchall()
    return _rank_symbols([_sym_target(r) for r in rows])


def _by_name(conn, subject: str) -> list[Target]:
    if not re.fullmatch(r"[\w$]+", subject):
        return []
    rows = conn.execute(
        f"SELECT {_SYM_COLS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? LIMIT 200",
        (subject,),
    ).fetchall()
    return _rank_symbols([_sym_target(r) for r in rows])


def _by_module_suffix(conn, subject: str) -> list[Target]:
    if not re.fullmatch(r"[\w.$-]+", subject):
        return []
    rows = conn.execute(
        f"SELECT {_FILE_COLS} FROM files f WHERE f.lang IS NOT NULL AND (f.module LIKE ? ESCAPE '\\'"
        " OR f.path LIKE ? ESCAPE '\\' OR f.path LIKE ? ESCAPE '\\') ORDER BY f.is_test, length(f.path) LIMIT 10",
        ("%." + _like_escape(subject), "%/" + _like_escape(subject) + ".%", _like_escape(subject) + ".%"),
    ).fetchall()
    return [
        _file_target(r) for r in rows if r["path"].rsplit("/", 1)[-1].split(".")[0] == subject.split(".")[-1]
    ]


def _by_name_nocase(conn, subject: str) -> list[Target]:
    if not re.fullmatch(r"[\w$]+", subject):
        return []
    rows = conn.execute(
        f"SELECT {_SYM_COLS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? COLLATE NOCASE"
        " LIMIT 50",
        (subject,),
    ).fetchall()
    return _rank_symbols([_sym_target(r) for r in rows])


def closest_names(conn: sqlite3.Connection, subject: str, n: int = 5) -> list[str]:
    """Closest symbol / module names to an unknown subject (difflib over a prefiltered candidate set)."""
    last = re.split(r"[./:#]", subject)[-1] or subject
    low = last.lower()
    pool: set[str] = set()
    for first in {low[:1], low[:1].upper()} if low else set():  # same first letter: the name index
        pool.update(
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT name FROM symbols WHERE name >= ? AND name < ?", (first, chr(ord(first) + 1))
            )
        )
    pool.update(
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT name FROM symbols WHERE name LIKE ? ESCAPE '\\'", (f"%{_like_escape(low)}%",)
        )
        if low in r[0].lower()
    )
    modules = [r[0] for r in conn.execute("SELECT DISTINCT module FROM files WHERE module != ''")]
    pool |= {m for m in modules if low in m.lower() or m.rsplit(".", 1)[-1][:1].lower() == low[:1]}
    if len(pool) > CLOSEST_POOL:  # a kernel-sized repository: difflib over the names nearest in length
        pool = set(sorted(pool, key=lambda c: (abs(len(c) - len(last)), c))[:CLOSEST_POOL])
    substring = sorted((c for c in pool if low in c.lower()), key=len)[:n]
    close = difflib.get_close_matches(last, list(pool), n=n, cutoff=0.6)
    out: list[str] = []
    for c in close + substring:
        if c not in out:
            out.append(c)
    return out[:n]


# --------------------------------------------------------------------------- imports


@dataclass
class Dependent:
    file_id: int
    path: str
    depth: int
    names: str = ""
    is_test: bool = False
    via: str = ""  # for depth > 1: the dependent it reaches the target through
    typing_only: bool = False  # every import of the target is inside `if TYPE_CHECKING:`
    how: str = ""  # for tests: calls it, imports it, imports its module, named after it, transitive


def _tuples(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor returning plain tuples (the connection's sqlite3.Row costs more on tens of thousands of rows)."""
    cur = conn.cursor()
    cur.row_factory = None
    return cur


def paths_of(conn: sqlite3.Connection, ids) -> dict[int, tuple[str, bool]]:
    ids = list(ids)
    out: dict[int, tuple[str, bool]] = {}
    cur = _tuples(conn)
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for fid, path, is_test in cur.execute(
            f"SELECT id, path, is_test FROM files WHERE id IN ({marks})", chunk
        ):
            out[fid] = (path, bool(is_test))
    return out


def dependencies(conn: sqlite3.Connection, file_id: int) -> tuple[list[tuple[str, str]], list[str]]:
    """(repo files imported with their names, external imports as written)."""
    internal = conn.execute(
        "SELECT g.path, group_concat(e.names) FROM edges e JOIN files g ON g.id = e.dst WHERE e.src = ?"
        " GROUP BY g.path ORDER BY min(e.line)",
        (file_id,),
    ).fetchall()
    resolved_lines = {r[0] for r in conn.execute("SELECT line FROM edges WHERE src = ?", (file_id,))}
    external = []
    for spec, line in conn.execute(
        "SELECT spec, line FROM imports WHERE file_id = ? ORDER BY line", (file_id,)
    ):
        if line not in resolved_lines and spec not in external and not spec.startswith((".", ":")):
            external.append(spec)
    return [(p, _names(n)) for p, n in internal], external


def _names(raw: str | None) -> str:
    seen: list[str] = []
    for n in (raw or "").split(","):
        if n and n not in seen:
            seen.append(n)
    return ",".join(seen)


def direct_dependents(conn: sqlite3.Connection, target: Target) -> list[Dependent]:
    """Files importing the target's file; for a symbol, those importing its name (or `*`) plus call sites."""
    rows = conn.execute(
        "SELECT e.src, f.path, f.is_test, group_concat(e.names), min(e.typing_only) FROM edges e"
        " JOIN files f ON f.id = e.src WHERE e.dst = ? GROUP BY e.src",
        (target.file_id,),
    ).fetchall()
    out = {}
    top = target.qualname.split(".")[0]
    for src, path, is_test, names, typing_only in rows:
        names = _names(names)
        if target.is_file or not names or top in names.split(",") or "*" in names.split(","):
            out[src] = Dependent(src, path, 1, names, bool(is_test), typing_only=bool(typing_only))
    if not target.is_file:
        for hit in callers(conn, target):
            if hit.confidence >= 0.5 and hit.file_id != target.file_id and hit.file_id not in out:
                out[hit.file_id] = Dependent(hit.file_id, hit.path, 1, "calls", hit.is_test)
    reach = fan_in(conn, list(out))  # most depended-upon dependents first: they carry the blast further
    return sorted(out.values(), key=lambda d: (d.is_test, -reach.get(d.file_id, 0), d.path))


def walk_dependents(
    conn: sqlite3.Connection, target: Target, max_depth: int = MAX_DEPTH
) -> tuple[list[Dependent], list[dict[int, int]]]:
    """The files that depend on the target, without reading their paths: its direct dependents (target
    itself left out), then for each further depth its files' ids, each with the id it reaches the target
    through (`via`: the first file of the depth before that it imports, in walk order)."""
    direct = [d for d in direct_dependents(conn, target) if d.file_id != target.file_id]
    seen = {d.file_id for d in direct} | {target.file_id}
    levels: list[dict[int, int]] = []
    frontier = [d.file_id for d in direct]
    while frontier and len(levels) + 1 < max_depth:
        levels.append(_importers_of(conn, frontier, seen))
        frontier = list(levels[-1])
    return direct, levels


def blast_radius(conn: sqlite3.Connection, target: Target, max_depth: int = MAX_DEPTH) -> list[Dependent]:
    """Every file that depends on the target, directly or through others, with its shortest depth: the
    direct dependents in their order, then each further depth's files, those outside tests first, by path."""
    direct, levels = walk_dependents(conn, target, max_depth)
    out, paths = list(direct), {d.file_id: d.path for d in direct}
    for depth, nxt in enumerate(levels, start=2):
        info = paths_of(conn, nxt)
        level = [
            Dependent(src, info[src][0], depth, "", info[src][1], paths[via]) for src, via in nxt.items()
        ]
        paths.update((d.file_id, d.path) for d in level)
        level.sort(key=attrgetter("is_test", "path"))
        out += level
    return out


def radius_size(conn: sqlite3.Connection, target: Target, max_depth: int = MAX_DEPTH) -> int:
    """How many files the blast radius holds (no path read)."""
    direct, levels = walk_dependents(conn, target, max_depth)
    return len(direct) + sum(map(len, levels))


SCAN_TESTS_AT = 4000  # files past depth 1 from which a radius reads the test files in one scan


@dataclass
class Radius:
    """A blast radius with paths read only for what an answer shows: `dependents` holds every direct
    dependent, every test file, and the first `shown` other files past depth 1 (by depth, then path, as
    `blast_radius` orders them); the others are counted. The kernel's kref.h: 37,658 files, ~1,500 paths."""

    dependents: list[Dependent]
    size: int  # files in the whole radius
    depths: dict[int, int]  # depth -> files
    deeper: int  # files past depth 1 that are not tests


def blast_summary(
    conn: sqlite3.Connection, target: Target, max_depth: int = MAX_DEPTH, shown: int = 6
) -> Radius:
    """The blast radius as an answer shows it (see Radius); the same files, depths and `via` as
    `blast_radius` for everything it lists."""
    direct, levels = walk_dependents(conn, target, max_depth)
    cur = _tuples(conn)
    paths = {d.file_id: d.path for d in direct}
    ids = [src for level in levels for src in level]
    if len(ids) > SCAN_TESTS_AT:  # one scan of the repository's test files beats a lookup per file
        tests = dict(cur.execute("SELECT id, path FROM files WHERE is_test"))
    else:
        info = paths_of(conn, ids)
        paths |= {fid: path for fid, (path, _) in info.items()}
        tests = {fid: path for fid, (path, is_test) in info.items() if is_test}
    wanted: dict[int, int] = {}  # file -> its depth, for every file listed
    others: list[tuple[int, int]] = []  # (depth, file) of the first `shown` non-test files past depth 1
    for depth, level in enumerate(levels, start=2):
        wanted.update((src, depth) for src in level if src in tests)
        if len(others) < shown:
            plain = [src for src in level if src not in tests]
            others += [(depth, src) for src in _first_by_path(cur, plain, shown - len(others))]
    wanted.update((src, depth) for depth, src in others)
    via = {src: levels[depth - 2][src] for src, depth in wanted.items()}
    paths |= {src: tests[src] for src in wanted if src in tests}
    missing = (set(via.values()) | wanted.keys()) - paths.keys()
    paths |= {fid: path for fid, (path, _) in paths_of(conn, missing).items()}
    listed = [
        Dependent(src, paths[src], depth, "", src in tests, paths[via[src]]) for src, depth in wanted.items()
    ]
    listed.sort(key=attrgetter("depth", "is_test", "path"))
    depths = {1: len(direct)} if direct else {}
    depths |= {depth: len(level) for depth, level in enumerate(levels, start=2) if level}
    size = sum(depths.values())
    deeper = size - len(direct) - sum(1 for d in listed if d.is_test)
    return Radius(list(direct) + listed, size, depths, deeper)


def _first_by_path(cur: sqlite3.Cursor, file_ids: list[int], n: int) -> list[int]:
    """The first `n` of these files by path (SQLite looks the paths up and sorts them)."""
    if not file_ids or n <= 0:
        return []
    rows = cur.execute(
        "SELECT f.id FROM json_each(?) j JOIN files f ON f.id = j.value ORDER BY f.path LIMIT ?",
        (json.dumps(file_ids), n),
    )
    return [fid for (fid,) in rows]


def _importers_of(conn: sqlite3.Connection, frontier: list[int], seen: set[int]) -> dict[int, int]:
    """Files importing any of `frontier` and not in `seen` (added to it), each with the first frontier file it imports:
    frontier in its order by chunks of 500, within a chunk by id, importers by id. One row per imported
    file (its importers concatenated by SQLite) and set differences keep Python off the ~150,000 edge rows
    of a header as common as the kernel's kref.h."""
    nxt: dict[int, int] = {}
    cur = _tuples(conn)
    for i in range(0, len(frontier), 500):
        chunk = frontier[i : i + 500]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT dst, group_concat(src) FROM edges WHERE dst IN ({marks}) GROUP BY dst ORDER BY dst"
        for dst, srcs in cur.execute(sql, chunk):
            new = set(map(int, srcs.split(","))).difference(seen)  # one set argument: no walk of `seen`
            seen.update(new)
            for src in sorted(new):
                nxt[src] = dst
    return nxt


def fan_in(conn: sqlite3.Connection, file_ids: list[int]) -> dict[int, int]:
    """How many files import each of these files (used to rank dependents by their own reach)."""
    out: dict[int, int] = {}
    for i in range(0, len(file_ids), 500):
        chunk = file_ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for dst, n in conn.execute(
            f"SELECT dst, count(DISTINCT src) FROM edges WHERE dst IN ({marks}) GROUP BY dst", chunk
        ):
            out[dst] = n
    return out


def tests_touching(
    conn: sqlite3.Connection, target: Target, radius: list[Dependent] | None = None
) -> list[Dependent]:
    """Test files that depend on the target, most direct first: those calling it, importing it, importing
    its module, named after it (test_models.py), then those reaching it through other files (by depth)."""
    radius = radius if radius is not None else blast_summary(conn, target, shown=0).dependents  # all tests
    tests = {d.file_id: d for d in radius if d.is_test}
    for d in tests.values():
        d.how = TEST_TRANSITIVE if d.depth > 1 else TEST_IMPORTS if target.is_file or d.names else TEST_MODULE
        if not target.is_file and d.depth == 1 and d.names and d.names != "calls":
            d.how = TEST_IMPORTS if target.qualname.split(".")[0] in d.names.split(",") else TEST_MODULE
    if not target.is_file:
        for hit in callers(conn, target):
            if hit.is_test and hit.confidence >= 0.5:
                found = tests.setdefault(hit.file_id, Dependent(hit.file_id, hit.path, 1, "calls", True))
                found.how = TEST_CALLS
    stem = (target.name or target.path.rsplit("/", 1)[-1].split(".")[0]).lstrip("_").lower()
    if len(stem) >= 3:
        for fid, path in conn.execute(
            "SELECT id, path FROM files WHERE is_test = 1 AND lang IS NOT NULL AND lower(path) LIKE ?",
            (f"%{stem}%",),
        ):
            if stem in path.rsplit("/", 1)[-1].lower():
                named = tests.setdefault(fid, Dependent(fid, path, 0, "named after it", True, how=TEST_NAMED))
                if named.how == TEST_TRANSITIVE:
                    named.how = TEST_NAMED
    return sorted(tests.values(), key=lambda d: (TEST_ORDER.index(d.how), d.depth, d.path))


TEST_CALLS, TEST_IMPORTS, TEST_MODULE, TEST_NAMED, TEST_TRANSITIVE = (
    "calls it",
    "imports it",
    "imports its module",
    "named after it",
    "transitive",
)
TEST_ORDER = (TEST_CALLS, TEST_IMPORTS, TEST_MODULE, TEST_NAMED, TEST_TRANSITIVE)


# --------------------------------------------------------------------------- calls


@dataclass
class CallHit:
    file_id: int
    path: str
    caller: str
    line: int
    confidence: float
    is_test: bool = False
    target: str = ""  # for callees: where the called name resolved ("" = outside the repository)
    name: str = ""


def _importers(conn: sqlite3.Connection, file_id: int) -> tuple[dict[int, str], set[int]]:
    """Files importing file_id directly (with names), and those importing it through one re-export."""
    direct: dict[int, str] = defaultdict(str)
    for src, names in conn.execute("SELECT src, names FROM edges WHERE dst = ?", (file_id,)):
        direct[src] += "," + names
    second = {
        r[0]
        for r in conn.execute(
            "SELECT e2.src FROM edges e1 JOIN edges e2 ON e2.dst = e1.src WHERE e1.dst = ?", (file_id,)
        )
    }
    return dict(direct), second


def callers(conn: sqlite3.Connection, target: Target) -> list[CallHit]:
    if target.is_file:
        return []
    name = target.name
    defining = conn.execute("SELECT file_id, kind, qualname FROM symbols WHERE name = ?", (name,)).fetchall()
    definitions = len(defining) or 1
    # files with their own definition of the name: a bare `foo()` there means their function, a `self.foo()`
    # their method (a method of the same name does not shadow a function, nor a function a method)
    shadow_funcs = {f for f, kind, _ in defining if kind != "method"} - {target.file_id}
    shadow_methods = {f for f, kind, _ in defining if kind == "method"} - {target.file_id}
    owners = [q.rpartition(".")[0].rsplit(".", 1)[-1].lower() for _, kind, q in defining if kind == "method"]
    direct, second = _importers(conn, target.file_id)
    owner = target.qualname.rpartition(".")[0]
    top = target.qualname.split(".")[0]
    embedders = _go_embedders(conn, target, owner) if target.lang == "go" and owner else set()
    judge = Judge(conn, target)
    hits = []
    for fid, path, is_test, caller, line, recv, rtype, module in conn.execute(
        "SELECT c.file_id, f.path, f.is_test, c.caller, c.line, c.recv, c.rtype, f.module FROM calls c"
        " JOIN files f ON f.id = c.file_id WHERE c.name = ?",
        (name,),
    ):
        conf = _call_confidence(target, fid, caller, recv, owner, top, direct, second, definitions, owners)
        if (not recv and fid in shadow_funcs) or (recv in ("self", "this", "cls") and fid in shadow_methods):
            conf = min(conf, 0.2)  # `foo()` / `self.foo()` next to its own `foo` means that one
        if target.lang == "go":
            conf = _go_call(
                conf, path, target, recv == owner.rsplit(".", 1)[-1] or recv in embedders, fid in direct
            )
        verdict = judge.verdict(fid, caller, recv, rtype, module, path)
        if verdict is not None:  # the receiver's value is known: it decides
            conf = max(conf, 0.95) if verdict else min(conf, 0.1)
        if conf > 0:
            hits.append(CallHit(fid, path, caller, line, conf, bool(is_test)))
    return sorted(hits, key=lambda h: (-h.confidence, h.is_test, h.path, h.line))


def _call_confidence(target, fid, caller, recv, owner, top, direct, second, definitions, owners) -> float:
    if target.kind == "method":
        return _method_confidence(target, fid, caller, recv, owner, direct, second, definitions, owners)
    if fid == target.file_id:
        return 0.95 if not recv else 0.6
    if fid in direct:
        names = direct[fid].split(",")
        return 0.9 if (top in names or "*" in names or recv) else 0.75
    if fid in second:
        return 0.7
    return 0.6 if definitions == 1 else round(0.5 / definitions, 2)


def _go_embedders(conn: sqlite3.Connection, target: Target, owner: str) -> set[str]:
    """Go types of the target's package that embed its type (`parser` embedding `*peeker` has `Read`)."""
    folder = target.path.rpartition("/")[0]
    found: set[str] = set()
    for path, names in conn.execute(
        "SELECT f.path, i.names FROM imports i JOIN files f ON f.id = i.file_id"
        " WHERE i.spec = ':embeds' AND f.lang = 'go'"
    ):
        if path.rpartition("/")[0] == folder:
            found |= {pair.split("=", 1)[0] for pair in names.split(",") if pair.endswith("=" + owner)}
    return found


def _go_call(conf: float, path: str, target: Target, typed: bool, imports_it: bool) -> float:
    """Go's package rules: an unqualified receiver type is its own package's (its folder's), and a file that
    neither sits in the target's package nor imports it can reach the method only through an interface."""
    same_package = path.rpartition("/")[0] == target.path.rpartition("/")[0]
    if typed:
        return max(conf, 0.9) if same_package else min(conf, 0.2)
    return conf if same_package or imports_it else min(conf, 0.2)


TYPED_RECEIVERS = frozenset({"go", "java", "kotlin", "csharp"})
IMPLICIT_THIS = frozenset({"java", "kotlin", "csharp", "cpp", "ruby"})


def _method_confidence(target, fid, caller, recv, owner, direct, second, definitions, owners) -> float:
    """`obj.name()` matches a method by name only; the receiver's spelling and the imports decide how well.
    A spelling several classes defining the method share (`loader` for every `*Loader.get_source`) is weak."""
    if not recv:  # a bare call is a function, not this method, unless `this` is implicit
        same_class = fid == target.file_id and caller.startswith(owner + ".")
        return 0.95 if same_class and target.lang in IMPLICIT_THIS else 0.0
    cls = owner.rsplit(".", 1)[-1].lower()
    rec = recv.rsplit(".", 1)[-1].lstrip("_").lower()
    reaches = fid == target.file_id or fid in direct or fid in second
    if recv in ("self", "this", "cls"):
        if fid == target.file_id and caller.startswith(owner + "."):
            return 0.95
        return 0.5 if reaches else 0.2
    if target.lang in TYPED_RECEIVERS:
        # a receiver whose type the source states was replaced by that type: only the type itself counts
        if len(rec) >= 3 and rec == cls:
            return 0.9 if reaches else 0.7
    elif len(rec) >= 3 and (cls in rec or rec in cls):
        alike = {o for o in owners if o in rec or rec in o}
        if rec == cls or len(alike) <= 1:
            return 0.9 if reaches else 0.7
        return round(0.5 / len(alike), 2)
    if definitions == 1:
        return 0.6 if reaches else 0.5
    return round((0.5 if reaches else 0.3) / definitions, 2)


def callees(conn: sqlite3.Connection, target: Target) -> list[CallHit]:
    """Calls made inside the target (a function/method, a class's methods, or a file's top level)."""
    if target.is_file:
        rows = conn.execute(
            "SELECT name, line, recv FROM calls WHERE file_id = ? ORDER BY line", (target.file_id,)
        )
    else:
        rows = conn.execute(
            "SELECT name, line, recv FROM calls WHERE file_id = ? AND (caller = ? OR caller LIKE ? ESCAPE '\\')"
            " ORDER BY line",
            (target.file_id, target.qualname, _like_escape(target.qualname) + ".%"),
        )
    imported = {r[0] for r in conn.execute("SELECT dst FROM edges WHERE src = ?", (target.file_id,))}
    seen: dict[str, CallHit] = {}
    for name, line, recv in rows.fetchall():
        if name in seen:
            continue
        seen[name] = _resolve_callee(conn, target.file_id, imported, name, line, recv)
    return sorted(seen.values(), key=lambda h: (h.target == "", -h.confidence, h.line))


def _resolve_callee(conn, file_id: int, imported: set[int], name: str, line: int, recv: str) -> CallHit:
    defs = conn.execute(
        "SELECT s.file_id, f.path, s.line, s.qualname, s.kind FROM symbols s JOIN files f ON f.id = s.file_id"
        " WHERE s.name = ? LIMIT 50",
        (name,),
    ).fetchall()
    if not recv:  # a bare call is a function or a class, not a method
        defs = [d for d in defs if d[4] != "method"] or defs
    best, conf = None, 0.0
    for d in defs:
        c = (
            0.95
            if d[0] == file_id
            else 0.9
            if d[0] in imported
            else 0.6
            if len(defs) == 1
            else 0.5 / len(defs)
        )
        if c > conf:
            best, conf = d, c
    if best is None:
        return CallHit(file_id, "", "", line, 0.0, name=name)
    return CallHit(best[0], best[1], best[3], line, round(conf, 2), target=f"{best[1]}:{best[2]}", name=name)


# --------------------------------------------------------------------------- cycles


def import_cycles(conn: sqlite3.Connection, limit: int = 5, within: str = "") -> tuple[list[list[str]], int]:
    """Import cycles: one concrete cycle per strongly connected component of the file graph, biggest first,
    and how many such components there are (only components with a file under `within`, when given)."""
    graph: dict[int, set[int]] = defaultdict(set)
    for src, dst in conn.execute("SELECT DISTINCT src, dst FROM edges WHERE src != dst"):
        graph[src].add(dst)
    components = [c for c in _tarjan(graph) if len(c) > 1]
    if within:
        inside = {
            fid
            for (fid,) in conn.execute(
                "SELECT id FROM files WHERE path = ? OR path LIKE ? ESCAPE '\\'",
                (within, _like_escape(within) + "/%"),
            )
        }
        components = [c for c in components if inside.intersection(c)]
    components.sort(key=len, reverse=True)
    names = paths_of(conn, {n for c in components[:limit] for n in c})
    cycles = []
    for comp in components[:limit]:
        cycle = _cycle_in(graph, set(comp))
        cycles.append([names[n][0] for n in cycle] + [f"(component of {len(comp)} files)"])
    return cycles, len(components)


def cycle_through(conn: sqlite3.Connection, file_id: int) -> list[str]:
    """A shortest import cycle through one file (paths, closed: a → b → a), or [] when it is in none."""
    graph: dict[int, set[int]] = defaultdict(set)
    for src, dst in conn.execute("SELECT DISTINCT src, dst FROM edges WHERE src != dst"):
        graph[src].add(dst)
    component = next((set(c) for c in _tarjan(graph) if file_id in c and len(c) > 1), None)
    if component is None:
        return []
    cycle = _cycle_in(graph, component, start=file_id)
    names = paths_of(conn, set(cycle))
    return [names[n][0] for n in cycle]


def _tarjan(graph: dict[int, set[int]]) -> list[list[int]]:
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for start in list(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                out.append(comp)
    return out


def _cycle_in(graph: dict[int, set[int]], comp: set[int], start: int | None = None) -> list[int]:
    """A shortest cycle through `start` (default: the component's first node), closed: a → b → a."""
    start = min(comp) if start is None else start
    parents: dict[int, int] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph.get(node, ())):
            if child not in comp:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if child not in parents:
                parents[child] = node
                queue.append(child)
    return [start, start]
