"""Whether recall pushes context at session start and at task start.

`$RECALL_HOME/config.json` holds `{"push": {"session_start": true, "prompt": true}}` (both on by default,
written by `recall push on|off KIND`); `RECALL_PUSH_SESSION_START` / `RECALL_PUSH_PROMPT` (`0`/`off`/`false`
or `1`/`on`/`true`) override it for one process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

KINDS = {"session_start": "RECALL_PUSH_SESSION_START", "prompt": "RECALL_PUSH_PROMPT"}
CONFIG = "config.json"
_OFF = {"0", "off", "false", "no"}
_ON = {"1", "on", "true", "yes"}


def config_path(home: Path | None = None) -> Path:
    from recall_agent.config import recall_home

    return (home or recall_home()) / CONFIG


def _read(home: Path | None = None) -> dict[str, Any]:
    try:
        data = json.loads(config_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def enabled(kind: str, home: Path | None = None) -> bool:
    """Is push `kind` (KINDS) on? The environment first, then the config file, else on."""
    env = os.environ.get(KINDS[kind], "").strip().lower()
    if env in _OFF:
        return False
    if env in _ON:
        return True
    push = _read(home).get("push")
    value = push.get(kind, True) if isinstance(push, dict) else True
    return value is not False


def source(kind: str, home: Path | None = None) -> str:
    """Where the setting comes from, for `recall doctor`."""
    if os.environ.get(KINDS[kind], "").strip().lower() in _OFF | _ON:
        return KINDS[kind]
    push = _read(home).get("push")
    return str(config_path(home)) if isinstance(push, dict) and kind in push else "default"


def set_enabled(kind: str, on: bool, home: Path | None = None) -> Path:
    """Write the setting (atomically; other keys kept)."""
    path = config_path(home)
    data = _read(home)
    push = data.get("push") if isinstance(data.get("push"), dict) else {}
    push[kind] = on
    data["push"] = push
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
