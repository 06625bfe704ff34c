"""The hooks' pure decisions: command identity and resolution, tickets, task types, summaries, payloads."""

from __future__ import annotations

import pytest

from recall_agent.hooks import capture, events


@pytest.mark.parametrize(
    ("command", "family", "targets"),
    [
        ("cd /repo && python -m pytest tests/test_a.py::test_x -q 2>&1 | tail -20", "pytest", ["tests/test_a.py::test_x"]),
        ("uv run pytest -x tests/", "pytest", ["tests/"]),
        ("CI=1 npm test -- --watch=false", "npm test", []),
        ("git push origin main", "git push", ["origin", "main"]),
        ("python3 manage.py migrate", "python3 manage.py", ["migrate"]),
        ("sudo make build", "make build", []),
        ("cargo build --release", "cargo build", []),
    ],
)  # fmt: skip
def test_command_identity(command: str, family: str, targets: list[str]) -> None:
    key, fam, tgts = events.command_identity(command)
    assert (fam, tgts) == (family, targets)
    assert "2>&1" not in key and "tail" not in key and not key.startswith("cd ")


def _entry(command: str) -> dict[str, object]:
    key, family, targets = events.command_identity(command)
    return {"key": key, "family": family, "targets": targets}


@pytest.mark.parametrize(
    ("failed", "succeeded", "resolved"),
    [
        ("pytest tests/test_a.py -q", "pytest tests/test_a.py -q | tail -5", True),
        ("pytest tests/test_a.py::test_x", "pytest tests/", True),
        ("pytest tests/test_a.py::test_x", "python -m pytest", True),
        ("pytest tests/test_a.py::test_x", "pytest tests/test_b.py", False),
        ("npm test", "npm run lint", False),
        ("git push origin main", "git status", False),
        ("python app.py", "python other.py", False),
        ("mypy src/", "mypy src/pkg/mod.py", False),
        ("mypy src/pkg/mod.py", "mypy src", True),
    ],
)
def test_resolution(failed: str, succeeded: str, resolved: bool) -> None:
    assert events.resolves(_entry(failed), _entry(succeeded)) is resolved


def test_error_ident_folds_numbers_but_not_names() -> None:
    a = events.error_ident("pytest", "y\nE   KeyError: 'user' at 0x7f00aa\nfailed in 1.23s")
    b = events.error_ident("pytest", "y\nE   KeyError: 'user' at 0x7f11bb\nfailed in 4.56s")
    c = events.error_ident("pytest", "y\nE   KeyError: 'email' at 0x7f11bb\nfailed in 4.56s")
    assert a == b != c


def test_clip_keeps_head_and_tail() -> None:
    text = "HEAD-LINE\n" + "noise\n" * 5000 + "ValueError: the cause"
    clipped = events.clip(text)
    assert len(clipped) <= events.ERROR_TEXT_MAX
    assert clipped.startswith("HEAD-LINE") and clipped.endswith("ValueError: the cause")


def test_payload_parsing_current_and_old_versions() -> None:
    current = events.from_payload(
        {
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "error": "ls: x: No such file",
            "tool_use_id": "t1",
        },
        "PostToolUseFailure",
    )
    assert current is not None and current.failed and current.error_text == "ls: x: No such file"
    old = events.from_payload(
        {
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_response": {"stderr": "boom", "exitCode": 2},
        },
        "PostToolUse",
    )
    assert old is not None and old.failed and old.error_text == "boom"
    ok = events.from_payload(
        {
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_response": {"stdout": "a", "exit_code": 0},
        },
        "PostToolUse",
    )
    assert ok is not None and not ok.failed
    edit = events.from_payload({"tool_name": "Write", "tool_input": {"file_path": "/r/a.py"}}, "PostToolUse")
    assert edit is not None and edit.file_path == "/r/a.py"
    mcp = events.from_payload(
        {"tool_name": "mcp__db__query", "tool_input": {"sql": "select 1"}, "tool_response": {"isError": True, "content": [{"type": "text", "text": "relation does not exist"}]}},
        "PostToolUse",
    )  # fmt: skip
    assert mcp is not None and mcp.failed and mcp.error_text == "relation does not exist"
    assert events.from_payload({"cwd": "/"}, "PostToolUse") is None


