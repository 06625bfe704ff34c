"""The Claude Code plugin's own recall: a virtual environment under the plugin's data folder.

`bin/recall` runs this (`python3 -I <root>/recall_agent/bootstrap/plugin.py <root> <recall args…>`) when
it finds no recall ready: the plugin was just installed, or updated (its pyproject.toml changed). Then:

- a build starts in the background, detached from the hook (its own session, output to
  `<data>/setup.log`), holding `<data>/setup.lock` so that no two builds run; it makes a virtual
  environment with the newest Python 3.11+ on PATH (RECALL_PYTHON names another), pip-installs the plugin's
  own files into it (dependencies from the package index, nothing else from the network), checks that
  `recall --version` runs, and points `<data>/current` at it;
- the first hook to meet the build says so once, in one line, as `{"systemMessage": …}` on stdout (the
  user sees it), and exits 0 at once (the hook's time cap is a few seconds); the MCP server and the
  command say on stderr why they wait;
- a hook lets the event go; the command waits up to 110 s for the build (RECALL_SETUP_WAIT seconds, if
  set), then runs the new recall; the MCP server answers the client itself with no tools yet and hands
  the session to the new `recall mcp` when it is there (mcp_standin.py: a server that fails is skipped by
  Claude Code for 15 minutes). While an update builds, the previous environment keeps answering.
- a failed build is said once, and tried again after RETRY_AFTER seconds.

<data> is ${CLAUDE_PLUGIN_DATA} (Claude Code sets it for hooks and MCP servers; `claude plugin uninstall`
removes it). The Bash tool is not given it: then the data folder is the one this plugin marked (its
`recall-plugin-root` names this plugin's root), else the one Claude Code keeps for the installed plugin.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the plugin root: recall's sources
from recall_agent.bootstrap import envs, mcp_standin  # noqa: E402

BUILD = "--build-into"  # internal: `plugin.py <root> --build-into <data>` is the background build
ROOT_MARK = "recall-plugin-root"
BUILT_FROM = "recall-pyproject.toml"  # in an environment: the pyproject.toml it was built from
RETRY_AFTER = 600
WAIT_COMMAND = 110.0  # how long the command waits for a build: the Bash tool's default timeout is 120 s

FIRST = (
    "recall: setting itself up on first use, in the background (a Python environment under {data}, about a "
    "minute; log: {log}). Its hooks and /recall work once that is done."
)
UPDATE = "recall: the plugin changed; rebuilding its environment in the background (log: {log})."
FAILED = "recall: setting itself up failed: {error} (log: {log}); it tries again in {minutes} minutes."
WAITING = "recall: waiting for its first-use setup to finish (log: {log}) …"
NOT_READY = "recall: not set up yet ({state}); see {log}, then try again."


def plugins_dir() -> Path:
    explicit = os.environ.get("CLAUDE_CODE_PLUGIN_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(config).expanduser() if config else Path.home() / ".claude") / "plugins"


def data_dir(root: Path) -> Path | None:
    explicit = os.environ.get("CLAUDE_PLUGIN_DATA")
    if explicit:
        return Path(explicit)
    base = plugins_dir() / "data"
    for folder in sorted(base.glob("*")):
        if _read(folder / ROOT_MARK) == str(root):
            return folder
    name = _json(root / ".claude-plugin" / "plugin.json").get("name")
    installed = _json(plugins_dir() / "installed_plugins.json").get("plugins") or {}
    ids = [key for key in installed if isinstance(key, str) and key.split("@")[0] == name]
    if len(ids) == 1:  # Claude Code's data folder for `<name>@<marketplace>`
        return base / "".join(c if c.isalnum() or c in "-_" else "-" for c in ids[0])
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def digest(root: Path) -> str:
    try:
        return hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()
    except OSError:
        return ""


def is_fresh(root: Path, data: Path) -> bool:
    """The current environment was built from this plugin's pyproject.toml (the same bytes)."""
    current = data / "current"
    built = current / BUILT_FROM
    if not (os.access(str(envs.venv_bin(current, "recall")), os.X_OK) and built.is_file()):
        return False
    source = root / "pyproject.toml"
    if built.read_bytes() != source.read_bytes():
        return False
    if built.stat().st_mtime_ns <= source.stat().st_mtime_ns:
        os.utime(str(built))  # the same file, copied or touched later: bin/recall's age test passes again
    return True


def status(data: Path) -> dict:
    return _json(data / "setup.json")


def write_status(data: Path, **fields: object) -> None:
    tmp = data / "setup.json.tmp"
    tmp.write_text(json.dumps(fields, indent=1) + "\n", encoding="utf-8")
    os.replace(str(tmp), str(data / "setup.json"))


