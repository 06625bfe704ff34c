"""Ruby: `require_relative` from the file's folder; `require` and `autoload` along the load path.

The load path is every folder named `lib` (a gem's, or each gem's of a monorepo; shallowest first), then
`test`/`spec` folders and the repository root, each tried with Ruby's `.rb` rule. A repository without any
`lib` folder falls back to the shortest repository path ending with the written one. Anything else
(`require "date"`, other gems) is external: a file named like a standard library (`core_ext/date.rb`)
is not taken for it.
"""

from __future__ import annotations

import posixpath

from recall_agent.architecture.lang import Edge, FileRow, ImportRow, Project


class RubyResolver:
    def __init__(self, project: Project) -> None:
        self.project = project
        folders = {posixpath.dirname(f.path) for f in project.files if f.lang == "ruby"}
        libs: set[str] = set()
        for folder in folders:
            parts = folder.split("/")
            for i, part in enumerate(parts):
                if part in ("lib", "test", "spec"):
                    libs.add("/".join(parts[: i + 1]))
        self.load_path = sorted(libs, key=lambda d: (d.rsplit("/", 1)[-1] != "lib", d.count("/"), d))
        self.load_path.append("")

    def resolve_file(self, src: FileRow, imports: list[ImportRow]) -> list[Edge]:
        edges: dict[int, int] = {}
        for imp in imports:
            fid = self.resolve(src.path, imp.spec)
            if fid is not None and fid != src.id:
                edges.setdefault(fid, imp.line)
        return [(fid, line, "") for fid, line in edges.items()]

    def resolve(self, src_path: str, spec: str) -> int | None:
        relative = spec.startswith("./")  # require_relative (extract.py marks it)
        name = spec[2:] if relative else spec
        if not name:
            return None
        names = [name] if name.endswith(".rb") else [name + ".rb", name]
        if relative:
            folder = posixpath.dirname(src_path)
            return self.project.first_path([posixpath.join(folder, n) for n in names])
        hit = self.project.first_path([posixpath.join(d, n) for d in self.load_path for n in names])
        if hit is not None or len(self.load_path) > 1:
            return hit
        return self.project.by_suffix(names[0])
