"""Error-signature normalization and fingerprinting: keep what identifies the cause, fold the instance.

`normalize(text)` turns raw tool output into a short, stable signature of a few lines:

1. Clean: ANSI colour/charset codes, carriage-return progress redraws, CI log prefixes (ISO/syslog
   timestamps, host + PID, log levels) are removed; whitespace is collapsed.
2. Select the *cause lines*: for Python, every exception line of the (possibly chained) traceback plus up to
   two continuation lines of its message (plain tracebacks, pytest `E` lines and the `FAILED ... - X: msg`
   summary all give the same lines); for other tools (pytest usage errors, mypy/ruff/tsc/eslint/gcc/rustc
   diagnostics, pip/npm/cargo/go, git, shells, HTTP and database clients) the lines that say what went
   wrong, without locations, source excerpts, hints, notes, progress and summaries.
3. Fold instance values (Sentry's placeholders): paths become their basename, and `<url>`, `<email>`,
   `<uuid>`, `<sha>`, `<hex>`, `<ip>`, `<date>`, `<time>`, `<duration>`, `<version>`, `<float>`, `<int>`,
   `<tmp>` replace the values; unquoted and quoted values right after `=` become `<value>`. Quoted names
   (the missing module, the key, the attribute) are kept: they *are* the cause. HTTP status codes and errno
   numbers are kept.
4. Add the innermost application frame (`at <module>`) as context.

`fingerprint(text)` hashes the cause lines only, so the same error raised from another checkout, line,
runner or colour setting gets the same fingerprint. When the cause lines are *generic* (no quoted name,
identifier or code in them, e.g. `IndexError: list index out of range`), the innermost frame is hashed too:
otherwise every IndexError anywhere would look like the same problem (Sentry's over-grouping failure).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from recall_agent.learnings.extract import WRAPPER_LINE, clean

NORMALIZER_VERSION = 7
MAX_CAUSE_LINES = 6
MAX_CONTEXT_LINES = 4
MAX_LINE = 300

# --------------------------------------------------------------------------- folding instance values

_PROTECT = [
    re.compile(r"\bHTTP Error \d{3}\b"),
    re.compile(r"\b[1-5]\d\d (?:[A-Z][a-z]+|OK)(?: [A-Z][a-z]+)*\b"),  # 404 Not Found
    re.compile(r"\bstatus(?: code)?[ :=]+[1-5]\d\d\b", re.IGNORECASE),
    re.compile(r"\[Errno \d+\]"),
    re.compile(r"\berrno[ :=]+\d+\b", re.IGNORECASE),
    re.compile(r"\b[A-Z]{1,4}\d{3,5}\b"),  # error codes: E0382, F401, TS2345, C4996
    # a shared library's soname (libgthread-2.0.so.0): its version says which library (libssl.so.1.1 is
    # not libssl.so.3)
    re.compile(r"(?<![/\\])\blib[\w+-]{1,60}(?:\.\d{1,4}){0,3}\.so(?:\.\d{1,4}){1,4}\b"),
    re.compile(r"\bGLIBC(?:XX)?_\d{1,2}(?:\.\d{1,3}){1,3}\b"),  # the symbol version a binary needs
]
# (pattern, placeholder, cheap pre-check: the pattern can only match if this returns True)
_FOLDS: list[tuple[re.Pattern[str], str, Callable[[str], bool]]] = [
    (
        re.compile(r"(?<![a-z0-9+.-])([0-9+.-]*)\b[a-z][a-z0-9+.-]*://[^\s'\"<>)\]]+"),
        r"\1<url>",
        lambda s: "://" in s,
    ),
    # the run's leading punctuation is kept (group 1); the lookbehind tries each run once (linear time)
    # an email needs a dotted domain ending in letters (`user@host.io`), so `pkg@1.2.3` stays a version
    (
        re.compile(r"(?<![\w.+-])([.+-]*)\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b"),
        r"\1<email>",
        lambda s: "@" in s,
    ),
    (
        re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
        "<uuid>",
        lambda s: "-" in s,
    ),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>", lambda s: "0x" in s),
    (re.compile(r"\b[0-9a-f]{40}\b|\b[0-9a-f]{64}\b"), "<sha>", lambda s: len(s) >= 40),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
        "<date>",
        lambda s: "-" in s,
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>", lambda s: ":" in s),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"), "<ip>", lambda s: "." in s),
    (
        re.compile(
            r"(?<![\w.-])([.-]*)\b(?:localhost|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|local|internal))(?::\d+)\b"
        ),
        r"\1<host>",
        lambda s: ":" in s,
    ),
    (
        re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|secs|minutes|min|µs|us|ns)\b"),
        "<duration>",
        lambda s: True,
    ),
    (re.compile(r"\bv?\d+\.\d+\.\d+(?:[-+.][\w.]+)?\b"), "<version>", lambda s: "." in s),
]
_TEMP_NAMES = re.compile(
    r"\b(?:tmp[\w-]{5,}|cc\w{6}\.o|pytest-\d+|pytest-of-\w+|\w+-[a-z0-9_]{8}(?=/)|[0-9a-f]{12,})\b"
)
# a path: absolute, ~/ or ./ relative, drive letter, or word/word with at least one slash
_PATH = re.compile(
    r"(?<![\w<>/.:@+\\-])(?:[A-Za-z]:[\\/]|~[\\/]|\.{1,2}[\\/]|[\\/])?(?:[\w.@+-]+[\\/])+([\w.@+-]+)(?![\w/\\])"
)
_ASSIGN_QUOTED = re.compile(r"""(=)\s?(['"])(?:(?!\2).){0,200}\2""")
# unquoted values after `=` are folded when they carry digits (pid=42, --cov=main_68, ==2.1); bare words
# such as type=int_parsing usually name the cause and stay
_ASSIGN_BARE = re.compile(r"(?<=[\w\]=-])=(?=[^\s,'\")\]=]*\d)([^\s,'\")\]=]+)")
_DATA_LITERAL = re.compile(
    r"((?:invalid literal for \w+\(\) with base \d+|could not convert string to \w+|"
    r"invalid decimal literal|Invalid isoformat string)):\s*(['\"]).*?\2"
)
_QUOTED_ROOT_DIR = re.compile(r"""(['"])/[\w.-]+/?\1""")
_DOCKER_ENDPOINT = re.compile(r"\bendpoint [\w.-]+")
_GO_PACKAGE = re.compile(r"providing package \S+ \(imported by \S+\)")
_GIT_REMOTE = re.compile(r"(failed to push some refs to|repository|from|to) '[^']*[/:][^']*'")
# a branch named in git's own messages is the instance, not the cause (`The current branch feat-a has no
# upstream branch` is the same error on every branch); folded before paths (`feat/x` is no path)
_GIT_BRANCH_SLOTS = [
    (re.compile(r"\b(The current branch) \S{1,250} (has no upstream branch)"), r"\1 <branch> \2"),
    (re.compile(r"(git push (?:--set-upstream|-u)) \S{1,250} \S{1,250}"), r"\1 <remote> <branch>"),
    (re.compile(r"(\[(?:rejected|new branch)\]\s+)\S{1,250} -> \S{1,250}"), r"\1<branch> -> <branch>"),
    (re.compile(r"\b(src refspec) \S{1,250} (does not match any)"), r"\1 <branch> \2"),
    (re.compile(r"\b(couldn't find remote ref) \S{1,250}"), r"\1 <branch>"),
    (
        re.compile(r"\b(Your branch (?:is (?:ahead of|behind|up to date with)|and) )'[^']{1,250}'"),
        r"\1'<branch>'",
    ),
    (re.compile(r"\b([Aa] branch named )'[^']{1,250}'( already exists)"), r"\1'<branch>'\2"),
    (re.compile(r"\b(branch )'[^']{1,250}'( set up to track| not found)"), r"\1'<branch>'\2"),
    (
        re.compile(
            r"(?:'[^']{1,250}' )?(is already checked out at|is already used by worktree at) '[^']{1,500}'"
        ),
        r"'<branch>' \1 '<dir>'",
    ),
]
_GIT_BRANCH_HINT = re.compile(r"branch|refspec|remote ref|git push|checked out|worktree at|\[rejected\]")
_HAS_DIGIT = re.compile(r"\d")
_FLOAT = re.compile(r"(?<![\w<.])\d+\.\d+(?![\w>.])")
_INT = re.compile(r"(?<![\w<])\d+(?![\w>])")


def fold(line: str) -> str:
    """Replace instance values in one cleaned line by placeholders (cause-bearing values are kept)."""
    kept: list[str] = []

    def protect(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\x00{_letters(len(kept) - 1)}\x00"  # no digits: the number folds must not touch it

    if _GIT_BRANCH_HINT.search(line):
        for rx, slot in _GIT_BRANCH_SLOTS:
            line = rx.sub(slot, line)
    digits = _HAS_DIGIT.search(line) is not None
    if digits:
        for rx in _PROTECT:
            line = rx.sub(protect, line)
        for rx, placeholder, maybe in _FOLDS:
            if maybe(line):
                line = rx.sub(placeholder, line)
    elif "://" in line or "@" in line:
        for rx, placeholder, _ in _FOLDS[:2]:
            line = rx.sub(placeholder, line)
    if "literal" in line or "convert" in line or "isoformat" in line:
        line = _DATA_LITERAL.sub(r"\1: <value>", line)
    if "=" in line:
        line = _ASSIGN_QUOTED.sub(r"\1<value>", line)
        line = _ASSIGN_BARE.sub("=<value>", line)
    if "providing package" in line:
        line = _GO_PACKAGE.sub("providing package <pkg> (imported by <pkg>)", line)
    if "endpoint " in line:
        line = _DOCKER_ENDPOINT.sub("endpoint <name>", line)
    if "/" in line or "\\" in line:
        line = _QUOTED_ROOT_DIR.sub(r"\1<dir>\1", line)
        line = _GIT_REMOTE.sub(r"\1 '<remote>'", line)
        line = _PATH.sub(_fold_path, line)
    line = _TEMP_NAMES.sub("<tmp>", line)
    if digits:
        line = _FLOAT.sub("<float>", line)
        line = _INT.sub("<int>", line)
    if kept:
        line = re.sub(r"\x00([A-Z]+)\x00", lambda m: kept[_unletters(m.group(1))], line)
    return " ".join(line.split())[:MAX_LINE]


def _fold_path(m: re.Match[str]) -> str:
    """A path becomes its basename; an absolute path to a directory (no extension) becomes <dir>."""
    path = m.group(0)
    base = _basename(path)
    absolute = path.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:[\\/]", path)
    return "<dir>" if absolute and "." not in base.lstrip(".") else base


def _letters(n: int) -> str:
    out = ""
    while True:
        out = chr(65 + n % 26) + out
        n = n // 26 - 1
        if n < 0:
            return out


def _unletters(text: str) -> int:
    n = 0
    for ch in text:
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("/\\"))[-1]


# --------------------------------------------------------------------------- python tracebacks

_PY_EXC = re.compile(
    r"^(?:E\s+)?(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Failure|Fault)"
    r"|KeyError|StopIteration|StopAsyncIteration|GeneratorExit|ExceptionGroup|BaseExceptionGroup|Failed))"
    r"(?::\s?(?P<msg>.*))?$"
)
_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>\S+)')
_PYTEST_LOC = re.compile(r"^(?P<path>[^\s:]+\.py):\d+:(?: in (?P<func>\S+)| (?P<type>[A-Z]\w*))?$")
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) \S+ - (?P<rest>.+)$")
# Python 3.10+ appends a suggestion that pytest's report leaves out: a hint, not the cause
_DID_YOU_MEAN = re.compile(r"\.? Did you mean: .{1,120}\?$")
_PY_WARNING = re.compile(r"^\S+:\d+: \w*Warning: ")  # warnings.warn output, not the exception
_PY_CHAIN = re.compile(
    r"^(?:The above exception was the direct cause|During handling of the above exception)"
)
_LIBRARY_PATH = re.compile(r"site-packages|dist-packages|[\\/]lib[\\/]python\d|^<frozen |^<string>|importlib")
_MSG_NOISE = re.compile(r"^(?:For further information visit|For more information|Traceback \(most recent)")
# an exception named inside a sentence or a quote: 'I get "ImportError: cannot import name ..." when'
_PY_EXC_IN = re.compile(
    r"(?:(?<=[\s\"'`(*“‘])|^)(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault))"
    r":\s?(?P<msg>.*)$"
)
_CODE_LINE = re.compile(r"^\s*(?:File |at |raise |\w+ = |[>~^])")
_PYTEST_ASSERT = re.compile(r"^E\s+(?P<msg>assert\b.*)$")
# the file an ImportError names at the end of its message: "(/venv/.../urls.py)"
_TRAILING_PATH = re.compile(r"\((?:[A-Za-z]:)?[^()\s]*[\\/][^()]*\)\.?\s*$|\([^()\s\\/]+\.py\)\.?\s*$")
_TRIPLE_DQ, _TRIPLE_SQ = '"' * 3, "'" * 3
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’"}


