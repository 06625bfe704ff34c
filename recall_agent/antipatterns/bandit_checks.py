"""bandit (PyCQA's Python security linter) run as a library: its findings become catalog detections.

Each Python file is checked once per scan by bandit's own AST visitor (`# nosec` honoured); catalog entries
pick the checks they stand for with `{kind: bandit, checks: [B602, B604]}`, and every finding keeps
bandit's CWE, severity, confidence and line range. bandit is imported on the first Python file only, so a
plain `recall "<error>"` never loads it.

Left out on purpose (see docs/antipatterns.md): B101 (`assert`: the idiom in tests, mostly type narrowing
elsewhere), the import-only checks (B403-B411, B412, B415: the calls are checked instead), and the
low-severity process checks B603, B606, B607 (every subprocess call without a shell). Dropped findings:
a pickle round trip (`pickle.loads(pickle.dumps(x))`: the data never left the process), shell=True or
os.system on a literal command (bandit grades it LOW, "seems safe"), and B105-B107 "passwords" that no
credential looks like (`TOKEN_HEADER = "X-Auth-Token"`, `PASSWORD_ENV = "APP_PASSWORD"`, a path).
"""

from __future__ import annotations

import ast
import io
import logging
import re
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from recall_agent.antipatterns.source import Hit, ScanContext, snippet_at

# checks never run: too broad to be a finding on their own (the docstring says why)
SKIPPED_CHECKS = frozenset(
    {"B101", "B403", "B404", "B405", "B406", "B407", "B408", "B409", "B410", "B411", "B412", "B415"}
    | {"B603", "B606", "B607"}
)
CHECK_ID = re.compile(r"B\d{3}")
_SEVERITY = {"LOW": "low", "MEDIUM": "medium", "HIGH": "high"}
_SHELL_CHECKS = frozenset({"B602", "B604", "B605"})
_PASSWORD_CHECKS = frozenset({"B105", "B106", "B107"})
# header names (X-Auth-Token), ENV_VAR_NAMES, dotted/slashed identifiers, URLs and paths, placeholders
_NOT_SECRET_VALUE = re.compile(  # anchored, one pass: linear on any value
    r"\A(?:[A-Za-z]+(?:-[A-Za-z]+)+|[A-Z][A-Z0-9_]*|(?=[\w./-]*[./])[\w./-]+|https?://\S*|<[^>]*>"
    r"|\{\{?[^}]*\}\}?|\$\{?\w+\}?)\Z"
)
_MESSAGE_CALLS = {
    "print",
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "log",
    "echo",
}
_LOADS = {"loads", "load"}
_DUMPS = {"dumps", "dump"}


@dataclass(frozen=True)
class Finding:
    check: str  # bandit test id, e.g. B602
    name: str  # bandit test name, e.g. subprocess_popen_with_shell_equals_true
    hit: Hit


_local = threading.local()  # a BanditManager keeps results on itself: one per thread


def _manager() -> Any:
    manager = getattr(_local, "manager", None)
    if manager is None:
        # bandit's warnings and stevedore's plugin-loading complaints (an optional report formatter that is
        # not installed) would otherwise reach the user's stderr through logging's last-resort handler
        logging.getLogger("bandit").setLevel(logging.CRITICAL)
        logging.getLogger("stevedore").setLevel(logging.CRITICAL)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from bandit.core import config as b_config
            from bandit.core import manager as b_manager

            profile = {"include": set(), "exclude": set(SKIPPED_CHECKS)}
            manager = b_manager.BanditManager(b_config.BanditConfig(), "file", quiet=True, profile=profile)
        _local.manager = manager
    return manager


def findings(ctx: ScanContext) -> list[Finding]:
    """bandit's findings for one Python file (cached on the context: every bandit detector shares them)."""
    cached = ctx.cache.get("bandit")
    if cached is None:
        cached = ctx.cache["bandit"] = _run(ctx)
    return cached


def _run(ctx: ScanContext) -> list[Finding]:
    if ctx.kind != "python" or ctx.python_ast() is None:
        return []
    data = ctx.text.encode("utf-8")
    manager = _manager()
    manager.results = []
    manager.metrics.begin(ctx.path or "<snippet>")
    manager._execute_ast_visitor(ctx.path or "<snippet>", io.BytesIO(data), data, _nosec_lines(data))
    out = []
    for issue in manager.results:
        if any(drop(ctx, issue) for drop in _DROPS):
            continue
        start = int(issue.lineno or 1)
        lines = [int(n) for n in (issue.linerange or [start])]
        detail = f"bandit {issue.test_id} {issue.test}: {issue.text}"
        hit = Hit(
            start,
            snippet_at(ctx.text, start),
            detail,
            end_line=max(lines),
            check=issue.test_id,
            cwe=int(issue.cwe.id) if issue.cwe and issue.cwe.id else 0,
            severity=_SEVERITY.get(str(issue.severity), ""),
            confidence=_SEVERITY.get(str(issue.confidence), ""),
        )
        out.append(Finding(issue.test_id, issue.test, hit))
    manager.results = []
    return out


