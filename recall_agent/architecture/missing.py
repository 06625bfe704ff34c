"""A missing module or package, answered from the code: which files of this repository import it, whether
and where the project declares it, and the project's own install command; or, when the module is this
repository's own, that it exists (and why the import may still fail).

Errors read: Python (`No module named 'x'`), Node (`Cannot find module 'x'`, `Cannot find package 'x'`,
`Can't resolve 'x'`, `Failed to resolve import "x"`), Go (`no required module provides package x`,
`cannot find package "x"`, `missing go.sum entry for module providing package x`), Rust (`unresolved
import`, `can't find crate for`, `undeclared crate or module`), Ruby (`cannot load such file -- x`,
`Could not find gem 'x'`) and Java (`package x does not exist`, `ClassNotFoundException`).
"""

from __future__ import annotations

import re
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from recall_agent.architecture import manifests as mf

SHOWN = 6  # importers named
KIND_MISSING = "Missing package"
KIND_OWN = "Module of this repository"
AUX_DIRS = frozenset(
    {"bench", "benchmarks", "benchmark", "examples", "example", "docs", "doc", "scripts", "script", "tools"}
    | {"sandbox", "samples", "contrib", "misc", "dev", "ci", "hack"}
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (mf.PYTHON, re.compile(r"No module named '?([A-Za-z_][\w.]{0,200})'?")),
    (mf.NODE, re.compile(r"Cannot find (?:module|package) '([^'\s]{1,200})'")),
    (mf.NODE, re.compile(r"Can't resolve '([^'\s]{1,200})'")),
    (mf.NODE, re.compile(r"Failed to resolve (?:import|entry for package) \"([^\"\s]{1,200})\"")),
    (mf.GO, re.compile(r"no required module provides package ([\w./~-]{1,300})")),
    (mf.GO, re.compile(r"missing go\.sum entry for module providing package ([\w./~-]{1,300})")),
    (mf.GO, re.compile(r"cannot find package \"([\w./~-]{1,300})\"")),
    (mf.GO, re.compile(r"could not import ([\w./~-]{1,300}) \(")),
    (mf.RUST, re.compile(r"can't find crate for `(\w{1,100})`")),
    (mf.RUST, re.compile(r"undeclared crate or module `(\w{1,100})`")),
    (mf.RUST, re.compile(r"unlinked crate `(\w{1,100})`")),
    (mf.RUST, re.compile(r"unresolved import `(\w{1,100})(?:::[^`]{0,200})?`")),
    (mf.RUBY, re.compile(r"cannot load such file -- ([\w./-]{1,200})")),
    (mf.RUBY, re.compile(r"Could not find gem '([\w.-]{1,100})")),
    (mf.JAVA, re.compile(r"package ([a-z][\w]*(?:\.[\w]+){1,20}) does not exist")),
    (
        mf.JAVA,
        re.compile(r"(?:ClassNotFoundException|NoClassDefFoundError):? ([a-z][\w]*(?:[./][\w$]+){1,20})"),
    ),
]
_LANGS = {
    mf.PYTHON: ("python",),
    mf.NODE: ("javascript", "typescript", "tsx"),
    mf.GO: ("go",),
    mf.RUST: ("rust",),
    mf.RUBY: ("ruby",),
    mf.JAVA: ("java", "kotlin"),
}
_NODE_BUILTIN = re.compile(
    r"^(?:node:|(?:fs|path|http|https|url|os|util|events|stream|crypto|child_process)$)"
)
_RUST_OWN = frozenset({"crate", "self", "super", "std", "core", "alloc"})


@dataclass
class Missing:
    eco: str
    name: str  # as the error names it: a module, package path, crate, require path
    package: str = ""  # what a manifest would declare (Node package, Go module, gem, ...)
    importers: list[tuple[str, int, bool]] = field(default_factory=list)  # (path, line, is_test)


def parse(text: str) -> tuple[str, str] | None:
    """(ecosystem, name) of the first missing-module error in `text`."""
    best: tuple[int, str, str] | None = None
    for eco, pattern in _PATTERNS:
        m = pattern.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), eco, m.group(1))
    if best is None:
        return None
    _, eco, name = best
    if eco == mf.JAVA:
        name = name.replace("/", ".")
        if name[:1].islower() and re.search(r"\.[A-Z]", name):  # a class: its package
            name = name[: re.search(r"\.[A-Z]", name).start()]
    return eco, name


