"""The real Claude Code CLI (`claude -p`, headless) with recall loaded, against a scripted Messages API.

Two routes, each with two sessions in two checkouts of the same repository:
- the plugin (`--plugin-dir <this checkout>`): the manifest and hooks load with no error or warning, the
  skill is listed to the model, `/recall:recall …` and the Skill tool both return recall's answer, a fixed
  error becomes one learning in headless mode with no secret anywhere under RECALL_HOME, and the second
  session gets the prior fix after the same failure;
- `recall install --project` (hooks in `.claude/settings.json`): capture and injection again.

Skipped only when `claude` is not installed and CI is not set: under CI (`.ci/run` installs the pinned
client) a missing client fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from claude_fixtures import (
    ERROR_LINE,
    FAKE_TOKEN,
    MessagesMock,
    Turn,
    claude_binary,
    claude_env,
    fix_script,
    make_checkout,
    recall_client_env,
    run_claude,
    run_skill_block,
)
from hooks_fixtures import all_learnings

from recall_agent import repo

REPO_ROOT = Path(__file__).resolve().parent.parent
SKILL = "recall:recall"

if claude_binary() is None:
    if os.environ.get("CI"):
        pytest.fail("CI is set but the claude CLI is not installed (.ci/run installs it)", pytrace=False)
    pytest.skip(
        "the claude CLI is not installed (npm install -g @anthropic-ai/claude-code)", allow_module_level=True
    )


@pytest.fixture
def client_env(isolated_recall_env: Path) -> dict[str, str]:
    return recall_client_env(isolated_recall_env)


def _claude(
    script: list[Turn], project: Path, home: Path, extra: dict[str, str], prompt: str, **kw: object
) -> tuple[MessagesMock, subprocess.CompletedProcess[str]]:
    with MessagesMock(script) as api:
        proc = run_claude(api, project, home, prompt, env=claude_env(api, home, **extra), **kw)  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert api.errors == []
    return api, proc


def plugin_problems(log: str) -> list[str]:
    """Debug-log lines that report a plugin, manifest or hook problem."""
    pattern = re.compile(
        r"\[(ERROR|WARN)\].*(plugin|manifest|hook|recall)|hook-load-failed|Duplicate hooks", re.I
    )
    return [line for line in log.splitlines() if pattern.search(line)]


def files_holding(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def assert_captured(home: Path, project: Path) -> None:
    (learning,) = all_learnings(home)
    assert learning.repo == repo.identity(project) and learning.ticket_id == "ABC-123"
    assert learning.file_paths_touched == ["check.py"]
    assert any(ERROR_LINE in s for s in learning.error_signatures)
    assert "requests-oauthlib" in learning.resolution_summary
    assert files_holding(home, FAKE_TOKEN) == []
    assert not list((home / "sessions").glob("*.capture"))  # nothing left waiting


def test_plugin_in_headless_claude(
    tmp_path: Path, client_env: dict[str, str], isolated_recall_env: Path
) -> None:
    home = tmp_path / "home"
    debug = tmp_path / "debug-a.log"

    # session 1: the error is fixed and explained; capture must happen although `claude -p` exits at once
    first = make_checkout(tmp_path / "a")
    api, _ = _claude(
        fix_script(first),
        first,
        home,
        client_env,
        "make the check pass",
        plugin_dir=REPO_ROOT,
        debug_file=debug,
    )
    log = debug.read_text()
    assert "Loaded inline plugin from path: recall" in log and "Loaded 1 skills from plugin recall" in log
    assert plugin_problems(log.replace(str(tmp_path), "<tmp>")) == []
    assert re.search(r"Hooks: Stop .*bin/recall.* hook Stop.* finished with status 0", log)
    listing = api.main_requests[0].text()
    assert SKILL in listing and "Ask recall before guessing" in listing
    after_failure = api.main_requests[1]
    assert ERROR_LINE in after_failure.latest_text()
    assert "recall: a prior fix" not in after_failure.text()  # nothing learned yet: silence
    assert_captured(isolated_recall_env, first)

    # session 2, another checkout: the Skill tool, then the same failure (the prior fix is injected)
    second = make_checkout(tmp_path / "b")
    script = [
        Turn.tool("Skill", {"skill": SKILL, "args": ERROR_LINE}),
        Turn(run_skill_block),
        Turn.tool("Bash", {"command": "python3 check.py", "description": "Run the check"}),
        Turn.text("The prior fix applies: replace the import."),
    ]
    api, proc = _claude(script, second, home, client_env, "make the check pass", plugin_dir=REPO_ROOT)
    skill_answer = api.main_requests[2].latest_text()
    assert "## Recall Results" in skill_answer and "requests-oauthlib" in skill_answer
    injected = api.main_requests[3].latest_text()
    assert ERROR_LINE in injected
    assert "recall: a prior fix for this error" in injected and "requests-oauthlib" in injected
    assert proc.stdout.strip() == "The prior fix applies: replace the import."

    # session 3: the user types /recall:recall with the error
    api, _ = _claude([Turn(run_skill_block), Turn.text("ok")], second, home, client_env, f"/{SKILL} {ERROR_LINE}",
                     plugin_dir=REPO_ROOT)  # fmt: skip
    slash_answer = api.main_requests[1].latest_text()
    assert "## Recall Results" in slash_answer and "requests-oauthlib" in slash_answer
    assert files_holding(isolated_recall_env, FAKE_TOKEN) == []


def test_recall_install_project_in_headless_claude(
    tmp_path: Path, client_env: dict[str, str], isolated_recall_env: Path
) -> None:
    home = tmp_path / "home"
    env = {**os.environ, **client_env}
    checkouts = []
    for name in ("a", "b"):
        project = make_checkout(tmp_path / name)
        done = subprocess.run(
            [sys.executable, "-m", "recall_agent", "install", "--project"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
        assert all("async" not in h for groups in hooks.values() for g in groups for h in g["hooks"])
        checkouts.append(project)

    debug = tmp_path / "debug-a.log"
    _claude(fix_script(checkouts[0]), checkouts[0], home, client_env, "make the check pass", debug_file=debug)
    assert re.search(r"Hooks: Stop .*recall-hook.* finished with status 0", debug.read_text())
    assert_captured(isolated_recall_env, checkouts[0])

    script = [
        Turn.tool("Bash", {"command": "python3 check.py", "description": "Run the check"}),
        Turn.text("Replacing the import as before."),
    ]
    api, _ = _claude(script, checkouts[1], home, client_env, "make the check pass")
    injected = api.main_requests[1].latest_text()
    assert "recall: a prior fix for this error" in injected and "requests-oauthlib" in injected