def _embedded_exception(line: str) -> str | None:
    """'... "KeyError: 'x'" ...' -> "KeyError: 'x'" (cut at the quote that opened it), for prose lines."""
    if _CODE_LINE.match(line):
        return None
    m = _PY_EXC_IN.search(line[: MAX_LINE * 2])
    if not m or not m.group("msg").strip():
        return None
    start = m.start("type")
    opener = line[start - 1] if start else ""
    msg = m.group("msg")
    if opener in _QUOTES and _QUOTES[opener] in msg:
        msg = msg[: msg.rindex(_QUOTES[opener])] if opener in "“‘" else msg.split(_QUOTES[opener])[0]
    return f"{m.group('type')}: {msg.strip()}"


def _python_causes(lines: list[str]) -> tuple[list[str], str | None]:
    """Exception lines (with up to two continuation lines each) and the innermost app module, if Python."""
    is_python = any(
        ln.startswith("Traceback (most recent call last)") or _PYTEST_LOC.match(ln.strip()) for ln in lines
    ) or any(
        _PYTEST_FAILED.match(ln) or ((m := _PY_EXC.match(ln.strip())) and m.group("msg")) for ln in lines
    )
    if not is_python:
        embedded = [e for ln in lines if (e := _embedded_exception(ln))]
        return embedded[:MAX_CAUSE_LINES], None
    causes: list[str] = []
    summaries: list[str] = []  # pytest's one-line summaries: often cut to the terminal width
    frame: str | None = None
    for i, raw in enumerate(lines):
        line = raw.strip()
        fm = _PY_FRAME.match(raw)
        loc = _PYTEST_LOC.match(line)
        failed = _PYTEST_FAILED.match(line)
        if fm and not _LIBRARY_PATH.search(fm.group("path")):
            frame = _module_of(fm.group("path"))
        elif loc and not _LIBRARY_PATH.search(loc.group("path")):
            frame = _module_of(loc.group("path"))
        if failed:
            exc = _PY_EXC.match(failed.group("rest").strip())
            if exc:
                summaries.append(_exc_line(exc))
        elif _PY_WARNING.match(line):
            continue
        elif (exc := _PY_EXC.match(line)) and (not raw.startswith(" ") or line.startswith("E ")):
            causes.append(_exc_line(exc))
            causes.extend(_continuation(lines, i + 1))
        elif assertion := _PYTEST_ASSERT.match(line):  # pytest's own explanation of a failed assert
            causes.append("AssertionError: " + assertion.group("msg").strip())
            causes.extend(_continuation(lines, i + 1))
    if not causes:  # a traceback pasted inside sentences: the exception named in the prose
        causes = [e for ln in lines if (e := _embedded_exception(ln))][:MAX_CAUSE_LINES]
    for summary in summaries:  # only when the E lines did not already say it
        cut = summary.removesuffix("...")
        if any(c.startswith(cut) or cut.startswith(c) for c in causes):
            continue
        if summary.endswith("...") and ": " in cut:  # cut to the terminal width: find the full message
            kind, msg = cut.split(": ", 1)
            full = next(
                (ln.strip() for ln in lines if ln.strip().startswith(msg) and ln.strip() != msg), None
            )
            summary = f"{kind}: {full}" if full else cut
        causes.append(summary)
    return causes, frame


