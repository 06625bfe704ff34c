"""Which repository a folder belongs to, and the name learnings file it under (stdlib only: cheap import).

One rule for every room: the client's payload, `recall learn`, the hooks' capture and their session state
all name a repository the same way, so a learning captured by a hook is found by `/recall` in that repo.
No `git` process: the nearest ancestor holding a `.git` entry (a folder, or a worktree's file) is the top.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_NAME_MAX = 128


def toplevel(path: Path) -> Path | None:
    """The nearest folder at or above `path` holding `.git`, resolved; None outside git."""
    try:
        current = path.resolve()
    except (OSError, RuntimeError):  # a deleted folder, a symlink loop
        return None
    for folder in (current, *current.parents):
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:  # an unreadable parent: keep walking up
            continue
    return None


def name(cwd: Path, root: Path | None) -> str:
    """The learnings `repo`: the git top-level folder's name, else the folder's own ("root" for /)."""
    return ((root or cwd).name or "root")[:REPO_NAME_MAX]


def current_dir() -> Path:
    """The working directory, resolved; `$PWD` (else /) when it was deleted under us."""
    try:
        return Path.cwd().resolve()
    except OSError:
        return Path(os.environ.get("PWD") or "/")
