"""Argument lines -> payloads, exactly as the seed builds them (table-driven), and bad command lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from recall_agent.client import query
from recall_agent.client.query import UsageError
from recall_agent.config import DEFAULT_FEDERATION_PATH as FEDERATION_PATH
from recall_agent.config import DEFAULT_RETRIEVAL_PATH as LEARNINGS_PATH

pytest_plugins = ["client_fixtures"]

REPO = "omnibase_infra"
IMPORT_ERR = "ImportError: cannot import name 'Foo'"

# (argument line as argv, last error detected from the session, learnings payload, federation payload)
# None = that backend is not queried (out of scope) / "skip" = in scope but nothing to ask.
TABLE = [
    # --- every example line of the seed's Usage section
    (
        [],
        None,
        {"match_type": "auto", "repo": REPO, "max_results": 5},
        "skip",
    ),
    (
        ["ImportError:", "cannot", "import", "name", "'Foo'"],
        None,
        {"match_type": "error_signature", "error_text": IMPORT_ERR, "repo": REPO, "max_results": 5},
        {"query": IMPORT_ERR},
    ),
    (
        ["--repo", "omnibase_infra", "--type", "migration"],
        None,
        {"match_type": "task_context", "repo": "omnibase_infra", "task_type": "migration", "max_results": 5},
        "skip",
    ),
    (
        ["--scope", "learnings", "KeyError: 'x'"],
        None,
        {"match_type": "error_signature", "error_text": "KeyError: 'x'", "repo": REPO, "max_results": 5},
        None,
    ),
    (
        ["--scope", "architecture", "HandlerContextInjection"],
        None,
        None,
        {"query": "HandlerContextInjection", "force_backends": ["repowise"]},
    ),
    (
        ["--scope", "antipatterns", "hardcoded kafka topic"],
        None,
        None,
        {"query": "hardcoded kafka topic", "force_backends": ["qdrant"]},
    ),
    (
        ["--scope", "all", "why", "is", "ci", "red"],
        None,
        {"match_type": "error_signature", "error_text": "why is ci red", "repo": REPO, "max_results": 5},
        {"query": "why is ci red"},
    ),
    # --- context, filters and our additions
    (
        [],
        "TypeError: 'NoneType' object is not subscriptable",
        {
            "match_type": "error_signature",
            "error_text": "TypeError: 'NoneType' object is not subscriptable",
            "repo": REPO,
            "max_results": 5,
        },
        {"query": "TypeError: 'NoneType' object is not subscriptable"},
    ),
    (  # explicit text wins over the detected error
        ["explicit", "text"],
        "TypeError: detected",
        {"match_type": "error_signature", "error_text": "explicit text", "repo": REPO, "max_results": 5},
        {"query": "explicit text"},
    ),
    (
        ["--type", "ci_fix"],
        None,
        {"match_type": "task_context", "repo": REPO, "task_type": "ci_fix", "max_results": 5},
        "skip",
    ),
    (
        ["--repo", "other"],
        None,
        {"match_type": "task_context", "repo": "other", "task_type": None, "max_results": 5},
        "skip",
    ),
    (  # --repo is the learnings repo filter in the error branch too (its default is the current repo)
        ["--repo", "other", "--scope=learnings", "boom"],
        None,
        {"match_type": "error_signature", "error_text": "boom", "repo": "other", "max_results": 5},
        None,
    ),
    (
        ["--max-results", "12", "--scope", "learnings"],
        None,
        {"match_type": "auto", "repo": REPO, "max_results": 12},
        None,
    ),
    (  # -- forces a query that starts with a subcommand name or a dash
        ["--", "learn", "--scope", "x"],
        None,
        {"match_type": "error_signature", "error_text": "learn --scope x", "repo": REPO, "max_results": 5},
        {"query": "learn --scope x"},
    ),
    (  # a leading dash word that is not shaped like an option starts the query (go test, bash output)
        ["--- FAIL: TestParse (0.00s)"],
        None,
        {
            "match_type": "error_signature",
            "error_text": "--- FAIL: TestParse (0.00s)",
            "repo": REPO,
            "max_results": 5,
        },
        {"query": "--- FAIL: TestParse (0.00s)"},
    ),
    (
        ["--scope", "learnings", "-bash:", "foo:", "command", "not", "found"],
        None,
        {
            "match_type": "error_signature",
            "error_text": "-bash: foo: command not found",
            "repo": REPO,
            "max_results": 5,
        },
        None,
    ),
    (  # options end at the first query word: later flag-like words are query text
        ["npm", "ERR!", "--save-dev", "failed"],
        None,
        {
            "match_type": "error_signature",
            "error_text": "npm ERR! --save-dev failed",
            "repo": REPO,
            "max_results": 5,
        },
        {"query": "npm ERR! --save-dev failed"},
    ),
]


def _payloads(argv: list[str], last_error: str | None) -> dict:
    args = query.parse_argv(argv)
    return query.build_payloads(args, REPO, args.query or last_error or "")


@pytest.mark.parametrize(("argv", "last_error", "learnings", "federation"), TABLE)
def test_argument_line_to_payloads(argv, last_error, learnings, federation) -> None:
    payloads = _payloads(argv, last_error)
    if learnings is None:
        assert "learnings" not in payloads
    else:
        assert payloads["learnings"] == learnings
        assert list(payloads["learnings"]) == list(learnings)  # the seed's key order on the wire
    if federation is None:
        assert "federation" not in payloads
    elif federation == "skip":
        assert payloads["federation"] is None
    else:
        assert payloads["federation"] == federation


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scope", "everything", "x"], "unknown scope 'everything'"),
        (["--bogus", "x"], "unknown option '--bogus'"),
        (["-x"], "unknown option '-x'"),
        (["--format", "yaml"], "unknown format 'yaml'"),
        (["--type", "migrations"], "unknown task type 'migrations'"),
        (["--max-results", "0"], "--max-results must be a whole number from 1 to 20"),
        (["--max-results", "21"], "--max-results must be a whole number from 1 to 20"),
        (["--max-results", "five"], "--max-results must be a whole number from 1 to 20"),
        (["--scope"], "option --scope needs a value"),
        (["--repo", "r" * 129], "--repo must be 1-128 characters"),
    ],
)
def test_bad_command_lines(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace("'", "'")):
        query.parse_argv(argv)


def test_long_error_text_fits_the_wire_and_keeps_the_failure_at_its_end() -> None:
    text = "é" * 3999 + "😀" + "tail" * 1000
    sent = _payloads([text], None)["learnings"]["error_text"]
    assert len(sent) <= 4000 and sent.endswith("tail")  # no error line at all: the end is kept, not the head
    run = "\n".join(f"step {i}: ok é😀" for i in range(400)) + "\nValueError: bad config key 'x'\n"
    sent = _payloads([run], None)["learnings"]["error_text"]
    assert len(sent) <= 4000 and "ValueError: bad config key 'x'" in sent
    sent.encode("utf-8")  # whole code points, encodable


def test_argv_surrogates_become_replacement_characters() -> None:
    raw = b"Error: \xff\xfe bad bytes \xc3".decode("utf-8", "surrogateescape")
    payloads = _payloads([raw], None)
    assert payloads["learnings"]["error_text"] == "Error: \ufffd\ufffd bad bytes \ufffd"
    json.dumps(payloads).encode("utf-8")


def test_control_characters_and_ansi_colours_dropped() -> None:
    assert query.clean_text("\x1b[31mError\x1b[0m:\x00 boom\tx\n") == "Error: boom\tx\n"


def test_argument_line_keeps_query_verbatim() -> None:
    line = '--scope learnings --max-results 3 Traceback (most recent call last):\n  File "a.py", line 1\n$(rm -rf /) `x`\n'
    args = query.parse_argument_line(line, query.Args())
    assert (args.scope, args.max_results) == ("learnings", 3)
    assert args.query == 'Traceback (most recent call last):\n  File "a.py", line 1\n$(rm -rf /) `x`'


def test_argument_line_double_dash_and_bad_option() -> None:
    assert query.parse_argument_line("-- --scope is text", query.Args()).query == "--scope is text"
    go = "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1"
    assert query.parse_argument_line(go, query.Args()).query == go
    with pytest.raises(UsageError, match="unknown option '--nope'"):
        query.parse_argument_line("--nope x", query.Args())
    with pytest.raises(UsageError, match="unknown scope"):
        query.parse_argument_line("--scope 'nope' x", query.Args())


# --------------------------------------------------------------------------- the real process, real HTTP


SEED_LINES = [row for row in TABLE[:7]]


@pytest.mark.parametrize(("argv", "last_error", "learnings", "federation"), SEED_LINES)
def test_seed_lines_post_the_seed_payloads(
    argv, last_error, learnings, federation, http_backend, git_repo: Path, client_env, recall_cmd
) -> None:
    client_env["AGENT_LEARNING_RETRIEVAL_URL"] = http_backend.url("empty", "learnings")
    client_env["KNOWLEDGE_FEDERATION_URL"] = http_backend.url("empty", "federation")
    proc = subprocess.run([*recall_cmd, *argv], cwd=git_repo, env=client_env, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    posted = dict(http_backend.requests)
    assert posted.get("/empty" + LEARNINGS_PATH) == learnings
    expected_federation = None if federation in (None, "skip") else federation
    assert posted.get("/empty" + FEDERATION_PATH) == expected_federation


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--scope", "everything", "x"], "unknown scope 'everything'"),
        (["--no-such-flag"], "unknown option '--no-such-flag'"),
        (["--max-results", "99", "x"], "--max-results must be a whole number from 1 to 20"),
    ],
)
def test_bad_flags_one_line_exit_2(argv, needle, client_env, recall_cmd, tmp_path: Path) -> None:
    proc = subprocess.run([*recall_cmd, *argv], cwd=tmp_path, env=client_env, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr


def test_help_is_useful(client_env, recall_cmd, tmp_path: Path) -> None:
    proc = subprocess.run(
        [*recall_cmd, "--help"], cwd=tmp_path, env=client_env, capture_output=True, text=True
    )
    assert proc.returncode == 0
    for needle in (
        "--scope",
        "learnings | architecture | antipatterns | all",
        "--stdin",
        "--max-results",
        "--",
    ):
        assert needle in proc.stdout


def test_double_dash_forces_a_query_that_starts_with_a_subcommand(
    http_backend, client_env, recall_cmd, tmp_path: Path
) -> None:
    client_env["AGENT_LEARNING_RETRIEVAL_URL"] = http_backend.url("empty", "learnings")
    proc = subprocess.run(
        [*recall_cmd, "--", "learn", "--help"],
        cwd=tmp_path,
        env=dict(client_env, KNOWLEDGE_FEDERATION_URL=http_backend.url("empty", "federation")),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Recall Results — scope: all")
    posted = dict(http_backend.requests)
    assert posted["/empty" + LEARNINGS_PATH]["error_text"] == "learn --help"


def test_stdin_and_words_together_is_a_usage_error(client_env, recall_cmd, tmp_path: Path) -> None:
    proc = subprocess.run(
        [*recall_cmd, "--stdin", "words"],
        cwd=tmp_path,
        env=client_env,
        input="more",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "recall: give the query as words or on stdin (--stdin), not both"


def test_bad_option_inside_the_stdin_line(client_env, recall_cmd, tmp_path: Path) -> None:
    proc = subprocess.run(
        [*recall_cmd, "--stdin"],
        cwd=tmp_path,
        env=client_env,
        input="--scope everywhere KeyError",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("recall: unknown scope 'everywhere'") and len(proc.stderr.splitlines()) == 1