def answer(conn: sqlite3.Connection, root: Path, text: str) -> tuple[str, dict] | None:
    parsed = parse(text)
    if parsed is None:
        return None
    eco, name = parsed
    if eco == mf.NODE and (name.startswith((".", "/")) or _NODE_BUILTIN.match(name)):
        return None
    if eco == mf.RUST and name in _RUST_OWN:
        return None
    own = _own(conn, root, eco, name)
    if own:
        return own
    if eco == mf.PYTHON and name.split(".")[0] in sys.stdlib_module_names:
        return _stdlib(name), {"answer": "missing_package", "package": name, "stdlib": True}
    miss = Missing(eco, name, _package(eco, name))
    miss.importers = _importers(conn, eco, name, miss.package)
    wanted = _wanted(eco, name, miss.package)
    folders = [str(PurePosixPath(p).parent).strip(".") for p, _, _ in miss.importers]
    folders = _with_parents(folders) + [""]
    declared = mf.declarations(root, folders, eco, wanted)
    if eco == mf.JAVA:
        declared = _longest_group(declared)
    if not miss.importers and not declared:
        return None  # nothing of this repository is involved: not ours to explain
    first_folder = str(PurePosixPath(declared[0].file).parent).strip(".") if declared else ""
    install = mf.install_command(root, first_folder, eco)
    return render(miss, declared, install, root, folders), {
        "answer": "missing_package",
        "package": miss.package or name,
        "importers": [p for p, _, _ in miss.importers],
        "declared": [f"{d.file}:{d.line}" for d in declared],
        "install": install[0],
    }


def _package(eco: str, name: str) -> str:
    if eco == mf.NODE:
        parts = name.split("/")
        return "/".join(parts[:2]) if name.startswith("@") else parts[0]
    if eco == mf.PYTHON:
        return name.split(".")[0]
    if eco == mf.RUBY:
        return name.split("/")[0]
    return name


def _wanted(eco: str, name: str, package: str) -> list[str]:
    if eco == mf.PYTHON:
        return mf.python_names(name)
    if eco == mf.GO:  # the module is a prefix of the package path
        parts = name.split("/")
        return [mf.normalize(eco, "/".join(parts[:i])) for i in range(len(parts), 1, -1)]
    if eco == mf.RUBY:  # minitest/global_expectations/autorun -> minitest-global_expectations, minitest
        parts = name.split("/")
        return list(dict.fromkeys(mf.normalize(eco, "-".join(parts[:i])) for i in range(len(parts), 0, -1)))
    if eco == mf.JAVA:  # a groupId is a prefix of the package
        parts = name.split(".")
        return [".".join(parts[:i]).lower() for i in range(len(parts), 1, -1)]
    return [mf.normalize(eco, package)]


def _stdlib(name: str) -> str:
    return (
        f"Missing standard-library module: `{name}` is part of Python's standard library, not a package to "
        "declare: this Python was built or packaged without it (Debian splits some out, e.g. python3-venv, "
        "python3-tk; a Python built from source without the library's headers lacks _ctypes, _ssl, _sqlite3)."
    )


def _longest_group(declared: list[mf.Declaration]) -> list[mf.Declaration]:
    if not declared:
        return declared
    best = max(len(d.name) for d in declared)
    return [d for d in declared if len(d.name) == best]


def _with_parents(folders: list[str]) -> list[str]:
    out: list[str] = []
    for folder in dict.fromkeys(folders):
        path = PurePosixPath(folder) if folder else None
        while path is not None and str(path) not in ("", "."):
            out.append(str(path))
            path = path.parent
    return list(dict.fromkeys(out))[:40]


