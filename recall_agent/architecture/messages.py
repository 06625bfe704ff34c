"""Where a file builds its error and log messages: the literal parts of each raise, throw, log or
error-constructor site, so an error message can be traced back to the line that produced it.

`sites(lang, source, root, symbols)` reads every string literal of a parsed file (one tree-sitter query)
and keeps those that feed a message: an argument (directly, or through `%`, `+`, `.format`, `String.format`,
`fmt.Sprintf`) of a `raise`/`throw`, of a call or macro named like an error (`*Error`, `*Exception`,
`errors.New`, `fmt.Errorf`, `panic!`, `bail!`, `report*`, …) or a logger's `error`/`warning`/…, a Rust
`#[error("…")]` attribute, or a constant named like a message (`CONTEXT_MISSING_ERROR = "…"`). Each string
is cut into its literal parts at interpolations (f-strings, template literals, `#{}`) and format
placeholders (`%s`, `%(name)s`, `{}`, `{0}`, `%v`, `{:?}`), so `"Requested %s, but settings are not
configured. "` gives `Requested ` and `, but settings are not configured. `.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Query

STRING_TYPES = (
    "string",
    "template_string",
    "interpreted_string_literal",
    "raw_string_literal",
    "string_literal",
    "encapsed_string",
    "verbatim_string_literal",
)
_HOLES = frozenset({"interpolation", "template_substitution"})
_PLACEHOLDER = re.compile(
    r"%\([A-Za-z_]\w*\)[-#0 +]?\d*[sdrifx]|%[-#0 +]?\d*(?:\.\d+)?[sdifrqvwxXegpTtbco]|\{[^{}\n]{0,40}\}|\x00"
)
_CONTINUATION = re.compile(r"\\\n[ \t]*")
_LAST_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)!?\s*$")
_RAISE_NODES = frozenset({"raise_statement", "throw_statement", "throw_expression"})
_RAISE_CALLS = frozenset({"raise", "fail", "panic", "abort", "bail", "throw", "die"})
_LOG_CALLS = frozenset(
    {"error", "errorf", "errorw", "warn", "warnf", "warning", "warnw", "fatal", "fatalf", "critical"}
    | {"exception", "panicf", "new", "unreachable", "unimplemented", "todo", "expect", "ensure", "anyhow"}
    | {"format_err", "err_msg", "die", "abort_with", "alert"}
)
_ERRORISH = re.compile(
    r"(?:Error|Exception|Err|Failure|Fault)\b|^_?(?:report|raise|throw|handle)[A-Z_]|^_?fail(?:f|ed|ure|[A-Z_]|$)"
)
_MESSAGE_NAME = re.compile(r"(?i)(?:^|_)(?:msg|message|err|error|errors|warn|warning)s?(?:_|$)|Message$|Msg$")
_CALL_NODES = frozenset(
    {"call", "call_expression", "method_invocation", "object_creation_expression", "new_expression"}
    | {"macro_invocation", "invocation_expression", "function_call_expression", "member_call_expression"}
    | {"attribute", "attribute_item", "command_call", "method_call"}
)
_ASSIGN_NODES = frozenset(
    {"assignment", "variable_declarator", "const_item", "static_item", "let_declaration", "const_spec"}
    | {
        "short_var_declaration",
        "var_spec",
        "assignment_expression",
        "lexical_declaration",
        "constant_declaration",
    }
    | {
        "augmented_assignment",
        "augmented_assignment_expression",
        "compound_assignment_expr",
        "operator_assignment",
    }
)
_STOP_NODES = frozenset(
    {
        "function_definition",
        "function_declaration",
        "method_declaration",
        "method_definition",
        "class_definition",
    }
    | {"class_declaration", "function_item", "impl_item", "block", "statement_block", "module", "program"}
    | {
        "source_file",
        "class_body",
        "body_statement",
        "method",
        "arrow_function",
        "func_literal",
        "closure_expression",
    }
)
_RETURN_NODES = frozenset({"return_statement", "return_expression", "return"})
_IF_NODES = frozenset({"if_statement", "elif_clause", "if_expression", "if", "unless", "if_modifier"})
MAX_UP = 8  # ancestors looked at above a string
_START_BYTE = attrgetter("start_byte")
CALLEE_CACHED = 120  # callees this long or shorter have their kind cached (_known_callee_kind)
MAX_SITES = 2_000  # per file
PART_MIN = 4  # characters of a literal part worth matching
CODE_MAX = 160


@dataclass
class Site:
    line: int
    end_line: int
    kind: str  # raise | error | log | message
    scope: str = ""  # qualname of the enclosing definition
    exc: str = ""  # the exception or error type raised, when written there
    cond: str = ""  # the condition of the closest enclosing `if`
    parts: list[str] = field(default_factory=list)


def string_patterns(lang: str) -> list[str]:
    """Query patterns capturing the string literals of a language as @s."""
    from recall_agent.architecture.languages import grammar

    language = grammar(lang)
    return [f"({k}) @s" for k in STRING_TYPES if language.id_for_node_kind(k, True)]


@cache
def _strings_query(lang: str) -> Query | None:
    from tree_sitter import Query

    from recall_agent.architecture.languages import grammar

    patterns = string_patterns(lang)
    return Query(grammar(lang), "\n".join(patterns)) if patterns else None


def sites(lang: str, source: bytes, root: Node, symbols: list, strings: list | None = None) -> list[Site]:
    """The message sites of a parsed file, in source order (see the module docstring). `strings`: the
    file's @s captures when the caller ran the query already (extract.py)."""
    from tree_sitter import QueryCursor

    if strings is None:
        query = _strings_query(lang)
        if query is None:
            return []
        strings = QueryCursor(query).captures(root).get("s", [])
    found: dict[int, Site] = {}
    for node in sorted(strings, key=_START_BYTE):
        parent = node.parent  # read once: a node's parent is found from the root down
        if parent is not None and parent.type in STRING_TYPES:
            continue  # a string inside a string (Python's concatenation keeps its own node)
        # first: most strings feed no message (C's are mostly printk's)
        anchor = _site_of(source, node, parent)
        if anchor is None:
            continue
        parts = literal_parts(source, node)
        if not parts:
            continue
        site_node, kind = anchor
        site = found.get(site_node.start_byte)
        if site is None:
            if len(found) >= MAX_SITES:
                break
            line = site_node.start_point[0] + 1
            site = found[site_node.start_byte] = Site(
                line,
                site_node.end_point[0] + 1,
                kind,
                _scope(symbols, line),
                _raised_type(source, site_node) if kind == "raise" else "",
                _condition(source, site_node),
            )
        for part in parts:  # each once: a loop, as mypyc builds an `extend`'s generator before it extends
            if part not in site.parts:
                site.parts.append(part)
    return list(found.values())


