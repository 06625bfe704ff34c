"""`recall learn / export / forget` as real processes against a real store in RECALL_HOME."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
from pathlib import Path
from uuid import UUID

from recall_agent.learnings import execute
from recall_agent.learnings.store import SCHEMA_VERSION

ERR = """Traceback (most recent call last):
  File "/home/alice/shop/app/db.py", line 12, in connect
    return psycopg.connect(DSN)
psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused
\tIs the server running on that host and accepting TCP/IP connections?"""


def rec(
    cmd: list[str], *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, cwd=cwd, input=stdin, env=dict(os.environ), timeout=60
    )


def test_learn_then_the_same_error_from_another_path_finds_it(recall_cmd: list[str], tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    out = rec(
        recall_cmd,
        "learn",
        "--error",
        ERR,
        "--resolution",
        "start postgres: docker compose up -d db",
        "--file",
        "app/db.py",
        "--type",
        "bug_fix",
        "--ticket",
        "OPS-12",
        cwd=repo,
    )
    assert out.returncode == 0, out.stderr
    lid = UUID(out.stdout.strip())
    other = (
        ERR.replace("/home/alice/shop", "/tmp/ci/42/shop")
        .replace("line 12", "line 19")
        .replace("5432", "6543")
    )
    res = asyncio.run(execute({"error_text": other, "repo": "shop"}))
    assert res.matches[0].learning_id == lid
    assert res.matches[0].similarity == 1.0
    assert res.matches[0].repo == "shop"  # defaulted from the git top-level folder's name
    assert res.matches[0].ticket_id == "OPS-12" and res.matches[0].task_type == "bug_fix"


def test_learn_merges_the_same_fix_and_reads_stdin(recall_cmd: list[str]) -> None:
    first = rec(recall_cmd, "learn", "--repo", "shop", "--error", ERR, "--resolution", "start postgres")
    second = rec(
        recall_cmd, "learn", "--repo", "shop", "--error", "-", "--resolution", "Start Postgres", stdin=ERR
    )
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    assert "merged" in second.stderr
    exported = rec(recall_cmd, "export")
    assert len(exported.stdout.splitlines()) == 1


def test_bad_input_one_line_nonzero_nothing_stored(recall_cmd: list[str], isolated_recall_env: Path) -> None:
    cases = [
        (["--error", ERR, "--resolution", "   "], "must not be empty"),
        (["--error", ERR, "--resolution", "r", "--type", "yolo"], "unknown task type 'yolo'"),
        (["--error", ERR, "--resolution", "r" * 2001], "limit is 2000"),
        (["--error", ERR, "--resolution", "r", "--ticket", "T" * 65], "ticket_id"),
        (["--resolution", "r"], "--error"),
        (["--error", ERR], "--resolution"),
    ]
    for args, needle in cases:
        out = rec(recall_cmd, "learn", "--repo", "shop", *args)
        assert out.returncode != 0, args
        assert needle in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "Traceback" not in out.stderr
    assert not (isolated_recall_env / "learnings.db").exists() or rec(recall_cmd, "export").stdout == ""


def test_forget(recall_cmd: list[str]) -> None:
    lid = rec(
        recall_cmd, "learn", "--repo", "shop", "--error", ERR, "--resolution", "start postgres"
    ).stdout.strip()
    bad = rec(recall_cmd, "forget", "not-a-uuid")
    assert bad.returncode == 1 and "not a learning id" in bad.stderr and len(bad.stderr.splitlines()) == 1
    missing = rec(recall_cmd, "forget", "00000000-0000-0000-0000-000000000000")
    assert missing.returncode == 1 and "no learning with id" in missing.stderr
    ok = rec(recall_cmd, "forget", lid)
    assert ok.returncode == 0 and lid in ok.stdout
    assert rec(recall_cmd, "export").stdout == ""


def test_export_import_round_trip_with_line_errors(recall_cmd: list[str], tmp_path: Path) -> None:
    for i in range(3):  # three repositories (in one, the three would be one learning per cause)
        rec(
            recall_cmd,
            "learn",
            "--repo",
            f"shop{i}",
            "--error",
            f"{ERR}\nKeyError: 'K{i}'",
            "--resolution",
            f"fix {i}",
        )
    dump = tmp_path / "dump.jsonl"
    out = rec(recall_cmd, "export", "--output", str(dump))
    assert out.returncode == 0
    lines = dump.read_text().splitlines()
    assert len(lines) == 3 and {json.loads(x)["repo"] for x in lines} == {"shop0", "shop1", "shop2"}

    # import into a fresh home: good lines land, bad ones are reported with their line numbers
    feed = tmp_path / "feed.jsonl"
    good_new = json.dumps(
        {
            "repo": "api",
            "error_signatures": ["bash: jq: command not found"],
            "resolution_summary": "apt-get install jq",
        }
    )
    feed.write_text(
        "\n".join(
            [
                lines[0],
                "{not json",
                json.dumps({"repo": "api", "resolution_summary": ""}),
                good_new,
                json.dumps({"repo": "api", "resolution_summary": "x", "bogus": 1}),
            ]
        )
        + "\n"
    )
    env = dict(os.environ, RECALL_HOME=str(tmp_path / "home2"))
    imp = subprocess.run(
        [*recall_cmd, "learn", "--from-jsonl", str(feed)], capture_output=True, text=True, env=env
    )
    assert imp.returncode == 1
    assert "imported 2 new, 0 merged, 3 rejected" in imp.stdout
    assert f"{feed}:2: not JSON" in imp.stderr
    assert f"{feed}:3: resolution_summary" in imp.stderr
    assert f"{feed}:5: bogus" in imp.stderr
    again = subprocess.run(
        [*recall_cmd, "learn", "--from-jsonl", str(dump)], capture_output=True, text=True, env=env
    )
    assert again.returncode == 0 and "2 new, 1 merged, 0 rejected" in again.stdout
    exp = subprocess.run([*recall_cmd, "export", "--repo", "api"], capture_output=True, text=True, env=env)
    assert [json.loads(x)["resolution_summary"] for x in exp.stdout.splitlines()] == ["apt-get install jq"]


def test_learn_redacts_secrets_before_storing(recall_cmd: list[str], isolated_recall_env: Path) -> None:
    secret = "AKIAIOSFODNN7EXAMPLE"
    err = f"botocore.exceptions.ClientError: InvalidAccessKeyId for key {secret}"
    out = rec(recall_cmd, "learn", "--repo", "shop", "--error", err, "--resolution", f"rotate {secret}")
    assert out.returncode == 0
    raw = b"".join(p.read_bytes() for p in isolated_recall_env.glob("learnings.db*"))
    assert secret.encode() not in raw


def test_store_problems_are_one_line(recall_cmd: list[str], isolated_recall_env: Path) -> None:
    isolated_recall_env.mkdir(parents=True)
    db = isolated_recall_env / "learnings.db"
    db.write_bytes(b"garbage" * 500)
    for args in (
        ["learn", "--repo", "r", "--error", ERR, "--resolution", "x"],
        ["export"],
        ["forget", str(UUID(int=1))],
    ):
        out = rec(recall_cmd, *args)
        assert out.returncode == 1 and "not a SQLite database" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == b"garbage" * 500

    db.unlink()
    assert rec(recall_cmd, "learn", "--repo", "r", "--error", ERR, "--resolution", "x").returncode == 0
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA user_version = 7")
    out = rec(recall_cmd, "learn", "--repo", "r", "--error", ERR, "--resolution", "y")
    assert out.returncode == 1 and "newer than this recall supports" in out.stderr

    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.chmod(0o444)
    try:
        out = rec(recall_cmd, "learn", "--repo", "r", "--error", ERR, "--resolution", "z")
        assert out.returncode == 1 and "read-only" in out.stderr
        assert len(rec(recall_cmd, "export").stdout.splitlines()) == 1  # reading still works
    finally:
        db.chmod(0o644)


def test_help(recall_cmd: list[str]) -> None:
    for sub in ("learn", "export", "forget"):
        out = rec(recall_cmd, sub, "--help")
        assert out.returncode == 0 and f"recall {sub}" in out.stdout


def test_recall_shows_the_learning_first_for_the_same_error_elsewhere(
    recall_cmd: list[str], tmp_path: Path
) -> None:
    """The issue's 'done means': learn in one checkout, ask from another path, the learning comes first."""
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    rec(
        recall_cmd,
        "learn",
        "--error",
        ERR,
        "--resolution",
        "start postgres: docker compose up -d db",
        cwd=repo,
    )
    rec(
        recall_cmd,
        "learn",
        "--error",
        ERR.replace("OperationalError", "InterfaceError"),
        "--resolution",
        "upgrade psycopg",
        cwd=repo,
    )
    other = ERR.replace("/home/alice/shop", "/srv/build/7/shop").replace("line 12", "line 30")
    out = rec(recall_cmd, "--scope", "learnings", other, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "Match 1 (100% similarity" in out.stdout
    first = out.stdout.split("Match 1", 1)[1].split("Match 2", 1)[0]
    assert "start postgres: docker compose up -d db" in first
    assert "upgrade psycopg" not in out.stdout  # a different exception is not offered at 0.85


def test_recall_reports_a_broken_store_as_unavailable(
    recall_cmd: list[str], isolated_recall_env: Path
) -> None:
    isolated_recall_env.mkdir(parents=True)
    (isolated_recall_env / "learnings.db").write_bytes(b"garbage" * 100)
    out = rec(recall_cmd, "--scope", "learnings", ERR)
    assert out.returncode == 0
    assert "unavailable" in out.stdout and "not a SQLite database" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
