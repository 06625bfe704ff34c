"""What the variant model sees of a failed command and a passing run of its program called another way
(issue 33, eighth round): each built from a real session's shape, replayed through the engine."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture import commands
from recall_agent.capture.engine import Engine, dropped_named

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from capture_fixtures import replay_bash  # noqa: E402


def _variants(tmp_path: Path, calls: list[tuple[str, str, int]]) -> list:
    engine: Engine = replay_bash(tmp_path, "sess-variant", "archive the project", calls)
    return [ep for ep in engine.judged_episodes if ep.variant]


def test_the_error_named_the_word_the_fix_left_out(tmp_path: Path) -> None:
    # claude-code-archiver: the CLI has no `archive` subcommand; the project path is its first argument
    (episode,) = _variants(
        tmp_path,
        [
            ("uv run claude-code-archiver archive ~/Source/SelfServe --output out.zip",
             "Exit code 2\nUsage: claude-code-archiver [OPTIONS] [PROJECT_PATH]\nTry 'claude-code-archiver --help' for help.\n"
             "Error: Invalid value for '[PROJECT_PATH]': Path 'archive' does not exist.", 2),
            ("uv run claude-code-archiver ~/Source/SelfServe --output out.zip", "Archive written: out.zip", 0),
        ],
    )  # fmt: skip
    assert episode.features["variant_dropped_named"] == 1.0


def test_a_value_named_by_its_part_before_the_equals_sign() -> None:
    # neuvector-mcp: `kubectl set image` names the container; the deployment's container is `server`
    failed = commands.parse("kubectl set image deploy/app -n prod app=registry.example/app:1.1.0")
    passed = commands.parse("kubectl set image deploy/app -n prod server=registry.example/app:1.1.0")
    assert dropped_named('error: unable to find container named "app"', failed, passed) == 1.0


def test_words_the_error_does_not_name_are_not_counted(tmp_path: Path) -> None:
    # a port changed with no word of the error about it (the server moved, or another probe altogether)
    (episode,) = _variants(
        tmp_path,
        [
            ("curl -sf http://localhost:3000/health", "Exit code 7\ncurl: (7) Failed to connect to localhost port 3000", 7),
            ("curl -sf http://localhost:2004/health", "ok", 0),
        ],
    )  # fmt: skip
    assert episode.features["variant_dropped_named"] == 0.0
