"""Cues for the run model beyond the exit flag and the error lines (issue 33, eighth round).

Each is a feature of `weights.json`'s run model, weighed by the fit (`bench/sessions/fit_capture.py`), never
a rule of its own:

- `answer_error`: the output is a service's answer that says it failed, printed by a command that exits 0
  (`curl` without `-f`, a `node` script that prints the response): an HTTP error status (`HTTP/2 404`,
  `Status Code: 400`, `429 Client Error`), a JSON object whose first key is `error`, a JavaScript error
  object (`Error: {` … `message: 'column x does not exist'`), an HTML error page (`<title>Error</title>`,
  `Cannot GET /api/x`), or curl's own complaint (`curl: (6) Could not resolve host`, `curl: option : blank
  argument`). Web apps and API clients of every project answer this way; the text of the error lines alone
  does not say it.
- `restores`: the command line puts back what it changed (`cp /tmp/x.bak x`, `git stash pop`, `git checkout
  -- x`, `echo "=== restore ==="`): a deliberate break-and-restore experiment, whose failing output is what
  the agent wanted to see.
- `expects_failure`: the agent's words just before the call say the failure is expected (`reverting the fix
  must fail these`, `mutation check`, `should be denied`).

And one of the episode model's (issue 33, thirteenth round), read off the failing call of an episode:

- `error_experiment` (`experiment`): the failing call was an experiment or a survey rather than a check of the
  project: the command prints its own headings between its parts (`echo "=== current size ==="`,
  `print("--- does recorded data leak real identity? ---")`: each part's answer, a failing one too, is what
  the agent wanted to see), or it puts back what it changed (`restores`), or its output ends on a passing run
  (`ok  pkg 0.1s`, `PASS`, `3 passed`: a break-and-restore run whose last check passed again).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from recall_agent.capture import output

_ANSWER_ERROR = re.compile(
    r"(?i)\bHTTP/\d(?:\.\d)? [45]\d\d\b|\bHTTP [45]\d\d\b"
    r"|\b(?:status(?:[ _]?code)?|response status)[\"']?\s{0,3}[:=]\s{0,3}[45]\d\d\b"
    r"|\b[45]\d\d (?:Client|Server) Error\b"
    r"|<title>(?:Error|[45]\d\d\b)"
    r"|^<pre>Cannot (?:GET|POST|PUT|PATCH|DELETE) "
    r"|^curl: (?:\(\d{1,3}\)|option\b)"
    r"|^\s{0,8}\{?\s{0,4}\"errors?\"\s{0,4}:"
    r"|^\s{0,8}(?:\w{1,40})?Error:?\s{0,4}\{\s{0,4}$",
    re.MULTILINE,
)
_RESTORES = re.compile(
    r"(?i)\brestor(?:e|ed|ing)\b|\.(?:bak|orig)\b|\bgit stash pop\b|\bgit checkout -- |\bgit restore\b"
)
_EXPECTS_FAILURE = re.compile(
    r"(?i)\b(?:must|should|expect(?:ed|ing)?|will|to make sure it|to confirm it|to verify it|to check it)"
    r"(?: (?:it|this|that|they|these))?(?: (?:to|now|still|also))?(?: be)? \*{0,2}"
    r"(?:fail|fails|failing|error|errors|break|breaks|rejected|denied|refused|blocked|caught)\b"
    r"|\bmutation (?:check|test)|\bdeliberately\b|\bon purpose\b|\bintentionally\b|\bnegative test\b"
    r"|\brevert(?:ing)? the fix\b"
)
WORDS_MAX = 4000  # characters of the agent's words looked at (its last message before the call)


def answer_error(text: str, background: Collection[int]) -> bool:
    """A line of the output, not printed by a passing run before, is a service's error answer."""
    return any(output.fold(_line_at(text, m.start())) not in background for m in _ANSWER_ERROR.finditer(text))


def _line_at(text: str, at: int) -> str:
    """The line of `text` around offset `at`."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)]


# a heading the command prints between its parts: `echo "=== x ==="`, `printf '--- x ---\\n'`, `print("### x")`
_HEADING = re.compile(
    r"""(?:^|[;&|({\s])\s{0,4}(?:echo|printf|Write-Host|print\(\s{0,4}f?)\s{0,4}(?:-[a-zA-Z]{1,3}\s{1,4})?"""
    r"""["']?\s{0,4}(?:={3,}|-{3,}|#{3,}|\*{3,}|>{3,})"""
)
# a passing run's last line: go test's `ok  pkg 0.1s`, `PASS`, pytest's `3 passed in 0.2s`, `All tests passed`
_ENDS_PASSING = re.compile(
    r"(?i)^\s{0,8}(?:ok\s+\S|PASS\s*$|PASS\b[:\s])|\b\d+ passed\b|\ball tests? passed\b"
)


def headings(command: str) -> bool:
    """The command prints its own headings between its parts (a survey of several answers)."""
    return bool(_HEADING.search(command))


def ends_passing(lines: list[str]) -> bool:
    """The output's last line (an `Exit code N` line left out) reports a passing run, and no failure."""
    rows = [ln for ln in lines if not output.is_exit_code_line(ln)]
    last = rows[-1] if rows else ""
    return bool(_ENDS_PASSING.search(last)) and not output.is_error_line(last) and "fail" not in last.lower()


def experiment(command: str, lines: list[str]) -> bool:
    """The failing call was an experiment or a survey, not a check of the project (module docstring)."""
    return headings(command) or restores(command) or ends_passing(lines)


def restores(command: str) -> bool:
    return bool(_RESTORES.search(command))


def expects_failure(words: str) -> bool:
    return bool(_EXPECTS_FAILURE.search(words[-WORDS_MAX:]))


def run_cues(text: str, command: str, background: Collection[int], expects: bool) -> dict[str, float]:
    """The run model's cues of one run (`expects`: the agent's words before it expected a failure)."""
    return {
        "answer_error": float(answer_error(text, background)),
        "restores": float(restores(command)),
        "expects_failure": float(expects),
    }
