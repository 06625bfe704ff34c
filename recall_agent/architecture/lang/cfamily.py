"""C and C++: `#include` resolved along the compiler's search path, and C++ told apart in `.h` files.

`#include "x.h"` looks in the including file's folder first, then along the include path; `#include <x.h>`
only along the include path. The include path is the `-I`/`-iquote`/`-isystem` folders of
`compile_commands.json` when the repository has one, then every folder named `include` (shallowest
first), `src`, and the repository root. A header still not found is taken as the shortest repository
path ending with the written one (a project built with `-I` flags recall cannot see), else external.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex

from recall_agent.architecture.lang import Edge, FileRow, ImportRow, Project

# Signs of C++ in a header (a .h holding a class, a namespace, a template, access specifiers, `std::`).
_CPP_SIGNS = re.compile(
    rb"^[ \t]*(?:class|struct)[ \t]+\w+(?:[ \t]+final)?[ \t]*(?::[^;{]*)?\{|^[ \t]*namespace\b[^;\n]*\{"
    rb"|^[ \t]*template[ \t]*<|^[ \t]*(?:public|private|protected)[ \t]*:|\bstd::\w|^[ \t]*#include[ \t]*"
    rb"<(?:string|vector|memory|map|iostream|functional|utility|algorithm)>",
    re.MULTILINE,
)
_FLAG = re.compile(r"^-(I|iquote|isystem)(.*)$")


def looks_cpp(source: bytes) -> bool:
    """A `.h` file that holds C++ (parsed with the C++ grammar then)."""
    return _CPP_SIGNS.search(source[:200_000]) is not None


def include_dirs(project: Project) -> list[str]:
    dirs: list[str] = []
    for path, text in sorted(project.manifests.items()):
        if posixpath.basename(path) == "compile_commands.json":
            dirs += _compile_db_dirs(posixpath.dirname(path), text, project)
    folders = {posixpath.dirname(f.path) for f in project.files}
    named = sorted(
        {d.rsplit("/include", 1)[0] + "/include" for d in folders if d == "include" or "/include" in d},
        key=lambda d: (d.count("/"), d),
    )
    for d in [*named, "src", ""]:
        d = d.lstrip("/")
        if d not in dirs:
            dirs.append(d)
    return dirs


def _compile_db_dirs(base: str, text: str, project: Project) -> list[str]:
    try:
        entries = json.loads(text)
    except ValueError:
        return []
    out: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        args = entry.get("arguments")
        if not isinstance(args, list):
            try:
                args = shlex.split(str(entry.get("command", "")))
            except ValueError:
                continue
        directory = str(entry.get("directory", ""))
        pending = False
        for arg in args:
            arg = str(arg)
            m = _FLAG.match(arg)
            value = arg if pending else (m.group(2) if m else None)
            pending = bool(m and not m.group(2))
            if value:
                rel = _repo_relative(posixpath.join(directory, value), base, project)
                if rel is not None and rel not in out:
                    out.append(rel)
    return out


def _repo_relative(path: str, base: str, project: Project) -> str | None:
    """An include folder of the compile database as a repository path (absolute paths: by their tail)."""
    path = posixpath.normpath(path)
    if not path.startswith("/"):
        return posixpath.normpath(posixpath.join(base, path)).lstrip("./")
    parts = path.strip("/").split("/")
    folders = {posixpath.dirname(f.path) for f in project.files}
    for i in range(len(parts)):
        tail = "/".join(parts[i:])
        if tail in folders or any(f.startswith(tail + "/") for f in folders):
            return tail
    return None


class IncludeResolver:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.dirs = include_dirs(project)

    def resolve_file(self, src: FileRow, imports: list[ImportRow]) -> list[Edge]:
        edges: dict[int, tuple[int, str]] = {}
        for imp in imports:
            fid = self.resolve(src.path, imp.spec)
            if fid is not None and fid != src.id and fid not in edges:
                edges[fid] = (imp.line, "")
        return [(fid, line, names) for fid, (line, names) in edges.items()]

    def resolve(self, src_path: str, spec: str) -> int | None:
        angle = spec.startswith("<")
        name = spec.strip("<>").strip()
        if not name:
            return None
        candidates = [] if angle else [posixpath.join(posixpath.dirname(src_path), name)]
        candidates += [posixpath.join(d, name) for d in self.dirs]
        hit = self.project.first_path(candidates)
        if hit is not None or name.startswith("../"):
            return hit
        return self.project.by_suffix(name)
