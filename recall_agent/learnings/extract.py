"""Find the decisive error text in whatever was pasted or printed: a tool's whole output, a CI log, a
report that a person wrote around a traceback.

`clean(text)` turns raw text into lines without the wrapping people and tools add: colour codes and
progress redraws; timestamps, log levels, PIDs, docker-compose service columns, BuildKit `#12 3.026` step
prefixes, Airflow `{file.py:12} INFO -` prefixes, Maven `[ERROR]` levels, box borders, markdown quote
markers and code fences; shell prompts and `$ command` lines are dropped. Output pasted as a Python list
of lines (`['Traceback ...\\n', '  File ...']`) or as one JSON string with escaped newlines is unwrapped
first.

`decisive(text, limit)` returns at most `limit` characters that keep the error: text that fits is only
cleaned; longer text keeps windows around its error lines, the last ones first (a build or test run fails
at the end), never a blind cut of the head. Text without any error line keeps its tail.

Every pattern here is linear in the line length (no nested quantifiers over the same characters), and
input beyond MAX_INPUT characters is read from its end only.
"""

from __future__ import annotations

import re

MAX_INPUT = 2_000_000  # characters considered; a longer log is read from its end
WINDOW_BEFORE = 4  # lines kept before an error line (frames, the failing command)
WINDOW_AFTER = 3  # lines kept after it (the message's continuation, hints)

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>NOc]"
)
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LOG_PREFIXES = [
    # 2026-11-29T21:03:11.1234567Z / 2026-11-29 21:03:11,123 (+ optional level / [pid])
    re.compile(
        r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}| ?UTC| ?GMT)?\]?\s*"
        r"(?:\[?(?:pid[ =:]?)?\d+\]?\s*)?"
        r"(?:\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\]?:?\s+)?"
    ),
    # syslog: Nov 29 21:03:11 host prog[1234]:
    re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [\w./-]+(?:\[\d+\])?:\s?"),
    # [21:03:11] / 21:03:11.123 at the start of a line
    re.compile(r"^\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s+"),
    # a bare [pid 1234] prefix left over
    re.compile(r"^\[(?:pid[ =:]?)?\d+\]\s*"),
]
# wrappers that other tools put in front of the line they relay
_WRAP_PREFIXES = [
    re.compile(r"^(?:>\s?)+(?=\S|$)"),  # markdown quote; Gradle's "> cause" nesting
    re.compile(r"^[a-z][\w.-]*[-_]\d+\s+\|\s?"),  # docker compose: "db_1    | " / "api-1  | "
    re.compile(r"^#\d+\s+\d+(?:\.\d+)?\s+"),  # BuildKit: "#12 3.026 "
    re.compile(r"^\{[\w.-]+:\d+\}\s+[A-Z]+\s+-\s"),  # Airflow: "{pod_manager.py:197} INFO - "
    re.compile(r"^##\[(?:error|warning|notice|debug)\]"),  # GitHub Actions annotations
    re.compile(r"^\[(?:ERROR|INFO|WARNING|WARN|DEBUG|FATAL)\]\s?"),  # Maven levels
]
_DROP_LINE = re.compile(
    r"^\s*(?:`{3,}|~{3,})[\w+-]*\s*$"  # code fences
    r"|^\s*\$\s"  # "$ command"
    r"|^\S+@[\w.-]+:[^$#\n]{0,200}[$#]\s"  # user@host:~/dir$ command
    r"|^PS [A-Za-z]:\\[^>\n]{0,200}>"  # PowerShell prompt
    r"|^\s*>>>\s"  # Python REPL input
)
_LIST_SEP = re.compile(r"""\\n['"],\s*['"]""")
_ESCAPED_NL = re.compile(r"(?:\\r)?\\n")


def unwrap(text: str) -> str:
    """Pastes of repr'd output: a Python list of lines, or a JSON/log string with escaped newlines."""
    if "\\n" not in text:
        return text
    out = []
    for line in text.split("\n"):
        if _LIST_SEP.search(line):
            line = _LIST_SEP.sub("\n", line)
            line = re.sub(r"""^[^'"\n]{0,40}\[['"]""", "", line)
            line = re.sub(r"""\\n['"]\]\s*$""", "", line)
            line = line.replace("\\'", "'").replace('\\"', '"')
        elif line.count("\\n") >= 2:
            line = _ESCAPED_NL.sub("\n", line).replace('\\"', '"').replace("\\'", "'").replace("\\t", " ")
        out.append(line)
    return "\n".join(out)


def _clean_line(line: str) -> str | None:
    if "\r" in line:  # progress bars redraw with \r: keep what was last drawn
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    if _DROP_LINE.match(line):
        return None
    if line.startswith("**") or line.endswith("**"):  # markdown bold around a pasted line
        line = line.strip().removeprefix("**").removesuffix("**")
    if line.startswith(("│", "┃")):  # a box drawn around the output
        line = line[1:].strip().removesuffix("│").removesuffix("┃").rstrip()
    for _ in range(2):  # a quoted CI log: "> 2026-... ERROR ..."
        for rx in _WRAP_PREFIXES:
            line = rx.sub("", line, count=1)
        head = line[:1]
        if head.isdigit() or head == "[" or (head.isupper() and line[3:4] == " "):  # cheap pre-check
            for rx in _LOG_PREFIXES:
                line = rx.sub("", line, count=1)
    return line.rstrip()


