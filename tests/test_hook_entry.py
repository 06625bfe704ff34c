"""The hook entry script (`recall_agent/hooks/recall-hook`): which calls start Python, and the markers it reads.

The script is run as Claude Code runs it (`sh -c '<command>'`, JSON on stdin). `RECALL_BIN` points at a
recorder standing in for recall, so a test sees whether recall was started and with exactly which stdin.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hooks_fixtures import ERROR_TEXT, Session, hook_env, make_project

from recall_agent import session as session_state
from recall_agent.hooks.install import ENTRY_SCRIPT

SID = "7f1b155a-194a-42ba-95ae-12976901385e"


@pytest.fixture
def recorder(tmp_path: Path) -> Path:
    script = tmp_path / "fake-recall"
    script.write_text('#!/bin/sh\nprintf "%s\\n" "$*" >> "$0.args"\ncat > "$0.stdin"\n')
    script.chmod(0o755)
    return script


def entry(event: str, payload: str, recorder: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = hook_env(home, RECALL_BIN=str(recorder))
    return subprocess.run(
        ["/bin/sh", "-c", f'"{ENTRY_SCRIPT}" {event}'],
        input=payload,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def started(recorder: Path) -> list[str]:
    args = recorder.with_name(recorder.name + ".args")
    return args.read_text().splitlines() if args.exists() else []


def payload(event: str, sid: str = SID, **extra: object) -> str:
    data = {"session_id": sid, "transcript_path": "/t.jsonl", "cwd": "/p", "hook_event_name": event} | extra
    return json.dumps(data, separators=(",", ":"))


def ok_bash(sid: str = SID) -> str:
    response = {"stdout": "3 passed", "stderr": "", "interrupted": False, "isImage": False}
    return payload(
        "PostToolUse", sid, tool_name="Bash", tool_input={"command": "pytest"}, tool_response=response
    )


def test_idle_calls_do_not_start_recall(recorder: Path, isolated_recall_env: Path) -> None:
    (isolated_recall_env / "sessions").mkdir(parents=True)
    for event, data in (
        ("PostToolUse", ok_bash()),
        ("Stop", payload("Stop")),
        ("SessionEnd", payload("SessionEnd")),
    ):
        proc = entry(event, data, recorder, isolated_recall_env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), event
    assert started(recorder) == []


def test_work_starts_recall_with_the_payload_unchanged(recorder: Path, isolated_recall_env: Path) -> None:
    sessions = isolated_recall_env / "sessions"
    sessions.mkdir(parents=True)
    failure = payload("PostToolUseFailure", tool_name="Bash", error="Exit code 1\nboom")
    assert entry("PostToolUseFailure", failure, recorder, isolated_recall_env).returncode == 0
    assert started(recorder) == ["hook PostToolUseFailure"]
    assert recorder.with_name("fake-recall.stdin").read_text() == failure

    (sessions / f"{SID}.open").touch()
    big = ok_bash().replace("3 passed", "x" * 300_000 + " é\\n passed")
    assert entry("PostToolUse", big, recorder, isolated_recall_env).returncode == 0
    assert started(recorder)[-1] == "hook PostToolUse"
    assert recorder.with_name("fake-recall.stdin").read_text() == big

    (sessions / f"{SID}.json").write_text("{}")  # state alone: nothing to capture, no Python at the end
    assert entry("SessionEnd", payload("SessionEnd"), recorder, isolated_recall_env).returncode == 0
    assert started(recorder)[-1] == "hook PostToolUse"
    (sessions / f"{SID}.capture").touch()
    assert entry("Stop", payload("Stop"), recorder, isolated_recall_env).returncode == 0
    assert entry("SessionEnd", payload("SessionEnd"), recorder, isolated_recall_env).returncode == 0
    assert started(recorder)[-2:] == ["hook Stop", "hook SessionEnd"]


@pytest.mark.parametrize(
    "data",
    [
        # older Claude Code: a failed Bash arrives as PostToolUse with the exit code in tool_response
        payload("PostToolUse", tool_name="Bash", tool_response={"stdout": "", "stderr": "E", "exit_code": 2}),
        payload("PostToolUse", tool_name="X", tool_response={"is_error": True}),
        # the session id is not first, or needs escaping to be a file name: recall decides
        json.dumps({"cwd": "/p", "session_id": SID, "tool_name": "Bash"}),
        payload("PostToolUse", sid="../../etc/passwd"),
        "not json at all",
    ],
)
def test_what_the_script_cannot_rule_out_goes_to_recall(
    data: str, recorder: Path, isolated_recall_env: Path
) -> None:
    assert entry("PostToolUse", data, recorder, isolated_recall_env).returncode == 0
    assert started(recorder) == ["hook PostToolUse"]


def test_a_successful_output_that_mentions_exit_codes_stays_idle(
    recorder: Path, isolated_recall_env: Path
) -> None:
    printed = 'print(json.dumps({"exit_code": 1, "is_error": true}))'  # escaped inside the JSON string
    data = payload("PostToolUse", tool_name="Bash", tool_response={"stdout": printed, "stderr": ""})
    assert entry("PostToolUse", data, recorder, isolated_recall_env).returncode == 0
    assert started(recorder) == []


def test_missing_recall_is_silent(tmp_path: Path, isolated_recall_env: Path) -> None:
    env = hook_env(isolated_recall_env, PATH="/usr/bin:/bin", RECALL_BIN=str(tmp_path / "nothing-here"))
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        ["/bin/sh", "-c", f'"{ENTRY_SCRIPT}" PostToolUseFailure'],
        input=payload("PostToolUseFailure", tool_name="Bash", error="boom"),
        env=env | {"HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_markers_follow_the_session_state(tmp_path: Path, isolated_recall_env: Path) -> None:
    """Real hook processes keep `.open` (an error is open) and `.capture` (a fix waits) in step."""
    project = make_project(tmp_path)
    s = Session("marked-1", project, hook_env(isolated_recall_env))
    base = session_state.session_path("marked-1")
    opened, waiting = base.with_suffix(".open"), base.with_suffix(".capture")
    s.bash_fails("python -m pytest -q", ERROR_TEXT)
    assert opened.exists() and not waiting.exists()
    s.edit("src/app/client.py")
    s.bash_ok("python -m pytest -q")
    assert not opened.exists() and waiting.exists()
    s.say("The import named a package that does not exist; I changed it to requests_oauthlib.")
    s.stop("Done.")
    assert not opened.exists() and not waiting.exists()
    assert session_state.prune(older_than_s=-1) == 1
    assert list(base.parent.iterdir()) == []
