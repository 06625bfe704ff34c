"""recall in Codex CLI: its hooks in `hooks.json`, `recall mcp` in `config.toml`, a short AGENTS.md section.

- **Hooks** (`<codex home>/hooks.json` for `--user`, `<project>/.codex/hooks.json` for `--project`; Codex
  reads both): PostToolUse on `Bash` (a failed shell call: the prior fix comes back as
  `hookSpecificOutput.additionalContext`) and Stop (the rollout's new lines are captured). The user's own
  hooks are kept; recall's are recognised by their command, as in Claude Code's settings (`install.py`).
- **Feature flag**: Codex runs hooks when `[features] hooks` is on (the default since Codex 0.124;
  `codex_hooks` is the older name). recall turns it on only when the user's config.toml turned it off,
  and only with consent: the change is printed and made with `--yes` or a yes on the terminal.
- **Trust**: Codex runs a hook it has not seen before only once the user trusted it (`/hooks` in codex).
  recall does not write trust for the user; install says so.
- **MCP**: `[mcp_servers.recall]` (`command = <recall>`, `args = ["mcp"]`) in the same scope's
  config.toml, edited with tomlkit so the user's comments and layout stay.
- **AGENTS.md** (`--project`): a short section, between markers, telling the agent when to ask recall;
  added to the file (never overwriting it) with consent, removed by uninstall.
"""

from __future__ import annotations

import os
import re
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recall_agent.hooks import install as settings

# Codex hook events recall uses: (matcher, timeout seconds). Codex's PostToolUse sees shell calls as
# `Bash` (and apply_patch as `apply_patch`, which recall does not need: the rollout has the patch).
EVENTS: dict[str, tuple[str | None, int]] = {"PostToolUse": ("Bash", 5), "Stop": (None, 10)}
MCP_NAME = "recall"
AGENTS_START = "<!-- recall:start -->"
AGENTS_END = "<!-- recall:end -->"
AGENTS_SECTION = f"""{AGENTS_START}
## recall (memory of fixes)

When a command fails with an error you do not understand at once, or before you change code you do not
know, ask recall first: call the `recall` MCP tool with the error text (or run `recall "<error>"`). It
answers with fixes this team made before for the same error, the code facts around it, and antipatterns.
After fixing something non-obvious, record it with the `recall_learn` tool (or `recall learn`).
{AGENTS_END}
"""
_AGENTS_BLOCK = re.compile(re.escape(AGENTS_START) + r"[^\x00]*?" + re.escape(AGENTS_END) + r"\n?")


@dataclass
class Plan:
    """Where recall's Codex pieces go for one scope."""

    scope: str  # "project" or "user"
    hooks: Path
    config: Path
    agents: Path | None  # AGENTS.md (project scope only)
    notes: list[str] = field(default_factory=list)


def codex_home() -> Path:
    from recall_agent.config import codex_home as home

    return home()


def plan(scope: str, project: Path) -> Plan:
    if scope == "user":
        return Plan("user", codex_home() / "hooks.json", codex_home() / "config.toml", None)
    return Plan("project", project / ".codex" / "hooks.json", project / ".codex" / "config.toml",
                project / "AGENTS.md")  # fmt: skip


def recall_executable() -> str:
    """The `recall` script of this interpreter (what `recall mcp` is started as)."""
    script = Path(sysconfig.get_path("scripts")) / ("recall.exe" if os.name == "nt" else "recall")
    return str(script) if script.is_file() else "recall"


# ---------------------------------------------------------------------- config.toml


def _load_toml(path: Path) -> Any:
    import tomlkit

    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # tomlkit's parse errors are ValueErrors
        raise settings.SettingsError(
            f"{path} is not readable TOML ({exc}); fix or move it, nothing was changed"
        ) from exc


def _save_toml(path: Path, doc: Any) -> None:
    import tempfile

    import tomlkit

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="config.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(tomlkit.dumps(doc))
        os.replace(tmp, path)
    except OSError as exc:
        raise settings.SettingsError(f"cannot write {path}: {exc.strerror or exc}") from exc


HOOKS_BY_DEFAULT = (0, 124)  # the first Codex CLI version that runs hooks without a feature flag


def codex_version() -> tuple[int, ...] | None:
    """The installed Codex CLI's version (`codex --version`: `codex-cli 0.169.0`), None when unknown."""
    import shutil
    import subprocess

    binary = shutil.which("codex")
    if binary is None:
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"(?<!\d)(\d+)\.(\d+)\.(\d+)", out[:200])  # linear: starts only where a number does
    return tuple(int(x) for x in m.groups()) if m else None


def hooks_turned_off(config: Path, version: tuple[int, ...] | None = None) -> str | None:
    """The feature key (`hooks` or `codex_hooks`) that keeps hooks from running: set to false in this
    config.toml, or (a Codex CLI older than 0.124, whose hooks were off unless turned on) not set to true."""
    features = _load_toml(config).get("features") if config.exists() else None
    features = features if isinstance(features, dict) else {}
    off = next((k for k in ("hooks", "codex_hooks") if features.get(k) is False), None)
    turned_on = any(features.get(k) is True for k in ("hooks", "codex_hooks"))
    if off is None and version is not None and version < HOOKS_BY_DEFAULT and not turned_on:
        return "codex_hooks"
    return off


def _set_false(config: Path, key: str) -> bool:
    features = _load_toml(config).get("features") if config.exists() else None
    return isinstance(features, dict) and features.get(key) is False


