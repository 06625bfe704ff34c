"""The capture engine's pure pieces: what a command checks, output lines, edits, the learning's text, and the
hook payloads. The engine end to end is in test_capture_engine.py; live and imported in test_hooks.py,
test_import_sessions.py and test_capture_real_client.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_agent.capture import commands, cues, edits, learning, output
from recall_agent.hooks import events


@pytest.mark.parametrize(
    ("command", "family", "targets"),
    [
        ("cd /repo && python -m pytest tests/test_a.py::test_x -q 2>&1 | tail -20", "pytest", ("tests/test_a.py::test_x",)),
        ("uv run pytest -x tests/", "pytest", ("tests/",)),
        ("CI=1 npm test -- --watch=false", "npm test", ()),
        ("git push origin main", "git push", ("origin", "main")),
        ("python3 manage.py migrate", "python3 manage.py", ("migrate",)),
        ("sudo make build", "make build", ()),
        ("cargo build --release", "cargo build", ()),
        ('python -c "import django; print(django.VERSION)" && ls', 'python import django; print(django.VERSION)', ()),
        # a wrapper's options and its own argument are not the check (a missing `timeout` is met without it)
        ("timeout 900 .venv/bin/python -m pytest -q 2>&1 | tail -15", "pytest", ()),
        ("gtimeout -s KILL 5m go test ./pkg/...", "go test", ("./pkg/...",)),
        ("nice -n 10 make build", "make build", ()),
        ("time -p cargo test", "cargo test", ()),
        ("npx -p typescript tsc --noEmit", "tsc", ()),
    ],
)  # fmt: skip
def test_the_check_a_command_runs(command: str, family: str, targets: tuple[str, ...]) -> None:
    main = commands.parse(command).main
    assert main is not None and (main.family, main.targets) == (family, targets)


@pytest.mark.parametrize(
    ("script", "checks"),
    [
        # a line break is a `;`: each line its own segment, block keywords run nothing
        ("for f in a b; do\n  make build-$f\ndone", ["make build-$f"]),
        ("if ! go test ./...; then\n  echo fail\nfi", ["go test ./...", "echo fail"]),
        ("n=$(awk '/x/' f)\n}\ndone", []),
        ("cd src\ngo vet ./... 2>&1 | tail -5", ["go vet ./..."]),  # the leading `cd` is the folder
        # a here-document's lines are its command's input, a backslash-newline continues the line
        ("python3 << 'EOF'\nimport json\nprint(1)\nEOF", ["python3 << 'EOF' import json print(1) EOF"]),
        ("make \\\n  build", ["make build"]),
        ('python3 -c "\nimport x\nprint(2)\n"', ['python3 -c " import x print(2) "']),
        # a here-document's `;`, `|` and quotes are its input's (Python code, a commit message), not the shell's
        ("source .venv/bin/activate; python3 - <<'EOF'\nimport os; os.environ['A'] = \"x|y\"\nprint(1); print(\"it's\")\nEOF\nmake test",
         ["source .venv/bin/activate", "python3 - <<'EOF' import os; os.environ['A'] = \"x|y\" print(1); print(\"it's\") EOF", "make test"]),
        ("git commit -m \"$(cat <<'EOF'\nfix: a; b | c\nEOF\n)\" && git push",
         ["git commit -m \"$(cat <<'EOF' fix: a; b | c EOF )\"", "git push"]),
    ],
)  # fmt: skip
def test_a_multi_line_script_is_read_line_by_line(script: str, checks: list[str]) -> None:
    command = commands.parse(script)
    assert [c.key for c in command.checks] == checks
    assert commands.parse(command.text).checks == command.checks  # what is stored parses the same again


def test_folder_masking_and_probes() -> None:
    cmd = commands.parse("cd testbed && pytest -x 2>&1 | tail -5")
    assert cmd.cwd == "testbed" and cmd.masked
    assert not commands.parse("pytest -x").masked
    assert commands.parse("pytest || true").masked
    assert commands.parse("ls -la testbed").probe and commands.parse("git status").probe
    assert commands.parse("pip install -e .").installs and not commands.parse("pytest").installs
    assert commands.parse("command -v gtimeout").probe  # looks a program up, as `which` does


@pytest.mark.parametrize(
    ("failed", "later", "same"),
    [
        ("pytest tests/test_a.py -q", "pytest tests/test_a.py -q | tail -5", True),
        ("pytest tests/test_a.py::test_x", "pytest tests/", True),
        ("pytest tests/test_a.py::test_x", "python -m pytest", True),
        ("pytest tests/test_a.py::test_x", "pytest tests/test_b.py", False),
        ("npm test", "npm run lint", False),
        ("git push origin main", "git status", False),
        ("git push", "git push --set-upstream origin feature-x", True),
        ("python app.py", "python other.py", False),
        ("python test_issue.py", "python3 test_issue.py", True),  # another interpreter
        ("python3 testbed/t.py", "cd testbed && python3 t.py", True),  # the same script from its folder
        ("mypy src/", "mypy src/pkg/mod.py", False),
        ("mypy src/pkg/mod.py", "mypy src", True),
        (
            "python -m pytest tests/migrations/test_writer.py",
            "python tests/runtests.py migrations.test_writer",
            True,
        ),
    ],
)
def test_same_check(failed: str, later: str, same: bool) -> None:
    assert commands.same_check(commands.parse(failed), commands.parse(later)) is same


def test_a_probe_of_a_missing_path_and_what_creates_it() -> None:
    probe = commands.parse("ls -la testbed")
    assert not commands.same_check(probe, commands.parse("ls -la"), probes=True)  # names no testbed
    assert commands.same_check(probe, commands.parse("ls -la testbed/"), probes=True)
    assert commands.creates(commands.parse("git clone https://github.com/x/y.git testbed"), ["testbed"])
    assert commands.creates(commands.parse("mkdir -p output && ls"), ["./output/"])
    assert not commands.creates(commands.parse("ls testbed"), ["testbed"])
    # a search of `.` for something else does not look at the path the failing probe missed
    grep = commands.parse("grep -n colorMode -A8 website/docusaurus.config.js")
    assert not commands.same_check(grep, commands.parse("grep -rln svg-png-compare ."), probes=True)
    assert not commands.same_check(probe, commands.parse("ls -la ."), probes=True)
    assert commands.same_check(grep, commands.parse("grep -n colorMode website"), probes=True)
    # from inside the folder, the program that named the missing path, not the last one of the line
    listing = commands.parse('ls build/docs && echo "=== counts ===" && echo done')
    assert commands.uses_inner(commands.parse("ls docs"), listing, ["build/docs"], "build")
    assert commands.uses_inner(commands.parse("ls -la"), listing, ["build/docs"], "build")
    assert not commands.uses_inner(commands.parse("echo hi > /tmp/m.txt"), listing, ["build/docs"], "build")
    later = commands.parse('head -3 /tmp/m.txt; echo "..."')  # `...` is go's every package, not a path
    assert not commands.same_check(listing, later, probes=True, missing=["build/docs"])
    assert commands.same_check(listing, commands.parse("ls build/docs/"), probes=True, missing=["build/docs"])


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ("git push", "git push --set-upstream origin feat", "`git push --set-upstream origin feat` instead of `git push`"),
        ("cd testbed && pytest -x", "pytest -x", "ran it without `cd testbed` (the shell was already there)"),
        ("pytest -x", "cd testbed && pytest -x", "ran it after `cd testbed`"),
        ("python -m pytest t.py -v", "pytest t.py -v", "ran it without `python -m` (`pytest t.py -v`)"),
        ("pytest -x", "pytest -x", None),
        # the client refused `sleep N && check`; the check alone ran: the wait is what changed
        ("sleep 30 && gh pr view 94 --json state", "gh pr view 94 --json state", "ran it without `sleep 30`"),
        ("curl -sf localhost:8000/health", "sleep 3 && curl -sf localhost:8000/health", "ran it after `sleep 3`"),
        ("pytest -q; echo done", "pytest -q", None),  # an `echo` around the same check: a rerun
        ("git add src/[id].astro", "git add 'src/[id].astro'", "`git add 'src/[id].astro'` instead of `git add src/[id].astro`"),
        # a program that is not there, and the same check without it or under its GNU name
        ("timeout 900 pytest -q", "pytest -q", "ran it without `timeout 900` (`pytest -q`)"),
        ("timeout 900 pytest -q", "gtimeout 900 pytest -q", "`gtimeout 900 pytest -q` instead of `timeout 900 pytest -q`"),
    ],
)  # fmt: skip
def test_how_a_command_changed(before: str, after: str, said: str | None) -> None:
    assert commands.change(commands.parse(before), commands.parse(after)) == said


def test_another_tools_structured_input_is_part_of_its_call() -> None:
    """An MCP tool or StructuredOutput called again with its input reshaped: the shape is what changed."""
    before = commands.tool_command("StructuredOutput", {"findings": {"findings": []}})
    after = commands.tool_command("StructuredOutput", {"findings": []})
    assert (
        before.text == 'StructuredOutput findings={"findings":[]}'
        and after.text == "StructuredOutput findings=[]"
    )
    assert (
        commands.change(before, after)
        == '`StructuredOutput findings=[]` instead of `StructuredOutput findings={"findings":[]}`'
    )
    long = commands.tool_command("mcp__db__query", {"rows": list(range(100)), "sql": "select 1"})
    assert long.text.startswith("mcp__db__query rows=[0,1,2") and len(long.text) < 120


def test_output_lines_background_and_identity() -> None:
    noise = "Error processing line 1 of /opt/conda/lib/python3.8/site-packages/matplotlib-nspkg.pth:"
    lines = [noise, "AttributeError: 'NoneType' object has no attribute 'loader'", "E   KeyError: 'user'"]
    background = {output.fold(noise), output.fold(lines[1])}
    assert output.error_lines(lines, background) == ["E   KeyError: 'user'"]
    # numbers and addresses fold; names do not
    assert output.fold("KeyError at 0x7f00aa line 12") == output.fold("KeyError at 0x7f11bb line 99")
    assert output.fold("KeyError: 'user'") != output.fold("KeyError: 'email'")
    # an HTTP status is not a count: a 404 is not the 200 a passing probe printed (the HTTP version still folds)
    assert output.fold("HTTP/2 404") != output.fold("HTTP/2 200")
    assert output.fold("HTTP/1.1 200 OK") == output.fold("HTTP/2 200 OK")
    assert output.fold('{"status": 500, "id": 7}') != output.fold('{"status": 200, "id": 8}')
    assert output.fold('{"error": "x", "code": 404}') != output.fold('{"error": "x", "code": 200}')
    assert output.fold("took 404 ms") == output.fold("took 200 ms")
    # so a service's error answer is not taken for the background a passing probe printed
    assert cues.answer_error("HTTP/2 404", {output.fold("HTTP/2 200")})
    assert not cues.answer_error("HTTP/2 404", {output.fold("HTTP/2 404")})
    # the failing tests a runner names tell errors apart, not the summary every failure prints
    a = ["FAILED tests/t.py::test_one - AssertionError", "=== 1 failed, 3 passed in 0.1s ==="]
    b = ["FAILED tests/t.py::test_two - AssertionError", "=== 1 failed, 4 passed in 0.1s ==="]
    assert set(output.identity(a)).isdisjoint(output.identity(b))


def test_missing_paths() -> None:
    assert output.missing_paths(["ls: testbed: No such file or directory"]) == ["testbed"]
    assert output.missing_paths(["(eval):cd:1: no such file or directory: ./testbed"]) == ["./testbed"]
    assert output.missing_paths(
        ["python3: can't open file 'x/t.py': [Errno 2] No such file or directory"]
    ) == ["x/t.py"]


ORIGINAL = """class Totals:
    def total(self, items):
        count = 0
        for item in items:
            count += item
        return count - 1


