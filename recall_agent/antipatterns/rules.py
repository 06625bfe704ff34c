"""Named detector rules: Python checks over the stdlib `ast`, and Dockerfile checks over instructions.

Each rule is a function `(ScanContext) -> list[Hit]` registered under a name that catalog entries use
(`detectors: [{kind: rule, rule: <name>}]`). Python rules resolve import aliases (`import requests as r`,
`from subprocess import run`) so `r.get(...)` is still `requests.get`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from recall_agent.antipatterns.source import Hit, ScanContext, snippet_at


@dataclass(frozen=True)
class Rule:
    kinds: tuple[str, ...]
    func: Callable[[ScanContext], list[Hit]]


RULES: dict[str, Rule] = {}


def _rule(name: str, *kinds: str) -> Callable[[Callable[[ScanContext], list[Hit]]], Callable]:
    def register(func: Callable[[ScanContext], list[Hit]]) -> Callable:
        RULES[name] = Rule(kinds, func)
        return func

    return register


# --------------------------------------------------------------------------- python helpers


class PyModule:
    """A parsed Python file with its import aliases and parent links."""

    def __init__(self, ctx: ScanContext, tree: ast.Module) -> None:
        self.ctx = ctx
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.nodes, self.parents = ctx.python_index()
        self.all_calls: list[ast.Call] = []
        for node in self.nodes:
            if isinstance(node, ast.Call):
                self.all_calls.append(node)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def qualname(self, node: ast.AST) -> str:
        """Dotted name of an expression with the first segment resolved through imports ('' if not a name)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call):  # requests.Session().get -> "requests.Session().get"
            inner = self.qualname(node.func)
            return ".".join([inner + "()", *reversed(parts)]) if inner else ""
        if not isinstance(node, ast.Name):
            return ""
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def hit(self, node: ast.AST, detail: str = "") -> Hit:
        line = getattr(node, "lineno", 1)
        return Hit(line, snippet_at(self.ctx.text, line), detail)

    def calls(self, root: ast.AST | None = None, *, into_functions: bool = True) -> Iterator[ast.Call]:
        if root is None and into_functions:
            yield from self.all_calls
            return
        for node in _walk(root or self.tree, into_functions):
            if isinstance(node, ast.Call):
                yield node


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _walk(root: ast.AST, into_functions: bool = True) -> Iterator[ast.AST]:
    """ast.walk, optionally not descending into nested function definitions below root."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not into_functions and isinstance(child, _FUNCS):
                continue
            stack.append(child)


def py_module(ctx: ScanContext) -> PyModule | None:
    """The file's PyModule, built once and shared by every rule (None when it does not parse)."""
    module = ctx.cache.get("pymodule")
    if module is None:
        tree = ctx.python_ast()
        if tree is None:
            return None
        module = ctx.cache["pymodule"] = PyModule(ctx, tree)
    return module


def _python(func: Callable[[PyModule], list[Hit]]) -> Callable[[ScanContext], list[Hit]]:
    def run(ctx: ScanContext) -> list[Hit]:
        module = py_module(ctx)
        if module is None:
            return []
        hits = func(module)
        unique = {h.line: h for h in sorted(hits, key=lambda h: h.line, reverse=True)}
        return sorted(unique.values(), key=lambda h: h.line)

    run.__name__ = func.__name__
    return run


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _has_star_kwargs(call: ast.Call) -> bool:
    return any(kw.arg is None for kw in call.keywords)