def clean(text: str) -> list[str]:
    """Raw output -> lines without colour codes, control characters, wrappers and log prefixes."""
    if len(text) > MAX_INPUT:
        text = text[-MAX_INPUT:]
    text = unwrap(_CTRL.sub("", _ANSI.sub("", text.replace("\r\n", "\n"))))
    out = []
    for raw in text.split("\n"):
        line = _clean_line(raw)
        if line is not None:
            out.append(line)
    return out


# lines that say an error happened (any tool); wrappers that only relay a failure are weaker
ERROR_LINE = re.compile(
    r"^\s*(?:E\s+)?(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Failure|Fault)\b"  # exceptions
    r"|^\s*(?:error|fatal|FATAL|ERROR|Error|panic|FAILED|FAIL)\b[\[:! (]"  # error: / fatal: / Error [X]:
    r"|^\s*(?:npm (?:ERR!|error) code|gyp ERR!)"
    r"|\b(?:TS|CS|E)\d{4}\b|\berror\[E\d{4}\]"  # compiler codes
    r"|^Traceback \(most recent call last\)"
    r"|^\s*E\s+assert\b"
)
# A task runner's, build tool's or test runner's own framing of a failure: it says that something beneath it
# failed, never what. make, npm/yarn/pnpm/bun, cargo, Maven, Gradle, go-task, mise, just, turbo, nx, tox,
# unittest, go test, golangci-lint's issue count. Never a cause line (signatures.py), last in `decisive`.
WRAPPER_LINE = re.compile(
    r"make(?:\[\d+\])?: \*\*\*|exited with (?:an unexpected )?code|exit code:? \d+|exit status \d+"
    r"|Process completed with exit code|Command failed with exit code|ELIFECYCLE|command failed"
    r"|could not compile|aborting due to|build failed|BUILD FAILURE|Failed to execute goal"
    r"|Error: Invalid exit code|Unable to compile TypeScript|^\s*ERROR:\s+exit \d+"
    r"|\btask failed\b|\bFailed to run task\b|^\s*(?:ERROR|error):?\s+run failed\b|\bexited \(-?\d+\)"
    r"|^\s*(?:error: )?Recipe `[^`]{1,200}` failed\b|\bRunning target \S+ for project \S+ failed"
    r"|\bFailed tasks:|Build failed with an exception|Execution failed for task\b|\bcommands? failed\b"
    r"|InvocationError\b|test failed, to rerun pass|^\s*FAILED \((?:failures|errors|expected failures)=\d+"
    r"|^\s*\d+ issues?:?\s*$|^\s*FAIL\s*$|^\s*FAIL\s+\S+\s+\(?\d+(?:\.\d+)?s\)?\s*$"
    r"|^\s*(?:npm (?:ERR!|error) )?(?:errno -?\d+|code (?:1|ELIFECYCLE)|Failed at the \S+ \S+ script)\s*\.?\s*$"
    r"|ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL|\bERR_PNPM_\w*FAIL\w*",
    re.IGNORECASE,
)


def decisive(text: str, limit: int) -> str:
    """At most `limit` characters that keep the decisive error lines of `text` (see module docstring)."""
    lines = clean(text)
    joined = "\n".join(lines).strip("\n")
    if len(joined) <= limit:
        return joined
    errors = [i for i, ln in enumerate(lines) if ERROR_LINE.search(ln)]
    if not errors:
        return _tail(lines, limit)
    strong = [i for i in errors if not WRAPPER_LINE.search(lines[i])] or errors
    # the last real error first (a run fails at its end), then the first one (often the root cause),
    # then the others from the end
    order = list(dict.fromkeys([strong[-1], strong[0], *reversed(strong), *reversed(errors)]))
    keep: set[int] = set()
    size = 0
    for i in order:
        window = [j for j in range(max(0, i - WINDOW_BEFORE), min(len(lines), i + WINDOW_AFTER + 1))]
        extra = sum(len(lines[j]) + 1 for j in window if j not in keep)
        if size + extra + 4 > limit:
            if not keep:  # one window alone is too long: keep the error line itself, cut to fit
                return lines[i][:limit]
            continue
        keep.update(window)
        size += extra + 4
    out: list[str] = []
    prev = -2
    for j in sorted(keep):
        if j != prev + 1 and out:
            out.append("...")
        out.append(lines[j])
        prev = j
    return "\n".join(out)[:limit]


def _tail(lines: list[str], limit: int) -> str:
    out: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) + 1 > limit:
            if not out:  # one line longer than the limit: its end
                return line[-limit:]
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(reversed(out))
