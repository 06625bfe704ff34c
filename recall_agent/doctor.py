"""`recall doctor`: what is installed and working, each with a fix when it is not.

The command and its environment, the packages recall needs, the learnings store, the Claude Code hooks
(plugin or settings), the MCP registration, the server (when one is configured) and this repository's
index. Read-only and offline but for the server's /health; nothing heavy is imported (stdlib, sqlite3 and
the package metadata), so it answers in well under a second.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sqlite3
import sys
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from recall_agent import __version__
from recall_agent.bootstrap import envs
from recall_agent.config import learnings_db, recall_home

DIST = envs.DIST
# the packages whose absence breaks a part of recall (import name -> distribution)
PACKAGES = {
    "jinja2": "jinja2",
    "pydantic": "pydantic",
    "httpx": "httpx",
    "numpy": "numpy",
    "wordllama": "wordllama",
    "yaml": "pyyaml",
    "tree_sitter": "tree-sitter",
    "mcp": "mcp",
    "fastapi": "fastapi",
}
SERVER_VARIABLES = ("AGENT_LEARNING_RETRIEVAL_URL", "KNOWLEDGE_FEDERATION_URL", "RECALL_SERVER_URL")
PLUGIN_INSTALL = (
    "claude plugin marketplace add <recall's repository>; claude plugin install recall@recall-agent"
)
_RUNNER = re.compile(r"\bRECALL_(?:BIN|PYTHON)=(\S+)")


@dataclass
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str | None = None


# --------------------------------------------------------------------------- the command


def install_kind(prefix: Path) -> str:
    """How the running recall was installed, read off its environment's path."""
    text = str(prefix)
    if prefix == envs.data_home() / "recall" / "venv" or text == os.environ.get("RECALL_VENV"):
        return "make install"
    if f"{os.sep}uv{os.sep}tools{os.sep}{DIST}" in text:
        return "uv tool"
    if f"{os.sep}pipx{os.sep}venvs{os.sep}{DIST}" in text:
        return "pipx"
    if f"{os.sep}plugins{os.sep}data{os.sep}" in text:
        return "the Claude Code plugin's own environment"
    package = Path(__file__).resolve().parent
    if "site-packages" not in package.parts and "dist-packages" not in package.parts:
        return f"from the checkout {package.parent}"
    return "pip"


def plugin_data() -> Path | None:
    """The plugin's data folder (`~/.claude/plugins/data/<id>`) holding a built environment: the running
    one when recall runs from it, else the first with `current/bin/recall`."""
    prefix = Path(sys.prefix)
    for folder in (prefix, *prefix.parents):
        if folder.parent.name == "data" and folder.parent.parent.name == "plugins":
            return folder
    for folder in sorted((claude_dir() / "plugins" / "data").glob("*")):
        if (folder / "recall-plugin-root").exists() and (
            envs.venv_bin(folder / "current", "recall")
        ).exists():
            return folder
    return None


def _plugin_only(project: Path, here: str) -> Check | None:
    """No `recall` on the shell's PATH, and recall came as the Claude Code plugin: that is how the plugin
    works (Claude Code puts the plugin's bin/ on the agent's PATH, not on yours), so say so, and how to
    have a shell command too."""
    plugins = enabled_plugins(project)
    data = plugin_data()
    if not plugins and data is None:
        return None
    where = f"plugin {', '.join(plugins)}" if plugins else f"the plugin's environment in {data}"
    detail = (
        f"`recall` is not on your shell's PATH, as expected with only the Claude Code plugin ({where}): "
        f"Claude Code puts the plugin's bin/ on the agent's PATH, so hooks, MCP and /recall run it; this is {here}"
    )
    target = envs.venv_bin(data / "current", "recall") if data else None
    how = (
        f"for `recall` in your shell too: ln -s {target} ~/.local/bin/recall (the plugin's own environment; "
        "updates keep that path), or make install from a checkout"
        if target and target.exists()
        else "for `recall` in your shell too: make install from a checkout (the plugin builds its environment on first use)"
    )
    return Check("command", "ok", detail, how)


def check_command(project: Path | None = None) -> Check:
    prefix = Path(sys.prefix)
    here = f"recall {__version__} in {prefix} (Python {sys.version.split()[0]}; {install_kind(prefix)})"
    found = shutil.which("recall")
    if not found and (plugin := _plugin_only(project or Path.cwd(), here)):
        return plugin
    if not found:
        linked = Path.home() / ".local" / "bin" / "recall"
        fix = (
            'export PATH="$HOME/.local/bin:$PATH" (and add it to ~/.profile)'
            if linked.exists()
            else "make install"
        )
        return Check("command", "fail", f"`recall` is not on PATH; this is {here}", fix)
    other = _script_prefix(Path(found))
    if other is not None and other.resolve() != prefix.resolve():
        return Check(
            "command",
            "warn",
            f"`recall` on PATH is {found} (environment {other}), not this {here}",
            "remove the one you do not use (make uninstall, pipx uninstall recall-agent, uv tool uninstall recall-agent)",
        )
    return Check("command", "ok", f"{found}: {here}")


