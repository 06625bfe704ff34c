"""A stored resolution says the fix (issue 33): the shapes of the tuning projects' sessions whose fix was found
but not said, written as the client writes transcripts and read by the real engine (`Engine`, `learning.build`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from recall_agent.capture import FIX_LINE_MAX, learning
from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from transcript_writer import TranscriptWriter  # noqa: E402

CD_ERROR = "Exit code 1\n(eval):cd:1: no such file or directory: testbed"


def _learnings(tmp_path: Path, calls: list[tuple[str, str, int]]) -> list[dict]:
    """The learnings of one session that runs `calls` (command, output, exit code) in order."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-resolutions", str(tmp_path))
    w.prompt("fix the bug")
    for command, out, code in calls:
        w.bash(command, out, exit_code=code)
    engine = Engine()
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    ctx = learning.Context(session_id="sess-resolutions", root=str(tmp_path), branch="main", repo="shop")
    return [b for e in engine.episodes() if (b := learning.build(e, ctx))]


def _fix_line(tmp_path: Path, calls: list[tuple[str, str, int]]) -> str:
    (found,) = _learnings(tmp_path, calls)
    first = found["resolution_summary"].splitlines()[0]
    assert len(first) <= FIX_LINE_MAX and not first.endswith("…")
    for after, before in re.findall(r"`([^`]+)` instead of `([^`]+)`", first):
        assert after != before  # never "X instead of X"
    return first


@pytest.mark.parametrize(
    ("calls", "said"),
    [
        # swecb: `python` is Python 2.7 without pytest; the `pytest` entry point runs
        (
            [("cd testbed && python -m pytest test_issue.py -v", "Exit code 1\n/usr/bin/python: No module named pytest", 1),
             ("cd testbed && pytest test_issue.py -v", "1 passed in 0.02s", 0)],
            "ran it without `python -m` (`pytest test_issue.py -v`)",
        ),
        # me: the repository has no `patch` label; the PR is created without it
        (
            [("gh pr create --title 'refactor: redesign' --body x --base main --label patch 2>&1",
              "Exit code 1\ncould not add label: 'patch' not found", 1),
             ("gh pr create --title 'refactor: redesign' --body x --base main 2>&1", "https://github.com/o/r/pull/7", 0)],
            "ran it without `--label patch`",
        ),
        # claude-code-archiver: the CLI has no `archive` subcommand
        (
            [("uv run claude-code-archiver archive /src/SelfServe --output test-archive.zip",
              "Exit code 2\nError: Invalid value for 'PROJECT_PATH': Path 'archive' does not exist.", 2),
             ("uv run claude-code-archiver /src/SelfServe --output test-archive.zip", "Archive written", 0)],
            "ran it without `archive`",
        ),
        # swecb: the script is in the parent of the folder the shell is in
        (
            [("python3 test_bug.py", "Exit code 2\npython3: can't open file 'test_bug.py': [Errno 2] No such file or directory", 2),
             ("cd .. && python3 test_bug.py", "ok", 0)],
            "ran it after `cd ..`",
        ),
    ],
)  # fmt: skip
def test_a_command_that_only_dropped_or_moved_says_what(
    tmp_path: Path, calls: list[tuple[str, str, int]], said: str
) -> None:
    assert said in _fix_line(tmp_path, calls)


def test_the_shell_already_inside_says_what_to_leave_out(tmp_path: Path) -> None:
    """swecb: the checkout's `cd testbed` persisted; the next call's paths still start with `testbed/`, and
    the run that passed was a probe, so no changed command says what to do: the lesson does."""
    first = _fix_line(
        tmp_path,
        [
            ("cd testbed && git checkout 4da0b645", "HEAD is now at 4da0b645", 0),
            (
                "ls testbed/sympy/simplify/",
                "Exit code 1\nls: testbed/sympy/simplify/: No such file or directory",
                1,
            ),
            ("pwd && ls -la", "/work/testbed\nsympy\nsetup.py", 0),
        ],
    )
    assert "The shell was already in `testbed`" in first
    assert "without their `testbed/` prefix (`sympy/simplify/` for `testbed/sympy/simplify/`)" in first


def test_the_shell_already_inside_and_a_cd_says_drop_the_cd(tmp_path: Path) -> None:
    """swecb: `cd testbed && python3 x.py` while inside testbed, then the script passed from elsewhere by its
    path: the lesson is the `cd` to leave out, not the two look-alike lines."""
    first = _fix_line(
        tmp_path,
        [
            ("cd testbed && pip install -e .", "Successfully installed shop", 0),
            ("cd testbed && python3 tests/runtests.py forms_tests.tests.test_formsets --verbosity=2 2>&1 | tail -50",
             CD_ERROR, 1),
            ("python3 tests/runtests.py forms_tests.tests.test_formsets --verbosity=0", "OK", 0),
        ],
    )  # fmt: skip
    assert first.endswith("(the folder carries over between calls): ran it without `cd testbed`.")


def test_a_full_path_cd_keeps_the_changed_command(tmp_path: Path) -> None:
    """swecb: inside testbed, `cd testbed/sub` fails and `cd ./w/testbed/sub` (a full path) passes: that
    path is the fix, so the changed command stays."""
    first = _fix_line(
        tmp_path,
        [
            ("cd testbed && pip install -e .", "Successfully installed shop", 0),
            ("cd testbed/test_epub && python -m sphinx -b epub . _build/epub", CD_ERROR.replace("testbed", "testbed/test_epub"), 1),
            ("cd ./w/testbed/test_epub && python -m sphinx -b epub . _build/epub", "build succeeded.", 0),
        ],
    )  # fmt: skip
    assert "`cd ./w/testbed/test_epub`" in first
