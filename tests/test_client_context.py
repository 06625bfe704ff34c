"""Context detection: repo name, the session's last error from hooks state or the Claude Code transcript."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from recall_agent.client import context
from recall_agent.config import DEFAULT_RETRIEVAL_PATH

pytest_plugins = ["client_fixtures"]

SID = "0b6c3f7e-1111-4c2a-9e55-7d1f1f2a3b4c"


def tool_result(text, is_error=True, as_list=False) -> dict:
    content = [{"type": "text", "text": text}] if as_list else text
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [block]}, "sessionId": SID}


def assistant(text: str) -> dict:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def write_transcript(config_dir: Path, cwd: Path, session: str, entries: list[dict]) -> Path:
    folder = config_dir / "projects" / str(cwd).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def posted_learnings(http_backend, recall_cmd, env, cwd, *argv) -> tuple[dict, str]:
    env = dict(env)
    env["AGENT_LEARNING_RETRIEVAL_URL"] = http_backend.url("empty", "learnings")
    env["KNOWLEDGE_FEDERATION_URL"] = http_backend.url("empty", "federation")
    proc = subprocess.run([*recall_cmd, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return dict(http_backend.requests)["/empty" + DEFAULT_RETRIEVAL_PATH], proc.stdout


def test_repo_is_git_toplevel_name_even_from_a_subfolder(tmp_path: Path, git_repo: Path) -> None:
    sub = git_repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert context.detect(sub, want_error=False).repo == "omnibase_infra"
    assert context.detect(sub, want_error=False).repo_root == git_repo
    plain = tmp_path / "just-a-folder"
    plain.mkdir()
    ctx = context.detect(plain, want_error=False)
    assert (ctx.repo, ctx.repo_root) == ("just-a-folder", None)


def test_transcript_last_error_fills_an_empty_recall(http_backend, recall_cmd, client_env, git_repo) -> None:
    config = Path(client_env["CLAUDE_CONFIG_DIR"])
    write_transcript(
        config,
        git_repo,
        SID,
        [
            tool_result("ModuleNotFoundError: No module named 'old'"),
            assistant("let me fix that"),
            tool_result("<tool_use_error>TypeError: unsupported operand</tool_use_error>", as_list=True),
            tool_result("ok, 3 passed", is_error=False),
            tool_result("The user doesn't want to proceed with this tool use."),
        ],
    )
    payload, out = posted_learnings(http_backend, recall_cmd, client_env, git_repo)
    assert payload == {
        "match_type": "error_signature",
        "error_text": "TypeError: unsupported operand",
        "repo": "omnibase_infra",
        "max_results": 5,
    }
    assert "Query: the last error of this session (transcript): TypeError: unsupported operand" in out


def test_session_id_picks_its_transcript(http_backend, recall_cmd, client_env, git_repo) -> None:
    config = Path(client_env["CLAUDE_CONFIG_DIR"])
    write_transcript(config, git_repo, "other-session", [tool_result("OtherError: newer file")])
    write_transcript(config, git_repo, SID, [tool_result("MineError: from my session")])
    newest = config / "projects" / str(git_repo).replace("/", "-") / "other-session.jsonl"
    newest.touch()
    payload, _ = posted_learnings(http_backend, recall_cmd, client_env, git_repo, "--session", SID)
    assert payload["error_text"] == "MineError: from my session"
    env = dict(client_env, CLAUDE_SESSION_ID=SID)
    http_backend.requests.clear()
    payload, _ = posted_learnings(http_backend, recall_cmd, env, git_repo)
    assert payload["error_text"] == "MineError: from my session"


def test_newest_transcript_of_the_folder_without_session_id(tmp_path: Path, git_repo: Path) -> None:
    config = tmp_path / "cfg"
    old = write_transcript(config, git_repo, "a", [tool_result("OldError")])
    new = write_transcript(config, git_repo, "b", [tool_result("NewError")])
    import os

    os.utime(old, (1_000_000, 1_000_000))
    assert context.find_transcript(git_repo / "src", None, config / "projects") == new
    assert context.last_transcript_error(new) == "NewError"


def test_hooks_state_wins_over_transcript(http_backend, recall_cmd, client_env, git_repo) -> None:
    from recall_agent import session

    write_transcript(Path(client_env["CLAUDE_CONFIG_DIR"]), git_repo, SID, [tool_result("TranscriptError")])
    with session.update(SID, cwd=str(git_repo)) as state:  # RECALL_HOME is the test's (conftest)
        state["errors"].append({"key": "k", "tool": "Bash", "text": "HookError: recorded by the hook"})
    payload, out = posted_learnings(http_backend, recall_cmd, client_env, git_repo, "--session", SID)
    assert payload["error_text"] == "HookError: recorded by the hook"
    assert "(session-state)" in out


def test_explicit_text_wins(http_backend, recall_cmd, client_env, git_repo) -> None:
    write_transcript(Path(client_env["CLAUDE_CONFIG_DIR"]), git_repo, SID, [tool_result("TranscriptError")])
    payload, out = posted_learnings(http_backend, recall_cmd, client_env, git_repo, "my", "words")
    assert payload["error_text"] == "my words"
    assert "Query:" not in out


def test_nothing_detected_is_auto_mode(http_backend, recall_cmd, client_env, git_repo) -> None:
    payload, out = posted_learnings(http_backend, recall_cmd, client_env, git_repo)
    assert payload == {"match_type": "auto", "repo": "omnibase_infra", "max_results": 5}
    assert "auto mode for repo omnibase_infra" in out
    assert "[Architecture] not queried: no query text" in out


def test_big_transcript_is_read_from_the_end_within_a_bound(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    filler = json.dumps(assistant("x" * 1000)) + "\n"
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(tool_result("EarlyError: far back")) + "\n")
        fh.write(filler * 3000)  # ~3 MB of chatter
        fh.write(json.dumps(tool_result("LateError: near the end")) + "\n")
        fh.write(filler * 10)
        fh.write('{"type": "user", "message": {broken json\n')
    assert context.last_transcript_error(path) == "LateError: near the end"
    lines = list(context._lines_from_end(path, budget=64 * 1024))
    assert 0 < len(lines) < 70  # only the tail was read
    assert all(b"EarlyError" not in line for line in lines)
    # within a 1 MB budget the early error is out of reach: bounded, not a full scan
    small = tmp_path / "small.jsonl"
    small.write_text(json.dumps(tool_result("EarlyError")) + "\n" + filler * 2000, encoding="utf-8")
    found = None
    for line in context._lines_from_end(small, budget=1024 * 1024):
        found = found or context.error_from_entry(json.loads(line))
    assert found is None


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "a/b", ""])
def test_bad_session_ids_do_not_escape(tmp_path: Path, bad_id: str) -> None:
    (tmp_path / "projects").mkdir()
    assert context.find_transcript(tmp_path, bad_id or None, tmp_path / "projects") is None


def test_in_process_federation_gets_the_repo_path(recall_cmd, client_env, git_repo: Path) -> None:
    """Nothing configured: the real in-process federation node answers about this checkout."""
    (git_repo / "billing.py").write_text("class InvoiceTotals:\n    def total(self):\n        return 0\n")
    sub = git_repo / "docs"
    sub.mkdir()
    proc = subprocess.run(
        [*recall_cmd, "--format", "json", "--scope", "architecture", "InvoiceTotals"],
        cwd=sub,
        env=client_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    federation = doc["federation"]
    assert federation["transport"] == "in-process"
    assert federation["payload"] == {
        "query": "InvoiceTotals",
        "force_backends": ["repowise"],
        "repo_path": str(git_repo),
    }
    assert federation["failure"] is None, federation["failure"]
    assert any("InvoiceTotals" in r["content"] for r in federation["response"]["results"])
    assert doc["learnings"]["queried"] is False
