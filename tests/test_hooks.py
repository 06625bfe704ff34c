"""The learning loop end to end: real `python -m recall_agent hook <Event>` processes fed Claude Code hook JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hooks_fixtures import (
    ERROR_TEXT,
    FIX_MESSAGE,
    PLANTED_PASSWORD,
    PLANTED_SECRET,
    Session,
    all_learnings,
    hook_env,
    http_server,
    injected_context,
    make_project,
    run_hook,
)

from recall_agent import session as session_state
from recall_agent.safety import render

PYTEST = "cd {project} && python -m pytest tests/test_app.py -q"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def env(isolated_recall_env: Path) -> dict[str, str]:
    return hook_env(isolated_recall_env)


def _fix_session(sid: str, project: Path, env: dict[str, str]) -> Session:
    """error -> the agent names the cause -> edit -> unrelated success -> same command succeeds -> the
    agent's closing sentence -> stop."""
    s = Session(sid, project, env)
    command = PYTEST.format(project=project)
    assert injected_context(s.bash_fails(command, ERROR_TEXT)) is None  # nothing learned yet: silent
    s.say(FIX_MESSAGE)
    s.edit("src/app/client.py")
    s.bash_ok("git status --short", stdout=" M src/app/client.py")
    s.bash_ok(command + " 2>&1 | tail -n 20")
    s.say("Perfect! All tests pass now.")
    stop = s.stop("Perfect! All tests pass now.")
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, "", "")
    return s


