"""What a detector reads: file kinds, grammars, one file's text with its lazily built parse trees, and hits.

Shared by the detector kinds (`detectors.py`) and the Python rules (`rules.py`), which both run over a
`ScanContext`; kept apart so neither has to import the other to get it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

# file kind -> extensions; a file's kind decides which detectors run on it
_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".mts", ".cts"),
    "tsx": (".tsx",),
    "sql": (".sql",),
    "shell": (".sh", ".bash", ".zsh"),
    "yaml": (".yml", ".yaml"),
    "go": (".go",),
    "rust": (".rs",),
    "java": (".java",),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".hpp", ".hh"),
    "c_sharp": (".cs",),
    "ruby": (".rb",),
    "php": (".php",),
    "kotlin": (".kt", ".kts"),
}
FILE_KINDS = frozenset(_EXTENSIONS) | {"dockerfile", "any"}
_BY_EXT = {ext: kind for kind, exts in _EXTENSIONS.items() for ext in exts}

# tree-sitter grammar per file kind: (module, function returning the language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "kotlin": ("tree_sitter_kotlin", "language"),
}
TREE_SITTER_KINDS = frozenset(_GRAMMARS)

SNIPPET_MAX = 120
# a statement verb at the start, then one of the object words later (two scans: `verb\s.*\bword\b` in one
# regex re-scanned the rest of the text from every verb)
_SQL_VERB = re.compile(r"(?:select|insert|update|delete|create|alter|drop|grant|with)\s", re.IGNORECASE)
_SQL_OBJECT = re.compile(r"\b(?:from|into|set|table|index|on|to|as)\b", re.IGNORECASE)


def starts_like_sql(text: str) -> bool:
    body = text.lstrip()
    verb = _SQL_VERB.match(body)
    return verb is not None and _SQL_OBJECT.search(body, verb.end()) is not None


def file_kind(path: str | PurePath) -> str | None:
    """The detector file kind of a path, from its name; None for files no detector reads."""
    p = PurePath(path)
    name = p.name.lower()
    if name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile"):
        return "dockerfile"
    if name == "containerfile":
        return "dockerfile"
    return _BY_EXT.get(p.suffix.lower())


@dataclass(frozen=True)
class Hit:
    line: int  # 1-based
    snippet: str
    detail: str = ""
    end_line: int = 0  # last line of the finding (0: just `line`)
    check: str = ""  # the external check that found it (bandit's B602), if any
    cwe: int = 0
    severity: str = ""  # the check's own severity (low/medium/high); the catalog entry's when empty
    confidence: str = ""


def snippet_at(text: str, line: int) -> str:
    lines = text.splitlines()
    if 1 <= line <= len(lines):
        s = lines[line - 1].strip()
        return s if len(s) <= SNIPPET_MAX else s[: SNIPPET_MAX - 1] + "…"
    return ""


# --------------------------------------------------------------------------- scan context


_languages: dict[str, Any] = {}


def ts_language(kind: str) -> Any:
    """The tree_sitter.Language for a file kind (grammar packages ship compiled; nothing downloads)."""
    lang = _languages.get(kind)
    if lang is None:
        import importlib

        import tree_sitter

        module, func = _GRAMMARS[kind]
        lang = tree_sitter.Language(getattr(importlib.import_module(module), func)())
        _languages[kind] = lang
    return lang


@dataclass
class ScanContext:
    """One file's text plus lazily built parse trees, shared by every detector that runs on it."""

    text: str
    kind: str
    path: str = ""
    fragment: bool = False  # a piece of code quoted in a question, not a whole file
    _py_tree: ast.Module | None = None
    _py_failed: bool = False
    _ts_trees: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)  # per-file analysis shared by rules (rules.PyModule)

    def python_ast(self) -> ast.Module | None:
        if self._py_tree is None and not self._py_failed:
            try:
                self._py_tree = ast.parse(self.text)
            except (SyntaxError, ValueError):
                self._py_failed = True
        return self._py_tree

    def python_index(self) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
        """Every node of the Python tree and each node's parent, built once per file for all checks."""
        index = self.cache.get("python_index")
        if index is None:
            tree = self.python_ast()
            nodes = list(ast.walk(tree)) if tree is not None else []
            parents = {child: node for node in nodes for child in ast.iter_child_nodes(node)}
            index = self.cache["python_index"] = (nodes, parents)
        return index

    def embedded_sql(self) -> list[tuple[int, str]]:
        """(first line, text) of the string literals in a Python file that start like SQL and reach a call
        that runs SQL — directly (`cur.execute("DELETE FROM t")`) or through a name passed to one
        (`Q = "SELECT ..."; cur.execute(Q)`). Text for people (`print("delete from the cache ...")`) is not
        SQL."""
        found = self.cache.get("embedded_sql")
        if found is None:
            found = _executed_sql(*self.python_index()) if self.kind == "python" else []
            self.cache["embedded_sql"] = found
        return found

    def ts_tree(self, kind: str) -> Any:
        tree = self._ts_trees.get(kind)
        if tree is None:
            import tree_sitter

            tree = tree_sitter.Parser(ts_language(kind)).parse(self.text.encode("utf-8"))
            self._ts_trees[kind] = tree
        return tree


# calls that run SQL text: DB-API cursors, SQLAlchemy, asyncpg, Alembic's op.execute, pandas
SQL_RUNNERS = frozenset(
    {"execute", "executemany", "executescript", "exec_driver_sql", "mogrify", "raw", "text", "fetch"}
    | {"fetchrow", "fetchval", "read_sql", "read_sql_query", "copy_expert", "query"}
)


def _runs_sql(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in SQL_RUNNERS


def _executed_sql(nodes: list[ast.AST], parents: dict[ast.AST, ast.AST]) -> list[tuple[int, str]]:
    executed_names: set[str] = set()
    for node in nodes:
        if _runs_sql(node):
            executed_names |= {a.id for a in node.args[:1] if isinstance(a, ast.Name)}  # type: ignore[attr-defined]
    found = []
    for node in nodes:
        if not (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and starts_like_sql(node.value)
        ):
            continue
        parent = parents.get(node)
        # climb through "..." % x, "..." + x, f"..." parts and "...".format(x); stop at anything else
        # (an argument of print, a logger or an exception is text for people)
        while parent is not None and not _runs_sql(parent):
            building = isinstance(parent, ast.BinOp | ast.JoinedStr | ast.Attribute)
            if not (building or (isinstance(parent, ast.Call) and node is parent.func)):
                break
            node, parent = parent, parents.get(parent)
        direct = _runs_sql(parent)
        named = isinstance(parent, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in executed_names for t in parent.targets
        )
        if direct or named:
            found.append((node.lineno, _literal_text(node)))
    return found


def _literal_text(node: ast.AST) -> str:
    while not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        node = next(n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return node.value
