"""A damaged SQLite store is never written to silently.

An insert reads only the pages it needs, so a store with damaged pages elsewhere took a new learning and
reported success. `PRAGMA quick_check` reads every page: too slow to run before every write of a large
store (docs/benchmarks.md has the figures), so it runs only when the file changed since recall last saw it
sound. After every write and when a store closes, recall notes the file's size and modification time (and
its WAL's) in `<store>.verified`; a writer whose notes match knows nobody else touched the file since the
last check, and one whose notes do not (another program wrote into the file, a copy came from elsewhere, a
recall from before this note) runs the full check first and refuses to write when it fails.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

SUFFIX = ".verified"
CHECK_ROWS = 3  # problems quick_check reports at most (the first few say enough)


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def stamp(db: Path) -> dict[str, list[int] | None]:
    wal = _stat(db.with_name(db.name + "-wal"))
    # an empty WAL holds nothing (opening a WAL store creates one): the same as none
    return {"db": _stat(db), "wal": wal if wal and wal[0] > 0 else None}


def note_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


def known_sound(db: Path) -> bool:
    """Did recall leave the file exactly as it is now, after a sound check or its own writes?"""
    try:
        noted = json.loads(note_path(db).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return noted == stamp(db)


def note_sound(db: Path) -> None:
    """Remember the file as it is now (after a write or a sound check); best effort, atomic."""
    note = note_path(db)
    tmp = note.with_name(f".{note.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(stamp(db)), encoding="utf-8")
        os.replace(tmp, note)
    except OSError:
        tmp.unlink(missing_ok=True)


def problems(conn: sqlite3.Connection) -> str | None:
    """`PRAGMA quick_check` on `conn`: None when sound, else SQLite's first findings."""
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({CHECK_ROWS})")]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if rows == ["ok"] else " ".join("; ".join(rows).split())[:300]


def damaged_message(db: Path, found: str) -> str:
    return (
        f"learnings store {db} is corrupt ({found}); nothing was written. Save what is readable"
        f" (`recall export -o saved.jsonl`, or `sqlite3 {db} .recover`), move the file aside, then"
        " `recall learn --from-jsonl saved.jsonl` starts a new store with it"
    )
