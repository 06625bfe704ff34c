"""Rust: Cargo crates and their module trees, as cargo and rustc see them.

Every `Cargo.toml` with a `[package]` is a crate (workspace members included): its library root is
`[lib] path` or `src/lib.rs`, its name `[lib] name` or the package name with `-` as `_`. Crate roots
(`lib.rs`, `main.rs`, `src/bin/*.rs`, `build.rs`, and each file directly under `tests/`, `benches/`,
`examples/`) and `mod.rs` files own their folder; any other `a/b.rs` owns `a/b/`. Then:
- `mod x;` is `<owned folder>/x.rs` or `<owned folder>/x/mod.rs`;
- a `use` tree (`use crate::{a::X, b::{self, Y}}`) is expanded into paths, each read from `crate::`,
  `self::`, `super::` (repeated), the name of a crate of this repository (`use rayon::prelude::*` from
  `tests/`), or a child module of the current one (2018 paths); the longest module prefix is the file,
  and an item of the crate root (`crate::Foo`) is the root file itself.
"""

from __future__ import annotations

import posixpath
import re
import tomllib

from recall_agent.architecture.lang import Edge, FileRow, ImportRow, Project

_TARGET_DIRS = ("tests", "benches", "examples")
_TOKEN = re.compile(r"::|[{},*]|[A-Za-z_][A-Za-z0-9_]*|\S")


class Crate:
    def __init__(self, folder: str, name: str, lib: str) -> None:
        self.folder, self.name, self.lib = folder, name, lib


def crates(manifests: dict[str, str]) -> list[Crate]:
    out = []
    for path, text in manifests.items():
        if posixpath.basename(path) != "Cargo.toml":
            continue
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        package = data.get("package")
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            continue
        lib = data.get("lib") if isinstance(data.get("lib"), dict) else {}
        folder = posixpath.dirname(path)
        name = str(lib.get("name") or package["name"]).replace("-", "_")
        lib_path = posixpath.normpath(posixpath.join(folder, str(lib.get("path") or "src/lib.rs")))
        out.append(Crate(folder, name, lib_path))
    return sorted(out, key=lambda c: -len(c.folder))  # deepest first: the crate a file belongs to


def use_paths(tree: str) -> list[list[str]]:
    """`a::{b, c::{d as e, self}}` -> [[a, b], [a, c, d], [a, c]] (aliases and globs dropped)."""
    tokens = _TOKEN.findall(tree)
    out: list[list[str]] = []
    _expand(tokens, 0, [], out)
    return out


def _expand(tokens: list[str], i: int, prefix: list[str], out: list[list[str]]) -> int:
    """Reads one use tree from tokens[i:] under `prefix`; returns the index after it. Linear in tokens."""
    path = list(prefix)
    while i < len(tokens):
        tok = tokens[i]
        if tok == "{":
            i += 1
            while i < len(tokens) and tokens[i] != "}":
                i = _expand(tokens, i, path, out)
                if i < len(tokens) and tokens[i] == ",":
                    i += 1
            return i + 1
        if tok in (",", "}"):
            break
        if tok == "as":
            i += 2  # `as name`
            continue
        if tok == "*":
            i += 1
            continue
        if tok != "::":
            if tok == "self" and path:
                pass  # `a::{self}` is `a`
            else:
                path.append(tok)
        i += 1
    if path:
        out.append(path)
    return i


class RustResolver:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.crates = crates(project.manifests)
        self.by_name = {c.name: c for c in self.crates}

    def resolve_file(self, src: FileRow, imports: list[ImportRow]) -> list[Edge]:
        edges: dict[int, tuple[int, list[str]]] = {}
        for imp in imports:
            if imp.spec.startswith("mod "):
                hits = [(self._mod(src.path, imp.spec[4:]), "")]
            else:
                paths = use_paths(imp.spec)
                hits = [(self._use(src.path, p), p[-1]) for p in paths]
                # `use other_crate::…` from a test, bench or sibling crate also links that crate's root
                hits += [(self._crate_lib(p[0]), p[0]) for p in paths if p[0] in self.by_name]
            for fid, name in hits:
                if fid is None or fid == src.id:
                    continue
                _, names = edges.setdefault(fid, (imp.line, []))
                if name and name not in names:
                    names.append(name)
        return [(fid, line, ",".join(names)) for fid, (line, names) in edges.items()]

    def _crate_lib(self, name: str) -> int | None:
        return self.project.first_path([self.by_name[name].lib])

    # -- where things are
    def _crate_of(self, path: str) -> Crate | None:
        for c in self.crates:
            if not c.folder or path.startswith(c.folder + "/"):
                return c
        return None

    def _is_root(self, path: str) -> bool:
        folder, base = posixpath.split(path)
        if base in ("lib.rs", "main.rs", "mod.rs", "build.rs"):
            return True
        crate = self._crate_of(path)
        rel = folder[len(crate.folder) :].strip("/") if crate and crate.folder else folder
        return rel in _TARGET_DIRS or rel.endswith("src/bin")

    def _owned_dir(self, path: str) -> str:
        return posixpath.dirname(path) if self._is_root(path) else path[: -len(".rs")]

    def _crate_root_dir(self, path: str) -> str:
        """The folder `crate::` starts from: the library's for src/, the target's own for tests/ etc."""
        crate = self._crate_of(path)
        base = f"{crate.folder}/" if crate and crate.folder else ""
        rel = path[len(base) :]
        top = rel.split("/", 1)[0]
        if top in _TARGET_DIRS:
            return base + top
        if rel.startswith("src/bin/"):
            return base + "src/bin"
        if crate is not None:
            return posixpath.dirname(crate.lib)
        folder = posixpath.dirname(path)
        while folder:  # no Cargo.toml: the nearest folder holding lib.rs / main.rs
            if self.project.first_path([f"{folder}/lib.rs", f"{folder}/main.rs"]) is not None:
                return folder
            folder = posixpath.dirname(folder)
        return "src"

    def _mod(self, path: str, name: str) -> int | None:
        folder = self._owned_dir(path)
        return self.project.first_path([f"{folder}/{name}.rs", f"{folder}/{name}/mod.rs"])

    def _module_file(self, folder: str) -> int | None:
        """The file of the module owning `folder`: a/b -> a/b.rs or a/b/mod.rs (or a crate root in it)."""
        return self.project.first_path(
            [f"{folder}.rs", f"{folder}/mod.rs", f"{folder}/lib.rs", f"{folder}/main.rs"]
        )

    def _use(self, path: str, parts: list[str]) -> int | None:
        if not parts:
            return None
        head, tail = parts[0], parts[1:]
        if head == "crate":
            root = self._crate_root_dir(path)
        elif head == "self":
            root = self._owned_dir(path)
        elif head == "super":
            root = posixpath.dirname(self._owned_dir(path))
            while tail and tail[0] == "super":
                root, tail = posixpath.dirname(root), tail[1:]
        elif head in self.by_name:
            root = posixpath.dirname(self.by_name[head].lib)
            if not tail:
                return self.project.first_path([self.by_name[head].lib])
        else:  # a child module of the current module, else an external crate
            owned = self._owned_dir(path)
            if self._module_file(f"{owned}/{head}") is None:
                return None
            root, tail = owned, parts
        for n in range(len(tail), 0, -1):
            hit = self._module_file(posixpath.join(root, *tail[:n]))
            if hit is not None:
                return hit
        if head in self.by_name:
            return self.project.first_path([self.by_name[head].lib])
        return self._module_file(root)