def literal_parts(source: bytes, node: Node) -> list[str]:
    """A string literal's text between its interpolations and format placeholders, unescaped."""
    raw = bytearray(source[node.start_byte : node.end_byte])
    for child in reversed(node.children):
        if child.type in _HOLES:
            a, b = child.start_byte - node.start_byte, child.end_byte - node.start_byte
            raw[a:b] = b"\x00"
    text = _unquote(raw.decode("utf-8", "replace"))
    out = []
    for piece in _PLACEHOLDER.split(text):
        piece = " ".join(piece.split())
        if sum(c.isalnum() for c in piece) >= 3 and len(piece) >= PART_MIN:
            out.append(piece)
    return out


def _unquote(text: str) -> str:
    text = text.lstrip("rbfuRBFU@$")
    hashes = len(text) - len(text.lstrip("#"))  # Rust r#"..."#
    text = text[hashes : len(text) - hashes] if hashes else text
    for quote in ('"""', "'''", '"', "'", "`"):
        if len(text) >= 2 * len(quote) and text.startswith(quote) and text.endswith(quote):
            text = text[len(quote) : -len(quote)]
            break
    text = _CONTINUATION.sub("", text)  # Rust / Python `\` at a line end joins the next line
    return (
        text.replace("\\n", " ")
        .replace("\\t", " ")
        .replace('\\"', '"')
        .replace("\\'", "'")
        .replace("\\\\", "\\")
    )


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _callee(source: bytes, node: Node) -> str:
    for name in ("function", "constructor", "name", "type", "macro", "method"):
        child = node.child_by_field_name(name)
        if child is not None:
            return source[child.start_byte : child.end_byte].decode("utf-8", "replace")
    if node.type in ("attribute", "attribute_item") and node.named_children:  # #[error("...")]
        first = node.named_children[0]
        return source[first.start_byte : min(first.end_byte, first.start_byte + 40)].decode(
            "utf-8", "replace"
        )
    return ""