def _without_trailing_path(msg: str) -> str:
    """Drop the file an ImportError names at its end; matched from the last "(" only (linear)."""
    cut = msg.rfind("(")
    if cut >= 0 and _TRAILING_PATH.match(msg, cut):
        return msg[:cut].rstrip()
    return msg


def _exc_line(m: re.Match[str]) -> str:
    exc_type = m.group("type").rsplit(".", 1)[-1]  # pytest, plain python and logs qualify differently
    msg = _DID_YOU_MEAN.sub("", (m.group("msg") or "").strip())
    msg = _without_trailing_path(msg[: MAX_LINE * 2])
    return f"{exc_type}: {msg}" if msg else exc_type


def _continuation(lines: list[str], start: int) -> list[str]:
    """Up to two message lines following an exception line (pydantic, psycopg and friends span lines)."""
    out = []
    for raw in lines[start : start + 4]:
        text = raw.strip()
        if text.startswith("E "):
            text = text[1:].strip()
        elif raw.startswith(("  ", "\t")) and not text.startswith(("File ", "^", "~")):
            pass
        elif text and not raw.startswith(" ") and not _PY_EXC.match(text) and not _PY_CHAIN.match(text):
            if _PYTEST_LOC.match(text) or text.startswith(("=", "_", "FAILED", "Traceback")):
                break
        else:
            break
        if not text or _PY_EXC.match(text) or _MSG_NOISE.match(text) or _PYTEST_LOC.match(text):
            break
        if text.startswith(("at ", "File ", "Traceback", _TRIPLE_DQ, _TRIPLE_SQ)) or _JS_FRAME.match(raw):
            break
        if not raw.startswith((" ", "\t", "E ")) and _PROSE.search(text):  # the reporter's own words
            break
        if _PY_WARNING.match(text):
            break
        out.append(text)
        if len(out) == 2:
            break
    return out


