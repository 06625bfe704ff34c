"""`make install` and `make uninstall`: recall in an environment of its own, its command on PATH.

    python -m recall_agent.bootstrap.install install   [--method auto|uv|pipx|venv] [--python PY] [--bindir DIR]
    python -m recall_agent.bootstrap.install uninstall

`auto` takes `uv tool install` when uv is on PATH, else `pipx install`, else recall's own virtual
environment under the user's data folder ($XDG_DATA_HOME/recall/venv, RECALL_VENV to move it) with the
command linked into ~/.local/bin (RECALL_BINDIR or --bindir to move it). Never the system's Python, never
`--break-system-packages`, never sudo. `uninstall` removes whichever of these is there and recall's caches;
the learnings and indexes (RECALL_HOME) stay, and it says where.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from recall_agent.bootstrap import envs

ROOT = Path(__file__).resolve().parents[2]  # the checkout: pyproject.toml, Makefile
RECORD = "recall-install.json"  # inside the environment: the link made and the folders created for it
METHODS = ("auto", "uv", "pipx", "venv")


def venv_dir() -> Path:
    explicit = os.environ.get("RECALL_VENV")
    return Path(explicit).expanduser() if explicit else envs.data_home() / "recall" / "venv"


def bin_dir(explicit: str | None = None) -> Path:
    chosen = explicit or os.environ.get("RECALL_BINDIR")
    return Path(chosen).expanduser() if chosen else Path.home() / ".local" / "bin"


def choose(method: str) -> str:
    if method == "auto":
        return "uv" if shutil.which("uv") else "pipx" if shutil.which("pipx") else "venv"
    if method != "venv" and not shutil.which(method):
        raise envs.SetupError(f"{method} is not on PATH; install it, or use another method: --method venv")
    return method


def _step(cmd: list, what: str) -> str:
    done = envs.run(cmd)
    if done.returncode != 0:
        lines = ((done.stdout or "") + (done.stderr or "")).strip().splitlines()
        raise envs.SetupError(f"{what} failed: {lines[-1] if lines else done.returncode}")
    return (done.stdout or "").strip()


def install_uv(python: str) -> Path:
    # bytecode now: where PYTHONDONTWRITEBYTECODE is set, every run would compile recall again (pip does this)
    cmd = [
        "uv",
        "tool",
        "install",
        "--force",
        "--reinstall",
        "--compile-bytecode",
        "--python",
        python,
        str(ROOT),
    ]
    _step(cmd, "uv tool install")
    return Path(_step(["uv", "tool", "dir", "--bin"], "uv tool dir --bin")) / "recall"


def install_pipx(python: str) -> Path:
    _step(["pipx", "install", "--force", "--python", python, str(ROOT)], "pipx install")
    where = _step(["pipx", "environment", "--value", "PIPX_BIN_DIR"], "pipx environment")
    return Path(where) / "recall"


def _usable(venv: Path) -> bool:
    version = envs.version_of(str(envs.venv_bin(venv, "python")))
    return bool(version and version >= envs.MIN_PYTHON)


def install_venv(python: str, bindir: Path) -> Path:
    venv = venv_dir()
    _free_link(venv, bindir)  # before a minute of pip, not after
    made = _record(venv).get("made") or _missing(venv.parent) + _missing(bindir)
    if venv.exists() and not _usable(venv):
        shutil.rmtree(str(venv))
    if not venv.exists():
        envs.make_venv(python, venv)
    envs.pip_install(venv, ROOT)
    dest = link(venv, bindir)
    record = {"link": str(dest), "made": sorted(set(made), key=len)}
    (venv / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return dest


def _missing(folder: Path) -> list:
    """`folder` and those of its parents that do not exist yet (uninstall removes them again if empty)."""
    return [str(p) for p in [folder, *folder.parents] if not p.exists()]


def link(venv: Path, bindir: Path) -> Path:
    """`bindir/recall` -> the environment's recall."""
    bindir.mkdir(parents=True, exist_ok=True)
    dest = _free_link(venv, bindir)
    if dest.is_symlink():
        dest.unlink()
    dest.symlink_to(envs.venv_bin(venv, "recall"))
    return dest


def _free_link(venv: Path, bindir: Path) -> Path:
    """`bindir/recall`, when it is free or recall's own link; refuses another program's file."""
    dest = bindir / "recall"
    if (dest.is_symlink() or dest.exists()) and not _links_into(dest, venv):
        what = os.readlink(dest) if dest.is_symlink() else "a file"
        raise envs.SetupError(
            f"{dest} exists and is not recall's link ({what}); move it away, or put recall's command "
            "elsewhere: make install BINDIR=~/bin"
        )
    return dest


def _links_into(path: Path, venv: Path) -> bool:
    return path.is_symlink() and os.path.abspath(os.path.join(path.parent, os.readlink(path))).startswith(
        str(venv) + os.sep
    )


