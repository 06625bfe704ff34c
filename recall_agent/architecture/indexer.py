"""Walk a repository, parse what changed, keep the graph store current.

The walk is a cheap stat pass (no reads): a file is re-parsed only when its mtime or size moved and its
content hash really changed. It honours `.gitignore` files (root and nested, through pathspec), never
follows symlinks (no loops, nothing outside the repository), and skips hidden, vendored and generated
folders. Files recall cannot or should not parse (too large, binary, minified, unreadable) are recorded with
a note so the next walk does not look at them again until they change.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import os
import re
import signal
import sqlite3
import stat
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recall_agent.architecture import graph
from recall_agent.architecture.lang import ImportRow
from recall_agent.architecture.languages import BY_NAME, BY_SUFFIX, language_for
from recall_agent.repo import VENDORED_DIRS

if TYPE_CHECKING:
    from recall_agent.architecture.extract import FileFacts

MAX_FILE_BYTES = int(os.environ.get("RECALL_INDEX_MAX_FILE_BYTES", 1_000_000))
MAX_FILES_ENV = "RECALL_INDEX_MAX_FILES"  # a cap on the files indexed, only when the user sets one
PROGRESS_MIN_FILES = 50
BATCH_FILES = 300  # files parsed per committed transaction
BULK_MIN_FILES = 2000  # a first build of this many files loads in bulk (_bulk_build)
BULK_CACHE_KB = 131_072  # SQLite page cache of a bulk build
PARALLEL_MIN_FILES = 400  # fewer files to parse are parsed in-process (starting workers costs ~0.3 s)
PARSE_CHUNK = 40  # files per task sent to a parse worker
JS_MANIFESTS = frozenset({"package.json", "tsconfig.json", "jsconfig.json"})
BUILD_MANIFESTS = frozenset({"Cargo.toml", "composer.json", "compile_commands.json"})
MANIFESTS = frozenset({"go.mod", *JS_MANIFESTS, *BUILD_MANIFESTS})
# folder cache: rel path -> (mtime_ns, sub-folders, candidate files, has .gitignore[, .gitignore chain key,
# the sub-folders and files that chain keeps]); mtime 0 = rescan
DirCache = dict[str, tuple | list]  # tuples when walked, lists when read back from JSON (_load_dirs)
RACY_NS = 2_000_000_000  # a folder changed this recently may change again within the same mtime tick

SKIP_DIRS = VENDORED_DIRS  # folders an index never enters (shared with the questions' project rule)
OUTPUT_DIRS = frozenset({"dist", "build", "out"})  # build output, unless a source package (…/common/build)
PACKAGE_SOURCES = (".java", ".kt", ".go", ".cs", ".scala")
MINIFIED = re.compile(r"[.-]min\.(js|mjs|cjs)$|\.bundle\.js$")
_TEST_FILE = re.compile(
    r"(^test_.*\.py$|_test\.(py|go)$|^conftest\.py$|\.(test|spec)\.[cm]?[jt]sx?$|Tests?\.(java|kt|cs)$|_spec\.rb$|_test\.rb$)"
)
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing"})


class RepositoryError(Exception):
    """A repository that cannot be indexed (missing, not a folder)."""


@dataclass
class WalkResult:
    files: dict[str, tuple[int, int]]  # path -> (mtime_ns, size)
    manifests: list[str] = field(default_factory=list)  # go.mod, package.json, tsconfig/jsconfig.json
    dirs: DirCache = field(default_factory=dict)
    dirs_changed: bool = False
    truncated: bool = False


@dataclass
class IndexStats:
    root: Path
    store: Path
    files: int = 0
    parsed: int = 0
    removed: int = 0
    skipped: int = 0
    symbols: int = 0
    edges: int = 0
    calls: int = 0
    seconds: float = 0.0
    languages: dict[str, int] = field(default_factory=dict)
    syntax_errors: int = 0  # files indexed partially (the grammar met errors)
    syntax_errors_by_lang: dict[str, int] = field(default_factory=dict)
    unread_lines: int = 0  # lines of those files the grammar could not read (the rest is indexed)
    lines: int = 0  # lines of every parsed file
    # seconds: walk, parse (and write), resolve, summary
    phases: dict[str, float] = field(default_factory=dict)
    capped: int = 0  # the walk stopped at this many files (the user's RECALL_INDEX_MAX_FILES)
    notes: list[str] = field(default_factory=list)


def find_repo_root(path: str | Path) -> Path:
    """The git top-level above `path` (a `.git` folder or file), else `path` itself."""
    start = Path(path).expanduser()
    if not start.exists():
        raise RepositoryError(f"no such folder: {start}")
    if not start.is_dir():
        raise RepositoryError(f"not a folder: {start}")
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            # a folder the enclosing repository does not index (ignored, hidden, vendored) is its own root
            return start if _excluded_below(candidate, start) else candidate
    return start


def _excluded_below(root: Path, path: Path) -> bool:
    parts = path.relative_to(root).parts
    specs: list[tuple[str, object]] = []
    for depth, name in enumerate(parts):
        rel_parent = "/".join(parts[:depth])
        spec = _load_gitignore(str(root.joinpath(*parts[:depth])))
        if spec is not None:
            specs.append((rel_parent, spec))
        if (
            name.startswith(".")
            or name in SKIP_DIRS
            or name in OUTPUT_DIRS
            or _ignored("/".join(parts[: depth + 1]), True, specs)
        ):
            return True
        if _is_virtualenv(str(root.joinpath(*parts[: depth + 1]))):
            return True
    return False


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    return bool(_TEST_FILE.search(parts[-1])) or any(p in _TEST_DIRS for p in parts[:-1])


# --------------------------------------------------------------------------- walk


def _load_gitignore(folder: str) -> object | None:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return spec if spec.patterns else None


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, object]]) -> bool:
    for base, spec in specs:
        sub = rel[len(base) + 1 :] if base else rel
        if spec.match_file(sub + "/" if is_dir else sub):  # type: ignore[attr-defined]
            return True
    return False


def max_files() -> int:
    """The user's cap on indexed files (`RECALL_INDEX_MAX_FILES`); 0 means none, the default."""
    raw = os.environ.get(MAX_FILES_ENV, "").strip()
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise RepositoryError(f"{MAX_FILES_ENV} must be a whole number of files, not {raw!r}") from None
    if value < 0:
        raise RepositoryError(f"{MAX_FILES_ENV} must be 0 (no cap) or more, not {value}")
    return value