def _module_of(path: str) -> str:
    name = _basename(path)
    return name.rsplit(".", 1)[0] if "." in name else name


# --------------------------------------------------------------------------- other tools

_ERRORISH = re.compile(
    r"(?i:\b(?:error|errors|fatal|failed|failure|panic(?:ked)?|exception|denied|not found|no such|undefined|"
    r"undeclared|cannot|can't|could not|couldn't|unable|refused|rejected|conflict|missing|invalid|"
    r"unrecognized|unknown|not a |timed out|timeout|not allowed|forbidden|unauthorized|mismatched|"
    r"incompatible|has no attribute|is not|does not|did not|not supported|no longer supported|aborted|killed"
    r"|segmentation|too open|don't have|do not have|not specified|already exists|already in use|no upstream"
    r"|not up[ -]to[ -]date|exhausted|insufficient|rate limit|do not match|requires a development team"
    r"|no module named|can't open file)\b)|\bERR!|[✖✗×⨯] |\b[A-Z]\w*(?:Exception|Error)\b|\b[A-Z]{1,4}\d{3,5}\b|\[[a-z]+(?:-[a-z]+)+\]\s*$|^!\s*\[rejected\]|^CONFLICT\b"
)
_NOISE = re.compile(
    r"(?i:^(?:hint|note|help|warning: \d+ warnings? emitted)\b)|^For more information|A complete log of this run|"
    r"^\s*\||^\s*\d+\s*\||^\s*-->|^\s*[\^~]+|^Found \d+ errors?|could not compile|aborting due to|"
    r"ld returned \d+ exit status|^Node\.js v|^\s*at |short test summary|^={3,}|^_{3,}|^(?:_ ){3,}|^\[\*\]|fixable with|"
    r"^Run with --|^To see a list of|^Require stack|^- |^Looking in links|^\s*throw |^\s*\}$|^\s*code: |"
    r"^\s*requireStack|^npm (?:error|ERR!)\s*$|^npm (?:error|ERR!) (?:A complete log|Log files)|"
    r"^Compiling |^\s*Finished |^\s*Running |^Checked \d+ source|^Success: no issues|^\d+ (?:failed|passed|error)|"
    r"^(?:FAILED|PASSED|ERROR)(?: \S+::\S+)?\s*$|^In function|^In file included from|^compilation terminated|"
    r"^rootdir: |^inifile: |^configfile: |^file \S+, line \d+$|^npm notice|^Emitted 'error' event"
    r"|^-> \[Help|^To see the full stack trace|^Re-run Maven|^After correcting the problems|^\s*mvn <goals>"
    r"|^ERROR in \S+$|^Try `|^For more information about the errors|^COMPILATION ERROR\s*:?$|(?<!\.)\.{5,} (?:SUCCESS|FAILURE|SKIPPED)"
    r"|^(?:Error: )?Exit code -?\d+$"  # Claude Code's Bash tool prefixes a failed run's output with it
)
_LOCATION_PREFIX = re.compile(
    r"^(?:[\w.@+~/\\-]+\.[A-Za-z]\w*|<stdin>|<string>)(?:(?::\d+){1,2}:?|\(\d+,\d+\):|:\(\.\w+\+\w+\):)"
    r"(?:\s+-(?=\s))?\s*"
)
# a linter's name closing a located diagnostic (golangci-lint, staticcheck): `... is unused (unused)`
_LINTER_TAG = re.compile(r"\s\([a-z][a-z0-9-]{1,40}\)\s*$")
_MYPY_WRAPPED = re.compile(r": (?:error|note|warning): ")
_MYPY_CODE_END = re.compile(r"\[[a-z]+(?:-[a-z]+)*\]\s*$")
_NPM_PREFIX = re.compile(r"^npm (?:error|ERR!|WARN|warn)(?=\s|$)")
_JS_FRAME = re.compile(r"^\s*at (?:.*? \()?(?P<path>[^()\s]+?):\d+:\d+\)?$")


