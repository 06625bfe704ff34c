"""What recall pushed into agents' contexts: one JSON line per injection in `$RECALL_HOME/push.jsonl`
(time, kind, lines, estimated tokens, repository), summed by `recall stats` and `recall doctor`.

Kept small: past MAX_BYTES the file is rotated to `push.jsonl.1` (the totals then cover the recent part).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

LEDGER = "push.jsonl"
MAX_BYTES = 512 * 1024
KINDS = ("session_start", "prompt", "mcp")


def tokens(text: str) -> int:
    """Estimated tokens of injected text: four characters a token (the usual English estimate)."""
    return (len(text) + 3) // 4


def path(home: Path | None = None) -> Path:
    from recall_agent.config import recall_home

    return (home or recall_home()) / LEDGER


def record(kind: str, text: str, lines: int, repo: str, home: Path | None = None) -> None:
    """Append one injection; never raises (an unwritable home only loses the count)."""
    p = path(home)
    entry = {"at": int(time.time()), "kind": kind, "lines": lines, "tokens": tokens(text), "repo": repo[:128]}
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.exists() and p.stat().st_size > MAX_BYTES:
            os.replace(p, p.with_name(LEDGER + ".1"))
        with open(p, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
    except OSError:
        pass


def totals(home: Path | None = None, repo: str | Collection[str] | None = None) -> dict[str, dict[str, int]]:
    """Per kind: injections, lines and tokens (every kind listed, zeros included); `repo`: only injections
    into that repository (any of its names: an identity, a folder's name)."""
    out = {k: {"count": 0, "lines": 0, "tokens": 0} for k in KINDS}
    repos = {repo} if isinstance(repo, str) else set(repo or ())
    try:
        with open(path(home), encoding="utf-8") as fh:
            for raw in fh:
                try:
                    e: Any = json.loads(raw)
                except ValueError:
                    continue
                if (
                    not isinstance(e, dict)
                    or e.get("kind") not in out
                    or (repos and e.get("repo") not in repos)
                ):
                    continue
                row = out[e["kind"]]
                row["count"] += 1
                row["lines"] += int(e.get("lines") or 0)
                row["tokens"] += int(e.get("tokens") or 0)
    except OSError:
        pass
    return out
