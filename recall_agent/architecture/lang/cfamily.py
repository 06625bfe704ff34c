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
from pathlib import Path

from recall_agent.architecture.lang import Edge, FileRow, ImportRow, Project

# Signs of C++ in a header (a .h holding a class, a struct with bases, a namespace, a template, access
# specifiers, `std::`). A plain `struct x {` is C (the kernel's headers are full of them). Each is searched
# from its keyword (a literal the regex engine finds fast) and those written `^[ \t]*…` are kept when only
# blanks precede them on their line: one pattern anchored at every line start took 9.8 s of CPU over the
# kernel's 23,413 headers, these 1.0 s.
_CPP_AT_LINE_START = tuple(
    re.compile(p)
    for p in (
        rb"class[ \t]+\w+(?:[ \t]+final)?[ \t]*(?::[^;{]*)?\{",
        rb"struct[ \t]+\w+(?:[ \t]+final)?[ \t]*:[ \t]*(?:public|private|protected|virtual)?[ \t]*[\w:<>]+[^;{]*\{",
        rb"namespace\b[^;\n]*\{",
        rb"template[ \t]*<",
        rb"(?:public|private|protected)[ \t]*:",
        rb"#include[ \t]*<(?:string|vector|memory|map|iostream|functional|utility|algorithm)>",
    )
)
_STD = re.compile(rb"\bstd::\w")
_FLAG = re.compile(r"^-(I|iquote|isystem)(.*)$")


def _read_annotations() -> tuple[frozenset[str], frozenset[str]]:
    """c_annotations.txt: `[plain]` names (`__init`), then `[called]` ones taking arguments (`__aligned(8)`)."""
    sections: dict[str, set[str]] = {"plain": set(), "called": set()}
    current = sections["plain"]
    for line in (Path(__file__).parent / "c_annotations.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = sections[line[1:-1]]
        elif line and not line.startswith("#"):
            current.add(line)
    return frozenset(sections["plain"]), frozenset(sections["called"])


# Annotation macros of GCC-style C (the Linux kernel's above all) that expand to attributes, sections or
# nothing: `static int __init foo(void)`, `char __user *buf`, `void __iomem *base`. The grammar cannot know
# they are macros and leaves an ERROR node around each, so they are blanked (same length: lines and byte
# offsets stay) before parsing, as ctags' `-I` list does for the kernel's scripts/tags.sh.
ANNOTATIONS, ANNOTATIONS_CALLED = _read_annotations()
_ARGUMENTS = rb"\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)"  # one nesting level, on one line


def _annotation_pattern() -> re.Pattern[bytes]:
    """A called annotation with its arguments, else any identifier that could be a plain one (checked
    against the set: a regex alternation of ~100 names would be tried at every byte). One branch per first
    letter, each opening with that letter and then checking the byte before it is no word byte (what a
    leading `\b` did): a pattern that opens with a literal set lets the regex engine skip to those letters,
    where a leading `\b` tried every byte (twice the CPU over the kernel's sources, the same matches)."""
    called = sorted(ANNOTATIONS_CALLED)
    plain = sorted(n for n in ANNOTATIONS if not n.startswith("_"))
    branches = []
    for first in sorted({n[0] for n in called} | {n[0] for n in plain} | {"_"}):
        with_args = [re.escape(n[1:].encode()) for n in called if n[0] == first]
        bare = ([rb"\w*"] if first == "_" else []) + [
            re.escape(n[1:].encode()) for n in plain if n[0] == first
        ]
        alternatives = []
        if with_args:
            alternatives.append(rb"(?:" + b"|".join(with_args) + rb")[ \t]*" + _ARGUMENTS)
        if bare:
            alternatives.append(rb"(?:" + b"|".join(bare) + rb")\b")
        letter = re.escape(first.encode())
        branches.append(letter + rb"(?<![A-Za-z0-9_]" + letter + rb")(?:" + b"|".join(alternatives) + rb")")
    return re.compile(b"|".join(branches))


_ANNOTATION = _annotation_pattern()


def blank_annotations(source: bytes) -> bytes:
    """`source` with its annotation macros replaced by spaces (same length, newlines kept)."""

    def blank(m: re.Match[bytes]) -> bytes:
        text = m.group(0)
        if text.endswith(b")") or text.decode("ascii", "replace") in ANNOTATIONS:
            return b" " * len(text)
        return text

    return _ANNOTATION.sub(blank, source)


def looks_cpp(source: bytes) -> bool:
    """A `.h` file that holds C++ (parsed with the C++ grammar then)."""
    head = source[:200_000]
    if b"std::" in head and _STD.search(head):
        return True
    return any(_at_line_start(pattern, head) for pattern in _CPP_AT_LINE_START)


def _at_line_start(pattern: re.Pattern[bytes], text: bytes) -> bool:
    """Whether `pattern` matches somewhere with only blanks before it on its line (`^[ \t]*` + pattern)."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        start = text.rfind(b"\n", 0, m.start()) + 1
        if not text[start : m.start()].strip(b" \t"):
            return True
        pos = m.start() + 1
    return False


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
    """Includes resolved as the compiler searches; what the include path gives for a name is the same for
    every file, so it is found once per name through the files of that basename (the kernel has 350,000
    includes and ~100 include folders: joining each name with each folder took most of a minute)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.dirs = include_dirs(project)
        self.rank: dict[str, int] = {}
        for i, d in enumerate(self.dirs):
            self.rank.setdefault(d, i)
        self.along: dict[str, int | None] = {}
        self.suffix: dict[str, int | None] = {}
        # what an include gives depends on the spec alone (<x.h>) or on it and the including folder ("x.h")
        self.seen: dict[str | tuple[str, str], int | None] = {}

    def resolve_file(self, src: FileRow, imports: list[ImportRow]) -> list[Edge]:
        edges: dict[int, tuple[int, str]] = {}
        folder = posixpath.dirname(src.path)
        seen = self.seen
        for imp in imports:
            key = imp.spec if imp.spec.startswith("<") else (folder, imp.spec)
            if key in seen:
                fid = seen[key]
            else:
                fid = seen[key] = self.resolve(src.path, imp.spec)
            if fid is not None and fid != src.id and fid not in edges:
                edges[fid] = (imp.line, "")
        return [(fid, line, names) for fid, (line, names) in edges.items()]

    def resolve(self, src_path: str, spec: str) -> int | None:
        angle = spec.startswith("<")
        name = spec.strip("<>").strip()
        if not name:
            return None
        if not angle:
            hit = self.project.first_path([posixpath.join(posixpath.dirname(src_path), name)])
            if hit is not None:
                return hit
        if name not in self.along:
            self.along[name] = self._along_include_path(name)
        hit = self.along[name]
        if hit is not None or name.startswith("../"):
            return hit
        if name not in self.suffix:
            self.suffix[name] = self.project.by_suffix(name)
        return self.suffix[name]

    def _along_include_path(self, name: str) -> int | None:
        """The file `d/name` for the first include folder `d` that has one."""
        if name.startswith("/") or ".." in name.split("/") or posixpath.normpath(name) != name:
            # `../x.h`, `./x.h`, `a//b.h`: each folder joined and normalized, as the compiler does
            return self.project.first_path([posixpath.join(d, name) for d in self.dirs])
        best: tuple[int, int] | None = None
        for row in self.project.by_basename.get(posixpath.basename(name), []):
            if row.path == name:
                folder = ""
            elif row.path.endswith("/" + name):
                folder = row.path[: -len(name) - 1]
            else:
                continue
            rank = self.rank.get(folder)
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, row.id)
        return best[1] if best else None
