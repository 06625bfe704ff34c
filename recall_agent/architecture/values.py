"""What a call's receiver is, read from the file around it (Python and JavaScript/TypeScript).

For `obj.send()` the call graph needs to know what `obj` holds. Inside one file this module follows:

- locals bound from a constructor call (`s = Session()`, `const r = new Runner()`), annotated assignments
  and annotated parameters (`def f(app: Flask)`), `with Cls() as x`;
- attributes set in a class (`self.pool = PoolManager()`, `self.app: Flask`, `this.runner = new Runner()`);
- calls on a call's result (`EnvironBuilder(…).get_environ()`, `get_app().run()`);
- import aliases for module-qualified calls (`from . import wsgi` → `wsgi.get_host()` is `.wsgi`'s).

The answer per call is a short string stored with the call: `T:Class` (an instance of Class), `R:func` (what
`func` returns: its return annotation, else what its `return`s build, read at query time), `M:dotted.module`
(a module or a name imported from it; relative modules keep their dots), `P:name` (an unannotated parameter:
the pytest fixture `name` in the same file or a conftest.py, if there is one). Unknown receivers get "". Flow-insensitive on purpose: a name
bound to two different types in one scope is left unknown.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Query

JS_LANGS = frozenset({"javascript", "typescript", "tsx"})
JS_INDIRECT = frozenset({"call", "apply", "bind"})
_DOTTED = re.compile(r"[\w$]+(?:\.[\w$]+)*")
_SCOPES = {
    "python": frozenset({"function_definition", "lambda"}),
    "js": frozenset(
        {
            "function_declaration",
            "function_expression",
            "arrow_function",
            "method_definition",
            "generator_function_declaration",
            "function",
        }
    ),
}
_CLASSES = {"python": frozenset({"class_definition"}), "js": frozenset({"class_declaration", "class"})}
UNKNOWN = "?"

_PY_BINDINGS = """
(assignment left: (identifier) @var right: (call function: (_) @fn)) @bind
(assignment left: (identifier) @var type: (type) @type) @bind
(typed_parameter (identifier) @var type: (type) @type) @bind
(typed_default_parameter name: (identifier) @var type: (type) @type) @bind
(assignment left: (attribute object: (identifier) @obj attribute: (identifier) @attr) right: (call function: (_) @fn)) @bind
(assignment left: (attribute object: (identifier) @obj attribute: (identifier) @attr) type: (type) @type) @bind
(with_item value: (as_pattern (call function: (_) @fn) alias: (as_pattern_target (identifier) @var))) @bind
(function_definition parameters: (parameters (identifier) @param)) @bind
(return_statement (call function: (_) @fn)) @return
(return_statement (identifier) @var) @return
(expression_statement (yield (call function: (_) @fn))) @return
(expression_statement (yield (identifier) @var)) @return
(import_statement name: (dotted_name) @module) @import
(import_statement name: (aliased_import name: (dotted_name) @module alias: (identifier) @alias)) @import
(import_from_statement module_name: (_) @from name: (dotted_name) @name) @import
(import_from_statement module_name: (_) @from name: (aliased_import name: (dotted_name) @name alias: (identifier) @alias)) @import
"""

_JS_BINDINGS = """
(variable_declarator name: (identifier) @var value: (new_expression constructor: (_) @fn)) @bind
(assignment_expression left: (identifier) @var right: (new_expression constructor: (_) @fn)) @bind
(assignment_expression left: (member_expression object: (this) @obj property: (property_identifier) @attr)
  right: (new_expression constructor: (_) @fn)) @bind
