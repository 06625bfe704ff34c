"""One file's facts: its definitions, imports and calls, read from a tree-sitter parse.

The grammar does the parsing (syntax errors leave ERROR nodes; everything around them is still read). This
module only walks the query captures: it nests definitions by byte range to build qualified names
(`Client.send`), finds the enclosing definition of each call, and reads signatures and first doc lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from recall_agent.architecture import messages, values, words
from recall_agent.architecture.languages import BY_NAME, LanguageSpec, grammar, query, spec_body_types

if TYPE_CHECKING:
    from tree_sitter import Node, Query

CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "type", "module", "namespace"})
REFS_SPEC = ":refs"  # the pseudo-import holding a file's referenced type names
EMBEDS_SPEC = ":embeds"  # the pseudo-import listing a Go file's struct embeddings
REF_LANGS = frozenset({"java", "kotlin", "csharp", "php"})
# comments and string literals (skipped), else a capitalized name: one pass, no nested quantifiers
_LEXICAL = re.compile(
    rb'//[^\n]*|/\*.*?(?:\*/|\Z)|#[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|\b([A-Z][A-Za-z0-9_]*)',
    re.S,
)
SIGNATURE_MAX = 160
DOC_MAX = 160


@dataclass
class Symbol:
    name: str
    qualname: str  # local to the file: "Client.send"
    kind: str  # class, function, method, interface, struct, enum, trait, type, module, namespace
    line: int  # 1-based
    end_line: int
    signature: str
    doc: str
    returns: str = ""  # what it returns when its body says (values.py: T:Class, R:function)


@dataclass
class Import:
    spec: str  # module / path as written ("..models", "./util", "fmt", "crate::a::b")
    names: list[str]  # imported names when the syntax lists them ("Request", "Response")
    line: int
    typing_only: bool = False  # Python: inside `if TYPE_CHECKING:` (no runtime dependency)


class Call(NamedTuple):
    """A call site; a tuple, in the column order of the `calls` table (the kernel has 4.5 million)."""

    caller: str  # qualname of the enclosing definition, "" at module level
    name: str
    recv: str  # receiver text when short ("self", "httpx", "os.path"), else ""
    line: int
    rtype: str = ""  # what the receiver is, when known (values.py): T:Class, R:function, M:module


@dataclass
class FileFacts:
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    package: str = ""  # package / namespace declaration, when the language has one
    doc: str = ""  # first line of the module docstring / header comment
    errors: int = 0  # lines the grammar could not read (ERROR / MISSING nodes); the rest is still indexed
    refs: set[str] = field(default_factory=set)  # type-like names mentioned (see languages.py `@ref`)
    embeds: list[str] = field(default_factory=list)  # Go: "outer=inner" struct embeddings
    comments: str = ""  # comments and docstrings (concept search)
    idents: str = ""  # distinct identifier words (concept search)
    sites: list = field(default_factory=list)  # messages.Site: raise / log sites and their literal parts


def extract(spec: LanguageSpec, source: bytes) -> FileFacts:
    from tree_sitter import Parser, QueryCursor

    tree = Parser(grammar(spec.name)).parse(source)
    root = tree.root_node
    facts = FileFacts(errors=_unread_lines(root) if root.has_error else 0)
    defs: list[tuple[Node, str, str, str]] = []  # (node, kind, name, recv)
    calls: list[tuple[Node, str, str]] = []
    types: dict[str, list[tuple[int, int, str]]] = {}  # variable -> (scope start, end, declared type)
    docs: list[Node] = []  # comments and docstrings
    strings: list[Node] = []
    file_query, text_from, call_only = _file_query(spec.name)
    for index, caps in QueryCursor(file_query).matches(root):
        if index >= text_from:
            docs.extend(caps.get("doc", ()))
            strings.extend(caps.get("s", ()))
        elif index in call_only:
            _add_call(spec, source, caps, calls)
        else:
            _collect(spec, source, caps, facts, defs, calls, types)
    if types:  # `p.Reset()` with `p *Parser` in scope: the receiver is the type
        calls = [(n, name, _declared_type(types, recv, n.start_byte) or recv) for n, name, recv in calls]
    _build_symbols(spec, source, defs, calls, facts)
    facts.doc = _module_doc(spec, source, root)
    if facts.errors and spec.name in REF_LANGS:  # names past a syntax error are lost to the tree
        facts.refs |= _lexical_refs(source)
    if facts.embeds:
        facts.imports.append(Import(EMBEDS_SPEC, facts.embeds, 0))
    if facts.refs:  # one pseudo-import (line 0) carries them to the resolver
        facts.imports.append(Import(REFS_SPEC, sorted(facts.refs), 0))
    facts.sites = messages.sites(spec.name, source, root, facts.symbols, strings)
    facts.comments = words.comments(spec.name, source, root, docs)
    facts.idents = words.identifier_words(source)
    return facts


_CALL_CAPTURES = frozenset({"call", "call.name", "call.recv"})
_CAPTURE = re.compile(r"@([A-Za-z_][\w.]*)")


@cache
def _file_query(lang: str) -> tuple[Query, int, frozenset[int]]:
    """The language's query with the comment and string patterns (words.text_patterns) after it, so one
    walk of the tree reads definitions, calls, comments and strings (a query cursor's walk costs about as
    much as the parse). Also: the index of the first text pattern, and the patterns that capture nothing but
    a call (read without `_collect`'s cascade: most matches in C are calls)."""
    from tree_sitter import Query

    spec = BY_NAME[lang]
    own = query(lang)
    text = "\n".join(words.text_patterns(lang))
    combined = Query(grammar(lang), f"{spec.query}\n{text}") if text else own
    call_only = frozenset(
        i
        for i in range(own.pattern_count)
        if set(_CAPTURE.findall(spec.query[own.start_byte_for_pattern(i) : own.end_byte_for_pattern(i)]))
        <= _CALL_CAPTURES
    )
    return combined, own.pattern_count, call_only


def _unread_lines(root: Node) -> int:
    """Lines holding an ERROR or MISSING node (at least 1): how much of a file the grammar could not read."""
    lines: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            lines.update(range(node.start_point[0], node.end_point[0] + 1))
        elif node.is_missing:
            lines.add(node.start_point[0])
        elif node.has_error:
            stack.extend(node.children)
    return max(1, len(lines))


def _lexical_refs(source: bytes) -> set[str]:
    """Capitalized names outside comments and strings: the refs of a file the grammar could not read whole."""
    return {m.group(1).decode("utf-8", "replace") for m in _LEXICAL.finditer(source) if m.group(1)}


# nodes that bound a variable's declaration: functions, methods, closures, then the class or file
_SCOPES = frozenset(
    {
        "method_declaration",
        "function_declaration",
        "func_literal",
        "constructor_declaration",
        "lambda_expression",
        "anonymous_function",
        "local_function_statement",
        "class_body",
        "declaration_list",
        "class_declaration",
    }
)


def _scope(node: Node) -> Node:
    scope = node.parent
    while scope is not None and scope.type not in _SCOPES and scope.parent is not None:
        scope = scope.parent
    return scope if scope is not None else node


def _declared_type(types: dict[str, list[tuple[int, int, str]]], var: str, at: int) -> str:
    """The type of `var` declared in the innermost scope around byte `at` ("" when none, or two disagree)."""
    found = [(end - start, kind) for start, end, kind in types.get(var, ()) if start <= at < end]
    if not found:
        return ""
    size = min(f[0] for f in found)
    kinds = {kind for width, kind in found if width == size}
    return kinds.pop() if len(kinds) == 1 else ""


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _one(caps: dict[str, list[Node]], name: str) -> Node | None:
    nodes = caps.get(name)
    return nodes[0] if nodes else None


def _collect(
    spec: LanguageSpec,
    source: bytes,
    caps: dict[str, list[Node]],
    facts: FileFacts,
    defs: list[tuple[Node, str, str, str]],
    calls: list[tuple[Node, str, str]],
    types: dict[str, list[tuple[int, int, str]]],
) -> None:
    if (var := _one(caps, "var")) is not None and (typ := _one(caps, "type")) is not None:
        scope = _scope(var)
        kind = _text(source, typ)
        if typ.parent is not None and typ.parent.type == "call_expression":  # Go `p := newPeeker(…)`
            kind = kind[3].lower() + kind[4:] if kind.startswith("new") else kind[3:]
        types.setdefault(_text(source, var), []).append((scope.start_byte, scope.end_byte, kind))
        return
    if (owner := _one(caps, "embed.owner")) is not None and (inner := _one(caps, "embed.type")) is not None:
        facts.embeds.append(f"{_text(source, owner)}={_text(source, inner)}")
        return
    if (ref := _one(caps, "ref")) is not None:
        text = _text(source, ref)
        if ref.parent is not None and ref.parent.type == "namespace_name":
            return  # PHP: a segment of `namespace A\\B;` or of a qualified name (captured whole)
        if text[:1].isupper() or "\\" in text:  # classes by convention; PHP `Sub\\Name`
            facts.refs.add(text)
        return
    if (pkg := _one(caps, "package")) is not None:
        facts.package = _text(source, pkg).replace("\\", ".").strip()
        return
    for key, nodes in caps.items():
        if key.startswith("def."):
            name_node, recv_node = _one(caps, "name"), _one(caps, "recv")
            if name_node is None and recv_node is None:
                return
            name = _text(source, name_node) if name_node is not None else ""
            recv = _text(source, recv_node) if recv_node is not None else ""
            defs.append((nodes[0], key[4:], name, recv))
            return
    if (node := _one(caps, "import")) is not None:
        facts.imports.extend(_imports(spec, source, node, _one(caps, "import.source")))
        return
    _add_call(spec, source, caps, calls)


def _add_call(
    spec: LanguageSpec, source: bytes, caps: dict[str, list[Node]], calls: list[tuple[Node, str, str]]
) -> None:
    node, name_node = caps.get("call"), caps.get("call.name")
    if not node or not name_node:
        return
    recv_node = caps.get("call.recv")
    recv = _text(source, recv_node[0]) if recv_node else ""
    name = _text(source, name_node[0])
    if spec.name in values.JS_LANGS and name in values.JS_INDIRECT:
        name, recv = values.js_indirect(name, recv)  # fn.call(this, …) is a call of fn
    calls.append((node[0], name, recv if len(recv) <= 40 and "\n" not in recv else ""))


def _imports(spec: LanguageSpec, source: bytes, node: Node, src_node: Node | None) -> list[Import]:
    line = node.start_point[0] + 1
    if spec.name == "python":
        found = _python_imports(source, node, line)
        if values.under_type_checking(source, node):
            for imp in found:
                imp.typing_only = True
        return found
    if spec.name == "java":
        text = _text(source, node).removeprefix("import").strip().rstrip(";").strip()
        return [Import(text.removeprefix("static ").strip(), [], line)]
    if src_node is None:
        return []
    text = _text(source, src_node).strip().strip("\"'`")
    if spec.name == "rust":
        if node.type != "use_declaration":
            return [Import("mod " + text, [], line)]
        return [Import(_rust_outside_inline_mods(node, text), [], line)]
    if spec.name == "php" and node.type == "namespace_use_clause":
        return [_php_use(source, node, text, line)]
    if spec.name == "ruby":
        method = node.child_by_field_name("method")
        kind = _text(source, method) if method is not None else "require"
        if _ruby_script_only(source, node):
            return []  # under `if $0 == __FILE__`: Ruby runs it only when the file is the program itself
        if src_node.type == "string_content" and any(
            c.type == "interpolation" for c in (src_node.parent.children if src_node.parent else [])
        ):
            return []  # "#{__dir__}/x": read whole by the pattern for built paths
        if src_node.type != "string_content":  # File.expand_path("../x", __dir__), "#{__dir__}/x"
            folder_relative = _ruby_path_expression(_text(source, src_node))
            return [Import("./" + folder_relative, [], line)] if folder_relative else []
        return [Import(("./" if kind == "require_relative" else "") + text, [], line)]
    return [Import(text, [], line)]


_RB_HERE = r"(?:__dir__|File\.dirname\(\s*__FILE__\s*\)|__FILE__)"
_RB_STR = r"['\"]([^'\"#\n]{1,200})['\"]"
_RB_EXPAND = re.compile(rf"^(?:::)?File\.expand_path\(\s*{_RB_STR}\s*,\s*({_RB_HERE})\s*\)$")
_RB_JOIN = re.compile(rf"^(?:::)?File\.join\(\s*({_RB_HERE})\s*((?:,\s*{_RB_STR[:-1]}[^'\"]*['\"]\s*)+)\)$")
_RB_INTERP = re.compile(rf"^\"#{{({_RB_HERE})}}/([^'\"#\n]{{1,200}})\"$")
_RB_PART = re.compile(r"['\"]([^'\"]*)['\"]")


def _ruby_path_expression(text: str) -> str:
    """A require's path built from the file's own place, as a path from its folder ("" if not one of
    these forms): File.expand_path("../x", __FILE__) — relative to the file, so one `..` is its folder —,
    File.expand_path("x", __dir__), File.join(__dir__, "a", "b"), "#{__dir__}/x"."""
    text = " ".join(text.split())
    if m := _RB_EXPAND.match(text):
        path, base = m.group(1), m.group(2)
        if base == "__FILE__":
            if not path.startswith("../"):
                return ""
            path = path[3:]
        return path
    if m := _RB_JOIN.match(text):
        if m.group(1) == "__FILE__":
            return ""
        return "/".join(_RB_PART.findall(m.group(2)))
    if m := _RB_INTERP.match(text):
        return m.group(2) if m.group(1) != "__FILE__" else ""
    return ""


_SCRIPT_GUARD = re.compile(
    r"^\s*(?:\$0|\$PROGRAM_NAME)\s*==\s*__FILE__\s*$|^\s*__FILE__\s*==\s*(?:\$0|\$PROGRAM_NAME)\s*$"
)


def _ruby_script_only(source: bytes, node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("if", "if_modifier"):
            cond = parent.child_by_field_name("condition")
            if cond is not None and _SCRIPT_GUARD.match(_text(source, cond)):
                return True
        parent = parent.parent
    return False


def _rust_outside_inline_mods(node: Node, path: str) -> str:
    """Inside `mod tests { … }`, `super::x` is the file's own module: one `super::` per inline `mod` is
    dropped (`self::`), so the resolver reads the path from the file's module."""
    parent = node.parent
    while parent is not None:
        if parent.type == "mod_item":
            if not path.startswith("super::"):
                return path
            path = "self::" + path[len("super::") :]
            if path.startswith("self::super::"):
                path = path[len("self::") :]
        parent = parent.parent
    return path


def _php_use(source: bytes, clause: Node, text: str, line: int) -> Import:
    """`use A\\B\\C as D;` -> spec A/B/C, names [D]; inside `use A\\{B, C}` the group's prefix is added."""
    group = clause.parent
    if group is not None and group.type == "namespace_use_group" and group.parent is not None:
        prefix = next((c for c in group.parent.named_children if c.type == "namespace_name"), None)
        if prefix is not None:
            text = f"{_text(source, prefix)}\\{text}"
    alias = clause.child_by_field_name("alias")
    names = [_text(source, alias)] if alias is not None else []
    return Import(text.replace("\\", "/").lstrip("/"), names, line)


def _python_imports(source: bytes, node: Node, line: int) -> list[Import]:
    if node.type == "import_statement":
        out = []
        for child in node.named_children:
            target = child.child_by_field_name("name") if child.type == "aliased_import" else child
            if target is not None:
                out.append(Import(_text(source, target), [], line))
        return out
    module = node.child_by_field_name("module_name")
    spec = _text(source, module) if module is not None else ""
    names = []
    for child in node.children_by_field_name("name"):
        target = child.child_by_field_name("name") if child.type == "aliased_import" else child
        if target is not None:
            names.append(_text(source, target))
    if any(c.type == "wildcard_import" for c in node.named_children):
        names.append("*")
    return [Import(spec, names, line)]


def _build_symbols(
    spec: LanguageSpec,
    source: bytes,
    defs: list[tuple[Node, str, str, str]],
    calls: list[tuple[Node, str, str]],
    facts: FileFacts,
) -> None:
    """Nest definitions by byte range (qualified names, methods) and attach calls to their enclosing def."""
    # a payload is (node, kind, name, recv) for a definition, (node, name, recv) for a call
    events: list[tuple[int, int, int, Any]] = [
        (n.start_byte, -n.end_byte, 0, (n, kind, name, recv)) for n, kind, name, recv in defs
    ]
    events += [(n.start_byte, -n.end_byte, 1, (n, name, recv)) for n, name, recv in calls]
    events.sort(key=_EVENT_ORDER)
    # (end_byte, qualname, kind, the caller of a call inside: the innermost definition that is not a class)
    stack: list[tuple[int, str, str, str]] = []
    anchor = defs[0][0] if defs else calls[0][0] if calls else None
    receivers, returns = (
        values.analyse(spec.name, source, _root(anchor), [(n, r) for n, _, r in calls])
        if anchor is not None and values.has_bindings(spec.name)
        else ({}, {})
    )
    seen: set[tuple[int, str]] = set()
    out_calls = facts.calls
    for start, neg_end, is_call, payload in events:
        while stack and stack[-1][0] <= start:
            stack.pop()
        if is_call:
            node, name, recv = payload
            rtype = receivers.get((start, -neg_end), "") if receivers else ""
            caller = stack[-1][3] if stack else ""
            out_calls.append(_new_call(Call, (caller, name, recv, node.start_point[0] + 1, rtype)))
            continue
        node, kind, name, recv = payload
        if (start, kind) in seen:
            continue
        seen.add((start, kind))
        parent_q = stack[-1][1] if stack else ""
        parent_kind = stack[-1][2] if stack else ""
        caller = stack[-1][3] if stack else ""
        if kind == "impl":  # Rust impl block: a container for methods, not a symbol
            stack.append((-neg_end, recv, "class", caller))
            continue
        if "::" in name:  # C++ out-of-class definition: void Client::send()
            scope, name = name.rsplit("::", 1)[0].replace("::", "."), name.rsplit("::", 1)[1]
            parent_q = f"{parent_q}.{scope}" if parent_q else scope
            parent_kind = "class"
        if recv:  # Go method: its receiver type is the parent
            parent_q, parent_kind = recv, "class"
        if kind == "function" and parent_kind in CLASS_KINDS - {"module", "namespace"}:
            kind = "method"
        qualname = f"{parent_q}.{name}" if parent_q else name
        facts.symbols.append(
            Symbol(
                name=name,
                qualname=qualname,
                kind=kind,
                line=node.start_point[0] + 1,
                end_line=node.end_point[0] + 1,
                signature=_signature(spec, source, node),
                doc=_doc(spec, source, node),
                returns=returns.get(start, ""),
            )
        )
        stack.append((-neg_end, qualname, kind, caller if kind in CLASS_KINDS else qualname))


_new_call = tuple.__new__  # a Call without the Python-level constructor (one per call site)
_EVENT_ORDER = itemgetter(0, 1, 2)  # by start, outermost first, a definition before a call at its start


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


_WS = re.compile(r"\s+")
_WRAPPERS = frozenset(
    {
        "export_statement",
        "decorated_definition",
        "type_declaration",
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",  # JS: Runner.prototype.run = function () {…}
    }
)


def _signature(spec: LanguageSpec, source: bytes, node: Node) -> str:
    body = node.child_by_field_name("body")
    if body is None and (value := node.child_by_field_name("value")) is not None:  # const f = () => {...}
        body = value.child_by_field_name("body")
    if body is None:
        bodies = spec_body_types(spec)
        body = next((c for c in node.named_children if c.type in bodies), None)
    end = body.start_byte if body is not None else node.end_byte
    raw = source[node.start_byte : min(end, node.start_byte + 600)].decode("utf-8", "replace")
    if body is None:
        raw = raw.split("\n", 1)[0]
    sig = _WS.sub(" ", raw).strip().rstrip(":{").strip()
    if len(sig) <= SIGNATURE_MAX:
        return sig
    # keep a long signature's return annotation: call resolution reads it (calltypes.py)
    arrow = sig.rfind(") ->")
    tail = sig[arrow + 1 :] if arrow > 0 and len(sig) - arrow < 60 else ""
    return sig[: SIGNATURE_MAX - 1 - len(tail)] + "…" + tail


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().strip("/*#!-").strip()
        if line.startswith(("@", "SPDX-License-Identifier")) or not line:  # javadoc tags, license tags
            continue
        sentence = line.find(". ")
        if sentence > 0:
            line = line[: sentence + 1]
        return line if len(line) <= DOC_MAX else line[: DOC_MAX - 1] + "…"
    return ""


def _python_docstring(source: bytes, block: Node | None) -> str:
    if block is None or not block.named_children:
        return ""
    first = block.named_children[0]
    if (
        first.type == "expression_statement"
        and first.named_children
        and first.named_children[0].type == "string"
    ):
        raw = _text(source, first.named_children[0])
        return _first_line(raw.lstrip("rRbBuUfF").strip("\"'"))
    return ""


def _doc(spec: LanguageSpec, source: bytes, node: Node) -> str:
    if spec.name == "python":
        return _python_docstring(source, node.child_by_field_name("body"))
    # other languages: the comment block right above the definition (or above its export/decorator wrapper)
    anchor = node
    while anchor.parent is not None and anchor.parent.type in _WRAPPERS:
        anchor = anchor.parent
    prev = anchor.prev_named_sibling
    if prev is None or "comment" not in prev.type or anchor.start_point[0] - prev.end_point[0] > 1:
        return ""
    top = prev
    while (
        (p := top.prev_named_sibling) is not None
        and "comment" in p.type
        and top.start_point[0] - p.end_point[0] <= 1
    ):
        top = p
    return _first_line(source[top.start_byte : prev.end_byte].decode("utf-8", "replace"))


def _module_doc(spec: LanguageSpec, source: bytes, root: Node) -> str:
    if spec.name == "python":
        return _python_docstring(source, root)
    for node in root.named_children[:4]:  # the leading comments: a license tag may come first
        if "comment" not in node.type:
            break
        if line := _first_line(_text(source, node)):
            return line
    return ""
