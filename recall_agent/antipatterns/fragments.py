"""Code written among words: `httpx.get(url, verify=False) in the sync job`, `rm -rf $DIR/* in cleanup`.

`fragment_in(text)` finds the run of words that is code and the file kind to check it as, or None:

- a Dockerfile instruction in capitals with code-like arguments (`FROM python:latest`, `ADD https://…`),
  each up to the words that close it (`in`, `on`, `and then`, a comma), several becoming lines;
- an SQL statement led by its verb in capitals (`SELECT`, `UPDATE`, …, or a `WHERE` clause), as long as
  its words read as SQL (keywords, operators, names right after a keyword);
- a Python or JavaScript/TypeScript span: the run of words that parses (with a body added after a
  trailing `:` or a lone `if (…)`, a `try` before a lone `except`/`catch`) and holds the most code-like
  words;
- a shell command line led by a common command with an option, path or variable next, up to the clause's
  last code-like word, split into lines at `; `.

Only questions of up to MAX_WORDS words are searched; every loop is bounded by that, and no regex here
backtracks.
"""

from __future__ import annotations

import re

MAX_WORDS = 60
MAX_SPAN = 40  # words in one fragment
MAX_PARSES = 60  # spans tried as Python/JavaScript per question
_CODE_CHARS = frozenset("()[]{}=<>;:$'\"`*/|&!_")
_TRAILING = ",?!"
_PY_KEYWORDS = frozenset(
    {"def", "class", "for", "if", "while", "try", "except", "from", "import", "with", "return", "async"}
    | {"await", "assert", "raise", "lambda", "del", "pass", "True", "False", "None", "yield"}
)
_JS_KEYWORDS = frozenset({"const", "let", "var", "function", "catch", "new", "await", "if", "for", "return"})
_SCRIPT_STARTS = _PY_KEYWORDS | _JS_KEYWORDS
_DOCKER_OPS = frozenset(
    {"FROM", "RUN", "COPY", "ADD", "ENV", "ARG", "USER", "WORKDIR", "EXPOSE", "CMD", "ENTRYPOINT", "LABEL"}
    | {"HEALTHCHECK", "VOLUME"}
)
_DOCKER_STOPS = frozenset(
    {"in", "on", "for", "so", "because", "when", "where", "which", "but", "and", "then"}
)
_SQL_VERBS = frozenset({"SELECT", "UPDATE", "DELETE", "INSERT", "CREATE", "ALTER", "DROP", "GRANT", "WHERE"})
_SQL_KEYWORDS = frozenset(
    {"SELECT", "UPDATE", "DELETE", "INSERT", "CREATE", "ALTER", "DROP", "GRANT", "WHERE", "FROM", "SET"}
    | {"INTO", "VALUES", "TABLE", "INDEX", "ON", "TO", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "JOIN"}
    | {"LEFT", "RIGHT", "INNER", "OUTER", "ORDER", "GROUP", "BY", "LIMIT", "OFFSET", "HAVING", "AS", "ALL"}
    | {"DISTINCT", "PRIVILEGES", "DATABASE", "UNIQUE", "CONCURRENTLY", "EXISTS", "DESC", "ASC", "RETURNING"}
)
_SHELL_COMMANDS = frozenset(
    {"curl", "wget", "rm", "chmod", "chown", "cd", "eval", "export", "bash", "sh", "mkdir", "cp", "mv"}
    | {"tar", "find", "xargs", "sudo", "ssh", "scp", "sed", "awk", "grep", "for", "if", "source", "cat"}
)
_SHELL_WORDS = frozenset({"do", "done", "then", "fi", "esac", "bash", "sh", "zsh", "sudo"})
_CLAUSE_BREAKS = frozenset(
    {"the", "our", "my", "your", "their", "when", "because", "so", "which", "where", "since", "but", "and"}
    | {"every", "each", "while", "after", "before", "is", "are", "was"}
)
_SQL_OPERATORS = frozenset({"=", "<", ">", "<=", ">=", "<>", "!=", "+", "-", "*", "/", "||"})
_NUMBER = re.compile(r"[0-9][0-9.]*")
Found = tuple[int, str, tuple[str, ...]]  # (first word, code, file kinds)


def fragment_in(text: str) -> tuple[str, tuple[str, ...]] | None:
    """The code among the words of a question and the file kinds to check it as; None if there is none."""
    words = text.split()
    if not 2 <= len(words) <= MAX_WORDS:
        return None
    found = [f for f in (_sql(words), _dockerfile(words), _script(words), _shell(words)) if f]
    if not found:
        return None
    _, code, kinds = min(found, key=lambda f: f[0])  # the code the question starts with; ties: this order
    return code, kinds


def _trim(word: str) -> str:
    return word.rstrip(_TRAILING) or word


def _code_like(word: str) -> bool:
    w = _trim(word)
    if w in _PY_KEYWORDS or _NUMBER.fullmatch(w):
        return True
    if any(c in _CODE_CHARS for c in w):
        return True
    return "." in w.strip(".") or w == "."  # `os.path`, `COPY . /app`; not a full stop


# --------------------------------------------------------------------------- Dockerfile


