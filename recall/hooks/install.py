"""recall's entries in Claude Code settings (`.claude/settings.json`, project or user), added and removed.

Install is idempotent: recall's old entries are removed before the current ones are added, and every other
hook, matcher group and setting is kept as it was. An entry is recall's when its command runs
`recall hook <Event>` (or `python -m recall hook <Event>`, or the plugin's `recall-hook` wrapper).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

# event -> (matcher or None, timeout seconds, async); timeouts sit above the in-process deadlines
# (runtime.py). Stop runs async: capture never holds the agent's next turn up.
EVENTS: dict[str, tuple[str | None, int, bool]] = {
    "PostToolUseFailure": ("*", 5, False),
    "PostToolUse": ("Bash|Edit|Write|MultiEdit|NotebookEdit", 5, False),
    "Stop": (None, 10, True),
    "SessionEnd": (None, 10, False),
}
_OURS = re.compile(
    r"(?:^|[\s/\"'])(?:recall(?:\.exe)?|-m recall|recall-hook)[\"']?\s+(?:hook\s+)?[A-Za-z]+\s*$"
)


class SettingsError(Exception):
    """The settings file exists but cannot be used (not JSON, not an object, unwritable)."""


def recall_command() -> str:
    """The installed `recall` script of this interpreter by absolute path (a version-manager shim on PATH
    can add half a second per hook), else `recall` on PATH, else this interpreter running the module."""
    import sysconfig

    script = Path(sysconfig.get_path("scripts")) / ("recall.exe" if os.name == "nt" else "recall")
    if script.is_file() and os.access(script, os.X_OK):
        return f'"{script}"'
    if shutil.which("recall"):
        return "recall"
    return f'"{sys.executable}" -m recall'


def hook_entries(command: str | None = None) -> dict[str, list[dict[str, Any]]]:
    base = command or recall_command()
    out: dict[str, list[dict[str, Any]]] = {}
    for event, (matcher, timeout, run_async) in EVENTS.items():
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        hook: dict[str, Any] = {"type": "command", "command": f"{base} hook {event}", "timeout": timeout}
        if run_async:
            hook["async"] = True
        group["hooks"] = [hook]
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


def install(path: Path, command: str | None = None) -> int:
    """Write recall's hooks into the settings file; returns the number of events hooked."""
    data = load(path)
    remove_ours(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{path}: "hooks" is not an object; nothing was changed')
    for event, groups in hook_entries(command).items():
        existing = hooks.get(event)
        hooks[event] = (existing if isinstance(existing, list) else []) + groups
    save(path, data)
    return len(EVENTS)


def uninstall(path: Path) -> int:
    if not path.exists():
        return 0
    data = load(path)
    removed = remove_ours(data)
    if removed:
        save(path, data)
    return removed