def _is_const(node: ast.AST | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _is_str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _dynamic_string(node: ast.AST | None) -> bool:
    """A string built at run time from parts: f-string with values, '%' / '+' with a literal, '...'.format()."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _is_str(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return (
            _is_str(node.left)
            or _is_str(node.right)
            or _dynamic_string(node.left)
            or _dynamic_string(node.right)
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _is_str(node.func.value)
    return False


def _name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def _first_arg(call: ast.Call, kw: str | None = None) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return _kw(call, kw) if kw else None


# --------------------------------------------------------------------------- python rules


@_rule("py-mutable-default", "python")
@_python
def _mutable_default(m: PyModule) -> list[Hit]:
    hits = []
    mutable_calls = {
        "list",
        "dict",
        "set",
        "collections.defaultdict",
        "collections.deque",
        "collections.OrderedDict",
    }
    for node in m.nodes:
        if not isinstance(node, _FUNCS):
            continue
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in pairs:
            literal = isinstance(
                default, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp
            )
            call = isinstance(default, ast.Call) and m.qualname(default.func) in mutable_calls
            if (literal or call) and (_stub(node) or _changes_or_leaks(node, arg.arg)):
                hits.append(m.hit(default, "mutable default is shared between calls"))
    return hits


_MUTATORS = {
    "append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "discard",
    "clear", "sort", "reverse", "appendleft", "extendleft",
}  # fmt: skip


def _stub(fn: ast.AST) -> bool:
    """A body of `...` / `pass` (a signature quoted in a question): the default is the whole story."""
    body = [s for s in getattr(fn, "body", []) if not (isinstance(s, ast.Expr) and _is_str(s.value))]
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and _is_const(s.value, Ellipsis)) for s in body
    )


def _changes_or_leaks(fn: ast.AST, name: str) -> bool:
    """The function mutates the parameter, or hands the shared object out (returns, stores or yields it).
    A default that is only read (`ax_attrs: list[str] = ["name"]` iterated over), or rebound before use
    (`attrs = set(attrs)`), is harmless."""
    nodes = list(ast.walk(fn))
    if any(isinstance(n, ast.Assign) and any(_is_name(t, name) for t in n.targets) for n in nodes):
        return False
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _MUTATORS and _is_name(node.func.value, name):
                return True
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) and _is_name(t.value, name) for t in targets):
                return True
            if isinstance(node, ast.AugAssign) and _is_name(node.target, name):
                return True
            if not isinstance(node, ast.AugAssign) and _is_name(node.value, name):
                return any(isinstance(t, ast.Attribute | ast.Subscript) for t in targets)
        elif isinstance(node, ast.Delete):
            if any(isinstance(t, ast.Subscript) and _is_name(t.value, name) for t in node.targets):
                return True
        elif isinstance(node, ast.Return | ast.Yield) and _is_name(node.value, name):
            return True
    return False


def _is_name(node: ast.AST | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


_BROAD = {"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"}


def _broad_handler(m: PyModule, handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(m.qualname(t) in _BROAD for t in types)


def _swallows(body: list[ast.stmt]) -> bool:
    """Body does nothing with the error: only pass / ... / continue / break / return <constant>."""
    for stmt in body:
        if isinstance(stmt, ast.Pass | ast.Continue | ast.Break):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Return) and (stmt.value is None or isinstance(stmt.value, ast.Constant)):
            continue
        return False
    return True


_CLEANUP = {
    "close", "aclose", "shutdown", "unlink", "remove", "rmdir", "rmtree", "kill", "terminate", "cancel",
    "release", "disconnect", "close_connection", "sendall", "flush", "join", "wait", "stop", "cleanup",
}  # fmt: skip


def best_effort_cleanup(m: PyModule, handler: ast.ExceptHandler) -> bool:
    """The guarded code only tears something down (`sock.close()`, `os.unlink(tmp)`, awaiting a finished
    task): ignoring its failure is the usual, deliberate choice."""
    parent = m.parents.get(handler)
    if not isinstance(parent, ast.Try):
        return False
    calls = [n for stmt in parent.body for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    if not calls:  # `await self._done` alone: waiting for something to finish, whatever its outcome
        return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Await) for s in parent.body)
    acting = [c for c in calls if not _is_data_call(m, c)]
    return bool(acting) and all(m.qualname(c.func).split(".")[-1] in _CLEANUP for c in acting)


def _is_data_call(m: PyModule, call: ast.Call) -> bool:
    """Calls that only compute arguments (`conn.data_to_send()`) do not change what the block is for."""
    parent = m.parents.get(call)
    return not isinstance(parent, ast.Expr) and not isinstance(parent, ast.Await)


@_rule("py-broad-except-swallow", "python")
@_python
def _broad_except_swallow(m: PyModule) -> list[Hit]:
    return [
        m.hit(h, "broad except discards the error")
        for h in m.nodes
        if isinstance(h, ast.ExceptHandler)
        and _broad_handler(m, h)
        and _swallows(h.body)
        and not best_effort_cleanup(m, h)
        and not explained(m.ctx.text, h)
    ]


def explained(text: str, handler: ast.ExceptHandler) -> bool:
    """A comment on the `except` line or inside the handler (`# malformed cookies are dropped`,
    `# noqa: BLE001`): the swallow was decided and written down, not forgotten."""
    lines = text.splitlines()
    last = getattr(handler, "end_lineno", None) or handler.lineno
    return any("#" in line for line in lines[handler.lineno - 1 : last])


@_rule("py-bare-except", "python")
@_python
def _bare_except(m: PyModule) -> list[Hit]:
    hits = []
    for h in m.nodes:
        if isinstance(h, ast.ExceptHandler) and h.type is None:
            reraises = any(isinstance(n, ast.Raise) and n.exc is None for n in ast.walk(h))
            if not reraises:
                hits.append(m.hit(h, "bare except also catches KeyboardInterrupt and SystemExit"))
    return hits


@_rule("py-raise-without-from", "python")
@_python
def _raise_without_from(m: PyModule) -> list[Hit]:
    """`raise NewError(...)` inside an `except` block with no `from`: the caught error's traceback is lost
    (flake8-bugbear B904). A bare `raise` and re-raising the caught name keep it."""
    hits = []
    for h in m.nodes:
        if not isinstance(h, ast.ExceptHandler):
            continue
        for node in _handler_statements(h):
            if isinstance(node, ast.Raise) and node.exc is not None and node.cause is None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if not (isinstance(exc, ast.Name) and exc.id == h.name):
                    hits.append(m.hit(node, "the new exception does not chain the one caught"))
    return hits


def _handler_statements(handler: ast.ExceptHandler) -> list[ast.AST]:
    """Nodes of an except block, not entering nested functions, classes or other handlers."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(handler.body)
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.ExceptHandler))
    return out


