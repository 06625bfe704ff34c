"""What a question is about: a file or a symbol in a file, as the graph store names it (queries.py finds
it; calltypes.py, render.py and the engine read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Target:
    """A file (symbol_id None) or a symbol in a file."""

    file_id: int
    path: str
    lang: str
    module: str
    is_test: bool
    lines: int
    doc: str
    symbol_id: int | None = None
    name: str = ""
    qualname: str = ""
    kind: str = "file"
    line: int = 0
    end_line: int = 0
    signature: str = ""

    @property
    def is_file(self) -> bool:
        return self.symbol_id is None

    @property
    def display(self) -> str:
        """`httpx._models`, `httpx._models.Request`, or a path when the file has no module name."""
        if self.is_file:
            return self.module if self.lang == "python" and self.module else self.path
        sep = "." if self.lang in ("python", "java", "kotlin", "go") and self.module else ""
        module = self.module
        if self.lang in ("java", "kotlin") and self.qualname.split(".")[0] == module.rsplit(".", 1)[-1]:
            module = module.rpartition(".")[0]  # a.b.C + C.m reads a.b.C.m, not a.b.C.C.m
        return f"{module}{sep}{self.qualname}" if sep and module else self.qualname

    @property
    def location(self) -> str:
        return self.path if self.is_file else f"{self.path}:{self.line}"
