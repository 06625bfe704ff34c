"""The plugin installed the way Claude Code users install plugins, on a machine with no recall at all.

A clean HOME, the system's PATH (no pyenv, no recall: Debian's python3 is the only Python), the real
Claude Code client against the scripted Messages API (tests/claude_fixtures.py):

1. `claude plugin marketplace add <this checkout>` and `claude plugin install recall@recall-agent`;
2. the setup run: the first hook finds no recall, starts the build in the background under
   ${CLAUDE_PLUGIN_DATA}, says so once in one line (a systemMessage) and exits 0 within its cap; later hooks
   stay quiet; `/recall` in the same session waits for the build and answers;
3. a session fixes an error: the learning is captured (by the plugin's own recall);
4. in another checkout the same failure gets the prior fix injected, and `/recall:recall` answers with it;
   the plugin's MCP server (`bin/recall mcp`) connects; `recall doctor` (from the Bash tool) says so;
5. `claude plugin uninstall` takes the plugin's environment away with its data folder.

Slow: the build downloads recall's dependencies from the package index (about a minute).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from claude_fixtures import (
    DUMMY_KEY,
    ERROR_LINE,
    FAKE_TOKEN,
    OFFLINE_ENV,
    MessagesMock,
    Turn,
    claude_binary,
    fix_script,
    make_checkout,
    run_claude,
    run_skill_block,
)
from hooks_fixtures import all_learnings
from install_fixtures import REPO_ROOT, SYSTEM_PATH, clean_env, run, system_python_problem

pytestmark = pytest.mark.slow
PLUGIN = "recall@recall-agent"
SKILL = "recall:recall"
FIRST_USE = "recall: setting itself up on first use"
MCP_TOOL = "mcp__plugin_recall_recall__recall"
# until the stand-in has handed the session to the real `recall mcp` (its process is up), then a moment for
# the client to list the tools again
WAIT_FOR_MCP = (
    "for i in $(seq 120); do ps -eo args | grep -q "
    '"$HOME/.claude/plugins/data/recall-recall-agent/current/bin/[r]ecall mcp" && break; sleep 0.5; done; sleep 3'
)

if claude_binary() is None:
    if os.environ.get("CI"):
        pytest.fail("CI is set but the claude CLI is not installed (.ci/run installs it)", pytrace=False)
    pytest.skip("the claude CLI is not installed", allow_module_level=True)
if system_python_problem():
    pytest.skip(system_python_problem() or "", allow_module_level=True)


def session(
    home: Path, project: Path, script: list[Turn], prompt: str, debug: Path | None = None, **extra: str
) -> MessagesMock:
    with MessagesMock(script) as api:
        env = clean_env(
            home,
            **OFFLINE_ENV,
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY=DUMMY_KEY,
            NO_PROXY="127.0.0.1,localhost",
            RECALL_HOOK_DEADLINE="4",  # a loaded machine must not turn this into a timing test
            **extra,
        )
        proc = run_claude(api, project, home, prompt, env=env, debug_file=debug, timeout=420)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert api.errors == []
    return api


def hook_runs(log: str) -> list[tuple[str, int, int]]:
    """(event, exit status, milliseconds) of every run of the plugin's hook command in a debug log."""
    pattern = r"Hooks: (\w+)(?::\w+)? \[\"[^\]]*bin/recall\" hook \w+\] \(plugin [^)]*\) finished with status (\d+) \((\d+)ms\)"
    return [(m[0], int(m[1]), int(m[2])) for m in re.findall(pattern, log)]


