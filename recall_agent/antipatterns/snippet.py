"""Code inside a question: `recall --scope antipatterns "def f(x, acc=[]): ..."` is code, not prose.

`code_in(text)` finds the code (a fenced block, `backticks`, the whole question, or else the longest run
of words that is code: `httpx.get(url, verify=False) in the sync job`), and guesses its language from
what parses: Python by `ast`, JavaScript/TypeScript by tree-sitter without errors, Dockerfile, SQL and
shell command lines by their leading words. A snippet both Python and JavaScript accept with nothing
telling them apart (`exec(user_code)`) is checked as both. Prose never parses as either with a call or an
assignment in it, so ordinary questions stay prose. A fragment found among words is marked `fragment`:
checks that judge a whole file (no `USER` line anywhere) do not run on it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_SNIPPET = 20_000
_TICKS = re.compile(r"`([^`\n]+)`")
_JS_MARKS = re.compile(
    r"\b(const|let|var|function|require|document|window|await|new Promise)\b|=>|===|!==|\$\{"
)
_TS_MARKS = re.compile(r":\s*(string|number|boolean|any|unknown)\b|\binterface\s+\w+|\bas\s+any\b|<\w+>\(")
_PY_MARKS = re.compile(r"\b(def|import|elif|None|True|False|self|lambda)\b|:[ \t]*$", re.MULTILINE)
_DOCKERFILE = re.compile(r"\A[ \t]*FROM[ \t]+\S")
_DOCKER_STEP = re.compile(r"^[ \t]*(RUN|COPY|ADD|CMD|ENTRYPOINT|USER)\b", re.MULTILINE)
_SQL = re.compile(
    r"^\s*(SELECT|UPDATE|DELETE|INSERT|CREATE|ALTER|DROP|GRANT)\b[^;]*\b(FROM|SET|INTO|TABLE|INDEX|ON|TO)\b"
)
# a command line: a common command first, then options, paths, pipes or variables
_SHELL = re.compile(
    r"(?:#!/\S+\n|\$ )?(?:sudo )?(?:curl|wget|rm|chmod|chown|cd|eval|export|bash|sh|ls|cat|echo|for|if|mkdir|cp|mv"
    r"|tar|find|xargs|apt-get|apt|pip|npm|docker|git|set|source|ssh|scp|sed|awk|grep) [^\n]*[-$|/>&;=\"']"
)
# nodes that make a parse "code": a bare name or constant ("yaml", "not found") is prose
_PY_CODE = (
    ast.Call,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Import,
    ast.ImportFrom,
    ast.With,
    ast.For,
    ast.While,
    ast.Try,
    ast.Subscript,
    ast.If,
    ast.Assert,
    ast.Raise,
)
_JS_CODE = {
    "call_expression",
    "assignment_expression",
    "variable_declarator",
    "function_declaration",
    "arrow_function",
    "import_statement",
    "new_expression",
    "try_statement",
    "if_statement",
}


@dataclass(frozen=True)
class Snippet:
    code: str
    kinds: tuple[str, ...]  # file kinds to check it as, best guess first
    fragment: bool = False  # found among words: a piece of a file, not a whole one


def code_in(text: str) -> Snippet | None:
    """The code a question carries and its likely language(s); None for a question in words."""
    # the whole question before `spans`: a JavaScript template literal is code, not a quote
    # a line led by a shell command or an SQL verb may go on in words: the fragment search trims them
    led_by_words: Snippet | None = None
    for raw in [*_fenced(text), text, *(m.group(1) for m in _TICKS.finditer(text))]:
        code = _dedent(raw)[:MAX_SNIPPET]
        kinds = guess_kinds(code)
        if kinds and raw is text and kinds[0] in ("shell", "sql"):
            led_by_words = Snippet(code, kinds)
        elif kinds:
            return Snippet(code, kinds)
    from recall_agent.antipatterns.fragments import fragment_in

    found = fragment_in(text)
    if found:
        return Snippet(found[0], found[1], fragment=found[0] != " ".join(text.split()))
    return led_by_words


def _fenced(text: str) -> list[str]:
    """Bodies of ``` fenced blocks (the language tag after the opening fence dropped); split, not a regex."""
    parts = text.split("```")
    blocks = parts[1:-1:2] if len(parts) >= 3 else []
    out = []
    for block in blocks:
        first, _, rest = block.partition("\n")
        out.append(rest if first.strip().isidentifier() or not first.strip() else block)
    return out


def _dedent(code: str) -> str:
    import textwrap

    return textwrap.dedent(code.strip("\n")).strip()


def guess_kinds(code: str) -> tuple[str, ...]:
    if not code or len(code) < 4:
        return ()
    if _DOCKERFILE.match(code) and _DOCKER_STEP.search(code):
        return ("dockerfile",)
    if _SQL.match(code):
        return ("sql",)
    if _SHELL.match(code) and not code.rstrip().endswith("?"):
        return ("shell",)
    return guess_script_kinds(code)


def guess_script_kinds(code: str, *, fragment: bool = False) -> tuple[str, ...]:
    """python and/or javascript/typescript, by what parses; a `fragment` (words around it) must do more
    than annotate a name (`note: this` parses as Python)."""
    python = _is_python(code, fragment)
    script = _script_kind(code)
    if python and script:
        js, py = bool(_JS_MARKS.search(code) or _TS_MARKS.search(code)), bool(_PY_MARKS.search(code))
        if js != py:
            return (script,) if js else ("python",)
        return ("python", script)
    if python:
        return ("python",)
    return (script,) if script else ()


def _is_python(code: str, fragment: bool = False) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, _PY_CODE)
        and not (fragment and isinstance(node, ast.AnnAssign) and node.value is None)
        for node in ast.walk(tree)
    )


def _script_kind(code: str) -> str | None:
    """javascript or typescript when tree-sitter parses the code without errors and it does something."""
    from recall_agent.antipatterns.source import ScanContext

    for kind in ("javascript", "typescript"):
        root = ScanContext(code, kind).ts_tree(kind).root_node
        if not root.has_error and _has_js_code(root):
            return "typescript" if kind == "javascript" and _TS_MARKS.search(code) else kind
    return None


def _has_js_code(root: object) -> bool:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _JS_CODE:  # type: ignore[attr-defined]
            return True
        stack.extend(node.children)  # type: ignore[attr-defined]
    return False
