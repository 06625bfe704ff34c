"""A stored resolution says the fix (issue 33): the shapes of the tuning projects' sessions whose fix was found
but not said, written as the client writes transcripts and read by the real engine (`Engine`, `learning.build`)."""

from __future__ import annotations

import difflib
import random
import re
import sys
from pathlib import Path

import pytest

from recall_agent.capture import FIX_LINE_MAX, edits, learning
from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from capture_fixtures import replay_bash  # noqa: E402
from transcript_writer import TranscriptWriter  # noqa: E402

CD_ERROR = "Exit code 1\n(eval):cd:1: no such file or directory: testbed"


def _learnings(tmp_path: Path, calls: list[tuple[str, str, int]]) -> list[dict]:
    """The learnings of one session that runs `calls` (command, output, exit code) in order."""
    engine = replay_bash(tmp_path, "sess-resolutions", "fix the bug", calls)
    # what is tested is the text a pairing of error and fix says; whether the fitted models keep the episode
    # moves with every refit of weights.json, so an episode they judged and dropped is read too
    episodes = engine.episodes() or engine.judged_episodes[-1:]
    ctx = learning.Context(session_id="sess-resolutions", root=str(tmp_path), branch="main", repo="shop")
    return [b for e in episodes if (b := learning.build(e, ctx))]


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


# ---------------------------------------------------------------------- source edits