def helper():
    return 1
"""


def test_an_edit_names_the_function_it_changed() -> None:
    details = {
        "originalFile": ORIGINAL,
        "structuredPatch": [
            {"oldStart": 4, "oldLines": 3, "newStart": 4, "newLines": 3,
             "lines": ["         for item in items:", "             count += item", "-        return count - 1", "+        return count"]}
        ],
    }  # fmt: skip
    change = edits.change_of(
        "Edit", {"old_string": "return count - 1", "new_string": "return count"}, details, "pkg/mod.py"
    )
    assert change.symbols == ["Totals.total"]
    assert edits.describe(change) == "`return count - 1` → `return count`"


def test_edits_of_one_file_fold_and_a_revert_drops_out() -> None:
    a = edits.FileChange("m.py", old="x = 1", new="x = 2", edits=1)
    b = edits.FileChange("m.py", old="x = 2", new="x = 3", edits=1)
    both = edits.fold(a, b)
    assert (both.old, both.new, both.edits) == ("x = 1", "x = 3", 2)
    assert edits.fold(a, edits.FileChange("m.py", old="x = 2", new="x = 1", edits=1)).reverted()
    made = edits.change_of("Write", {"content": "def run():\n    pass\n"}, {"type": "create"}, "t.py")
    assert made.created and made.symbols == ["run"] and edits.describe(made) == "created"


def test_the_cause_is_the_agents_explanation_never_its_filler() -> None:
    said = [
        "Perfect! All tests pass now.",
        "Let me look at the handler first.",
        "The handler fails because get_response_async is missing from the mixin, so ASGI calls None.",
    ]
    assert learning.cause_sentence(said) == said[2]
    assert learning.cause_sentence(["Perfect!", "Now let me create a comprehensive test suite."]) is None


def test_packages_of_installs() -> None:
    assert learning.packages_of(["pip install 'numpy<2' requests", "npm install left-pad@1.3.0"]) == [
        "numpy<2",
        "requests",
        "left-pad@1.3.0",
    ]


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
    assert learning.ticket_from_branch(branch) == ticket


def test_ticket_pattern_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_TICKET_PATTERN", r"gh-(\d+)")
    assert learning.ticket_from_branch("fix/gh-881-crash") == "881"
    monkeypatch.setenv("RECALL_TICKET_PATTERN", "([unclosed")
    assert learning.ticket_from_branch("fix/ABC-9") == "ABC-9"  # a broken pattern falls back to the default


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
    assert learning.task_type(branch, files, command) == expected


def test_branch_read_from_git_head_and_worktree(tmp_path: Path) -> None:
    root = tmp_path
    (root / "main" / ".git").mkdir(parents=True)
    (root / "main" / ".git" / "HEAD").write_text("ref: refs/heads/feature/ABC-7-x\n")
    assert learning.current_branch(root / "main") == "feature/ABC-7-x"
    (root / "main" / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (root / "main" / ".git" / "worktrees" / "wt" / "HEAD").write_text("ref: refs/heads/fix/XY-9\n")
    (root / "wt").mkdir()
    (root / "wt" / ".git").write_text(f"gitdir: {root / 'main' / '.git' / 'worktrees' / 'wt'}\n")
    assert learning.current_branch(root / "wt") == "fix/XY-9"
    (root / "main" / ".git" / "HEAD").write_text("3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\n")
    assert learning.current_branch(root / "main") is None  # detached


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
        {"tool_name": "Bash", "tool_input": {"command": "ls"}, "error": "ls: x: No such file", "tool_use_id": "t1"},
        "PostToolUseFailure",
    )  # fmt: skip
    assert current is not None and current.failed and current.error_text == "ls: x: No such file"
    old = events.from_payload(
        {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stderr": "boom", "exitCode": 2}},
        "PostToolUse",
    )  # fmt: skip
    assert old is not None and old.failed and old.error_text == "boom"
    ok = events.from_payload(
        {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a", "exit_code": 0}},
        "PostToolUse",
    )  # fmt: skip
    assert ok is not None and not ok.failed
    mcp = events.from_payload(
        {"tool_name": "mcp__db__query", "tool_input": {"sql": "select 1"}, "tool_response": {"isError": True, "content": [{"type": "text", "text": "relation does not exist"}]}},
        "PostToolUse",
    )  # fmt: skip
    assert mcp is not None and mcp.failed and mcp.error_text == "relation does not exist"
    assert mcp.key == "mcp__db__query sql=select 1"
    assert events.from_payload({"cwd": "/"}, "PostToolUse") is None


def _episode_features(tmp_path: Path, script: str, failing: str, error: str) -> dict[str, float]:
    """The episode model's features of one failure and its fix, from a transcript the client's way."""
    from hooks_fixtures import Session, make_project

    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    project = make_project(tmp_path)
    s = Session("sess-features", project, {})
    if script:
        s.write(script, "print('reproduced')\n")
    s.logged_failure(failing.format(project=project), error)
    s.bash_ok(f"cd {project} && python {script or 'manage.py'}", stdout="reproduced")
    engine = Engine(record=True)
    engine.feed(Transcript(s.transcript).steps())
    engine.end_turn()
    (episode,) = engine.judged_episodes
    return episode.features


def test_a_missing_file_the_agent_wrote_itself_is_told_apart(tmp_path: Path) -> None:
    own = _episode_features(
        tmp_path / "own",
        "repro_issue.py",
        "cd {project}/src && python ../../repro_issue.py",
        "Exit code 2\npython: can't open file '../../repro_issue.py': [Errno 2] No such file or directory",
    )
    assert own["error_missing_path"] == 1.0 and own["error_missing_own_file"] == 1.0
    project_file = _episode_features(
        tmp_path / "project",
        "",
        "cd {project}/src && python manage.py",
        "Exit code 2\npython: can't open file 'manage.py': [Errno 2] No such file or directory",
    )
    assert project_file["error_missing_path"] == 1.0 and project_file["error_missing_own_file"] == 0.0


@pytest.mark.parametrize(
    ("before", "after", "why"),
    [
        ("pytest -v", "pytest -k grid -xvs", "narrowed"),
        ("python -m pytest tests/test_a.py", "python -m pytest tests/test_a.py::test_x -q", "narrowed"),
        ("pytest tests/a.py tests/b.py", "pytest tests/a.py", "narrowed"),
        ("go test ./...", "go test ./pkg/x -run TestA", "narrowed"),
        # a linter or analyser on fewer files or a sub-folder passes because it checks less (issue 33, tenth round)
        ("cd b && python -m ruff check a.py c.py src/main.py", "cd b && python -m ruff check a.py c.py", "narrowed"),
        ("dart analyze lib/features/vpn/ 2>&1", "dart analyze lib/features/vpn/domain/ 2>&1", "narrowed"),
        ("npx eslint src/", "npx eslint src/a.ts", "narrowed"),
        ("ruff check a.py", "ruff check b.py", None),  # another file: the model weighs it
        ("git add a.md b.md gone.md", "git add a.md b.md", None),  # a missing file left out: may be the fix
        ("pytest tests/ | head -50", "pytest tests/ | head -100", "rerun"),
        ("pytest tests/a.py --tb=short", "pytest tests/a.py --tb=long -v --no-header", "output"),
        ("npx vitest run", "npx vitest run 2>&1 | tail -30", "rerun"),
        ("git push", "git push --set-upstream origin b", None),  # a missing flag: a fix
        ("python t.py", "python3 t.py", None),  # another interpreter
        ("python3 -m pytest testbed/tests/t.py", "python3 -m pytest tests/t.py", None),  # another folder
        ("python3 -m pylint a", "mv a/a.py a/c.py && python3 -m pylint a", None),  # a step before it
        ("pip install -e testbed", "pip install -e ./testbed", None),
        # the same words quoted: zsh had globbed the unquoted `[id]` (`no matches found`)
        ("git add src/pages/works/[id].astro a.md", "git add 'src/pages/works/[id].astro' a.md", None),
    ],
)  # fmt: skip
def test_what_is_not_a_fix(before: str, after: str, why: str | None) -> None:
    assert commands.not_a_fix(commands.parse(before), commands.parse(after)) == why
    if why in ("narrowed", "output", "rerun"):
        assert commands.change(commands.parse(before), commands.parse(after)) is None


def test_a_run_of_thousands_of_targets_is_compared_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """not_a_fix on test runs naming thousands of targets: a target named in both is matched by a set (no
    pairwise scan), and the scan for targets covered by another stops after PAIRS_MAX pairs, answering
    "not shown narrower" (a pairwise scan of 20,000 targets took minutes)."""
    calls = 0
    covers = commands._covers

    def counted(outer: str, inner: str) -> bool:
        nonlocal calls
        calls += 1
        return covers(outer, inner)

    monkeypatch.setattr(commands, "_covers", counted)
    every = commands.parse("pytest " + " ".join(f"tests/t{i}.py" for i in range(2000)))
    half = commands.parse("pytest " + " ".join(f"tests/t{i}.py" for i in range(1000)))
    assert commands.not_a_fix(every, half) == "narrowed"
    assert calls == 0
    ids = commands.parse("pytest " + " ".join(f"tests/t{i}.py::test_x" for i in range(1000)))
    assert commands.not_a_fix(every, ids) is None
    assert calls <= commands.PAIRS_MAX + 2000
    few = commands.parse("pytest " + " ".join(f"tests/t{i}.py::test_x" for i in range(3)))
    assert commands.not_a_fix(every, few) == "narrowed"  # a few ids inside: scanned, as before


@pytest.mark.parametrize(
    ("before", "after", "is_variant"),
    [
        ("make typecheck", "make type", True),  # another target of the same program
        ("zsh -c 'echo $x'", "bash -c 'echo $x'", True),  # another shell for the same script
        ("pip install -r r.txt", "pip3 install --user -r r.txt", True),
        ("uv run python -m tool --help", "uv run tool --help", False),  # `-m tool` is tool: the same check
        ("cd . && golangci-lint run ./src/a/...", "cd src && golangci-lint run ./a/...", True),
        ("python a.py", "python b.py", False),  # another script is another check
        ("pytest tests", "pytest tests -k one", False),  # a narrower selection is never a fix
        ("pytest tests/a.py", "pytest tests/a.py -q | tail -3", False),  # output only
        ("python t.py", "python3 t.py", False),  # the same check (resolved as such)
        ("git push", "git status", False),  # a probe
        ("make test", "npm test", False),  # another program
    ],
)  # fmt: skip
def test_a_command_run_another_way(before: str, after: str, is_variant: bool) -> None:
    found = commands.variant(commands.parse(before), commands.parse(after))
    assert (found is not None) == is_variant
    if found is not None:
        assert set(found) >= {"variant_same_family", "variant_overlap", "variant_program_swap"}


@pytest.mark.parametrize(
    ("before", "after", "shown"),
    [
        # the check's own text is the same: the whole lines say what changed
        ("mise run lint && mise run test:ci", "mise run lint --fix && mise run test:ci", "`mise run lint --fix && mise run test:ci` instead of `mise run lint && mise run test:ci`"),
        ("FOO=1 mise run test:ci 2>&1 | grep FAIL", "FOO=2 mise run test:ci", "`FOO=2 mise run test:ci` instead of `FOO=1 mise run test:ci`"),
    ],
)  # fmt: skip
def test_a_changed_command_is_never_x_instead_of_x(before: str, after: str, shown: str) -> None:
    assert commands.change(commands.parse(before), commands.parse(after)) == shown


def test_long_commands_show_the_part_that_differs() -> None:
    flags = " ".join(f"--opt{i}" for i in range(60))
    before = commands.parse(f"tool run {flags}")
    after = commands.parse(f"tool run {flags.replace('--opt50', '--opt50=1')}")
    said = commands.change(before, after)
    assert said == (  # what changed first, then the passing line from a little before it
        "`--opt49 --opt50` → `--opt49 --opt50=1` (`… --opt48 --opt49 --opt50=1 --opt51 --opt52 --opt53 --opt54"
        " --opt55 --opt56 --opt57 --opt58 --opt59`)"
    )


def test_the_hook_shows_the_fix_line_whole_and_first() -> None:
    from recall_agent.hooks.retrieve import SUMMARY_MAX, shown_summary

    fix = (
        "Environment: Fixed by the command: `"
        + "x" * 200
        + " --set-upstream origin b` instead of `git push`."
    )
    cause = "Cause (agent): " + "the branch had no upstream, so a plain push does not know where to go. " * 5
    shown = shown_summary(f"{fix}\n{cause}\nFrom the session's commands; `git push` passed after it.")
    assert shown.startswith(fix) and len(shown) <= SUMMARY_MAX and "From the session" not in shown
    assert shown_summary("Changed `a.py`: `x` → `y`.\nFrom the session's edits; `t` passed after it.") == (
        "Changed `a.py`: `x` → `y`."
    )


@pytest.mark.parametrize(
    ("line", "failed"),
    [
        ("Delete 3 migrations? (y/N)", True),
        ("Is this ok [y/N]: ", True),
        ("epoch 4: train_loss=NaN val_loss=nan", True),
        ("zsh: no matches found: tests/*.spec.ts", True),
        ("epoch 4: loss 0.31", False),
    ],
)
def test_failures_seen_only_in_the_output(line: str, failed: bool) -> None:
    assert output.is_error_line(line) is failed


@pytest.mark.parametrize(
    "line",
    [
        "src/cart.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "docs/configuration/general.mdx:198:81 error MD013/line-length Line length [Expected: 80; Actual: 155]",
        "make: *** No rule to make target 'typecheck'.  Stop.",
        "make[2]: *** [Makefile:12: build] Error 1",
        "npm ERR! code ELIFECYCLE",
        'npm error Missing script: "typecheck"',
        "Would reformat: src/api/routes.py",
    ],
)
def test_error_lines_of_common_tools(line: str) -> None:
    """The lines that say what failed in tsc, markdownlint, make, npm and formatter reports are the error
    (the episode's key and the model's `error_lines` feature), not background text."""
    assert output.error_lines([line], set()) == [line]


def test_what_tells_trial_and_error_from_a_lesson(tmp_path: Path) -> None:
    """Issue 33's episode features for a refit to weigh: the failing tool is an MCP tool (its later success
    is the same call with other arguments), how many times the error failed before the fix, and how much of
    the failing command the passing one keeps."""
    from hooks_fixtures import Session, _tool_result, _tool_use, make_project

    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    project = make_project(tmp_path)
    s = Session("sess-lesson", project, {})
    s._log(
        _tool_use("toolu_mcp_1", "mcp__db__query", {"sql": "select * from playrs"}),
        _tool_result("toolu_mcp_1", 'ERROR: 42P01: relation "playrs" does not exist', True),
        _tool_use("toolu_mcp_2", "mcp__db__query", {"sql": "select * from players"}),
        _tool_result("toolu_mcp_2", '[{"count": 3}]', False),
    )
    test = f"cd {project} && python -m pytest tests"
    for _ in range(3):
        s.logged_failure(test, "Exit code 1\nE   ModuleNotFoundError: No module named 'requests_oauth'")
    s.edit("src/app/client.py")
    s.bash_ok(f"{test} 2>&1 | tail -n 20", stdout="1 passed in 0.01s")  # plumbing is not what it runs
    s.logged_failure(
        "go vet ./...", "Exit code 1\n./main.go:3:2: fmt.Printf format %d has arg s of wrong type"
    )
    s.bash_ok("go build ./... ; go vet ./... ; echo BUILD_OK", stdout="BUILD_OK")
    engine = Engine(record=True)
    engine.feed(Transcript(s.transcript).steps())
    engine.end_turn()
    by_tool = {ep.failed.command.text.split()[0]: ep.features for ep in engine.judged_episodes}
    mcp, pytest_run, vet = by_tool["mcp__db__query"], by_tool["cd"], by_tool["go"]
    assert mcp["other_tool"] == 1.0 and pytest_run["other_tool"] == 0.0 and vet["other_tool"] == 0.0
    assert pytest_run["failures_repeated"] == 0.5 and mcp["failures_repeated"] == 0.0
    assert pytest_run["command_overlap"] == 1.0
    assert vet["command_overlap"] == pytest.approx(
        3 / 6
    )  # go, vet, ./... of go build vet ./... echo BUILD_OK
    assert 0.0 < mcp["command_overlap"] < 1.0


def test_the_session_s_own_work_in_progress_and_a_pass_read_off_the_output(tmp_path: Path) -> None:
    """Issue 33's precision features: the fix changed a file the session had edited before the error first
    failed (its own work in progress), and the run that showed it fixed hides its exit code."""
    from hooks_fixtures import Session, make_project

    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    project = make_project(tmp_path)
    s = Session("sess-own-work", project, {})
    s.edit("src/app/client.py", "import requests_oauth", "import requests_oauth2")  # the session's own change
    test = f"cd {project} && python -m pytest tests"
    s.logged_failure(test, "Exit code 1\nE   ModuleNotFoundError: No module named 'requests_oauth2'")
    s.edit("src/app/client.py", "import requests_oauth2", "import requests_oauthlib")
    s.bash_ok(test + " 2>&1 | tail -3", stdout="1 passed in 0.01s")
    s.logged_failure(
        "go vet ./...", "Exit code 1\n./main.go:3:2: fmt.Printf format %d has arg s of wrong type"
    )
    s.edit("src/app/client.py", "import requests_oauthlib", "import requests_oauthlib  # vet")
    s.bash_ok("go vet ./...", stdout="")
    engine = Engine(record=True)
    engine.feed(Transcript(s.transcript).steps())
    engine.end_turn()
    pytest_run, vet = (ep.features for ep in engine.judged_episodes)
    assert pytest_run["fix_touched_before"] == 1.0 and pytest_run["passed_masked"] == 1.0
    assert vet["fix_touched_before"] == 1.0 and vet["passed_masked"] == 0.0
    fresh = Session("sess-fresh-file", make_project(tmp_path / "fresh"), {})
    fresh.logged_failure(test, "Exit code 1\nE   ModuleNotFoundError: No module named 'requests_oauth'")
    fresh.edit("src/app/client.py")  # first touched by the fix itself
    fresh.bash_ok(test, stdout="1 passed in 0.01s")
    engine = Engine(record=True)
    engine.feed(Transcript(fresh.transcript).steps())
    engine.end_turn()
    (episode,) = engine.judged_episodes
    assert episode.features["fix_touched_before"] == 0.0 and episode.features["passed_masked"] == 0.0


def test_an_error_that_says_nothing_but_its_exit_code_is_not_stored(tmp_path: Path) -> None:
    """`Exit code 1` alone is printed by every failure: a learning keyed on it would be offered for any."""
    from hooks_fixtures import Session, make_project

    from recall_agent.capture.engine import Engine
    from recall_agent.capture.transcript import Transcript

    project = make_project(tmp_path)
    s = Session("sess-exit-only", project, {})
    for command, error in (
        ("make lint", "Exit code 1"),
        ("make types", "Exit code 2\nsrc/a.py:3: error: bad"),
    ):
        s.logged_failure(f"cd {project} && {command}", error)
        s.edit("src/app/client.py", "import requests_oauth", "import requests_oauthlib")
        s.bash_ok(f"cd {project} && {command}", stdout="ok")
        s.edit("src/app/client.py", "import requests_oauthlib", "import requests_oauth")
    engine = Engine(record=True)  # every resolved episode, whatever the fitted models say of it
    engine.feed(Transcript(s.transcript).steps())
    engine.end_turn()
    episodes = engine.judged_episodes
    ctx = learning.Context(session_id="sess-exit-only", root=str(project), branch=None, repo="r")
    built = [learning.build(e, ctx) for e in episodes]
    by_command = {e.failed.command.text.rsplit("&& ", 1)[-1]: b for e, b in zip(episodes, built, strict=True)}
    assert set(by_command) == {"make lint", "make types"}
    assert by_command["make lint"] is None and by_command["make types"] is not None


@pytest.mark.parametrize(
    ("prompt", "quoted"),
    [
        ("Traceback (most recent call last):\n  File \"a.py\", line 1\nTypeError: 'int' object is not callable",
         ["TypeError: 'int' object is not callable"]),
        ("Description\n\nValueError: 'Good' is not a valid Status\n", ["ValueError: 'Good' is not a valid Status"]),
        ("```\n$ cargo build\nerror[E0382]: borrow of moved value: `v`\n```", ["error[E0382]: borrow of moved value: `v`"]),
        ("this raises a TypeError when the list is empty", []),
        ("Calling it raises `TypeError: x` for me", []),  # named in a sentence, not quoted on its own line
        ("error: prose outside a code block is not a tool's error line", []),
        ("```\nDeprecationWarning: x is deprecated\nAssertionError: \n```", []),
        ("```python\nprint('Error: x')\nraise ValueError('bad')\n```", []),  # code, not its output
        ("```ts\ninterface State {\n  error: string | null;\n  clearError: () => void;\n}\n```", []),  # code
        ("(index):483  Uncaught SyntaxError: Invalid or unexpected token",
         ["(index):483  Uncaught SyntaxError: Invalid or unexpected token"]),  # a browser's console
        ("```\nE   ModuleNotFoundError: No module named 'cgi'\n```", ["E   ModuleNotFoundError: No module named 'cgi'"]),
    ],
)  # fmt: skip
def test_the_errors_a_prompt_quotes(prompt: str, quoted: list[str]) -> None:
    assert output.quoted_errors(prompt) == quoted


def test_the_task_line_of_a_prompt_is_its_title_never_the_whole_prompt() -> None:
    from recall_agent.capture.task import TASK_MAX, task_line

    swe = (
        "Fix this bug to solve the issue based on manual.yaml:\n  instance_id: django__django-12915\n"
        "  repo: django/django\n  base_commit: 4652f1f0aa459a7b980441d629648707c32e36bf\n"
        "  problem_statement: Add get_response_async for ASGIStaticFilesHandler\nDescription\n    \n"
        "It looks like the StaticFilesHandlerMixin is missing the the async response function.\n"
    )
    assert task_line(swe) == "Add get_response_async for ASGIStaticFilesHandler"
    assert task_line("## Bug: totals are wrong\n\n```\nprint(1)\n```") == "Bug: totals are wrong"
    assert task_line("Fix the login redirect. It loops forever after a reset.") == "Fix the login redirect."
    for nothing in (
        "go on",
        "yes please",
        "<command-name>/clear</command-name>",
        "Caveat: The messages below",
    ):
        assert task_line(nothing) is None
    long = task_line("word " * 200)
    assert long is not None and len(long) <= TASK_MAX and long.endswith("…")
