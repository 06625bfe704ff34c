"""A run's output, line by line: which lines say something failed, and which are background.

A line is **background** when a run that passed printed it too (a broken `.pth` file's traceback at every
Python start, a deprecation warning, a banner): it is not what failed. Lines are compared after folding
what changes between runs (numbers, hex, addresses, times).

The features here feed the fitted run model (`model.py`, `weights.json`): does a run's output show a
failure even when its exit code says it passed (`cmd | tail` hides the exit code)?
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Collection

# the decisive lines of failures: exception lines, test runners' failure lines, tools' error lines
_EXCEPTION = re.compile(
    r"^\s*(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Za-z_]*(?:Error|Exception|Exit|Interrupt|Failure|Warning)"
    r"(?:\[\w+\])?(?::|$|\s)"
)
_TOOL_ERROR = re.compile(
    r"(?i)^\s*(?:error|fatal|panic|fail(?:ed|ure)?|err!|npm err!|npm error|\[error\]|critical)\b[:\s!]"
    r"|^\s*E\s{2,}\S"
    r"|^\s*(?:FAILED|ERROR)\s+\S"
    r"|^[^\s:]+:\d+(?::\d+)?:\s*(?:error|fatal error)\b"
    r"|\berror(?:\[\w+\])?:\s"
    r"|(?i:\bno such file or directory\b|\bcommand not found\b|\bpermission denied\b|\bnot recognized as\b"
    r"|\bno module named\b|\bcannot find module\b|\bcan't open file\b|\bunrecognized arguments?\b"
    r"|\bnot a git repository\b|\bdid not match any\b|\bconnection refused\b|\bsegmentation fault\b"
    r"|\bno matches found\b|\bbug (?:is )?(?:found|confirmed|reproduced|still exists)\b|\btest failed\b)"
    r"|^\s*(?:✗|❌|FAIL\b)"
    r"|^\s*--- FAIL: "  # go test
    r"|^[^\s:]+:\d+:\d+: [A-Z]{1,4}\d{2,4}\b"  # ruff / flake8 / pylint codes: path:line:col: F401
    r"|^\s*\d+:\d+\s+error\s"  # eslint's stylish format
    r"|^[^\s:]+:\d+(?::\d+)?\s+error\s"  # markdownlint and other `path:line:col error RULE` reports
    r"|\berror TS\d{3,5}:"  # tsc: src/a.ts(12,5): error TS2322:
    r"|^make(?:\[\d+\])?: \*\*\* "  # make: *** No rule to make target 'x'.  Stop.
    r"|^\s*npm (?:ERR!|error) "
    r"|(?i:^would reformat:? )"  # black / ruff format --check
    r"|(?i:\((?:y/n|yes/no)\)|\[y/n\])\s*[:?]?\s*$"  # a prompt waiting for an answer that never comes
    r"|(?i:loss\b[^\n]{0,40}?\bnan\b|\bnan (?:loss|values? (?:in|encountered)))"  # training diverged
)
_RULES = ("===", "___", "---")
_FAIL_WORDS = re.compile(
    r"(?i)\b(?:error|errors|failed|failure|fatal|traceback|exception|cannot|can't|couldn't|could not|"
    r"unable|denied|refused|not found|no such file|no module named|undefined|unexpected|invalid|segmentation)\b"
)
_WARNING = re.compile(r"(?i)\bwarn(?:ing)?s?\b|deprecat")
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_EXIT_CODE = re.compile(r"^(?:Error: )?Exit code -?\d+$")
_PASSED = re.compile(
    r"(?i)\b\d+ passed\b|^OK(?: \(|$)|\ball tests? passed\b|\btests? passed\b|\bsuccess(?:fully)?\b|✓|\bPASS\b"
)
_PYTEST_FAILED = re.compile(r"(?i)\b\d+ (?:failed|errors?)\b")
# a summary that counts failures, or a runner's note that the command failed, with a number that is not 0:
# `Found 6 errors.` (ruff, biome), `✖ 12 problems`, `3 failed`, `ELIFECYCLE Command failed with exit code 1`
_FAILURE_COUNT = re.compile(
    r"(?i)(?<![\d.])[1-9]\d{0,5} (?:errors?|failed|failures?|problems?)\b"
    r"|\bcommand failed with exit code [1-9]|\bexited with (?:exit )?code [1-9]"
)
# a reporter's failure mark opening a line: biome's `  × Some errors were emitted while running checks.`,
# eslint's `✖ 3 problems (3 errors, 0 warnings)`, vitest's `× src/a.test.ts > adds`, jest's `✕ adds`, pip's
# `× Getting requirements to build editable did not run successfully.`; not a summary of no errors (vale's
# `✖ 0 errors, 4 warnings and 0 suggestions`, eslint's `✖ 1 problem (0 errors, 1 warning)`)
_FAILURE_MARK = re.compile(r"^\s*[×✖✕✘]\s")
_NO_ERRORS = re.compile(r"(?<!\d)0 errors?\b")
MARK_TAIL = 10  # last lines of an output a failure mark is looked for in
# the last line of a crash that is not its error line: a stack frame (Node's `    at f (file.js:1:2)` or
# `    at file.js:1:2`, Java's `\tat a.B.c(B.java:12)`) or the `Node.js v24.2.0` Node prints after an uncaught
# exception's stack and error object
_FRAME_END = re.compile(r":\d+\)?(?: \{)?$")
_NODE_TRAILER = re.compile(r"^Node\.js v\d+\.\d+")
CRASH_LINES = 40  # fresh lines before a crash's last line its exception line is looked for in
_FOLD = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)*")
# an HTTP status is the line's meaning, not a count: `HTTP/2 404` is not the `HTTP/2 200` a passing probe
# printed, nor `"status": 500` the `"status": 200` before it; its digits are kept out of the folding
_STATUS = re.compile(
    r"(?i)(\bHTTP(?:/[\d.]{1,4})?:? {1,3}|\bstatus(?:[ _]code)?\"?:? {0,3}|\"code\": {0,3})([1-5]\d\d)\b"
)
_STATUS_DIGITS = str.maketrans("0123456789", "ABCDEFGHIJ")
_SPACE = re.compile(r"\s+")

_MISSING = [
    re.compile(r"No such file or directory:? '?\"?([^'\"\s:]{1,300})"),  # python: [Errno 2] ...: 'x'
    re.compile(r"(?:^|\s)([^\s:'\"]{1,300}): No such file or directory"),  # ls: x: No such file ...
    re.compile(r"can't open file '([^']{1,300})'"),
    re.compile(r"cd:(?:\d+:)? no such file or directory: (\S{1,300})"),  # zsh
    re.compile(r"cd: (\S{1,300}): No such file or directory"),  # bash
    re.compile(r"file or directory not found: (\S{1,300})|ERROR: file not found: (\S{1,300})"),
    re.compile(r"no matches found: (\S{1,300})"),  # zsh glob
    re.compile(r"cannot access '([^']{1,300})': No such file"),  # GNU ls
    re.compile(r"(?:Path|File|Directory) does not exist: (\S{1,300})"),  # Claude Code's Read/Glob/Grep
]

MAX_LINES = 400  # lines of one output looked at (its head and its tail)
CACHED_LINE = 400  # lines up to this long are judged once per process (a few MB at most)
CACHED_LINES = 1 << 14


def lines_of(text: str) -> list[str]:
    """Non-empty lines; a long output keeps its first and last MAX_LINES // 2."""
    rows = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    if len(rows) > MAX_LINES:
        rows = rows[: MAX_LINES // 2] + rows[-MAX_LINES // 2 :]
    return rows


def fold(line: str) -> int:
    """A line's identity across runs: whitespace and numbers folded, hashed small (kept in session state).
    Short lines are cached, as in `is_error_line`: runs of one session print the same lines again and again
    (a build's `Compiling x v1.2` lines, a test suite's names), and judging lines is most of the cost of
    reading a session."""
    return _fold(line) if len(line) <= CACHED_LINE else _fold.__wrapped__(line)


@functools.lru_cache(maxsize=CACHED_LINES)
def _fold(line: str) -> int:
    line = _STATUS.sub(lambda m: m[1] + m[2].translate(_STATUS_DIGITS), _SPACE.sub(" ", line.strip()))
    folded = _FOLD.sub("#", line)
    return zlib.crc32(folded.encode("utf-8", "replace"))


def test_identity(test_id: str) -> list[int]:
    return [fold("test " + test_id)]


def missing_paths(lines: list[str]) -> list[str]:
    """Paths an error says do not exist."""
    found = []
    for line in lines[-50:]:
        for pattern in _MISSING:
            for m in pattern.finditer(line):
                path = next((g for g in m.groups() if g), None)
                if path and path not in ("directory", "file"):
                    found.append(path.rstrip(".,;"))
    return sorted(set(found))


def _generic(line: str) -> bool:
    """A line every failing run prints whatever failed: a `=== ... ===` rule, `Exit code 1`, `FAILED (`."""
    text = line.strip()
    ruled = any(text.startswith(r) and text.endswith(r) for r in _RULES)
    return ruled or is_exit_code_line(text) or text.startswith("FAILED (")


def is_exception_line(line: str) -> bool:
    return bool(_EXCEPTION.match(line)) and not _WARNING.search(line)


def is_exit_code_line(line: str) -> bool:
    return bool(_EXIT_CODE.match(line.strip()))


def is_error_line(line: str) -> bool:
    return _is_error(line) if len(line) <= CACHED_LINE else _is_error.__wrapped__(line)


@functools.lru_cache(maxsize=CACHED_LINES)
def _is_error(line: str) -> bool:
    return bool(_EXCEPTION.match(line) or _TOOL_ERROR.search(line)) and not _EXIT_CODE.match(line.strip())


def _facts(line: str) -> tuple[bool, bool, bool, bool]:
    return _line_facts(line) if len(line) <= CACHED_LINE else _line_facts.__wrapped__(line)


@functools.lru_cache(maxsize=CACHED_LINES)
def _line_facts(line: str) -> tuple[bool, bool, bool, bool]:
    """(an error line, an exception line, a traceback header, a failure word) of one line."""
    error = is_error_line(line)
    exception = error and bool(_EXCEPTION.match(line)) and not _WARNING.search(line)
    return error, exception, bool(_TRACEBACK.match(line)), bool(_FAIL_WORDS.search(line))


def error_lines(lines: list[str], background: Collection[int]) -> list[str]:
    """The lines that say what failed, background left out."""
    return [ln for ln in lines if is_error_line(ln) and fold(ln) not in background]


SHOWN_MAX = 10  # error lines of one passing run kept as what it showed


def shown_errors(lines: list[str], background: Collection[int]) -> list[str]:
    """The lines of a run that passed which say something failed (a reproduction that caught the exception
    and printed it, `BUG: ...`, `✗ ...`): error lines, background, warnings, the summaries every failure
    prints and a script that failed to load (`No module named`, a syntax error) left out."""
    found = [
        ln
        for ln in error_lines(lines, background)
        if not _WARNING.search(ln) and not _generic(ln) and not _LOADING.search(ln)
    ]
    return list(dict.fromkeys(found))[:SHOWN_MAX]


_LOADING = re.compile(r"\bNo module named\b|\b(?:SyntaxError|IndentationError|TabError)\b")

# what a prompt quotes as an error: an exception line with its message (`TypeError: 'int' object ...`, pytest's
# `E   KeyError: 'x'`, a browser console's `app.js:12  Uncaught TypeError: ...`), or inside a code block a
# tool's `error:` / `fatal:` / `path:line: error:` line; not prose that merely names an exception (`this
# raises a TypeError`), nor code (`clearError: () => void;`, `  error: null,`)
_QUOTED_EXCEPTION = re.compile(
    r"^\s*(?:E\s+|\S{1,300}:\d+\s+Uncaught\s+(?:\(in promise\)\s+)?)?(?:[A-Za-z_]\w*\.)*"
    r"(?:[A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt)|Error|Exception)(?:\[\w+\])?: +\S"
)
_QUOTED_TOOL_ERROR = re.compile(
    r"^(?:error|fatal|Error|ERROR|FATAL)(?:\[\w+\])?: +\S|^[^\s:]{1,300}:\d+(?::\d+)?: *(?:error|fatal error)\b"
)
_FENCE = ("```", "~~~")
_CODE_ENDS = (";", ",", "{", "(")
QUOTED_MAX = 3  # error lines of one prompt kept (the last ones: a traceback ends in what it raised)
QUOTED_LINES = 2000  # lines of one prompt looked at


def quoted_errors(text: str) -> list[str]:
    """The error lines a user's prompt quotes (a bug report): an exception line with its message standing
    on a line of its own, as a pasted traceback ends (`TypeError: 'NoneType' object is not callable`), and
    inside a code block also a tool's `error:` / `fatal:` / `path:line: error` line. An exception named in
    a sentence (`this raises a TypeError`) is not quoted, nor is a warning. At most QUOTED_MAX, the last
    ones, without repeats."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines()[:QUOTED_LINES]:
        if line.lstrip().startswith(_FENCE):
            fenced = not fenced
            continue
        quoted = _QUOTED_EXCEPTION.match(line) or (fenced and _QUOTED_TOOL_ERROR.match(line))
        if quoted and not _WARNING.search(line) and not line.rstrip().endswith(_CODE_ENDS):
            found.append(line.strip())
    return list(dict.fromkeys(found))[-QUOTED_MAX:]


_UNITTEST_FAILED_ID = re.compile(r"^(?:FAIL|ERROR): (\w+ \([\w.]+\))")


def _test_id(line: str) -> str | None:
    """The test a report line says failed: pytest's `FAILED a.py::t - msg` or verbose `a.py::t FAILED`,
    unittest's `FAIL: t (mod.Class)` (word tests, no pattern that could backtrack)."""
    words = line.split()
    if len(words) >= 2 and words[0] in ("FAILED", "ERROR") and "::" in words[1]:
        return words[1]
    if len(words) >= 2 and words[1] in ("FAILED", "ERROR") and "::" in words[0]:
        return words[0]
    m = _UNITTEST_FAILED_ID.match(line)
    return m.group(1) if m else None


def _banner(line: str) -> str | None:
    """The title of a report section (`____ Class.test ____`), "" for a `=====` rule, else None."""
    text = line.strip()
    if text.startswith("___") and text.endswith("___"):
        return text.strip("_ ")
    if len(text) >= 5 and set(text) == {"="}:
        return ""
    return None


_STOPPED = re.compile(r"stopping after \d+ failures?|!{3,} Interrupted")


def stopped_early(text: str) -> bool:
    """Did a test run stop at its first failures (`-x`, `--maxfail`)? Then a test it did not report is
    not known to pass."""
    return _STOPPED.search(text[-4000:]) is not None


def failing_tests(lines: list[str]) -> list[str]:
    """The ids of the tests a run reports failed (pytest's FAILED / verbose lines, unittest's FAIL:)."""
    ids = []
    for line in lines:
        found = _test_id(line)
        if found:
            ids.append(found)
    return list(dict.fromkeys(ids))


def test_section(lines: list[str], test_id: str) -> list[str]:
    """The part of a test run's output about one failing test: its report section (pytest's `___ name ___`
    banner, unittest's `FAIL: name` block) and the lines that name it."""
    name = test_id.split("::")[-1].split(" ")[0].split("[")[0]
    section: list[str] = []
    inside = False
    for line in lines:
        banner = _banner(line)
        if banner is not None or _UNITTEST_FAILED_ID.match(line):
            title = banner or line
            inside = bool(title) and name in title
            if inside:
                section.append(line)
            continue
        if inside or test_id in line or (name in line and failing_tests([line])):
            section.append(line)
    return section[-60:]


def identity(errors: list[str]) -> list[int]:
    """What tells one error from another: the failing tests a runner names (`FAILED tests/a.py::t`), else
    the last exception line, else the last error line; never the summaries every failure prints."""
    telling = [ln for ln in errors if not _generic(ln)]
    tests = failing_tests(telling)
    if tests:
        return sorted({fold("test " + t) for t in tests})
    exceptions = [ln for ln in telling if is_exception_line(ln) and not ln.startswith((" ", "\t"))]
    last = (
        exceptions[-1:] or [ln for ln in telling if is_exception_line(ln)][-1:] or telling[-1:] or errors[-1:]
    )
    return sorted({fold(ln) for ln in last})


def run_features(
    text: str, flagged: bool, probe: bool, masked: bool, background: set[int]
) -> dict[str, float]:
    """Features of one run for the run model: did it fail? (`masked`: the command hides its exit code)"""
    lines = lines_of(text)
    fresh = [ln for ln in lines if fold(ln) not in background]
    facts = [_facts(ln) for ln in fresh]
    errors = [ln for ln, f in zip(fresh, facts, strict=True) if f[0]]
    exceptions = [ln for ln, f in zip(fresh, facts, strict=True) if f[1]]
    tail = fresh[-5:]
    open_exit = not flagged and not masked  # exit code 0, and it is the check's own
    error_in_tail = any(f[0] for f in facts[-5:]) or _ends_in_crash(fresh, facts)
    return {
        "flagged": float(flagged),
        "masked": float(masked and not flagged),
        "masked_exception": float(masked and not flagged and bool(exceptions)),
        "masked_tests_failed": float(
            masked and not flagged and any(_PYTEST_FAILED.search(ln) for ln in tail)
        ),
        "exit0_exception": float(open_exit and bool(exceptions)),
        "probe": float(probe),
        "exit_code_only": float(bool(lines) and all(_EXIT_CODE.match(ln.strip()) for ln in lines)),
        "empty": float(not lines),
        "error_lines": min(len(errors), 5) / 5,
        "exception": float(bool(exceptions)),
        "traceback": float(any(f[2] for f in facts)),
        "error_in_tail": float(error_in_tail),
        "fail_words": min(sum(f[3] for f in facts), 5) / 5,
        "warnings_only": float(bool(errors) and all(_WARNING.search(ln) for ln in errors)),
        "passed_words": float(any(_PASSED.search(ln) for ln in tail)),
        "tests_failed": float(any(_PYTEST_FAILED.search(ln) for ln in tail)),
        "background_only": float(bool(lines) and not errors and any(is_error_line(ln) for ln in lines)),
        # counted on every line of the tail, background too: numbers fold, so a passing run's `Found 0
        # errors.` would make a failing run's `Found 6 errors.` background
        "failure_count": float(any(_FAILURE_COUNT.search(ln) for ln in lines[-10:])),
        "failure_mark": float(
            any(_FAILURE_MARK.match(ln) and not _NO_ERRORS.search(ln) for ln in fresh[-MARK_TAIL:])
        ),
    }


def _is_frame(line: str) -> bool:
    """A stack frame of a JavaScript or Java trace (`    at f (file.js:1:2)`, `\tat a.B.c(B.java:12)`)."""
    return line[:1] in (" ", "\t") and line.lstrip().startswith("at ") and _FRAME_END.search(line) is not None


def _ends_in_crash(fresh: list[str], facts: list[tuple[bool, bool, bool, bool]]) -> bool:
    """Does the output end in a crash whose error line is above its stack (Node: the `Error: ...` line, the
    frames, the error object, `Node.js v24.2.0`)? Its last line, `Exit code` lines left out, is a stack frame
    or Node's trailer, and an exception line stands within the CRASH_LINES lines before it. A Python
    traceback ends in its exception line, which `error_in_tail` sees anyway."""
    last = next((i for i in range(len(fresh) - 1, -1, -1) if not is_exit_code_line(fresh[i])), None)
    if last is None or not (_is_frame(fresh[last]) or _NODE_TRAILER.match(fresh[last])):
        return False
    return any(f[1] for f in facts[max(0, last - CRASH_LINES) : last])