# prose around a paste: first person, the question, "this error"
_PROSE = re.compile(
    r"\b(?:I|I'm|I've|I'd|[Mm]y|me|[Ww]e|[Oo]ur|[Aa]nyone|[Ss]omebody|[Tt]hanks|[Hh]ello|[Hh]i)\b"
    r"|(?i:\b(?:this|the following|the same|same) (?:error|issue|problem|message)\b"
    r"|^(?:how|what|why|when|can|could|does|is there)\b)"
)
# a tool's error message inside a sentence: cut the sentence off
_ERROR_IN_PROSE = re.compile(r"(?<![\w-])(?:fatal|error|Error|ERROR|FATAL ERROR|remote)(?:\[\w+\])?: \S")
_QUOTED_SEGMENTS = [re.compile(r"`([^`]{12,300})`"), re.compile(r"[\"“]([^\"”]{12,300})[\"”]")]
_INTRO = re.compile(r"^\W*(?:\w+\W+){0,3}\w+\s*:\s*$")  # "Error thrown:", "Seeing errors with:"


def _quoted_error(text: str) -> str | None:
    for rx in _QUOTED_SEGMENTS:
        for m in rx.finditer(text):
            if _ERRORISH.search(m.group(1)) and not _PROSE.search(m.group(1)):
                return m.group(1).strip()
    return None


