"""Hook JSON -> the facts recall needs: which command ran, did it fail, with what text, which file changed.

Field names follow Claude Code's hook reference (`tool_name`, `tool_input`, `tool_response`, `error`,
`is_interrupt`, `tool_use_id`). A Bash command that exits non-zero arrives as PostToolUseFailure in current
versions and as PostToolUse with the exit code inside `tool_response` in older ones; both end up here as a
failed `ToolEvent`.

Command identity: `key` is the normalized command line (cd prefix, output plumbing and whitespace folded);
`family` is the tool and subcommand (`pytest`, `npm test`, `git push`, `python app.py`), `targets` the
remaining non-option arguments. A failure is resolved by a later success with the same key, or with the
same family whose targets cover the failure's (`pytest tests/` covers `pytest tests/test_a.py::test_x`).
"""

from __future__ import annotations

import functools
import hashlib
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from recall_agent.hooks.runtime import response_failed
from recall_agent.redact import redact

ERROR_TEXT_MAX = 4000
FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# tools whose failures are about using the tool (old_string not found, no such file to read), not the code
IGNORED_FAILURE_TOOLS = FILE_TOOLS | {"Read", "Glob", "Grep", "LS", "TodoWrite", "Task", "ExitPlanMode"}
_WRAPPERS = {"sudo", "time", "env", "nice", "npx", "bunx", "command", "exec", "stdbuf", "timeout"}
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pnpm", "exec"), ("hatch", "run")}
_MULTI = {
    "git", "npm", "yarn", "pnpm", "bun", "cargo", "go", "make", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "dotnet", "mvn", "gradle", "gradlew", "bundle", "rake", "terraform", "helm", "deno", "just",
    "tox", "nox", "mix", "swift", "rails",
}  # fmt: skip
_INTERPRETERS = {"python", "python3", "node", "ruby", "bash", "sh", "zsh", "perl", "php", "deno", "ts-node"}
_PLUMBING_STAGE = re.compile(r" ?(?:tail|head|less|more|cat|tee|grep)\b[^|;&]*")
_REDIRECT = re.compile(r" ?\d?>&\d ?| ?2> ?/dev/null ?")
_CD_PREFIX = re.compile(r"^ ?cd (?:\"[^\"]*\"|'[^']*'|\S+) ?(?:&&|;) ?")
_SEPARATOR = re.compile(r"&&|\|\||;|\|")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_IDENT_FOLD = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{7,40}\b|\d+")


@dataclass
class ToolEvent:
    tool: str
    failed: bool
    command: str | None = None  # Bash command, or a short description of other tools' input
    error_text: str | None = None
    file_path: str | None = None  # for Edit/Write/MultiEdit/NotebookEdit
    tool_use_id: str | None = None
    interrupted: bool = False
    key: str = ""
    family: str = ""
    targets: list[str] = field(default_factory=list)


def from_payload(payload: dict[str, Any], event: str) -> ToolEvent | None:
    """A ToolEvent for PostToolUse / PostToolUseFailure payloads; None when the payload has no tool."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    response = payload.get("tool_response")
    ev = ToolEvent(tool=tool, failed=False, tool_use_id=_str(payload.get("tool_use_id")))
    if tool == "Bash":
        ev.command = _str(tool_input.get("command"))
    elif tool in FILE_TOOLS:
        path = _str(tool_input.get("file_path") or tool_input.get("notebook_path"))
        ev.file_path = redact(path) if path else path  # the session file keeps it
    else:
        ev.command = _describe_input(tool, tool_input)

    if event == "PostToolUseFailure":
        ev.failed = True
        ev.interrupted = payload.get("is_interrupt") is True
        ev.error_text = _str(payload.get("error")) or _response_text(response)
    elif response_failed(response):
        ev.failed = True
        ev.interrupted = isinstance(response, dict) and response.get("interrupted") is True
        ev.error_text = _response_text(response)
    if ev.error_text:
        ev.error_text = clip(ev.error_text)
    if ev.command:
        # commands carry secrets too (`curl -H "Authorization: ..."`, `DB_PASSWORD=... pytest`); a failure
        # and its success are redacted alike, so their keys still compare
        ev.command, ev.key, ev.family, targets = _command_facts(ev.command)
        ev.targets = list(targets)
    return ev


@functools.lru_cache(maxsize=1024)
def _command_facts(command: str) -> tuple[str, str, str, tuple[str, ...]]:
    """The redacted command and its identity; cached, since a replayed transcript runs the same few
    commands (`git status`, the test command) hundreds of times."""
    redacted = redact(command)
    key, family, targets = command_identity(redacted)
    return redacted, key, family, tuple(targets)


def learns_from_failure(ev: ToolEvent) -> bool:
    """A failure recall records: not interrupted, with error text, and not a file tool's usage error
    (`Edit`'s "string not found" is about using the tool, not about the code)."""
    return ev.failed and not ev.interrupted and bool(ev.error_text) and ev.tool not in IGNORED_FAILURE_TOOLS


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _describe_input(tool: str, tool_input: dict[str, Any]) -> str:
    """MCP and other tools: tool name plus its scalar inputs, so the same call gets the same key."""
    parts = [tool]
    for name in sorted(tool_input)[:6]:
        value = tool_input[name]
        if isinstance(value, str | int | float | bool):
            parts.append(f"{name}={str(value)[:80]}")
    return " ".join(parts)


def _response_text(response: object) -> str | None:
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return None
    chunks = []
    for name in ("error", "stderr", "stdout", "output", "content", "result"):
        value = response.get(name)
        if isinstance(value, str) and value.strip():
            chunks.append(value.strip())
        elif isinstance(value, list):  # content blocks
            chunks.extend(
                b["text"].strip()
                for b in value
                if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].strip()
            )
    return "\n".join(chunks) or None


