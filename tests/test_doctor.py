"""`recall doctor` as a real process: what it says about a bare machine, and after each piece is set up.

Each test has its own HOME (so ~/.claude, ~/.claude.json and the data folder are its own) and RECALL_HOME;
`recall` runs from this checkout. Settings are written by recall's own `recall install`, MCP entries by
the real `claude mcp add` (when the client is installed), the index by `recall index`, the server is a
real `recall serve` on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from server_fixtures import free_port, start_server

YAML_ERROR = "ModuleNotFoundError: No module named 'yaml'"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("import json\n\n\ndef main():\n    return json.dumps({})\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "app")
    return repo


def env_for(home: Path, path: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "XDG_DATA_HOME")}
    env.update(HOME=str(home), PATH=path or os.environ["PATH"], **extra)
    return env


def recall(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "recall_agent", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def doctor(cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, dict]]:
    done = recall(["doctor", "--format", "json"], cwd, env)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def test_a_bare_machine_gets_a_fix_for_each_missing_piece(home: Path, project: Path) -> None:
    env = env_for(home, path="/usr/local/bin:/usr/bin:/bin")  # no recall on PATH
    code, checks = doctor(project, env)
    assert code == 1  # the command is missing: broken
    assert checks["command"]["status"] == "fail" and "`recall` is not on PATH" in checks["command"]["detail"]
    assert checks["command"]["fix"] == "make install"
    assert checks["packages"]["status"] == "ok" and "tree-sitter" in checks["packages"]["detail"]
    assert checks["store"]["status"] == "ok" and "nothing learned yet" in checks["store"]["detail"]
    assert checks["hooks"]["status"] == "warn" and checks["hooks"]["fix"].startswith("recall install --user")
    assert checks["mcp"]["status"] == "warn" and "claude mcp add recall -- recall mcp" in checks["mcp"]["fix"]
    assert checks["server"] == {"name": "server", "status": "ok", "fix": None,
                                "detail": "none configured: every answer is made in-process"}  # fmt: skip
    assert checks["index"]["status"] == "warn" and checks["index"]["fix"] == f"recall index (in {project})"

    text = recall(["doctor"], project, env)
    assert text.returncode == 1 and text.stdout.startswith("recall doctor: what is installed and working")
    assert "[fail] command  `recall` is not on PATH" in text.stdout and "fix: make install" in text.stdout


@pytest.mark.skipif(shutil.which("claude") is None, reason="the claude CLI is not installed")
def test_a_plugin_only_install_needs_no_recall_on_the_shells_path(home: Path, project: Path) -> None:
    """Installed as the Claude Code plugin only (the real `claude plugin install` from this checkout as a
    local marketplace, no `make install`): `recall` missing from the shell's PATH is how the plugin works,
    not a failure; the doctor says so and how to get a shell command too."""
    env = env_for(home, path="/usr/local/bin:/usr/bin:/bin")
    for cmd in (
        ["claude", "plugin", "marketplace", "add", str(Path(__file__).resolve().parent.parent)],
        ["claude", "plugin", "install", "recall@recall-agent"],
    ):
        done = subprocess.run(cmd, cwd=home, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    code, checks = doctor(project, env)
    command = checks["command"]
    assert command["status"] == "ok", command
    assert (
        "`recall` is not on your shell's PATH, as expected with only the Claude Code plugin"
        in command["detail"]
    )
    assert "plugin recall@recall-agent" in command["detail"] and "agent's PATH" in command["detail"]
    assert command["fix"].startswith("for `recall` in your shell too: make install")
    assert checks["hooks"]["status"] == "ok" and "plugin recall@recall-agent" in checks["hooks"]["detail"]

    text = recall(["doctor"], project, env).stdout
    assert "[ok]   command  `recall` is not on your shell's PATH" in text and "[fail] command" not in text
    assert "\n                for `recall` in your shell too: make install" in text  # a hint, not a "fix:"


def test_after_setup_everything_is_ok(home: Path, project: Path, tmp_path: Path) -> None:
    scripts = Path(sys.executable).parent
    env = env_for(home, path=f"{scripts}:/usr/local/bin:/usr/bin:/bin")
    assert recall(["install", "--user"], project, env).returncode == 0
    taught = recall(
        ["learn", "--error", YAML_ERROR, "--resolution", "Added PyYAML to requirements."], project, env
    )
    assert taught.returncode == 0, taught.stderr
    assert recall(["index"], project, env).returncode == 0
    if shutil.which("claude"):
        added = subprocess.run(["claude", "mcp", "add", "recall", "--", "recall", "mcp"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert added.returncode == 0, added.stderr
    server = start_server(tmp_path)
    try:
        code, checks = doctor(
            project, {**env, "AGENT_LEARNING_RETRIEVAL_URL": server.url + "/v1/nodes/x/execute"}
        )
    finally:
        server.stop()
    assert code == 0, checks
    assert checks["store"]["status"] == "ok" and ": 1 learning, " in checks["store"]["detail"]
    assert (
        checks["hooks"]["status"] == "ok"
        and f"user settings {home}/.claude/settings.json" in checks["hooks"]["detail"]
    )
    assert "PostToolUseFailure" in checks["hooks"]["detail"]
    if shutil.which("claude"):
        assert checks["mcp"]["status"] == "ok" and "~/.claude.json: recall" in checks["mcp"]["detail"]
    assert checks["server"]["status"] == "ok" and "answers (recall 0.1.0" in checks["server"]["detail"]
    assert checks["index"]["status"] == "ok" and f"{project}: 1 files, indexed" in checks["index"]["detail"]

    # a file changes: the index is behind; the hooks point at a recall that was removed
    (project / "src" / "app.py").write_text("import json\n\n\ndef main():\n    return json.dumps([])\n")
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for groups in data["hooks"].values():
        for hook in groups[0]["hooks"]:
            hook["command"] = hook["command"].replace("RECALL_BIN=", f"RECALL_BIN={tmp_path}/gone/")
    settings.write_text(json.dumps(data))
    code, checks = doctor(project, env)
    assert code == 1
    assert checks["index"]["status"] == "warn" and "1 changed since" in checks["index"]["detail"]
    assert (
        checks["hooks"]["status"] == "fail"
        and "which is gone: recall install --user again" in checks["hooks"]["fix"]
    )


def test_a_server_that_does_not_answer_is_named(home: Path, project: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, checks = doctor(project, env_for(home, RECALL_SERVER_URL=url))
    assert code == 1 and checks["server"]["status"] == "fail"
    assert checks["server"]["detail"].startswith(f"RECALL_SERVER_URL set; {url}: does not answer")
    assert checks["server"]["fix"] == "start it (recall serve), or unset RECALL_SERVER_URL"


def test_a_store_that_cannot_be_read_is_named(home: Path, project: Path, tmp_path: Path) -> None:
    store = tmp_path / "recall-home"
    store.mkdir()
    (store / "learnings.db").write_text("not a database")
    code, checks = doctor(project, env_for(home, RECALL_HOME=str(store)))
    assert code == 1 and checks["store"]["status"] == "fail"
    assert "cannot be read" in checks["store"]["detail"] and checks["store"]["fix"].startswith("move ")


def test_bad_options_get_one_line_and_exit_2(home: Path, project: Path) -> None:
    done = recall(["doctor", "--cwd", str(project / "nope")], project, env_for(home))
    assert done.returncode == 2 and "is not a directory" in done.stderr and "Traceback" not in done.stderr
    done = recall(["doctor", "--format", "yaml"], project, env_for(home))
    assert done.returncode == 2 and "invalid choice" in done.stderr