def _record(venv: Path) -> dict:
    try:
        data = json.loads((venv / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _on_path(folder: Path) -> bool:
    wanted = os.path.realpath(str(folder))
    return any(os.path.realpath(p) == wanted for p in os.environ.get("PATH", "").split(os.pathsep) if p)


def report(command: Path, how: str) -> None:
    """Where recall went, and what to do when its folder is not on PATH or another `recall` comes first."""
    version = envs.installed_version(command)
    if not version:
        raise envs.SetupError(f"{command} was installed but does not run; see `{command} --version`")
    print(f"{version} installed ({how}): {command}")
    folder = command.parent
    readme = Path.home() / ".local" / "bin" / "recall"  # the path README.md's first line runs
    if os.path.realpath(str(command)) != os.path.realpath(str(readme)):
        print(f"note: the command is {command}, not {readme} as README.md's first line has it: run {command}")
    if not _on_path(folder):
        shown = "$HOME/" + str(folder.relative_to(Path.home())) if _under_home(folder) else str(folder)
        now = "~/" + str(command.relative_to(Path.home())) if _under_home(command) else str(command)
        print(f"{folder} is not on your PATH. Add it: echo 'export PATH=\"{shown}:$PATH\"' >> ~/.profile")
        print(f"then open a new shell (or run that export now); until then run {now}")
        return
    first = shutil.which("recall")
    if first and os.path.realpath(first) != os.path.realpath(str(command)):
        print(
            f"note: `recall` on your PATH is {first}, which comes before {folder}; remove it or reorder PATH"
        )


def _under_home(path: Path) -> bool:
    try:
        path.relative_to(Path.home())
    except ValueError:
        return False
    return True


def install(method: str, python: str | None, bindir: Path) -> None:
    chosen = choose(method)
    interpreter, version = envs.find_python(python)
    where = {"uv": "uv tool", "pipx": "pipx", "venv": str(venv_dir())}[chosen]
    print(
        f"installing recall and its dependencies with Python {version[0]}.{version[1]} ({interpreter}) "
        f"into {where} …"
    )
    if chosen == "uv":
        command, how = install_uv(interpreter), "uv tool install"
    elif chosen == "pipx":
        command, how = install_pipx(interpreter), "pipx install"
    else:
        command, how = install_venv(interpreter, bindir), f"environment {venv_dir()}"
    report(command, how)


def _listed(cmd: list) -> bool:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=envs.clean_env())
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.split()[:1] == [envs.DIST] for line in done.stdout.splitlines())


def uninstall() -> tuple:
    """Remove every install of recall this makes, and recall's caches; returns (what was removed, the
    data folder when it holds learnings or indexes)."""
    removed: list = []
    home = forget_caches(removed)
    venv = venv_dir()
    if venv.exists():
        _unhook(venv, removed)
        record = _record(venv)
        dest = Path(record.get("link") or bin_dir() / "recall")
        if _links_into(dest, venv):
            dest.unlink()
            removed.append(str(dest))
        shutil.rmtree(str(venv))
        removed.append(str(venv))
        for folder in sorted(record.get("made", []), key=len, reverse=True):  # deepest first
            _rmdir_if_empty(Path(folder), removed)
    if shutil.which("uv") and _listed(["uv", "tool", "list"]):
        _unhook(Path(_step(["uv", "tool", "dir"], "uv tool dir")) / envs.DIST, removed)
        _step(["uv", "tool", "uninstall", envs.DIST], "uv tool uninstall")
        removed.append("uv tool " + envs.DIST)
    if shutil.which("pipx") and _listed(["pipx", "list", "--short"]):
        _unhook(
            Path(_step(["pipx", "environment", "--value", "PIPX_LOCAL_VENVS"], "pipx environment"))
            / envs.DIST,
            removed,
        )
        _step(["pipx", "uninstall", envs.DIST], "pipx uninstall")
        removed.append("pipx " + envs.DIST)
    return removed, (home if home and home.exists() else None)


def _unhook(env: Path, removed: list) -> None:
    """Hooks that `recall install --user` wrote with this environment's recall go with it (they would
    run a recall that is gone)."""
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    settings = (Path(config).expanduser() if config else Path.home() / ".claude") / "settings.json"
    recall = envs.venv_bin(env, "recall")
    try:
        names_env = str(env) + os.sep in settings.read_text(encoding="utf-8")
    except OSError:
        return
    if names_env and recall.exists():
        done = envs.run([str(recall), "uninstall", "--user"])
        if done.returncode == 0:
            removed.append(f"recall's hooks in {settings}")


def _rmdir_if_empty(folder: Path, removed: list) -> None:
    try:
        folder.rmdir()
    except OSError:
        return
    removed.append(str(folder))


def forget_caches(removed: list) -> Path | None:
    """recall's caches go with it; the learnings, indexes and session state (RECALL_HOME) stay: returns
    that folder when something is left in it."""
    from recall_agent.config import recall_home

    home = recall_home()
    cache = home / "cache"
    if cache.is_dir():
        shutil.rmtree(str(cache))
        removed.append(str(cache))
    _rmdir_if_empty(home, removed)
    return home if home.exists() else None


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recall_agent.bootstrap.install", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("command", choices=("install", "uninstall"))
    parser.add_argument("--method", choices=METHODS, default=os.environ.get("RECALL_INSTALLER") or "auto")
    parser.add_argument("--python", help="the Python 3.11+ to install with (default: the newest on PATH)")
    parser.add_argument("--bindir", help="where the `recall` command goes (default: ~/.local/bin)")
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            install(args.method, args.python, bin_dir(args.bindir))
            return 0
        removed, kept = uninstall()
        print(
            "removed: " + ", ".join(removed) if removed else "recall is not installed here: nothing removed"
        )
        if kept:
            print(f"kept your learnings and indexes in {kept} (remove that folder to forget them)")
        return 0
    except envs.SetupError as exc:
        print(f"make {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
