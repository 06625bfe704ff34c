"""`recall install` / `recall uninstall` on throwaway projects, and a replayed session through the installed
commands (the issue's "done means")."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from hooks_fixtures import ERROR_TEXT, FIX_MESSAGE, Session, all_learnings, hook_env, make_project

from recall_agent.hooks.install import ENTRY_SCRIPT, EVENTS, is_recall_hook

OTHER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": 'npx prettier --write "$FILE"'}],
            }
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}],
    },
}


def _run(
    recall_cmd: list[str], args: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(recall_cmd + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def env(isolated_recall_env: Path, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user-home"
    home.mkdir()
    return hook_env(isolated_recall_env, HOME=str(home))


def test_install_is_idempotent_and_keeps_other_hooks(
    tmp_path: Path, env: dict[str, str], recall_cmd: list[str]
) -> None:
    project = make_project(tmp_path)
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(OTHER_SETTINGS, indent=2))

    first = _run(recall_cmd, ["install", "--project"], project / "src", env)  # from a subfolder: repo root
    assert first.returncode == 0, first.stderr
    assert str(settings) in first.stdout
    after_first = settings.read_text()
    assert _run(recall_cmd, ["install"], project, env).returncode == 0
    assert settings.read_text() == after_first  # idempotent

    data = json.loads(after_first)
    assert data["model"] == "opus" and data["permissions"] == OTHER_SETTINGS["permissions"]
    assert data["hooks"]["PreToolUse"] == OTHER_SETTINGS["hooks"]["PreToolUse"]
    post = data["hooks"]["PostToolUse"]
    assert post[0] == OTHER_SETTINGS["hooks"]["PostToolUse"][0]
    for event, (matcher, timeout) in EVENTS.items():
        ours_groups = [g for g in data["hooks"][event] if any(is_recall_hook(h) for h in g["hooks"])]
        assert len(ours_groups) == 1 and ours_groups[0].get("matcher") == matcher
        ours = ours_groups[0]["hooks"]
        assert len(ours) == 1, event
        words = shlex.split(ours[0]["command"])
        assert words[0].startswith("RECALL_BIN=") and Path(words[0].split("=", 1)[1]).name == "recall"
        assert words[1:] == ["sh", str(ENTRY_SCRIPT), event] and ours[0]["timeout"] == timeout
        assert "async" not in ours[0]  # an async Stop dies with `claude -p` before it finishes

    removed = _run(recall_cmd, ["uninstall"], project, env)
    assert removed.returncode == 0 and f"removed {len(EVENTS)}" in removed.stdout
    assert json.loads(settings.read_text()) == OTHER_SETTINGS
    again = _run(recall_cmd, ["uninstall"], project, env)
    assert again.returncode == 0 and "no recall hooks" in again.stdout


def test_install_replaces_the_entries_of_earlier_versions(
    tmp_path: Path, env: dict[str, str], recall_cmd: list[str]
) -> None:
    """Earlier installs wrote `"<recall>" hook <Event>` with an async Stop, and a PostToolUse hook that this
    version no longer needs: they are replaced or removed, not kept."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": '"/opt/py/bin/recall" hook Stop', "async": True}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "recall hook PostToolUse"}]}],
        }
    }  # fmt: skip
    settings.write_text(json.dumps(old))
    assert _run(recall_cmd, ["install", "--dir", str(tmp_path)], tmp_path, env).returncode == 0
    hooks = json.loads(settings.read_text())["hooks"]
    (group,) = hooks["Stop"]
    (hook,) = group["hooks"]
    assert hook["command"].endswith("recall-hook Stop") and "async" not in hook
    assert "PostToolUse" not in hooks  # a success needs no hook: the capture reads the transcript