def _site_of(source: bytes, string: Node, parent: Node | None) -> tuple[Node, str] | None:
    """The raise/throw statement or the error/log call the string feeds (`parent`: the string's), and which
    kind it is."""
    best: tuple[Node, str] | None = None
    node = parent
    for _ in range(MAX_UP):
        if node is None:
            break
        kind = node.type  # read once: each read makes a new string
        if kind in _STOP_NODES:
            break
        if kind in _RAISE_NODES:
            return node, "raise"
        if kind in _RETURN_NODES and best is None and _PLACEHOLDER.search(_text(source, string)):
            best = (node, "message")  # a helper returning a formatted message (`return String.format(...)`)
        if kind in _CALL_NODES and best is None:
            best = _call_kind(source, node)
        elif kind in _ASSIGN_NODES and best is None:
            target = node.child_by_field_name("left") or node.child_by_field_name("name")
            text = source[target.start_byte : target.end_byte].decode("utf-8", "replace") if target else ""
            if _MESSAGE_NAME.search(text.strip()):
                best = (node, "message")
        node = node.parent
    return best


def _call_kind(source: bytes, node: Node) -> tuple[Node, str] | None:
    callee = _callee(source, node)
    kind = _known_callee_kind(callee) if len(callee) <= CALLEE_CACHED else _callee_kind(callee)
    return (node, kind) if kind else None


def _callee_kind(callee: str) -> str:
    """What a call of `callee` is to a string among its arguments: raise, error, log, or "" (none of them)."""
    m = _LAST_NAME.search(callee.split("(")[0].split("<")[0])
    last = m.group(1) if m else ""
    if last.lower() in _RAISE_CALLS:
        return "raise"
    if _ERRORISH.search(callee) or _ERRORISH.search(last):
        return "error"
    if last.lower() in _LOG_CALLS:
        return "log"
    return ""


# most of the kernel's strings sit in calls of a few thousand names (`pr_err`, `dev_warn`, a table's
# macro), each one's kind decided once per process
_known_callee_kind = lru_cache(maxsize=1 << 14)(_callee_kind)


def _raised_type(source: bytes, node: Node) -> str:
    """`ImproperlyConfigured` of `raise ImproperlyConfigured(...)`, `Error` of `throw new Error(...)`."""
    text = source[node.start_byte : min(node.end_byte, node.start_byte + 200)].decode("utf-8", "replace")
    m = re.match(r"(?:raise|throw|fail)\s+(?:new\s+)?([A-Za-z_][\w.:]*)", text)
    return m.group(1).rsplit(".", 1)[-1].rsplit("::", 1)[-1] if m else ""


def _condition(source: bytes, node: Node) -> str:
    parent = node.parent
    for _ in range(6):
        if parent is None or parent.type in _STOP_NODES - {"block", "statement_block", "body_statement"}:
            return ""
        if parent.type in _IF_NODES:
            cond = parent.child_by_field_name("condition")
            if cond is None:
                return ""
            text = source[cond.start_byte : cond.end_byte].decode("utf-8", "replace")
            return " ".join(text.split())[:CODE_MAX]
        parent = parent.parent
    return ""


def _scope(symbols: list, line: int) -> str:
    best = None
    for s in symbols:
        if s.line <= line <= s.end_line and (best is None or s.line >= best.line):
            best = s
    return best.qualname if best is not None else ""


SEPARATOR = "\x1f"


def store(conn, file_id: int, found: list[Site]) -> None:
    """Replace a file's sites (the caller deleted the old rows) and their full-text rows."""
    for site in found:
        parts = SEPARATOR.join(site.parts)
        cur = conn.execute(
            "INSERT INTO sites(file_id, line, end_line, kind, scope, exc, cond, parts) VALUES (?,?,?,?,?,?,?,?)",
            (file_id, site.line, site.end_line, site.kind, site.scope, site.exc, site.cond, parts),
        )
        conn.execute(
            "INSERT INTO site_text(rowid, parts) VALUES (?, ?)", (cur.lastrowid, " ".join(site.parts))
        )
