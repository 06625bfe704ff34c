"""Per-language import resolution, the way each language's build tool sees the project.

`resolve.Resolver` keeps Python and JS/TS; each module here resolves one family of languages:
`namespaces` (Java, Kotlin, C#, PHP: packages and namespaces, same-package visibility, PSR-4 class
names), `rust` (Cargo crates and module trees), `cfamily` (C/C++ include search paths), `ruby`
(`require`, `require_relative`, `autoload` against the load path).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FileRow:
    id: int
    path: str
    lang: str
    package: str


@dataclass(frozen=True)
class ImportRow:
    spec: str
    names: list[str]
    line: int


@dataclass
class Project:
    """What every language resolver may look at: the files, their top-level types, the manifests."""

    files: list[FileRow]
    top_level: dict[int, list[str]] = field(default_factory=dict)  # file id -> top-level type names
    manifests: dict[str, str] = field(default_factory=dict)  # Cargo.toml, composer.json, … -> text
    by_path: dict[str, FileRow] = field(init=False)
    by_basename: dict[str, list[FileRow]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_path = {f.path: f for f in self.files}
        self.by_basename = defaultdict(list)
        for f in self.files:
            self.by_basename[posixpath.basename(f.path)].append(f)

    def first_path(self, candidates: list[str]) -> int | None:
        for cand in candidates:
            row = self.by_path.get(posixpath.normpath(cand).lstrip("/"))
            if row is not None:
                return row.id
        return None

    def by_suffix(self, target: str) -> int | None:
        """The shortest repository path ending with `target` (a path as written, without ./)."""
        target = target.lstrip("./")
        rows = self.by_basename.get(posixpath.basename(target), [])
        hits = [r for r in rows if r.path == target or r.path.endswith("/" + target)]
        return min(hits, key=lambda r: (r.path.count("/"), r.path)).id if hits else None


# an edge: (target file id, line of the import, imported names)
Edge = tuple[int, int, str]
