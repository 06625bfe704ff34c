"""Capture on a transcript the real Claude Code client wrote (`claude -p`, the plugin's hooks, a scripted
Messages API): live at Stop, and again by `recall import-sessions` from the same transcript — one engine,
the same learnings.

The session: `pytest` fails (a test of `pkg/mod.py`), and every pytest run in this checkout prints the
same warning; the agent says why, reads and edits `total()` in `pkg/mod.py`, and the tests pass. Then
`git push` fails for a branch without an upstream and `git push --set-upstream origin feature-x` works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from calc_fixtures import CAUSE, git, make_calc
from claude_fixtures import MessagesMock, Turn, claude_binary, claude_env, run_claude
from hooks_fixtures import all_learnings

REPO_ROOT = Path(__file__).resolve().parent.parent
WARNING = "UserWarning: the legacy settings file is deprecated"
CONFTEST = f'import warnings\n\nwarnings.warn("{WARNING.split(": ", 1)[1]}", UserWarning)\n'

if claude_binary() is None:
    if os.environ.get("CI"):
        pytest.fail("CI is set but the claude CLI is not installed (.ci/run installs it)", pytrace=False)
    pytest.skip("the claude CLI is not installed", allow_module_level=True)


def make_repo(parent: Path) -> Path:
    """A checkout on branch feature-x with a bare `origin` that has no such branch yet."""
    remote = parent / "origin.git"
    git(parent, "init", "-q", "--bare", str(remote))
    project = make_calc(parent, "feature-x", {"conftest.py": CONFTEST})
    git(project, "remote", "add", "origin", str(remote))
    return project


def script(project: Path) -> list[Turn]:
    mod = str(project / "pkg" / "mod.py")
    test = f"{sys.executable} -m pytest -q tests"
    return [
        Turn.tool("Bash", {"command": test, "description": "Run the tests"}),
        Turn.tool("Read", {"file_path": mod}, say=CAUSE),
        Turn.tool("Edit", {"file_path": mod, "old_string": "    return count - 1", "new_string": "    return count"}),
        Turn.tool("Bash", {"command": test, "description": "Run the tests again"}),
        Turn.tool("Bash", {"command": "git push", "description": "Push"}),
        Turn.tool("Bash", {"command": "git push --set-upstream origin feature-x", "description": "Push"}),
        Turn.text("Perfect! All tests pass and the branch is pushed."),
    ]  # fmt: skip


def facts(learnings: list) -> list[tuple]:
    return sorted(
        (tuple(lr.error_signatures), lr.resolution_summary, tuple(lr.file_paths_touched)) for lr in learnings
    )


def test_live_and_imported_capture_of_a_real_client_session(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    project = make_repo(tmp_path)
    home = tmp_path / "home"
    scripts = sysconfig.get_path("scripts")
    extra = {
        "PATH": os.pathsep.join([scripts, os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "RECALL_HOME": str(isolated_recall_env),
        "RECALL_HOOK_DEADLINE": "8",
        "PYTHONPATH": str(REPO_ROOT),
    }
    with MessagesMock(script(project)) as api:
        proc = run_claude(api, project, home, "fix the tests and push", env=claude_env(api, home, **extra),
                          plugin_dir=REPO_ROOT, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert api.errors == []
    results = [r["content"] for req in api.main_requests for r in req.tool_results()]
    assert any("1 failed" in str(r) for r in results) and any("1 passed" in str(r) for r in results)

    live = all_learnings(isolated_recall_env)
    by_error = {("push" if any("upstream" in s for s in lr.error_signatures) else "test"): lr for lr in live}
    assert set(by_error) == {"test", "push"}, [lr.error_signatures for lr in live]

    fixed = by_error["test"]
    assert any("assert" in s and "test_total" in s for s in fixed.error_signatures)
    assert all(WARNING not in s for s in fixed.error_signatures)  # printed by every run: background
    assert fixed.file_paths_touched == ["pkg/mod.py"]
    summary = fixed.resolution_summary
    assert "`pkg/mod.py` (`total`)" in summary and "`return count - 1` → `return count`" in summary
    assert "subtracts one" in summary  # the agent's cause, said before the fix
    assert "Perfect" not in summary
    assert fixed.fix is not None and fixed.fix.files[0].symbols == ["total"]

    push = by_error["push"]
    assert "--set-upstream origin feature-x" in push.resolution_summary
    assert push.fix is not None and push.fix.command is not None
    assert push.fix.command.before == "git push" and push.file_paths_touched == []

    # the same transcript imported into an empty store: the same learnings
    transcripts = list((home / ".claude" / "projects").rglob("*.jsonl"))
    assert len(transcripts) == 1
    imported_home = tmp_path / "imported"
    env = {**os.environ, "RECALL_HOME": str(imported_home), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "recall_agent", "import-sessions", str(transcripts[0])],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert facts(all_learnings(imported_home)) == facts(live)
    exported = subprocess.run(
        [sys.executable, "-m", "recall_agent", "export"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert all(json.loads(line)["fix"]["source"] == "transcript" for line in exported.splitlines())