"""


def js_indirect(name: str, recv: str) -> tuple[str, str]:
    """`run.call(this)` → ("run", ""); `Runnable.prototype.run.apply(…)` → ("run", "Runnable")."""
    if not _DOTTED.fullmatch(recv):
        return name, recv
    *rest, called = recv.split(".")
    if rest and rest[-1] == "prototype":
        rest.pop()
    return called, ".".join(rest)


def annotation_type(text: str) -> str:
    """The class an annotation names (`Optional["Flask"]`, `Flask | None`, `t.Optional[app.Flask]` → Flask)."""
    text = text.strip().strip("\"'")
    head, optional, inner = text.partition("Optional[")
    if optional and inner.endswith("]") and (not head or _DOTTED.fullmatch(head.rstrip("."))):
        text = inner[:-1].strip().strip("\"'")
    parts = [p.strip().strip("\"'") for p in text.split("|") if p.strip() not in ("None", "'None'")]
    if len(parts) != 1 or not _DOTTED.fullmatch(parts[0]):
        return ""
    return parts[0].rsplit(".", 1)[-1]


def callee_value(fn_text: str) -> str:
    """What calling `fn_text` gives: an instance (`T:Cls`) or the function's result (`R:func`)."""
    if not _DOTTED.fullmatch(fn_text):
        return ""
    last = fn_text.rsplit(".", 1)[-1]
    return f"T:{last}" if last[:1].isupper() else f"R:{last}"


def has_bindings(lang: str) -> bool:
    """Whether `analyse` reads anything in this language (Python and the JS family)."""
    return lang == "python" or lang in JS_LANGS


@cache
def _query(lang: str) -> Query | None:
    from tree_sitter import Query

    from recall_agent.architecture.languages import grammar

    if not has_bindings(lang):
        return None
    return Query(grammar(lang), _PY_BINDINGS if lang == "python" else _JS_BINDINGS)


def _family(lang: str) -> str:
    return "python" if lang == "python" else "js"


def _enclosing(node: Node, kinds: frozenset[str]) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type not in kinds:
        parent = parent.parent
    return parent


class _Bindings:
    """Name → value per scope (function start byte, 0 = module; imports included), attributes per class."""

    def __init__(self, lang: str) -> None:
        self.family = _family(lang)
        self.scopes: dict[tuple[int, str], str] = {}
        self.attrs: dict[tuple[int, str], str] = {}
        self.returned: dict[int, list[tuple[Node, str, str]]] = {}  # function start → (node, var, value)

    def _put(self, table: dict, key, value: str) -> None:
        if value:
            old = table.get(key)
            table[key] = value if old in (None, value) else UNKNOWN

    def scope_of(self, node: Node) -> int:
        scope = _enclosing(node, _SCOPES[self.family])
        return scope.start_byte if scope is not None else 0

    def class_of(self, node: Node) -> int:
        cls = _enclosing(node, _CLASSES[self.family])
        return cls.start_byte if cls is not None else 0

    def bind(self, source: bytes, caps: dict[str, list[Node]]) -> None:
        def text(key: str) -> str:
            nodes = caps.get(key)
            return source[nodes[0].start_byte : nodes[0].end_byte].decode("utf-8", "replace") if nodes else ""

        if "import" in caps:
            # an import binds in its own scope: `from app import app` inside one test is that test's
            self._import(text, self.scope_of(caps["import"][0]))
            return
        if "return" in caps:  # resolved once every binding is known (returns())
            node = caps["return"][0]
            self.returned.setdefault(self.scope_of(node), []).append(
                (node, text("var"), callee_value(text("fn")))
            )
            return
        node = caps["bind"][0]
        if "param" in caps:
            # an unannotated parameter: a pytest fixture of that name, if there is one (resolved at query time)
            if text("param") not in ("self", "cls"):
                self._put(self.scopes, (node.start_byte, text("param")), f"P:{text('param')}")
            return
        if "fn" in caps and node.type == "assignment" and node.child_by_field_name("type") is not None:
            return  # `x: Adapter = make()`: the annotation (matched apart) says it
        value = f"T:{t}" if (t := annotation_type(text("type"))) else callee_value(text("fn"))
        if "attr" in caps:
            if text("obj") in ("self", "this"):
                # a method's `self.x = …` belongs to its class (JS constructor functions: to the file)
                self._put(self.attrs, (self.class_of(node), text("attr")), value)
            return
        self._put(self.scopes, (self.scope_of(node), text("var")), value)

    def _import(self, text, scope: int) -> None:
        if source_module := text("from"):
            name = text("name")
            sep = "" if source_module.endswith(".") else "."
            self._put(self.scopes, (scope, text("alias") or name), f"M:{source_module}{sep}{name}")
        elif text("alias"):
            self._put(self.scopes, (scope, text("alias")), f"M:{text('module')}")
        else:
            top = text("module").split(".")[0]
            self.scopes.setdefault((scope, top), f"M:{top}")

    def returns(self) -> dict[int, str]:
        """Function start byte → what it returns (`return Flask(…)`, `app = Flask(…); yield app`), when every
        return / yield agrees."""
        out: dict[int, str] = {}
        for scope, found in self.returned.items():
            values = {value or self.lookup(node, var) for node, var, value in found}
            if len(values) == 1 and (value := values.pop())[:2] in ("T:", "R:"):
                out[scope] = value
        return out

    def lookup(self, node: Node, name: str) -> str:
        scope = _enclosing(node, _SCOPES[self.family])
        while scope is not None:
            if (found := self.scopes.get((scope.start_byte, name))) is not None:
                return found
            scope = _enclosing(scope, _SCOPES[self.family])
        return self.scopes.get((0, name), "")