def cap_note(cap: int) -> str:
    return (
        f"the index stopped at {cap:,} files (RECALL_INDEX_MAX_FILES or --max-files): files past them are"
        " not indexed and answers do not see them; unset it to index every file"
    )


def walk(root: Path, cache: DirCache | None = None, cap: int = 0) -> WalkResult:
    """Stat every source file under `root` that recall would parse (no file is read here).

    A folder whose mtime is unchanged since the last walk has the same entries, so its cached listing
    replaces the scandir (files are still stat'ed one by one: contents change without touching the
    folder). `.gitignore` rules are applied on every walk, but a folder whose listing and whose chain of
    `.gitignore` files (by stat) are both unchanged keeps its filtered listing, so no pattern is matched and
    no `.gitignore` is read (the kernel's 300 files and 60,000 paths took seconds). The new listing is in
    `result.dirs`. `cap` (when not 0) stops the walk at that many files.
    """
    result = WalkResult(files={})
    # (folder, its chain of .gitignore files as a key, whether one of them changed within the racy window)
    stack: list[tuple[str, str, bool]] = [("", "", False)]
    base = str(root)
    now = time.time_ns()
    specs_of = _SpecChain(base)
    while stack:
        rel_dir, chain, racy = stack.pop()
        abs_dir = f"{base}/{rel_dir}" if rel_dir else base
        try:
            mtime = os.stat(abs_dir).st_mtime_ns
        except OSError:
            continue
        cached = cache.get(rel_dir) if cache else None
        if cached is not None and cached[0] == mtime and mtime:
            listing = cached
        else:
            listed = _list_folder(abs_dir, mtime if now - mtime > RACY_NS else 0)
            if listed is None:
                continue
            listing = listed
            result.dirs_changed = True
        _, subdirs, files, has_gitignore = listing[:4]
        if has_gitignore:
            chain, racy = _chain_with(chain, racy, rel_dir, abs_dir, now)
        if chain and (listing is not cached or len(listing) < 7 or listing[4] != chain or racy):
            specs = specs_of(chain)
            subdirs = [d for d in subdirs if not _ignored(f"{rel_dir}/{d}" if rel_dir else d, True, specs)]
            files = [
                f
                for f in files
                if f in MANIFESTS or not _ignored(f"{rel_dir}/{f}" if rel_dir else f, False, specs)
            ]
            listing = (*listing[:4], chain, subdirs, files)
            result.dirs_changed = True
        elif chain:
            subdirs, files = listing[5], listing[6]
        result.dirs[rel_dir] = listing
        prefix = f"{rel_dir}/" if rel_dir else ""
        for name in subdirs:
            stack.append((prefix + name, chain, racy))
        for name in files:
            rel = prefix + name
            if name in MANIFESTS:
                result.manifests.append(rel)
                continue
            try:
                st = os.lstat(f"{abs_dir}/{name}")
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # symlinks, sockets, FIFOs and devices are never read
            result.files[rel] = (st.st_mtime_ns, st.st_size)
            if cap and len(result.files) >= cap:
                result.truncated = True
                return result
    result.dirs_changed = result.dirs_changed or (cache is not None and len(cache) != len(result.dirs))
    return result


