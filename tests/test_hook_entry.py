"""The hook entry script (`recall_agent/hooks/recall-hook`): which calls start Python, and the offset it reads.

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


def payload(event: str, sid: str = SID, transcript: str = "/t.jsonl", **extra: object) -> str:
    data = {"session_id": sid, "transcript_path": transcript, "cwd": "/p", "hook_event_name": event} | extra
    return json.dumps(data, separators=(",", ":"))


def ok_bash(sid: str = SID) -> str:
    response = {"stdout": "3 passed", "stderr": "", "interrupted": False, "isImage": False}
    return payload(
        "PostToolUse", sid, tool_name="Bash", tool_input={"command": "pytest"}, tool_response=response
    )


def test_idle_calls_do_not_start_recall(recorder: Path, tmp_path: Path, isolated_recall_env: Path) -> None:
    sessions = isolated_recall_env / "sessions"
    sessions.mkdir(parents=True)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user"}\n')
    (sessions / f"{SID}.offset").write_text(str(transcript.stat().st_size))  # read to its end already
    for event, data in (
        ("PostToolUse", ok_bash()),
        ("Stop", payload("Stop", transcript=str(transcript))),
        ("SessionEnd", payload("SessionEnd", transcript=str(transcript))),
    ):
        proc = entry(event, data, recorder, isolated_recall_env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), event
    assert started(recorder) == []


def test_work_starts_recall_with_the_payload_unchanged(
    recorder: Path, tmp_path: Path, isolated_recall_env: Path
) -> None:
    sessions = isolated_recall_env / "sessions"
    sessions.mkdir(parents=True)
    failure = payload("PostToolUseFailure", tool_name="Bash", error="Exit code 1\nboom")
    assert entry("PostToolUseFailure", failure, recorder, isolated_recall_env).returncode == 0
    assert started(recorder) == ["hook PostToolUseFailure"]
    assert recorder.with_name("fake-recall.stdin").read_text() == failure

    big = payload(  # an older client's failure in PostToolUse, with a large output
        "PostToolUse", tool_name="Bash", tool_response={"stdout": "x" * 300_000 + " é", "exit_code": 1}
    )
    assert entry("PostToolUse", big, recorder, isolated_recall_env).returncode == 0
    assert started(recorder)[-1] == "hook PostToolUse"
    assert recorder.with_name("fake-recall.stdin").read_text() == big

    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user"}\n')
    stop = payload("Stop", transcript=str(transcript))
    assert entry("Stop", stop, recorder, isolated_recall_env).returncode == 0  # never read: Python reads it
    assert started(recorder)[-1] == "hook Stop"
    (sessions / f"{SID}.offset").write_text(str(transcript.stat().st_size))
    assert (
        entry(
            "SessionEnd", payload("SessionEnd", transcript=str(transcript)), recorder, isolated_recall_env
        ).returncode
        == 0
    )
    assert started(recorder)[-1] == "hook Stop"  # nothing new since: no Python
    with transcript.open("a") as fh:
        fh.write('{"type":"assistant"}\n')
    assert (
        entry(
            "SessionEnd", payload("SessionEnd", transcript=str(transcript)), recorder, isolated_recall_env
        ).returncode
        == 0
    )
    assert started(recorder)[-1] == "hook SessionEnd"  # it grew: Python reads the new lines


def test_a_transcript_path_the_shell_could_run_goes_to_python_untouched(
    recorder: Path, tmp_path: Path, isolated_recall_env: Path
) -> None:
    (isolated_recall_env / "sessions").mkdir(parents=True)
    (isolated_recall_env / "sessions" / f"{SID}.offset").write_text("10")
    planted = tmp_path / "planted"
    for path in (f"/tmp/$(touch {planted})", f"/tmp/`touch {planted}`", f"/tmp/x'; touch {planted}; '"):
        assert entry("Stop", payload("Stop", transcript=path), recorder, isolated_recall_env).returncode == 0
        assert started(recorder)[-1] == "hook Stop"
    assert not planted.exists()


@pytest.mark.parametrize(
    ("event", "data"),
    [
        # older Claude Code: a failed Bash arrives as PostToolUse with the exit code in tool_response
        ("PostToolUse", payload("PostToolUse", tool_name="Bash", tool_response={"stdout": "", "stderr": "E", "exit_code": 2})),
        ("PostToolUse", payload("PostToolUse", tool_name="X", tool_response={"is_error": True})),
        # the session id is not first, or needs escaping to be a file name, or no JSON: recall decides
        ("Stop", json.dumps({"cwd": "/p", "session_id": SID, "transcript_path": "/t.jsonl"})),
        ("Stop", payload("Stop", sid="../../etc/passwd")),
        ("SessionEnd", "not json at all"),
    ],
)  # fmt: skip
def test_what_the_script_cannot_rule_out_goes_to_recall(
    event: str, data: str, recorder: Path, isolated_recall_env: Path
) -> None:
    assert entry(event, data, recorder, isolated_recall_env).returncode == 0
    assert started(recorder) == [f"hook {event}"]


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


def test_the_offset_follows_the_capture(tmp_path: Path, isolated_recall_env: Path) -> None:
    """Real hook processes: after each Stop, `<session>.offset` is where the capture stopped reading."""
    project = make_project(tmp_path)
    s = Session("marked-1", project, hook_env(isolated_recall_env))
    offset = session_state.session_path("marked-1").with_suffix(".offset")
    s.bash_fails("python -m pytest -q", ERROR_TEXT)
    assert not offset.exists()
    s.stop("Not yet.")
    assert int(offset.read_text()) == s.transcript.stat().st_size
    s.edit("src/app/client.py")
    s.bash_ok("python -m pytest -q")
    s.stop("Done.")
    assert int(offset.read_text()) == s.transcript.stat().st_size