def _lock(data: Path) -> int | None:
    """The build lock's descriptor, held, or None when a build holds it."""
    import fcntl

    fd = os.open(str(data / "setup.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def start_build(root: Path, data: Path) -> str:
    """ "started", "running" (another build holds the lock) or "failed" (the last one failed recently)."""
    data.mkdir(parents=True, exist_ok=True)
    fd = _lock(data)
    if fd is None:
        return "running"
    try:
        last = status(data)
        recent = time.time() - float(last.get("at") or 0) < RETRY_AFTER
        if last.get("state") == "failed" and last.get("pyproject") == digest(root) and recent:
            return "failed"
        (data / ROOT_MARK).write_text(str(root) + "\n", encoding="utf-8")
        with open(str(data / "setup.log"), "a", encoding="utf-8") as log:
            subprocess.Popen(
                [sys.executable, "-I", str(Path(__file__).resolve()), str(root), BUILD, str(data)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(data),
                env=envs.clean_env(),
                pass_fds=(fd,),  # the build holds the lock through its copy of the descriptor
                start_new_session=True,  # not killed with the hook
            )
        return "started"
    finally:
        os.close(fd)


def build(root: Path, data: Path) -> int:
    """The background build (its stdout is the log). Returns 0 when `<data>/current` is the new recall."""
    log = sys.stdout
    print(
        "== {}: building recall from {} with {}".format(
            time.strftime("%Y-%m-%d %H:%M:%S"), root, sys.executable
        )
    )
    write_status(data, state="building", at=time.time(), pyproject=digest(root))
    target = data / "venvs" / f"env-{int(time.time())}-{os.getpid()}"
    try:
        python, version = envs.find_python(os.environ.get("RECALL_PYTHON"), "RECALL_PYTHON=/path/to/python3")
        print(f"== Python {version[0]}.{version[1]}: {python}")
        log.flush()
        envs.make_venv(python, target, log)
        envs.pip_install(target, root, log)
        shown = envs.installed_version(envs.venv_bin(target, "recall"))
        if not shown:
            raise envs.SetupError("the new environment's recall does not run")
        shutil.copyfile(str(root / "pyproject.toml"), str(target / BUILT_FROM))
        switch(data, target)
    except (envs.SetupError, OSError) as exc:
        shutil.rmtree(str(target), ignore_errors=True)
        print(f"== failed: {exc}")
        write_status(data, state="failed", at=time.time(), pyproject=digest(root), error=str(exc), said=False)
        return 1
    for said in data.glob("said-*"):
        said.unlink()
    print(f"== ready: {shown} in {target}")
    write_status(data, state="ready", at=time.time(), pyproject=digest(root), version=shown, env=str(target))
    return 0


def switch(data: Path, target: Path) -> None:
    """Point `<data>/current` at the new environment in one step, then drop the older ones."""
    link = data / "current.new"
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(os.path.relpath(str(target), str(data)), str(link))
    os.replace(str(link), str(data / "current"))
    for old in (data / "venvs").iterdir():
        if old != target:
            shutil.rmtree(str(old), ignore_errors=True)


def _once(data: Path, key: str) -> bool:
    """True for the first caller only: an exclusive create, so two hooks at once cannot both say it."""
    try:
        os.close(os.open(str(data / f"said-{key}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


def _message(outcome: str, runnable: bool, root: Path, data: Path, hook: bool) -> str | None:
    """What to say: a hook says the first-use setup and each failure once (the user sees it); the MCP
    server and the command say every time why they wait or fail (their reader is the agent)."""
    log = data / "setup.log"
    if outcome == "failed":
        last = status(data)
        at = float(last.get("at") or 0)
        if hook and not _once(data, f"failed-{int(at)}"):
            return None
        minutes = max(1, round((RETRY_AFTER - (time.time() - at)) / 60))
        return FAILED.format(error=last.get("error"), log=log, minutes=minutes)
    if runnable:
        return UPDATE.format(log=log) if outcome == "started" and not hook else None
    if hook:
        return FIRST.format(data=data, log=log) if _once(data, "first-" + digest(root)[:12]) else None
    return (FIRST if outcome == "started" else WAITING).format(data=data, log=log)


def wait_for(root: Path, data: Path, timeout: float) -> bool:
    """True once a fresh environment is there; False when the build ended without one, or at timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_fresh(root, data):
            return True
        fd = _lock(data)
        if fd is not None:  # no build runs (any more)
            os.close(fd)
            return is_fresh(root, data)
        time.sleep(0.5)
    return False


def run(root: Path, data: Path, args: list) -> int:
    recall = str(envs.venv_bin(data / "current", "recall"))
    if args[:1] == ["hook"]:
        os.environ["RECALL_BIN"] = recall
        os.execv("/bin/sh", ["sh", str(root / "hooks" / "recall-hook")] + args[1:2])
    os.execv(recall, [recall] + args)
    return 1  # not reached


def main(argv: list) -> int:
    root, args = Path(argv[0]), list(argv[1:])
    if args[:1] == [BUILD]:
        return build(root, Path(args[1]))
    hook = args[:1] == ["hook"]
    data = data_dir(root)
    if data is None:
        if hook:
            sys.stdin.read()
            return 0
        print(f"recall: not set up, and no Claude Code plugin data folder names {root}", file=sys.stderr)
        return 1
    if is_fresh(root, data):  # a build finished since bin/recall looked
        return run(root, data, args)
    runnable = os.access(str(envs.venv_bin(data / "current", "recall")), os.X_OK)
    outcome = start_build(root, data)
    message = _message(outcome, runnable, root, data, hook)
    if hook and not runnable:
        sys.stdin.read()
        if message:
            print(json.dumps({"systemMessage": message}))
        return 0
    if message:
        print(message, file=sys.stderr)
    if runnable:  # the previous environment answers while the new one builds
        return run(root, data, args)
    if args[:1] == ["mcp"] and outcome != "failed":  # answer the client now, hand over when ready
        recall = str(envs.venv_bin(data / "current", "recall"))
        version = _json(root / ".claude-plugin" / "plugin.json").get("version") or "0"
        return mcp_standin.run([recall] + args, lambda: is_fresh(root, data), str(version))
    wait = float(os.environ.get("RECALL_SETUP_WAIT") or WAIT_COMMAND)
    if outcome != "failed" and wait_for(root, data, wait):
        return run(root, data, args)
    last = status(data)
    state = last.get("error") or last.get("state") or "building"
    print(NOT_READY.format(state=state, log=data / "setup.log"), file=sys.stderr)
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # the client stopped the MCP server, or the command, while it waited
        sys.exit(130)
