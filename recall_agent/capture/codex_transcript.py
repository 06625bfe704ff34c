"""Codex CLI rollouts, read as the same steps the Claude Code reader yields (`transcript.py`), for the one
capture engine (`engine.py`).

A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, newer versions also `.jsonl.zst`)
is JSON Lines of `{"timestamp", "type", "payload"}`:

- `session_meta` (the session's id, `cwd`, `git.branch`), `turn_context` (the turn's `cwd`);
- `response_item`: what the model saw. `function_call` / `custom_tool_call` / `local_shell_call` and their
  `function_call_output` / `custom_tool_call_output` (same `call_id`); `message` (role `assistant`: the
  agent's words; role `user`: a prompt or injected context); `reasoning` (skipped);
- `event_msg`: what the client showed (`user_message`, `agent_message`, `exec_command_end` with the exit
  code, `patch_apply_end` with each file's `unified_diff`, `task_complete`, `token_count`, ...);
- `compacted`, `world_state` and whatever newer clients add: skipped.

How a call becomes a step:

- a shell call (`exec_command {cmd}`, `shell {command: [argv]}`, `shell_command {command}`,
  `local_shell_call`, or a code-mode `exec` cell that runs exactly one `tools.exec_command`) is a `Bash`
  call whose result is its output; it failed when its exit code (`Process exited with code N`,
  `Exit code: N`, `"exit_code": N`, `exec_command_end`) is not 0. A command still running
  (`Process running with session ID N`) gets its result from the `write_stdin` call that reports its exit.
- an `apply_patch` (the call's patch, or the `changes` of a `patch_apply_end` of a code-mode cell) is one
  `Edit` per updated file (old and new side of its hunks; the hunks with the patch's `@@ header` line stand
  in for Claude Code's `originalFile`, so the function around the change is found the same way), a `Write`
  per added file.

`CodexRollout(path, start=offset, calls=...)` reads from an offset like `Transcript`: the Stop hook reads a
live rollout's new lines. A compressed rollout is read through `zstandard` from its start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from recall_agent.capture.codex_patch import changes_of_event, edit_steps, parse_patch
from recall_agent.capture.transcript import (
    MAX_LINE,
    PROMPT_MAX,
    Call,
    Prompt,
    Result,
    Said,
    Stats,
    Step,
    _lines,
    parse_time,
    result_text,
)

SHELL_FUNCTIONS = frozenset({"exec_command", "shell", "shell_command", "container.exec", "local_shell"})
PATCH_TOOLS = frozenset({"apply_patch"})
_EXIT = re.compile(r"(?:Process exited with code|Exit code:|\"exit_code\":|EXIT=|exit code) ?(-?\d{1,4})\b")
_RUNNING = re.compile(r"Process running with session ID (\d{1,12})|\"session_id\":(\d{1,12}),")
_CELL_POLL = re.compile(r"tools\.write_stdin\(\{\s*\"?session_id\"?\s*:\s*(\d{1,12})")
_ONE_EXEC = re.compile(r"tools\.exec_command\(\{\s*\"?cmd\"?\s*:\s*(\"(?:[^\"\\]|\\.){0,20000}\")")
_HEADER_END = "\nOutput:\n"
READ_KEPT = 2000  # characters of a successful read-only command's output kept (`_ends`)
READ_LINES = 10
MAX_HELD = 5000  # steps held back while a command runs (its result is placed before them)
# lines that cannot matter, decided from their start without parsing them
_SKIP = (
    b'"type":"event_msg","payload":{"type":"token_count"',
    b'"type":"response_item","payload":{"type":"reasoning"',
    b'"type":"event_msg","payload":{"type":"agent_reasoning"',
    b'"type":"world_state"',
    b'"type":"compacted"',
)
_WANTED = (
    b"function_call", b"custom_tool_call", b"local_shell_call", b'"message"', b"patch_apply_end",
    b"session_meta", b"turn_context", b"user_message", b"UserMessage", b"exec_command_end",
    b"CommandExecution",
)  # fmt: skip


@dataclass
class _Slot:
    """Where a command that was still running when its output came ran (its result fills it later)."""

    call_id: str


@dataclass
class CodexRollout:
    """One rollout file read as steps from `start`; the same surface as `transcript.Transcript`."""

    path: Path
    start: int = 0
    calls: dict[str, Call] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)
    end: int = 0
    _answered: set[str] = field(default_factory=set)
    _running: dict[str, str] = field(default_factory=dict)  # exec session id -> the call still running
    _exits: dict[str, int] = field(default_factory=dict)  # call id -> exit code from exec_command_end
    _patched: set[str] = field(default_factory=set)  # apply_patch calls read from their patch text
    _late: set[str] = field(default_factory=set)  # running calls whose result is being yielded
    _held: list[Step | _Slot] = field(default_factory=list)  # steps after a running call, until it ends

    def steps(self) -> Iterator[Step]:
        self.end = self.start
        with _open(self.path) as fh:
            if self.start:
                if self.path.suffix == ".zst":
                    _skip(fh, self.start)
                else:
                    size = fh.seek(0, 2)
                    if self.start > size:
                        self.start = self.end = 0
                    fh.seek(self.start)
            for line, end in _lines(fh, self.stats, self.start):
                self.end = end
                for step in self._line(line):
                    yield from self._in_order(step)
        # the file ends while a command still runs: what came after it is read now, its result (if any) later
        yield from (h for h in self._held if not isinstance(h, _Slot))
        self._held = []

    def _in_order(self, step: Step | _Slot) -> Iterator[Step]:
        """A command still running when its output came leaves a slot where it ran; the steps after it are
        held until its result fills the slot (its end comes later: a poll, or the client's end event), so
        that the result lands before the edits that fixed it, as the engine needs."""
        held = self._held
        if isinstance(step, Result) and step.call.id in self._late:
            self._late.discard(step.call.id)
            at = next(
                (i for i, h in enumerate(held) if isinstance(h, _Slot) and h.call_id == step.call.id), None
            )
            if at is None:
                held.append(step)
            else:
                held[at] = step
        else:
            held.append(step)
        if len(held) > MAX_HELD:  # a command that never says it ended: give up its slot
            at = next(i for i, h in enumerate(held) if isinstance(h, _Slot))
            del held[at]
        while held and not isinstance(held[0], _Slot):
            yield held.pop(0)  # type: ignore[misc]

    def pending(self, limit: int = 200) -> list[Call]:
        waiting = [c for c in self.calls.values() if c.id not in self._answered]
        return waiting[-limit:]

    def _line(self, line: bytes) -> Iterator[Step | _Slot]:
        head = line[:120]
        if any(s in head for s in _SKIP) or not any(w in line for w in _WANTED):
            return
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            self.stats.bad_lines += 1
            return
        if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
            self.stats.bad_lines += 1
            return
        self.stats.parsed += 1
        ts = parse_time(entry.get("timestamp"))
        self._note_time(ts)
        kind, payload = entry.get("type"), entry["payload"]
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context":
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd and not self.stats.cwd:
                self.stats.cwd = cwd
        elif kind == "response_item":
            yield from self._item(payload, ts)
        elif kind == "event_msg":
            yield from self._event(payload, ts)

    def _note_time(self, ts: float | None) -> None:
        st = self.stats
        if ts is not None:
            st.first_ts = ts if st.first_ts is None else min(st.first_ts, ts)
            st.last_ts = ts if st.last_ts is None else max(st.last_ts, ts)

    def _meta(self, payload: dict[str, Any]) -> None:
        st = self.stats
        sid = payload.get("id") or payload.get("session_id")
        if isinstance(sid, str) and sid and not st.session_id:
            st.session_id = sid
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd and not st.cwd:
            st.cwd = cwd
        git = payload.get("git")
        branch = git.get("branch") if isinstance(git, dict) else None
        if isinstance(branch, str) and branch and branch != "HEAD":
            st.branch = branch

    # ------------------------------------------------------------------ response items

    def _item(self, p: dict[str, Any], ts: float | None) -> Iterator[Step | _Slot]:
        kind = p.get("type")
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            yield from self._call(p)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            yield from self._output(p, ts)
        elif kind == "message" and p.get("role") == "assistant":
            text = "\n".join(_texts(p.get("content")))
            if text.strip():
                yield Said("main", p.get("id") if isinstance(p.get("id"), str) else None, text, ts)

    def _call(self, p: dict[str, Any]) -> Iterator[Step]:
        cid = p.get("call_id") or p.get("id")
        if not isinstance(cid, str) or not cid or cid in self.calls:
            return
        name = str(p.get("name") or ("local_shell" if p.get("type") == "local_shell_call" else ""))
        command = _shell_command(name, p)
        if command is not None:
            call = Call(cid, "Bash", {"command": command}, "main")
        elif name in PATCH_TOOLS:
            call = Call(cid, "apply_patch", {"patch": _patch_text(p)}, "main")
        elif name in ("write_stdin", "wait"):
            call = Call(cid, name, _arguments(p), "main")
        elif name == "exec" and (poll := _CELL_POLL.search(str(p.get("input") or ""))):
            call = Call(cid, "write_stdin", {"session_id": int(poll.group(1))}, "main")
        else:
            call = Call(cid, name, {}, "main")
        self.calls[cid] = call
        if call.name == "Bash":
            yield call

    def _output(self, p: dict[str, Any], ts: float | None) -> Iterator[Step | _Slot]:
        cid = p.get("call_id")
        call = self.calls.get(cid) if isinstance(cid, str) else None
        if call is None or call.id in self._answered:
            return
        self._answered.add(call.id)
        text = "\n".join(_texts(p.get("output")))
        if call.name == "apply_patch":
            if _exit_code(text) in (None, 0) and "verification failed" not in text[:300]:
                self._patched.add(call.id)
                yield from edit_steps(call, parse_patch(str(call.input.get("patch") or "")), ts)
            return
        if call.name in ("write_stdin", "wait"):
            yield from self._continued(call, text, ts)
            return
        if call.name != "Bash":
            return
        running = _RUNNING.search(text[:400])
        if running and _exit_code(text) is None:
            # its exit comes with a later write_stdin
            self._running[running.group(1) or running.group(2)] = call.id
            self._answered.discard(call.id)
            self.calls[call.id].input["_output"] = _body(text)
            yield _Slot(call.id)
            return
        yield _result(call, text, self._exits.pop(call.id, None), ts)

    def _continued(self, poll: Call, text: str, ts: float | None) -> Iterator[Step]:
        """A `write_stdin` / `wait` that reports the exit of a command started earlier: its result."""
        sid = str(poll.input.get("session_id") or poll.input.get("cell_id") or "")
        cid = self._running.get(sid)
        call = self.calls.get(cid) if cid else None
        if call is None:
            return
        call.input["_output"] = (str(call.input.get("_output") or "") + _body(text))[-200_000:]
        code = _exit_code(text)
        if code is None:
            return
        del self._running[sid]
        self._answered.add(call.id)
        self._late.add(call.id)
        out = str(call.input.pop("_output", ""))
        yield Result(call=call, is_error=code != 0, text=_with_exit(out, code), ts=ts, cwd=None)

    # ------------------------------------------------------------------ events

    def _ended(self, done: dict[str, Any], ts: float | None) -> Iterator[Step]:
        """A command's end as the client recorded it (`exec_command_end`, `item_completed`): the exit code
        of a call whose output comes next, or the result of one still running when its output came."""
        cid = done.get("call_id") or done.get("id")
        code = done.get("exit_code")
        if not isinstance(cid, str) or not isinstance(code, int) or cid in self._answered:
            return
        running = next((sid for sid, c in self._running.items() if c == cid), None)
        call = self.calls.get(cid)
        if running is None or call is None:
            self._exits[cid] = code
            return
        del self._running[running]
        self._answered.add(cid)
        self._late.add(cid)
        seen = str(call.input.pop("_output", ""))
        full = done.get("aggregated_output")
        out = full if isinstance(full, str) and len(full) >= len(seen) else seen
        yield Result(call=call, is_error=code != 0, text=_with_exit(out, code) if code else out, ts=ts)

    def _event(self, p: dict[str, Any], ts: float | None) -> Iterator[Step]:
        kind = p.get("type")
        item = p.get("item")
        if kind == "user_message" or (
            kind == "item_completed" and isinstance(item, dict) and item.get("type") == "UserMessage"
        ):
            said = p.get("message") if kind == "user_message" else (item or {}).get("content")
            yield Prompt("main", result_text(said)[:PROMPT_MAX])
        elif kind == "exec_command_end" or (
            kind == "item_completed" and isinstance(item, dict) and item.get("type") == "CommandExecution"
        ):
            yield from self._ended(p if kind == "exec_command_end" else item, ts)
        elif kind == "patch_apply_end":
            cid = p.get("call_id")
            if p.get("success") is False or not isinstance(cid, str) or cid in self._patched:
                return
            if isinstance(cid, str) and self.calls.get(cid) is not None and cid not in self._answered:
                return  # its apply_patch call's output comes next and carries the patch with its headers
            self._patched.add(cid)
            changes = p.get("changes")
            if isinstance(changes, dict):
                call = Call(cid, "apply_patch", {}, "main")
                yield from edit_steps(call, changes_of_event(changes), ts)


# ---------------------------------------------------------------------- shell calls


def _arguments(p: dict[str, Any]) -> dict[str, Any]:
    raw = p.get("arguments")
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _shell_command(name: str, p: dict[str, Any]) -> str | None:
    """The command line of a shell call, or None when the call is not one."""
    if p.get("type") == "local_shell_call":
        action = p.get("action")
        argv = action.get("command") if isinstance(action, dict) else None
        return _argv_command(argv)
    if p.get("type") == "custom_tool_call" and name == "exec":
        return _code_cell_command(str(p.get("input") or ""))
    if name not in SHELL_FUNCTIONS:
        return None
    args = _arguments(p)
    value = args.get("cmd") if name == "exec_command" else args.get("command")
    if isinstance(value, list):
        return _argv_command(value)
    return value if isinstance(value, str) and value.strip() else None


def _argv_command(argv: object) -> str | None:
    """`["bash", "-lc", "pytest -q"]` -> `pytest -q`; any other argv joined with shell quoting."""
    import shlex

    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and argv[1] in ("-lc", "-c"):
        return argv[2]
    return shlex.join(argv)


def _code_cell_command(source: str) -> str | None:
    """A code-mode cell that runs exactly one shell command: that command."""
    if source.count("tools.exec_command(") != 1 or "tools.apply_patch" in source:
        return None
    m = _ONE_EXEC.search(source)
    if not m:
        return None
    try:
        value = json.loads(m.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) and value.strip() else None


def _patch_text(p: dict[str, Any]) -> str:
    """The patch of an apply_patch call: a custom tool's `input`, or a function's `input` / `patch`."""
    if isinstance(p.get("input"), str):
        return p["input"]
    args = _arguments(p)
    value = args.get("input") or args.get("patch")
    return value if isinstance(value, str) else ""


def _texts(content: object) -> list[str]:
    """The text of a message's content or a call's output (a string, or a list of text items)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):  # older `{"content": ..., "success": ...}` outputs
        inner = content.get("content")
        return _texts(inner) if inner is not None else []
    if isinstance(content, list):
        return [
            item["text"]
            for item in content
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"]
        ]
    return []