@pytest.mark.parametrize(
    ("branch", "ticket"),
    [
        ("feature/PROJ-1234-add-login", "PROJ-1234"),
        ("abc-42-fix-typo", "ABC-42"),
        ("fix/TASK-7100", "TASK-7100"),
        ("main", None),
        ("release/2024-11", None),
        ("dependabot/pip/urllib3-2.0.7", None),
        ("hotfix-12/ENG-77-crash", "ENG-77"),
        (None, None),
    ],
)
def test_ticket_from_branch(branch: str | None, ticket: str | None) -> None:
    assert capture.ticket_from_branch(branch) == ticket


def test_ticket_pattern_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_TICKET_PATTERN", r"gh-(\d+)")
    assert capture.ticket_from_branch("fix/gh-881-crash") == "881"
    monkeypatch.setenv("RECALL_TICKET_PATTERN", "([unclosed")
    assert capture.ticket_from_branch("fix/ABC-9") == "ABC-9"  # a broken pattern falls back to the default


@pytest.mark.parametrize(
    ("branch", "files", "command", "expected"),
    [
        ("fix/ABC-1", ["src/a.py"], "pytest", "bug_fix"),
        ("feature/login", ["src/a.py"], "pytest", "feature"),
        ("chore/x", ["docs/guide.md", "README.md"], "mkdocs build", "docs"),
        ("main", ["alembic/versions/001_add.py", "src/models.py"], "alembic upgrade head", "migration"),
        ("main", [".github/workflows/ci.yml"], "act", "ci_fix"),
        ("main", ["requirements.txt", "poetry.lock"], "pip install -r requirements.txt", "dependency"),
        ("main", ["tests/test_a.py", "tests/conftest.py"], "pytest", "test"),
        ("main", [], "pip install foo", "dependency"),
        (None, [], "make", "unknown"),
        ("renovate/urllib3-2.x", ["pyproject.toml", "src/a.py"], "pytest", "dependency"),
    ],
)
def test_task_type(branch: str | None, files: list[str], command: str, expected: str) -> None:
    assert capture.task_type(branch, files, command) == expected


def test_summary_keeps_the_cause_and_the_fix_in_order() -> None:
    message = (
        "## Summary\n\nAll done! The failure was caused by a stale `conftest.py` fixture that reused the "
        "database URL. I replaced it with a per-test tmp database in tests/conftest.py.\n\n```python\n"
        "db = tmp_path / 'x.db'\n```\n- Tests pass now.\n\nLet me know if you want more changes."
    )
    summary = capture.summarize(message)
    assert summary.startswith("The failure was caused by a stale `conftest.py` fixture")
    assert "I replaced it with a per-test tmp database" in summary
    assert "Let me know" not in summary and "```" not in summary and "##" not in summary
    assert capture.summarize("") == ""
    assert capture.summarize("Done.") == "Done."


def test_branch_read_from_git_head_and_worktree(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    (root / "main" / ".git").mkdir(parents=True)
    (root / "main" / ".git" / "HEAD").write_text("ref: refs/heads/feature/ABC-7-x\n")
    assert capture.current_branch(root / "main") == "feature/ABC-7-x"
    (root / "main" / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (root / "main" / ".git" / "worktrees" / "wt" / "HEAD").write_text("ref: refs/heads/fix/XY-9\n")
    (root / "wt").mkdir()
    (root / "wt" / ".git").write_text(f"gitdir: {root / 'main' / '.git' / 'worktrees' / 'wt'}\n")
    assert capture.current_branch(root / "wt") == "fix/XY-9"
    (root / "main" / ".git" / "HEAD").write_text("3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\n")
    assert capture.current_branch(root / "main") is None  # detached