@_rule("py-float-equality", "python")
@_python
def _float_equality(m: PyModule) -> list[Hit]:
    hits = []
    for node in m.nodes:
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_fractional(s) for s in sides):
                hits.append(m.hit(node, "exact comparison with a fractional float"))
    return hits


def _fractional(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and not node.value.is_integer()


_BLOCKING_EXACT = {
    "time.sleep",
    "urllib.request.urlopen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "os.system",
    "socket.create_connection",
    "input",
}
_HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request"}


def _is_requests_call(name: str) -> bool:
    parts = name.split(".")
    return len(parts) == 2 and parts[0] == "requests" and parts[1] in _HTTP_VERBS


@_rule("py-blocking-call-in-async", "python")
@_python
def _blocking_in_async(m: PyModule) -> list[Hit]:
    hits = []
    for fn in m.nodes:
        if not isinstance(fn, ast.AsyncFunctionDef):
            continue
        for stmt in fn.body:
            if isinstance(stmt, _FUNCS):  # a nested (sync) def runs wherever it is called, not here
                continue
            for call in m.calls(stmt, into_functions=False):
                name = m.qualname(call.func)
                if name in _BLOCKING_EXACT or _is_requests_call(name):
                    hits.append(m.hit(call, f"`{name}` blocks the event loop inside `async def {fn.name}`"))
    return hits


@_rule("py-urlopen-without-timeout", "python")
@_python
def _urlopen_without_timeout(m: PyModule) -> list[Hit]:
    """urllib's urlopen without a timeout (bandit's B113 covers requests and httpx only)."""
    return [
        m.hit(call, "`urlopen` without a timeout can hang forever")
        for call in m.calls()
        if m.qualname(call.func) == "urllib.request.urlopen"
        and _kw(call, "timeout") is None
        and not _has_star_kwargs(call)
        and len(call.args) < 3
    ]


_SQL_METHODS = {"execute", "executemany", "executescript", "raw", "exec_driver_sql", "mogrify"}
_SQL_WORDS = re.compile(r"\b(select|insert|update|delete|where|values|from)\b", re.IGNORECASE)


# interpolations that shape the statement rather than carry values: placeholder lists ("?,?,?"),
# table/column names from constants, clause fragments. Building those is normal; values are not.
_ID_VALUE = re.compile(r"(^|_)ids?$", re.IGNORECASE)
_STRUCTURAL = re.compile(
    r"mark|placeholder|qmark|table|column|cols|field|where|clause|order|sort|direction|schema|ident|fragment|join",
    re.IGNORECASE,
)


def _interpolated(node: ast.AST) -> tuple[list[ast.AST], bool]:
    """The expressions a dynamic string splices in, and whether any sits inside SQL quotes ('{x}')."""
    if isinstance(node, ast.JoinedStr):
        values, quoted, prev = [], False, ""
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                values.append(part.value)
                quoted = quoted or prev.rstrip().endswith(("'", "%'"))
            prev = part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else ""
        return values, quoted
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
        values = list(node.right.elts) if isinstance(node.right, ast.Tuple) else [node.right]
        return values, bool(re.search(r"'%[sd(]", node.left.value))  # type: ignore[attr-defined]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_str(node.func.value):
        values = [*node.args, *(k.value for k in node.keywords)]
        return values, "'{" in node.func.value.value  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, lq = _interpolated(node.left) if not _is_str(node.left) else ([], False)
        right, rq = _interpolated(node.right) if not _is_str(node.right) else ([], False)
        if not _dynamic_string(node.left) and not _is_str(node.left):
            left = [node.left]
        if not _dynamic_string(node.right) and not _is_str(node.right):
            right = [node.right]
        quoted = _is_str(node.left) and node.left.value.rstrip().endswith("'")  # type: ignore[attr-defined]
        return left + right, lq or rq or quoted
    return [], False


def value_interpolation(node: ast.AST) -> bool:
    """A dynamic SQL string that splices in values (not just placeholders or constant identifiers)."""
    if not _dynamic_string(node):
        return False
    values, quoted = _interpolated(node)
    if quoted:
        return True
    for v in values:
        src = ast.unparse(v)
        name = _name_of(v)
        structural = _STRUCTURAL.search(src) and not _ID_VALUE.search(name)  # `order_id` is a value
        if isinstance(v, ast.Constant) or structural or (name.isupper() and len(name) > 1):
            continue
        return True
    return False


@_rule("py-sql-string-format", "python")
@_python
def _sql_string_format(m: PyModule) -> list[Hit]:
    hits = []
    for scope in m.nodes:
        if not isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        built: set[str] = set()  # names assigned SQL text with spliced-in values in this scope
        for node in _walk(scope, into_functions=False):
            if (
                isinstance(node, ast.Assign)
                and value_interpolation(node.value)
                and _SQL_WORDS.search(ast.unparse(node.value))
            ):
                built |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for call in m.calls(scope, into_functions=False):
            is_sql = (isinstance(call.func, ast.Attribute) and call.func.attr in _SQL_METHODS) or m.qualname(
                call.func
            ) in {"sqlalchemy.text", "sqlalchemy.sql.text"}
            arg = _first_arg(call)
            if not is_sql or arg is None:
                continue
            if value_interpolation(arg) or (isinstance(arg, ast.Name) and arg.id in built):
                hits.append(m.hit(call, "SQL text built from values instead of bound parameters"))
    return hits


_SECRET_NAME = re.compile(
    r"(password|passwd|pwd|secret|api_?key|access_?key|private_?key|auth_?token|access_?token|token|credential)",
    re.IGNORECASE,
)
_NOT_SECRET_NAME = re.compile(
    r"(_url|_uri|_path|_file|_header|_name|_env|_var|_field|_type|_len|_length|_prefix)$", re.I
)
_PLACEHOLDER = re.compile(
    r"^(<.*>|\$\{.*\}|\{\{.*\}\}|x+|\*+|\.\.\.|dummy|example|test|none|null|todo)$", re.I
)


def _secret_literal(name: str, value: ast.AST | None) -> bool:
    if not name or not _SECRET_NAME.search(name) or _NOT_SECRET_NAME.search(name):
        return False
    if not _is_str(value):
        return False
    s = value.value  # type: ignore[union-attr]
    if len(s) < 8 or any(c.isspace() for c in s) or _PLACEHOLDER.match(s):
        return False
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", s):  # the *name* of an environment variable: ENV_TOKEN = "APP_TOKEN"
        return False
    return not s.startswith(("http://", "https://", "/", "./"))


@_rule("py-hardcoded-secret", "python")
@_python
def _hardcoded_secret(m: PyModule) -> list[Hit]:
    hits = []
    for node in m.nodes:
        pairs: list[tuple[str, ast.AST | None, ast.AST]] = []
        if isinstance(node, ast.Assign):
            pairs = [(_name_of(t), node.value, node) for t in node.targets]
        elif isinstance(node, ast.AnnAssign):
            pairs = [(_name_of(node.target), node.value, node)]
        elif isinstance(node, ast.Call):
            pairs = [(kw.arg or "", kw.value, kw.value) for kw in node.keywords]
        elif isinstance(node, ast.Dict):
            pairs = [
                (_name_of(k), v, v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
            ]
        for name, value, where in pairs:
            if _secret_literal(name, value):
                hits.append(m.hit(where, f"`{name}` is set to a literal credential"))
    return hits


def _calls_sleep_with_backoff(m: PyModule, loop: ast.AST) -> bool:
    for call in m.calls(loop, into_functions=False):
        name = m.qualname(call.func)
        if name.split(".")[-1] == "sleep" and call.args and not isinstance(call.args[0], ast.Constant):
            return True
    return False


def _is_retry_loop(loop: ast.For | ast.While | ast.AsyncFor) -> ast.Try | None:
    """A loop whose try body leaves the loop on success and whose handler lets it go round again."""
    if isinstance(loop, ast.For | ast.AsyncFor):
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
            return None
    for node in _walk(loop, into_functions=False):
        if not isinstance(node, ast.Try):
            continue
        exits = any(
            isinstance(n, ast.Return | ast.Break) for b in node.body + node.orelse for n in ast.walk(b)
        )
        loops_again = any(not any(isinstance(n, ast.Raise) for n in h.body) for h in node.handlers)
        if exits and loops_again:
            return node
    return None


@_rule("py-retry-without-backoff", "python")
@_python
def _retry_without_backoff(m: PyModule) -> list[Hit]:
    hits = []
    for loop in m.nodes:
        retry = isinstance(loop, ast.For | ast.While | ast.AsyncFor) and _is_retry_loop(loop)
        if retry and not _calls_sleep_with_backoff(m, loop):
            hits.append(m.hit(loop, "retry loop without a growing (jittered) delay"))
    return hits


_DB_RECEIVERS = re.compile(r"^(cursor|cur|conn|connection|session|db|database|engine|tx|txn)$", re.IGNORECASE)
_DB_METHODS = {"execute", "fetchrow", "fetchval", "fetch", "scalar", "scalars", "query", "get"}
_ORM_METHODS = {"get", "filter", "filter_by", "exclude", "first", "one", "count"}
_BATCHING = re.compile(r"chunk|batch|page", re.IGNORECASE)


def _string_constants(m: PyModule) -> dict[str, str]:
    """name -> text for names assigned a plain string anywhere in the module (SQL kept in constants)."""
    cached = m.ctx.cache.get("string_constants")
    if cached is None:
        cached = {}
        for node in m.nodes:
            if isinstance(node, ast.Assign) and _is_str(node.value):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        cached[t.id] = node.value.value  # type: ignore[attr-defined]
        m.ctx.cache["string_constants"] = cached
    return cached


def _db_call(m: PyModule, call: ast.Call) -> bool:
    """A call that runs a read query: ORM lookups, or a driver call whose SQL (if visible) is a SELECT."""
    if not isinstance(call.func, ast.Attribute):
        return False
    parts = m.qualname(call.func).split(".")
    if ("objects" in parts[:-1] or "query" in parts[:-1]) and call.func.attr in _ORM_METHODS:
        return True
    if not (len(parts) >= 2 and call.func.attr in _DB_METHODS and _DB_RECEIVERS.match(parts[-2])):
        return False
    sql = _first_arg(call)
    if sql is None or call.func.attr in {"query", "get"}:
        return sql is not None or call.func.attr == "query"  # session.query(Model) / session.get(Model, id)
    text = _string_constants(m).get(sql.id, "") if isinstance(sql, ast.Name) else ast.unparse(sql)
    return bool(re.search(r"\bselect\b", text, re.IGNORECASE))


def _batched(loop: ast.For | ast.AsyncFor) -> bool:
    """`for i in range(0, n, 500)` or a loop over chunks/batches/pages: one query per batch is the fix."""
    it = loop.iter
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 3
    ):
        return True
    return bool(_BATCHING.search(ast.unparse(loop.target) + " " + ast.unparse(loop.iter)))


@_rule("py-n-plus-one-query", "python")
@_python
def _n_plus_one(m: PyModule) -> list[Hit]:
    hits = []
    for loop in m.nodes:
        if isinstance(loop, ast.For | ast.AsyncFor) and not _batched(loop):
            for stmt in loop.body:
                for call in m.calls(stmt, into_functions=False):
                    if _db_call(m, call):
                        hits.append(m.hit(call, "one query per loop iteration"))
    return hits


_PUBLISH_METHODS = {
    "publish",
    "produce",
    "send",
    "send_and_wait",
    "subscribe",
    "basic_publish",
    "send_message",
}
_TOPIC_KWARGS = {"topic", "queue", "routing_key", "exchange", "queue_name", "topic_name", "stream", "subject"}
_TOPIC_LIKE = re.compile(r"^[A-Za-z0-9_.:/\-]{3,}$")


def _topic_literal(node: ast.AST | None) -> bool:
    if isinstance(node, ast.List | ast.Tuple):
        return any(_topic_literal(e) for e in node.elts)
    if not _is_str(node):
        return False
    s = node.value  # type: ignore[union-attr]
    return bool(_TOPIC_LIKE.match(s)) and any(c in s for c in "._-:/")


@_rule("py-hardcoded-topic", "python")
@_python
def _hardcoded_topic(m: PyModule) -> list[Hit]:
    hits = []
    for call in m.calls():
        if not isinstance(call.func, ast.Attribute):
            continue
        if call.func.attr in _PUBLISH_METHODS and call.args and _topic_literal(call.args[0]):
            hits.append(m.hit(call, "topic/queue name hardcoded at the call site"))
            continue
        for kw in call.keywords:
            if kw.arg in _TOPIC_KWARGS and _is_str(kw.value) and kw.value.value:  # type: ignore[union-attr]
                hits.append(m.hit(call, f"`{kw.arg}` hardcoded at the call site"))
                break
    return hits


@_rule("py-open-without-with", "python")
@_python
def _open_without_with(m: PyModule) -> list[Hit]:
    hits = []
    for call in m.calls():
        if m.qualname(call.func) not in {"open", "io.open", "codecs.open"}:
            continue
        parent = m.parents.get(call)
        if isinstance(parent, ast.withitem | ast.Return):
            continue
        hits.append(m.hit(call, "file opened outside a `with` block"))
    return hits


@_rule("py-naive-datetime", "python")
@_python
def _naive_datetime(m: PyModule) -> list[Hit]:
    hits = []
    for call in m.calls():
        name = m.qualname(call.func)
        if name in {"datetime.datetime.utcnow", "datetime.datetime.utcfromtimestamp"}:
            hits.append(m.hit(call, f"`{name}` returns a naive datetime"))
        elif name == "datetime.datetime.now" and not call.args and _kw(call, "tz") is None:
            hits.append(m.hit(call, "`datetime.now()` without a timezone"))
    return hits


_SECRETISH = re.compile(
    r"(token|password|passwd|secret|nonce|salt|otp|api_?key|session_?id|reset|csrf)", re.I
)


@_rule("py-random-for-secrets", "python")
@_python
def _random_for_secrets(m: PyModule) -> list[Hit]:
    hits = []
    for node in m.nodes:
        names: list[str] = []
        value: ast.AST | None = None
        if isinstance(node, ast.Assign):
            names, value = [_name_of(t) for t in node.targets], node.value
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names = [node.name]
            value = ast.Module(body=[s for s in node.body if isinstance(s, ast.Return)], type_ignores=[])
        if value is None or not any(_SECRETISH.search(n) for n in names):
            continue
        for call in m.calls(value):
            if m.qualname(call.func).startswith("random."):
                hits.append(m.hit(call, "`random` is predictable; use `secrets`"))
    return hits


@_rule("py-tls-verify-disabled", "python")
@_python
def _tls_verify_disabled(m: PyModule) -> list[Hit]:
    hits = []
    for call in m.calls():
        if _is_const(_kw(call, "verify"), False):
            hits.append(m.hit(call, "certificate verification disabled"))
        elif m.qualname(call.func) == "ssl._create_unverified_context":
            hits.append(m.hit(call, "unverified SSL context"))
    return hits


@_rule("py-fast-hash-password", "python")
@_python
def _fast_hash_password(m: PyModule) -> list[Hit]:
    fast = {"md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s", "new"}
    hits = []
    for call in m.calls():
        name = m.qualname(call.func)
        if name.startswith("hashlib.") and name.split(".")[-1] in fast:
            text = " ".join(ast.unparse(a) for a in call.args)
            if re.search(r"pass(word|wd)?|pwd", text, re.IGNORECASE):
                hits.append(m.hit(call, f"`{name}` is a fast hash, not a password hash"))
    return hits


@_rule("py-task-reference-dropped", "python")
@_python
def _task_reference_dropped(m: PyModule) -> list[Hit]:
    hits = []
    for node in m.nodes:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            name = m.qualname(node.value.func)
            receiver = name.rsplit(".", 1)[0] if "." in name else ""
            if name in {"asyncio.create_task", "asyncio.ensure_future"} or (
                name.endswith(".create_task") and "loop" in receiver.lower()
            ):
                hits.append(m.hit(node, "task result not kept: it can be garbage-collected mid-flight"))
    return hits


def _false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, 0)