def _script_prefix(script: Path) -> Path | None:
    """The environment a console script runs in: its `#!…/bin/python` line's prefix."""
    try:
        with script.open("rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace")
    except OSError:
        return None
    if not first.startswith("#!") or "python" not in first:
        return None  # a launcher (the plugin's bin/recall) or a binary: nothing to compare
    return Path(first[2:].split()[0]).parent.parent


def check_packages() -> Check:
    missing, versions = [], []
    for module, dist in PACKAGES.items():
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            missing.append(dist)
        else:
            import importlib.util

            if importlib.util.find_spec(module) is None:
                missing.append(dist)
    if missing:
        return Check("packages", "fail", "missing: " + ", ".join(missing), "reinstall recall: make install")
    return Check("packages", "ok", ", ".join(versions))


# --------------------------------------------------------------------------- the store


def check_store() -> Check:
    home = recall_home()
    db = learnings_db(home)
    if not db.exists():
        existing = next((p for p in (home, *home.parents) if p.exists()), Path("/"))
        if not os.access(existing, os.W_OK):
            return Check("store", "fail", f"{home} cannot be created ({existing} is not writable)",
                         "set RECALL_HOME to a folder you can write")  # fmt: skip
        return Check("store", "ok", f"{db}: nothing learned yet (made with the first learning)")
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            count = conn.execute("SELECT count(*) FROM learnings").fetchone()[0]
    except sqlite3.Error as exc:
        return Check(
            "store", "fail", f"{db} cannot be read: {exc}", f"move {db} away (recall makes a new one)"
        )
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())
    if not os.access(db, os.W_OK):
        return Check("store", "fail", f"{db}: {count} learnings, not writable", f"chmod u+w {db}")
    return Check("store", "ok", f"{db}: {count} learning{'s' if count != 1 else ''}, {_size(size)}")


def _size(n: float) -> str:
    units = ["B", "KB", "MB", "GB"]
    while n >= 1024 and len(units) > 1:
        n /= 1024
        units.pop(0)
    return f"{n:.0f} B" if units[0] == "B" else f"{n:.1f} {units[0]}"


# --------------------------------------------------------------------------- Claude Code


def claude_dir() -> Path:
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(explicit).expanduser() if explicit else Path.home() / ".claude"


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def settings_files(project: Path) -> dict[str, Path]:
    return {
        "user": claude_dir() / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }


def enabled_plugins(project: Path) -> list[str]:
    """`recall@<marketplace>` ids enabled in any settings scope."""
    out = []
    for path in settings_files(project).values():
        for plugin_id, on in (_json(path).get("enabledPlugins") or {}).items():
            if (
                on
                and isinstance(plugin_id, str)
                and plugin_id.split("@")[0] == "recall"
                and plugin_id not in out
            ):
                out.append(plugin_id)
    return out


def plugin_environment() -> str | None:
    """The plugin's own environment, as its last setup left it (None: the plugin never set one up)."""
    for status_file in sorted((claude_dir() / "plugins" / "data").glob("*/setup.json")):
        if not (status_file.parent / "recall-plugin-root").exists():
            continue
        status = _json(status_file)
        state = status.get("state", "unknown")
        if state == "failed":
            return f"its environment failed to build: {status.get('error')} (log: {status_file.parent / 'setup.log'})"
        return f"its environment: {state}" + (f" ({status['version']})" if status.get("version") else "")
    return None


def settings_hooks(project: Path) -> tuple[list[str], list[str]]:
    """(where recall's hooks are registered, problems with them) over the settings files."""
    from recall_agent.hooks.install import SettingsError, is_recall_hook, load

    found, problems = [], []
    for scope, path in settings_files(project).items():
        try:
            data = load(path)
        except SettingsError as exc:
            problems.append(str(exc))
            continue
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        events = sorted(
            event for event, groups in hooks.items() if isinstance(groups, list)
            for group in groups if isinstance(group, dict)
            for hook in group.get("hooks") or [] if is_recall_hook(hook)
        )  # fmt: skip
        if events:
            found.append(f"{scope} settings {path} ({', '.join(dict.fromkeys(events))})")
            problems += _gone_runners(hooks, path, scope)
    return found, problems


def _gone_runners(hooks: dict[str, Any], path: Path, scope: str) -> list[str]:
    from recall_agent.hooks.install import is_recall_hook

    gone = set()
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_recall_hook(hook):
                    for runner in _RUNNER.findall(hook["command"]):
                        target = shlex.split(runner)[0] if runner else ""
                        if target and not Path(target).exists():
                            gone.add(target)
    flag = {"user": "--user", "project": "--project", "local": "--project"}[scope]
    return [f"{path} runs {target}, which is gone: recall install {flag} again" for target in sorted(gone)]


