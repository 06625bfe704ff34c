"""The variant candidates the engine offers the variant model (issue 33, ninth round): a run another way that
fails otherwise, after an error that said the call itself was wrong, and another tool of the same MCP server.
Each built from a real tuning session's shape, replayed through the engine; the model's verdict is the fit's,
so the tests check what is offered and with which features, not whether it is kept."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from capture_fixtures import replay_bash  # noqa: E402
from transcript_writer import TranscriptWriter  # noqa: E402

PYRIGHT = (
    "make: *** [type] Error 1\nuv run pyright src/\n"
    '/home/u/proj/src/archiver.py:142:56 - error: Type of "k" is unknown (reportUnknownVariableType)\n'
    "1 error, 0 warnings, 0 informations"
)


def _judged(tmp_path: Path, calls: list[tuple[str, str, int]]) -> Engine:
    return replay_bash(tmp_path, "sess-variant-offers", "run the type checker", calls)


def test_a_failing_run_past_the_wrong_call_is_offered(tmp_path: Path) -> None:
    # claude-code-archiver: the Makefile has no `typecheck` target; `make type` ran pyright, which failed on
    # type errors: the missing target is fixed, though the run failed
    engine = _judged(
        tmp_path,
        [
            ("make typecheck", "make: *** No rule to make target `typecheck'.  Stop.", 2),
            ("make type", PYRIGHT, 2),
        ],
    )
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.passed.command.text == "make type"
    assert episode.features["variant_failing"] == 1.0 and episode.by_failing_run
    assert episode.features["error_usage"] == 1.0


def test_a_failing_run_that_still_shows_the_error_is_not_offered(tmp_path: Path) -> None:
    engine = _judged(
        tmp_path,
        [
            ("make typecheck", "make: *** No rule to make target `typecheck'.  Stop.", 2),
            ("make typecheck -k", "make: *** No rule to make target `typecheck'.  Stop.", 2),
        ],
    )
    assert not engine.judged_episodes


def test_a_failing_run_after_a_failed_check_is_not_offered(tmp_path: Path) -> None:
    # oh-my-posh: the linter failed on one page; run on another page alone it failed on that page. It did not
    # check the first page at all, so its failing otherwise says nothing of that error
    engine = _judged(
        tmp_path,
        [
            ("npx markdownlint-cli2 'website/docs/**/*.mdx'",
             "website/docs/segments/language.mdx:92:91 error MD060/table-column-style Table column style", 1),
            ("npx markdownlint-cli2 website/docs/segments/fortran.mdx",
             "website/docs/segments/fortran.mdx:34:121 error MD013/line-length Line length", 1),
        ],
    )  # fmt: skip
    assert not engine.judged_episodes


def test_a_line_the_bash_tool_could_not_evaluate_is_the_shell_s_error(tmp_path: Path) -> None:
    # technocore-chat: a PR body with apostrophes in a quoted heredoc inside $(...) broke the Bash tool's
    # eval; the same `gh pr create` with --body-file got past it (and exited 1 on a warning)
    body = "gh pr create --title 'infra: pin 0.3.0' --body \"$(cat <<'BODY'\nIt's pinned\nBODY\n)\""
    engine = _judged(
        tmp_path,
        [
            (body, "Exit code 1\n/bin/bash: eval: line 37: unexpected EOF while looking for matching `''", 1),
            ("gh pr create --title 'infra: pin 0.3.0' --body-file /tmp/pr-body.md",
             "Warning: 4 uncommitted changes\nhttps://github.com/org/repo/pull/1280", 1),
        ],
    )  # fmt: skip
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.features["error_shell"] == 1.0
    assert episode.features["variant_failing"] == 1.0


def _mcp(tmp_path: Path, later: str) -> Engine:
    """gameplanpro: the Supabase MCP server refused a migration (the constraint already existed); the agent
    then called `later` with a query."""
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-mcp-variant", str(tmp_path))
    w.prompt("add a unique constraint on the player's email")
    w.tool_error(
        "mcp__supabase__apply_migration",
        {
            "name": "add_unique_constraint_player_email",
            "query": "ALTER TABLE players ADD CONSTRAINT u UNIQUE",
        },
        'Failed to apply database migration: ERROR:  42P07: relation "players_player_email_unique" already exists',
    )
    w.tool(
        later,
        {"query": "select conname from pg_constraint"},
        [{"type": "text", "text": '[{"conname": "u"}]'}],
    )
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return engine


def test_another_tool_of_the_same_mcp_server_is_offered(tmp_path: Path) -> None:
    engine = _mcp(tmp_path, "mcp__supabase__execute_sql")
    (episode,) = engine.judged_episodes
    assert episode.variant and episode.passed.tool == "mcp__supabase__execute_sql"
    assert episode.failed.tool == "mcp__supabase__apply_migration" and episode.features["other_tool"] == 1.0


def test_a_tool_of_another_mcp_server_is_not_offered(tmp_path: Path) -> None:
    engine = _mcp(tmp_path, "mcp__postgres__query")
    assert not engine.judged_episodes