def _nosec_lines(data: bytes) -> dict[int, set[str]]:
    """Line -> the checks a `# nosec` comment silences there (empty set: all), as bandit reads them."""
    if b"nosec" not in data:
        return {}
    import tokenize

    from bandit.core.manager import _parse_nosec_comment

    lines: dict[int, set[str]] = {}
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type == tokenize.COMMENT:
                found = _parse_nosec_comment(tok.string)
                if found is not None:
                    lines[tok.start[0]] = found
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def _fixed_command(ctx: ScanContext, issue: Any) -> bool:
    """shell=True / os.system on a literal command: bandit itself grades it LOW ("seems safe")."""
    return issue.test_id in _SHELL_CHECKS and str(issue.severity) == "LOW"


def _not_a_secret(ctx: ScanContext, issue: Any) -> bool:
    """B105-B107 on a value no credential looks like: a header or variable name, a word, a path, ''."""
    if issue.test_id not in _PASSWORD_CHECKS:
        return False
    _, _, value = str(issue.text).partition(": ")
    value = value.strip()[1:-1] if len(value.strip()) >= 2 else ""
    return not value or bool(_NOT_SECRET_VALUE.match(value)) or any(c.isspace() for c in value)


def _sql_without_values(ctx: ScanContext, issue: Any) -> bool:
    """B608 where no value is spliced in — only placeholders (`IN ({marks})`), table or column names from
    constants — or where the "SQL" is message text (`print("delete from the cache: " + key)`)."""
    if issue.test_id != "B608":
        return False
    from recall_agent.antipatterns.rules import value_interpolation

    lines = set(issue.linerange or [issue.lineno])
    _, parents = ctx.python_index()
    found = False
    for node, parent in parents.items():
        if getattr(node, "lineno", None) in lines and value_interpolation(node) and not _message(parent):
            found = True
            break
    return not found


def _message(node: ast.AST) -> bool:
    """An argument of print, a logger call or an exception: text for people, not a query."""
    if isinstance(node, ast.Raise):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _MESSAGE_CALLS or name.endswith(("Error", "Exception", "Warning"))


def _round_trip(ctx: ScanContext, issue: Any) -> bool:
    """`pickle.loads(pickle.dumps(x))` (a deep copy) on the finding's line: the data never left the process."""
    if issue.test_id not in {"B301", "B302"}:
        return False
    for node in ctx.python_index()[0]:
        if not (isinstance(node, ast.Call) and node.lineno == issue.lineno and node.args):
            continue
        inner = node.args[0]
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in _LOADS
            and isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr in _DUMPS
        ):
            return True
    return False


def detector(checks: tuple[str, ...]):  # noqa: ANN201 - a ScanContext -> list[Hit] function
    """The run function of a `{kind: bandit, checks: [...]}` catalog detector."""
    wanted = frozenset(checks)

    def run(ctx: ScanContext) -> list[Hit]:
        return [f.hit for f in findings(ctx) if f.check in wanted]

    return run


def _noqa(ctx: ScanContext, issue: Any) -> bool:
    """`# noqa: S110` (ruff's flake8-bandit code for B110) or a bare `# noqa` on the line: reviewed."""
    lines = ctx.text.splitlines()
    line = lines[issue.lineno - 1] if 0 < issue.lineno <= len(lines) else ""
    _, found, rest = line.partition("# noqa")
    if not found:
        return False
    if not rest.startswith(":"):
        return True
    codes = {c.strip() for c in rest[1:].replace(",", " ").split()}
    return "S" + issue.test_id[1:] in codes


def _cleanup_swallow(ctx: ScanContext, issue: Any) -> bool:
    """B110/B112 around code that only tears something down, or with a comment saying why (see rules)."""
    if issue.test_id not in {"B110", "B112"}:
        return False
    from recall_agent.antipatterns.rules import best_effort_cleanup, explained, py_module

    module = py_module(ctx)
    if module is None:
        return False
    handlers = [n for n in module.nodes if isinstance(n, ast.ExceptHandler) and n.lineno == issue.lineno]
    return any(best_effort_cleanup(module, h) or explained(ctx.text, h) for h in handlers)


_DROPS = (_round_trip, _fixed_command, _not_a_secret, _sql_without_values, _noqa, _cleanup_swallow)