@_rule("py-jwt-no-verify", "python")
@_python
def _jwt_no_verify(m: PyModule) -> list[Hit]:
    """PyJWT / python-jose `decode` told not to check the signature (bandit has no check for it)."""
    hits = []
    for call in m.calls():
        name = m.qualname(call.func)
        if not (name.endswith(".decode") and name.split(".")[0] in {"jwt", "jose"}):
            continue
        options = _kw(call, "options")
        off = _false(_kw(call, "verify")) or (
            isinstance(options, ast.Dict)
            and any(
                _is_str(k) and k.value == "verify_signature" and _false(v)  # type: ignore[union-attr]
                for k, v in zip(options.keys, options.values, strict=True)
            )
        )
        if off:
            hits.append(m.hit(call, "signature verification switched off"))
    return hits


@_rule("py-debug-mode-on", "python")
@_python
def _debug_mode_on(m: PyModule) -> list[Hit]:
    hits = []
    for call in m.calls():
        if (
            isinstance(call.func, ast.Attribute)
            and call.func.attr == "run"
            and _is_const(_kw(call, "debug"), True)
        ):
            hits.append(m.hit(call, "debug server/interactive debugger enabled"))
    for node in m.nodes:
        debug = isinstance(node, ast.Assign) and _is_const(node.value, True)
        if debug and any(isinstance(t, ast.Name) and t.id == "DEBUG" for t in node.targets):
            hits.append(m.hit(node, "DEBUG = True in settings"))
    return hits


