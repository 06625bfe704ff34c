"""Every regular expression recall runs, collected from the code itself, and adversarial inputs to time them.

Three sources, so a pattern added later is covered without editing this file:
1. compiled patterns held by any module of the `recall` package (module globals, and lists/tuples/dicts of
   them, e.g. redaction's rule tables), and those a module compiles on first use and lists through a
   module-level function `LAZY_PATTERNS()` (the architecture engine's question patterns);
2. pattern literals passed straight to `re.search(...)`, `re.sub(...)` etc. inside functions (read from the
   source with `ast`);
3. the regex detectors of the shipped antipattern catalog (YAML);
4. the known-format rules redaction loads as data (gitleaks' rules and their allowlists, recall's own
   formats, the keyword trie), compiled as recall_agent.redact.formats compiles them.

Used by tests/test_regex_safety.py (every pattern under its budget) and bench/bench_regex.py (the table).
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

import recall_agent

RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
SIZES = (4000, 1024 * 1024)


@dataclass(frozen=True)
class Found:
    where: str  # module:name, file:line, or catalog entry
    pattern: re.Pattern[str]


def _walk_values(value: object, depth: int = 0) -> list[re.Pattern[str]]:
    if isinstance(value, re.Pattern):
        return [value] if isinstance(value.pattern, str) else []
    if depth > 2:
        return []
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _walk_values(v, depth + 1)]
    if isinstance(value, dict):
        return [p for v in value.values() for p in _walk_values(v, depth + 1)]
    return []


def module_patterns() -> list[Found]:
    found: list[Found] = []
    for info in pkgutil.walk_packages(recall_agent.__path__, "recall_agent."):
        if info.name.endswith("__main__"):  # importing it runs the CLI
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # an optional engine that cannot import here has no patterns to run either
            continue
        for name, value in vars(module).items():
            if name == "LAZY_PATTERNS" and callable(value):  # compiled on first use: the module lists them
                value = value()
            for pattern in _walk_values(value):
                found.append(Found(f"{info.name}:{name}", pattern))
    return found


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _flags(call: ast.Call) -> int:
    flags = 0
    nodes = [kw.value for kw in call.keywords if kw.arg == "flags"]
    if len(call.args) >= 2 and not isinstance(call.args[1], ast.Constant):
        nodes.append(call.args[-1])
    for node in nodes:
        for part in ast.walk(node):
            if isinstance(part, ast.Attribute) and isinstance(getattr(re, part.attr, None), re.RegexFlag):
                flags |= getattr(re, part.attr)
    return flags


def inline_patterns() -> list[Found]:
    """`re.<func>("literal", ...)` calls anywhere in recall/ (module-level compiles included)."""
    root = Path(recall_agent.__file__).parent
    found: list[Found] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            func = node.func
            if not (isinstance(func.value, ast.Name) and func.value.id == "re" and func.attr in RE_FUNCS):
                continue
            if not node.args or (source := _literal(node.args[0])) is None:
                continue
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            found.append(Found(where, re.compile(source, _flags(node))))
    return found


def catalog_patterns() -> list[Found]:
    root = Path(recall_agent.__file__).parent / "antipatterns" / "catalog"
    found: list[Found] = []
    for path in sorted(root.glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")).get("antipatterns", []):
            for det in entry.get("detectors", []):
                if det.get("kind") != "regex":
                    continue
                flags = re.MULTILINE | (re.IGNORECASE if det.get("ignore_case") else 0)
                for key in ("pattern", "unless", "unless_file", "requires_file"):
                    if det.get(key):
                        found.append(Found(f"catalog:{entry['id']}:{key}", re.compile(det[key], flags)))
    return found


def format_patterns() -> list[Found]:
    from recall_agent.redact import formats

    found = [Found("redact.formats:keywords", formats.keyword_pattern())]
    for rule in formats.rules():
        found.append(Found(f"redact.formats:{rule.id}", formats.compiled(rule.regex)))
        for n, allow in enumerate(rule.allowlists):
            for m, regex in enumerate(allow.regexes):
                found.append(Found(f"redact.formats:{rule.id}:allow{n}.{m}", formats.compiled(regex)))
    return found


def all_patterns() -> list[Found]:
    """Each distinct (pattern, flags) once, named by the first place it was found."""
    seen: dict[tuple[str, int], Found] = {}
    for item in [*module_patterns(), *inline_patterns(), *catalog_patterns(), *format_patterns()]:
        seen.setdefault((item.pattern.pattern, item.pattern.flags), item)
    return list(seen.values())


# --------------------------------------------------------------------------- adversarial inputs

_UNITS = [
    "a",
    "0",
    "-",
    ".",
    " ",
    "/",
    "=",
    "_",
    ":",
    "\\",
    "a-",
    "a.",
    "a/",
    "a_",
    "0.",
    "a ",
    "a=",
    "-a",
    "a:",
    "/a",
    "\\n",
    "./",
    "ab0-_.",
    "Aa0",
    "`",
    '"',
    "'a",
    "@",
    "%",
    "\t",
    "\n",
    "a\n",
    "<a",
    "{a",
    "Error: ",
    "password=",
    "File ",
    "eyJ",
    "AKIA",
    "sk-",
    "-----BEGIN ",
]
_B64 = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkrLw"


@functools.cache
def adversarial_inputs(size: int) -> dict[str, str]:
    """Named inputs of exactly `size` characters: runs of one unit, base64, and a unit ended by a '!'
    (a failing tail makes backtracking engines try every split)."""
    inputs: dict[str, str] = {}
    for unit in _UNITS:
        run = (unit * (size // len(unit) + 1))[:size]
        inputs[f"run {unit!r}"] = run
        inputs[f"run {unit!r} + '!'"] = run[:-1] + "!"
    inputs["base64"] = (_B64 * (size // len(_B64) + 1))[:size]
    inputs["base64 lines"] = ((_B64[:76] + "\n") * (size // 77 + 1))[:size]
    return inputs


def time_pattern(pattern: re.Pattern[str], text: str) -> float:
    """CPU seconds of this thread (other processes on a shared machine do not count) for the scans
    recall does: search (every start position) and finditer to the end."""
    t0 = time.thread_time()
    pattern.search(text)
    for _ in pattern.finditer(text):
        pass
    return time.thread_time() - t0


def worst_case(pattern: re.Pattern[str], size: int, budget: float | None = None) -> tuple[float, str]:
    """(seconds, input name) of the slowest adversarial input; stops early once over `budget`."""
    worst, which = 0.0, ""
    for name, text in adversarial_inputs(size).items():
        took = time_pattern(pattern, text)
        if took > worst:
            worst, which = took, name
        if budget is not None and worst > budget:
            break
    return worst, which