def turn_hooks_on(config: Path) -> None:
    import tomlkit

    doc = _load_toml(config)
    features = doc.get("features")
    if features is None:
        features = tomlkit.table()
        doc["features"] = features
    for key in ("hooks", "codex_hooks"):
        if features.get(key) is False:
            features[key] = True
    if not any(features.get(k) is True for k in ("hooks", "codex_hooks")):
        features["codex_hooks"] = True  # an older Codex CLI: its name for the flag
    _save_toml(config, doc)


def is_recall_mcp(server: object) -> bool:
    if not isinstance(server, dict):
        return False
    command, args = str(server.get("command") or ""), server.get("args")
    return Path(command).name in ("recall", "recall.exe") and list(args or [])[:1] == ["mcp"]


def register_mcp(config: Path) -> bool:
    """`[mcp_servers.recall]` in config.toml; False when a server of that name that is not recall's is
    already there (it is left alone)."""
    import tomlkit

    doc = _load_toml(config)
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    current = servers.get(MCP_NAME)
    if current is not None and not is_recall_mcp(current):
        return False
    entry = tomlkit.table()
    entry["command"] = recall_executable()
    entry["args"] = ["mcp"]
    servers[MCP_NAME] = entry
    _save_toml(config, doc)
    return True


def unregister_mcp(config: Path) -> bool:
    if not config.exists():
        return False
    doc = _load_toml(config)
    servers = doc.get("mcp_servers")
    if not isinstance(servers, dict) or not is_recall_mcp(servers.get(MCP_NAME)):
        return False
    del servers[MCP_NAME]
    if not servers:
        del doc["mcp_servers"]
    _save_toml(config, doc)
    return True


def mcp_registered(config: Path) -> bool:
    try:
        servers = _load_toml(config).get("mcp_servers") if config.exists() else None
    except settings.SettingsError:
        return False
    return isinstance(servers, dict) and is_recall_mcp(servers.get(MCP_NAME))


# ---------------------------------------------------------------------- AGENTS.md


def has_agents_section(path: Path) -> bool:
    try:
        return AGENTS_START in path.read_text(encoding="utf-8")
    except OSError:
        return False


def add_agents_section(path: Path) -> None:
    """Append the section (the file's own text stays as it was)."""
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        path.write_text(text + sep + AGENTS_SECTION, encoding="utf-8")
    except OSError as exc:
        raise settings.SettingsError(f"cannot write {path}: {exc.strerror or exc}") from exc


def remove_agents_section(path: Path) -> bool:
    if not has_agents_section(path):
        return False
    text = path.read_text(encoding="utf-8")
    kept = _AGENTS_BLOCK.sub("", text).rstrip("\n")
    if kept:
        path.write_text(kept + "\n", encoding="utf-8")
    else:
        path.unlink()  # recall wrote the whole file
    return True


# ---------------------------------------------------------------------- install / uninstall


def install(p: Plan, consent: bool) -> list[str]:
    """Write the hooks, register MCP, and (with consent) turn the hooks feature on and add the AGENTS.md
    section. Returns the lines to print. Raises settings.SettingsError."""
    lines = []
    count = settings.install(p.hooks, events=EVENTS)
    lines.append(f"recall hooks installed for {count} Codex events in {p.hooks}")
    if register_mcp(p.config):
        lines.append(f"recall MCP server registered in {p.config} ([mcp_servers.{MCP_NAME}])")
    else:
        lines.append(
            f"{p.config} already has an MCP server named {MCP_NAME!r} that is not recall's; left as is"
        )
    version = codex_version()
    for config in dict.fromkeys([codex_home() / "config.toml", p.config]):
        key = hooks_turned_off(config, version if config == codex_home() / "config.toml" else None)
        if key is None:
            continue
        if consent:
            turn_hooks_on(config)
            lines.append(f"Codex hooks turned on in {config} ([features] {key} = true)")
        else:
            why = (
                f"[features] {key} = false"
                if _set_false(config, key)
                else (
                    f"Codex {'.'.join(map(str, version or ()))} runs hooks only with [features] {key} = true"
                )
            )
            lines.append(
                f"Codex hooks are turned off in {config} ({why}), so recall's hooks will not run. Run again "
                f"with --yes to set {key} = true there."
            )
    if p.agents is not None and not has_agents_section(p.agents):
        if consent:
            add_agents_section(p.agents)
            lines.append(f"added a short recall section to {p.agents} (between {AGENTS_START} markers)")
        else:
            lines.append(
                f"Suggested for {p.agents} (tells the agent when to ask recall; add it with --yes, the "
                f"file is never overwritten):\n\n{AGENTS_SECTION}"
            )
    lines.append(
        "Codex runs a new hook only after you trust it: start `codex` and review recall's hooks with /hooks."
    )
    return lines


def uninstall(p: Plan) -> list[str]:
    removed = settings.uninstall(p.hooks)
    lines = [
        f"removed {removed} recall hook(s) from {p.hooks}" if removed else f"no recall hooks in {p.hooks}"
    ]
    if unregister_mcp(p.config):
        lines.append(f"removed the recall MCP server from {p.config}")
    if p.agents is not None and remove_agents_section(p.agents):
        lines.append(f"removed the recall section from {p.agents}")
    return lines


def installed_hooks(p: Plan) -> list[str]:
    """Events recall's hooks are installed for in this scope's hooks.json."""
    try:
        data = settings.load(p.hooks)
    except settings.SettingsError:
        return []
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    return sorted(
        event
        for event, groups in hooks.items()
        if isinstance(groups, list)
        and any(
            isinstance(g, dict) and any(settings.is_recall_hook(h) for h in g.get("hooks") or [])
            for g in groups
        )
    )
