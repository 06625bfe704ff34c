"""Write Claude Code session transcripts the way the client does (2.1.x layout), for tests and benchmarks.

Entry shapes follow transcripts the real client writes (fields seen in public transcripts and parsers of
them): every line carries `parentUuid`, `isSidechain`, `userType`, `entrypoint`, `cwd`, `sessionId`,
`version`, `gitBranch`, `type`, `uuid`, `timestamp`; an assistant reply is one line per content block
sharing `message.id`; a tool result is a `user` line with a `tool_result` block, `toolUseResult` (an object
for successes, `"Error: ..."` for failures) and `sourceToolAssistantUUID`. A failed Bash call's result
reads `Exit code N` then the output, with `is_error: true`.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


class TranscriptWriter:
    def __init__(
        self,
        path: Path,
        session_id: str,
        cwd: str,
        branch: str = "main",
        *,
        start: datetime | None = None,
        sidechain: bool = False,
        agent_id: str | None = None,
        version: str = "2.1.123",
        seed: int = 0,
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.branch = branch
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.version = version
        self.now = start or datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
        self.parent: str | None = None
        self._n = seed * 100_000
        self.lines: list[str] = []
        path.parent.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ plumbing

    def _id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self.session_id[:8]}{self._n:07d}"

    def _uuid(self) -> str:
        self._n += 1
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{self.path}:{self._n}"))

    def _tick(self, seconds: float = 2.0) -> str:
        self.now += timedelta(seconds=seconds)
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _base(self, kind: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": self.sidechain}
        if self.agent_id:
            entry["agentId"] = self.agent_id
        entry |= {"userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.session_id}
        entry |= {"version": self.version, "gitBranch": self.branch, "type": kind}
        return entry

    def entry(self, entry: dict[str, Any]) -> str:
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        self.lines.append(line)
        if isinstance(entry.get("uuid"), str):
            self.parent = entry["uuid"]
        return line

    def raw(self, line: str) -> None:
        self.lines.append(line)

    def save(self, *, newline_at_end: bool = True) -> Path:
        text = "\n".join(self.lines) + ("\n" if newline_at_end else "")
        self.path.write_text(text, encoding="utf-8")
        return self.path

    # ------------------------------------------------------------------ conversation

    def prompt(self, text: str) -> None:
        e = self._base("user") | {"message": {"role": "user", "content": text}}
        e |= {"uuid": self._uuid(), "timestamp": self._tick(20)}
        self.entry(e)

    def _assistant_line(self, message_id: str, block: dict[str, Any], stop: str | None) -> dict[str, Any]:
        message = {
            "model": "claude-opus-4-7",
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 4, "cache_read_input_tokens": 21000, "output_tokens": 180},
        }
        e = self._base("assistant") | {"message": message, "requestId": self._id("req_")}
        e |= {"uuid": self._uuid(), "timestamp": self._tick(3)}
        self.entry(e)
        return e

    def reply(self, *blocks: dict[str, Any]) -> str:
        """One assistant reply: each block on its own line, all with the same message id."""
        mid = self._id("msg_")
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            stop = ("tool_use" if block.get("type") == "tool_use" else "end_turn") if last else None
            self._assistant_line(mid, block, stop)
        return mid

    def say(self, text: str, thinking: str | None = None) -> None:
        blocks = [{"type": "thinking", "thinking": thinking, "signature": "c2ln"}] if thinking else []
        self.reply(*blocks, {"type": "text", "text": text})

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        content: Any,
        *,
        is_error: bool | None = None,
        result: Any = None,
        text_before: str | None = None,
    ) -> str:
        tid = self._id("toolu_01")
        blocks = [{"type": "text", "text": text_before}] if text_before else []
        self.reply(*blocks, {"type": "tool_use", "id": tid, "name": name, "input": tool_input})
        source = self.parent
        block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        e = self._base("user") | {"message": {"role": "user", "content": [block]}}
        e |= {"uuid": self._uuid(), "timestamp": self._tick(4)}
        if result is not None:
            e["toolUseResult"] = result
        e["sourceToolAssistantUUID"] = source
        self.entry(e)
        return tid

    def bash(self, command: str, output: str = "", exit_code: int = 0, **kw: Any) -> str:
        if exit_code:
            text = (
                output if output.startswith("Exit code") else f"Exit code {exit_code}\n{output}".rstrip("\n")
            )
            return self.tool("Bash", {"command": command}, text, is_error=True, result=f"Error: {text}", **kw)
        result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        return self.tool("Bash", {"command": command}, output, is_error=False, result=result, **kw)

    def background(self, command: str, shell: str) -> str:
        """A Bash call with `run_in_background`: its result is the shell's id, as the client writes it."""
        result = {
            "stdout": "",
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "backgroundTaskId": shell,
        }
        text = f"Command running in background with ID: {shell}"
        return self.tool("Bash", {"command": command, "run_in_background": True}, text, result=result)

    def poll(
        self, shell: str, status: str, exit_code: int | None = None, stdout: str = "", stderr: str = ""
    ) -> str:
        """A BashOutput poll of a background shell, as Claude Code 1.x/2.0 writes it (`<status>`, `<exit_code>`,
        `<stdout>`, `<stderr>`); the result is not flagged as an error even when the command failed."""
        parts = [f"<status>{status}</status>"]
        if exit_code is not None:
            parts.append(f"<exit_code>{exit_code}</exit_code>")
        parts += [
            f"<{name}>\n{text}\n</{name}>" for name, text in (("stdout", stdout), ("stderr", stderr)) if text
        ]
        result = {
            "shellId": shell,
            "status": status,
            "exitCode": exit_code,
            "stdout": stdout,
            "stderr": stderr,
        }
        return self.tool("BashOutput", {"bash_id": shell}, "\n\n".join(parts), result=result)

    def edit(self, path: str, old: str = "a", new: str = "b") -> str:
        full = path if path.startswith("/") else f"{self.cwd}/{path}"
        result = {
            "filePath": full,
            "oldString": old,
            "newString": new,
            "originalFile": f"{old}\n" * 40,
            "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                 "lines": [f"-{old}", f"+{new}"]}],
            "userModified": False,
            "replaceAll": False,
        }  # fmt: skip
        text = f"The file {full} has been updated. Here's the result of running `cat -n` on a snippet."
        return self.tool(
            "Edit", {"file_path": full, "old_string": old, "new_string": new}, text, result=result
        )

    def write(self, path: str, content: str) -> str:
        full = path if path.startswith("/") else f"{self.cwd}/{path}"
        result = {"type": "create", "filePath": full, "content": content, "structuredPatch": []}
        return self.tool(
            "Write",
            {"file_path": full, "content": content},
            f"File created successfully at: {full}",
            result=result,
        )

    def read(self, path: str, content: str) -> str:
        full = path if path.startswith("/") else f"{self.cwd}/{path}"
        numbered = "\n".join(f"{i + 1:6d}\u2192{line}" for i, line in enumerate(content.splitlines()))
        result = {"type": "text", "file": {"filePath": full, "content": content, "numLines": 1}}
        return self.tool("Read", {"file_path": full}, numbered, result=result)

    def tool_error(self, name: str, tool_input: dict[str, Any], text: str) -> str:
        """A failure the harness reports (file not found, string not found, a declined permission)."""
        return self.tool(name, tool_input, text, is_error=True, result=f"Error: {text}")

    # ------------------------------------------------------------------ entries recall has no use for

    def noise(self) -> None:
        """The entry types around the conversation: snapshots, progress, system notes, attachments."""
        snap = {"messageId": self._uuid(), "trackedFileBackups": {}, "timestamp": self._tick(0)}
        self.raw(json.dumps({"type": "file-history-snapshot", "messageId": snap["messageId"], "snapshot": snap,
                             "isSnapshotUpdate": False}))  # fmt: skip
        progress = self._base("progress") | {
            "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash"},
            "uuid": self._uuid(),
            "timestamp": self._tick(0),
        }
        self.entry(progress)
        system = self._base("system") | {"subtype": "turn_duration", "durationMs": 41233, "isMeta": False}
        self.entry(system | {"uuid": self._uuid(), "timestamp": self._tick(0)})

    def compact(self, summary: str) -> None:
        """What `/compact` writes: a boundary, then the summary as a user message."""
        boundary = self._base("system") | {
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "manual", "preTokens": 151000},
            "uuid": self._uuid(),
            "timestamp": self._tick(5),
        }
        self.entry(boundary)
        e = self._base("user") | {"message": {"role": "user", "content": summary}, "isCompactSummary": True}
        self.entry(e | {"uuid": self._uuid(), "timestamp": self._tick(1)})