def _dockerfile(words: list[str]) -> Found | None:
    lines: list[str] = []
    first = -1
    i = 0
    while i < len(words):
        if words[i] not in _DOCKER_OPS:
            i += 1
            continue
        args: list[str] = []
        j = i + 1
        while j < len(words) and words[j] not in _DOCKER_OPS and words[j] not in _DOCKER_STOPS:
            args.append(_trim(words[j]))
            j += 1
            if words[j - 1].endswith(","):
                break
        if args and (words[i] == "RUN" or any(_code_like(a) or "-" in a for a in args)):
            lines.append(" ".join([words[i], *args]))
            first = i if first < 0 else first
        i = j
    return (first, "\n".join(lines), ("dockerfile",)) if lines else None


# --------------------------------------------------------------------------- SQL


def _sql_word(words: list[str], k: int) -> bool:
    w = _trim(words[k])
    if w in _SQL_KEYWORDS or _NUMBER.fullmatch(w) or not w.isalpha():
        return True
    before = words[k - 1]
    if before in _SQL_KEYWORDS or before in _SQL_OPERATORS or before.endswith(("(", ",")):
        return True  # a name right after a keyword, an operator or a comma
    after = words[k + 1] if k + 1 < len(words) else ""
    return after in _SQL_KEYWORDS  # an alias: `customers c WHERE`


def _sql(words: list[str]) -> Found | None:
    for i, word in enumerate(words):
        if word not in _SQL_VERBS:
            continue
        j = i + 1
        while j < len(words) and j - i < MAX_SPAN and _sql_word(words, j):
            j += 1
        if j - i >= 3:
            return i, " ".join(_trim(w) for w in words[i:j]), ("sql",)
    return None


# --------------------------------------------------------------------------- Python / JavaScript


def _script(words: list[str]) -> Found | None:
    best: tuple[int, int, int, str, tuple[str, ...]] | None = None  # (code words, length, start, code, kinds)
    budget = MAX_PARSES
    for i in range(len(words)):
        starts = _code_like(words[i]) or words[i] in _SCRIPT_STARTS
        if not starts and not (i + 1 < len(words) and words[i + 1].startswith("=")):
            continue
        for j in range(min(len(words), i + MAX_SPAN), i, -1):
            if not _code_like(words[j - 1]):
                continue
            span = [*words[i : j - 1], _trim(words[j - 1])]
            score = sum(_code_like(w) for w in span)
            if best is not None and (score, len(span)) <= best[:2]:
                continue
            code = " ".join(span)
            if not _balanced(code):
                continue
            budget -= 1
            if budget < 0:
                return best[2:] if best else None
            found = _parses(code)
            if found:
                best = (score, len(span), i, *found)
    return best[2:] if best else None


def _balanced(code: str) -> bool:
    """Brackets that close in order (quotes ignored): a span cutting through a call cannot parse."""
    closing = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for c in code:
        if c in "([{":
            stack.append(c)
        elif c in closing and (not stack or stack.pop() != closing[c]):
            return False
    return not stack


def _parses(code: str) -> tuple[str, tuple[str, ...]] | None:
    from recall_agent.antipatterns.snippet import guess_script_kinds

    for candidate in _repairs(code):
        kinds = guess_script_kinds(candidate, fragment=True)
        if kinds:
            return candidate, kinds
    return None


def _repairs(code: str) -> list[str]:
    """The span as written, then with what a fragment leaves out: a body, or the `try` its handler needs."""
    out = [code]
    if code.endswith(":"):
        out.append(code + " pass")
    if code.startswith("except") or code.startswith("finally"):
        body = code + (" pass" if code.endswith(":") else "")
        out.append("try:\n    pass\n" + body)
    if code.startswith("catch"):
        out.append("try {} " + code)
    if code.startswith("if (") and code.endswith(")"):
        out.append(code + " {}")
    return out


# --------------------------------------------------------------------------- shell


def _shell_start(words: list[str], i: int) -> bool:
    if words[i] not in _SHELL_COMMANDS or i + 1 >= len(words):
        return False
    nxt = words[i + 1]
    if words[i] == "for":  # `for f in $(ls)`, not `{% for o in orders %}`
        return i + 3 < len(words) and words[i + 2] == "in" and any(c in words[i + 3] for c in "$`*")
    return nxt[:1] in "-$/\"'[~." or "/" in nxt or "=" in nxt


def _shell(words: list[str]) -> Found | None:
    for i in range(len(words)):
        if not _shell_start(words, i):
            continue
        end = i + 1
        for j in range(i + 1, min(len(words), i + MAX_SPAN)):
            if words[j] in _CLAUSE_BREAKS:
                break
            if _shell_like(words[j]) or words[j - 1].endswith((";", "|", "&&")):  # or the next command
                end = j + 1
        span = [*words[i : end - 1], _trim(words[end - 1]).rstrip(";")]
        return i, " ".join(span).replace("; ", "\n"), ("shell",)
    return None


def _shell_like(word: str) -> bool:
    w = _trim(word)
    return any(c in _CODE_CHARS for c in w) or w in _SHELL_WORDS or w[:1] == "-" or "." in w.strip(".")
