"""Static detectors: how a catalog entry finds itself in a file.

Four kinds, chosen by what the pattern needs:
- `bandit`: findings of PyCQA bandit's checks (`checks: [B602]`), run once per Python file
  (`bandit_checks.py`): the security checks of the field's tool rather than our own copies.
- `rule`: a named check written in Python (`rules.py`): stdlib `ast` rules for Python, and a few
  line-structured rules for Dockerfiles. Catalog files can only name rules that exist.
- `tree-sitter`: a tree-sitter query (with `#eq?`/`#match?` predicates) for any installed grammar, with
  optional `inside`/`stop_at` ancestor constraints ("an await inside a loop, not inside a nested function").
- `regex`: for formats where structure does not matter (Dockerfile lines, CI YAML, shell lines, SQL
  statements, well-known credential formats).

A detector compiles when the catalog loads (a broken query or regex is a catalog error naming the entry)
and runs over a `ScanContext`, which parses each file at most once per grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recall_agent.antipatterns.rules import RULES
from recall_agent.antipatterns.source import (
    FILE_KINDS,
    TREE_SITTER_KINDS,
    Hit,
    ScanContext,
    snippet_at,
    ts_language,
)

# comment line prefixes per kind, skipped by line-unit regexes
_COMMENT_PREFIX: dict[str, tuple[str, ...]] = {
    "shell": ("#",),
    "dockerfile": ("#",),
    "yaml": ("#",),
    "sql": ("--",),
    "python": ("#",),
}


class DetectorError(ValueError):
    """A detector spec is invalid (unknown kind/rule, query or regex that does not compile)."""


# --------------------------------------------------------------------------- detector kinds


@dataclass
class Detector:
    kind: str
    file_kinds: tuple[str, ...]
    bad: str | None = None  # example the detector must fire on (defaults to the entry's bad example)
    good: str | None = None
    run: Callable[[ScanContext], list[Hit]] = field(repr=False, default=lambda ctx: [])
    checks: tuple[str, ...] = ()  # the external checks it stands for (bandit test ids)

    def applies_to(self, kind: str) -> bool:
        if kind == "python" and self.kind == "regex" and "sql" in self.file_kinds:
            return True  # SQL string literals inside Python code (see find)
        return kind in self.file_kinds or "any" in self.file_kinds

    def find(self, ctx: ScanContext) -> list[Hit]:
        if ctx.kind == "python" and self.kind == "regex" and "sql" in self.file_kinds:
            hits = self.run(ctx) if self.applies_to_own(ctx.kind) else []
            return hits + self._find_embedded_sql(ctx)
        if not self.applies_to(ctx.kind):
            return []
        return self.run(ctx)

    def applies_to_own(self, kind: str) -> bool:
        return kind in self.file_kinds or "any" in self.file_kinds

    def _find_embedded_sql(self, ctx: ScanContext) -> list[Hit]:
        """SQL regexes over the SQL string literals of a Python file (`cur.execute("DELETE FROM t")`,
        Alembic's `op.execute("CREATE INDEX ...")`), reported at the literal's lines."""
        hits = []
        for first_line, sql in ctx.embedded_sql():
            for h in self.run(ScanContext(sql, "sql")):
                line = first_line + h.line - 1
                hits.append(Hit(line, snippet_at(ctx.text, line), h.detail))
        return hits


def build_detector(spec: Any, default_kinds: tuple[str, ...], *, eager: bool = True) -> Detector:
    """Compile one detector spec from a catalog file; raises DetectorError naming the bad field.

    `eager=False` defers compiling tree-sitter queries to their first use (the shipped catalog, whose
    queries the test suite compiles); regexes always compile at once (cheap).
    """
    if not isinstance(spec, dict):
        raise DetectorError("must be a mapping with a 'kind'")
    kind = spec.get("kind")
    kinds = _kinds_field(spec, default_kinds)
    bad, good = spec.get("bad"), spec.get("good")
    for name, value in (("bad", bad), ("good", good)):
        if value is not None and not isinstance(value, str):
            raise DetectorError(f"{name}: must be a string")
    if kind == "rule":
        rule_name = spec.get("rule")
        if rule_name not in RULES:
            raise DetectorError(f"rule: unknown rule {rule_name!r} (known: {', '.join(sorted(RULES))})")
        rule = RULES[rule_name]
        if "languages" not in spec:
            kinds = rule.kinds
        return Detector("rule", kinds, bad, good, rule.func)
    if kind == "tree-sitter":
        return Detector("tree-sitter", kinds, bad, good, _compile_tree_sitter(spec, kinds, eager))
    if kind == "regex":
        return Detector("regex", kinds, bad, good, _compile_regex(spec, kinds))
    if kind == "bandit":
        checks = tuple(_str_list(spec, "checks"))
        return Detector("bandit", ("python",), bad, good, _bandit_checks(checks), checks)
    raise DetectorError(f"kind: must be one of rule, tree-sitter, regex, bandit (got {kind!r})")


def _bandit_checks(checks: tuple[str, ...]) -> Callable[[ScanContext], list[Hit]]:
    from recall_agent.antipatterns import bandit_checks

    bad = [c for c in checks if not bandit_checks.CHECK_ID.fullmatch(c)]
    if not checks or bad:
        raise DetectorError(f"checks: bandit test ids like B602 (got {bad[0] if bad else 'none'!r})")
    off = [c for c in checks if c in bandit_checks.SKIPPED_CHECKS]
    if off:
        raise DetectorError(f"checks: {off[0]} is switched off in recall (see bandit_checks.py)")
    return bandit_checks.detector(checks)


def _kinds_field(spec: dict[str, Any], default_kinds: tuple[str, ...]) -> tuple[str, ...]:
    raw = spec.get("languages", list(default_kinds))
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(k, str) for k in raw):
        raise DetectorError("languages: must be a non-empty list of file kinds")
    unknown = [k for k in raw if k not in FILE_KINDS]
    if unknown:
        raise DetectorError(
            f"languages: unknown file kind {unknown[0]!r} (known: {', '.join(sorted(FILE_KINDS))})"
        )
    return tuple(raw)


_query_cache: dict[tuple[str, str], Any] = {}


def compile_query(kind: str, source: str) -> Any:
    """A compiled tree_sitter.Query, cached per (grammar, source) for the life of the process."""
    key = (kind, source)
    query = _query_cache.get(key)
    if query is None:
        import tree_sitter

        try:
            query = tree_sitter.Query(ts_language(kind), source)
        except Exception as exc:  # tree_sitter.QueryError and friends: say which grammar rejected it
            raise DetectorError(f"query: does not compile for {kind}: {exc}") from exc
        _query_cache[key] = query
    return query


def _compile_tree_sitter(
    spec: dict[str, Any], kinds: tuple[str, ...], eager: bool
) -> Callable[[ScanContext], list[Hit]]:
    source = spec.get("query")
    if not isinstance(source, str) or not source.strip():
        raise DetectorError("query: a tree-sitter detector needs a non-empty query")
    bad_kinds = [k for k in kinds if k not in TREE_SITTER_KINDS]
    if bad_kinds:
        raise DetectorError(f"languages: no tree-sitter grammar for {bad_kinds[0]!r}")
    inside = _str_list(spec, "inside")
    stop_at = _str_list(spec, "stop_at")
    capture = spec.get("capture", "match")
    if eager:  # team catalogs: a query that does not compile is reported when the catalog loads
        for kind in kinds:
            compile_query(kind, source)

    def run(ctx: ScanContext) -> list[Hit]:
        import tree_sitter

        if ctx.kind not in kinds:
            return []
        query = compile_query(ctx.kind, source)
        tree = ctx.ts_tree(ctx.kind)
        hits: dict[int, Hit] = {}
        for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
            nodes = captures.get(capture) or next(iter(captures.values()), [])
            for node in nodes:
                if inside and not _has_ancestor(node, inside, stop_at):
                    continue
                line = node.start_point[0] + 1
                hits.setdefault(line, Hit(line, snippet_at(ctx.text, line)))
        return sorted(hits.values(), key=lambda h: h.line)

    return run


def _has_ancestor(node: Any, types: list[str], stop_at: list[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in types:
            return True
        if parent.type in stop_at:
            return False
        parent = parent.parent
    return False


def _str_list(spec: dict[str, Any], key: str) -> list[str]:
    value = spec.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DetectorError(f"{key}: must be a list of strings")
    return value


def _regex(spec: dict[str, Any], key: str, flags: int, required: bool = False) -> re.Pattern[str] | None:
    value = spec.get(key)
    if value is None:
        if required:
            raise DetectorError(f"{key}: a regex detector needs a pattern")
        return None
    if not isinstance(value, str) or not value:
        raise DetectorError(f"{key}: must be a non-empty string")
    try:
        return re.compile(value, flags)
    except re.error as exc:
        raise DetectorError(f"{key}: regex does not compile: {exc}") from exc


def _compile_regex(spec: dict[str, Any], kinds: tuple[str, ...]) -> Callable[[ScanContext], list[Hit]]:
    flags = re.MULTILINE | (re.IGNORECASE if spec.get("ignore_case") else 0)
    pattern = _regex(spec, "pattern", flags, required=True)
    unless = _regex(spec, "unless", flags)
    unless_file = _regex(spec, "unless_file", flags)
    requires_file = _regex(spec, "requires_file", flags)
    unit = spec.get("unit", "line")
    if unit not in ("line", "statement", "file"):
        raise DetectorError(f"unit: must be line, statement or file (got {unit!r})")
    assert pattern is not None

    def run(ctx: ScanContext) -> list[Hit]:
        text = ctx.text
        if unless_file and unless_file.search(text):
            return []
        if requires_file and not requires_file.search(text):
            return []
        hits: list[Hit] = []
        for start, chunk in _units(text, unit, ctx.kind):
            m = pattern.search(chunk)
            if not m or (unless and unless.search(chunk)):
                continue
            line = text.count("\n", 0, start + m.start()) + 1
            hits.append(Hit(line, snippet_at(text, line)))
        return hits

    return run


def _units(text: str, unit: str, kind: str) -> list[tuple[int, str]]:
    """(offset, chunk) pairs: lines (comment lines skipped), `;`-separated statements, or the whole file."""
    if unit == "file":
        return [(0, text)]
    if unit == "statement":
        out, start = [], 0
        for m in re.finditer(r";", text):
            out.append((start, text[start : m.start()]))
            start = m.end()
        out.append((start, text[start:]))
        return [(s + len(c) - len(c.lstrip()), c.strip()) for s, c in out if c.strip()]
    prefixes = _COMMENT_PREFIX.get(kind, ())
    out, offset = [], 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if not (prefixes and stripped.startswith(prefixes)):
            out.append((offset, line.rstrip("\n")))
        offset += len(line)
    return out
