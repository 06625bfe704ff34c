"""Find a Python 3.11+, make a virtual environment, install a recall source tree into it (stdlib only).

Written for any Python 3.8+ (see the package docstring): no `match`, no runtime `X | Y` types.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

MIN_PYTHON = (3, 11)
DIST = "recall-agent"  # the distribution name (PyPI's `recall` is another project: docs/install.md)
# interpreters tried after the one asked for, newest first
PYTHON_NAMES = ("python3", "python3.14", "python3.13", "python3.12", "python3.11", "python")
# variables that would point an environment's Python or pip somewhere else than the environment
LEAKY_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PIP_USER",
    "PIP_PREFIX",
    "PIP_TARGET",
    "PIP_REQUIRE_VIRTUALENV",
    "PIP_BREAK_SYSTEM_PACKAGES",
)

# what a build never needs from a source tree (and must not write into it: build/, *.egg-info)
STAGE_IGNORE = (".git", "bench", "tests", "__pycache__", "build", "dist", "*.egg-info", ".venv", ".*_cache")


class SetupError(Exception):
    """A step that cannot go on: one readable line, with what to do about it."""


def data_home() -> Path:
    """$XDG_DATA_HOME, else ~/.local/share (where uv, pipx and recall keep what they install)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    return Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_VARIABLES}
    env.update(extra)
    return env


def version_of(python: str) -> tuple | None:
    """(major, minor) of an interpreter, or None when it does not run."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=20,
            env=clean_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    parts = done.stdout.strip().split(".")
    if done.returncode != 0 or len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def python_candidates() -> list:
    """The interpreters to try, in order: the one running this, then PATH's, newest first."""
    out: list = []
    for name in [sys.executable] + list(PYTHON_NAMES):
        path = shutil.which(name) if name and os.sep not in name else name
        if path and os.path.isfile(path) and path not in out:
            out.append(path)
    return out


def find_python(
    explicit: str | None = None, how_to_name: str = "make install PYTHON=/path/to/python3"
) -> tuple:
    """(path, (major, minor)) of the first Python 3.11+; only `explicit` (PYTHON=…) when it is given."""
    if explicit:
        path = shutil.which(explicit) if os.sep not in explicit else explicit
        paths = [path or explicit]
    else:
        paths = python_candidates()
    seen = []
    for path in paths:
        version = version_of(path)
        if version and version >= MIN_PYTHON:
            return path, version
        seen.append(f"{path} ({_dotted(version) if version else 'does not run'})")
    raise SetupError(
        f"recall needs Python {_dotted(MIN_PYTHON)} or newer; found {', '.join(seen) or 'none on PATH'}. "
        f"Install one (Debian/Ubuntu: apt install python3; macOS: brew install python@3.12), "
        f"or name one: {how_to_name}"
    )


def _dotted(version: tuple) -> str:
    return ".".join(str(part) for part in version)


def venv_bin(venv: Path, name: str) -> Path:
    folder = "Scripts" if os.name == "nt" else "bin"
    return venv / folder / (name + (".exe" if os.name == "nt" else ""))


def run(cmd: list, log: IO | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run a setup step; its output goes to `log` when given, else it is kept for the error message."""
    if log is not None:
        log.write("$ " + " ".join(str(c) for c in cmd) + "\n")
        log.flush()
        return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=clean_env(), cwd=cwd)
    return subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), cwd=cwd)


def _tail(done: subprocess.CompletedProcess) -> str:
    text = ((done.stdout or "") + (done.stderr or "")).strip().splitlines()
    return text[-1] if text else f"exit status {done.returncode}"


def make_venv(python: str, target: Path, log: IO | None = None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    done = run([python, "-m", "venv", str(target)], log)
    if done.returncode != 0:
        shutil.rmtree(str(target), ignore_errors=True)
        raise SetupError(
            f"cannot make a virtual environment with {python} ({_tail(done)}); on Debian/Ubuntu: apt install python3-venv"
        )


def pip_install(venv: Path, source: Path, log: IO | None = None) -> None:
    """Install the source tree (and its dependencies, from the package index) into the environment.

    pip builds from a copy: building in place would write build/ and *.egg-info into `source` (the user's
    checkout, or the plugin's files)."""
    with tempfile.TemporaryDirectory(prefix="recall-build-") as tmp:
        staged = Path(tmp) / "src"
        shutil.copytree(str(source), str(staged), ignore=shutil.ignore_patterns(*STAGE_IGNORE))
        cmd = [str(venv_bin(venv, "python")), "-m", "pip", "install", "--disable-pip-version-check"]
        cmd += ["--no-input"] + (["--quiet"] if log is None else []) + [str(staged)]
        done = run(cmd, log)
    if done.returncode != 0:
        raise SetupError(f"pip could not install recall from {source} ({_tail(done)})")


def installed_version(recall: Path) -> str | None:
    """What `recall --version` prints ("recall 0.1.0"), or None when that recall does not run."""
    try:
        done = subprocess.run(
            [str(recall), "--version"], capture_output=True, text=True, timeout=60, env=clean_env()
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
