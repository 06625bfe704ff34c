"""`recall install --codex` / `recall uninstall --codex` and `recall doctor`'s Codex line, run as real
`recall` processes against real files in a clean HOME and CODEX_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
USER_HOOK = {"type": "command", "command": "my-linter --codex", "timeout": 3}
USER_CONFIG = """# my settings
model = "gpt-5.5"

[features]
hooks = false  # turned off on purpose

[mcp_servers.docs]
command = "docs-server"
"""


@pytest.fixture
def env(tmp_path: Path, isolated_recall_env: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "CLAUDE_"))}
    return out | {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "PYTHONPATH": str(REPO_ROOT),
                  "RECALL_HOME": str(isolated_recall_env)}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def recall(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recall_agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip


def test_project_install_keeps_the_users_hooks_and_asks_before_agents_md(env: dict, project: Path) -> None:
    hooks_file = project / ".codex" / "hooks.json"
    hooks_file.parent.mkdir()
    hooks_file.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}]}}))
    (project / "AGENTS.md").write_text("# Agents\n\nRun make test.\n")
    day = Path(env["CODEX_HOME"]) / "sessions" / "2026" / "07" / "01"
    day.mkdir(parents=True)
    meta = {
        "timestamp": "2026-07-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "s1", "cwd": str(project)},
    }
    (day / "rollout-2026-07-01T10-00-00-s1.jsonl").write_text(json.dumps(meta) + "\n")

    done = recall(env, project, "install", "--codex", "--project")
    assert done.returncode == 0, done.stderr
    assert "Found 1 earlier Codex CLI session(s) for this project: `recall import-sessions`" in done.stdout
    hooks = json.loads(hooks_file.read_text())["hooks"]
    assert hooks["PostToolUse"][0]["hooks"] == [USER_HOOK]  # the user's own, first and untouched
    ours = [h["command"] for g in hooks["PostToolUse"][1:] for h in g["hooks"]]
    assert (
        len(ours) == 1
        and ours[0].endswith("recall-hook PostToolUse")
        and hooks["PostToolUse"][1]["matcher"] == "Bash"
    )
    assert hooks["Stop"][0]["hooks"][0]["command"].endswith("recall-hook Stop")
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["recall"]["args"] == ["mcp"]
    # no consent given (no --yes, no terminal): AGENTS.md is offered, not written
    assert (project / "AGENTS.md").read_text() == "# Agents\n\nRun make test.\n"
    assert "<!-- recall:start -->" in done.stdout and "--yes" in done.stdout
    assert "/hooks" in done.stdout  # Codex asks the user to trust new hooks

    again = recall(env, project, "install", "--codex", "--project", "--yes")
    assert again.returncode == 0, again.stderr
    text = (project / "AGENTS.md").read_text()
    assert text.startswith("# Agents\n\nRun make test.\n") and text.count("<!-- recall:start -->") == 1
    hooks = json.loads(hooks_file.read_text())["hooks"]
    assert sum(len(g["hooks"]) for g in hooks["PostToolUse"]) == 2  # reinstalling does not duplicate

    gone = recall(env, project, "uninstall", "--codex", "--project")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(hooks_file.read_text()) == {
        "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}]}
    }
    assert "mcp_servers" not in tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert (project / "AGENTS.md").read_text() == "# Agents\n\nRun make test.\n"


def test_user_install_turns_hooks_on_only_with_consent_and_keeps_the_config(env: dict, project: Path) -> None:
    config_file = Path(env["CODEX_HOME"]) / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text(USER_CONFIG)

    done = recall(env, project, "install", "--codex", "--user")
    assert done.returncode == 0, done.stderr
    assert "[features] hooks = false" in done.stdout and "--yes" in done.stdout
    config = tomllib.loads(config_file.read_text())
    assert config["features"]["hooks"] is False  # not without consent
    assert config["mcp_servers"]["docs"] == {"command": "docs-server"}
    assert config["mcp_servers"]["recall"]["args"] == ["mcp"]
    assert config_file.read_text().startswith("# my settings\n")  # comments and layout kept
    doctor = recall(env, project, "doctor")
    assert "codex" in doctor.stdout and "hooks = false" in doctor.stdout

    done = recall(env, project, "install", "--codex", "--user", "--yes")
    assert done.returncode == 0, done.stderr
    assert "Codex hooks turned on" in done.stdout
    assert tomllib.loads(config_file.read_text())["features"]["hooks"] is True
    assert "# turned off on purpose" in config_file.read_text()
    hooks = json.loads((Path(env["CODEX_HOME"]) / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"PostToolUse", "Stop"}
    doctor = recall(env, project, "doctor")
    line = next(ln for ln in doctor.stdout.splitlines() if "codex" in ln)
    assert "PostToolUse, Stop" in line and "MCP in user" in line, doctor.stdout

    recall(env, project, "uninstall", "--codex", "--user")
    config = tomllib.loads(config_file.read_text())
    assert "recall" not in config["mcp_servers"] and config["mcp_servers"]["docs"] == {
        "command": "docs-server"
    }
    assert json.loads((Path(env["CODEX_HOME"]) / "hooks.json").read_text()) == {}


def test_a_broken_config_is_one_readable_line(env: dict, project: Path) -> None:
    config_file = project / ".codex" / "config.toml"
    config_file.parent.mkdir()
    config_file.write_text("[mcp_servers\nnot toml")
    done = recall(env, project, "install", "--codex", "--project")
    assert done.returncode == 1
    assert "not readable TOML" in done.stderr and "Traceback" not in done.stderr
    assert config_file.read_text() == "[mcp_servers\nnot toml"


def test_another_mcp_server_named_recall_is_left_alone(env: dict, project: Path) -> None:
    config_file = project / ".codex" / "config.toml"
    config_file.parent.mkdir()
    config_file.write_text('[mcp_servers.recall]\ncommand = "something-else"\n')
    done = recall(env, project, "install", "--codex", "--project")
    assert done.returncode == 0 and "not recall's" in done.stdout
    assert tomllib.loads(config_file.read_text())["mcp_servers"]["recall"] == {"command": "something-else"}


def test_an_older_codex_gets_its_feature_flag_with_consent(env: dict, project: Path, tmp_path: Path) -> None:
    """Codex CLI before 0.124 ran hooks only with `[features] codex_hooks = true` (an old `codex` on PATH:
    a script that answers `--version` as that release did)."""
    bin_dir = tmp_path / "old-codex"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text("#!/bin/sh\necho 'codex-cli 0.110.0'\n")
    (bin_dir / "codex").chmod(0o755)
    env = env | {"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
    config_file = Path(env["CODEX_HOME"]) / "config.toml"
    asked = recall(env, project, "install", "--codex", "--user")
    assert "Codex 0.110.0 runs hooks only with [features] codex_hooks = true" in asked.stdout
    assert "codex_hooks" not in config_file.read_text()
    done = recall(env, project, "install", "--codex", "--user", "--yes")
    assert tomllib.loads(config_file.read_text())["features"]["codex_hooks"] is True, done.stdout