def wait_ready(data: Path, timeout: float = 400) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = json.loads((data / "setup.json").read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("state") in ("ready", "failed"):
            return state
        time.sleep(1)
    raise AssertionError(f"the build did not finish: {(data / 'setup.log').read_text()[-2000:]}")


def test_plugin_from_a_local_marketplace_sets_itself_up(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home, **OFFLINE_ENV)
    assert run(["sh", "-c", "command -v recall"], env, home).returncode != 0  # no recall anywhere

    added = run(["claude", "plugin", "marketplace", "add", str(REPO_ROOT)], env, home, timeout=120)
    assert added.returncode == 0 and "recall-agent" in added.stdout, added.stdout + added.stderr
    installed = run(["claude", "plugin", "install", PLUGIN], env, home, timeout=120)
    assert installed.returncode == 0 and f"Successfully installed plugin: {PLUGIN}" in installed.stdout
    data = home / ".claude" / "plugins" / "data" / "recall-recall-agent"
    recall_home = home / ".local" / "share" / "recall"

    # the setup run: a tool call (its hook starts the setup and says so), then /recall, which waits for it
    first = make_checkout(tmp_path / "a")
    debug = tmp_path / "setup.log"
    script = [
        Turn.tool("Bash", {"command": "git status --short", "description": "Look around"}),
        Turn.tool("Skill", {"skill": SKILL, "args": ERROR_LINE}),
        Turn(run_skill_block),
        Turn.tool("Bash", {"command": WAIT_FOR_MCP, "description": "Wait for recall's MCP server"}),
        Turn.text("Nothing known yet."),
    ]
    # the Bash tool's cap (2 min by default) and recall's wait, raised: a loaded CI machine builds slowly
    api = session(
        home, first, script, "look around", debug, BASH_DEFAULT_TIMEOUT_MS="400000", RECALL_SETUP_WAIT="380"
    )
    log = debug.read_text()
    said = [
        line for line in log.splitlines() if "Hooks: Parsed initial response" in line and FIRST_USE in line
    ]
    assert len(said) == 1, said  # once, in one line
    runs = hook_runs(log)
    assert {event for event, _, _ in runs} >= {"Stop"}
    assert all(status == 0 and ms < 5000 for _, status, ms in runs), runs
    answer = api.main_requests[3].latest_text()
    assert "## Recall Results" in answer, answer[-2000:]
    # the MCP server: no tools while recall set itself up, recall's tools once it had (the same session)
    assert MCP_TOOL not in api.main_requests[0].text() and MCP_TOOL in api.main_requests[-1].text()
    state = wait_ready(data)
    assert state["state"] == "ready", (data / "setup.log").read_text()[-2000:]
    assert (data / "current" / "bin" / "recall").is_file()
    assert not list(data.glob("said-*"))

    # a session fixes the error: the plugin's recall captures it
    api = session(home, first, fix_script(first), "make the check pass")
    (learning,) = all_learnings(recall_home)
    assert "requests-oauthlib" in learning.resolution_summary
    assert any(ERROR_LINE in s for s in learning.error_signatures)

    # another checkout, the same failure: the prior fix is injected; /recall answers with it
    second = make_checkout(tmp_path / "b")
    debug = tmp_path / "third.log"
    script = [
        Turn.tool("Bash", {"command": "python3 check.py", "description": "Run the check"}),
        Turn.tool("Skill", {"skill": SKILL, "args": ERROR_LINE}),
        Turn(run_skill_block),
        Turn.text("The prior fix applies."),
    ]
    api = session(home, second, script, "make the check pass", debug)
    assert MCP_TOOL in api.main_requests[-1].text()
    injected = api.main_requests[1].latest_text()
    assert "recall: a prior fix for this error" in injected and "requests-oauthlib" in injected
    skill_answer = api.main_requests[3].latest_text()
    assert "## Recall Results" in skill_answer and "requests-oauthlib" in skill_answer
    log = debug.read_text()
    assert FIRST_USE not in log
    assert re.search(r'MCP server "plugin:recall:recall": Successfully connected', log), [
        line for line in log.splitlines() if "plugin:recall:recall" in line
    ][-5:]
    assert not [
        str(p) for p in recall_home.rglob("*") if p.is_file() and FAKE_TOKEN.encode() in p.read_bytes()
    ]

    # `recall doctor` as the Bash tool runs it (the plugin's bin/ last on PATH) says what is working
    bash_tool = clean_env(home, f"{SYSTEM_PATH}:{REPO_ROOT}/bin")
    doctor = run(["recall", "doctor", "--format", "json"], bash_tool, second, timeout=120)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert "the Claude Code plugin's own environment" in checks["command"]["detail"], checks
    assert checks["hooks"]["status"] == "ok" and f"plugin {PLUGIN}" in checks["hooks"]["detail"]
    assert "its environment: ready (recall 0.1.0)" in checks["hooks"]["detail"]
    assert checks["mcp"]["status"] == "ok" and f"plugin {PLUGIN}" in checks["mcp"]["detail"]
    assert checks["store"]["status"] == "ok" and ": 1 learning, " in checks["store"]["detail"]
    # the same doctor from the user's own shell, where the plugin's bin/ is not on PATH: plugin-only is fine
    shell = run(
        [str(data / "current" / "bin" / "recall"), "doctor", "--format", "json"], env, second, timeout=120
    )
    command = {c["name"]: c for c in json.loads(shell.stdout)["checks"]}["command"]
    assert command["status"] == "ok" and "as expected with only the Claude Code plugin" in command["detail"]
    assert command["fix"].startswith(f"for `recall` in your shell too: ln -s {data}/current/bin/recall "), (
        command
    )

    removed = run(["claude", "plugin", "uninstall", PLUGIN], env, home, timeout=120)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not data.exists()  # the plugin's environment went with its data folder
