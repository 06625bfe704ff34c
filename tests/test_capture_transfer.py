"""Capture rules and features that carry to projects the models never saw (issue 33, seventh round): each
built from a real session's shape, replayed through the engine."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture import learning, model
from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from capture_fixtures import replay_bash  # noqa: E402
from transcript_writer import TranscriptWriter  # noqa: E402


def _judged(tmp_path: Path, calls: list[tuple[str, str, int]]) -> Engine:
    """The engine after one session that runs `calls` (command, output, exit code) in order."""
    return replay_bash(tmp_path, "sess-transfer", "look at the blog routes", calls)


def test_an_error_the_shell_itself_printed_is_marked(tmp_path: Path) -> None:
    # me: zsh globs the unquoted Astro route `[id]` and prints its own error; quoted, the same words pass
    engine = _judged(
        tmp_path,
        [
            ("wc -l src/pages/blog/[id].astro", "Exit code 1\n(eval):1: no matches found: src/pages/blog/[id].astro", 1),
            ("wc -l 'src/pages/blog/[id].astro'", "  42 src/pages/blog/[id].astro", 0),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert episode.features["error_shell"] == 1.0


def test_the_bash_tool_s_eval_error_is_the_shell_s(tmp_path: Path) -> None:
    # technocore-chat: a heredoc in `--body "$(cat <<'BODY' …)"` broke the Bash tool's own eval of the line
    engine = _judged(
        tmp_path,
        [
            ("gh pr create --title x --body \"$(cat <<'BODY'\nnotes\nBODY)\"", "Exit code 2\n/bin/bash: eval: line 37: unexpected EOF while looking for matching `\"'", 2),
            ("gh pr create --title x --body \"$(cat <<'BODY'\nnotes\nBODY\n)\"", "https://github.com/o/r/pull/7", 0),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert episode.features["error_shell"] == 1.0


def test_a_program_s_own_error_is_not_the_shell_s(tmp_path: Path) -> None:
    engine = _judged(
        tmp_path,
        [
            ("pytest tests/test_blog.py -q", "Exit code 1\nE   AssertionError: assert 'draft' == 'published'\n1 failed", 1),
            ("pytest tests/test_blog.py -q", "1 passed in 0.03s", 0),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert episode.features["error_shell"] == 0.0


def _mcp_session(tmp_path: Path, first: str) -> Engine:
    """claude-code-archiver: the browser MCP server answers a navigation with an error as its text (the
    client does not flag it); the agent links the browser build the server wants; the navigation works."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-mcp", str(tmp_path))
    w.prompt("open the viewer in the browser")
    nav = {"url": "http://localhost:8003/viewer/"}
    w.tool("mcp__browser-use__browser_navigate", nav, [{"type": "text", "text": first}])
    w.bash("ln -s ~/Library/Caches/ms-playwright/chromium-1187 ~/Library/Caches/ms-playwright/chromium-1181")
    w.tool(
        "mcp__browser-use__browser_navigate",
        nav,
        [{"type": "text", "text": "Navigated to http://localhost:8003/viewer/"}],
    )
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return engine


def test_a_tool_that_answers_with_an_error_failed(tmp_path: Path) -> None:
    missing = "Error: [Errno 2] No such file or directory: '/Users/u/Library/Caches/ms-playwright/chromium-1181/chrome-mac/Chromium.app'"
    engine = _mcp_session(tmp_path, missing)
    (nav, _ln, again) = engine.judged_runs
    assert nav[0].flagged and not again[0].flagged
    assert nav[1]["flagged"] == 1.0
    (episode,) = engine.judged_episodes  # the navigation that worked shows it fixed, after the link
    assert episode.failed.tool == "mcp__browser-use__browser_navigate" and episode.passed.id == again[0].id


def test_a_tool_whose_answer_only_mentions_an_error_did_not_fail(tmp_path: Path) -> None:
    engine = _mcp_session(tmp_path, "Page title: Error handling in the viewer")
    assert not any(run.flagged for run, _, _ in engine.judged_runs)


FISH = "for path in src/pages/blog/index.astro src/pages/links.astro\n  grep -n '<<<<<<<' $path\nend"
PYTHON = (
    "python3 - <<'PY'\nfor path in ['src/pages/blog/index.astro', 'src/pages/links.astro']:\n"
    "    for n, line in enumerate(open(path), 1):\n        if line.startswith('<<<<<<<'): print(path, n)\nPY"
)


