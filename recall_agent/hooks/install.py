"""recall's entries in Claude Code settings (`.claude/settings.json`, project or user), added and removed.

Install is idempotent: recall's old entries are removed before the current ones are added, and every other
hook, matcher group and setting is kept as it was. An entry is recall's when its command runs
`recall hook <Event>` (or `python -m recall_agent hook <Event>`, or the `recall-hook` entry script).

The installed commands are the plugin's: `sh <package>/hooks/recall-hook <Event>`, the script that answers
idle tool calls without starting Python, told which recall to run by `RECALL_BIN` (or `RECALL_PYTHON`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

# event -> (matcher or None, timeout seconds); timeouts sit above the in-process deadlines (runtime.py).
# Every hook is synchronous: headless `claude -p` exits right after the last turn and kills an async Stop
# before it finishes, so capture never happens there (Claude Code 2.1.197 and 2.1.332).
EVENTS: dict[str, tuple[str | None, int]] = {
    "PostToolUseFailure": ("*", 5),
    "Stop": (None, 10),
    "SessionEnd": (None, 10),
    "SessionStart": (None, 5),  # the repository's known pitfalls (push/pitfalls.py)
    "UserPromptSubmit": (None, 5),  # the code area of a task prompt (push/task.py)
}
ENTRY_SCRIPT = Path(__file__).with_name("recall-hook")
_OURS = re.compile(
    r"(?:^|[\s/\"'])(?:recall(?:\.exe)?|-m recall(?:_agent)?|recall-hook)[\"']?\s+(?:hook\s+)?[A-Za-z]+\s*$"
)


class SettingsError(Exception):
    """The settings file exists but cannot be used (not JSON, not an object, unwritable)."""


def recall_command() -> str:
    """The start of every installed hook command: which recall the entry script runs, then the script.

    The installed `recall` script of this interpreter by absolute path (a version-manager shim on PATH can
    add half a second per hook), else this interpreter running the module."""
    import sysconfig

    script = Path(sysconfig.get_path("scripts")) / ("recall.exe" if os.name == "nt" else "recall")
    if script.is_file() and os.access(script, os.X_OK):
        runner = f"RECALL_BIN={shlex.quote(str(script))}"
    else:
        runner = f"RECALL_PYTHON={shlex.quote(sys.executable)}"
    return f"{runner} sh {shlex.quote(str(ENTRY_SCRIPT))}"


def hook_entries(
    command: str | None = None, events: dict[str, tuple[str | None, int]] | None = None
) -> dict[str, list[dict[str, Any]]]:
    base = command or recall_command()
    out: dict[str, list[dict[str, Any]]] = {}
    for event, (matcher, timeout) in (events or EVENTS).items():
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": f"{base} {event}", "timeout": timeout}]
        out[event] = [group]
    return out


def is_recall_hook(hook: object) -> bool:
    return (
        isinstance(hook, dict)
        and isinstance(hook.get("command"), str)
        and bool(_OURS.search(hook["command"]))
    )


def settings_path(scope: str, project_dir: Path) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return project_dir / ".claude" / "settings.json"


def load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise SettingsError(
            f"{path} is not readable JSON ({exc}); fix or move it, nothing was changed"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="settings.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise SettingsError(f"cannot write {path}: {exc.strerror or exc}") from exc


def remove_ours(data: dict[str, Any]) -> int:
    """Drop recall's hooks (and groups/events left empty); returns how many hooks were removed."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [h for h in group["hooks"] if not is_recall_hook(h)]
            removed += len(group["hooks"]) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def install(
    path: Path, command: str | None = None, events: dict[str, tuple[str | None, int]] | None = None
) -> int:
    """Write recall's hooks into the settings file (Claude Code's settings.json, or Codex's hooks.json,
    which has the same `hooks` shape); returns the number of events hooked."""
    data = load(path)
    remove_ours(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{path}: "hooks" is not an object; nothing was changed')
    chosen = events or EVENTS
    for event, groups in hook_entries(command, chosen).items():
        existing = hooks.get(event)
        hooks[event] = (existing if isinstance(existing, list) else []) + groups
    save(path, data)
    return len(chosen)


def uninstall(path: Path) -> int:
    if not path.exists():
        return 0
    data = load(path)
    removed = remove_ours(data)
    if removed:
        save(path, data)
    return removed