def _importers(conn: sqlite3.Connection, eco: str, name: str, package: str) -> list[tuple[str, int, bool]]:
    langs = _LANGS[eco]
    marks = ",".join("?" * len(langs))
    if eco == mf.RUST:
        rows = conn.execute(
            f"SELECT f.path, i.line, f.is_test FROM imports i JOIN files f ON f.id = i.file_id WHERE f.lang IN"
            f" ({marks}) AND (i.spec = ? OR i.spec LIKE ? ESCAPE '\\' OR i.spec LIKE ? ESCAPE '\\')"
            " ORDER BY f.is_test, f.path, i.line",
            (*langs, name, _like(name) + "::%", "::" + _like(name) + "::%"),
        ).fetchall()
    else:
        sep = {mf.PYTHON: ".", mf.JAVA: "."}.get(eco, "/")
        key = name if eco in (mf.GO, mf.JAVA, mf.RUBY) else package
        rows = conn.execute(
            f"SELECT f.path, i.line, f.is_test FROM imports i JOIN files f ON f.id = i.file_id WHERE f.lang IN"
            f" ({marks}) AND (i.spec = ? OR i.spec LIKE ? ESCAPE '\\') ORDER BY f.is_test, f.path, i.line",
            (*langs, key, _like(key) + sep + "%"),
        ).fetchall()
    seen: dict[str, tuple[str, int, bool]] = {}
    for path, line, is_test in rows:
        seen.setdefault(path, (path, line, bool(is_test)))
    # the project's own code first, then its benchmarks, examples and scripts, then its tests
    return sorted(seen.values(), key=lambda i: (i[2], PurePosixPath(i[0]).parts[0] in AUX_DIRS, i[0]))


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _own(conn: sqlite3.Connection, root: Path, eco: str, name: str) -> tuple[str, dict] | None:
    """A module of this repository named by the error: it exists, so the answer is where, and why an import
    of it can still fail (never "missing")."""
    path = ""
    if eco == mf.PYTHON:
        top = name.split(".")[0]
        rows = conn.execute(
            "SELECT module, path FROM files WHERE lang = 'python' AND (module = ? OR module LIKE ? ESCAPE '\\')"
            " ORDER BY is_test, length(path)",
            (top, _like(top) + ".%"),
        ).fetchall()
        if not rows:
            return None
        exact = [p for m, p in rows if m == name]
        if not exact:
            from recall_agent.architecture.diagnose import missing_submodule

            return missing_submodule(conn, name), {"answer": "import_error"}
        path = exact[0]
        packaged = any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
        hint = _root_hint(root, path, name)
        other = (
            "or install the project into the environment (`pip install -e .`)"
            if packaged
            else f"or put {hint} on PYTHONPATH"
        )
        why = (
            "Python searched sys.path (the folder of the script it ran, then the installed packages) and the "
            f"folder holding it was not on it: run from {hint} (`python -m …`), {other}"
        )
    elif eco == mf.RUBY:
        rows = conn.execute(
            "SELECT path FROM files WHERE lang = 'ruby' AND (path = ? OR path LIKE ? ESCAPE '\\')"
            " ORDER BY is_test, length(path) LIMIT 1",
            (name + ".rb", "%/" + _like(name) + ".rb"),
        ).fetchall()
        if not rows:
            return None
        path = rows[0][0]
        lib = path[: -len(name + ".rb")].rstrip("/") or "."
        why = f"Ruby's load path lacked {lib}/: run through `bundle exec`, or add it: `ruby -I{lib}`"
    elif eco == mf.GO:
        module = mf.go_module(root)
        if not module or not (name == module or name.startswith(module + "/")):
            return None
        path = name[len(module) :].lstrip("/") or "."
        if not (root / path).is_dir():
            text = (
                f"{KIND_OWN} (read from the code): `{name}` would be a package of this module ({module}, go.mod), "
                f"but there is no folder {path}/ in it: a package moved or renamed, or a typo in the import"
            )
            return text + ".", {"answer": "own_module", "target": name, "location": "go.mod"}
        why = "it is inside this module (go.mod); run the go command from the checkout so it sees go.mod"
    else:
        return None
    text = f"{KIND_OWN} (read from the code): `{name}` is this repository's own, at {path} — not a missing package. {why}."
    return text, {"answer": "own_module", "target": name, "location": path}


def _root_hint(root: Path, path: str, name: str) -> str:
    depth = len(name.split("."))
    parts = PurePosixPath(path).parts
    base = parts[: max(0, len(parts) - depth - (1 if path.endswith("__init__.py") else 0))]
    return f"{root.name}/{'/'.join(base)}/" if base else f"{root.name}/"


def render(
    miss: Missing, declared: list[mf.Declaration], install: tuple[str, str], root: Path, folders: list[str]
) -> str:
    shown = miss.package or miss.name
    code = [i for i in miss.importers if not i[2]]
    tests = [i for i in miss.importers if i[2]]
    parts = [f"{KIND_MISSING} (read from the code): `{miss.name}` is not part of this repository"]
    if miss.importers:
        listed = code[:SHOWN] + tests[: max(0, SHOWN - len(code))]
        names = ", ".join(f"{p}:{line}" + (" [test]" if t else "") for p, line, t in listed)
        more = len(miss.importers) - len(listed)
        parts.append(f"imported by {names}" + (f" (+{more} more)" if more else ""))
    else:
        parts.append("no file of it imports that name (the import is in a dependency, or built at run time)")
    if declared:
        decl = "; ".join(
            f"{d.file}:{d.line} {d.section}" + (f": `{d.text[:100]}`" if d.text else "") for d in declared[:3]
        )
        parts.append(f"declared in {decl}")
        if all(d.dev for d in declared):
            parts.append("only as a development, test or build dependency")
    else:
        looked = sorted(
            {p.relative_to(root).as_posix() for f in folders for p in mf.manifests_in(root, f, miss.eco)}
        )
        where = ", ".join(looked[:4]) if looked else f"no {'/'.join(mf.MANIFESTS[miss.eco][:3])} found"
        parts.append(f"not declared as `{shown}` by the project ({where}): declare it there")
    if install[0]:
        parts.append(f"the project's install command: `{install[0]}` ({install[1]})")
    return "; ".join(parts) + "."