def _exit_code(text: str) -> int | None:
    structured = _structured(text)
    if structured is not None:
        code = (structured.get("metadata") or {}).get("exit_code")
        if isinstance(code, int):
            return code
    head = text[:400]
    m = _EXIT.search(head) or (_EXIT.search(text[-400:]) if len(text) > 400 else None)
    return int(m.group(1)) if m else None


def _structured(text: str) -> dict[str, Any] | None:
    """Older shell outputs: `{"output": "...", "metadata": {"exit_code": 1, ...}}`."""
    if not text.startswith('{"output"'):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("metadata"), dict) else None


def _body(text: str) -> str:
    """The command's output without Codex's header (chunk id, wall time, exit code, token count)."""
    structured = _structured(text)
    if structured is not None:
        return str(structured.get("output") or "")
    if text.startswith("Script completed\n"):  # a code-mode cell: what it printed
        rest = text.split("\n", 3)[-1] if text.count("\n") >= 3 else ""
        return "\n".join(_cell_printed(part) for part in rest.split("\n"))
    at = text.find(_HEADER_END, 0, 600)
    if at >= 0:
        return text[at + len(_HEADER_END) :]
    return text


def _cell_printed(part: str) -> str:
    """A code-mode cell prints a command's result as JSON (`text(JSON.stringify(r))`): its output."""
    if not part.startswith('{"') or '"output":' not in part:
        return part
    try:
        data = json.loads(part)
    except (ValueError, RecursionError):
        return part
    output = data.get("output") if isinstance(data, dict) else None
    return output if isinstance(output, str) else part