def _from_prose(text: str) -> str | None:
    """The tool message quoted or named inside a person's sentence, if any."""
    quoted = _quoted_error(text)
    if quoted:
        return quoted
    m = _ERROR_IN_PROSE.search(text)
    if m and m.start() > 0:
        return text[m.start() :].strip()
    return None


def _tool_causes(lines: list[str]) -> list[str]:
    """Error lines of any tool: prose only when nothing else; a runner's own framing (`make: *** ...
    Error 1`, `ERROR task failed`, `N issues:`, `extract.WRAPPER_LINE`) never: it relays a failure without
    saying which, and would make every failure of that runner the same (the text then has no cause line)."""
    found = _tool_lines(lines)
    plain = [t for t, kind in found if kind == "plain"]
    if plain:
        return plain
    return [t for t, kind in found if kind == "quoted"] or [t for t, kind in found if kind == "prose"]


def _tool_lines(lines: list[str]) -> list[tuple[str, str]]:
    causes: list[tuple[str, str]] = []
    for text in _join_wrapped(lines):
        located = _LOCATION_PREFIX.match(text.strip())
        text = _LOCATION_PREFIX.sub("", text.strip())
        if located and _LINTER_TAG.search(text) and not _NOISE.search(text):
            causes.append((text, "plain"))  # golangci-lint: `file:12:3: message (linter)`, error word or not
            continue
        if text.startswith("E "):  # pytest's failure lines
            text = text[1:].strip()
        if not text or _NOISE.search(text):
            continue
        npm = _NPM_PREFIX.match(text)
        if npm:  # every npm line says "error": judge the content
            text = text[npm.end() :].strip()
            if not text or _NOISE.search(text) or not _ERRORISH.search(text):
                continue
            causes.append(("npm error " + text, "wrapper" if WRAPPER_LINE.search(text) else "plain"))
        elif _ERRORISH.search(text):
            if WRAPPER_LINE.search(text):
                causes.append((text, "wrapper"))
            elif _PROSE.search(text) or _INTRO.match(text):
                inner = _from_prose(text)
                causes.append((inner, "quoted") if inner else (text, "prose"))
            else:
                inner = _quoted_error(text)
                if inner and not _ERRORISH.search(text.replace(inner, " ")):
                    causes.append((inner, "plain"))
                else:
                    causes.append((text, "plain"))
    return causes