def _chain_with(chain: str, racy: bool, rel_dir: str, abs_dir: str, now: int) -> tuple[str, bool]:
    """The .gitignore chain key extended by this folder's file (folder, mtime, size; NUL-separated: no path
    holds a NUL), and whether it changed within the racy window (it may change again within the same
    mtime tick, so its folders are filtered again on every walk)."""
    try:
        st = os.stat(f"{abs_dir}/.gitignore")
    except OSError:
        return chain, racy
    link = f"{rel_dir}\0{st.st_mtime_ns}\0{st.st_size}"
    return (f"{chain}\0{link}" if chain else link), racy or now - st.st_mtime_ns <= RACY_NS


class _SpecChain:
    """The compiled .gitignore specs of a chain key, each file read and compiled once per walk."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.specs: dict[str, object | None] = {}

    def __call__(self, chain: str) -> list[tuple[str, object]]:
        out = []
        for rel_dir in chain.split("\0")[::3]:
            if rel_dir not in self.specs:
                self.specs[rel_dir] = _load_gitignore(f"{self.base}/{rel_dir}" if rel_dir else self.base)
            spec = self.specs[rel_dir]
            if spec is not None:
                out.append((rel_dir, spec))
        return out


def _list_folder(abs_dir: str, mtime: int) -> tuple[int, list[str], list[str], bool] | None:
    """A folder's sub-folders worth entering and its files worth a stat (by name and type only)."""
    try:
        with os.scandir(abs_dir) as it:
            entries = list(it)
    except OSError:
        return None
    subdirs: list[str] = []
    files: list[str] = []
    has_gitignore = False
    for entry in entries:
        name = entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if name[0] == "." or name in SKIP_DIRS or name.endswith(".egg-info"):
                    continue
                if name in OUTPUT_DIRS and not _holds_package_sources(entry.path):
                    continue
                if _is_virtualenv(f"{abs_dir}/{name}"):
                    continue
                if name == "target" and _is_build_output(abs_dir):
                    continue
                subdirs.append(name)
                continue
        except OSError:
            continue
        if name == ".gitignore":
            has_gitignore = True
            continue
        dot = name.rfind(".")
        if (dot > 0 and name[dot:].lower() in BY_SUFFIX) or name in MANIFESTS:
            files.append(name)
    return mtime, subdirs, files, has_gitignore


def _holds_package_sources(folder: str) -> bool:
    """A `build`/`out`/`dist` folder holding Java/Kotlin/Go/C# files is a package of that name, not output."""
    try:
        with os.scandir(folder) as it:
            return any(e.name.endswith(PACKAGE_SOURCES) for e in it)
    except OSError:
        return False


def _is_virtualenv(folder: str) -> bool:
    """A Python virtualenv (venv, virtualenv ≥ 20, uv) marks itself with pyvenv.cfg; a folder merely named
    `env` or `venv` (axios's `lib/env/`) is source."""
    return os.path.exists(os.path.join(folder, "pyvenv.cfg"))


def _is_build_output(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, f)) for f in ("Cargo.toml", "pom.xml", "build.gradle"))


# --------------------------------------------------------------------------- parse one file


@dataclass
class Parsed:
    path: str
    mtime_ns: int
    size: int
    hash: str = ""
    lang: str | None = None
    note: str = ""
    lines: int = 0
    unread: int = 0  # lines the grammar could not read (syntax errors)
    facts: FileFacts | None = None
    rows: Rows | None = None  # the facts as table rows (what a parse worker sends back: tuples pickle fast)


@dataclass
class Rows:
    """One parsed file's facts as the rows `_write_parsed` inserts."""

    package: str
    doc: str
    symbols: list[tuple]  # (name, qualname, kind, line, end_line, signature, doc, returns)
    symbol_words: list[str]  # each symbol's name split into words (concept search), aligned with symbols
    imports: list[tuple]  # (spec, names, line, typing_only)
    calls: list[tuple]  # (caller, name, recv, line, rtype)
    text: tuple[str, str, str, str]  # file_text: path words, definition words, docs, identifier words
    sites: list = field(default_factory=list)  # messages.Site: raise / log sites (dataclasses pickle too)


def _rows(p: Parsed) -> Rows | None:
    facts = p.facts
    if facts is None:
        return None
    from recall_agent.architecture import concepts, words

    symbols = [
        (s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc, s.returns) for s in facts.symbols
    ]
    symbol_words = [" ".join(words._split(s.name)) for s in facts.symbols]
    return Rows(
        facts.package,
        facts.doc,
        symbols,
        symbol_words,
        [(i.spec, ",".join(i.names), i.line, int(i.typing_only)) for i in facts.imports],
        list(map(tuple, facts.calls)),  # plain tuples: a Call would pickle with its class
        concepts.file_text(p.path, facts, symbol_words),
        list(facts.sites),
    )


