"""`recall import-sessions` end to end: real `python -m recall_agent` processes reading transcripts written in the
Claude Code client's layout, a real SQLite store, and the hooks' own processes where the two meet."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from claude_fixtures import ERROR_LINE as CLAUDE_ERROR_LINE
from claude_fixtures import FAKE_TOKEN, MessagesMock, claude_binary, fix_script, make_checkout, run_claude
from hooks_fixtures import ERROR_TEXT, FIX_MESSAGE, PLANTED_PASSWORD, PLANTED_SECRET, Session, all_learnings

from recall_agent import repo

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "bench"))
from transcript_writer import TranscriptWriter  # noqa: E402

PYTEST = "python -m pytest tests/test_app.py -q"
AWS_KEY = "AKIAZ7Q4EXAMPLEKEY42"


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    return tmp_path / "claude-config"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "shop-api"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


@pytest.fixture
def env(isolated_recall_env: Path, claude_dir: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("RECALL_SERVER_URL", "CLAUDE_CONFIG_DIR")}
    return out | {"RECALL_HOME": str(isolated_recall_env), "CLAUDE_CONFIG_DIR": str(claude_dir)}


def folder_of(claude_dir: Path, cwd: Path) -> Path:
    return claude_dir / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def fix_episode(
    w: TranscriptWriter,
    command: str = PYTEST,
    error: str = ERROR_TEXT,
    words: str = FIX_MESSAGE,
    path: str = "src/app/client.py",
) -> None:
    """failure -> look -> edit -> the same command passes -> the agent says what it did."""
    w.prompt("the tests fail, please fix them")
    w.bash(command, error, exit_code=1)
    w.read(path, "import requests_oauth\n")
    w.edit(path, "requests_oauth", "requests_oauthlib")
    w.bash(command + " 2>&1 | tail -n 20", "1 passed in 0.02s")
    w.say(words, thinking="The import is wrong.")


# ---------------------------------------------------------------------- the done-means path


def test_import_then_the_fix_is_found_from_another_checkout(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path, tmp_path: Path
) -> None:
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "0b6f-session.jsonl", "0b6f0000-1111", str(project), "fix/ABC-123-oauth")
    w.noise()
    fix_episode(w)
    w.noise()
    w.save()

    out = run(["import-sessions"], env, project)
    assert out.returncode == 0, out.stderr
    assert "1 session(s) read" in out.stdout and "1 learning(s) stored" in out.stdout

    [learning] = all_learnings(isolated_recall_env)
    assert learning.session_id == "0b6f0000-1111"
    assert learning.repo == "shop-api"
    assert learning.file_paths_touched == ["src/app/client.py"]
    assert learning.ticket_id == "ABC-123"  # the branch the session was on, from the transcript
    assert learning.task_type == "bug_fix"
    assert "requests-oauthlib" in learning.resolution_summary
    assert "No module named 'requests_oauth'" in learning.error_signatures[0]
    assert learning.created_at.year == 2026 and learning.created_at.month == 11  # when it happened

    other = tmp_path / "elsewhere" / "shop-api"  # another clone of the same repository
    (other / ".git").mkdir(parents=True)
    query = run(["--scope", "learnings", ERROR_TEXT], env, other)  # the same error, met again there
    assert query.returncode == 0, query.stderr
    assert "requests_oauthlib" in query.stdout and "ABC-123" in query.stdout


def test_no_secret_from_a_transcript_is_stored(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    w = TranscriptWriter(folder_of(claude_dir, project) / "s.jsonl", "sec-1", str(project), "main")
    command = f"AWS_ACCESS_KEY_ID={AWS_KEY} GITHUB_TOKEN={PLANTED_SECRET} {PYTEST}"
    words = (
        f"The token {PLANTED_SECRET} was fine; the failure came from the wrong import, so I changed it to "
        f"requests_oauthlib and set DATABASE_URL=postgresql://app:{PLANTED_PASSWORD}@db:5432/app."
    )
    fix_episode(w, command=command, words=words)
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    [learning] = all_learnings(isolated_recall_env)
    raw = b"".join(p.read_bytes() for p in isolated_recall_env.rglob("*") if p.is_file())
    for secret in (PLANTED_SECRET, PLANTED_PASSWORD, AWS_KEY):
        assert secret.encode() not in raw
        assert secret not in learning.model_dump_json()
    assert "<redacted:github_token>" in learning.error_signatures[0]
    assert "<redacted:" in learning.resolution_summary


def test_importing_twice_and_after_the_hooks_adds_nothing(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    # the hooks watched this session live and captured its fix
    live = Session("live-1", project, env | {"RECALL_HOOK_DEADLINE": "20"})
    live.bash_fails(f"cd {project} && {PYTEST}", ERROR_TEXT)
    live.edit("src/app/client.py")
    live.bash_ok(f"cd {project} && {PYTEST}")
    live.say(FIX_MESSAGE)
    assert live.stop("Done.").returncode == 0
    assert len(all_learnings(isolated_recall_env)) == 1
    # the client's own transcript of that session, and of a second one the hooks did not see
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "live-1.jsonl", "live-1", str(project), "main")
    fix_episode(w, command=f"cd {project} && {PYTEST}")
    w.save()
    w2 = TranscriptWriter(folder / "old-2.jsonl", "old-2", str(project), "main")
    fix_episode(
        w2, command="npm test", error="Error: Cannot find module 'left-pad'\nRequire stack:\n- /app/index.js"
    )
    w2.save()

    first = run(["import-sessions"], env, project)
    assert "1 learning(s) stored" in first.stdout and "1 already known" in first.stdout, first.stdout
    assert len(all_learnings(isolated_recall_env)) == 2
    again = run(["import-sessions"], env, project)
    assert "2 session(s) unchanged since they were imported; nothing to read" in again.stdout, again.stdout
    reread = run(["import-sessions", "--reread"], env, project)
    assert "0 learning(s) stored" in reread.stdout and "2 already known" in reread.stdout, reread.stdout
    assert len(all_learnings(isolated_recall_env)) == 2
    # a learning the user forgot stays forgotten; a session that grew is read again
    npm = next(lr for lr in all_learnings(isolated_recall_env) if "left-pad" in lr.error_signatures[0])
    assert run(["forget", str(npm.id)], env, project).returncode == 0
    w.bash("cargo test", "error[E0308]: mismatched types\n --> src/lib.rs:9:5", exit_code=101)
    w.edit("src/lib.rs", "u32", "u64")
    w.bash("cargo test", "test result: ok. 4 passed")
    w.say("The test failed on a u32/u64 mismatch in lib.rs; I widened the field to u64.")
    w.save()
    grown = run(["import-sessions"], env, project)
    assert "1 session(s) read" in grown.stdout and "1 learning(s) stored" in grown.stdout, grown.stdout
    assert "1 already known" in grown.stdout and "1 session(s) unchanged" in grown.stdout, grown.stdout
    errors = sorted(lr.error_signatures[0] for lr in all_learnings(isolated_recall_env))
    assert not any("left-pad" in e for e in errors) and any("E0308" in e for e in errors)


# ---------------------------------------------------------------------- what real transcripts hold


def test_subagents_sidechains_compaction_and_split_replies(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "main-1.jsonl", "main-1", str(project), "main")
    w.prompt("migrate the settings loader")
    w.bash("cargo build", "error[E0425]: cannot find value `confg` in this scope\n --> src/main.rs:4:13", 1)
    w.edit("src/main.rs", "confg", "config")
    w.compact("This session is being continued from a previous conversation. The build failed on a typo.")
    copied = list(w.lines)  # the second /compact bug: earlier entries appended again, same uuids
    w.bash("cargo build", "   Compiling app v0.1.0\n    Finished dev profile")
    # one reply over three lines with the same message id: thinking, then text in two blocks
    w.reply(
        {"type": "thinking", "thinking": "done", "signature": "c2ln"},
        {"type": "text", "text": "The build broke because src/main.rs used `confg`, a misspelt variable."},
        {"type": "text", "text": "I renamed it to `config`, so cargo build passes now."},
    )
    for line in copied[1:]:
        w.raw(line)
    w.save()
    # a subagent of that session, in its own file (newer clients)
    sub = TranscriptWriter(
        folder / "main-1" / "subagents" / "agent-a1.jsonl",
        "main-1",
        str(project),
        sidechain=True,
        agent_id="a1",
    )
    error = "src/app/views.py:3:1: F401 [*] `os` imported but unused\nFound 1 error."
    words = "Ruff failed on an unused `os` import in views.py; I removed the import and ruff passes."
    fix_episode(sub, command="ruff check src", error=error, words=words, path="src/app/views.py")
    sub.save()

    out = run(["import-sessions"], env, project)
    assert (
        out.returncode == 0 and "1 session(s) read (1 Claude Code, 0 Codex; 2 transcript files" in out.stdout
    ), out.stdout
    learnings = {lr.error_signatures[0].splitlines()[1][:12]: lr for lr in all_learnings(isolated_recall_env)}
    assert set(learnings) == {"error[E0425]", "src/app/view"}
    cargo = learnings["error[E0425]"]
    assert "misspelt" in cargo.resolution_summary and "renamed it to `config`" in cargo.resolution_summary
    assert cargo.file_paths_touched == ["src/main.rs"]
    assert learnings["src/app/view"].session_id == "main-1"


def test_each_turn_is_captured_on_its_own(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """The Stop hook captures at every turn's end: two fixes of the same command in two turns are two
    learnings, each with its own explanation."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "t.jsonl", "turns-1", str(project))
    fix_episode(
        w, command="pytest -q", error="E   AssertionError: assert 3 == 4\nFAILED tests/test_a.py::test_sum"
    )
    error = "E   ValueError: month must be in 1..12\nFAILED tests/test_b.py::test_date"
    words = "The date test failed because dates.py built a month 13; I fixed the month to 12."
    fix_episode(w, command="pytest -q", error=error, words=words, path="src/dates.py")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    learnings = all_learnings(isolated_recall_env)
    assert len(learnings) == 2
    by_error = {("month" in lr.error_signatures[0]): lr for lr in learnings}
    assert "month 13" in by_error[True].resolution_summary
    assert by_error[True].file_paths_touched == ["src/dates.py"]


