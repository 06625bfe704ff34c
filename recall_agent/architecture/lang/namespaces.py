"""Java, Kotlin, C# and PHP: names live in packages / namespaces, and files are found by the class names
they declare (as javac's source path, the C# compiler and composer's class map do).

A file depends on:
- the file declaring each class it imports (`import a.b.C`, `use A\\B\\C;`, static and nested imports by
  their longest class prefix);
- the files of its own package / namespace whose top-level types it mentions (no import is needed there;
  C# also sees the enclosing namespaces, PHP resolves `Sub\\Name` against its namespace);
- for `import a.b.*` / `using A.B;`, the files of that package whose types it mentions.

The names a file mentions come from the `@ref` captures (`extract.REFS_SPEC` pseudo-import).
"""

from __future__ import annotations

from collections import defaultdict

from recall_agent.architecture.lang import Edge, FileRow, ImportRow, Project

REFS_SPEC = ":refs"
LANGS = frozenset({"java", "kotlin", "csharp", "php"})
_FAMILY = {"java": "jvm", "kotlin": "jvm", "csharp": "csharp", "php": "php"}
MAX_FANOUT = 50  # a wildcard import of a huge package lists at most this many files


class NamespaceResolver:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.classes: dict[tuple[str, str], list[int]] = defaultdict(list)  # (family, a.b.C) -> files
        self.packages: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for f in project.files:
            if f.lang not in LANGS:
                continue
            family = _FAMILY[f.lang]
            for name in project.top_level.get(f.id, []):
                fq = f"{f.package}.{name}" if f.package else name
                self.classes[(family, fq)].append(f.id)
                self.packages[(family, f.package)][name].append(f.id)
            if f.lang in ("java", "kotlin"):  # a.b.Stem names the file even without a matching class
                stem = f.path.rsplit("/", 1)[-1].split(".", 1)[0]
                fq = f"{f.package}.{stem}" if f.package else stem
                if f.id not in self.classes[(family, fq)]:
                    self.classes[(family, fq)].append(f.id)

    def resolve_file(self, src: FileRow, imports: list[ImportRow]) -> list[Edge]:
        family = _FAMILY[src.lang]
        refs: set[str] = set()
        for imp in imports:
            if imp.spec == REFS_SPEC:
                refs.update(imp.names)
        edges: dict[int, tuple[int, list[str]]] = {}

        def add(fid: int, line: int, name: str) -> None:
            if fid == src.id:
                return
            line0, names = edges.setdefault(fid, (line, []))
            if name and name not in names:
                names.append(name)

        aliases: dict[str, str] = {}  # PHP: last segment of a `use` -> the full name
        explicit: set[str] = set()  # names bound by single-type imports: they shadow the package's own
        visible = self._own_namespaces(src)
        for imp in imports:
            if imp.spec == REFS_SPEC:
                continue
            if src.lang == "php" and imp.spec.endswith((".php", ".inc")):  # require / include
                fid = self._php_path(src, imp.spec)
                if fid is not None:
                    add(fid, imp.line, "")
                continue
            dotted = imp.spec.replace("/", ".").replace("\\", ".").strip(".")
            if src.lang == "php":  # `use A\\B` or `use A\\B as C`: B (or C) stands for A\\B
                aliases[imp.names[0] if imp.names else dotted.rsplit(".", 1)[-1]] = dotted
            wildcard = dotted.endswith(".*") or src.lang == "csharp"
            base = dotted[:-2] if dotted.endswith(".*") else dotted
            if not wildcard:
                explicit.add(imp.names[0] if src.lang == "php" and imp.names else base.rsplit(".", 1)[-1])
            hit = self._class(family, base)
            if hit is not None:
                fid, name = hit
                add(fid, imp.line, name)
            elif wildcard:  # a package: its types this file mentions
                visible.append(base)
        remaining = refs - explicit
        for ns in visible:  # own package / namespaces first: they shadow on-demand imports
            members = self.packages.get((family, ns), {})
            found = remaining & members.keys()
            for name in sorted(found):
                for fid in members[name][:MAX_FANOUT]:
                    add(fid, 0, name)
            remaining -= found
        if src.lang == "php":
            self._php_qualified(src, refs, aliases, add)
        return [(fid, line, ",".join(names)) for fid, (line, names) in edges.items()]

    def _php_path(self, src: FileRow, spec: str) -> int | None:
        folder = src.path.rpartition("/")[0]
        spec = spec.removeprefix("/")
        return self.project.first_path([f"{folder}/{spec}"]) or self.project.by_suffix(spec)

    def _own_namespaces(self, src: FileRow) -> list[str]:
        if src.lang != "csharp":
            return [src.package]
        parts = src.package.split(".") if src.package else []
        return [".".join(parts[:n]) for n in range(len(parts), -1, -1)]  # N.M, N, the global namespace

    def _class(self, family: str, dotted: str) -> tuple[int, str] | None:
        """The file declaring the longest class prefix of a.b.C.Inner / a.b.C.staticMember."""
        name = dotted
        while name:
            ids = self.classes.get((family, name))
            if ids:
                return ids[0], name.rsplit(".", 1)[-1]
            if "." not in name:
                return None
            name = name.rpartition(".")[0]
        return None

    def _php_qualified(self, src: FileRow, refs: set[str], aliases: dict[str, str], add) -> None:
        """`\\A\\B\\C` (fully qualified), `Alias\\C` (through a `use`), `Sub\\C` (relative to the namespace)."""
        for ref in refs:
            if "\\" not in ref:
                continue
            dotted = ref.replace("\\", ".")
            if dotted.startswith("."):
                full = dotted[1:]
            else:
                head, _, rest = dotted.partition(".")
                if head in aliases:
                    full = f"{aliases[head]}.{rest}"
                else:
                    full = f"{src.package}.{dotted}" if src.package else dotted
            hit = self._class("php", full)
            if hit is not None and hit[1] == full.rsplit(".", 1)[-1]:
                add(hit[0], 0, hit[1])