def check_hooks(project: Path) -> Check:
    plugins = enabled_plugins(project)
    found, problems = settings_hooks(project)
    where = (
        "; ".join([f"plugin {p}" for p in plugins] + found) or "not registered: no plugin, no settings entry"
    )
    environment = plugin_environment() if plugins else None
    if environment and "failed" in environment:
        problems.append(f"{environment}; a new session tries again")
    if problems:
        return Check("hooks", "fail", where, "; ".join(problems))
    if plugins and found:
        return Check("hooks", "warn", f"registered twice, so every event runs twice: {where}",
                     "keep the plugin, remove the settings entries: recall uninstall --user (or --project)")  # fmt: skip
    if not plugins and not found:
        return Check(
            "hooks", "warn", where, f"recall install --user (every project), or the plugin: {PLUGIN_INSTALL}"
        )
    return Check("hooks", "ok", where + (f"; {environment}" if environment else ""))


def mcp_registrations(project: Path) -> list[str]:
    out = [f"plugin {p} (bin/recall mcp)" for p in enabled_plugins(project)]
    config = _json(Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home()) / ".claude.json")
    scopes = {"user ~/.claude.json": config.get("mcpServers")}
    scopes["local ~/.claude.json"] = ((config.get("projects") or {}).get(str(project)) or {}).get(
        "mcpServers"
    )
    scopes[f"project {project / '.mcp.json'}"] = _json(project / ".mcp.json").get("mcpServers")
    for scope, servers in scopes.items():
        for name, server in (servers or {}).items():
            if isinstance(server, dict) and _runs_recall_mcp(server) and not _is_plugin_file(server):
                out.append(f"{scope}: {name}")
    return out


def _runs_recall_mcp(server: dict[str, Any]) -> bool:
    command, args = str(server.get("command") or ""), server.get("args") or []
    if Path(command).name == "recall" and args[:1] == ["mcp"]:
        return True
    return str(server.get("url") or "").rstrip("/").endswith("/mcp") and "recall" in json.dumps(server)


def _is_plugin_file(server: dict[str, Any]) -> bool:
    return "${CLAUDE_PLUGIN_ROOT}" in str(server.get("command"))  # the plugin's own .mcp.json (this checkout)


def check_mcp(project: Path) -> Check:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return Check("mcp", "fail", "the MCP SDK is not installed", "reinstall recall: make install")
    where = mcp_registrations(project)
    if not where:
        return Check("mcp", "warn", "no MCP client here registers `recall mcp`",
                     f"claude mcp add recall -- recall mcp (or the plugin: {PLUGIN_INSTALL})")  # fmt: skip
    return Check("mcp", "ok", "; ".join(where))


def check_codex(project: Path) -> Check:
    """Codex CLI: recall's hooks (user and project hooks.json), the hooks feature, `recall mcp` in
    config.toml. Quiet when Codex is not used here."""
    from recall_agent.hooks import codex_install as codex

    plans = [codex.plan("user", project), codex.plan("project", project)]
    if not codex.codex_home().exists() and not (project / ".codex").exists():
        return Check("codex", "ok", "Codex CLI not set up here (recall install --codex adds recall to it)")
    hooked = [f"{p.scope} {p.hooks}: {', '.join(ev)}" for p in plans if (ev := codex.installed_hooks(p))]
    mcp = [f"{p.scope} {p.config}" for p in plans if codex.mcp_registered(p.config)]
    off = [
        f"{p.config} sets [features] {key} = false"
        for p in plans
        if (key := codex.hooks_turned_off(p.config))
    ]
    where = (
        "; ".join([f"hooks in {h}" for h in hooked] + [f"MCP in {m}" for m in mcp])
        or "no recall hooks and no `recall mcp` in Codex's hooks.json / config.toml"
    )
    if off:
        return Check("codex", "fail", where, "; ".join(off) + ": recall install --codex --yes turns it on")
    if not hooked or not mcp:
        return Check("codex", "warn", where, "recall install --codex --user (or --project)")
    return Check("codex", "ok", where + " (Codex runs them once trusted: /hooks in codex)")


# --------------------------------------------------------------------------- server and index


def check_push() -> Check:
    """Push context (issue 35): which of session start / task start is on, and what it injected so far."""
    from recall_agent.push import ledger, settings

    names = {"session_start": "session start", "prompt": "task prompt"}
    totals = ledger.totals()
    parts = []
    for kind, name in names.items():
        on = settings.enabled(kind)
        where = settings.source(kind)
        state = "on" if on else f"off ({where})"
        parts.append(f"{name} {state}: {totals[kind]['count']} injected, {totals[kind]['tokens']} tokens")
    off = [k for k in names if not settings.enabled(k)]
    if off:
        how = "; ".join(f"recall push on {k.replace('_', '-')}" for k in off)
        return Check("push", "ok", "; ".join(parts), f"to turn it back on: {how}")
    return Check("push", "ok", "; ".join(parts))


