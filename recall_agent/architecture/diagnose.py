"""Python import errors explained from the graph: a missing name, a partially initialized module (cycle),
a submodule of this repository's package that does not exist. Each returns one short Markdown answer, or
None when the error is not about this repository's code. `No module named 'x'` as a whole is missing.py's
(a third-party package, or a module of this repository that exists).
"""

from __future__ import annotations

import difflib
import re
import sqlite3
from pathlib import Path

from recall_agent.architecture import queries as q

_CANNOT_IMPORT = re.compile(
    r"cannot import name '(?P<name>[\w.]+)' from (?P<partial>partially initialized module )?'(?P<module>[\w.]+)'"
)
_NO_ATTRIBUTE = re.compile(r"module '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'")


def diagnose(conn: sqlite3.Connection, root: Path, text: str) -> str | None:
    if m := _CANNOT_IMPORT.search(text):
        return _missing_name(conn, root, m["module"], m["name"], bool(m["partial"]))
    if m := _NO_ATTRIBUTE.search(text):
        return _missing_name(conn, root, m["module"], m["name"], False)
    return None


def _module_target(conn: sqlite3.Connection, module: str) -> q.Target | None:
    found = q.lookup(conn, module, fuzzy=False)
    targets = [t for t in found.targets if t.is_file and t.lang == "python"]
    return targets[0] if found.match == "module" and targets else None


def _top_level_names(conn: sqlite3.Connection, target: q.Target) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM symbols WHERE file_id = ? AND instr(qualname, '.') = 0"
            " ORDER BY substr(name, 1, 1) = '_', line",
            (target.file_id,),
        )
    ]


def _defined_in_source(root: Path, target: q.Target, name: str) -> int:
    """Line where the module binds `name` at top level (def, class, assignment, import), else 0."""
    try:
        text = (root / target.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    n = re.escape(name)
    binding = re.compile(
        rf"^(?:(?:async\s+)?def\s+{n}\b|class\s+{n}\b|{n}\s*(?::[^=\n]+)?=|from\s+\S+\s+import\s+.*\b{n}\b"
        rf"|import\s+.*\b{n}\b)"
    )
    for lineno, line in enumerate(text.splitlines(), 1):
        if binding.match(line):
            return lineno
    return 0


def _missing_name(conn: sqlite3.Connection, root: Path, module: str, name: str, partial: bool) -> str | None:
    target = _module_target(conn, module)
    if target is None:
        return None
    head = f"`{module}` ({target.path})"
    line = _defined_in_source(root, target, name.split(".")[0])
    if line:
        cycle = q.cycle_through(conn, target.file_id)
        why = (
            f"; it is part of an import cycle: {' → '.join(cycle)} — the name is read before the module "
            "finished executing (move the import into the function, or break the cycle)"
            if cycle
            else ("; the module was only partially initialized (a circular import)" if partial else "")
        )
        return f"{head} does define `{name}` at line {line}{why}."
    names = _top_level_names(conn, target)
    closest = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f" Closest: {', '.join(f'`{c}`' for c in closest)}." if closest else ""
    elsewhere = [
        t for t in q.lookup(conn, name, fuzzy=False).targets if not t.is_file and t.file_id != target.file_id
    ][:3]
    moved = (
        " Defined elsewhere: " + ", ".join(f"`{t.display}` ({t.location})" for t in elsewhere) + "."
        if elsewhere
        else ""
    )
    shown = ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
    return f"{head} has no top-level `{name}`.{hint}{moved} It defines: {shown or 'nothing'}."


def missing_submodule(conn: sqlite3.Connection, module: str) -> str:
    """`module` is not a module of this repository although its package is (missing.py checked both)."""
    modules = [r[0] for r in conn.execute("SELECT DISTINCT module FROM files WHERE lang = 'python'")]
    closest = [m for m in difflib.get_close_matches(module, modules, n=3, cutoff=0.75) if m != module]
    hint = f" Closest modules: {', '.join(f'`{c}`' for c in closest)}." if closest else ""
    return f"Module of this repository (read from the code): no module `{module}` in it.{hint}"