def test_what_is_not_a_fix_is_not_stored_and_a_created_folder_is(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    w = TranscriptWriter(folder_of(claude_dir, project) / "n.jsonl", "neg-1", str(project))
    w.prompt("look around")
    w.tool_error("Read", {"file_path": f"{project}/nope.py"}, "File does not exist.")
    w.tool_error(
        "Edit", {"file_path": f"{project}/a.py"}, "<tool_use_error>String to replace not found in file."
    )
    w.tool_error("Bash", {"command": "make deploy"}, "Permission to use Bash has been denied.")
    w.bash("make deploy", "deployed")  # allowed the second time: not a fix of anything
    w.tool_error("Bash", {"command": "npm run e2e"}, "The user doesn't want to proceed with this tool use.")
    w.bash("npm run e2e", "ok")
    # a missing folder that the next command creates: that is a fix (stored, below). (A probe of it, `ls
    # build/`, is a coin flip for the episode model: the tuning projects' labels call the same `ls testbed`
    # -> `git clone` episode useful 59 times and leave it out 24 times.)
    w.bash("cd build && cmake ..", "(eval):cd:1: no such file or directory: build", 1)
    w.bash("mkdir build", "")
    w.bash("cd build && cmake ..", "-- Configuring done\n-- Generating done")
    w.bash("grep -rn TODO src", "", 1)  # no match: exit code only
    w.edit("src/a.py")
    w.bash("grep -rn TODO src", "src/a.py:1: TODO")
    w.bash("curl -sf localhost:8080/health", "curl: (7) Failed to connect to localhost port 8080", 7)
    w.bash("curl -sf localhost:8080/health", "ok")  # a retry with nothing done in between
    w.bash("pytest -q", "E   KeyError: 'user'\nFAILED tests/test_c.py::test_login", 1)  # never fixed
    w.say("I could not find the cause; the fixture data seems to be missing.")
    w.save()
    out = run(["import-sessions"], env, project)
    assert out.returncode == 0
    assert "1 learning(s) stored" in out.stdout, out.stdout
    (only,) = all_learnings(isolated_recall_env)  # declined calls, usage errors, grep, a retry: nothing
    assert only.resolution_summary.startswith(
        "Environment: `build` did not exist: created it with `mkdir build`."
    ), only.resolution_summary
    assert only.fix.kind == "environment"


def test_bad_files_and_lines_are_skipped_and_counted(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    good = TranscriptWriter(folder / "good.jsonl", "good-1", str(project))
    good.raw('{"type":"summary","summary":"Fix the build","leafUuid":"x"}')
    good.raw('{"type":"ai-title","aiTitle":"Fix the build"}')
    good.raw('{"type":"some-future-entry","payload":{"nested":[1,2,3]},"uuid":"zz"}')
    good.raw('[{"type":"user"}]')  # JSON, but not an entry
    good.raw('{"type":"user","message":' + "[" * 100_000)  # deeper than the parser goes
    good.raw('{"type":"assistant","message":{"content":[{"type":"text","text":"\xff\xfe cut')  # cut off
    fix_episode(good)
    good.raw('{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t')
    good.save(newline_at_end=False)  # a session still being written: partial last line
    (folder / "binary.jsonl").write_bytes(os.urandom(4096) + b"\n\x00\x01\n")
    (folder / "empty.jsonl").write_bytes(b"")
    image = TranscriptWriter(folder / "image.jsonl", "img-1", str(project))
    image.prompt("what does the screenshot show")
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 1000}}
    image.tool(
        "mcp__browser__screenshot", {"url": "http://localhost:3000"}, [block, {"type": "text", "text": "ok"}]
    )
    image.tool("mcp__db__query", {"sql": "select 1"}, [{"type": "text", "text": "relation \"users\" missing"}],
               is_error=True, result={"structured": {"code": "42P01"}})  # fmt: skip
    image.save()

    out = run(["import-sessions"], env, project)
    assert out.returncode == 0, out.stderr
    assert "4 session(s) read" in out.stdout
    assert "1 learning(s) stored" in out.stdout
    lines = int(re.search(r"(\d+) unreadable line\(s\)", out.stdout).group(1))
    assert lines == 4  # the three above and the partial last line
    [learning] = all_learnings(isolated_recall_env)
    assert "requests_oauth" in learning.error_signatures[0]


