"""Push context (issue 35): real `recall hook` processes fed Claude Code's hook JSON.

A repository whose earlier sessions failed `git push` without an upstream gets the lesson at the next session
start; a task prompt gets the code area from the architecture index; "thanks" and a slash command get
nothing; either push can be turned off; `recall stats` counts what was injected."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooks_fixtures import Session, hook_env, make_project, run_hook

PUSH_ERROR = (
    "fatal: The current branch feat/ABC-9-orders has no upstream branch.\n"
    "To push the current branch and set the remote as upstream, use\n\n"
    "    git push --set-upstream origin feat/ABC-9-orders\n"
)
PUSH_FIX = "git push --set-upstream origin feat/ABC-9-orders"


def _push_session(sid: str, project: Path, env: dict[str, str]) -> None:
    s = Session(sid, project, env)
    s.bash_fails("git push", PUSH_ERROR)
    s.say("The branch has no upstream yet, so I pushed with --set-upstream origin to create it.")
    s.bash_ok(PUSH_FIX, "branch 'feat/ABC-9-orders' set up to track 'origin/feat/ABC-9-orders'.")
    assert s.stop("Pushed with --set-upstream.").returncode == 0


def _start(project: Path, env: dict[str, str], sid: str = "s-new") -> subprocess.CompletedProcess[str]:
    payload = {"session_id": sid, "transcript_path": str(project.parent / f"{sid}.jsonl"),
               "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}  # fmt: skip
    return run_hook("SessionStart", payload, env)


@pytest.fixture
def learned(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = make_project(tmp_path, branch="feat/ABC-9-orders")
    env = hook_env(tmp_path / "home")
    _push_session("s-one", project, env)
    _push_session("s-two", project, env)
    return project, env


def test_session_start_carries_the_upstream_lesson(learned: tuple[Path, dict[str, str]]) -> None:
    project, env = learned
    proc = _start(project, env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    ctx = out["hookSpecificOutput"]["additionalContext"]
    print(ctx)
    assert "--set-upstream" in ctx
    assert ctx.startswith("recall: the notes below were recorded from earlier sessions")
    assert "known pitfalls" in ctx
    assert len(ctx) // 4 <= 300
    stats = subprocess.run(
        [sys.executable, "-m", "recall_agent", "stats", "--json"], env=env, capture_output=True, text=True
    )
    assert json.loads(stats.stdout)["push"]["session_start"]["count"] == 1


def test_session_start_says_nothing_without_pitfalls_or_when_off(
    tmp_path: Path, learned: tuple[Path, dict[str, str]]
) -> None:
    project, env = learned
    other = tmp_path / "inventory"
    (other / ".git").mkdir(parents=True)
    assert _start(other, env).stdout == ""  # another repository's lessons are not its pitfalls
    assert _start(project, env | {"RECALL_PUSH_SESSION_START": "off"}).stdout == ""
    fresh = hook_env(tmp_path / "empty-home")
    proc = _start(project, fresh)
    assert proc.returncode == 0 and proc.stdout == ""