def test_a_command_line_the_shell_refused_is_fixed_by_writing_it_again(tmp_path: Path) -> None:
    # me: the agent wrote fish's `for ... end`; the Bash tool runs zsh, which refused the line. The same
    # search written as a Python script ran: no program failed, the line did, so the line written again is
    # the candidate fix, for the variant model to weigh
    engine = _judged(
        tmp_path,
        [
            (FISH, "Exit code 1\n(eval):3: parse error near `end'", 1),
            (PYTHON, "src/pages/blog/index.astro 42\nsrc/pages/links.astro 7", 0),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.passed.command.text.startswith("python3 - <<")
    assert episode.features["error_shell"] == 1.0 and 0.1 < episode.features["variant_overlap"] < 0.5


def test_a_program_s_error_is_not_fixed_by_another_command_line(tmp_path: Path) -> None:
    # the same lines, but grep itself failed (its own message, not the shell's): the script is not the line
    # written again; grep could not read a file, so the script may only be weighed as another way to look
    engine = _judged(
        tmp_path,
        [
            (FISH.replace("\nend", "\ndone").replace("astro\n", "astro; do\n"),
             "Exit code 2\ngrep: src/pages/links.astro: Permission denied", 2),
            (PYTHON, "src/pages/blog/index.astro 42", 0),
        ],
    )  # fmt: skip
    assert all(ep.features.get("variant_replaced") == 1.0 for ep in engine.judged_episodes if ep.variant)
    assert not any(ep.features.get("error_shell") for ep in engine.judged_episodes)


def _blocked_then_open(
    tmp_path: Path, *, then_fails_again: bool = False, variant: model.Model | None = None
) -> Engine:
    """me / technocore-chat: the browser MCP server refuses the page by policy; the agent opens it with the
    shell's `open` instead (another tool: no rule of the same check can see it closing)."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-open", str(tmp_path))
    w.prompt("show me the humans page")
    nav = {"url": "http://127.0.0.1:8099/humans"}
    blocked = "http://127.0.0.1:8099 is blocked by policy and cannot be opened in the Browser pane."
    w.tool("mcp__Claude_Browser__navigate", nav, [{"type": "text", "text": blocked}], is_error=True)
    w.bash("open http://127.0.0.1:8099/humans", "")
    if then_fails_again:
        w.tool("mcp__Claude_Browser__navigate", nav, [{"type": "text", "text": blocked}], is_error=True)
    engine = Engine(record=True)
    if variant is not None:  # weights that keep such a candidate (the fitted ones decide in use)
        engine._variant_model = variant
    engine.feed(Transcript(w.save()).steps())
    return engine


KEEPS_REPLACED = model.Model("variant", {"variant_replaced": 4.0}, -2.0, 0.5)


def test_a_call_done_another_way_is_a_candidate_fix_of_the_variant_model(tmp_path: Path) -> None:
    engine = _blocked_then_open(tmp_path)
    assert not engine.judged_episodes  # decided when the turn ends, not before
    engine.end_turn()
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.passed.command.text == "open http://127.0.0.1:8099/humans"
    assert episode.failed.tool == "mcp__Claude_Browser__navigate"
    f = episode.features
    assert f["variant_replaced"] == 1.0 and f["variant_tool_swap"] == 1.0
    assert 0.0 < f["replaced_kept"] < 1.0  # the URL is kept, the tool's name is not


def test_the_kept_candidate_closes_the_error_at_the_turn_s_end(tmp_path: Path) -> None:
    engine = _blocked_then_open(tmp_path, variant=KEEPS_REPLACED)
    engine.end_turn()
    (episode,) = engine.episodes()
    assert episode.keep and episode.passed.command.text.startswith("open ")
    assert engine.resolved_ids and not engine.streams["main"].open


def test_a_candidate_before_the_error_failed_again_is_not_its_fix(tmp_path: Path) -> None:
    engine = _blocked_then_open(tmp_path, then_fails_again=True, variant=KEEPS_REPLACED)
    engine.end_turn()
    assert not engine.episodes() and len(engine.streams["main"].open) == 1


def test_an_error_its_own_check_resolves_later_in_the_turn_keeps_that_fix(tmp_path: Path) -> None:
    engine = _judged(
        tmp_path,
        [
            ("pytest tests/test_blog.py -q", "Exit code 1\nE   KeyError: 'slug'\n1 failed", 1),
            ('python3 -c "import blog; print(blog.__file__)"', "/repo/blog/__init__.py", 0),
            ("pytest tests/test_blog.py -q", "1 passed in 0.03s", 0),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert not episode.variant and episode.passed.command.text == "pytest tests/test_blog.py -q"


def test_a_narrower_selection_is_never_a_candidate_fix(tmp_path: Path) -> None:
    # issue 33: fewer tests that passed after the whole suite failed are not a fix, by any rule
    engine = _judged(
        tmp_path,
        [
            ("pytest tests/ -q", "Exit code 1\nE   KeyError: 'slug'\n1 failed, 4 passed", 1),
            ("pytest tests/test_title.py -q", "1 passed in 0.03s", 0),
        ],
    )  # fmt: skip
    assert not engine.judged_episodes and len(engine.streams["main"].open) == 1


def test_another_tool_of_the_same_mcp_server_is_a_candidate(tmp_path: Path) -> None:
    # gameplanpro: the migration said the table exists; the agent listed the tables with the same server
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-supabase", str(tmp_path))
    w.prompt("add the divisions table")
    failed = '{"error":{"name":"Error","message":"Failed to apply database migration: ERROR:  42P07: relation \\"divisions\\" already exists"}}'
    w.tool("mcp__supabase__apply_migration", {"name": "create_divisions", "query": "CREATE TABLE divisions (id uuid)"},
           [{"type": "text", "text": failed}], is_error=True)  # fmt: skip
    w.tool(
        "mcp__supabase__list_tables",
        {},
        [{"type": "text", "text": '[{"schema":"public","name":"divisions"}]'}],
    )
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.passed.tool == "mcp__supabase__list_tables"
    assert episode.features["variant_tool_swap"] == 1.0


NEVER_KEEPS = model.Model("variant", {}, -5.0, 0.5)


def _lint_then(
    tmp_path: Path, later: list[tuple[str, str, int]], variant: model.Model | None = None
) -> Engine:
    """gameplanpro: ESLint failed on one component; what the agent ran next, each passing."""
    lint = (
        "cd frontend && npm run lint src/components/PlayerManagementInterface.tsx",
        "Exit code 1\n\n> frontend@0.1.0 lint\n> eslint src/components/PlayerManagementInterface.tsx\n\n"
        "/Users/x/frontend/src/components/PlayerManagementInterface.tsx\n"
        "  412:31  error  Unnecessary escape character: \\+  no-useless-escape\n\n✖ 1 problem (1 error, 0 warnings)",
        1,
    )
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-lint", str(tmp_path))
    w.prompt("fix the lint errors")
    for command, out, code in [lint, *later]:
        w.bash(command, out, exit_code=code)
    engine = Engine(record=True)
    if variant is not None:
        engine._variant_model = variant
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return engine


def test_a_candidate_that_names_none_of_the_failed_check_s_targets_is_marked(tmp_path: Path) -> None:
    # issue 33, tenth round: `npm run dev` was credited as the fix of an ESLint error on one file
    engine = _lint_then(
        tmp_path, [("npm run dev", "> frontend@0.1.0 dev\n> vite\n\n  VITE v5.0.0  ready in 300 ms", 0)]
    )
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.passed.command.text == "npm run dev"
    assert episode.features["variant_target_dropped"] == 1.0 and episode.features["variant_try"] == 0.0


def test_a_candidate_that_keeps_the_target_is_not_marked(tmp_path: Path) -> None:
    # neuvector-mcp: the container is named `server`, not after the app; the same deployment set again
    engine = _judged(
        tmp_path,
        [
            ("kubectl set image deploy/neuvector-mcp -n neuvector-mcp neuvector-mcp=registry.example.com/nv:1.1.0", 'Exit code 1\nerror: unable to find container named "neuvector-mcp"', 1),
            ("kubectl set image deploy/neuvector-mcp -n neuvector-mcp server=registry.example.com/nv:1.1.0", "deployment.apps/neuvector-mcp image updated", 0),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.features["variant_target_dropped"] == 0.0


def test_each_later_chance_of_an_error_is_marked(tmp_path: Path) -> None:
    # the variant model weighs which of its VARIANT_TRIES chances a candidate is (the first is most often it)
    later = [(f"npm run {s}", f"> frontend@0.1.0 {s}\n\ndone", 0) for s in ("build", "typecheck", "dev")]
    engine = _lint_then(tmp_path, later, variant=NEVER_KEEPS)
    tries = [ep.features["variant_try"] for ep in engine.judged_episodes if ep.variant]
    assert tries == [0.0, 0.5, 1.0]
    assert len(engine.streams["main"].open) == 1  # none kept: the error waits for its own check


def _background_session(tmp_path: Path) -> Path:
    # gameplanpro, claude-code-archiver: a server started in the background fails, and only the poll of its
    # shell shows how (BashOutput is not flagged an error, its text holds the exit code and the output)
    w = TranscriptWriter(tmp_path / "bg.jsonl", "sess-bg", str(tmp_path))
    w.prompt("start the frontend")
    w.background("cd frontend && npm start", "bash_1")
    w.poll(
        "bash_1",
        "failed",
        1,
        stderr='npm error Missing script: "start"\nnpm error Did you mean one of these?',
    )
    w.poll("bash_1", "failed", 1, stderr='npm error Missing script: "start"')  # a second look at the same end
    w.background("cd frontend && npm run dev", "bash_2")
    w.poll("bash_2", "running", stdout="  VITE v5.4.2  ready in 312 ms\n  ➜  Local:   http://localhost:5173/")
    w.poll("bash_3", "failed", 1, stderr="never started here")  # a shell this transcript did not start
    return w.save()


def test_a_background_command_is_run_when_its_poll_shows_how_it_ended(tmp_path: Path) -> None:
    steps = [s for s in Transcript(_background_session(tmp_path)).steps() if hasattr(s, "is_error")]
    assert [(s.call.name, s.call.input["command"], s.is_error) for s in steps] == [
        ("Bash", "cd frontend && npm start", True),  # the launch itself says nothing: no result
        ("Bash", "cd frontend && npm run dev", False),  # what the server printed while it runs
    ]
    assert steps[0].text.startswith('Exit code 1\nnpm error Missing script: "start"')
    engine = Engine(record=True)
    engine.feed(Transcript(_background_session(tmp_path)).steps())
    engine.end_turn()
    (episode,) = engine.judged_episodes
    assert episode.failed.command.text == "cd frontend && npm start"
    assert episode.passed.command.text == "cd frontend && npm run dev"


def test_a_later_read_still_knows_what_a_background_shell_runs(tmp_path: Path) -> None:
    # the hooks read a live session in pieces: the launch in one read, its poll in the next
    w = TranscriptWriter(tmp_path / "bg.jsonl", "sess-bg", str(tmp_path))
    w.prompt("start the frontend")
    w.background("cd frontend && npm start", "bash_1")
    first = Transcript(w.save())
    assert not [s for s in first.steps() if hasattr(s, "is_error")]
    waiting = {c.id: c for c in first.pending()}
    assert [c.input["command"] for c in waiting.values()] == ["cd frontend && npm start"]
    w.poll("bash_1", "failed", 1, stderr='npm error Missing script: "start"')
    later = [
        s for s in Transcript(w.save(), start=first.end, calls=waiting).steps() if hasattr(s, "is_error")
    ]
    assert [(s.call.input["command"], s.is_error) for s in later] == [("cd frontend && npm start", True)]


def test_a_background_server_polled_again_is_one_run(tmp_path: Path) -> None:
    # gameplanpro: `npm start` in the background, then BashOutput twice while it runs; each look shows the
    # lines printed so far (the same `server running` line again), not a new run of the command
    w = TranscriptWriter(tmp_path / "bg.jsonl", "sess-bg", str(tmp_path))
    w.prompt("restart the server")
    w.background("npm start", "8bc7c0")
    ready = (
        "> gameplanpro@1.0.0 start\n> node server.js\n\nGamePlanPro server running on http://localhost:2004"
    )
    w.poll("8bc7c0", "running", stdout=ready)
    first = Transcript(w.save())
    runs = [s for s in first.steps() if hasattr(s, "is_error")]
    assert [(s.call.input, s.is_error) for s in runs] == [({"command": "npm start"}, False)]
    waiting = {c.id: c for c in first.pending()}  # the hooks read the next looks in a later read
    w.poll("8bc7c0", "running", stdout=ready)
    w.poll("8bc7c0", "completed", 0, stdout=ready)
    later = [
        s for s in Transcript(w.save(), start=first.end, calls=waiting).steps() if hasattr(s, "is_error")
    ]
    assert later == []


def test_a_background_server_that_fails_after_it_ran_is_read_again(tmp_path: Path) -> None:
    w = TranscriptWriter(tmp_path / "bg.jsonl", "sess-bg", str(tmp_path))
    w.prompt("start the server")
    w.background("npm start", "f143ee")
    w.poll("f143ee", "running", stdout="GamePlanPro server running on http://localhost:2004")
    w.poll("f143ee", "running", stdout="GamePlanPro server running on http://localhost:2004")
    w.poll("f143ee", "failed", 1, stderr="Error: Cannot find module 'stripe'")
    runs = [s for s in Transcript(w.save()).steps() if hasattr(s, "is_error")]
    assert [(s.call.input["command"], s.is_error) for s in runs] == [
        ("npm start", False),
        ("npm start", True),
    ]
    assert runs[1].text.startswith("Exit code 1\nError: Cannot find module")


def _probe_session(
    tmp_path: Path,
    failed: tuple[str, str, int],
    variant: model.Model | None = None,
    then: str = "find .claude/skills -type d -o -type f | head -30",
    every_run_failed: bool = False,
) -> Engine:
    """infinity-claude: `tree` is not installed on the Mac, so the agent lists the folder with `find`."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-probe", str(tmp_path))
    w.prompt("reorganise the skills folder")
    w.bash(*failed[:2], exit_code=failed[2])
    w.bash(then, ".claude/skills\n.claude/skills/a/SKILL.md")
    # the run model's verdict taken as given, so that only the engine's rule decides
    engine = Engine(
        record=True,
        decide_run=(lambda run, f: run.flagged or "error" in run.text) if every_run_failed else None,
    )
    if variant is not None:
        engine._variant_model = variant
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return engine


def test_a_probe_that_could_not_run_is_a_failure_and_another_look_its_candidate_fix(tmp_path: Path) -> None:
    engine = _probe_session(tmp_path, ("tree .claude/skills -L 2", "(eval):1: command not found: tree", 127))
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.features["variant_replaced"] == 1.0
    assert episode.failed.command.text == "tree .claude/skills -L 2"
    assert episode.command_change == (
        "`find .claude/skills -type d -o -type f | head -30` instead of `tree .claude/skills -L 2`"
    )


def test_a_kept_probe_fix_is_stored_saying_the_other_look(tmp_path: Path) -> None:
    engine = _probe_session(
        tmp_path, ("tree .claude/skills -L 2", "(eval):1: command not found: tree", 127), KEEPS_REPLACED
    )
    (episode,) = engine.episodes()
    ctx = learning.Context(session_id="sess-probe", root=str(tmp_path), branch=None, repo="r")
    built = learning.build(episode, ctx)
    assert built is not None and "instead of `tree .claude/skills -L 2`" in built["resolution_summary"]


def test_a_probe_s_answer_is_still_no_failure(tmp_path: Path) -> None:
    # grep finding nothing exits 1 and prints nothing: an answer, no error to fix
    engine = _probe_session(tmp_path, ("grep -rn old_name .claude/skills", "", 1), KEEPS_REPLACED)
    assert not engine.judged_episodes and not engine.streams["main"].open


def test_a_look_that_missed_its_path_is_not_replaced_by_another_look(tmp_path: Path) -> None:
    # oh-my-posh: `sed` on a guessed path, then `ls` of the folder: a folder slip, fixed (if at all) by the
    # same look at the right path, never a lesson that `ls` does what `sed` could not
    failed = ("sed -n 1,40p src/engine.go", "sed: can't read src/engine.go: No such file or directory", 2)
    engine = _probe_session(tmp_path, failed, KEEPS_REPLACED, then="ls src/prompt")
    assert not any(ep.features.get("variant_replaced") for ep in engine.judged_episodes)


def test_a_look_at_a_log_of_errors_is_no_failure_to_fix(tmp_path: Path) -> None:
    # pv-case-review: `tail` of a server's log shows its errors and exits 0: the look worked
    failed = ("tail -20 /tmp/boot.log", "error: could not bind to port 8080\nERROR: startup failed", 0)
    engine = _probe_session(tmp_path, failed, KEEPS_REPLACED, every_run_failed=True)
    assert any(run.command.text.startswith("tail") and judged for run, _, judged in engine.judged_runs)
    assert not engine.judged_episodes and not engine.streams["main"].open