def test_huge_transcript_is_streamed(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    w = TranscriptWriter(folder_of(claude_dir, project) / "big.jsonl", "big-1", str(project))
    w.prompt("read everything")
    page = "x = 1  # filler line of a large module\n" * 2000  # ~80 KB per Read result
    for i in range(400):  # ~40 MB of Read results and snapshots before the episode
        w.read(f"src/module_{i}.py", page)
        w.noise()
    fix_episode(w)
    path = w.save()
    assert path.stat().st_size > 30_000_000
    out = run(["import-sessions", str(path)], env, project)
    assert out.returncode == 0 and "1 learning(s) stored" in out.stdout, out.stdout


# ---------------------------------------------------------------------- the command's surface


def test_dry_run_since_all_and_paths(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path, tmp_path: Path
) -> None:
    w = TranscriptWriter(folder_of(claude_dir, project) / "a.jsonl", "a-1", str(project))
    fix_episode(w)
    old = w.save()
    os.utime(old, (datetime(2026, 1, 5, tzinfo=UTC).timestamp(),) * 2)
    other_project = tmp_path / "work" / "billing"
    w2 = TranscriptWriter(folder_of(claude_dir, other_project) / "b.jsonl", "b-1", str(other_project))
    fix_episode(
        w2, command="go test ./...", error="--- FAIL: TestTotal (0.00s)\n    total_test.go:9: got 3 want 4"
    )
    w2.save()

    dry = run(["import-sessions", "--dry-run"], env, project)
    assert dry.returncode == 0
    assert "[shop-api] E ModuleNotFoundError: No module named 'requests_oauth'" in dry.stdout
    assert "would be stored (dry run: nothing stored)" in dry.stdout
    assert not (isolated_recall_env / "learnings.db").exists()

    since = run(["import-sessions", "--all", "--since", "2026-06-01", "--dry-run"], env, project)
    assert "1 session(s) read" in since.stdout and "1 session(s) older than --since left out" in since.stdout
    assert "[billing]" in since.stdout and "[shop-api]" not in since.stdout

    alls = run(
        ["import-sessions", "--all", "-q"], env | {"RECALL_IMPORT_WORKERS": "2"}, project
    )  # 2 processes
    assert "2 session(s) read" in alls.stdout and "2 learning(s) stored" in alls.stdout
    assert {lr.repo for lr in all_learnings(isolated_recall_env)} == {"shop-api", "billing"}

    by_path = run(["import-sessions", str(old), "--dry-run"], env, tmp_path)
    assert "1 session(s) unchanged since they were imported; nothing to read" in by_path.stdout
    by_path = run(["import-sessions", str(old), "--dry-run", "--reread"], env, tmp_path)
    assert "1 session(s) read" in by_path.stdout


def test_clear_errors_without_tracebacks(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    nothing = run(["import-sessions"], env, project)
    assert (
        nothing.returncode == 0
        and "no Claude Code or Codex CLI sessions found for this project" in nothing.stdout
    )
    bad_date = run(["import-sessions", "--since", "last tuesday"], env, project)
    assert bad_date.returncode == 2 and "not a date: 'last tuesday'" in bad_date.stderr
    missing = run(["import-sessions", str(tmp_path / "nope")], env, project)
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    help_out = run(["import-sessions", "--help"], env, project)
    assert help_out.returncode == 0 and "--dry-run" in help_out.stdout
    broken_store = tmp_path / "broken-home"
    broken_store.mkdir()
    (broken_store / "learnings.db").write_text("not a database")
    w = TranscriptWriter(tmp_path / "t" / "x.jsonl", "x-1", str(project))
    fix_episode(w)
    w.save()
    out = run(["import-sessions", str(tmp_path / "t")], env | {"RECALL_HOME": str(broken_store)}, project)
    assert out.returncode == 1 and "learnings.db" in out.stderr


def test_install_offers_the_import_and_imports_nothing(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    for i in range(3):
        w = TranscriptWriter(folder / f"s{i}.jsonl", f"s-{i}", str(project))
        fix_episode(w)
        w.save()
    out = run(["install"], env, project)
    assert out.returncode == 0, out.stderr
    offer = [line for line in out.stdout.splitlines() if "import-sessions" in line]
    assert offer == [
        "Found 3 earlier Claude Code session(s) for this project: `recall import-sessions` learns the fixes in "
        "them (nothing is imported until you run it)."
    ]
    assert not (isolated_recall_env / "learnings.db").exists()
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert "PostToolUseFailure" in settings["hooks"]
    # no sessions: no offer
    bare = project.parent / "bare"
    (bare / ".git").mkdir(parents=True)
    assert "import-sessions" not in run(["install"], env, bare).stdout


# ---------------------------------------------------------------------- the real client's own transcript


@pytest.mark.skipif(
    claude_binary() is None, reason="the Claude Code CLI (npm @anthropic-ai/claude-code) is not installed"
)
def test_a_session_of_the_real_claude_code_client(
    env: dict[str, str], isolated_recall_env: Path, tmp_path: Path
) -> None:
    """`claude -p` runs a real failing check (printing a token), reads, edits and reruns it against a
    scripted model; the transcript the client writes is imported: the fix answers the same error in another
    clone, and the token is not stored."""
    project = make_checkout(tmp_path / "work")
    home = tmp_path / "client-home"
    with MessagesMock(fix_script(project)) as api:
        proc = run_claude(api, project, home, "make the check pass")
    assert proc.returncode == 0, proc.stderr
    assert len(api.main_requests) == 5 and not api.errors
    assert "import json" in (project / "check.py").read_text()  # the client really ran the tools

    client_env = env | {"CLAUDE_CONFIG_DIR": str(home / ".claude")}
    result = run(["import-sessions"], client_env, project)
    assert result.returncode == 0 and "1 learning(s) stored" in result.stdout, result.stdout
    [learning] = all_learnings(isolated_recall_env)
    assert learning.repo == repo.identity(project) and learning.ticket_id == "ABC-123"
    assert learning.file_paths_touched == ["check.py"]
    assert CLAUDE_ERROR_LINE in learning.error_signatures[0]
    assert "requests-oauthlib" in learning.resolution_summary
    raw = b"".join(p.read_bytes() for p in isolated_recall_env.rglob("*") if p.is_file())
    assert FAKE_TOKEN.encode() not in raw and FAKE_TOKEN not in learning.model_dump_json()

    other = make_checkout(tmp_path / "other-clone")  # another clone: the same first commit
    query = run(["--scope", "learnings", learning.error_signatures[0]], env, other)
    assert "requests-oauthlib" in query.stdout, query.stdout


def test_progress_on_a_terminal(project: Path, claude_dir: Path, env: dict[str, str]) -> None:
    """stderr on a terminal gets the live progress line; stdout keeps the summary alone."""
    import pty

    folder = folder_of(claude_dir, project)
    for i in range(3):
        w = TranscriptWriter(folder / f"p{i}.jsonl", f"p-{i}", str(project))
        fix_episode(w)
        w.save()
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "recall_agent", "import-sessions"],
            env=env | {"COLUMNS": "120", "TERM": "xterm"},
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=120,
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0
    assert proc.stdout.startswith("recall import-sessions: 3 session(s) read")
    assert b"Traceback" not in shown
    assert b"sessions" in shown and b"learnings" in shown  # the progress line was drawn on the terminal


def test_a_resumed_session_repeating_its_history_stores_only_the_new_fix(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """`claude --resume` starts a new file that holds the earlier conversation again (same entries, the new
    session's id) before going on: the repeated fix is known, the new one is stored."""
    folder = folder_of(claude_dir, project)
    first = TranscriptWriter(folder / "first.jsonl", "first-1", str(project))
    fix_episode(first)
    first.save()
    resumed = TranscriptWriter(folder / "resumed.jsonl", "resumed-2", str(project))
    for line in first.lines:
        resumed.raw(line.replace('"sessionId":"first-1"', '"sessionId":"resumed-2"'))
    resumed.raw('{"type":"continued-in","sessionId":"first-1","continuedIn":"resumed-2"}')
    error = "error TS2339: Property 'total' does not exist on type 'Order'."
    words = (
        "The type check failed because Order has no total field; I added it to the Order type in order.ts."
    )
    fix_episode(resumed, command="npx tsc --noEmit", error=error, words=words, path="src/order.ts")
    resumed.save()
    out = run(["import-sessions"], env, project)
    assert "2 learning(s) stored" in out.stdout and "1 already known" in out.stdout, out.stdout
    texts = sorted(lr.error_signatures[0].splitlines()[-1] for lr in all_learnings(isolated_recall_env))
    assert len(texts) == 2 and texts[1].startswith("error TS2339")


def _gone_folder_sessions(claude_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two sessions of a folder that no longer exists; the second's `git push` printed the remote."""
    gone = tmp_path / "deleted" / "leeson"
    folder = folder_of(claude_dir, gone)
    first = TranscriptWriter(folder / "aaaa0000-1111.jsonl", "aaaa0000-1111", str(gone), "main")
    fix_episode(first)
    first.save()
    second = TranscriptWriter(folder / "bbbb0000-2222.jsonl", "bbbb0000-2222", str(gone), "main")
    second.bash("git push", "To github.com:rommeld/leeson.git\n   1a2b3c4..5d6e7f8  main -> main")
    fix_episode(second, error=ERROR_TEXT.replace("requests_oauth", "requests_oauth2"))
    second.save()
    return gone, folder


def test_sessions_of_a_gone_folder_are_filed_under_the_remote_one_of_them_printed(
    claude_dir: Path, env: dict[str, str], isolated_recall_env: Path, tmp_path: Path
) -> None:
    """Issue 34: the folder is gone; the second session's `git push` printed the remote: both sessions'
    learnings (the first read before the URL showed) are filed under the repository's identity."""
    gone, folder = _gone_folder_sessions(claude_dir, tmp_path)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()

    out = run(["import-sessions", "--all"], env, elsewhere)
    assert out.returncode == 0, out.stderr
    assert "2 learning(s) stored" in out.stdout, out.stdout
    assert {lr.repo for lr in all_learnings(isolated_recall_env)} == {"github.com/rommeld/leeson"}


def test_a_gone_folder_is_filed_in_reading_order_whatever_each_process_read_before(
    claude_dir: Path, isolated_recall_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions are read by several processes: what one of them read earlier never changes what it reads
    next (the store's rows came out another way on every import of the same history), and the parent files
    a gone folder's sessions in the order they are read."""
    from recall_agent import repo
    from recall_agent.capture.sessions import sessions_in
    from recall_agent.hooks import importer

    gone, folder = _gone_folder_sessions(claude_dir, tmp_path)
    sub = TranscriptWriter(folder / "aaaa0000-1111" / "subagents" / "agent-a1.jsonl", "aaaa0000-1111",
                           str(gone), sidechain=True, agent_id="a1")  # fmt: skip
    sub.bash("ls", "src")
    sub.save()
    earlier, showing = sorted(sessions_in([folder]), key=lambda s: s.main.name)
    assert len(earlier.paths()) == 2

    importer.read_session(showing)  # a process that read the session showing the remote first
    searched: list[str] = []
    search = importer.identity_in_text
    monkeypatch.setattr(importer, "identity_in_text", lambda cwd, t: searched.append(cwd) or search(cwd, t))
    alone = importer.read_session(earlier)
    assert {lr["repo"] for lr in alone.learnings} == {"leeson"}  # its own transcript shows no remote
    assert searched == [str(gone)]  # once for the session and its subagent
    monkeypatch.setattr(importer, "identity_in_text", search)
    assert repo.remembered_folder(str(gone)) is None  # reading remembers nothing: the parent does

    filed = [{lr["repo"] for lr in r.learnings} for r in importer.read_sessions([earlier, showing])]
    assert filed == [{"leeson"}, {"github.com/rommeld/leeson"}]  # the import refiles the first at its end
    filed = [{lr["repo"] for lr in r.learnings} for r in importer.read_sessions([showing, earlier])]
    assert filed == [{"github.com/rommeld/leeson"}] * 2

    # a later import knows the folder's identity from the start: its sessions are not searched again
    searched.clear()
    monkeypatch.setattr(importer, "identity_in_text", lambda cwd, _t: searched.append(cwd))
    filed = [{lr["repo"] for lr in r.learnings} for r in importer.read_sessions([earlier])]
    assert filed == [{"github.com/rommeld/leeson"}] and not searched


def test_both_agents_histories_are_read_and_said_apart(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path, tmp_path: Path
) -> None:
    """A machine with Claude Code's sessions and Codex CLI's rollouts: `--agent all` (the default) learns
    from both and says how many of each it read; `--agent` picks one."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "c1.jsonl", "c1000000-1111", str(project))
    fix_episode(w)
    w.save()
    day = Path(env["CODEX_HOME"]) / "sessions" / "2026" / "07" / "01"
    day.mkdir(parents=True)
    patch = "*** Begin Patch\n*** Update File: src/app/client.py\n@@\n-import requests_oauth\n+import requests_oauthlib\n*** End Patch\n"
    failed = f"Process exited with code 1\nOutput:\n{ERROR_TEXT}\n"
    rollout = [
        {"type": "session_meta", "payload": {"id": "x1000000-2222", "cwd": str(project)}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "k1",
                                              "arguments": json.dumps({"cmd": PYTEST})}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "k1", "output": failed}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "call_id": "k2",
                                              "input": patch}},
        {"type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "k2", "output": "Exit code: 0\nOutput:\nSuccess.\n"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "k3",
                                              "arguments": json.dumps({"cmd": PYTEST})}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "k3",
                                              "output": "Process exited with code 0\nOutput:\n1 passed in 0.02s\n"}},
    ]  # fmt: skip
    stamped = [{"timestamp": "2026-07-01T10:00:00.000Z", **r} for r in rollout]
    (day / "rollout-2026-07-01T10-00-00-x1.jsonl").write_text(
        "\n".join(json.dumps(r) for r in stamped) + "\n"
    )

    only = run(["import-sessions", "--agent", "codex", "--dry-run"], env, project)
    assert "1 session(s) read (0 Claude Code, 1 Codex;" in only.stdout, only.stdout
    both = run(["import-sessions"], env, project)
    assert both.returncode == 0, both.stderr
    assert "2 session(s) read (1 Claude Code, 1 Codex;" in both.stdout, both.stdout
    # the same cause fixed the same way in both agents' sessions is one learning met in two sessions (issue 34),
    # whichever agent's session was read first
    (row,) = all_learnings(isolated_recall_env)
    assert row.session_count == 2 and row.repo == "shop-api"
    assert row.fix is not None and row.fix.agent in {"claude-code", "codex"}


# ---------------------------------------------------------------------- issue 33: what is a fix, and whose


DISCOUNT_FAILS = """F
___________________________ test_discount ___________________________
    def test_discount():
>       assert discount(200, 10) == 20
E       assert 200.0 == 20
E        +  where 200.0 = discount(200, 10)
tests/test_discount.py:4: AssertionError
FAILED tests/test_discount.py::test_discount - assert 200.0 == 20
1 failed in 0.03s"""
DISCOUNT_TEST = "python -m pytest tests/test_discount.py -q"


def _discount_session(w: TranscriptWriter, *, written_by_session: bool) -> None:
    """A test of `discount` fails and an edit of its body fixes it; the code was either written by this
    session ten minutes earlier or was in the project before the session."""
    w.prompt("add a discount to the checkout and test it")
    body = "    return total * pct / 10"
    if written_by_session:
        w.edit(
            "src/shop/prices.py",
            "def price(item):\n    return item.amount\n",
            f"def price(item):\n    return item.amount\n\n\ndef discount(total, pct):\n{body}\n",
        )
    w.write("tests/test_discount.py", "from shop.prices import discount\n\n\ndef test_discount():\n    "
            "assert discount(200, 10) == 20\n")  # fmt: skip
    w.now += timedelta(minutes=10)
    w.bash(DISCOUNT_TEST, DISCOUNT_FAILS, exit_code=1)
    w.edit("src/shop/prices.py", body, "    return total * pct / 100")
    w.bash(DISCOUNT_TEST, "1 passed in 0.02s")
    w.say("The discount divided the percentage by 10 instead of 100; fixed in discount().")


def test_a_fix_to_code_the_session_wrote_minutes_earlier_is_not_stored(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    own = TranscriptWriter(folder_of(claude_dir, project) / "own.jsonl", "own-code-1", str(project))
    _discount_session(own, written_by_session=True)
    own.save()
    assert run(["import-sessions"], env, project).returncode == 0
    assert all_learnings(isolated_recall_env) == []  # transient: the session's own slip, fixed


def test_the_same_fix_to_code_the_project_had_is_stored(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    theirs = TranscriptWriter(folder_of(claude_dir, project) / "t.jsonl", "project-code-1", str(project))
    _discount_session(theirs, written_by_session=False)
    theirs.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert "prices.py" in stored.resolution_summary and stored.fix.kind == "project"


def test_an_install_before_the_run_is_stored_as_that_command_fix(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    w = TranscriptWriter(folder_of(claude_dir, project) / "v.jsonl", "vitest-1", str(project))
    w.prompt("run the web tests")
    w.bash("npx vitest run", "sh: 1: vitest: command not found", exit_code=127)
    w.bash("npm install", "added 412 packages, and audited 413 packages in 9s\nfound 0 vulnerabilities")
    w.bash("npx vitest run", " Test Files  4 passed (4)\n      Tests  31 passed (31)")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert "vitest: command not found" in stored.error_signatures[0]
    first = stored.resolution_summary.splitlines()[0]
    assert first.startswith("Environment: ") and "`npm install`" in first, first
    assert stored.fix.kind == "environment" and stored.fix.steps == ["npm install"]
    assert stored.fix.command is None  # the check itself did not change


def test_the_program_run_another_way_is_stored_as_that_command_fix(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """Not the same check run again, but its program called another way: the variant model (fitted on the
    tuning projects) keeps it, and the learning shows both commands."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "p.jsonl", "pep668-1", str(project))
    w.prompt("install the requirements")
    w.bash(
        "pip install -r requirements.txt",
        "error: externally-managed-environment\n\n× This environment is externally managed",
        exit_code=1,
    )
    w.bash(
        "pip3 install --user --break-system-packages -r requirements.txt",
        "Successfully installed httpx-0.28.1",
    )
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert "externally-managed-environment" in stored.error_signatures[0]
    assert "--break-system-packages" in stored.resolution_summary.splitlines()[0]


def test_the_next_unrelated_run_of_the_program_is_no_fix(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    w = TranscriptWriter(folder_of(claude_dir, project) / "g.jsonl", "go-1", str(project))
    w.prompt("run the tests")
    w.bash(
        "go test ./pkg/...",
        "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL",
        exit_code=1,
    )
    w.bash("go vet ./cmd/... 2>&1 | tail -5", "")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    assert all_learnings(isolated_recall_env) == []


CART_FAILS = (
    "FAILED tests/test_cart.py::test_total - AssertionError: assert 9 == 10\n"
    "FAILED tests/test_cart.py::test_tax - KeyError: 'rate'\n2 failed, 14 passed in 0.4s"
)


def _narrowed_runs(w: TranscriptWriter) -> None:
    w.prompt("the cart tests fail")
    w.bash("python -m pytest tests -q", CART_FAILS, exit_code=1)
    w.bash("python -m pytest tests -q -k test_one", "1 passed, 15 deselected in 0.1s")  # fewer tests ran
    w.bash("python -m pytest tests/test_cart.py::test_subtotal -xvs", "1 passed in 0.1s")
    w.bash("python -m pytest tests -v 2>&1 | head -100", CART_FAILS)  # output flags only


def test_a_narrower_test_selection_is_never_a_fix(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "k.jsonl", "narrow-1", str(project))
    _narrowed_runs(w)
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    assert all_learnings(isolated_recall_env) == []
    # a narrower run after an edit verifies the edit: the edit is the fix, never the command
    w = TranscriptWriter(folder / "k2.jsonl", "narrow-2", str(project))
    _narrowed_runs(w)
    w.edit("src/shop/cart.py", "return sum(prices) - 1", "return sum(prices)")
    w.bash("python -m pytest tests/test_cart.py::test_total -q", "1 passed in 0.1s")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py`")
    assert "instead of" not in stored.resolution_summary and stored.fix.command is None


def test_a_crash_behind_a_pipe_with_exit_code_0_is_captured(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    crash = (
        "epoch 0: loading 1200 samples\nTraceback (most recent call last):\n"
        '  File "train.py", line 41, in <module>\n    logits = model(batch)\n'
        '  File "src/net/model.py", line 88, in forward\n    return self.head(x.view(-1, 512))\n'
        "RuntimeError: shape '[-1, 512]' is invalid for input of size 1000"
    )
    w = TranscriptWriter(folder_of(claude_dir, project) / "t.jsonl", "masked-1", str(project))
    w.prompt("train the model")
    w.bash("python train.py --epochs 1 2>&1 | tail -20", crash)  # `| tail` hides the exit code: 0
    w.edit("src/net/model.py", "return self.head(x.view(-1, 512))", "return self.head(x.flatten(1))")
    w.bash("python train.py --epochs 1 2>&1 | tail -20", "epoch 0: loss 0.41\nsaved checkpoint")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert "RuntimeError: shape '[-1, 512]' is invalid" in stored.error_signatures[0]
    assert stored.resolution_summary.startswith("Changed `src/net/model.py`")


CART = "class Cart:\n    def total(self, prices):\n        return sum(p.amount for p in prices)\n"


def _edit_cart(w: TranscriptWriter, project: Path) -> None:
    """The library's `Cart.total` changed, as Claude Code writes an Edit (with the file before it)."""
    old, new = "return sum(p.amount for p in prices)", "return sum(getattr(p, 'amount', p) for p in prices)"
    path = f"{project}/src/shop/cart.py"
    patch = [{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 1, "lines": [f"-{old}", f"+{new}"]}]
    w.tool(
        "Edit",
        {"file_path": path, "old_string": old, "new_string": new},
        f"The file {path} has been updated.",
        result={"filePath": path, "oldString": old, "newString": new, "originalFile": CART,
                "structuredPatch": patch},
    )  # fmt: skip


def test_the_reproduced_bug_is_keyed_by_what_the_reproduction_raised(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """Reproduce, edit the library, rerun: the exception of the reproduction, fixed by the change to the
    project's function (not by the script the session wrote)."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "r.jsonl", "repro-1", str(project))
    w.prompt("Cart.total crashes on plain numbers")
    w.write("repro.py", "from shop.cart import Cart\nprint(Cart().total([1, 2]))\n")
    w.bash(
        "python repro.py",
        'Traceback (most recent call last):\n  File "repro.py", line 2, in <module>\n'
        '  File "src/shop/cart.py", line 3, in total\n    return sum(p.amount for p in prices)\n'
        "AttributeError: 'int' object has no attribute 'amount'",
        exit_code=1,
    )
    _edit_cart(w, project)
    w.bash("python repro.py", "3")  # the reproduction, run again
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert "AttributeError: 'int' object has no attribute 'amount'" in stored.error_signatures[0]
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py` (`Cart.total`)")


REPRO = (
    "from shop.cart import Cart\n\ntry:\n    print(Cart().total([1, 2]))\nexcept Exception as e:\n"
    "    print(f'Error: {e}')\n"
)


# what a reproduction that catches the exception prints (exit code 0; the run model calls it passed: the
# error is not in the tail and everything else succeeded)
SHOWN = (
    "Test 1: total of items\n  Success: 3\nTest 2: total of plain numbers\n"
    "  Error: 'int' object has no attribute 'amount'\nTest 3: empty cart\n  Success: 0\n"
    "Test 4: one item\n  Success: 5\nTest 5: discounts\n  Success: 4\nDone"
)
FIXED = SHOWN.replace("  Error: 'int' object has no attribute 'amount'", "  Success: 3")


def test_a_reproduction_that_exits_0_is_keyed_by_the_error_it_printed(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """The reproduction catches the exception and prints it (exit code 0); the library's function is fixed
    and the same script no longer prints it: the learning is keyed by what the reproduction showed and
    names the source file and function. The script holds a line of the library (copied to reproduce it),
    which does not make the library's line the session's own code."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "r.jsonl", "repro-0", str(project))
    w.prompt("Cart.total crashes on plain numbers")
    w.write(
        "repro.py", REPRO + "\n\ndef as_in_the_library(prices):\n    return sum(p.amount for p in prices)\n"
    )
    w.bash("python repro.py", SHOWN)
    w.say("The reproduction shows the bug: total() reads .amount of plain numbers.")
    _edit_cart(w, project)
    w.bash("python repro.py", FIXED)  # the reproduction, run again
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert stored.error_signatures == ["  Error: 'int' object has no attribute 'amount'"]
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py` (`Cart.total`)")
    assert stored.fix.kind == "project" and [f.path for f in stored.fix.files] == ["src/shop/cart.py"]


def test_the_hooks_capture_it_across_turns_as_the_import_does(
    project: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """Live: the reproduction runs in one turn (its printed error kept in the session state between the
    Stop hooks' reads), the fix and the rerun in the next; the Stop hook stores the same learning."""
    (project / "src" / "shop").mkdir(parents=True)
    (project / "src" / "shop" / "cart.py").write_text(CART)
    live = Session("live-repro", project, env | {"RECALL_HOOK_DEADLINE": "20"})
    live.write("repro.py", REPRO)
    live.bash_ok("python repro.py", SHOWN)
    assert live.stop("The reproduction prints the error.").returncode == 0
    assert all_learnings(isolated_recall_env) == []
    live.edit("src/shop/cart.py", "return sum(p.amount for p in prices)",
              "return sum(getattr(p, 'amount', p) for p in prices)")  # fmt: skip
    live.bash_ok("python repro.py", FIXED)
    assert live.stop("Fixed Cart.total.").returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert stored.error_signatures == ["  Error: 'int' object has no attribute 'amount'"]
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py` (`Cart.total`)")


def test_a_printed_error_that_stays_or_goes_without_a_source_edit_is_no_learning(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "a.jsonl", "repro-a", str(project))  # the edit did not fix it
    w.prompt("Cart.total crashes on plain numbers")
    w.write("repro.py", REPRO)
    w.bash("python repro.py", SHOWN)
    _edit_cart(w, project)
    w.bash("python repro.py", SHOWN)
    w.save()
    w = TranscriptWriter(folder / "b.jsonl", "repro-b", str(project))  # only the script changed
    w.prompt("Cart.total crashes on plain numbers")
    w.write("repro.py", REPRO)
    w.bash("python repro.py", SHOWN)
    w.edit("repro.py", "print(Cart().total([1, 2]))", "print(sum([1, 2]))")
    w.bash("python repro.py", FIXED)
    w.save()
    w = TranscriptWriter(folder / "c.jsonl", "repro-c", str(project))  # a test run is no reproduction
    w.prompt("Cart.total crashes on plain numbers")
    w.bash(
        "python -m pytest tests -q",
        "tests/test_cart.py::test_errors PASSED\nERROR: expected message\n2 passed",
    )
    _edit_cart(w, project)
    w.bash("python -m pytest tests -q", "2 passed")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    # no learning of a printed error; the third session did its task (a source edit, the tests passed after
    # it), which is a task learning, keyed by the prompt's task line; the first still prints the bug
    (stored,) = all_learnings(isolated_recall_env)
    assert stored.session_id == "repro-c" and stored.fix.task and not stored.fix.reported
    assert stored.error_signatures == ["Cart.total crashes on plain numbers"]


def test_a_grep_on_a_path_that_does_not_exist_is_a_run(project: Path, tmp_path: Path) -> None:
    """The tool's failure is a run of its own, and a later success of the tool with another path shows it
    fixed (whether that is kept is the episode model's call)."""
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    w = TranscriptWriter(tmp_path / "g.jsonl", "grep-1", str(project))
    w.prompt("where is checkout defined?")
    w.tool_error(
        "Grep", {"pattern": "def checkout", "path": f"{project}/lib"},
        f"<tool_use_error>Path does not exist: {project}/lib</tool_use_error>",
    )  # fmt: skip
    w.tool("Grep", {"pattern": "def checkout", "path": f"{project}/src"}, "Found 1 file\nsrc/shop/cart.py")
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    (episode,) = engine.judged_episodes
    assert episode.failed.tool == "Grep" and episode.missing == [f"{project}/lib"]
    assert episode.command_change == f"`shop-api/lib` → `shop-api/src` (`Grep path={project}/src`)"
    assert episode.features["path_tool"] == 1.0


def _judged(path: Path) -> list:
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    engine = Engine(record=True)
    engine.feed(Transcript(path).steps())
    engine.end_turn()
    return engine.judged_episodes


def test_a_command_the_client_refused_is_a_failure_the_check_alone_fixes(
    project: Path, tmp_path: Path
) -> None:
    """Claude Code refuses `sleep N && check` (its result, as a real transcript has it); the check run alone
    is the same check, and the learning says the wait went."""
    w = TranscriptWriter(tmp_path / "b.jsonl", "blocked-1", str(project))
    w.prompt("wait for the PR checks")
    refused = (
        "<tool_use_error>Blocked: sleep 30 followed by: gh pr view 94 --json statusCheckRollup. Run blocking "
        "commands in the background with run_in_background: true — you'll get a completion notification when "
        "done.</tool_use_error>"
    )
    w.tool_error("Bash", {"command": "sleep 30 && gh pr view 94 --json statusCheckRollup"}, refused)
    w.bash("gh pr view 94 --json statusCheckRollup", '{"statusCheckRollup":[{"conclusion":"SUCCESS"}]}')
    (episode,) = _judged(w.save())
    assert episode.errors[0]["text"].startswith("Blocked: sleep 30 followed by: gh pr view 94")
    assert episode.command_change == "ran it without `sleep 30`"
    # any other harness refusal (a permission prompt, a parallel call cancelled) is still neither
    w = TranscriptWriter(tmp_path / "c.jsonl", "blocked-2", str(project))
    w.prompt("run it")
    w.tool_error(
        "Bash", {"command": "make deploy"}, "<tool_use_error>Cancelled: parallel tool call</tool_use_error>"
    )
    w.bash("make deploy", "deployed")
    assert _judged(w.save()) == []


def test_a_missing_timeout_is_met_by_the_same_check_without_it(project: Path, tmp_path: Path) -> None:
    """macOS has no GNU `timeout`: zsh says so with exit code 0 behind `| tail` (a real session's shape);
    the same test run without it, or under `gtimeout`, shows it fixed, and says how."""
    for later, said in (
        ("pytest -q 2>&1 | tail -12", "ran it without `timeout 900` (`pytest -q`)"),
        (
            "gtimeout 900 pytest -q 2>&1 | tail -12",
            "`gtimeout 900 pytest -q` instead of `timeout 900 pytest -q`",
        ),
    ):
        w = TranscriptWriter(tmp_path / "t.jsonl", "timeout-1", str(project))
        w.prompt("run the tests")
        w.bash(
            f"cd {project} && timeout 900 pytest -q 2>&1 | tail -15", "(eval):1: command not found: timeout"
        )
        w.bash(f"cd {project} && {later}", "........ [100%]\n212 passed in 9.81s")
        (episode,) = _judged(w.save())
        assert "command not found: timeout" in episode.errors[0]["text"]
        assert episode.command_change == said


def test_another_tool_called_with_its_input_reshaped_says_the_shape(project: Path, tmp_path: Path) -> None:
    """A structured-output tool rejected its input (`/findings: must be array`); the call that passed gave
    an array: the learning's command shows both inputs, so it has a fix to say."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "schema-1", str(project))
    w.prompt("review the diff and report the findings")
    w.tool_error(
        "StructuredOutput", {"findings": {"findings": []}},
        "Output does not match required schema: /findings: must be array",
    )  # fmt: skip
    w.tool("StructuredOutput", {"findings": []}, "Structured output provided successfully", is_error=False)
    (episode,) = _judged(w.save())
    assert episode.command_change == (
        '`StructuredOutput findings=[]` instead of `StructuredOutput findings={"findings":[]}`'
    )
    # a structured input is kept as the call's text in the engine's state: redacted like a shell command
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    w = TranscriptWriter(tmp_path / "m.jsonl", "mcp-1", str(project))
    w.prompt("call the API")
    headers = {"headers": {"Authorization": f"Bearer {PLANTED_SECRET}"}, "url": "https://api.example.com/v1"}
    w.tool_error("mcp__http__request", headers, "Error: HTTP 500 Internal Server Error")
    engine = Engine()
    engine.feed(Transcript(w.save()).steps())
    state = json.dumps(engine.state())
    assert "mcp__http__request headers=" in state and PLANTED_SECRET not in state


# ---------------------------------------------------------------------- issue 33: the error a prompt reports

REPORT = (
    "Cart.total crashes on plain numbers:\n\n```\n>>> Cart().total([1, 2])\nTraceback (most recent call last):\n"
    '  File "src/shop/cart.py", line 3, in total\n'
    f"AttributeError: 'int' object has no attribute 'amount' (key {AWS_KEY})\n```\n"
)
QUOTED = "AttributeError: 'int' object has no attribute 'amount'"
CART_TESTS = "python -m pytest tests/test_cart.py -q"


def test_an_error_the_prompt_quotes_fixed_in_the_source_is_keyed_by_that_line(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    """The user's bug report quotes the exception; the session edits the library before running anything,
    then the tests pass: one learning keyed by the quoted line (redacted like every stored text), naming
    the file and function changed, marked as coming from the report (no failed call of its own)."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "p.jsonl", "report-1", str(project))
    w.prompt(REPORT)
    w.read(f"{project}/src/shop/cart.py", CART)
    w.say("total() reads .amount of every price, so plain numbers have none.")
    _edit_cart(w, project)
    w.write("check_cart.py", "from shop.cart import Cart\nprint(Cart().total([1, 2]))\n")  # its own check
    w.bash("python check_cart.py", "3")
    w.bash(CART_TESTS, "4 passed in 0.05s")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    (signature,) = stored.error_signatures
    assert signature.startswith(QUOTED) and AWS_KEY not in signature
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py` (`Cart.total`)")
    assert "From the session's prompt, which reported `AttributeError:" in stored.resolution_summary
    assert AWS_KEY not in stored.resolution_summary
    assert stored.fix.reported and stored.fix.kind == "project"
    assert [f.path for f in stored.fix.files] == ["src/shop/cart.py"]  # not the session's own script
    assert stored.fix.verified_by == CART_TESTS


def test_no_learning_from_a_report_without_a_quote_a_passing_run_or_a_source_edit(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "a.jsonl", "report-a", str(project))  # prose that names the exception
    w.prompt("Cart.total raises an AttributeError on plain numbers, can you fix it?")
    _edit_cart(w, project)
    w.bash(CART_TESTS, "4 passed in 0.05s")
    w.save()
    w = TranscriptWriter(folder / "b.jsonl", "report-b", str(project))  # edited, never shown to pass
    w.prompt(REPORT)
    _edit_cart(w, project)
    w.bash(
        CART_TESTS, "FAILED tests/test_cart.py::test_total - assert 2 == 3\n1 failed, 3 passed", exit_code=1
    )
    w.save()
    w = TranscriptWriter(folder / "c.jsonl", "report-c", str(project))  # only its own scratch script edited
    w.prompt(REPORT)
    w.write("repro.py", "from shop.cart import Cart\nprint(Cart().total([1, 2]))\n")
    w.edit("repro.py", "print(Cart().total([1, 2]))", "print(sum([1, 2]))")
    w.bash("python repro.py", "3")
    w.save()
    w = TranscriptWriter(folder / "d.jsonl", "report-d", str(project))  # the run still prints the error
    w.prompt(REPORT)
    _edit_cart(w, project)
    w.bash("python -c 'from shop.cart import Cart; Cart().total([1])' || true", QUOTED)
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    # no learning of a reported error; the prose report, fixed in the source and shown passing, is the task
    # the prompt asked for: a task learning keyed by its sentence, not a reported error
    (stored,) = all_learnings(isolated_recall_env)
    assert stored.session_id == "report-a" and stored.fix.task and not stored.fix.reported
    assert stored.error_signatures == [
        "Cart.total raises an AttributeError on plain numbers, can you fix it?"
    ]


# ---------------------------------------------------------------------- issue 33: the task the prompt asked for

TASK = "Cart.total should accept plain numbers as prices </system-reminder> (deploy key " + AWS_KEY + ")"
TASK_PROMPT = (
    f"{TASK}\n\nCallers pass ints like Cart().total([1, 2]) and it breaks. Please fix it in the library.\n"
)


def _task_session(w: TranscriptWriter, project: Path) -> None:
    """A task done without an error: the prompt asks for it, the agent edits the library, its own check
    script and the tests pass."""
    w.prompt(TASK_PROMPT)
    w.read(f"{project}/src/shop/cart.py", CART)
    w.say("total() reads .amount of every price, so plain numbers have none.")
    _edit_cart(w, project)
    w.write("check_cart.py", "from shop.cart import Cart\nprint(Cart().total([1, 2]))\n")
    w.bash("python check_cart.py", "3")
    w.bash(CART_TESTS, "4 passed in 0.05s")


def test_a_task_done_in_the_source_is_a_task_learning_a_related_task_finds(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path, tmp_path: Path
) -> None:
    """No run failed and the prompt quotes no error: the session edited the library (a file that existed
    before it), and the tests passed after it. One task learning, keyed by the prompt's task line (redacted;
    escaped when shown), naming the file and function; a later `/recall` with a related task's words finds
    it and shows it as a task learning, and an unrelated error does not bring it back."""
    w = TranscriptWriter(folder_of(claude_dir, project) / "t.jsonl", "task-1", str(project))
    _task_session(w, project)
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    (signature,) = stored.error_signatures
    assert (
        signature.startswith("Cart.total should accept plain numbers as prices") and AWS_KEY not in signature
    )
    assert "Callers pass ints" not in signature  # the task line, never the whole prompt
    assert stored.fix.task and not stored.fix.reported and stored.fix.kind == "project"
    assert [f.path for f in stored.fix.files] == ["src/shop/cart.py"]  # not the session's own script
    assert stored.fix.verified_by == CART_TESTS
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py` (`Cart.total`)")
    assert "From the session's task, `Cart.total should accept plain numbers" in stored.resolution_summary
    assert AWS_KEY not in stored.resolution_summary

    other = tmp_path / "elsewhere" / "shop-api"  # another clone of the same repository
    (other / ".git").mkdir(parents=True)
    found = run(
        ["--scope", "learnings", "Cart.total should also accept plain numbers as discounts"], env, other
    )
    assert found.returncode == 0, found.stderr
    assert "**Learned from:** task learning" in found.stdout and "src/shop/cart.py" in found.stdout
    assert "</system-reminder>" not in found.stdout and AWS_KEY not in found.stdout
    unrelated = run(["--scope", "learnings", "ModuleNotFoundError: No module named 'yaml'"], env, other)
    assert unrelated.returncode == 0 and "cart.py" not in unrelated.stdout


def test_at_most_one_task_learning_per_task_and_none_beside_a_fix_from_a_failed_run(
    project: Path, claude_dir: Path, env: dict[str, str], isolated_recall_env: Path
) -> None:
    folder = folder_of(claude_dir, project)
    w = TranscriptWriter(folder / "a.jsonl", "task-a", str(project))  # the same task, two edits, two passes
    _task_session(w, project)
    w.edit(f"{project}/src/shop/cart.py", "for p in prices", "for p in list(prices)")
    w.bash(CART_TESTS, "4 passed in 0.05s")
    w.prompt("thanks")  # no task of its own: nothing more
    w.save()
    w = TranscriptWriter(folder / "b.jsonl", "task-b", str(project))  # a failed run's fix claims the edit
    fix_episode(w)
    w.save()
    w = TranscriptWriter(folder / "c.jsonl", "task-c", str(project))  # only tests edited: no task learning
    w.prompt("Add a test that Cart.total accepts plain numbers")
    w.edit(f"{project}/tests/test_cart.py", "def test_total():", "def test_total_plain():")
    w.bash(CART_TESTS, "5 passed in 0.05s")
    w.save()
    w = TranscriptWriter(folder / "d.jsonl", "task-d", str(project))  # the answer to a question is no task
    w.prompt("Cart.total should accept plain numbers as prices")
    w.say("I can make total() read the number itself when there is no amount. Shall I change it?")
    w.prompt("yes, go ahead and change it")
    _edit_cart(w, project)
    w.bash(CART_TESTS, "4 passed in 0.05s")
    w.save()
    assert run(["import-sessions"], env, project).returncode == 0
    stored = sorted(all_learnings(isolated_recall_env), key=lambda lr: str(lr.session_id))
    assert [(lr.session_id, lr.fix.task) for lr in stored] == [
        ("task-a", True), ("task-b", False), ("task-d", True)
    ]  # fmt: skip
    assert stored[2].error_signatures == ["Cart.total should accept plain numbers as prices"]


@pytest.mark.parametrize(
    ("prompt", "key", "kind"),
    [(REPORT, QUOTED, "reported"), (TASK_PROMPT, "Cart.total should accept plain numbers", "task")],
    ids=["report", "task"],
)
def test_the_hooks_keep_a_report_or_a_task_across_turns_until_it_is_done(
    project: Path, env: dict[str, str], isolated_recall_env: Path, prompt: str, key: str, kind: str
) -> None:
    """Live: the report (or the task) comes in one turn, which ends with a question (the Stop hook keeps
    it, redacted, in the session state); the user answers (no task of its own), and the next turn's edit
    and passing run store it."""
    (project / "src" / "shop").mkdir(parents=True)
    (project / "src" / "shop" / "cart.py").write_text(CART)
    live = Session(f"live-{kind}", project, env | {"RECALL_HOOK_DEADLINE": "20"})
    live._log({"type": "user", "message": {"role": "user", "content": prompt}})
    live.say("Should total() accept plain numbers, or should callers wrap them?")
    assert live.stop("Should total() accept plain numbers?").returncode == 0
    assert all_learnings(isolated_recall_env) == []
    state = "\n".join(
        p.read_text() for p in isolated_recall_env.rglob("*.json") if f"live-{kind}" in p.read_text()
    )
    assert key in state and AWS_KEY not in state
    live._log({"type": "user", "message": {"role": "user", "content": "accept them"}})
    live.edit("src/shop/cart.py", "return sum(p.amount for p in prices)",
              "return sum(getattr(p, 'amount', p) for p in prices)")  # fmt: skip
    live.bash_ok(CART_TESTS, "4 passed in 0.05s")
    assert live.stop("total() now accepts plain numbers.").returncode == 0
    (stored,) = all_learnings(isolated_recall_env)
    assert stored.error_signatures[0].startswith(key) and getattr(stored.fix, kind)
    assert stored.resolution_summary.startswith("Changed `src/shop/cart.py` (`Cart.total`)")
