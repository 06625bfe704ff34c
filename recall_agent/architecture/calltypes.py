"""Is this call site a call of that definition? Decided from what the receiver holds (values.py) when known.

`s = Session(); s.send()` calls `Session.send` (or the `send` of a base class of Session); `wsgi.get_host()`
calls `.wsgi`'s `get_host` and nobody else's; `os.path.join()` calls no repository function; `self.run()`
inside a subclass calls the base class's `run` unless the subclass has its own. The verdict is True (it is
this definition), False (it is something else) or None (cannot tell: the name-based confidence stands).
"""

from __future__ import annotations

import re
import sqlite3
from functools import cached_property
from typing import TYPE_CHECKING

from recall_agent.architecture.values import annotation_type

if TYPE_CHECKING:
    from recall_agent.architecture.target import Target

_RETURNS = re.compile(r"->\s*(.+)$")
_BASES = re.compile(r"^\s*(?:export\s+)?(?:abstract\s+)?class\s+\w+\s*\((.*)\)\s*$")
_EXTENDS = re.compile(r"\bextends\s+([\w$.]+)")
SELF = ("self", "this", "cls")


class Judge:
    def __init__(self, conn: sqlite3.Connection, target: Target) -> None:
        self.conn = conn
        self.target = target
        self.owner = target.qualname.rpartition(".")[0].rsplit(".", 1)[-1] if target.kind == "method" else ""
        self._modules: dict[str, int | None] = {}

    # -- facts about the repository, loaded on first need
    @cached_property
    def bases(self) -> dict[str, set[str]]:
        """Class name → names of its base classes (from the class signatures; names may repeat across files)."""
        out: dict[str, set[str]] = {}
        for name, signature in self.conn.execute(
            "SELECT name, signature FROM symbols WHERE kind IN ('class', 'interface')"
        ):
            out.setdefault(name, set()).update(_base_names(signature))
        return out

    @cached_property
    def classes_defining(self) -> set[str]:
        """Classes that define a method with the target's name (their own override)."""
        return {
            q.rpartition(".")[0].rsplit(".", 1)[-1]
            for (q,) in self.conn.execute(
                "SELECT qualname FROM symbols WHERE name = ? AND kind = 'method'", (self.target.name,)
            )
        }

    def _is_owner_or_inherits(self, cls: str, depth: int = 0) -> bool | None:
        """Does a method call on an instance of `cls` reach the target method? None when `cls` is unknown."""
        if cls == self.owner:
            return True
        if cls not in self.bases:
            return None
        if cls in self.classes_defining or depth > 8:
            return False  # its own override (or a runaway hierarchy)
        return any(self._is_owner_or_inherits(b, depth + 1) for b in self.bases[cls])

    def _inherits_from(self, cls: str, ancestor: str, depth: int = 0) -> bool:
        bases = self.bases.get(cls, set())
        return ancestor in bases or (
            depth < 8 and any(self._inherits_from(b, ancestor, depth + 1) for b in bases)
        )

    def _returns(self, func: str, depth: int = 0) -> str:
        """The class a call of `func` returns: its return annotation, else what its body returns."""
        rows = self.conn.execute(
            "SELECT signature, returns FROM symbols WHERE name = ? AND kind IN ('function', 'method')",
            (func,),
        ).fetchall()
        for signature, _ in rows:
            if (m := _RETURNS.search(signature)) and (found := annotation_type(m.group(1))):
                return found
        return self._value_class(rows[0][1], depth) if len(rows) == 1 and rows[0][1] else ""

    def _value_class(self, value: str, depth: int = 0) -> str:
        kind, _, name = value.partition(":")
        if kind == "T":
            return name
        return self._returns(name, depth + 1) if kind == "R" and depth < 3 else ""

    def _fixture(self, name: str, fid: int) -> str:
        """The class a pytest fixture `name` (same file, or a conftest.py) returns or yields."""
        for (returns,) in self.conn.execute(
            "SELECT s.returns FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? AND"
            " s.kind = 'function' AND s.returns != '' AND (s.file_id = ? OR f.path = 'conftest.py'"
            " OR f.path LIKE '%/conftest.py') ORDER BY s.file_id != ?",
            (name, fid, fid),
        ):
            return self._value_class(returns)
        return ""

    def _module_file(self, dotted: str, caller_module: str, caller_path: str) -> int | None:
        key = f"{caller_module}|{dotted}"
        if key not in self._modules:
            absolute = _absolute(dotted, caller_module, caller_path.endswith("__init__.py"))
            row = self.conn.execute(
                "SELECT id FROM files WHERE module = ? AND lang = 'python' ORDER BY path LIKE '%.pyi'",
                (absolute,),
            ).fetchone()
            self._modules[key] = row[0] if row else None
        return self._modules[key]

    def _reexports(self, module_file: int) -> bool:
        """Does that module hand out the target's name from the target's file (`flask/__init__.py`)?"""
        for (names,) in self.conn.execute(
            "SELECT names FROM edges WHERE src = ? AND dst = ?", (module_file, self.target.file_id)
        ):
            if self.target.name in (names or "").split(",") or not names:
                return True
        return False

    # -- the verdict
    def verdict(
        self, fid: int, caller: str, recv: str, rtype: str, caller_module: str, caller_path: str
    ) -> bool | None:
        if self.target.kind == "method":
            return self._method(fid, caller, recv, rtype)
        if not rtype:
            return None
        kind, _, value = rtype.partition(":")
        if kind == "P":
            return None  # a parameter: could hold a module as well as an object
        if kind != "M":
            return False  # obj.name() on an object is a method call, not this function
        module_file = self._module_file(value, caller_module, caller_path)
        if module_file is None:
            return False  # a module outside the repository, or a class: not this function
        return module_file == self.target.file_id or self._reexports(module_file)

    def _method(self, fid: int, caller: str, recv: str, rtype: str) -> bool | None:
        if recv in SELF and not rtype:
            cls = caller.rpartition(".")[0].rsplit(".", 1)[-1] if "." in caller else ""
            if not cls:
                return None
            if cls == self.owner and fid == self.target.file_id:
                return True
            if cls == self.owner or self._inherits_from(self.owner, cls):
                return None  # a base class's `self.m()` reaches a subclass's override at run time
            return self._is_owner_or_inherits(cls)
        if not rtype:
            return None
        kind, _, value = rtype.partition(":")
        if kind in ("R", "P"):
            value = self._returns(value) if kind == "R" else self._fixture(value, fid)
            if not value:
                return None
        elif kind == "M":  # an imported class (`Cls.method(…)`), else a module: not a method call
            value = value.rsplit(".", 1)[-1]
            if not value[:1].isupper():
                return False
            return self._is_owner_or_inherits(value)
        return self._is_owner_or_inherits(value)  # None: a class recall does not know (made at run time)


def _base_names(signature: str) -> set[str]:
    if m := _BASES.match(signature.split(":")[0] if signature.startswith("class") else signature):
        out = set()
        for part in m.group(1).split(","):
            part = part.strip()
            if part and "=" not in part and re.fullmatch(r"[\w.]+(?:\[.*\])?", part):
                out.add(part.split("[")[0].rsplit(".", 1)[-1])
        return out
    if m := _EXTENDS.search(signature):
        return {m.group(1).rsplit(".", 1)[-1]}
    return set()


def _absolute(dotted: str, module: str, is_package: bool) -> str:
    """`.wsgi` seen from `werkzeug.serving` → `werkzeug.wsgi`."""
    level = len(dotted) - len(dotted.lstrip("."))
    if not level:
        return dotted
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    rest = dotted[level:]
    return f"{package}.{rest}" if package and rest else package or rest