def _edit(w: TranscriptWriter, root: Path, rel: str, old: str, new: str) -> None:
    """An Edit as the client records it: the call, and a result with the file as it was (`originalFile`) and
    the hunks of the change with three lines of context (`structuredPatch`); the file on disk changes."""
    file = root / rel
    original = file.read_text()
    assert original.count(old) == 1
    updated = original.replace(old, new)
    a, b = original.splitlines(), updated.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_grouped_opcodes(3):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        lines = []
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                lines += [" " + ln for ln in a[x1:x2]]
            else:
                lines += ["-" + ln for ln in a[x1:x2]] + ["+" + ln for ln in b[y1:y2]]
        hunks.append(
            {"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1, "newLines": j2 - j1, "lines": lines}
        )
    file.write_text(updated)
    result = {"filePath": str(file), "oldString": old, "newString": new, "originalFile": original,
              "structuredPatch": hunks, "userModified": False, "replaceAll": False}  # fmt: skip
    w.tool("Edit", {"file_path": str(file), "old_string": old, "new_string": new},
           f"The file {file} has been updated.", result=result)  # fmt: skip


def _edit_session(tmp_path: Path, files: dict[str, str], edits: list[tuple[str, str, str]], test: str) -> str:
    """A failing test run, the edits, the same run passing: the stored learning's first line."""
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-edits", str(tmp_path))
    w.prompt("fix the failing test")
    error = "Exit code 1\nE   AttributeError: 'Exists' object is not subscriptable\nFAILED tests/queries/test_q.py::test_q_and_exists"
    w.bash(test, error, exit_code=1)
    for rel, old, new in edits:
        _edit(w, tmp_path, rel, old, new)
    w.bash(test, "12 passed in 0.31s")
    engine = Engine()
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    ctx = learning.Context(session_id="sess-edits", root=str(tmp_path), branch="main", repo="django")
    (found,) = [b for e in engine.episodes() if (b := learning.build(e, ctx))]
    first = found["resolution_summary"].splitlines()[0]
    assert len(first) <= FIX_LINE_MAX and not first.endswith("…"), first
    return first


QUERY_UTILS = (
    "class Q(tree.Node):\n"
    "    def deconstruct(self):\n"
    "        path = '%s.%s' % (self.__class__.__module__, self.__class__.__name__)\n"
    "        args, kwargs = (), {}\n"
    "        if len(self.children) == 1 and not isinstance(self.children[0], Q):\n"
    "            child = self.children[0]\n"
    "            kwargs = {child[0]: child[1]}\n"
    "        else:\n"
    "            args = tuple(self.children)\n"
    "        return path, args, kwargs\n"
)
TEST_Q = (
    "from django.db.models import F, Q\nfrom django.test import SimpleTestCase\n\n\nclass QTests(SimpleTestCase):\n"
    + "".join(
        f"    def test_reconstruct_{i}(self):\n        q = Q(price__gt=F('discounted_price_{i}'))\n"
        f"        path, args, kwargs = q.deconstruct()\n        self.assertEqual(Q(*args, **kwargs), q)\n\n"
        for i in range(8)
    )
)


def test_the_source_fix_comes_before_a_big_test_edit(tmp_path: Path) -> None:
    """swecb 486d21b7: the test file was edited first with a big hunk, the library's one-line fix second;
    the line showed the test hunk from its unchanged start and cut the fix off."""
    big_new = TEST_Q.replace(
        "from django.db.models import F, Q", "from django.db.models import Exists, F, Q"
    ) + (
        "\n\nclass QWithExistsTests(SimpleTestCase):\n    def test_q_and_exists(self):\n"
        + "        q = Q(Exists(Item.objects.all())) & Q(x=1)\n" * 6
    )
    first = _edit_session(
        tmp_path,
        {"django/db/models/query_utils.py": QUERY_UTILS, "tests/queries/test_q.py": TEST_Q},
        [
            ("tests/queries/test_q.py", TEST_Q, big_new),
            ("django/db/models/query_utils.py", "            kwargs = {child[0]: child[1]}\n",
             "            if isinstance(child, tuple):\n                kwargs = {child[0]: child[1]}\n"
             "            else:\n                args = (child,)\n"),
        ],
        "python -m pytest tests/queries/test_q.py",
    )  # fmt: skip
    assert first.startswith("Changed `django/db/models/query_utils.py` (`Q.deconstruct`): ")
    assert "args = (child,)" in first and "`tests/queries/test_q.py`" in first


RUN_PY = (
    "from pylint import config\n"
    "from pylint.config.exceptions import ArgumentPreprocessingError\n"
    "from pylint.config.utils import _preprocess_options\n\n\n"
    "class Run:\n"
    '    """Helper class to use as main for pylint."""\n\n'
    "    def __init__(\n"
    "        self,\n"
    "        args,\n"
    "        reporter=None,\n"
    "    ) -> None:\n"
    + "        linter.load_default_plugins()\n"
    * 30
    + "        args = _config_initialization(\n"
    "            linter, args, reporter, config_file=self._rcfile\n"
    "        )\n"
    "        linter.run(args)\n"
)


def test_a_fix_in_two_places_names_the_function_and_shows_both(tmp_path: Path) -> None:
    """swecb 2ae56e98: an import at the top and a try/except in `Run.__init__` (whose signature spans
    several lines): the line named no function and showed the imports, the fix cut off."""
    first = _edit_session(
        tmp_path,
        {"pylint/lint/run.py": RUN_PY},
        [
            ("pylint/lint/run.py", "import ArgumentPreprocessingError\n",
             "import ArgumentPreprocessingError, _UnrecognizedOptionError\n"),
            ("pylint/lint/run.py", "        args = _config_initialization(\n            linter, args, reporter, config_file=self._rcfile\n        )\n",
             "        try:\n            args = _config_initialization(\n                linter, args, reporter, config_file=self._rcfile\n"
             "            )\n        except _UnrecognizedOptionError:\n            sys.exit(32)\n"),
        ],
        "python -m pytest tests/test_self.py",
    )  # fmt: skip
    assert "`pylint/lint/run.py` (`Run.__init__`)" in first
    assert "ArgumentPreprocessingError, _UnrecognizedOptionError" in first and "sys.exit(32)" in first
    assert "linter.load_default_plugins()" not in first  # the lines both sides keep are not shown


def test_a_config_file_names_its_section(tmp_path: Path) -> None:
    """A TOML edit names the table it changed (`tool.mypy.overrides`), as a source edit names its function."""
    toml = '[project]\nname = "shop"\n\n[[tool.mypy.overrides]]\nmodule = ["respx.*"]\nignore_missing_imports = true\n'
    first = _edit_session(
        tmp_path,
        {"pyproject.toml": toml},
        [("pyproject.toml", 'module = ["respx.*"]\n', 'module = ["respx.*", "structlog.*"]\n')],
        "mypy src",
    )
    assert first.startswith("Changed `pyproject.toml` (`tool.mypy.overrides`): ")


def test_the_folder_itself_from_inside_it_is_dot(tmp_path: Path) -> None:
    """swecb 84421cd0: inside testbed, `ls -la testbed` names nothing; the lesson is `.` for `testbed`."""
    first = _fix_line(
        tmp_path,
        [
            ("cd testbed && git checkout 4da0b645", "HEAD is now at 4da0b645", 0),
            ("ls -la testbed", "Exit code 1\nls: testbed: No such file or directory", 1),
            ("pwd && ls -la", "/work/testbed\nsympy\nsetup.py", 0),
        ],
    )  # fmt: skip
    assert first.endswith("used the paths without their `testbed/` prefix (`.` for `testbed`).")


def test_steps_before_the_check_are_all_named_within_the_line(tmp_path: Path) -> None:
    """The shape of oh-my-posh c0fff321: a benchmark timed out after two minutes; two long steps ran before
    the check passed with fewer iterations. Each step is named by its start (`go clean -cache`, not its
    `cd`), the line is not cut. (In the session the steps were `timeout 60 go test` runs; a wrapper is not
    the check any more, so those are reruns of the check now and the steps here are other commands.)"""
    loop = "; ".join(
        f"echo {n}; go mod download -x golang.org/x/sys@v0.{n}.0 golang.org/x/text" for n in range(4)
    )
    first = _fix_line(
        tmp_path,
        [
            ("go test -run=^$ -bench=BenchmarkEnginePrimary -benchmem -benchtime=200000x .", "Command timed out after 2m 0s", 1),
            ("cd D:/oh-my-posh/src/prompt && go clean -cache -testcache -modcache -fuzzcache -i -r -x 2>&1 | tail -10",
             "rm -rf /Users/x/Library/Caches/go-build", 0),
            (f"cd D:/oh-my-posh/src/prompt && {loop}", "go: downloading golang.org/x/sys", 0),
            ("go test -run=^$ -bench=BenchmarkEnginePrimary -benchmem -benchtime=64000x " + "-memprofile=\"$TEMP/mem.out\" " * 3 + ".",
             "BenchmarkEnginePrimary-8 64000 51000 ns/op\nok", 0),
        ],
    )  # fmt: skip
    assert "Ran `go clean -cache" in first and " then `echo 0;" in first and first.endswith(" before it.")


def test_a_change_text_stays_within_its_room_and_the_evidence_keeps_one_place() -> None:
    """Every place is counted or shown within `2 × limit` (+ the count); the evidence's form (one place) is
    what the self-check parses, whatever the summary shows."""
    from recall_agent.capture import edits
    from recall_agent.selfcheck import parse_change

    rng = random.Random(7)
    for _ in range(400):
        old = [f"line {rng.randint(0, 30)} " + "x" * rng.randint(0, 80) for _ in range(rng.randint(0, 30))]
        new = list(old)
        for _ in range(rng.randint(1, 6)):
            new.insert(rng.randint(0, len(new)), "new " + "y" * rng.randint(0, 200))
            if new and rng.random() < 0.5:
                new.pop(rng.randint(0, len(new) - 1))
        change = edits.FileChange("f.py", old="\n".join(old), new="\n".join(new))
        for limit in (12, 40, 160):
            summary = edits.describe(change, limit, places=3)
            assert len(summary) <= 2 * limit + len("`` → ``") + edits.MORE_MAX, summary
            evidence = edits.describe(change, limit)
            assert "more place" not in evidence and " … " not in evidence.replace("…`", "`")
            assert parse_change(evidence)[0] in ("replace", "added", "removed", "none")
    two = edits.FileChange("run.py", old="import A\nx = 1\n" + "keep\n" * 20 + "y = 2\n",
                           new="import A, B\nx = 1\n" + "keep\n" * 20 + "y = 3\n")  # fmt: skip
    assert edits.describe(two) == "`import A` → `import A, B`"
    assert edits.describe(two, places=3) == "`import A` → `import A, B` … `y = 2` → `y = 3`"
    assert parse_change(edits.describe(two)) == ("replace", "import A", "import A, B")


def test_a_file_rewritten_whole_is_not_diffed_line_by_line() -> None:
    """A Write over a big file: past DIFF_CELLS_MAX the changed middle is shown as one place, not diffed line
    by line (a quadratic diff on the hook's path); below it, every other line changed is many places."""
    from recall_agent.capture import edits

    def halves(n: int) -> edits.FileChange:
        old = [f"line{i}" for i in range(n)]
        new = [f"line{i}" if i % 2 else f"new{i}" for i in range(n)]
        return edits.FileChange("big.py", old="\n".join(old), new="\n".join(new))

    assert "more places" in edits.describe(halves(100), places=3)
    big = edits.describe(halves(2000), places=3)
    assert big.startswith("`line0 line1 line2") and "more place" not in big


def test_many_changed_functions_share_the_room_with_the_change() -> None:
    """swecb 4fbf68ad: six test methods of one class changed; as many are named as fit in half the file's
    room, the class said once."""
    from recall_agent.capture.learning import _symbols

    names = [f"TestShowFixtures.test_show_fixtures_{w}" for w in ("a" * 20, "b" * 20, "c" * 20, "d" * 20)]
    assert _symbols(names, 140) == f"{names[0]}, test_show_fixtures_{'b' * 20}, test_show_fixtures_{'c' * 20}"
    assert _symbols(names, 120) == f"{names[0]}, test_show_fixtures_{'b' * 20}"
    assert _symbols(names, 10) == names[0]  # the first always
    assert _symbols(["load", "save"], 40) == "load, save"


# ---------------------------------------------------------------------- issue 33, eighth round


def _session_first_line(
    tmp_path: Path, steps: list[tuple[str, ...]], root: str | None = None
) -> tuple[str, dict]:
    """One session of Bash calls (`bash`, command, output, exit code), Writes (`write`, path, content) and
    Edits (`edit`, path, old, new: the file on disk changes) as the client records them; the learning's first
    line and its `fix` evidence (an episode the fitted models dropped is read too, as in `_learnings`)."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-round8", str(tmp_path))
    w.prompt("fix the bug")
    for step in steps:
        if step[0] == "bash":
            w.bash(step[1], step[2], exit_code=int(step[3]))
        elif step[0] == "write":
            w.write(step[1], step[2])
        else:
            _edit(w, tmp_path, step[1], step[2], step[3])
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    ctx = learning.Context(session_id="sess-round8", root=root or str(tmp_path), branch="main", repo="r")
    (found,) = [b for e in engine.episodes() or engine.judged_episodes[-1:] if (b := learning.build(e, ctx))]
    first = found["resolution_summary"].splitlines()[0]
    assert len(first) <= FIX_LINE_MAX and not first.endswith("…"), first
    return first, found["fix"]


def test_a_file_the_session_wrote_is_not_the_fix_of_a_folder_slip(tmp_path: Path) -> None:
    """swecb a169d8b4: inside testbed, `cd testbed && python3 ../t.py` fails; the session writes a results
    file the check never runs, then `python3 ../t.py` passes. The line said "Changed `output/…_preds.json`:
    created." for a `cd` slip; the lesson is the folder, and the fix is the environment's."""
    first, fix = _session_first_line(
        tmp_path,
        [
            ("bash", "cd testbed && git checkout 4da0b645", "HEAD is now at 4da0b645", 0),
            ("bash", "cd testbed && python3 ../test_float_internals.py", CD_ERROR, 1),
            ("write", "output/sympy__sympy-13146_preds.json", '{"model_patch": "diff --git a/x b/x"}\n'),
            ("bash", "python3 ../test_float_internals.py", "mpf('0.5')", 0),
        ],
    )
    assert first.startswith("Environment: The shell was already in `testbed`"), first
    assert "ran it without `cd testbed`" in first and "preds.json" not in first
    assert fix["kind"] == "environment" and "files" not in fix


PYPROJECT_STD = (
    "class StandardDomain(Domain):\n"
    "    def get_fignumber(self, env, builder, figtype, docname, target_node):\n"
    "        try:\n"
    "            figure_id = target_node['ids'][0]\n"
    "            return env.toc_fignumbers[docname][figtype][figure_id]\n"
    "        except (KeyError, IndexError):\n"
    "            raise ValueError\n"
)


def test_another_interpreter_beside_the_edit_is_said(tmp_path: Path) -> None:
    """swecb 717c4919: `python -m pytest t.py` fails under Python 2.7 (no pytest), the session edits the
    source, and `python3 -m pytest t.py` passes. The line showed the edit alone, so the row keyed on `No
    module named pytest` told later sessions to change `std.py`; the interpreter is part of the fix."""
    (tmp_path / "sphinx/domains").mkdir(parents=True)
    (tmp_path / "sphinx/domains/std.py").write_text(PYPROJECT_STD)
    test = "tests/test_build_html.py::test_numfig_with_singlehtml -xvs 2>&1 | head -100"
    first, fix = _session_first_line(
        tmp_path,
        [
            ("bash", f"python -m pytest {test}", "Exit code 1\n/usr/bin/python: No module named pytest", 1),
            ("edit", "sphinx/domains/std.py", "            raise ValueError\n",
             "            return env.toc_fignumbers[env.config.master_doc][figtype][figure_id]\n"),
            ("bash", f"python3 -m pytest {test}", "1 passed in 0.40s", 0),
        ],
    )  # fmt: skip
    assert first.startswith("Changed `sphinx/domains/std.py` (`StandardDomain.get_fignumber`)"), first
    assert "Also the command: `python` → `python3` (`python3 -m pytest tests/" in first  # what changed first
    assert fix["command"]["after"].startswith("python3 -m pytest")


def test_another_test_run_beside_the_edit_is_not_said(tmp_path: Path) -> None:
    """How the edit was checked is not part of the fix: a test selection or another script (`pytest t.py::a`
    failed, `pytest t.py` passed) leaves the room to the change."""
    (tmp_path / "sphinx/domains").mkdir(parents=True)
    (tmp_path / "sphinx/domains/std.py").write_text(PYPROJECT_STD)
    first, _ = _session_first_line(
        tmp_path,
        [
            ("bash", "pytest tests/test_std.py::test_numfig -x", "Exit code 1\nE   ValueError\nFAILED tests/test_std.py::test_numfig", 1),
            ("edit", "sphinx/domains/std.py", "            raise ValueError\n", "            return None\n"),
            ("bash", "pytest tests/test_std.py", "3 passed in 0.40s", 0),
        ],
    )  # fmt: skip
    assert "Also the command" not in first and "`raise ValueError` → `return None`" in first


FIXTURES_PY = "class TestShowFixtures:\n" + "".join(
    f"    def test_show_fixtures_{name}(self, testdir):\n        result.stdout.fnmatch_lines(['*{name}'])\n\n"
    for name in ("trimmed_doc", "indented_doc", "indented_doc_first_line_unindented", "indented_in_class",
                 "different_files", "with_same_name")
)  # fmt: skip


def test_the_function_the_error_names_is_named_first(tmp_path: Path) -> None:
    """swecb 4fbf68ad: one failing test of six changed ones; the functions were listed in the file's order and
    the room ran out before the one that failed (`test_show_fixtures_with_same_name`)."""
    (tmp_path / "testing/python").mkdir(parents=True)
    (tmp_path / "testing/python/fixtures.py").write_text(FIXTURES_PY)
    steps: list[tuple[str, ...]] = [
        ("bash", "pytest testing/python/fixtures.py -x",
         "Exit code 1\nFAILED testing/python/fixtures.py::TestShowFixtures::test_show_fixtures_with_same_name", 1),
    ]  # fmt: skip
    for name in ("trimmed_doc", "indented_doc", "indented_doc_first_line_unindented", "indented_in_class",
                 "different_files", "with_same_name"):  # fmt: skip
        steps.append(("edit", "testing/python/fixtures.py", f"['*{name}']", f"['*{name} [function scope]']"))
    steps.append(("bash", "pytest testing/python/fixtures.py -x", "6 passed in 0.5s", 0))
    first, _ = _session_first_line(tmp_path, steps)
    assert first.startswith(
        "Changed `testing/python/fixtures.py` (`TestShowFixtures.test_show_fixtures_with_same_name"
    ), first


def test_a_long_line_changed_at_its_end_is_shown_from_the_difference(tmp_path: Path) -> None:
    """swecb 3c92ff28: a long line changed near its end was cut at the room's end on both sides, so the line
    read "`prettyF.baseline = max_upper + sign…` → `prettyF.baseline = max_upper + sign…`": X → X."""
    head = "        prettyF.baseline = " + " + ".join(f"max_upper_{i} + sign_height_{i}//2" for i in range(8))
    (tmp_path / "pretty.py").write_text(f"class PrettyPrinter:\n    def _print_Sum(self, expr):\n{head}\n")
    first, _ = _session_first_line(
        tmp_path,
        [
            ("bash", "python3 t.py", "Exit code 1\nAssertionError: baseline 3 != 4", 1),
            ("edit", "pretty.py", f"{head}\n", f"{head} - adjustment\n"),
            ("bash", "python3 t.py", "ok", 0),
        ],
    )
    old, new = re.search(r": `([^`]+)` → `([^`]+)`", first).groups()  # type: ignore[union-attr]
    assert old != new and "adjustment" in new, first


def test_a_windows_sessions_files_are_named_from_its_root(tmp_path: Path) -> None:
    """oh-my-posh db8d3dd4: a session recorded on Windows names `D:\\oh-my-posh\\src\\segments\\path_test.go`;
    read on another machine the path stayed whole, and the learning did not name `src/segments/...`."""
    assert learning._relative("D:\\oh-my-posh\\src\\segments\\path_test.go", "D:\\oh-my-posh") == (
        "src/segments/path_test.go"
    )
    assert learning._relative("d:/oh-my-posh/go.mod", "D:\\oh-my-posh\\") == "go.mod"
    assert learning._relative("C:\\tmp\\x.go", "D:\\oh-my-posh") == "C:\\tmp\\x.go"


def test_an_edit_without_the_original_file_names_the_function_its_old_text_holds() -> None:
    """oh-my-posh db8d3dd4: the Edit's result had no `originalFile`, so the change named no function though
    its old text starts at the test's own `func` line."""
    old = 'func TestFullPathCustomMappedLocations(t *testing.T) {\n\tfor _, tc := range cases {\n\t\tenv := new(mock.Environment)\n\t\tenv.On("Home").Return(homeDir)\n'
    new = old + '\t\tenv.On("IsWsl").Return(false)\n'
    change = edits.change_of(
        "Edit", {"old_string": old, "new_string": new}, {"filePath": "x"}, "src/segments/path_test.go"
    )
    assert change.symbols == ["TestFullPathCustomMappedLocations"]


def test_a_clone_made_from_inside_the_folder_is_not_said_as_its_creation(tmp_path: Path) -> None:
    """swecb 819fb8d0: `cd testbed` failed while the shell was already inside testbed, and the session cloned
    it again there (`testbed/testbed`). The line said both "`testbed` did not exist: created it with `git
    clone …`" and "The shell was already in `testbed`": two opposite lessons. The shell's folder is the one."""
    first, fix = _session_first_line(
        tmp_path,
        [
            ("bash", "cd testbed && git checkout 4da0b645", "HEAD is now at 4da0b645", 0),
            ("bash", 'cd testbed && grep -n "numerator" sympy/core/power.py', CD_ERROR, 1),
            ("bash", "git clone https://github.com/sympy/sympy.git testbed", "Cloning into 'testbed'...", 0),
            ("bash", 'cd testbed && grep -n "numerator" sympy/core/power.py', "1203: numerator", 0),
        ],
    )
    assert "did not exist" not in first and "The shell was already in `testbed`" in first, first
    assert fix["folder"]["cause"] == "shell_inside"


def test_a_place_in_little_room_still_shows_where_it_differs() -> None:
    """oh-my-posh: a third place given 14 characters a side read `…"white", Backgr…` → `…"white", Backgr…`
    in the summary."""
    old = 'Case: "x", Foreground: "white", Background: "red"'
    change = edits.FileChange("a_test.go", old=old, new=old.replace('"red"', '"blue"'), edits=1)
    shown = edits.describe(change, 14, learning.PLACES_SHOWN)  # as the summary asks
    left, right = re.fullmatch(r"`([^`]+)` → `([^`]+)`", shown).groups()  # type: ignore[union-attr]
    assert left != right and '"red"' in left and '"blue"' in right, shown
    # the evidence's one place keeps both sides' start: `selfcheck.parse_change` looks the old text up in the file
    long = edits.FileChange("a_test.go", old=old * 6, new=old * 5 + old.replace('"red"', '"blue"'), edits=1)
    assert edits.describe(long).startswith("`Case: ")
