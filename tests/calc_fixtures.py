"""A tiny real git repository whose test fails until `total()` is fixed: the session the real-client tests
(Claude Code and Codex CLI) script."""

from __future__ import annotations

import subprocess
from pathlib import Path

MOD = "def total(items):\n    count = sum(items)\n    return count - 1\n"
TEST = "from pkg.mod import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
CAUSE = "The test fails because total() subtracts one from the sum it computes."


def git(cwd: Path, *args: str) -> None:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run([*cmd, *args], cwd=cwd, check=True, capture_output=True)


def make_calc(parent: Path, branch: str = "main", extra: dict[str, str] | None = None) -> Path:
    """`calc/` with pkg/mod.py (the bug), tests/test_mod.py, and `extra` files, committed on `branch`."""
    project = parent / "calc"
    (project / "pkg").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "mod.py").write_text(MOD)
    (project / "tests" / "test_mod.py").write_text(TEST)
    for name, text in (extra or {}).items():
        (project / name).write_text(text)
    git(project, "init", "-q", "-b", branch)
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "calc")
    return project
