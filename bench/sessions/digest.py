"""Print a Claude Code transcript (or a Codex CLI rollout) as a short, numbered digest for hand labelling (bench/sessions/README.md).

Each tool call is one step: its `tool_use_id` (the last 8 characters, which labels cite), the tool, the
command or file, and the result (the exit state the transcript records, then the output's first and last
lines); Edit/Write show the old and new text shortened; the agent's words are shown shortened. Read, Grep,
Glob and LS calls are shown only when they failed or found nothing (a missing path is a failure a label may
cite); `--all` shows every call. The digest is
made from the transcript alone (nothing recall computes), so labels made from it are independent of recall.

    python3 bench/sessions/digest.py FILE.jsonl [--width 160] [--lines 12] [--all]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

QUIET_TOOLS = ("Read", "Grep", "Glob", "TodoWrite", "LS")
# what a Read/Grep/Glob/LS result says when the path is missing or nothing matched
_MISSING = re.compile(
    r"does not exist|no such file|not found|no files found|no matches|enoent", re.IGNORECASE
)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _lines(text: str, n: int, width: int) -> list[str]:
    rows = [ln.rstrip()[:width] for ln in text.splitlines() if ln.strip()]
    if len(rows) <= n:
        return rows
    head, tail = n // 3, n - n // 3
    return [*rows[:head], f"… ({len(rows) - n} lines) …", *rows[-tail:]]


def _codex_output(payload: dict) -> str:
    value = payload.get("output")
    if isinstance(value, list):
        return "\n".join(i.get("text", "") for i in value if isinstance(i, dict))
    return value if isinstance(value, str) else json.dumps(value)


def _cmd_of(arguments: str) -> str:
    try:
        data = json.loads(arguments)
    except ValueError:
        return arguments
    return str(data.get("cmd", arguments)) if isinstance(data, dict) else arguments


def codex_digest(path: Path, width: int, nlines: int) -> list[str]:
    """A Codex rollout: every tool call on one line (shell calls with the exit code the output reports),
    the output of failing ones, apply_patch's files, the agent's messages. Read from the raw lines."""
    import re

    out: list[str] = []
    calls: dict[str, tuple[str, str]] = {}
    step = 0
    for raw in path.open(encoding="utf-8", errors="replace"):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        p = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(p, dict) or entry.get("type") != "response_item":
            continue
        kind = p.get("type")
        if kind == "message" and p.get("role") in ("assistant", "user"):
            text = "\n".join(c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict))
            if text.strip() and not text.lstrip().startswith("<"):
                who = "AGENT" if p["role"] == "assistant" else "\nUSER"
                out.append(f"   {who}: {_short(text, width * 2)}")
        elif kind in ("function_call", "custom_tool_call"):
            what = p.get("input") if kind == "custom_tool_call" else p.get("arguments")
            calls[p.get("call_id", "")] = (str(p.get("name")), str(what or ""))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            cid = p.get("call_id", "")
            name, what = calls.get(cid, ("?", ""))
            if name in ("update_plan", "wait", "write_stdin") and "exited with code" not in _codex_output(p):
                continue
            step += 1
            text = _codex_output(p)
            code = re.search(r"(?:Process exited with code|Exit code:|\"exit_code\":|EXIT=) ?(-?\d+)", text)
            flag = f"exit {code.group(1)}" if code else "exit ?"
            if name == "exec_command":
                what = _cmd_of(what)
            if name == "apply_patch":
                files = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", what, re.M)
                out.append(f"[{step:03d} {cid[-8:]}] apply_patch ({flag}) {', '.join(files)}")
                out.extend("      " + ln[:width] for ln in what.splitlines()[1:nlines] if ln[:1] in "@-+")
                continue
            out.append(f"[{step:03d} {cid[-8:]}] {name} ({flag}) $ {_short(what, width)}")
            if code and code.group(1) != "0":
                out.extend("      | " + ln for ln in _lines(text, nlines, width))
    return out


def _quiet(name: str, block: dict, show_all: bool) -> bool:
    """Leave a Read/Grep/Glob/LS/TodoWrite result out unless it failed or found nothing."""
    if show_all or name not in QUIET_TOOLS:
        return False
    if name == "TodoWrite":
        return True
    return not (block.get("is_error") or _MISSING.search(_text(block.get("content"))[:300]))


def digest(path: Path, width: int, nlines: int, show_all: bool = False) -> list[str]:
    with path.open("rb") as fh:
        if b'"type":"session_meta"' in fh.readline(200):
            return codex_digest(path, width, nlines)
    out: list[str] = []
    calls: dict[str, tuple[str, dict]] = {}
    step = 0
    for raw in path.open(encoding="utf-8", errors="replace"):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or entry.get("type") not in ("user", "assistant"):
            continue
        content = message.get("content")
        side = " [side]" if entry.get("isSidechain") else ""
        if entry["type"] == "user" and isinstance(content, str):
            out.append(f"\nUSER{side}: {_short(content, width * 4)}")
            continue
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and entry["type"] == "assistant" and block.get("text", "").strip():
                out.append(f"   AGENT{side}: {_short(block['text'], width * 2)}")
            elif kind == "tool_use":
                calls[block["id"]] = (block.get("name", ""), block.get("input") or {})
            elif kind == "tool_result":
                tid = block.get("tool_use_id", "")
                name, tool_input = calls.get(tid, ("?", {}))
                if _quiet(name, block, show_all):
                    continue
                step += 1
                out.extend(_step(step, tid, name, tool_input, block, entry, width, nlines, side))
    return out


def _step(step, tid, name, tool_input, block, entry, width, nlines, side) -> list[str]:
    result = _text(block.get("content"))
    flag = "ERROR" if block.get("is_error") else "ok"
    head = f"[{step:03d} {tid[-8:]}]{side} {name} ({flag})"
    rows: list[str] = []
    if name == "Bash":
        rows.append(f"{head} $ {_short(str(tool_input.get('command', '')), width)}")
        rows.extend("      | " + ln for ln in _lines(result, nlines, width))
    elif name in ("Edit", "MultiEdit"):
        rows.append(f"{head} {tool_input.get('file_path', '')}")
        edits = tool_input.get("edits") or [tool_input]
        if not isinstance(edits, list):  # a malformed call (`edits` sent as a string): the client refused it
            edits = [{"new_string": edits}]
        for e in (e for e in edits if isinstance(e, dict)):
            rows.append("      - " + _short(str(e.get("old_string", "")), width))
            rows.append("      + " + _short(str(e.get("new_string", "")), width))
        if block.get("is_error"):
            rows.append("      | " + _short(result, width))
    elif name == "Write":
        body = str(tool_input.get("content", ""))
        rows.append(f"{head} {tool_input.get('file_path', '')} ({len(body.splitlines())} lines)")
        rows.append("      + " + _short(body, width))
    else:
        rows.append(f"{head} {_short(json.dumps(tool_input)[:400], width)}")
        rows.extend("      | " + ln for ln in _lines(result, 4, width))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("transcript", type=Path)
    ap.add_argument("--width", type=int, default=160)
    ap.add_argument("--lines", type=int, default=12)
    ap.add_argument("--all", action="store_true", help="show Read/Grep/Glob/LS/TodoWrite calls too")
    args = ap.parse_args(argv)
    print("\n".join(digest(args.transcript, args.width, args.lines, args.all)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
