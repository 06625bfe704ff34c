"""Claude Code session transcripts, read as a stream of tool calls, tool results and agent words.

A transcript (`~/.claude/projects/<folder>/<session>.jsonl`) is JSON Lines: `user` entries (prompts, and
`tool_result` blocks), `assistant` entries (`text`, `thinking` and `tool_use` blocks; one reply is written
as several lines sharing `message.id`), and entries recall has no use for (`system`, `summary`,
`attachment`, `progress`, `file-history-snapshot`, `queue-operation`, titles, and whatever types newer
clients add). Subagents write their own files (`agent-*.jsonl` beside the sessions in older versions,
`<session>/subagents/*.jsonl` in newer ones) or sidechain entries (`isSidechain`), which are read as
streams of their own.

What real files hold and how it is met:
- very large files (tool results carry whole files, images as base64): read line by line, never whole;
  lines of tools whose results do not matter (Read, Grep, ...) and successful edits are decided from
  their bytes without being parsed; a line over `MAX_LINE` bytes is skipped;
- a partial last line (a session still being written, a crash), lines that are not JSON objects: skipped
  and counted;
- `/compact` re-appending earlier messages (same `uuid`), a resumed session repeating its history:
  entries and tool results already seen are skipped;
- tool results that are images or structured objects: their text blocks are the text;
- results the harness wrote rather than the tool (the user declined or interrupted, a permission was
  missing, a `<tool_use_error>` about the call itself): neither a failure nor a success, except a shell
  command the client refused as written (`Blocked: sleep 90 followed by: ...`): a failure of that command;
- a command started in the background (`run_in_background`): its own result is only its shell's id; a poll
  of that shell (BashOutput, TaskOutput) that shows how it ended, or what it printed while it runs, is read
  as the result of the command (the poll is never flagged an error: its text holds the exit code).

Reading can resume where an earlier read stopped (`Transcript(path, start=offset, calls=...)`): the hooks
read a live session's new lines at every Stop. A last line without its newline (still being written) is
left for the next read; `end` is the offset after the last line read, `pending()` the calls still waiting
for their results, which the next read needs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

MAX_LINE = 64 * 1024 * 1024
# tools whose results never matter to the capture rules: their failures are about using the tool and
# their successes resolve nothing (see recall_agent.hooks.events)
_QUIET_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "TodoWrite", "Task", "Agent", "ExitPlanMode"})
_FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# quiet tools that look at a path: a path that does not exist is a failure the capture rules keep (and a
# later success of the tool may show it fixed), so their errors are parsed and their successes announced
PATH_TOOLS = frozenset({"Read", "Glob", "Grep", "LS"})
_MISSING_PATH = re.compile(r"(?:Path|File|Directory) does not exist")
_RESULT_IDS = re.compile(rb'"tool_use_id":\s*"([^"\\]{1,200})"')
_IS_ERROR = re.compile(rb'"is_error":\s*true')
_CONVERSATION = (b'{"type":"user"', b'{"type":"assistant"')
_NOT_TOOL_OUTPUT = (
    "The user doesn't want to",
    "[Request interrupted by user",
    "Permission to use ",
    "Claude requested permissions",
    "This command requires approval",
    "<tool_use_error>",
    "Cancelled: parallel tool call",
)


@dataclass
class Call:
    """A `tool_use` block: what the agent asked for."""

    id: str
    name: str
    input: dict[str, Any]
    stream: str


@dataclass
class Result:
    """The `tool_result` of a call (`text` None when the line was decided without parsing it)."""

    call: Call
    is_error: bool
    text: str | None = None
    response: dict[str, Any] | None = None  # the entry's `toolUseResult` when it is an object
    interrupted: bool = False
    ts: float | None = None
    cwd: str | None = None
    raw: bytes | None = None  # a successful edit's line, parsed only when asked (`details()`)

    def details(self) -> dict[str, Any]:
        """The `toolUseResult` object of the line (an edit's `originalFile`, `structuredPatch`), parsing
        the raw line on first use; {} when there is none."""
        if self.response is None and self.raw is not None:
            try:
                entry = json.loads(self.raw)
            except (ValueError, RecursionError):
                entry = None
            found = entry.get("toolUseResult") if isinstance(entry, dict) else None
            self.response = found if isinstance(found, dict) else {}
            if isinstance(entry, dict):
                self.ts = self.ts if self.ts is not None else parse_time(entry.get("timestamp"))
            self.raw = None
        return self.response or {}


@dataclass
class Said:
    """Agent text of one transcript line (a reply may span several lines with the same `message_id`)."""

    stream: str
    message_id: str | None
    text: str
    ts: float | None


@dataclass
class Prompt:
    """A prompt the user typed: the previous turn has ended (the hooks' Stop fired there). `text` is what
    the user wrote (a bug report may quote the error it is about), `id` the entry's id."""

    stream: str
    text: str = ""
    id: str = ""


Step = Call | Result | Said | Prompt


@dataclass
class Stats:
    lines: int = 0
    parsed: int = 0
    bad_lines: int = 0  # not JSON, not an object, or too long
    partial: bool = False  # the file ends in a line without its newline (left for the next read)
    duplicates: int = 0
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    first_ts: float | None = None
    last_ts: float | None = None


@dataclass
class Transcript:
    """One transcript file read as steps from `start`; `stats` and `end` fill while `steps()` runs."""

    path: Path
    start: int = 0
    calls: dict[str, Call] = field(default_factory=dict)  # calls read before `start` still awaiting results
    stats: Stats = field(default_factory=Stats)
    end: int = 0
    _answered: set[str] = field(default_factory=set)
    _uuids: set[str] = field(default_factory=set)

    def steps(self) -> Iterator[Step]:
        """Steps in file order. Raises OSError when the file cannot be read."""
        self.end = self.start
        with open(self.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if self.start > size:  # the file was replaced or truncated: read it again from the top
                self.start = self.end = 0
            fh.seek(self.start)
            for line, end in _lines(fh, self.stats, self.start):
                self.end = end
                yield from self._line(line)

    def pending(self, limit: int = 200) -> list[Call]:
        """Calls whose results were not read yet (the newest `limit`)."""
        waiting = [c for c in self.calls.values() if c.id not in self._answered]
        return waiting[-limit:]

    def _line(self, line: bytes) -> Iterator[Step]:
        if line.startswith(b'{"type":"') and not line.startswith(_CONVERSATION):
            return  # bookkeeping entries written type-first (api-request-blob, snapshots, queue, costs)
        has_result = b'"tool_result"' in line
        if has_result:
            settled = self._settled_unparsed(line)
            if settled is not None:
                yield from settled
                return
        if not (has_result or b'"tool_use"' in line or b'"text"' in line or b'"user"' in line):
            return  # snapshots, progress, attachments, summaries: nothing recall uses
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, cut off, or nested past the parser's depth
            self.stats.bad_lines += 1
            return
        if not isinstance(entry, dict):
            self.stats.bad_lines += 1
            return
        self.stats.parsed += 1
        yield from self._entry(entry)

    def _settled_unparsed(self, line: bytes) -> list[Result] | None:
        """Results of quiet tools, and successful edits, are settled from the raw line: parsing a line that
        carries a whole file (Read's content, Edit's `originalFile`) is most of the cost of a transcript.
        None: the line must be parsed."""
        ids = [m.decode("utf-8", "replace") for m in _RESULT_IDS.findall(line)]
        calls = [self.calls.get(i) for i in ids]
        if not ids or any(c is None or c.id in self._answered for c in calls):
            return None
        names = {c.name for c in calls if c}
        if names <= _QUIET_TOOLS:
            if names & PATH_TOOLS and _IS_ERROR.search(line):
                return None  # a path that does not exist: parsed (a short line)
            self._answered.update(ids)
            return [Result(call=c, is_error=False) for c in calls if c and c.name in PATH_TOOLS]
        if names <= _FILE_TOOLS and not _IS_ERROR.search(line) and len(ids) == 1 and calls[0]:
            self._answered.update(ids)
            return [Result(call=calls[0], is_error=False, raw=line)]
        return None

    def _entry(self, entry: dict[str, Any]) -> Iterator[Step]:
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            if uuid in self._uuids:
                self.stats.duplicates += 1
                return
            self._uuids.add(uuid)
        kind = entry.get("type")
        if kind not in ("user", "assistant"):
            return
        self._note_context(entry)
        stream = _stream(entry)
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "assistant":
            yield from self._assistant(entry, content, stream)
        else:
            yield from self._user(entry, content, stream)

    def _note_context(self, entry: dict[str, Any]) -> None:
        st = self.stats
        sid, cwd, branch = entry.get("sessionId"), entry.get("cwd"), entry.get("gitBranch")
        if isinstance(sid, str) and sid and not st.session_id:
            st.session_id = sid
        if isinstance(cwd, str) and cwd and not st.cwd:
            st.cwd = cwd
        if isinstance(branch, str) and branch:
            st.branch = None if branch == "HEAD" else branch  # detached, or not a repository
        ts = parse_time(entry.get("timestamp"))
        if ts is not None:
            st.first_ts = ts if st.first_ts is None else min(st.first_ts, ts)
            st.last_ts = ts if st.last_ts is None else max(st.last_ts, ts)

    def _assistant(self, entry: dict[str, Any], content: object, stream: str) -> Iterator[Step]:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        message = entry.get("message")
        message_id = message.get("id") if isinstance(message, dict) else None
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                name = block.get("name")
                tool_input = block.get("input")
                call = Call(
                    block["id"],
                    name if isinstance(name, str) else "",
                    tool_input if isinstance(tool_input, dict) else {},
                    stream,
                )
                self.calls.setdefault(call.id, call)
                yield call
        text = "\n".join(t for t in texts if t.strip())
        synthetic = entry.get("isApiErrorMessage") is True or (
            isinstance(message, dict) and message.get("model") == "<synthetic>"
        )
        if text and not synthetic:
            mid = message_id if isinstance(message_id, str) else None
            yield Said(stream, mid, text, parse_time(entry.get("timestamp")))

    def _user(self, entry: dict[str, Any], content: object, stream: str) -> Iterator[Step]:
        if isinstance(content, str):
            if not entry.get("isMeta") and not entry.get("isCompactSummary"):
                yield _prompt(entry, content, stream)
            return
        if not isinstance(content, list):
            return
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if not results:
            if not entry.get("isMeta") and not entry.get("isCompactSummary"):
                yield _prompt(entry, result_text(content), stream)
            return
        response = entry.get("toolUseResult")
        for block in results:
            result = self._result(block, response if len(results) == 1 else None, entry)
            if result:
                yield result

    def _result(self, block: dict[str, Any], response: object, entry: dict[str, Any]) -> Result | None:
        tid = block.get("tool_use_id")
        call = self.calls.get(tid) if isinstance(tid, str) else None
        if call is None or call.id in self._answered:
            return None  # a result without its call (cut off), or one already read (a replayed copy)
        self._answered.add(call.id)
        text = result_text(block.get("content"))
        interrupted = isinstance(response, dict) and response.get("interrupted") is True
        if call.name == "Bash" and text.startswith(_LAUNCHED):
            self._launched(call, text, response)
            return None  # the command runs on: its outcome is the poll's (`_polled`)
        if call.name in _POLLS:
            return self._polled(call, text, entry)
        missing_path = call.name in PATH_TOOLS and _MISSING_PATH.search(text[:300]) is not None
        if missing_path or _refused_command(call, text):
            text = text.replace("<tool_use_error>", "").replace("</tool_use_error>", "").strip()
        elif text.lstrip().startswith(_NOT_TOOL_OUTPUT) or "<tool_use_error>" in text[:200]:
            return None
        return Result(
            call=call,
            is_error=block.get("is_error") is True,
            text=text,
            response=response if isinstance(response, dict) else None,
            interrupted=interrupted,
            ts=parse_time(entry.get("timestamp")),
            cwd=entry.get("cwd") if isinstance(entry.get("cwd"), str) else None,
        )

    def _launched(self, call: Call, text: str, response: object) -> None:
        """A command started in the background: kept with the calls awaiting results, under its shell's id,
        so that a later read (the hooks read a live session in pieces) still knows what a poll of it ran."""
        shell = response.get("backgroundTaskId") if isinstance(response, dict) else None
        if not isinstance(shell, str):
            shell = text[len(_LAUNCHED) :].split(".", 1)[0].strip()
        command = call.input.get("command")
        if shell and isinstance(command, str):
            key = _BACKGROUND + shell[:100]
            self.calls.setdefault(key, Call(key, "Bash", {"command": command}, call.stream))

    def _polled(self, call: Call, text: str, entry: dict[str, Any]) -> Result | None:
        """A poll of a background command (BashOutput, TaskOutput) that shows how it ended, or what it printed
        while it runs (a server's first lines): a run of that command, as its own call would have been. One
        run while it runs: BashOutput shows the lines printed so far at every look (a server polled three
        times printed its `ready` line once); its end is read after it only when it failed."""
        shell = call.input.get("bash_id") or call.input.get("task_id") or call.input.get("shell_id")
        launched = self.calls.get(_BACKGROUND + shell[:100]) if isinstance(shell, str) else None
        if launched is None or launched.id in self._answered:
            return None  # not started in this transcript, or its end already read
        status, code, kind = (_tag(text, name) for name in ("status", "exit_code", "task_type"))
        parts = ("output",) if call.name == "TaskOutput" else ("stdout", "stderr")
        output = "\n".join(filter(None, (_tag(text, name) for name in parts)))
        if kind not in ("", "local_bash") or status not in ("completed", "failed", "running"):
            return None  # an agent's task, or a shell the agent killed
        failed = status == "failed" or code not in ("", "0")
        shown = launched.input.get("shown") is True  # a poll while it ran was read already
        if status != "running":
            self._answered.add(launched.id)
            if shown and not failed:
                return None  # it ended as it ran: the run was read with the poll that showed it running
        elif shown or not output.strip():
            return None  # one run while it runs: a later look (the same lines again, or more) is no new run
        else:
            self.calls[launched.id] = Call(
                launched.id, "Bash", {**launched.input, "shown": True}, launched.stream
            )
        return Result(
            call=Call(call.id, "Bash", {"command": launched.input.get("command")}, call.stream),
            is_error=failed,
            text=f"Exit code {code}\n{output}" if failed and code else output,
            ts=parse_time(entry.get("timestamp")),
            cwd=entry.get("cwd") if isinstance(entry.get("cwd"), str) else None,
        )


def _tag(text: str, name: str) -> str:
    """The text inside `<name>…</name>` of a poll's result ("" when absent), read with str.find: the
    output inside may be megabytes."""
    start = text.find(f"<{name}>")
    if start < 0:
        return ""
    start += len(name) + 2
    end = text.find(f"</{name}>", start)
    return text[start : end if end >= 0 else len(text)].strip("\n")


# a command started with run_in_background: its result is only the shell's id (`… with ID: bash_1`, or
# `… with ID: b695513. Output is being written to: …`), its outcome comes with a poll of that id
_LAUNCHED = "Command running in background with ID:"
_POLLS = frozenset({"BashOutput", "TaskOutput"})
_BACKGROUND = "background:"  # the key of a background command awaiting its end, among the pending calls


def _prompt(entry: dict[str, Any], text: str, stream: str) -> Prompt:
    uuid = entry.get("uuid")
    return Prompt(stream, text[:PROMPT_MAX], uuid[:200] if isinstance(uuid, str) else "")


PROMPT_MAX = 200_000  # characters of a prompt kept (a pasted log); the engine reads its error lines


def _refused_command(call: Call, text: str) -> bool:
    """A shell command the client refused to run as written (`Blocked: sleep 90 followed by: gh pr checks`):
    a failure of that command, which the same check run another way (without the `sleep`) fixes."""
    return call.name == "Bash" and text.lstrip().startswith(_REFUSED)


_REFUSED = "<tool_use_error>Blocked:"


def _lines(fh: BinaryIO, stats: Stats, offset: int) -> Iterator[tuple[bytes, int]]:
    """(line, offset after it); a last line without its newline is not read (it may still be written)."""
    while True:
        line = fh.readline(MAX_LINE)
        if not line:
            return
        if len(line) >= MAX_LINE and not line.endswith(b"\n"):
            while (more := fh.readline(MAX_LINE)) and not more.endswith(b"\n"):
                pass  # the rest of an oversized line
            offset = fh.tell()
            stats.lines += 1
            stats.bad_lines += 1
            continue
        if not line.endswith(b"\n"):
            if line.strip():  # counted as bad: an import never sees the rest; a live read gets it next time
                stats.partial = True
                stats.bad_lines += 1
            return
        offset += len(line)
        stats.lines += 1
        if line.strip():
            yield line, offset


def _stream(entry: dict[str, Any]) -> str:
    if entry.get("isSidechain") is True:
        agent = entry.get("agentId")
        return f"side:{agent}" if isinstance(agent, str) else "side"
    return "main"


def result_text(content: object) -> str:
    """The text of a tool result: a string, or the text blocks of a list (images and objects skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"]
        ]
        return "\n".join(parts)
    return ""


def parse_time(value: object) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