def _parse_file(root: Path, path: str, mtime_ns: int, size: int, old_hash: str | None) -> Parsed:
    from recall_agent.architecture.extract import extract

    parsed = Parsed(path, mtime_ns, size)
    spec = language_for(path)
    if spec is None:
        parsed.note = "skipped: unknown language"
        return parsed
    if size > MAX_FILE_BYTES:
        parsed.note = f"skipped: {size / 1e6:.1f} MB is over the {MAX_FILE_BYTES / 1e6:.1f} MB limit"
        return parsed
    if MINIFIED.search(path):
        parsed.note = "skipped: minified"
        return parsed
    try:
        data = (root / path).read_bytes()
    except OSError as exc:
        parsed.note = f"skipped: unreadable ({exc.strerror or exc.__class__.__name__})"
        return parsed
    parsed.hash = hashlib.blake2b(data, digest_size=16).hexdigest()
    if old_hash is not None and parsed.hash == old_hash:
        parsed.note = "unchanged"
        return parsed
    if b"\0" in data[:8192]:
        parsed.note = "skipped: binary"
        return parsed
    parsed.lines = data.count(b"\n") + 1
    minifiable = spec.name in ("javascript", "typescript", "tsx")  # elsewhere long lines are data tables
    if minifiable and parsed.lines and len(data) / parsed.lines > 400 and len(data) > 20_000:
        parsed.note = "skipped: minified or generated (very long lines)"
        return parsed
    if spec.name in ("c", "cpp"):
        from recall_agent.architecture.lang.cfamily import blank_annotations, looks_cpp

        if spec.name == "c" and path.endswith(".h") and looks_cpp(data):
            spec = BY_NAME["cpp"]  # a C++ header: classes, namespaces and templates need the C++ grammar
        data = blank_annotations(data)  # `__init`, `__user`, `__aligned(8)`: macros the grammar cannot see
    parsed.lang = spec.name
    facts = extract(spec, data)
    if facts.errors:
        parsed.unread = min(facts.errors, parsed.lines)
        parsed.note = f"syntax errors (partially indexed: {parsed.unread} of {parsed.lines} lines unread)"
    if spec.name == "csharp" and not facts.package:
        facts.package = next((s.name for s in facts.symbols if s.kind == "namespace"), "")
    parsed.facts = facts
    return parsed


# --------------------------------------------------------------------------- update the store


def _write_parsed(conn: sqlite3.Connection, p: Parsed, next_symbol: list[int], fresh: bool = False) -> int:
    """Upsert one file's row and replace its facts (by path: another process may have written it first).

    Symbol ids are given here (`next_symbol` holds the next free one) so their concept rows need no
    read-back. `fresh`: a first build, the file has no old facts to delete (and the file_id indexes the
    deletes would use are not built yet)."""
    rows = p.rows if p.rows is not None else _rows(p)
    package, doc = (rows.package, rows.doc) if rows is not None else ("", "")
    row = (
        p.lang,
        package,
        p.size,
        p.mtime_ns,
        p.hash,
        p.lines,
        p.unread,
        int(is_test_path(p.path)),
        doc,
        p.note,
    )
    conn.execute(
        "INSERT INTO files(lang, package, size, mtime_ns, hash, lines, unread, is_test, doc, note, path)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET lang=excluded.lang,"
        " package=excluded.package, size=excluded.size, mtime_ns=excluded.mtime_ns, hash=excluded.hash,"
        " lines=excluded.lines, unread=excluded.unread, is_test=excluded.is_test, doc=excluded.doc,"
        " note=excluded.note",
        (*row, p.path),
    )
    file_id = conn.execute("SELECT id FROM files WHERE path=?", (p.path,)).fetchone()[0]
    if not fresh:
        for table in ("symbols", "imports", "calls", "sites"):
            conn.execute(f"DELETE FROM {table} WHERE file_id=?", (file_id,))
        conn.execute("DELETE FROM edges WHERE src=?", (file_id,))
        conn.execute("DELETE FROM file_text WHERE rowid = ?", (file_id,))
    if rows is None:
        return file_id
    # loaded with the first parsed file: an answer from a fresh index writes no rows and never needs them
    from recall_agent.architecture import concepts, messages

    first = next_symbol[0]
    next_symbol[0] += len(rows.symbols)
    ids = range(first, next_symbol[0])
    conn.executemany(
        "INSERT INTO symbols(id, file_id, name, qualname, kind, line, end_line, signature, doc, returns)"
        " VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(sid, file_id, *sym) for sid, sym in zip(ids, rows.symbols, strict=True)],
    )
    conn.executemany(
        "INSERT INTO imports(file_id, spec, names, line, typing_only) VALUES (?,?,?,?,?)",
        [(file_id, *imp) for imp in rows.imports],
    )
    conn.executemany(
        "INSERT INTO calls(file_id, caller, name, recv, line, rtype) VALUES (?,?,?,?,?,?)",
        [(file_id, *call) for call in rows.calls],
    )
    concepts.store(
        conn, file_id, rows.text, zip(ids, rows.symbol_words, (sym[6] for sym in rows.symbols), strict=True)
    )
    messages.store(conn, file_id, rows.sites)
    return file_id


def _load_dirs(conn: sqlite3.Connection) -> DirCache:
    raw = graph.get_meta(conn, "dirs")
    return json.loads(raw) if raw else {}


def _save_dirs(conn: sqlite3.Connection, dirs: DirCache) -> None:
    graph.set_meta(conn, "dirs", json.dumps(dirs, separators=(",", ":")))