def _with_exit(body: str, code: int) -> str:
    """The output as the engine reads a Bash result: a failure says its exit code first, as Claude Code's
    results do (`Exit code 1`), so the same run model weighs the same evidence."""
    return f"Exit code {code}\n{body}" if code else body


def _result(call: Call, text: str, exit_code: int | None, ts: float | None) -> Result:
    code = exit_code if exit_code is not None else _exit_code(text)
    body = _body(text)
    if call.input.get("_output"):
        body = str(call.input.pop("_output")) + body
    failed = code is not None and code != 0
    if code == 0 and len(body) > READ_KEPT and _reads_only(str(call.input.get("command") or "")):
        body = _ends(body)
    return Result(call=call, is_error=failed, text=_with_exit(body, code) if failed else body, ts=ts)


def _reads_only(command: str) -> bool:
    """A command that only looks at things (`sed -n`, `cat`, `rg`, `ls`, `git show`: no check to run)."""
    from recall_agent.capture import commands

    return commands.parse(command).probe


def _ends(body: str) -> str:
    """The first and last lines of a read's output. Codex reads files with the shell (`sed -n 1,200p f`)
    where Claude Code has its Read tool, whose results the engine never weighs: a file's text read without
    error is neither an error nor background (a traceback quoting a line the agent had read must keep it),
    and weighing it line by line was most of the reading time."""
    lines = body.splitlines()
    if len(lines) <= 2 * READ_LINES:
        return body[:READ_KEPT]
    return "\n".join([*lines[:READ_LINES], "...", *lines[-READ_LINES:]])


