"""Push context (issue 35) in the real Claude Code client (`claude -p` with the plugin) against a scripted
Messages API: a third session in a repository where two sessions learned that `git push` needs an upstream
carries the lesson in its first request; a task prompt gets the code area; "thanks" gets nothing.

Skipped only when `claude` is not installed and CI is not set (as tests/test_claude_code.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_fixtures import MessagesMock, Turn, claude_binary, claude_env, recall_client_env, run_claude
from test_push import SHOP

REPO_ROOT = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]

if claude_binary() is None:
    if os.environ.get("CI"):
        pytest.fail("CI is set but the claude CLI is not installed (.ci/run installs it)", pytrace=False)
    pytest.skip("the claude CLI is not installed", allow_module_level=True)


@pytest.fixture
def client_env(isolated_recall_env: Path) -> dict[str, str]:
    return recall_client_env(isolated_recall_env)


def _session(
    script: list[Turn], project: Path, home: Path, extra: dict[str, str], prompt: str
) -> MessagesMock:
    with MessagesMock(script) as api:
        proc = run_claude(
            api, project, home, prompt, env=claude_env(api, home, **extra), plugin_dir=REPO_ROOT
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert api.errors == []
    return api


def _checkout(parent: Path, remote: Path, branch: str) -> Path:
    """A clone `shop-api` of the shared remote on a new branch that was never pushed."""
    project = parent / "shop-api"
    subprocess.run([*GIT, "clone", "-q", str(remote), str(project)], check=True)
    subprocess.run([*GIT, "checkout", "-q", "-b", branch], cwd=project, check=True)
    (project / "notes.txt").write_text(branch + "\n")
    subprocess.run([*GIT, "add", "."], cwd=project, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", branch], cwd=project, check=True)
    return project


def _remote(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "README.md").write_text("shop\n")
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=seed, check=True)
    subprocess.run([*GIT, "add", "."], cwd=seed, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "seed"], cwd=seed, check=True)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(remote)], check=True)
    return remote


def _push_script(branch: str) -> list[Turn]:
    return [
        Turn.tool("Bash", {"command": "git push", "description": "Push the branch"}),
        Turn.tool(
            "Bash",
            {"command": f"git push --set-upstream origin {branch}", "description": "Push and set upstream"},
            say="The branch has no upstream yet, so I push with --set-upstream origin to create it.",
        ),
        Turn.text("Pushed: the new branch needed --set-upstream origin on its first push."),
    ]


def test_a_learned_pitfall_reaches_the_first_request(
    tmp_path: Path, client_env: dict[str, str], isolated_recall_env: Path
) -> None:
    home = tmp_path / "home"
    remote = _remote(tmp_path)
    for n in (1, 2):
        branch = f"feat/ABC-{n}-orders"
        project = _checkout(tmp_path / f"s{n}", remote, branch)
        api = _session(_push_script(branch), project, home, client_env, "push my branch")
        assert "no upstream branch" in api.main_requests[1].latest_text()
        if n == 1:  # nothing learned yet: silence at session start
            assert "known pitfalls" not in api.main_requests[0].text()
    assert (isolated_recall_env / "learnings.db").exists()

    third = _checkout(tmp_path / "s3", remote, "feat/ABC-3-orders")
    script = [
        Turn.tool(
            "Bash", {"command": "git push --set-upstream origin feat/ABC-3-orders", "description": "Push"}
        ),
        Turn.text("Pushed."),
    ]
    api = _session(script, third, home, client_env, "push my branch")
    first = api.main_requests[0].text()
    assert "known pitfalls of this repository" in first and "--set-upstream" in first
    # the scripted model pushes with --set-upstream at once; the real remote accepts it
    assert "set up to track" in api.main_requests[1].latest_text()


def test_task_prompt_gets_the_code_area_and_thanks_nothing(
    tmp_path: Path, client_env: dict[str, str], isolated_recall_env: Path
) -> None:
    home = tmp_path / "home"
    root = tmp_path / "shop"
    for rel, content in SHOP.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {**os.environ, **client_env}
    done = subprocess.run([sys.executable, "-m", "recall_agent", "index", str(root)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    api = _session([Turn.text("Looking at it.")], root, home, client_env, "fix the typo in place_order")
    first = api.main_requests[0].latest_text()
    assert "orders.py" in first and "place_order" in first
    api = _session([Turn.text("You're welcome.")], root, home, client_env, "thanks")
    assert "the code this task is likely about" not in api.main_requests[0].text()
