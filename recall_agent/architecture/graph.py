"""The graph store: one SQLite file per repository under `$RECALL_HOME/architecture/`.

Tables: `files` (one row per source file seen, with the stat and content hash that drive incremental
updates), `symbols`, `imports` (raw, as written) and `edges` (imports resolved to files), `calls` (raw call
sites; resolved to definitions at query time, see queries.py), `sites` (raise/log sites with their
messages' literal parts, see messages.py); `meta` also keeps the walk's folder listings. No server: plain sqlite3 in WAL mode.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from recall_agent.config import recall_home

SCHEMA_VERSION = "10"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,       -- repo-relative, '/' separated
    lang TEXT,                       -- NULL: seen but not parsed (see note)
    module TEXT NOT NULL DEFAULT '', -- dotted module (Python), import path (Go), else path sans suffix
    package TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL DEFAULT '',
    lines INTEGER NOT NULL DEFAULT 0,
    unread INTEGER NOT NULL DEFAULT 0, -- lines the grammar could not read (syntax errors)
    is_test INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL DEFAULT '',
    note TEXT NOT NULL DEFAULT ''    -- why it was skipped, or 'syntax errors'
);
CREATE INDEX IF NOT EXISTS files_module ON files(module);
CREATE TABLE IF NOT EXISTS symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    kind TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT NOT NULL,
    returns TEXT NOT NULL DEFAULT ''  -- what it returns when its body says: T:Class, R:function
);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE INDEX IF NOT EXISTS symbols_qualname ON symbols(qualname);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id);
CREATE TABLE IF NOT EXISTS imports (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    spec TEXT NOT NULL,
    names TEXT NOT NULL,            -- comma separated
    line INTEGER NOT NULL,
    typing_only INTEGER NOT NULL DEFAULT 0  -- inside `if TYPE_CHECKING:`
);
CREATE INDEX IF NOT EXISTS imports_file ON imports(file_id);
CREATE TABLE IF NOT EXISTS edges (
    src INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    dst INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    names TEXT NOT NULL,
    typing_only INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (src, dst, line)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE TABLE IF NOT EXISTS calls (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    caller TEXT NOT NULL,
    name TEXT NOT NULL,
    recv TEXT NOT NULL,
    line INTEGER NOT NULL,
    rtype TEXT NOT NULL DEFAULT ''  -- what the receiver is, when known: T:Class, R:function, M:module
);
CREATE INDEX IF NOT EXISTS calls_name ON calls(name);
CREATE INDEX IF NOT EXISTS calls_file ON calls(file_id);
-- concept search (concepts.py): words per file and per symbol, rowid = files.id / symbols.id
CREATE VIRTUAL TABLE IF NOT EXISTS file_text USING fts5(path, defs, docs, idents, tokenize='porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS symbol_text USING fts5(words, doc, tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS files_text_gone AFTER DELETE ON files BEGIN
    DELETE FROM file_text WHERE rowid = old.id;
END;
CREATE TRIGGER IF NOT EXISTS symbols_text_gone AFTER DELETE ON symbols BEGIN
    DELETE FROM symbol_text WHERE rowid = old.id;
END;
-- raise / throw / log sites and the literal parts of their messages (messages.py, origins.py)
CREATE TABLE IF NOT EXISTS sites (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    kind TEXT NOT NULL,              -- raise | error | log | message
    scope TEXT NOT NULL,             -- qualname of the enclosing definition
    exc TEXT NOT NULL,               -- the type raised, when written there
    cond TEXT NOT NULL,              -- the closest enclosing `if` condition
    parts TEXT NOT NULL              -- literal parts, joined by U+001F
);
CREATE INDEX IF NOT EXISTS sites_file ON sites(file_id);
CREATE VIRTUAL TABLE IF NOT EXISTS site_text USING fts5(parts, tokenize='unicode61');
CREATE TRIGGER IF NOT EXISTS sites_text_gone AFTER DELETE ON sites BEGIN
    DELETE FROM site_text WHERE rowid = old.id;
END;
"""


# secondary indexes a first build creates after its bulk load (one sort each instead of a B-tree insert per
# row); `ensure_indexes` puts back any an interrupted build left out
BULK_INDEXES = tuple(
    line.rstrip(";")
    for line in SCHEMA.splitlines()
    if line.startswith("CREATE INDEX IF NOT EXISTS") and "files_module" not in line
)


def drop_bulk_indexes(conn: sqlite3.Connection) -> None:
    for sql in BULK_INDEXES:
        conn.execute("DROP INDEX IF EXISTS " + sql.split()[5])


def ensure_indexes(conn: sqlite3.Connection) -> None:
    for sql in BULK_INDEXES:
        conn.execute(sql)


def store_path(repo_root: Path, home: Path | None = None) -> Path:
    """`$RECALL_HOME/architecture/<repo-name>-<hash of the absolute path>.sqlite`."""
    root = repo_root.resolve()
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in root.name) or "root"
    return (home or recall_home()) / "architecture" / f"{name}-{digest}.sqlite"


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    version = _schema_version(conn)
    if version == SCHEMA_VERSION:  # the common case: read-only until something changed on disk
        return conn
    conn.execute("PRAGMA journal_mode=WAL")  # persistent: set once when the file is created
    if version is not None:  # an older layout: rebuild from scratch (it's a cache)
        for table in (
            "site_text",
            "sites",
            "symbol_text",
            "file_text",
            "dirs",
            "calls",
            "edges",
            "imports",
            "symbols",
            "files",
            "meta",
        ):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.executescript(SCHEMA)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
    return conn


def _schema_version(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