def clip(text: str, limit: int = ERROR_TEXT_MAX) -> str:
    """Keep the head (the command, the first error) and the tail (the summary, the raised exception)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head - 5
    return text[:head] + "\n...\n" + text[-tail:]


def normalize_command(command: str) -> str:
    cmd = " ".join(command.split())
    cmd = _CD_PREFIX.sub("", cmd)
    cmd = _strip_plumbing(cmd)
    cmd = _REDIRECT.sub(" ", cmd)
    return " ".join(cmd.split())


def _strip_plumbing(cmd: str) -> str:
    """`cmd` without trailing `| tail`/`| grep x`/... stages (a loop, not one regex: linear time)."""
    while (i := cmd.rfind("|")) > 0 and cmd[i - 1] != "|" and _PLUMBING_STAGE.fullmatch(cmd[i + 1 :]):
        cmd = cmd[:i].rstrip()
    return cmd


def command_identity(command: str) -> tuple[str, str, list[str]]:
    """(key, family, targets) for a command line; see the module docstring."""
    key = normalize_command(command)
    first = _SEPARATOR.split(key, maxsplit=1)[0].strip()
    try:
        words = shlex.split(first)
    except ValueError:
        words = first.split()
    words = [w for w in words if not _ENV_ASSIGN.match(w)]
    while words and (words[0] in _WRAPPERS or (len(words) > 1 and (words[0], words[1]) in _RUNNERS)):
        words = words[2:] if len(words) > 1 and (words[0], words[1]) in _RUNNERS else words[1:]
    if not words:
        return key, key, []
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if program.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        program, rest = rest[1], rest[2:]
    args = [w for w in rest if not w.startswith("-")]
    family = program
    if (program in _MULTI or program in _INTERPRETERS) and args:
        family = f"{program} {args[0]}"
        args = args[1:]
    return key, family, args


def resolves(failure: dict[str, Any], success: dict[str, Any]) -> bool:
    """Does a recorded success resolve a recorded failure (same command, or a run that covers it)?"""
    if failure.get("key") and failure.get("key") == success.get("key"):
        return True
    if not failure.get("family") or failure.get("family") != success.get("family"):
        return False
    ok_targets = success.get("targets") or []
    if not ok_targets:
        return True
    return all(any(_covers(o, t) for o in ok_targets) for t in failure.get("targets") or [])


def _covers(outer: str, inner: str) -> bool:
    outer = outer.rstrip("/")
    return inner == outer or inner.startswith(outer + "/") or inner.startswith(outer + "::") or outer == "."


def error_ident(key: str, text: str) -> str:
    """Same command + same final error lines (numbers, hex and SHAs folded) = the same error."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][-3:]
    folded = _IDENT_FOLD.sub("#", "\n".join(lines))
    return hashlib.sha1(f"{key}\n{folded}".encode("utf-8", "replace")).hexdigest()[:16]
