"""The task a user's prompt asks for, as one bounded line: the key of a task learning (`engine._task`).

A prompt is untrusted text. Only its task line is kept, never the whole prompt: a bug report's title or
its first meaningful sentence (`problem_statement: Add get_response_async for ASGIStaticFilesHandler`
gives `Add get_response_async for ASGIStaticFilesHandler`), at most TASK_MAX characters, cut at a word.
Skipped on the way: code blocks, quotes, markup tags (`<command-name>`, `<system-reminder>`), a lead-in
that ends with `:` (`Fix this bug to solve the issue based on manual.yaml:`), `key: value` lines whose
value is one word (`instance_id: x`, `base_commit: 4652f1f`), and lines of fewer than TASK_WORDS words
(`Description`, `go on`). A prompt with no such line (an answer, "continue", a slash command) has no task.
The line is redacted and escaped like every stored text when the learning is built (`learning.build`).
"""

from __future__ import annotations

import re

TASK_MAX = 160  # characters of a task line
TASK_WORDS = 3  # a task says at least this much (`Fix slugify dashes`); `go on` and `yes please` do not
TASK_LINES = 60  # lines of a prompt looked at (the title comes first)

_FENCE = ("```", "~~~")
_KEY = re.compile(r"^[A-Za-z][\w-]{0,40}:\s")  # `problem_statement: …`, `Title: …`
_MARKUP = re.compile(r"^[#>*+\-\s]{0,12}")  # heading, quote, list markers and bold before the text
# what Claude Code writes as the user for itself: a slash command's echo, a local command's caveat
_NOT_TYPED = re.compile(r"^\s{0,4}(?:<[a-z][\w-]{0,40}>|\[Request interrupted|Caveat: )")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def task_line(text: str) -> str | None:
    """The prompt's task line, or None when it asks for no task of its own."""
    if _NOT_TYPED.match(text):
        return None
    fenced = False
    for raw in text.splitlines()[:TASK_LINES]:
        if raw.lstrip().startswith(_FENCE):
            fenced = not fenced
            continue
        line = raw.strip()
        if fenced or not line or line.startswith(("<", ">", "|")) or line.endswith(":"):
            continue
        key = _KEY.match(line)
        if key:
            line = line[key.end() :].strip()
            if len(line.split()) < 2:
                continue  # `instance_id: x`, `repo: django/django`: a field, not the task
        line = _MARKUP.sub("", line).replace("**", "").strip()
        if len(line.split()) < TASK_WORDS:
            continue
        return _first_sentence(line)
    return None


def _first_sentence(line: str) -> str:
    end = _SENTENCE_END.search(line)
    if end and end.start() >= 20:
        line = line[: end.start() + 1]
    if len(line) <= TASK_MAX:
        return line
    cut = line[: TASK_MAX - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