def test_fixed_error_becomes_one_learning_with_the_right_fields(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    _fix_session("sess-1", project, env)
    learnings = all_learnings(isolated_recall_env)
    assert len(learnings) == 1
    learning = learnings[0]
    assert learning.session_id == "sess-1"
    assert learning.repo == "shop-api"
    assert learning.file_paths_touched == ["src/app/client.py"]
    assert learning.ticket_id == "ABC-123"
    assert learning.task_type == "bug_fix"
    assert learning.confidence == pytest.approx(0.7)
    assert len(learning.error_signatures) == 1
    assert "ModuleNotFoundError: No module named 'requests_oauth'" in learning.error_signatures[0]
    # what fixed it, from the edit; the cause in the agent's words; never its closing sentence
    summary = learning.resolution_summary
    assert (
        "`src/app/client.py`" in summary and "`import requests_oauth` → `import requests_oauthlib`" in summary
    )
    assert "requests-oauthlib" in summary  # the cause, as the agent said it before the fix
    assert "Perfect" not in summary and "All tests pass" not in summary
    assert len(summary.splitlines()) <= 3
    assert learning.fix is not None and learning.fix.source == "transcript"
    assert [f.path for f in learning.fix.files] == ["src/app/client.py"]
    dumped = learning.model_dump_json()
    assert PLANTED_SECRET not in dumped and PLANTED_PASSWORD not in dumped
    assert "<redacted:github_token>" in learning.error_signatures[0]
    assert "<redacted:password>" in learning.error_signatures[0]
    # the session files on disk hold no secret either (the hooks' record, the capture engine's state)
    for suffix in (".json", ".capture.json"):
        raw_state = session_state.session_path("sess-1").with_suffix(suffix).read_text()
        assert PLANTED_SECRET not in raw_state and PLANTED_PASSWORD not in raw_state


def test_stop_twice_and_session_end_capture_once(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    s = _fix_session("sess-1", project, env)
    assert s.stop("again").returncode == 0
    assert s.end().returncode == 0
    assert len(all_learnings(isolated_recall_env)) == 1


def test_secrets_in_commands_never_reach_the_session_files(project: Path, env: dict[str, str]) -> None:
    s = Session("sess-cmd", project, env)
    command = f"GITHUB_TOKEN={PLANTED_SECRET} gh api /user"
    s.bash_fails(command, "HTTP 401: Bad credentials")
    s.bash_ok(command)
    assert s.stop("done").returncode == 0
    for suffix in (".json", ".capture.json"):
        raw = session_state.session_path("sess-cmd").with_suffix(suffix).read_text()
        assert PLANTED_SECRET not in raw, suffix
    state = session_state.load("sess-cmd")
    assert state is not None and state["errors"][0]["resolved_ts"]  # the capture saw it fixed


def test_unresolved_error_is_not_captured(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    s = Session("sess-x", project, env)
    s.bash_fails(PYTEST.format(project=project), ERROR_TEXT)
    s.edit("src/app/client.py")
    s.bash_ok("python -m pytest tests/test_other.py -q")  # a different target does not resolve it
    s.bash_ok("npm test")
    assert s.stop(FIX_MESSAGE).returncode == 0
    assert all_learnings(isolated_recall_env) == []


def test_next_sessions_get_the_learning_once_per_error_and_feedback_moves_confidence(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    _fix_session("sess-1", project, env)
    (learning,) = all_learnings(isolated_recall_env)

    second = Session("sess-2", project, env)
    command = "python -m pytest -q"  # a different command meeting the same error
    context = injected_context(second.bash_fails(command, ERROR_TEXT.replace("db:5432", "db:6543")))
    assert context is not None
    frame, header, *_ = context.splitlines()
    assert frame == render.FRAME  # framed once as notes to check, not instructions (recall_agent/safety)
    assert header.startswith("recall: a prior fix for this error")
    assert "requests-oauthlib" in context
    assert str(learning.id)[:8] in context
    assert "ticket ABC-123" in context and "src/app/client.py" in context
    assert len(context.splitlines()) <= 4

    # the same error again in the same session: not injected twice, and the learning did not help (judged
    # when the turn ends, from the transcript)
    assert injected_context(second.bash_fails(command, ERROR_TEXT)) is None
    assert second.stop("I could not fix it.").returncode == 0
    (after_repeat,) = all_learnings(isolated_recall_env)
    assert after_repeat.confidence == pytest.approx(0.6)

    # a third session meets it: injected, then the command succeeds -> confidence rises (each injection
    # is judged once: by the next run of that command; applied with the capture at Stop, so the tool call
    # that resolves the error does not open the store)
    third = Session("sess-3", project, env)
    assert injected_context(third.bash_fails(command, ERROR_TEXT)) is not None
    third.bash_ok(command)
    assert all_learnings(isolated_recall_env)[0].confidence == pytest.approx(0.6)
    # meeting it again in that session still does not repeat it
    assert injected_context(third.bash_fails(command, ERROR_TEXT)) is None
    third.bash_ok(command)
    third.stop("Fixed as before.")
    (after_success,) = [x for x in all_learnings(isolated_recall_env) if x.id == learning.id]
    assert after_success.confidence == pytest.approx(0.7)


def test_unrelated_error_gets_nothing(project: Path, env: dict[str, str]) -> None:
    _fix_session("sess-1", project, env)
    other = Session("sess-2", project, env)
    proc = other.bash_fails("npm run build", "error TS2304: Cannot find name 'useQueryClient'.")
    assert injected_context(proc) is None


def test_older_claude_code_failure_in_post_tool_use(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    _fix_session("sess-1", project, env)
    old = Session("sess-old", project, env)
    proc = old.bash_fails_old_style("python -m pytest -q", ERROR_TEXT)
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "requests-oauthlib" in out["hookSpecificOutput"]["additionalContext"]
    state = session_state.load("sess-old")
    assert state is not None and "requests_oauth" in state["errors"][0]["text"]


def test_last_recorded_error_is_what_the_hook_saw(project: Path, env: dict[str, str]) -> None:
    s = Session("sess-9", project, env)
    s.bash_fails("make build", "make: *** [Makefile:3: build] Error 2\ncc: error: foo.c: No such file")
    text = session_state.last_recorded_error("sess-9", project)
    assert text is not None and "foo.c: No such file" in text
    assert session_state.last_recorded_error(None, project / "src") == text


def test_interrupted_and_file_tool_failures_are_ignored(project: Path, env: dict[str, str]) -> None:
    s = Session("sess-i", project, env)
    base = {
        "session_id": "sess-i",
        "transcript_path": "",
        "cwd": str(project),
        "hook_event_name": "PostToolUseFailure",
    }
    interrupted = base | {
        "tool_name": "Bash",
        "tool_input": {"command": "sleep 100"},
        "error": "x",
        "is_interrupt": True,
    }
    edit = base | {
        "tool_name": "Edit",
        "tool_input": {"file_path": "a.py"},
        "error": "String to replace not found",
    }
    for payload in (interrupted, edit):
        proc = run_hook("PostToolUseFailure", payload, env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert session_state.load("sess-i") is None
    assert s.session_id == "sess-i"


# ---------------------------------------------------------------------- bad input: exit 0, silent, logged


@pytest.mark.parametrize(
    ("event", "raw"),
    [
        ("PostToolUseFailure", b""),
        ("PostToolUseFailure", b"{not json"),
        ("PostToolUseFailure", b"[1, 2, 3]"),
        ("PostToolUseFailure", b'{"session_id": "s", "cwd": "/tmp"}'),
        ("PostToolUse", b"\xff\xfe\x00garbage"),
        ("Stop", b"null"),
        ("NoSuchEvent", b'{"session_id": "s"}'),
    ],
    ids=["empty", "malformed", "list", "no-tool", "binary", "null", "unknown-event"],
)
def test_bad_input_exits_zero_silently_with_a_log_line(
    event: str, raw: bytes, env: dict[str, str], isolated_recall_env: Path
) -> None:
    proc = run_hook(event, None, env, raw=raw)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = (isolated_recall_env / "logs" / "hooks.log").read_text()
    assert len(log.splitlines()) == 1
    assert event in log


def test_hook_without_event_and_help(env: dict[str, str], recall_cmd: list[str]) -> None:
    import subprocess

    proc = subprocess.run(recall_cmd + ["hook"], input=b"{}", env=env, capture_output=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    helped = subprocess.run(recall_cmd + ["hook", "--help"], env=env, capture_output=True, text=True)
    assert helped.returncode == 0 and "PostToolUseFailure" in helped.stdout


def test_unwritable_recall_home(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where RECALL_HOME's parent should be")
    env = hook_env(blocker / "home")
    s = Session("sess-ro", project, env)
    s.bash_ok("ls")
    for proc in (s.bash_fails(PYTEST.format(project=project), ERROR_TEXT), s.stop("done")):
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_huge_transcript_is_read_from_the_end(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """recall joins a session late: its first Stop reads the transcript's last part, not 100 MB."""
    s = Session("sess-big", project, env)
    command = PYTEST.format(project=project)
    filler = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 10_000}}) + "\n"
    with s.transcript.open("a") as fh:
        for _ in range(10_500):  # ~100 MB of earlier conversation
            fh.write(filler)
    s.bash_fails(command, ERROR_TEXT)
    s.edit("src/app/client.py")
    s.bash_ok(command)
    s.say(FIX_MESSAGE)
    assert s.transcript.stat().st_size > 100_000_000
    proc = s.stop("Done.")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    (learning,) = all_learnings(isolated_recall_env)
    assert "requests_oauthlib" in learning.resolution_summary


def test_missing_transcript_captures_nothing_and_says_why(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    s = Session("sess-nt", project, env)
    command = PYTEST.format(project=project)
    s.bash_fails(command, ERROR_TEXT)
    s.edit("src/app/client.py")
    s.bash_ok(command)
    s.transcript.unlink()
    proc = s.stop(FIX_MESSAGE)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert all_learnings(isolated_recall_env) == []  # the transcript is what the capture reads
    assert "transcript not read" in (isolated_recall_env / "logs" / "hooks.log").read_text()


# ---------------------------------------------------------------------- team server


def test_capture_posts_to_the_team_server_with_the_token(project: Path, isolated_recall_env: Path) -> None:
    with http_server(lambda req, body: (201, b'{"id": "x", "merged": false}', 0)) as (url, received):
        env = hook_env(isolated_recall_env, RECALL_SERVER_URL=url, RECALL_TOKEN="team-token-123")
        _fix_session("sess-srv", project, env)
    assert len(received) == 1
    path, headers, body = received[0]
    assert path == "/v1/learnings"
    assert headers["Authorization"] == "Bearer team-token-123"
    learning = json.loads(body)
    assert learning["session_id"] == "sess-srv" and learning["ticket_id"] == "ABC-123"
    assert PLANTED_SECRET not in body.decode() and PLANTED_PASSWORD not in body.decode()
    assert all_learnings(isolated_recall_env) == []  # the server took it: nothing local


def test_server_down_keeps_the_learning_locally(project: Path, isolated_recall_env: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = hook_env(
        isolated_recall_env,
        RECALL_SERVER_URL=f"http://127.0.0.1:{port}",
        AGENT_LEARNING_RETRIEVAL_URL=f"http://127.0.0.1:{port}/v1/nodes/node_agent_learning_retrieval_effect/execute",
    )
    _fix_session("sess-down", project, env)  # the failure hook's lookup fails silently too
    assert len(all_learnings(isolated_recall_env)) == 1
    log = (isolated_recall_env / "logs" / "hooks.log").read_text()
    assert "learnings lookup failed" in log
    assert "kept locally" in log


def test_retrieval_over_http_injects_server_matches(project: Path, isolated_recall_env: Path) -> None:
    match = {
        "learning_id": "5d1f9a52-0b7e-4c47-9a51-6c1de8b7f001",
        "match_type": "error_signature",
        "similarity": 0.93,
        "freshness_score": 0.9,
        "combined_score": 0.84,
        "repo": "shop-api",
        "resolution_summary": "Pinned urllib3<2 in requirements.txt; botocore 1.29 breaks with urllib3 2.x.",
        "error_signatures": ["ImportError: cannot import name 'DEFAULT_CIPHERS' from 'urllib3.util.ssl_'"],
        "file_paths_touched": ["requirements.txt"],
        "ticket_id": "OPS-7",
        "task_type": "dependency",
        "age_days": 3,
        "created_at": "2026-11-26T10:00:00Z",
    }
    low = match | {"learning_id": "5d1f9a52-0b7e-4c47-9a51-6c1de8b7f002", "similarity": 0.5}
    reply = json.dumps({"matches": [match, low], "query_ms": 3}).encode()
    with http_server(lambda req, body: (200, reply, 0)) as (url, received):
        env = hook_env(isolated_recall_env, AGENT_LEARNING_RETRIEVAL_URL=url + "/execute", RECALL_TOKEN="t0k")
        s = Session("sess-http", project, env)
        context = injected_context(
            s.bash_fails("python -c 'import boto3'", "ImportError: cannot import name 'DEFAULT_CIPHERS'")
        )
    assert context is not None and "Pinned urllib3<2" in context and "3d ago" in context
    assert "6c1de8b7f002"[:8] not in context and len(context.splitlines()) == 3  # below threshold: dropped
    request = json.loads(received[0][2])
    assert request["match_type"] == "error_signature" and request["repo"] == "shop-api"
    assert received[0][1]["Authorization"] == "Bearer t0k"


def test_slow_server_cannot_stall_the_hook(project: Path, isolated_recall_env: Path) -> None:
    """The lookup waits at most the hook's deadline: the process ends (exit 0, silent) long before the reply."""
    with http_server(lambda req, body: (200, b'{"matches": [], "query_ms": 1}', 20)) as (url, _received):
        env = hook_env(isolated_recall_env, real_deadline=True, AGENT_LEARNING_RETRIEVAL_URL=url + "/execute")
        s = Session("sess-slow", project, env)
        proc = s.bash_fails("pytest", "E   AssertionError: assert 1 == 2")  # run_hook's timeout is 30 s < 20+
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = (isolated_recall_env / "logs" / "hooks.log").read_text()
    # either the lookup's own timeout or the process deadline ended it, and said so
    assert "learnings lookup failed" in log or "deadline: gave up" in log


def test_deadline_ends_the_process_silently(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """Past its deadline the hook leaves (exit 0, no output, one log line) even mid-lookup."""
    _fix_session("sess-1", project, env)  # a store exists: the lookup loads the learnings engine
    tight = env | {"RECALL_HOOK_DEADLINE": "0.2"}
    proc = Session("sess-late", project, tight).bash_fails("python -m pytest -q", ERROR_TEXT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = (isolated_recall_env / "logs" / "hooks.log").read_text()
    assert "deadline: gave up" in log or "no time left" in log


# ---------------------------------------------------------------------- the agent's own learning


def _agent_learns(sid: str, project: Path, env: dict[str, str], recall_cmd: list[str]) -> str:
    import subprocess

    done = subprocess.run(
        [*recall_cmd, "learn", "--session", sid, "--error", "ModuleNotFoundError: No module named 'requests_oauth'",
         "--resolution", "The client imported requests_oauth; the package is requests-oauthlib (renamed import).",
         "--file", "src/app/client.py"],
        cwd=project, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_agents_learning_supersedes_the_automatic_one(
    project: Path, env: dict[str, str], isolated_recall_env: Path, recall_cmd: list[str]
) -> None:
    """Captured at an earlier Stop, then written by the agent: only the agent's stays."""
    _fix_session("sess-a", project, env)
    (automatic,) = all_learnings(isolated_recall_env)
    assert automatic.fix is not None and automatic.fix.source == "transcript"
    kept = _agent_learns("sess-a", project, env, recall_cmd)
    (only,) = all_learnings(isolated_recall_env)
    assert str(only.id) == kept and only.fix is not None and only.fix.source == "agent"
    assert "requests-oauthlib (renamed import)" in only.resolution_summary


def test_the_agents_learning_in_the_same_turn_stops_the_automatic_one(
    project: Path, env: dict[str, str], isolated_recall_env: Path, recall_cmd: list[str]
) -> None:
    s = Session("sess-b", project, env)
    command = PYTEST.format(project=project)
    s.bash_fails(command, ERROR_TEXT)
    s.edit("src/app/client.py")
    s.bash_ok(command)
    learn = (
        "recall learn --session sess-b --error=\"ModuleNotFoundError: No module named 'requests_oauth'\""
        " --resolution='renamed the import to requests_oauthlib' --file src/app/client.py"
    )
    kept = _agent_learns("sess-b", project, env, recall_cmd)  # what that call stored
    s.bash_ok(learn, stdout=kept)  # and the call in the transcript
    assert s.stop("Done.").returncode == 0
    (only,) = all_learnings(isolated_recall_env)
    assert str(only.id) == kept and only.fix is not None and only.fix.source == "agent"