def _read_manifests(root: Path, paths: list[str]) -> dict[str, str]:
    texts = {}
    for rel in paths:
        try:
            texts[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")[:200_000]
        except OSError:
            continue
    return texts


def _manifest_stats(root: Path, manifests: list[str]) -> str:
    """go.mod / package.json / tsconfig.json paths with their mtime and size: any change re-resolves all."""
    stats = []
    for rel in sorted(manifests):
        try:
            st = os.stat(root / rel)
        except OSError:
            continue
        stats.append([rel, st.st_mtime_ns, st.st_size])
    return json.dumps(stats)


def _refresh_modules(conn: sqlite3.Connection, root: Path, manifests: list[str]) -> None:
    # the resolvers load only when something changed: an answer from a fresh index never needs them
    from recall_agent.architecture.resolve import file_module, go_module_roots, python_module_names

    rows = conn.execute("SELECT id, path, lang, package, module FROM files WHERE lang IS NOT NULL").fetchall()
    py_names = python_module_names([r["path"] for r in rows if r["lang"] == "python"])
    go_mods = [m for m in manifests if m.rpartition("/")[2] == "go.mod"]
    roots = go_module_roots(_read_manifests(root, go_mods))
    updates = []
    for r in rows:
        module = file_module(r["path"], r["lang"], r["package"], py_names, roots)
        if module != r["module"]:
            updates.append((module, r["id"]))
    conn.executemany("UPDATE files SET module=? WHERE id=?", updates)
    graph.set_meta(conn, "manifests", json.dumps(sorted(manifests)))
    graph.set_meta(conn, "manifest_stats", _manifest_stats(root, manifests))


def _resolve_edges(conn: sqlite3.Connection, root: Path, only: set[int] | None) -> None:
    from recall_agent.architecture.resolve import FileRow, Resolver, js_config

    rows = conn.execute("SELECT id, path, lang, package, module FROM files WHERE lang IS NOT NULL").fetchall()
    files = [FileRow(r["id"], r["path"], r["lang"], r["package"]) for r in rows]
    modules = {r["id"]: r["module"] for r in rows}
    top_level = _top_level_types(conn)
    manifests = json.loads(graph.get_meta(conn, "manifests") or "[]")
    texts = _read_manifests(root, [m for m in manifests if m.rpartition("/")[2] != "go.mod"])
    js = js_config({p: t for p, t in texts.items() if p.rpartition("/")[2] in JS_MANIFESTS})
    resolver = Resolver(files, modules, top_level, js, texts)
    by_id = {f.id: f for f in files}
    if only is None:
        conn.execute("DELETE FROM edges")
        imports = conn.execute(
            "SELECT file_id, spec, names, line, typing_only FROM imports ORDER BY file_id"
        ).fetchall()
    else:
        if not only:
            return
        marks = ",".join("?" * len(only))
        conn.execute(f"DELETE FROM edges WHERE src IN ({marks})", tuple(only))
        imports = conn.execute(
            f"SELECT file_id, spec, names, line, typing_only FROM imports WHERE file_id IN ({marks})"
            " ORDER BY file_id",
            tuple(only),
        ).fetchall()
    per_file: dict[int, list[ImportRow]] = {}
    typing_lines: dict[int, set[int]] = {}  # lines of `if TYPE_CHECKING:` imports, per file
    for fid, spec, names, line, typing_only in imports:
        per_file.setdefault(fid, []).append(ImportRow(spec, names.split(",") if names else [], line))
        if typing_only:
            typing_lines.setdefault(fid, set()).add(line)
    edges = []
    for fid, rows in per_file.items():
        src = by_id.get(fid)
        if src is None:
            continue
        typed = typing_lines.get(fid, set())
        for dst, line, imported in resolver.resolve_file(src, modules[fid], rows):
            edges.append((fid, dst, line, imported, int(line in typed)))
    conn.executemany(
        "INSERT OR IGNORE INTO edges(src, dst, line, names, typing_only) VALUES (?,?,?,?,?)", edges
    )


def _top_level_types(conn: sqlite3.Connection) -> dict[int, list[str]]:
    """Top-level definitions of the namespaced languages (in C#, those directly inside the namespace)."""
    out: dict[int, list[str]] = {}
    for fid, name, qualname, package in conn.execute(
        "SELECT s.file_id, s.name, s.qualname, f.package FROM symbols s JOIN files f ON f.id = s.file_id"
        " WHERE f.lang IN ('java', 'kotlin', 'csharp', 'php') AND s.kind != 'namespace'"
    ):
        if "." not in qualname or qualname == f"{package}.{name}":
            out.setdefault(fid, []).append(name)
    return out


def update(
    conn: sqlite3.Connection,
    root: Path,
    *,
    progress: bool | None = None,
    force: bool = False,
    summary: bool = True,
    cap: int | None = None,
) -> IndexStats:
    """Bring the store in line with the files on disk; returns what was done.

    Parsed files are committed in batches, so an interrupted first index (a query's deadline, Ctrl-C)
    keeps its work and the next run continues; a `dirty` mark makes that next run resolve all imports.
    `cap` stops at that many files (None: `RECALL_INDEX_MAX_FILES`, else no cap).
    """
    started = time.perf_counter()
    stats = IndexStats(root=root, store=Path(conn.execute("PRAGMA database_list").fetchone()[2]))
    cap = max_files() if cap is None else cap
    if graph.get_meta(conn, "bulk") == "1":  # a bulk build was interrupted before its indexes were built
        with _transaction(conn):
            graph.ensure_indexes(conn)
            graph.set_meta(conn, "bulk", "0")
    walked = walk(root, _load_dirs(conn), cap)
    stats.phases["walk"] = time.perf_counter() - started
    stamps = conn.cursor()
    stamps.row_factory = None  # plain tuples: the kernel has 55,000 rows to compare
    stamp = {path: (m, s) for path, m, s in stamps.execute("SELECT path, mtime_ns, size FROM files")}
    gone = [p for p in stamp if p not in walked.files]
    todo = [(p, m, s) for p, (m, s) in walked.files.items() if force or stamp.get(p) != (m, s)]
    known = _known_rows(conn, [p for p, _, _ in todo if p in stamp] + gone)
    removed = [known[p]["id"] for p in gone]
    stats.capped = cap if walked.truncated else 0
    if graph.get_meta(conn, "capped") != str(stats.capped):
        with _transaction(conn):
            graph.set_meta(conn, "capped", str(stats.capped))
    dirty = (
        graph.get_meta(conn, "dirty") == "1"
        or graph.get_meta(conn, "indexed_at") is None
        or graph.get_meta(conn, "manifest_stats") != _manifest_stats(root, walked.manifests)
    )
    if removed or todo or dirty:
        graph.set_meta(conn, "dirty", "1")
        mark = time.perf_counter()
        bulk = not stamp and len(todo) >= BULK_MIN_FILES
        with _bulk_build(conn, bulk):
            set_changed, changed_ids, parsed = _parse_and_write(
                conn, root, todo, known, removed, force, progress, fresh=bulk
            )
        stats.phases["parse"] = time.perf_counter() - mark
        mark = time.perf_counter()
        _finish(conn, root, walked, changed_ids, set_changed or dirty)
        stats.phases["resolve"] = time.perf_counter() - mark
        stats.parsed = parsed
        stats.removed = len(removed)
        with _transaction(conn):
            _save_lang_stats(conn)
    if walked.dirs_changed and not walked.truncated:
        _save_dirs(conn, walked.dirs)
    if summary:
        mark = time.perf_counter()
        _fill_stats(conn, stats)
        stats.phases["summary"] = time.perf_counter() - mark
    stats.seconds = time.perf_counter() - started
    return stats


@contextmanager
def _bulk_build(conn: sqlite3.Connection, bulk: bool) -> Iterator[None]:
    """A first build of a large tree: secondary indexes are built once after the load (a sort each, not a
    B-tree insert per row), no fsync per batch, a larger page cache. An interrupted build keeps its
    committed batches; the next update puts the indexes back first (`graph.ensure_indexes`)."""
    if not bulk:
        yield
        return
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute(f"PRAGMA cache_size=-{BULK_CACHE_KB}")
    with _transaction(conn):
        graph.drop_bulk_indexes(conn)
        graph.set_meta(conn, "bulk", "1")
    try:
        yield
    finally:
        with _transaction(conn):
            graph.ensure_indexes(conn)
            graph.set_meta(conn, "bulk", "0")
        conn.execute("PRAGMA synchronous=NORMAL")


def _save_lang_stats(conn: sqlite3.Connection) -> None:
    """Per language: files, files with unread lines, unread lines, lines (one scan after a change, so an
    answer's caveat on the kernel reads them instead of scanning 55,000 rows: `lang_stats`)."""
    rows = conn.execute(
        "SELECT lang, count(*), sum(note LIKE 'syntax errors%'), coalesce(sum(unread), 0),"
        " coalesce(sum(lines), 0) FROM files WHERE lang IS NOT NULL GROUP BY lang"
    ).fetchall()
    graph.set_meta(conn, "lang_stats", json.dumps({r[0]: list(r[1:]) for r in rows}))


def lang_stats(conn: sqlite3.Connection) -> dict[str, list[int]] | None:
    """lang -> [files, files with unread lines, unread lines, lines], as of the last change (None: not
    recorded by this index yet)."""
    raw = graph.get_meta(conn, "lang_stats")
    return json.loads(raw) if raw else None


def _known_rows(conn: sqlite3.Connection, paths: list[str]) -> dict[str, sqlite3.Row]:
    """The stored rows of these paths (the ones about to change), by path."""
    out: dict[str, sqlite3.Row] = {}
    for i in range(0, len(paths), 500):
        chunk = paths[i : i + 500]
        for r in conn.execute(
            "SELECT id, path, mtime_ns, size, hash, package, lang FROM files"
            f" WHERE path IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            out[r["path"]] = r
    return out


def _parse_and_write(
    conn, root: Path, todo, known, removed: list[int], force: bool, progress: bool | None, fresh: bool = False
):
    def old_hash(path: str) -> str | None:
        row = known.get(path)
        return None if force or row is None or row["lang"] is None else row["hash"]

    set_changed = bool(removed)
    changed_ids: set[int] = set()
    parsed_count = 0
    if removed:
        with _transaction(conn):
            for i in range(0, len(removed), 500):
                chunk = removed[i : i + 500]
                conn.execute(f"DELETE FROM files WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    show = (progress if progress is not None else sys.stderr.isatty()) and len(todo) >= PROGRESS_MIN_FILES
    jobs = [(p, m, s, old_hash(p)) for p, m, s in todo]
    with _progress(show, root.name, len(todo)) as advance:
        stream = _parsed_stream(root, jobs)
        while batch := list(itertools.islice(stream, BATCH_FILES)):
            with _transaction(conn):
                next_symbol = [conn.execute("SELECT coalesce(max(id), 0) + 1 FROM symbols").fetchone()[0]]
                for p in batch:
                    advance()
                    row = known.get(p.path)
                    if p.note == "unchanged":  # touched, same content: remember the new stat only
                        conn.execute(
                            "UPDATE files SET mtime_ns=?, size=? WHERE path=?", (p.mtime_ns, p.size, p.path)
                        )
                        continue
                    parsed_count += 1
                    new_package = p.rows.package if p.rows is not None else ""
                    if row is None or row["lang"] != p.lang or row["package"] != new_package:
                        set_changed = True
                    changed_ids.add(_write_parsed(conn, p, next_symbol, fresh=fresh))
    return set_changed, changed_ids, parsed_count


def index_workers() -> int:
    """Parse processes: `RECALL_INDEX_WORKERS`, else one per core this process may run on."""
    raw = os.environ.get("RECALL_INDEX_WORKERS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _parsed_stream(root: Path, jobs: list[tuple[str, int, int, str | None]]) -> Iterator[Parsed]:
    """Parsed files in `jobs` order, their facts as rows; parsed by a pool of processes when it pays.

    At most two chunks per worker are in flight, so memory stays bounded however slow the writer is."""
    workers = index_workers()
    if workers < 2 or len(jobs) < PARALLEL_MIN_FILES:
        for job in jobs:
            parsed = _parse_file(root, *job)
            parsed.rows, parsed.facts = _rows(parsed), None
            yield parsed
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    chunks = (jobs[i : i + PARSE_CHUNK] for i in range(0, len(jobs), PARSE_CHUNK))
    # spawn: the parent may hold threads (a progress bar) and open SQLite handles, which fork would copy
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init) as pool:
        pending = deque(
            pool.submit(_parse_chunk, str(root), c) for c in itertools.islice(chunks, 2 * workers)
        )
        try:
            while pending:
                done = pending.popleft().result()
                if (chunk := next(chunks, None)) is not None:
                    pending.append(pool.submit(_parse_chunk, str(root), chunk))
                yield from done
        finally:
            for future in pending:
                future.cancel()


# a parse worker makes a dict and lists per query match and tuples per row, nearly all gone by the file's end:
# at CPython's default (a young collection every 700 new containers) the cyclic GC runs thousands of times a
# chunk for nothing (bench/NOTES-mypyc18-issue39.md, "One cheap thing")
WORKER_GC_THRESHOLD = (100_000, 50, 100)


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (it keeps the work done)
    gc.set_threshold(*WORKER_GC_THRESHOLD)


def _parse_chunk(root: str, jobs: list[tuple[str, int, int, str | None]]) -> list[Parsed]:
    """A parse worker's unit: files parsed, facts turned into rows (plain tuples cross processes fast)."""
    out = []
    for job in jobs:
        parsed = _parse_file(Path(root), *job)
        parsed.rows, parsed.facts = _rows(parsed), None
        out.append(parsed)
    return out


def _finish(conn, root: Path, walked: WalkResult, changed_ids: set[int], everything: bool) -> None:
    """Module names and import edges: all of them when the file set changed, else the changed files'."""
    with _transaction(conn):
        if everything:
            _refresh_modules(conn, root, walked.manifests)
            _resolve_edges(conn, root, None)
        else:
            _resolve_edges(conn, root, changed_ids)
        graph.set_meta(conn, "indexed_at", str(time.time()))
        graph.set_meta(conn, "root", str(root))
        graph.set_meta(conn, "dirty", "0")


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def _progress(show: bool, name: str, total: int) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr when `show`, else a no-op advance()."""
    if not show:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("indexing {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(name, total=total)
        yield lambda: bar.advance(task)


def _fill_stats(conn: sqlite3.Connection, stats: IndexStats) -> None:
    stats.files = conn.execute("SELECT count(*) FROM files WHERE lang IS NOT NULL").fetchone()[0]
    stats.skipped = conn.execute("SELECT count(*) FROM files WHERE lang IS NULL").fetchone()[0]
    stats.symbols = conn.execute("SELECT count(*) FROM symbols").fetchone()[0]
    stats.edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    stats.calls = conn.execute("SELECT count(*) FROM calls").fetchone()[0]
    stats.languages = dict(
        conn.execute("SELECT lang, count(*) FROM files WHERE lang IS NOT NULL GROUP BY lang ORDER BY 2 DESC")
    )
    stats.syntax_errors_by_lang = dict(
        conn.execute(
            "SELECT lang, count(*) FROM files WHERE note LIKE 'syntax errors%' GROUP BY lang ORDER BY 2 DESC"
        )
    )
    stats.syntax_errors = sum(stats.syntax_errors_by_lang.values())
    stats.unread_lines, stats.lines = conn.execute(
        "SELECT coalesce(sum(unread), 0), coalesce(sum(lines), 0) FROM files WHERE lang IS NOT NULL"
    ).fetchone()
    for path, note in conn.execute(
        "SELECT path, note FROM files WHERE note != '' ORDER BY lang IS NOT NULL, path LIMIT 20"
    ):
        stats.notes.append(f"{path}: {note}")


def open_index(
    repo_path: str | Path, *, progress: bool | None = None, summary: bool = True, trust_fresh: bool = False
) -> tuple[sqlite3.Connection, IndexStats]:
    """Open (creating or refreshing as needed) the index of the repository containing `repo_path`.

    `trust_fresh` (a question's path): a large index checked a moment ago answers without the stat walk when
    nothing says the tree changed (`known_fresh`)."""
    root = find_repo_root(repo_path)
    conn = graph.connect(graph.store_path(root))
    if trust_fresh and known_fresh(conn, root):
        return conn, IndexStats(root=root, store=graph.store_path(root))
    checked = time.time_ns()
    stats = update(conn, root, progress=progress, summary=summary)
    if trust_fresh and not stats.capped:
        _mark_fresh(conn, root, checked)
    return conn, stats


# ------------------------------------------------------------------ freshness without the stat walk
#
# Every question brings the index up to date first; on a small tree that is a stat of each file (fast). On
# a large one (the kernel: 55,000 files, 0.14 s of CPU in lstat alone, plus reading their 55,000 stamps) a
# question answers from the index as it is when all of these hold, and walks the tree otherwise:
#   - the index holds FRESH_MIN_FILES files or more;
#   - the last full check (a walk that left nothing to do) is at most fresh_seconds() old;
#   - no folder's mtime moved since then (a file created, deleted or renamed, which is also how editors
#     save atomically and how git checks files out: one stat per folder, ~3,600 in the kernel);
#   - git's index and HEAD have the stamps they had then (a commit, checkout, `git add`, or a `git status`
#     that refreshed the index).
# What this can miss: a file rewritten in place (same folder entry) within fresh_seconds() of the last
# check. `recall index` always walks.

FRESH_MIN_FILES = 20_000
FRESH_SECONDS_ENV = "RECALL_INDEX_FRESH_SECONDS"
FRESH_SECONDS = 30.0


def fresh_seconds() -> float:
    """How long a large index's full check is trusted (RECALL_INDEX_FRESH_SECONDS; 0: always walk)."""
    raw = os.environ.get(FRESH_SECONDS_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else FRESH_SECONDS
    except ValueError:
        raise RepositoryError(f"{FRESH_SECONDS_ENV} must be a number of seconds, not {raw!r}") from None


def _git_stamps(root: Path) -> list[list[int]]:
    out = []
    for name in ("index", "HEAD"):
        try:
            st = os.stat(root / ".git" / name)
        except OSError:
            out.append([0, 0])
            continue
        out.append([st.st_mtime_ns, st.st_size])
    return out


def _mark_fresh(conn: sqlite3.Connection, root: Path, checked: int) -> None:
    """Remember a full check that left the index current: when, and the stamps `known_fresh` compares."""
    files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    if files < FRESH_MIN_FILES:
        return
    listings = _load_dirs(conn)
    folders = [[rel, listing[0]] for rel, listing in listings.items()]
    mark = {"checked_ns": checked, "git": _git_stamps(root), "folders": folders}
    with _transaction(conn):
        graph.set_meta(conn, "fresh", json.dumps(mark, separators=(",", ":")))


def known_fresh(conn: sqlite3.Connection, root: Path) -> bool:
    """True when the last full check still stands for a large index (the rule above)."""
    window = fresh_seconds()
    raw = graph.get_meta(conn, "fresh") if window else None
    if not raw or graph.get_meta(conn, "dirty") != "0":
        return False
    mark = json.loads(raw)
    if time.time_ns() - mark["checked_ns"] > window * 1e9 or mark["git"] != _git_stamps(root):
        return False
    base = str(root)
    for rel, mtime in mark["folders"]:
        try:
            if not mtime or os.stat(f"{base}/{rel}" if rel else base).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    return True
