"""Import resolution: from an import as written to the repository files it refers to.

Python: absolute and relative imports against the repository's package roots (the parent of the topmost
folder with an `__init__.py`, which covers `src/` layouts), `from pkg import submodule` included.
JS/TS: relative specifiers with the usual suffix / `index` probing (and `.js` written for a `.ts` file),
tsconfig/jsconfig `paths` and `baseUrl`, and workspace packages imported by their package.json name.
Go: import paths under the module paths of the repository's `go.mod` files. Java, Kotlin, C#, PHP
(`lang/namespaces.py`), Rust (`lang/rust.py`), C/C++ (`lang/cfamily.py`): each in its own module. Ruby:
`lang/ruby.py`. Anything else (the standard library, third-party packages) stays unresolved: an external import.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field

from recall_agent.architecture.lang import Edge, FileRow, ImportRow, Project
from recall_agent.architecture.lang.cfamily import IncludeResolver
from recall_agent.architecture.lang.namespaces import LANGS as NAMESPACE_LANGS
from recall_agent.architecture.lang.namespaces import NamespaceResolver
from recall_agent.architecture.lang.ruby import RubyResolver
from recall_agent.architecture.lang.rust import RustResolver

PY_SUFFIXES = (".py", ".pyi")
JS_LANGS = frozenset({"javascript", "typescript", "tsx"})
JS_PROBE = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


def python_module_names(paths: list[str]) -> dict[str, str]:
    """Dotted module name of each Python file, from the `__init__.py` chain above it."""
    path_set = set(paths)
    out: dict[str, str] = {}
    for path in paths:
        if not path.endswith(PY_SUFFIXES):
            continue
        parts = path.split("/")
        stem = parts[-1].rsplit(".", 1)[0]
        dirs = parts[:-1]
        # climb while the folder is a package
        top = len(dirs)
        while top > 0 and "/".join(dirs[:top] + ["__init__.py"]) in path_set:
            top -= 1
        module_parts = dirs[top:] + ([] if stem == "__init__" else [stem])
        out[path] = ".".join(module_parts) if module_parts else (dirs[-1] if dirs else stem)
    return out


def go_module_roots(go_mods: dict[str, str]) -> list[tuple[str, str]]:
    """(folder, module path) pairs from go.mod contents keyed by their repo-relative path, deepest first."""
    roots = []
    for path, text in go_mods.items():
        match = re.search(r"^[ \t]*module[ \t]+(\S+)", text, re.MULTILINE)
        if match:
            roots.append((posixpath.dirname(path), match.group(1).strip("\"'")))
    return sorted(roots, key=lambda r: -len(r[0]))


def go_import_path(path: str, roots: list[tuple[str, str]]) -> str:
    folder = posixpath.dirname(path)
    for root, module in roots:
        if root == "" or folder == root or folder.startswith(root + "/"):
            rel = folder[len(root) :].lstrip("/") if root else folder
            return f"{module}/{rel}" if rel else module
    return folder


def file_module(path: str, lang: str, package: str, py_names: dict[str, str], go_roots) -> str:
    if lang == "python":
        return py_names.get(path, "")
    if lang == "go":
        return go_import_path(path, go_roots)
    stem = posixpath.basename(path).split(".", 1)[0]
    if lang in ("java", "kotlin") and package:
        return f"{package}.{stem}"
    return path.rsplit(".", 1)[0]


@dataclass
class JsConfig:
    """Workspace packages (package.json `name` → folder, entry files) and tsconfig/jsconfig path aliases."""

    packages: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    aliases: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (base folder, pattern, targets)


def _loose_json(text: str) -> dict:
    """tsconfig.json allows comments and trailing commas."""
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    text = re.sub(r",\s*([}\]])", r"\1", text)
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def js_config(texts: dict[str, str]) -> JsConfig:
    config = JsConfig()
    for path, text in sorted(texts.items()):
        folder = posixpath.dirname(path)
        data = _loose_json(text)
        if posixpath.basename(path) == "package.json":
            name = data.get("name")
            if isinstance(name, str) and name:
                entries = [
                    data[k] for k in ("source", "module", "main", "types") if isinstance(data.get(k), str)
                ]
                config.packages[name] = (folder, entries)
            continue
        options = data.get("compilerOptions") or {}
        if not isinstance(options, dict):
            continue
        base = posixpath.normpath(posixpath.join(folder, str(options.get("baseUrl") or ".")))
        paths = options.get("paths") or {}
        if isinstance(paths, dict):
            for pattern, targets in paths.items():
                if isinstance(targets, list):
                    config.aliases.append((base, str(pattern), [str(t) for t in targets]))
        if options.get("baseUrl"):
            config.aliases.append((base, "*", ["*"]))
    return config


class Resolver:
    """Resolves the imports of any file of one repository snapshot."""

    def __init__(
        self,
        files: list[FileRow],
        modules: dict[int, str],
        top_level: dict[int, list[str]],
        js: JsConfig | None = None,
        manifests: dict[str, str] | None = None,
    ) -> None:
        self.js = js or JsConfig()
        self.project = Project(files, top_level, manifests or {})
        self._family: dict[str, object] = {}
        self.by_path = self.project.by_path
        self.py_modules: dict[str, int] = {}
        self.local_dirs: dict[int, str] = {}
        self.go_packages: dict[str, list[int]] = defaultdict(list)
        for f in files:
            module = modules.get(f.id, "")
            if f.lang == "python":
                # a .py wins over its .pyi stub
                if module not in self.py_modules or f.path.endswith(".py"):
                    self.py_modules[module] = f.id
                folder = posixpath.dirname(f.path)
                loose = "." not in module and not posixpath.basename(f.path).startswith("__init__.")
                if loose and folder not in ("", "src"):
                    # a loose script (scripts/logging.py): importable only by its neighbours, not repo-wide
                    self.local_dirs[f.id] = folder
            elif f.lang == "go" and not f.path.endswith("_test.go"):
                self.go_packages[module].append(f.id)
        for f in files:  # namespace packages (no __init__.py): the dotted path from the root, or from src/
            if f.lang == "python":
                dotted = f.path.rsplit(".", 1)[0].replace("/", ".").removesuffix(".__init__")
                self.py_modules.setdefault(dotted, f.id)
                if dotted.startswith("src."):
                    self.py_modules.setdefault(dotted[4:], f.id)

    def resolve_file(self, src: FileRow, module: str, imports: list[ImportRow]) -> list[Edge]:
        """Every edge of one file: (target id, line, names). Some languages need the whole file at once
        (a Java file's same-package neighbours depend on the names it mentions anywhere)."""
        family = self._family_resolver(src.lang)
        if family is not None:
            return family.resolve_file(src, imports)  # type: ignore[attr-defined]
        return [
            (dst, imp.line, names)
            for imp in imports
            for dst, names in self.resolve(src, module, imp.spec, imp.names)
        ]

    def _family_resolver(self, lang: str) -> object | None:
        key = "ns" if lang in NAMESPACE_LANGS else lang if lang in ("rust", "c", "cpp", "ruby") else ""
        if not key:
            return None
        if key == "cpp":
            key = "c"
        if key not in self._family:
            make = {
                "ns": NamespaceResolver,
                "rust": RustResolver,
                "c": IncludeResolver,
                "ruby": RubyResolver,
            }[key]
            self._family[key] = make(self.project)
        return self._family[key]

    def resolve(self, src: FileRow, module: str, spec: str, names: list[str]) -> list[tuple[int, str]]:
        """(target file id, imported names) for one import of `src`; [] when external or unknown."""
        lang = src.lang
        if lang == "python":
            return self._python(src, module, spec, names)
        if lang in JS_LANGS:
            return self._one(self._js(src.path, spec))
        if lang == "go":
            return [(fid, "") for fid in self.go_packages.get(spec, []) if fid != src.id]
        if lang in NAMESPACE_LANGS or lang in ("rust", "c", "cpp", "ruby"):
            return [
                (dst, names) for dst, _, names in self.resolve_file(src, module, [ImportRow(spec, names, 0)])
            ]
        return []

    @staticmethod
    def _one(fid: int | None) -> list[tuple[int, str]]:
        return [(fid, "")] if fid is not None else []

    # -- Python
    def _python(self, src: FileRow, module: str, spec: str, names: list[str]) -> list[tuple[int, str]]:
        level = len(spec) - len(spec.lstrip("."))
        rest = spec[level:]
        if level:
            is_pkg = posixpath.basename(src.path).startswith("__init__.")
            package = module if is_pkg else module.rpartition(".")[0]
            for _ in range(level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{rest}" if package and rest else (package or rest)
        else:
            base = rest
        if not base:
            return []
        out: dict[int, list[str]] = defaultdict(list)
        leftover: list[str] = []
        for name in names:  # from pkg import submodule
            fid = self.py_modules.get(f"{base}.{name}")
            if fid is not None and name != "*":
                out[fid].append(name)
            else:
                leftover.append(name)
        if leftover or not names:
            fid = self._longest_module(base)
            if fid is not None:
                out[fid].extend(leftover)
        return [
            (fid, ",".join(n))
            for fid, n in out.items()
            if fid != src.id
            and (fid not in self.local_dirs or src.path.startswith(self.local_dirs[fid] + "/"))
        ]

    def _longest_module(self, dotted: str) -> int | None:
        while dotted:
            fid = self.py_modules.get(dotted)
            if fid is not None:
                return fid
            dotted = dotted.rpartition(".")[0]
        return None

    # -- JavaScript / TypeScript
    def _js(self, src_path: str, spec: str) -> int | None:
        if spec.startswith("."):
            return self._js_probe(posixpath.normpath(posixpath.join(posixpath.dirname(src_path), spec)))
        for base, pattern, targets in self.js.aliases:  # tsconfig paths / baseUrl
            prefix, star, suffix = pattern.partition("*")
            if (
                star
                and spec.startswith(prefix)
                and spec.endswith(suffix)
                and len(spec) >= len(prefix + suffix)
            ):
                middle = spec[len(prefix) : len(spec) - len(suffix)]
            elif not star and spec == pattern:
                middle = ""
            else:
                continue
            for target in targets:
                hit = self._js_probe(posixpath.normpath(posixpath.join(base, target.replace("*", middle))))
                if hit is not None:
                    return hit
        return self._js_package(spec)

    def _js_package(self, spec: str) -> int | None:
        """A workspace package of this repository imported by name (`@acme/ui`, `@acme/ui/button`)."""
        name = spec
        while name:
            entry = self.js.packages.get(name)
            if entry is not None:
                folder, entries = entry
                sub = spec[len(name) :].lstrip("/")
                bases = (
                    [f"{folder}/{sub}", f"{folder}/src/{sub}", f"{folder}/lib/{sub}"]
                    if sub
                    else [f"{folder}/{e}" for e in entries] + [f"{folder}/src/index", f"{folder}/index"]
                )
                for base in bases:
                    hit = self._js_probe(posixpath.normpath(base.lstrip("/")))
                    if hit is not None:
                        return hit
                return None
            name = name.rpartition("/")[0]
        return None

    def _js_probe(self, base: str) -> int | None:
        candidates = [base]
        stem, dot, ext = base.rpartition(".")
        if dot and ext in ("js", "jsx", "mjs", "cjs"):  # TS sources import './x.js' meaning './x.ts'
            candidates += [stem + s for s in (".ts", ".tsx", ".mts", ".cts")]
        candidates += [base + s for s in JS_PROBE]
        candidates += [f"{base}/index{s}" for s in JS_PROBE]
        for cand in candidates:
            row = self.by_path.get(cand)
            if row is not None:
                return row.id
        return None
