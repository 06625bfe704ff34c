"""recall inside the real Codex CLI (`codex exec`, pinned in .ci/run) against a scripted Responses API on
127.0.0.1, set up by `recall install --codex` in a clean HOME:

1. a Codex session: `pytest` fails, the agent patches `total()` in `pkg/mod.py` (apply_patch), `pytest`
   passes. The Stop hook captures the learning from the rollout, with the file, the function and
   `agent: codex`;
2. a second Codex session meets the same failure: the PostToolUse hook injects the fix, and the model's
   next request carries it;
3. a Claude Code session of the same repository (`claude -p`, the plugin's hooks) meets the same failure:
   the fix learned in Codex is injected there too;
4. the recorded rollout imported into an empty store gives the same learnings as the live capture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from calc_fixtures import CAUSE, MOD, make_calc
from codex_fixtures import ResponsesMock, Turn, codex_binary, codex_env, run_codex, write_config
from hooks_fixtures import all_learnings

REPO_ROOT = Path(__file__).resolve().parent.parent
PATCH = """*** Begin Patch
*** Update File: pkg/mod.py
@@ def total(items):
     count = sum(items)
-    return count - 1
+    return count
*** End Patch
"""

if codex_binary() is None:
    if os.environ.get("CI"):
        pytest.fail("CI is set but the codex CLI is not installed (.ci/run installs it)", pytrace=False)
    pytest.skip("the codex CLI is not installed", allow_module_level=True)


def make_repo(parent: Path) -> Path:
    return make_calc(parent)


def pytest_command() -> str:
    return f"{sys.executable} -m pytest -q -p no:cacheprovider tests"


def fix_session() -> list[Turn]:
    return [
        Turn.shell(pytest_command()),
        Turn.patch(PATCH, say=CAUSE),
        Turn.shell(pytest_command()),
        Turn.text("All tests pass now."),
    ]


def recall_env(recall_home: Path) -> dict[str, str]:
    scripts = sysconfig.get_path("scripts")
    return {
        "PATH": os.pathsep.join([scripts, os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "RECALL_HOME": str(recall_home),
        "RECALL_HOOK_DEADLINE": "8",
        "PYTHONPATH": str(REPO_ROOT),
    }


def recall(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recall_agent", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def facts(learnings: list) -> list[tuple]:
    return sorted(
        (tuple(lr.error_signatures), lr.resolution_summary, tuple(lr.file_paths_touched)) for lr in learnings
    )


def test_codex_capture_injection_and_claude_code_sees_the_fix(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    project = make_repo(tmp_path)
    home = tmp_path / "home"
    env = codex_env(home, **recall_env(isolated_recall_env))

    installed = recall(["install", "--codex", "--user", "--yes"], env, project)
    assert installed.returncode == 0, installed.stderr
    assert "Codex events" in installed.stdout and "MCP server registered" in installed.stdout
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"PostToolUse", "Stop"}

    # 1. the fix, made in Codex, captured live at Stop
    with ResponsesMock(fix_session()) as api:
        write_config(api, home)
        proc = run_codex(
            project, home, "fix the tests", env=env, extra_args=["--dangerously-bypass-hook-trust"]
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert api.errors == []
    outputs = [o for r in api.main_requests for o in r.outputs()]
    assert any("1 failed" in o for o in outputs) and any("1 passed" in o for o in outputs), outputs
    live = all_learnings(isolated_recall_env)
    assert len(live) == 1, [lr.resolution_summary for lr in live]
    fixed = live[0]
    assert fixed.file_paths_touched == ["pkg/mod.py"]
    assert "`pkg/mod.py` (`total`)" in fixed.resolution_summary
    assert "`return count - 1` → `return count`" in fixed.resolution_summary
    assert "subtracts one" in fixed.resolution_summary
    assert fixed.fix is not None and fixed.fix.agent == "codex" and fixed.fix.files[0].symbols == ["total"]

    # 2. the same failure in a new Codex session: the fix comes back with the failed shell call
    (project / "pkg" / "mod.py").write_text(MOD)
    again = [Turn.shell(pytest_command()), Turn.text("Seen.")]
    with ResponsesMock(again) as api2:
        write_config(api2, home)
        proc = run_codex(
            project, home, "run the tests", env=env, extra_args=["--dangerously-bypass-hook-trust"]
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    after_failure = api2.main_requests[1].latest_text()
    assert "1 failed" in after_failure
    assert "return count - 1" in after_failure and "pkg/mod.py" in after_failure, after_failure[-3000:]

    # 4. the recorded rollout imported into an empty store: the same learnings as live
    rollouts = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    assert len(rollouts) == 2
    imported_home = tmp_path / "imported"
    done = recall(["import-sessions", "--agent", "codex", str(rollouts[0])],
                  {**env, "RECALL_HOME": str(imported_home)}, project)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "0 Claude Code, 1 Codex" in done.stdout
    assert facts(all_learnings(imported_home)) == facts(live)

    # 3. a Claude Code session of the same repository gets the fix learned in Codex
    import claude_fixtures

    if claude_fixtures.claude_binary() is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but the claude CLI is not installed (.ci/run installs it)")
        pytest.skip("the claude CLI is not installed")
    claude_home = tmp_path / "claude-home"
    script = [
        claude_fixtures.Turn.tool("Bash", {"command": pytest_command(), "description": "Run the tests"}),
        claude_fixtures.Turn.text("Seen."),
    ]
    with claude_fixtures.MessagesMock(script) as capi:
        cenv = claude_fixtures.claude_env(capi, claude_home, **recall_env(isolated_recall_env))
        proc = claude_fixtures.run_claude(capi, project, claude_home, "run the tests", env=cenv,
                                          plugin_dir=REPO_ROOT, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = capi.main_requests[1].latest_text()
    assert "return count - 1" in seen and "pkg/mod.py" in seen, seen[-3000:]


def test_a_fix_made_in_claude_code_is_injected_in_codex(tmp_path: Path, isolated_recall_env: Path) -> None:
    """The other way round: Claude Code (the plugin's hooks) captures the fix, Codex's hook injects it."""
    import claude_fixtures

    if claude_fixtures.claude_binary() is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but the claude CLI is not installed (.ci/run installs it)")
        pytest.skip("the claude CLI is not installed")
    project = make_repo(tmp_path)
    mod = str(project / "pkg" / "mod.py")
    script = [
        claude_fixtures.Turn.tool("Bash", {"command": pytest_command(), "description": "Run the tests"}),
        claude_fixtures.Turn.tool("Read", {"file_path": mod}, say=CAUSE),
        claude_fixtures.Turn.tool(
            "Edit", {"file_path": mod, "old_string": "    return count - 1", "new_string": "    return count"}
        ),  # fmt: skip
        claude_fixtures.Turn.tool(
            "Bash", {"command": pytest_command(), "description": "Run the tests again"}
        ),
        claude_fixtures.Turn.text("All tests pass now."),
    ]
    claude_home = tmp_path / "claude-home"
    with claude_fixtures.MessagesMock(script) as capi:
        cenv = claude_fixtures.claude_env(capi, claude_home, **recall_env(isolated_recall_env))
        proc = claude_fixtures.run_claude(capi, project, claude_home, "fix the tests", env=cenv,
                                          plugin_dir=REPO_ROOT, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    [learned] = all_learnings(isolated_recall_env)
    assert learned.fix is not None and learned.fix.agent == "claude-code"

    (project / "pkg" / "mod.py").write_text(MOD)
    home = tmp_path / "home"
    env = codex_env(home, **recall_env(isolated_recall_env))
    assert recall(["install", "--codex", "--user"], env, project).returncode == 0
    with ResponsesMock([Turn.shell(pytest_command()), Turn.text("Seen.")]) as api:
        write_config(api, home)
        proc = run_codex(
            project, home, "run the tests", env=env, extra_args=["--dangerously-bypass-hook-trust"]
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = api.main_requests[1].latest_text()
    assert "1 failed" in seen and "return count - 1" in seen and "pkg/mod.py" in seen, seen[-3000:]