def check_server() -> Check:
    urls = {name: os.environ[name] for name in SERVER_VARIABLES if os.environ.get(name)}
    if not urls:
        return Check("server", "ok", "none configured: every answer is made in-process")
    results, failed = [], []
    for base in dict.fromkeys(_base(url) for url in urls.values()):
        ok, detail = _health(base)
        (results if ok else failed).append(f"{base}: {detail}")
    names = ", ".join(urls)
    if failed:
        return Check("server", "fail", f"{names} set; " + "; ".join(failed + results),
                     "start it (recall serve), or unset " + names)  # fmt: skip
    return Check("server", "ok", f"{names} set; " + "; ".join(results))


def _base(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _health(base: str) -> tuple[bool, str]:
    from urllib.error import HTTPError, URLError
    from urllib.request import Request, urlopen

    token = os.environ.get("RECALL_TOKEN")
    request = Request(base + "/health", headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urlopen(request, timeout=3) as response:
            body = json.loads(response.read(65536) or b"{}")
    except HTTPError as exc:
        return False, f"/health answered {exc.code}"
    except (URLError, OSError, ValueError) as exc:
        return False, f"does not answer ({getattr(exc, 'reason', exc)})"
    return body.get(
        "status"
    ) == "ok", f"answers (recall {body.get('version', '?')}, store {body.get('store', '?')})"


def check_index(cwd: Path) -> Check:
    from recall_agent import repo
    from recall_agent.architecture.graph import store_path

    root = repo.toplevel(cwd)
    if root is None:
        return Check("index", "ok", f"{cwd} is not in a git repository: nothing to index")
    path = store_path(root)
    if not path.exists():
        return Check("index", "warn", f"{root} is not indexed yet (the first architecture question does it)",
                     f"recall index (in {root})")  # fmt: skip
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            files = conn.execute("SELECT path, size, mtime_ns FROM files").fetchall()
            meta = dict(
                conn.execute("SELECT key, value FROM meta WHERE key IN ('indexed_at', 'dirty')").fetchall()
            )
    except sqlite3.Error as exc:
        return Check("index", "fail", f"{path} cannot be read: {exc}", f"recall index (in {root})")
    changed = sum(1 for rel, size, mtime in files if _changed(root / rel, size, mtime))
    age = _age(float(meta.get("indexed_at") or 0))
    detail = f"{root}: {len(files)} files, indexed {age}"
    if changed or meta.get("dirty") == "1":
        return Check("index", "warn", f"{detail}; {changed} changed since", f"recall index (in {root})")
    return Check("index", "ok", detail)


def _changed(path: Path, size: int, mtime_ns: int) -> bool:
    try:
        stat = path.stat()
    except OSError:
        return True
    return stat.st_size != size or stat.st_mtime_ns != mtime_ns


def _age(at: float) -> str:
    if not at:
        return "at an unknown time"
    seconds = max(0, time.time() - at)
    for unit, span in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= span:
            n = int(seconds // span)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


# --------------------------------------------------------------------------- the command line


def run_checks(cwd: Path) -> list[Check]:
    from recall_agent import repo

    project = repo.toplevel(cwd) or cwd
    return [
        check_command(project),
        check_packages(),
        check_store(),
        check_hooks(project),
        check_mcp(project),
        check_codex(project),
        check_server(),
        check_index(cwd),
        check_push(),
    ]


def render(checks: list[Check]) -> str:
    lines = ["recall doctor: what is installed and working", ""]
    for check in checks:
        lines.append(f"[{check.status}]".ljust(7) + check.name.ljust(9) + check.detail)
        if check.fix:
            lines.append(" " * 16 + ("fix: " if check.status != "ok" else "") + check.fix)
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall doctor",
        description="Say what is installed and working (command, packages, store, hooks, MCP, server, index), "
        "with a fix for each problem. Exit 1 when something is broken, else 0.",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--cwd", type=Path, default=None, help="the repository to look at (default: here)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    cwd = (args.cwd or Path.cwd()).resolve()
    if not cwd.is_dir():
        print(f"recall doctor: --cwd {args.cwd} is not a directory", file=sys.stderr)
        return 2
    checks = run_checks(cwd)
    if args.format == "json":
        ok = all(c.status != "fail" for c in checks)
        text = json.dumps({"ok": ok, "checks": [asdict(c) for c in checks]}, indent=2) + "\n"
    else:
        text = render(checks)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `recall doctor | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1 if any(c.status == "fail" for c in checks) else 0