def _join_wrapped(lines: list[str]) -> list[str]:
    """mypy --pretty wraps a diagnostic over indented lines ending with its [code]: join them back."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _MYPY_WRAPPED.search(line) and not _MYPY_CODE_END.search(line):
            for j in range(i + 1, min(i + 4, len(lines))):
                if not lines[j].strip() or _MYPY_WRAPPED.search(lines[j]):
                    break
                if _MYPY_CODE_END.search(lines[j]):
                    line = line + " " + " ".join(x.strip() for x in lines[i + 1 : j + 1])
                    i = j
                    break
        out.append(line)
        i += 1
    return out


def _js_frame(lines: list[str]) -> str | None:
    for raw in lines:
        m = _JS_FRAME.match(raw)
        if m and not m.group("path").startswith("node:") and "node_modules" not in m.group("path"):
            return _module_of(m.group("path"))
    return None


# --------------------------------------------------------------------------- public API


def _signature(text: str) -> tuple[list[str], str | None]:
    causes, frame, _ = _signature_and_context(text)
    return causes, frame


def _signature_and_context(text: str) -> tuple[list[str], str | None, list[str]]:
    lines = clean(text)
    causes, frame = _python_causes(lines)
    if not causes:
        causes = _tool_causes(lines)
    frame = frame or _js_frame(lines)
    fallback = not causes
    if fallback:  # nothing error-like: the first two lines, marked (only shared rare lines can match them);
        # a runner's framing lines only when there is nothing else
        said = [ln.strip() for ln in lines if ln.strip()]
        causes = [FALLBACK + ln for ln in ([s for s in said if not WRAPPER_LINE.search(s)] or said)][:2]
    folded: list[str] = []
    for cause in causes:
        f = fold(cause)
        if f and f not in folded:
            folded.append(f)
        if len(folded) == MAX_CAUSE_LINES:
            break
    context = [] if fallback else _context_lines(lines, folded)
    return folded, (fold(frame) if frame else None), context


FALLBACK = "~ "  # prefix of cause lines taken without any error in the text
CONTEXT = "+ "  # prefix of the other distinctive lines of the text (not in the fingerprint)
# a line that says something: three words of three letters or more, apart
_WORDY = re.compile(r"(?:^|\s)[A-Za-z]{3,}[,.;:]?\s+(?:\S+\s+)?[A-Za-z]{3,}[,.;:]?\s+(?:\S+\s+)?[A-Za-z]{3,}")
_PROGRESS = re.compile(
    r"(?<!\d)\d+%|\(\d+/\d+\)|^(?:remote: )?(?:Enumerating|Counting|Compressing|Receiving|Resolving|Total|Downloading"
    r"|Collecting|Installing|Building|Cloning|Pulling|Waiting|Step \d)\b"
)


def _context_lines(lines: list[str], causes: list[str]) -> list[str]:
    """Up to MAX_CONTEXT_LINES lines that the tool printed beside its error and that say something, but no
    error of their own (those are cause lines or wrappers): another paste may carry such a line as its
    only distinctive one (`remote: Support for password authentication was removed ...` above
    `fatal: Authentication failed`). Not frames, code, prose, progress, hints, version banners; in text
    order."""
    picked: list[str] = []
    after_frame = False  # the source line Python prints under a frame
    for raw in lines:
        text = raw.strip()
        skip_source = after_frame
        after_frame = bool(_PY_FRAME.match(raw))
        if (
            not text
            or skip_source
            or after_frame
            or len(text) > MAX_LINE * 2
            or _ERRORISH.search(text)
            or not _WORDY.search(text)
            or _NOISE.search(text)
            or _CODE_LINE.match(text)
            or _PROSE.search(text)
            or _PROGRESS.search(text)
            or _MSG_NOISE.match(text)
            or _PY_CHAIN.match(text)
        ):
            continue
        f = fold(_LOCATION_PREFIX.sub("", text))
        if f.count("<version>") >= 2:  # a banner listing what runs (`platform linux -- Python <version>,
            continue  # pytest-<version>, ...`): says nothing about what went wrong, shared by every run
        if f and f not in causes and f not in picked:
            picked.append(f)
            if len(picked) == MAX_CONTEXT_LINES:
                break
    return picked


def normalize(text: str) -> str:
    """The normalized signature: cause lines, then `at <innermost app module>` when known, then up to
    MAX_CONTEXT_LINES context lines marked `+ ` (indexed for candidates and compared, never fingerprinted)."""
    causes, frame, context = _signature_and_context(text)
    return "\n".join(causes + ([f"at {frame}"] if frame else []) + [CONTEXT + c for c in context])


def names_a_cause(text: str) -> bool:
    """Does the text hold a cause line (an exception, a tool's error line), or would its key be the
    fallback of its first lines (`TEST OK    WIP g1`, `=== RUN TestSyntax`, a line of code)?"""
    causes, _frame, _context = _signature_and_context(text)
    return any(not c.startswith(FALLBACK) for c in causes)


def is_generic(cause_lines: list[str]) -> bool:
    """True when the cause lines name nothing specific: no quoted value, identifier-like or dotted name,
    code, number or `: detail` in the message (e.g. `IndexError: list index out of range`)."""
    body = " ".join(line.split(": ", 1)[-1] for line in cause_lines)
    body = re.sub(r"<\w+>", "", body)
    return not re.search(
        r"['\"`‘’]|\d|: |\b\w+_\w+\b|\b\w+\.\w+\b|\b[a-z]+[A-Z]\w*\b|\[[a-z-]+\]|\b[A-Z]{2,}\b", body
    )


def fingerprint(text: str) -> str:
    """Stable id of the error's cause (32 hex chars); equal fingerprints mean "the same error"."""
    causes, frame = _signature(text)
    key = "\n".join(causes)
    if frame and is_generic(causes):
        key += f"\nat {frame}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def fingerprint_normalized(normalized: str) -> str:
    """fingerprint() for text that is already normalize()d (avoids normalizing twice)."""
    lines = normalized.split("\n")
    causes = [ln for ln in lines if not ln.startswith(("at ", CONTEXT))]
    frames = [ln for ln in lines if ln.startswith("at ")]
    key = "\n".join(causes)
    if frames and is_generic(causes):
        key += "\n" + frames[0]
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


_TOKEN = re.compile(r"<\w+>|[A-Za-z_][A-Za-z0-9_]*|\d+")


def tokens(normalized: str) -> list[str]:
    """Lowercased word tokens of a normalized signature (placeholders kept as one token each)."""
    return [t.lower() for t in _TOKEN.findall(normalized)]