def test_user_scope_writes_home_settings(tmp_path: Path, env: dict[str, str], recall_cmd: list[str]) -> None:
    proc = _run(recall_cmd, ["install", "--user"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    user_settings = Path(env["HOME"]) / ".claude" / "settings.json"
    assert set(json.loads(user_settings.read_text())["hooks"]) == set(EVENTS)
    assert _run(recall_cmd, ["uninstall", "--user"], tmp_path, env).returncode == 0
    assert json.loads(user_settings.read_text()) == {}


def test_broken_settings_file_is_left_alone(
    tmp_path: Path, env: dict[str, str], recall_cmd: list[str]
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": [oops')
    proc = _run(recall_cmd, ["install", "--dir", str(tmp_path)], tmp_path, env)
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and "not readable JSON" in proc.stderr
    assert settings.read_text() == '{"hooks": [oops'


def test_install_help_and_bad_flags(tmp_path: Path, env: dict[str, str], recall_cmd: list[str]) -> None:
    helped = _run(recall_cmd, ["install", "--help"], tmp_path, env)
    assert helped.returncode == 0 and "--user" in helped.stdout
    bad = _run(recall_cmd, ["install", "--project", "--user"], tmp_path, env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_plugin_hooks_json_matches_the_installed_events() -> None:
    root = Path(__file__).resolve().parent.parent
    data = json.loads((root / "hooks" / "hooks.json").read_text())
    # the plugin adds SessionStart: a first use sets recall up at once (`recall install` has recall already)
    assert set(data["hooks"]) == set(EVENTS) | {"SessionStart"}
    for event, groups in data["hooks"].items():
        (hook,) = groups[0]["hooks"]
        # the plugin's launcher (bin/recall: finds or sets up recall) hands the event to the entry script
        assert hook["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/recall" hook {event}'
        assert is_recall_hook(hook) and hook["timeout"] == EVENTS.get(event, (None, 5))[1]
        assert "async" not in hook
    # the plugin runs the same entry script that `recall install` names (one script, in the package)
    assert (root / "hooks" / "recall-hook").resolve() == ENTRY_SCRIPT.resolve()
    assert 'exec sh "$root/hooks/recall-hook"' in (root / "bin" / "recall").read_text()
    assert ENTRY_SCRIPT.stat().st_mode & 0o111


def _installed_commands(settings: Path) -> dict[str, str]:
    data = json.loads(settings.read_text())
    return {
        event: next(h["command"] for g in groups for h in g["hooks"] if is_recall_hook(h))
        for event, groups in data["hooks"].items()
    }


def _replay(
    command: str, payload: dict[str, object], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run an installed hook command the way Claude Code does: through the shell, JSON on stdin."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_replayed_session_through_the_installed_hooks(
    tmp_path: Path, env: dict[str, str], recall_cmd: list[str], isolated_recall_env: Path
) -> None:
    project = make_project(tmp_path)
    assert _run(recall_cmd, ["install"], project, env).returncode == 0
    commands = _installed_commands(project / ".claude" / "settings.json")
    assert shlex.split(commands["Stop"])[-2:] == [str(ENTRY_SCRIPT), "Stop"]
    pytest_cmd = "python -m pytest -q"

    def base(sid: str, event: str) -> dict[str, object]:
        return {"session_id": sid, "transcript_path": str(tmp_path / f"{sid}.jsonl"), "cwd": str(project),
                "permission_mode": "acceptEdits", "hook_event_name": event}  # fmt: skip

    failure = {
        "tool_name": "Bash",
        "tool_input": {"command": pytest_cmd},
        "tool_use_id": "toolu_01",
        "error": ERROR_TEXT,
        "is_interrupt": False,
    }
    transcript = Session("replay-1", project, env)  # writes the transcript the client would write
    assert str(transcript.transcript) == base("replay-1", "Stop")["transcript_path"]
    transcript.logged_failure(pytest_cmd, ERROR_TEXT, tid="toolu_01")
    transcript.say(FIX_MESSAGE)
    transcript.edit("src/app/client.py")
    transcript.bash_ok(pytest_cmd, "3 passed")
    sequence = [
        ("PostToolUseFailure", failure),
        ("Stop", {"stop_hook_active": False, "last_assistant_message": "Done."}),
        ("SessionEnd", {"reason": "exit"}),
    ]
    for event, extra in sequence:
        proc = _replay(commands[event], base("replay-1", event) | extra, env, project)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), event

    (learning,) = all_learnings(isolated_recall_env)
    assert learning.session_id == "replay-1" and learning.file_paths_touched == ["src/app/client.py"]

    proc = _replay(
        commands["PostToolUseFailure"], base("replay-2", "PostToolUseFailure") | failure, env, project
    )
    assert proc.returncode == 0
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "requests-oauthlib" in context
