"""Codex's `apply_patch` edits as the capture engine's edit steps (`codex_transcript.py` reads them).

A patch (`*** Begin Patch` / `*** Update File: p` / `@@ header` / ` `,`-`,`+` lines / `*** End Patch`), or the
`changes` of a `patch_apply_end` event (`unified_diff` per file), becomes one `Edit` per updated file (the
old and new side of its hunks; the hunks, with the patch's `@@ def …` header, stand in for Claude Code's
`originalFile`, so `edits.py` finds the function around the change the same way) and a `Write` per added
file. Deleted files change nothing the engine weighs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from recall_agent.capture.transcript import Call, Result, Step


@dataclass
class PatchFile:
    """One file of a patch: its kind (`add`, `update`, `delete`) and hunks of (header, lines)."""

    path: str
    kind: str
    hunks: list[tuple[str, list[str]]] = field(default_factory=list)
    content: str = ""


def parse_patch(text: str) -> list[PatchFile]:
    """Codex's patch format (`*** Begin Patch` / `*** Update File: p` / `@@ header` / ` `,`-`,`+` lines)."""
    files: list[PatchFile] = []
    current: PatchFile | None = None
    for line in text.splitlines():
        if line.startswith("*** Add File: "):
            current = PatchFile(line[14:].strip(), "add")
            files.append(current)
        elif line.startswith("*** Update File: "):
            current = PatchFile(line[17:].strip(), "update")
            files.append(current)
        elif line.startswith("*** Delete File: "):
            files.append(PatchFile(line[17:].strip(), "delete"))
            current = None
        elif line.startswith("*** Move to: ") and current is not None:
            current.path = line[13:].strip()
        elif line.startswith("***") or current is None:
            continue
        elif current.kind == "add":
            current.content += (line[1:] if line.startswith("+") else line) + "\n"
        elif line.startswith("@@"):
            current.hunks.append((line[2:].strip(), []))
        elif line[:1] in (" ", "-", "+") or line == "":
            if not current.hunks:
                current.hunks.append(("", []))
            current.hunks[-1][1].append(line if line else " ")
    return files


def changes_of_event(changes: dict[str, Any]) -> list[PatchFile]:
    """`patch_apply_end.changes`: {path: {type, unified_diff | content, move_path}}."""
    out = []
    for path, change in changes.items():
        if not isinstance(change, dict):
            continue
        kind = change.get("type")
        target = change.get("move_path") if isinstance(change.get("move_path"), str) else path
        if kind == "add":
            out.append(PatchFile(target, "add", content=str(change.get("content") or "")))
        elif kind == "update":
            pf = PatchFile(target, "update")
            for line in str(change.get("unified_diff") or "").splitlines():
                if line.startswith("@@"):
                    pf.hunks.append(("", []))
                elif pf.hunks and line[:1] in (" ", "-", "+"):
                    pf.hunks[-1][1].append(line)
            out.append(pf)
        elif kind == "delete":
            out.append(PatchFile(path, "delete"))
    return out


def edit_steps(call: Call, files: list[PatchFile], ts: float | None) -> Iterator[Step]:
    """Each file of a patch as the engine's edit steps: `Write` for a new file, `Edit` for an update."""
    for n, pf in enumerate(files):
        cid = f"{call.id}#{n}" if len(files) > 1 else call.id
        if pf.kind == "add":
            edit = Call(cid, "Write", {"file_path": pf.path, "content": pf.content}, call.stream)
            yield Result(call=edit, is_error=False, text="", response={"type": "create"}, ts=ts)
        elif pf.kind == "update" and pf.hunks:
            old, new, original, first = _sides(pf.hunks)
            edit_input = {"file_path": pf.path, "old_string": old, "new_string": new}
            edit = Call(cid, "Edit", edit_input, call.stream)
            details = {"originalFile": original, "structuredPatch": [{"oldStart": first, "lines": []}]}
            yield Result(call=edit, is_error=False, text="", response=details, ts=ts)


def _sides(hunks: list[tuple[str, list[str]]]) -> tuple[str, str, str, int]:
    """(old text, new text, the hunks' old side with their `@@` headers as the file the change is found in,
    the 1-based line of the first change in it)."""
    old: list[str] = []
    new: list[str] = []
    original: list[str] = []
    first = 0
    for header, lines in hunks:
        if header:
            original.append(header)
        for line in lines:
            mark, body = line[:1], line[1:]
            if mark in (" ", "-"):
                old.append(body)
                original.append(body)
            if mark in (" ", "+"):
                new.append(body)
            if mark in ("-", "+") and not first:
                first = len(original) if mark == "-" else len(original) + 1
    return "\n".join(old), "\n".join(new), "\n".join(original), max(1, min(first, len(original) or 1))