def _reexport_module(tree: ast.Module) -> bool:
    """A module made only of imports, `__all__` and a docstring re-exports on purpose (a package facade)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if isinstance(stmt, ast.Expr) and _is_str(stmt.value):
            continue
        if isinstance(stmt, ast.Assign | ast.AugAssign) and "__all__" in ast.unparse(stmt).split("=")[0]:
            continue
        return False
    return True


@_rule("py-wildcard-import", "python")
@_python
def _wildcard_import(m: PyModule) -> list[Hit]:
    if _reexport_module(m.tree) and not m.ctx.fragment:  # a quoted line is not a whole re-export module
        return []
    return [
        m.hit(n, f"`from {n.module} import *`")
        for n in m.nodes
        if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
    ]


@_rule("py-cache-on-method", "python")
@_python
def _cache_on_method(m: PyModule) -> list[Hit]:
    caches = {"functools.lru_cache", "functools.cache", "lru_cache", "cache"}
    hits = []
    for cls in m.nodes:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not fn.args.args:
                continue
            decos = [m.qualname(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list]
            if fn.args.args[0].arg == "self" and any(d in caches for d in decos):
                hits.append(m.hit(fn, "cache keyed on self keeps every instance alive"))
    return hits


_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
_SENSITIVE = re.compile(r"(password|passwd|secret|token|api_?key|credential|ssn|card_?number|cvv)", re.I)


@_rule("py-logs-secret", "python")
@_python
def _logs_secret(m: PyModule) -> list[Hit]:
    hits = []
    for call in m.calls():
        name = m.qualname(call.func)
        is_log = name == "print" or (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in _LOG_METHODS
            and ("log" in name.rsplit(".", 1)[0].lower() or name.startswith("logging."))
        )
        if not is_log:
            continue
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            refs = [n for n in ast.walk(arg) if isinstance(n, ast.Name | ast.Attribute)]
            if any(_SENSITIVE.search(_name_of(r)) for r in refs):
                hits.append(m.hit(call, "sensitive value written to logs"))
                break
    return hits


_CHECKS = {"os.path.exists", "os.path.isfile", "os.path.isdir", "os.access", "os.path.lexists"}
_USES = {
    "open",
    "os.remove",
    "os.unlink",
    "os.makedirs",
    "os.mkdir",
    "os.rename",
    "shutil.rmtree",
    "shutil.copy",
}


@_rule("py-check-then-use", "python")
@_python
def _check_then_use(m: PyModule) -> list[Hit]:
    hits = []
    for node in m.nodes:
        if not isinstance(node, ast.If):
            continue
        test = node.test.operand if isinstance(node.test, ast.UnaryOp) else node.test
        if not (isinstance(test, ast.Call) and m.qualname(test.func) in _CHECKS and test.args):
            continue
        checked = ast.unparse(test.args[0])
        for stmt in [*node.body, *node.orelse]:
            for call in m.calls(stmt):
                if m.qualname(call.func) in _USES and call.args and ast.unparse(call.args[0]) == checked:
                    hits.append(m.hit(node, f"checks `{checked}` then uses it: race in between"))
    return hits


_LOCAL_URL = re.compile(
    r"^(https?|amqp|redis|postgres(ql)?|mysql|mongodb|kafka|grpc)://"
    r"([^/\s@]*@)?(localhost|127\.0\.0\.1|0\.0\.0\.0|\d{1,3}(\.\d{1,3}){3}|[\w.-]+\.(internal|local|lan|svc|cluster\.local))\b"
)


@_rule("py-hardcoded-service-url", "python")
@_python
def _hardcoded_service_url(m: PyModule) -> list[Hit]:
    hits = []
    for node in m.nodes:
        if not (_is_str(node) and _LOCAL_URL.match(node.value)):  # type: ignore[attr-defined]
            continue
        parent = m.parents.get(node)
        if isinstance(parent, ast.Call) and m.qualname(parent.func) in {"os.environ.get", "os.getenv"}:
            continue  # a default for a configurable value
        hits.append(m.hit(node, "service address fixed in code"))
    return hits


# --------------------------------------------------------------------------- dockerfile rules


@dataclass(frozen=True)
class _Instr:
    line: int
    op: str
    args: str


def _dockerfile(text: str) -> list[_Instr]:
    """Instructions with continuation lines joined, comments dropped."""
    out: list[_Instr] = []
    buf, start = "", 0
    for i, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not buf and (not s or s.startswith("#")):
            continue
        if not buf:
            start = i
        buf += " " + s.rstrip("\\").strip()
        if not s.endswith("\\"):
            op, _, args = buf.strip().partition(" ")
            out.append(_Instr(start, op.upper(), args.strip()))
            buf = ""
    if buf:
        op, _, args = buf.strip().partition(" ")
        out.append(_Instr(start, op.upper(), args.strip()))
    return out


@_rule("dockerfile-unpinned-base", "dockerfile")
def _dockerfile_unpinned_base(ctx: ScanContext) -> list[Hit]:
    hits, stages = [], set()
    for ins in _dockerfile(ctx.text):
        if ins.op != "FROM":
            continue
        words = [w for w in ins.args.split() if not w.startswith("--")]
        if not words:
            continue
        image = words[0]
        if len(words) >= 3 and words[1].upper() == "AS":
            stages.add(words[2].lower())
        if image.lower() in stages or image == "scratch" or "$" in image or "@" in image:
            continue
        last = image.rsplit("/", 1)[-1]
        tag = last.split(":", 1)[1] if ":" in last else ""
        if tag in ("", "latest"):
            hits.append(
                Hit(ins.line, snippet_at(ctx.text, ins.line), f"`{image}` is not pinned to a version")
            )
    return hits


_INSTALL = re.compile(
    r"\b(pip3? install|poetry install|uv sync|npm (ci|install)|yarn( install)?\b|pnpm install|bundle install|"
    r"go mod download|cargo (build|fetch)|composer install|mvn .*(package|install|dependency))"
)


@_rule("dockerfile-copy-all-before-install", "dockerfile")
def _dockerfile_copy_all_before_install(ctx: ScanContext) -> list[Hit]:
    hits, copy_all = [], None
    for ins in _dockerfile(ctx.text):
        if ins.op == "FROM":
            copy_all = None
        elif ins.op in ("COPY", "ADD") and copy_all is None:
            srcs = [w for w in ins.args.split() if not w.startswith("--")][:-1]
            if "." in srcs or "./" in srcs:
                copy_all = ins
        elif ins.op == "RUN" and copy_all is not None and _INSTALL.search(ins.args):
            hits.append(
                Hit(
                    copy_all.line,
                    snippet_at(ctx.text, copy_all.line),
                    "dependency layer rebuilt on every change",
                )
            )
            copy_all = None
    return hits


@_rule("dockerfile-runs-as-root", "dockerfile")
def _dockerfile_runs_as_root(ctx: ScanContext) -> list[Hit]:
    if ctx.fragment:  # a quoted instruction says nothing about the lines it leaves out
        return []
    final_from, user = None, None
    for ins in _dockerfile(ctx.text):
        if ins.op == "FROM":
            final_from, user = ins, None
        elif ins.op == "USER":
            user = ins.args.split(":")[0].strip()
    if final_from is None or (user and user not in ("root", "0")):
        return []
    return [Hit(final_from.line, snippet_at(ctx.text, final_from.line), "final stage has no non-root USER")]
