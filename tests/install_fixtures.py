"""Helpers for the install tests: a clean HOME and PATH, the system's Python, offline runs, file trees.

A clean environment has only HOME, PATH, the locale, TMPDIR and the machine's network settings: pip's
(PIP_*: its certificates and timeouts) and, where pip is given a certificate file, the same trust root for
uv (UV_SYSTEM_CERTS: this machine's HTTPS goes through a proxy whose root only the system store has). PATH is the system's, without any version manager
(pyenv) or a recall: `/usr/local/bin:/usr/bin:/bin`.

`offline(cmd)` runs `cmd` in a network namespace of its own (`unshare -n`: only a loopback that is down), so
a command that reached for the network fails there; where unshare is not permitted (not root) it runs
as is, and `OFFLINE` says which.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_PYTHON = Path("/usr/bin/python3")
YAML_ERROR = "ModuleNotFoundError: No module named 'yaml'"
YAML_FIX = "PyYAML was missing from requirements.txt; added it and reinstalled."


def _can_unshare() -> bool:
    unshare = shutil.which("unshare")
    if not unshare:
        return False
    done = subprocess.run([unshare, "-n", "true"], capture_output=True)
    return done.returncode == 0


OFFLINE = _can_unshare()


def offline(cmd: list[str]) -> list[str]:
    return ["unshare", "-n", "--", *cmd] if OFFLINE else cmd


def clean_env(home: Path, path: str = SYSTEM_PATH, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    if "PIP_CERT" in env:
        env["UV_SYSTEM_CERTS"] = "1"
    env.update(
        {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "TMPDIR": os.environ.get("TMPDIR", "/tmp")}
    )
    env.update(extra)
    return env


def system_python_problem() -> str | None:
    """Why the system-Python tests cannot run here, or None."""
    if not SYSTEM_PYTHON.is_file():
        return f"{SYSTEM_PYTHON} is not here"
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys, venv; print(sys.version_info >= (3, 11))"],
        capture_output=True,
        text=True,
    )
    if done.stdout.strip() != "True":
        return f"{SYSTEM_PYTHON} is older than 3.11 or has no venv module"
    return None


def tree(root: Path) -> set[str]:
    """Every path under `root`, relative to it (folders included)."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def checkout_state() -> set[str]:
    """The checkout's untracked and ignored files: an install must add none (no build/, no *.egg-info)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return {line for line in done.stdout.splitlines() if line.startswith(("??", "!!"))}
