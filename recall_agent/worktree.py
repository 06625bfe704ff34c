"""The working tree's uncommitted changes as git reports them (`git status --porcelain=v1 -z`): one parser
for the antipattern scan of the diff and the change-risk answer. Stdlib only."""

from __future__ import annotations

import subprocess
from pathlib import Path


def status(root: Path, timeout: float, *pathspec: str) -> list[tuple[str, str]] | None:
    """(two-letter status, path relative to the work tree's top) of every changed or untracked file, renames
    by their new name; None when git fails or is missing."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all", *pathspec],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    out: list[tuple[str, str]] = []
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            i += 1  # the next field is the rename source
        out.append((code, path))
    return out