# ---------------------------------------------------------------------- files


class _ZstdLines:
    """A decompressed `.zst` rollout with the `readline(limit)` the line reader needs."""

    def __init__(self, path: Path) -> None:
        import io

        import zstandard

        self._raw = open(path, "rb")  # noqa: SIM115 - closed in close()
        stream = zstandard.ZstdDecompressor().stream_reader(self._raw, read_across_frames=True)
        self._buf = io.BufferedReader(stream, buffer_size=1 << 20)  # type: ignore[arg-type]

    def readline(self, limit: int = -1) -> bytes:
        return self._buf.readline(limit)

    def read(self, n: int) -> bytes:
        return self._buf.read(n)

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> _ZstdLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open(path: Path) -> Any:
    return _ZstdLines(path) if path.suffix == ".zst" else open(path, "rb")  # noqa: SIM115


def _skip(fh: BinaryIO | _ZstdLines, n: int) -> None:
    while n > 0:
        chunk = fh.read(min(n, MAX_LINE))
        if not chunk:
            return
        n -= len(chunk)


def is_rollout(path: Path) -> bool:
    return path.name.startswith("rollout-") and path.name.endswith((".jsonl", ".jsonl.zst"))


def exit_code_of(path: Path, call_id: str, tail: int = 4 * 1024 * 1024) -> int | None:
    """The exit code of shell call `call_id` as the rollout has it so far (read from its last `tail`
    bytes): the `item_completed` CommandExecution or `exec_command_end` event Codex writes before the
    PostToolUse hook runs, or the call's output. None when the rollout does not say (yet)."""
    needle = call_id.encode()
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - tail))
            chunk = fh.read()
    except OSError:
        return None
    for line in reversed(chunk.split(b"\n")):
        if needle not in line:
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        p = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(p, dict):
            continue
        item = p.get("item") if isinstance(p.get("item"), dict) else {}
        if p.get("type") == "item_completed" and item.get("id") == call_id:
            code = item.get("exit_code")
        elif p.get("type") == "exec_command_end" and p.get("call_id") == call_id:
            code = p.get("exit_code")
        elif p.get("type") == "function_call_output" and p.get("call_id") == call_id:
            code = _exit_code("\n".join(_texts(p.get("output"))))
        else:
            continue
        if isinstance(code, int):
            return code
    return None
