"""Parse a /recall argument line and build the two backend payloads exactly as the seed does.

Options come first; the first word that is not an option starts the query and everything from there on is
query text (an error message may contain words that look like flags). `--` ends the options explicitly.
A leading word shaped like an option (`--name`, `-x`) that recall does not know is an error (exit 2); other
words starting with a dash (`--- FAIL:`, `-bash:`) simply start the query.
Payloads are plain dicts: this module is on the cold path and must not import pydantic or httpx.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from recall_agent.protocol import (
    DEFAULT_MAX_RESULTS,
    ERROR_TEXT_MAX,
    MAX_RESULTS_RANGE,
    REPO_MAX,
    TaskType,
)

SCOPES = ("learnings", "architecture", "antipatterns", "all")
FORMATS = ("markdown", "json")
TASK_TYPES = tuple(t.value for t in TaskType)
MAX_RESULTS_DEFAULT = DEFAULT_MAX_RESULTS

# options that take a value -> attribute on Args
VALUE_OPTIONS = {
    "--scope": "scope",
    "--repo": "repo",
    "--type": "task_type",
    "--format": "format",
    "--max-results": "max_results",
    "--session": "session",
}
FLAG_OPTIONS = {"--stdin": "stdin", "--help": "help", "-h": "help", "--version": "version"}

SCOPE_FORCE_BACKENDS = {"architecture": ["repowise"], "antipatterns": ["qdrant"]}

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class UsageError(Exception):
    """Bad command line: shown as one line on stderr, exit 2."""


@dataclass
class Args:
    scope: str = "all"
    repo: str | None = None
    task_type: str | None = None
    format: str = "markdown"
    max_results: int = MAX_RESULTS_DEFAULT
    session: str | None = None
    stdin: bool = False
    help: bool = False
    version: bool = False
    query: str = ""
    seen: set[str] = field(default_factory=set)


def clean_text(text: str) -> str:
    """Make argv/stdin text safe to send: undecodable bytes -> U+FFFD, control characters dropped."""
    # argv holds undecodable bytes as lone surrogates (surrogateescape); JSON/UTF-8 cannot carry them
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    text = raw.decode("utf-8", "replace")
    return _CONTROL.sub("", _ANSI.sub("", text))


def decisive_error(text: str, limit: int = ERROR_TEXT_MAX) -> str:
    """Error text that fits the wire: text over `limit` keeps its decisive error lines, never a blind cut."""
    if len(text) <= limit:
        return text
    from recall_agent.learnings.extract import decisive  # stdlib only; loaded only for long input

    return decisive(text, limit)


def cut(text: str, limit: int = ERROR_TEXT_MAX) -> str:
    """Cut to `limit` characters (code points, so never inside a UTF-8 sequence)."""
    return text if len(text) <= limit else text[:limit]


def _set_value(args: Args, option: str, value: str) -> None:
    attr = VALUE_OPTIONS[option]
    if attr == "scope" and value not in SCOPES:
        raise UsageError(f"unknown scope {value!r}; choose one of: {', '.join(SCOPES)}")
    if attr == "format" and value not in FORMATS:
        raise UsageError(f"unknown format {value!r}; choose one of: {', '.join(FORMATS)}")
    if attr == "task_type" and value not in TASK_TYPES:
        raise UsageError(f"unknown task type {value!r}; choose one of: {', '.join(TASK_TYPES)}")
    if attr == "repo" and not 1 <= len(value) <= REPO_MAX:
        raise UsageError(f"--repo must be 1-{REPO_MAX} characters")
    if attr == "max_results":
        low, high = MAX_RESULTS_RANGE
        if not value.isdigit() or not low <= int(value) <= high:
            raise UsageError(f"--max-results must be a whole number from {low} to {high}, got {value!r}")
        setattr(args, attr, int(value))
    else:
        setattr(args, attr, value)
    args.seen.add(attr)


def _option(token: str) -> tuple[str, str | None]:
    name, eq, value = token.partition("=")
    return (name, value) if eq and name.startswith("--") else (token, None)


def parse_tokens(tokens: list[str], args: Args | None = None) -> tuple[Args, list[str]]:
    """Consume leading options from `tokens`; return the args and the remaining (query) tokens."""
    args = args or Args()
    i = 0
    while i < len(tokens):
        name, inline = _option(tokens[i])
        if name == "--":
            return args, tokens[i + 1 :]
        if name in FLAG_OPTIONS and inline is None:
            setattr(args, FLAG_OPTIONS[name], True)
            i += 1
        elif name in VALUE_OPTIONS:
            if inline is None:
                if i + 1 >= len(tokens):
                    raise UsageError(f"option {name} needs a value")
                inline, i = tokens[i + 1], i + 1
            _set_value(args, name, inline)
            i += 1
        elif _OPTION_SHAPED.fullmatch(name):
            raise UsageError(
                f"unknown option {name!r} (see recall --help); to search for text starting with '-', "
                f"put -- before it"
            )
        else:
            return args, tokens[i:]
    return args, []


def parse_argv(argv: list[str]) -> Args:
    """Parse the command line (strings from sys.argv; undecodable bytes arrive as surrogates)."""
    args, rest = parse_tokens([clean_text(a) for a in argv])
    args.query = " ".join(rest).strip()
    return args


# only words shaped like options are taken as (unknown) options; "--- FAIL: TestX", "-bash: x: not found"
# and "-1" start a query instead
_OPTION_SHAPED = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*|-[A-Za-z]")
_LEADING_TOKEN = re.compile(r"(\S+)")  # searched from a position: the next word after whitespace


def parse_argument_line(line: str, args: Args) -> Args:
    """Parse a raw argument line (from --stdin): leading options as words, the rest kept verbatim.

    The rest keeps its newlines and quotes, so a pasted traceback arrives as it was written.
    """
    line = clean_text(line)
    pos = 0
    while True:
        match = _LEADING_TOKEN.search(line, pos)
        if not match:
            args.query = ""
            return args
        name, inline = _option(match.group(1))
        if name == "--":
            args.query = line[match.end() :].strip()
            return args
        if name in VALUE_OPTIONS and inline is None:
            value = _LEADING_TOKEN.search(line, match.end())
            if not value:
                raise UsageError(f"option {name} needs a value")
            _set_value(args, name, _unquote(value.group(1)))
            pos = value.end()
        elif name in VALUE_OPTIONS or (name in FLAG_OPTIONS and name != "--stdin"):
            parse_tokens([match.group(1)], args)
            pos = match.end()
        elif _OPTION_SHAPED.fullmatch(name):
            parse_tokens([name], args)  # raises the unknown-option error
        else:
            args.query = line[match.start(1) :].strip()
            return args


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def learnings_payload(args: Args, current_repo: str, error_text: str) -> dict:
    """The seed's learnings payload. `--repo` is the repo filter; its default is the current repo."""
    repo = args.repo or current_repo
    if error_text:
        payload: dict = {
            "match_type": "error_signature",
            "error_text": decisive_error(error_text),
            "repo": repo,
        }
    elif args.repo or args.task_type:
        payload = {"match_type": "task_context", "repo": repo, "task_type": args.task_type}
    else:
        payload = {"match_type": "auto", "repo": repo}
    payload["max_results"] = args.max_results
    return payload


def federation_payload(scope: str, query_text: str) -> dict | None:
    """The seed's federation payload, or None when there is nothing to ask (the wire needs a query)."""
    if not query_text.strip():
        return None
    payload: dict = {"query": cut(query_text)}
    if scope in SCOPE_FORCE_BACKENDS:
        payload["force_backends"] = list(SCOPE_FORCE_BACKENDS[scope])
    return payload


def build_payloads(args: Args, current_repo: str, error_text: str) -> dict[str, dict | None]:
    """Both payloads for the scope; a backend outside the scope maps to None and is not queried."""
    payloads: dict[str, dict | None] = {}
    if args.scope in ("learnings", "all"):
        payloads["learnings"] = learnings_payload(args, current_repo, error_text)
    if args.scope in ("architecture", "antipatterns", "all"):
        payloads["federation"] = federation_payload(args.scope, error_text)
    return payloads