def analyse(
    lang: str, source: bytes, root: Node | None, calls: list[tuple[Node, str]]
) -> tuple[dict[tuple[int, int], str], dict[int, str]]:
    """(call (start, end) byte → what its receiver is, function start byte → what it returns), where known.
    Receivers: `T:Class`, `R:function`, `M:module`, `P:fixture` (an unannotated parameter)."""
    query = _query(lang)
    if query is None or root is None:
        return {}, {}
    from tree_sitter import QueryCursor

    bindings = _Bindings(lang)
    for _, caps in QueryCursor(query).matches(root):
        bindings.bind(source, caps)
    return _receivers(bindings, source, calls), bindings.returns()


def _receivers(
    bindings: _Bindings, source: bytes, calls: list[tuple[Node, str]]
) -> dict[tuple[int, int], str]:
    out: dict[tuple[int, int], str] = {}
    for node, recv in calls:
        if not recv:
            continue
        value = _receiver(bindings, source, node)
        if value and value != UNKNOWN:
            out[(node.start_byte, node.end_byte)] = value
    return out


def _object_of(node: Node) -> Node | None:
    fn = node.child_by_field_name("function")
    if fn is None:
        return None
    return fn.child_by_field_name("object")


def _receiver(bindings: _Bindings, source: bytes, call: Node) -> str:
    obj = _object_of(call)
    if obj is None:
        return ""
    text = source[obj.start_byte : obj.end_byte].decode("utf-8", "replace")
    if obj.type == "identifier":
        return bindings.lookup(call, text)
    if obj.type in ("call", "call_expression", "new_expression"):
        inner = obj.child_by_field_name("function") or obj.child_by_field_name("constructor")
        if inner is None:
            return ""
        return callee_value(source[inner.start_byte : inner.end_byte].decode("utf-8", "replace"))
    if obj.type in ("attribute", "member_expression"):
        head, _, attr = text.rpartition(".")
        if head in ("self", "this") and "." not in attr:
            found = bindings.attrs.get((bindings.class_of(call), attr), "")
            return found or bindings.attrs.get((0, attr), "")
        first = text.split(".", 1)[0]
        module = bindings.lookup(call, first)
        if module.startswith("M:") and _DOTTED.fullmatch(text):
            return module + text[len(first) :]
    return ""


def under_type_checking(source: bytes, node: Node) -> bool:
    """Is this Python statement inside an `if TYPE_CHECKING:` block (`typing.` / `t.` prefixes allowed)?"""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "if_statement":
            condition = parent.child_by_field_name("condition")
            consequence = parent.child_by_field_name("consequence")
            if (
                condition is not None
                and consequence is not None
                and child.start_byte >= consequence.start_byte
                and child.end_byte <= consequence.end_byte
                and _is_type_checking(
                    source[condition.start_byte : condition.end_byte].decode("utf-8", "replace")
                )
            ):
                return True
        child, parent = parent, parent.parent
    return False


def _is_type_checking(condition: str) -> bool:
    """`TYPE_CHECKING`, `typing.TYPE_CHECKING`, `t.TYPE_CHECKING`."""
    return condition.rpartition(".")[2] == "TYPE_CHECKING" and bool(_DOTTED.fullmatch(condition))
