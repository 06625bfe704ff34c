"""Shared test setup: every test gets its own RECALL_HOME and no backend URLs from the developer's shell."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

# Every `python -m recall_agent` a test starts runs this checkout's code, whatever `pip install -e` points at
# (a second worktree, a stale install): the checkout goes first on the subprocesses' import path.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)


@pytest.fixture(autouse=True)
def isolated_recall_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "recall-home"
    monkeypatch.setenv("RECALL_HOME", str(home))
    # the machine's own Codex CLI history (~/.codex) never reaches a test: `import-sessions` and `install`
    # look for Codex rollouts there by default
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    for var in (
        "AGENT_LEARNING_RETRIEVAL_URL",
        "KNOWLEDGE_FEDERATION_URL",
        "RECALL_DATABASE_URL",
        "QDRANT_URL",
        "RECALL_TOKEN",
        "RECALL_EMBEDDINGS_URL",
        "CLAUDE_SESSION_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def recall_cmd() -> list[str]:
    """The command that runs recall as a real process (the installed entry point's module)."""
    return [sys.executable, "-m", "recall_agent"]


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    return dict(os.environ)


PG_URL = os.environ.get("RECALL_TEST_DATABASE_URL", "")


def with_db(url: str, dbname: str, netloc: str | None = None) -> str:
    """`url` naming another database (and, given `netloc`, another host:port)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname, netloc=netloc or parts.netloc))


@pytest.fixture
def pg_url():
    """A fresh, empty PostgreSQL database on the test server, dropped afterwards."""
    if not PG_URL:
        pytest.skip("RECALL_TEST_DATABASE_URL is unset (source .ci/services)")
    import psycopg

    name = "recall_t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield with_db(PG_URL, name)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def git(repo: Path, *args: str) -> None:
    """Run git in `repo` with a throwaway identity (tests commit without a user's config)."""
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )
