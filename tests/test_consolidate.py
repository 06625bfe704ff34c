"""One learning per cause per repository (issue 34): real `recall import-sessions` processes over transcripts in
the Claude Code client's layout, real SQLite files (an old store migrated), and both stores at write time."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import uuid4

import pytest

from recall_agent.learnings import store as store_mod
from recall_agent.learnings.store import open_store
from recall_agent.models import Learning

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "bench"))
from test_trust import store  # noqa: E402, F401  (the fixture: the same test on SQLite and PostgreSQL)
from transcript_writer import TranscriptWriter  # noqa: E402

CD_ERROR = "Exit code 1\n(eval):cd:1: no such file or directory: testbed"
YAML = "Traceback (most recent call last):\n  File \"app/config.py\", line {n}, in load\nModuleNotFoundError: No module named 'yaml'"


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "recall_agent", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_importing_many_sessions_with_the_same_slip_stores_one_row_with_its_count(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    project = tmp_path / "work" / "shop-api"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    config = tmp_path / "claude-config"
    folder = config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    for i in range(6):  # six sessions, each `cd testbed` while the shell is already inside it
        w = TranscriptWriter(folder / f"s{i}.jsonl", f"{i:04d}-sess", str(project),
                             start=datetime(2026, 11, 20 + i, 9, 0, tzinfo=UTC))  # fmt: skip
        w.prompt("reproduce the bug")
        w.bash("cd testbed && pip install -e .", "Successfully installed shop")
        w.bash("cd testbed && python repro.py", CD_ERROR, exit_code=1)
        w.bash("python repro.py", "reproduced")
        w.say(f"The shell was already in testbed (take {i}).")
        w.save()
    env = {k: v for k, v in os.environ.items() if k not in ("RECALL_SERVER_URL", "CLAUDE_CONFIG_DIR")}
    env |= {"RECALL_HOME": str(isolated_recall_env), "CLAUDE_CONFIG_DIR": str(config)}
    out = _run(["import-sessions"], env, project)
    assert out.returncode == 0, out.stderr
    exported = [json.loads(x) for x in _run(["export"], env, project).stdout.splitlines()]
    assert len(exported) == 1, [e["resolution_summary"] for e in exported]
    [row] = exported
    assert (row["seen_count"], row["session_count"]) == (6, 6)
    assert row["fix"]["folder"]["cause"] == "shell_inside"
    assert row["first_seen_at"] <= row["last_seen_at"]
    # importing again adds nothing: the same occurrences are not counted twice
    assert _run(["import-sessions", "--all"], env, project).returncode == 0
    [again] = [json.loads(x) for x in _run(["export"], env, project).stdout.splitlines()]
    assert (again["seen_count"], again["session_count"]) == (6, 6)
    listed = _run(["review"], env, project)
    assert "met 6x/6s" in listed.stdout


def test_the_same_folder_slip_met_by_other_commands_in_two_sessions_is_one_learning(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    """One session meets the shell already inside `testbed` with `cd testbed`, the other with `ls testbed/x`:
    two error texts, one slip of the repository, one row met in both sessions."""
    project = tmp_path / "work" / "shop-api"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    config = tmp_path / "claude-config"
    folder = config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    slips = [
        ("cd testbed && python repro.py", CD_ERROR, "python repro.py"),
        (
            "ls testbed/setup.py",
            "Exit code 1\nls: testbed/setup.py: No such file or directory",
            "ls setup.py",
        ),
    ]
    for i, (failing, error, passing) in enumerate(slips):
        w = TranscriptWriter(folder / f"s{i}.jsonl", f"{i:04d}-slip", str(project),
                             start=datetime(2026, 11, 20 + i, 9, 0, tzinfo=UTC))  # fmt: skip
        w.prompt("reproduce the bug")
        w.bash("cd testbed && pip install -e .", "Successfully installed shop")
        w.bash(failing, error, exit_code=1)
        w.bash(passing, "setup.py" if passing.startswith("ls") else "reproduced")
        w.save()
    env = {k: v for k, v in os.environ.items() if k not in ("RECALL_SERVER_URL", "CLAUDE_CONFIG_DIR")}
    env |= {"RECALL_HOME": str(isolated_recall_env), "CLAUDE_CONFIG_DIR": str(config)}
    assert _run(["import-sessions"], env, project).returncode == 0
    exported = [json.loads(x) for x in _run(["export"], env, project).stdout.splitlines()]
    assert len(exported) == 1, [(e["error_signatures"], e["fix"]) for e in exported]
    [row] = exported
    assert (row["seen_count"], row["session_count"]) == (2, 2)
    assert row["fix"]["folder"] == {"path": "testbed", "cause": "shell_inside"}
    assert len(row["error_signatures"]) == 2  # both texts find it


def test_both_stores_fold_a_folder_slip_by_its_cause_and_folder_not_by_its_text(store) -> None:  # noqa: F811
    def slip(error: str, cause: str, path: str, session: str) -> Learning:
        return Learning(repo="shop", session_id=session, error_signatures=[error],
                        resolution_summary=f"Environment: the folder ({cause})",
                        fix={"source": "transcript", "kind": "environment",
                             "folder": {"path": path, "cause": cause}})  # fmt: skip

    first = store.add(slip("(eval):cd:1: no such file or directory: testbed", "shell_inside", "testbed", "a"))
    same = store.add(
        slip("ls: testbed/setup.py: No such file or directory", "shell_inside", "w/testbed", "b")
    )
    other = store.add(slip("find: testbed: No such file or directory", "created", "testbed", "c"))
    assert same == (first[0], True)  # the same slip, met by another command
    assert other[0] != first[0]  # the folder did not exist yet: another cause
    assert store.get(first[0]).session_count == 2


def _old_store(home: Path, rows: list[dict]) -> Path:
    """A store as recall wrote it before issue 34 (schema 3): copies of one cause kept apart."""
    db = home / "learnings.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    for version in (1, 2, 3):
        store_mod.MIGRATIONS[version](conn)
    conn.execute("PRAGMA user_version = 3")
    from recall_agent.learnings.records import resolution_key, signature_rows

    for r in rows:
        at = r["at"].isoformat()
        conn.execute(
            "INSERT INTO learnings (id, session_id, repo, resolution_summary, resolution_key, created_at, updated_at,"
            " fix, helped_count) VALUES (?,?,?,?,?,?,?,?,?)",
            (r["id"], r["session"], r["repo"], r["fix"], resolution_key(r["fix"]), at, at,
             json.dumps(r["evidence"]) if r.get("evidence") else None, r.get("helped", 0)),
        )  # fmt: skip
        for i, s in enumerate(signature_rows(r["errors"])):
            conn.execute(
                "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint) VALUES (?,?,?,?,?)",
                (r["id"], i, s.text, s.normalized, s.fingerprint),
            )
    conn.execute("COMMIT")
    conn.close()
    return db


def test_the_migration_consolidates_without_losing_a_signature_or_a_fix(isolated_recall_env: Path) -> None:
    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    evidence = {
        "source": "transcript",
        "command": {"before": "pip install yml", "after": "pip install pyyaml"},
        "verified_by": "python -c 'import yaml'",  # captured with the run that passed: trusted
    }
    rows = [
        {"id": str(uuid4()), "session": "a", "repo": "shop", "fix": "pip install pyyaml", "at": t0,
         "errors": [YAML.format(n=3)], "evidence": evidence},
        {"id": str(uuid4()), "session": "b", "repo": "shop", "fix": "add pyyaml to requirements.txt",
         "at": t0 + timedelta(days=1), "errors": [YAML.format(n=9), "ImportError: cannot import name 'CLoader'"],
         "helped": 2},
        {"id": str(uuid4()), "session": "c", "repo": "shop", "fix": "PIP INSTALL pyyaml", "at": t0 + timedelta(days=2),
         "errors": [YAML.format(n=12)]},
        {"id": str(uuid4()), "session": "d", "repo": "admin", "fix": "pip install pyyaml", "at": t0,
         "errors": [YAML.format(n=3)]},
        # an agent's unconfirmed note of the same cause: another trust tier, never merged into a trusted row
        {"id": str(uuid4()), "session": "e", "repo": "shop", "fix": "pip install pyyaml", "at": t0 + timedelta(days=3),
         "errors": [YAML.format(n=15)], "evidence": {"source": "agent"}},
    ]  # fmt: skip
    _old_store(isolated_recall_env, rows)
    with open_store(isolated_recall_env) as st:  # opening migrates: schema 4, then consolidate_causes
        assert st.count() == 3
        shop = st.learning(rows[0]["id"])
        assert shop is not None and st.learning(rows[1]["id"]) is None
        # every distinct error text kept
        assert sorted(shop.error_signatures) == sorted(
            [
                YAML.format(n=3),
                YAML.format(n=9),
                "ImportError: cannot import name 'CLoader'",
                YAML.format(n=12),
            ]
        )
        # every fix kept, counted, the most frequent shown, with its evidence
        assert [(f["resolution_summary"], f["count"]) for f in shop.fixes] == [
            ("pip install pyyaml", 2),
            ("add pyyaml to requirements.txt", 1),
        ]
        assert shop.resolution_summary == "pip install pyyaml" and shop.fix == evidence
        assert (shop.seen_count, shop.session_count, shop.helped_count) == (3, 3, 2)
        assert (shop.first_seen_at, shop.last_seen_at) == (t0, t0 + timedelta(days=2))
        assert [e["action"] for e in st.history(shop.id)] == ["merge", "merge"]
        assert st.learning(rows[3]["id"]).seen_count == 1  # another repository: its own learning
        assert st.learning(rows[4]["id"]).seen_count == 1  # another trust tier: its own learning
    with sqlite3.connect(isolated_recall_env / "learnings.db") as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == store_mod.SCHEMA_VERSION
    with open_store(isolated_recall_env) as st:  # idempotent: opening again changes nothing
        assert st.count() == 3 and len(st.history(shop.id)) == 2


def test_the_migration_waits_only_while_a_hook_handles_an_event(
    isolated_recall_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI, the server and the importer import hook code too: only a running hook's handler (its deadline
    is for the agent's error) leaves the migrations to the next `recall` command."""
    from recall_agent.hooks import runtime

    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    _old_store(isolated_recall_env, [
        {"id": str(uuid4()), "session": s, "repo": "shop", "fix": "pip install pyyaml", "at": t0,
         "errors": [YAML.format(n=n)]} for s, n in (("a", 3), ("b", 9))
    ])  # fmt: skip
    monkeypatch.setattr(runtime, "_handling", True)
    with open_store(isolated_recall_env) as st:
        assert st.count() == 2
    monkeypatch.setattr(runtime, "_handling", False)
    with open_store(isolated_recall_env) as st:  # imported, no hook running: migrated
        assert st.count() == 1


def test_both_stores_keep_one_row_per_cause_with_counts_sessions_and_ranked_fixes(store) -> None:  # noqa: F811
    t0 = datetime(2026, 6, 1, tzinfo=UTC)
    fixes = [
        "pip install pyyaml",
        "add pyyaml to requirements.txt",
        "pip install pyyaml",
        "pip install pyyaml",
    ]
    ids = set()
    for i, fix in enumerate(fixes):
        learning = Learning(repo="shop", session_id=f"s{i % 3}", error_signatures=[YAML.format(n=3 + i)],
                            resolution_summary=fix, created_at=t0 + timedelta(hours=i))  # fmt: skip
        ids.add(store.add(learning)[0])
    other = store.add(
        Learning(repo="shop", error_signatures=["KeyError: 'currency'"], resolution_summary="x")
    )
    assert len(ids) == 1 and other[1] is False and store.count() == 2
    [lid] = ids
    got = store.get(lid)
    # s0 met twice: the fourth write (s0, a known fix, a new text) counts; sessions are distinct
    assert (got.seen_count, got.session_count) == (4, 3)
    assert [(f.resolution_summary, f.count) for f in got.fixes] == [
        ("pip install pyyaml", 3),
        ("add pyyaml to requirements.txt", 1),
    ]
    assert len(got.error_signatures) == 4
    assert got.last_seen_at == t0 + timedelta(hours=3)
    exported = got.model_dump(mode="json")
    assert Learning.model_validate(exported).fixes[0].count == 3  # export -> import keeps the fixes


# --------------------------------------------------------------------------- recurring classes (a rule on other code)

LINT = """task: [lint] golangci-lint run ./...
{where}: {message}
{source}
1 issues:
* {rule}: 1
task: Failed to run task "lint": exit status 1"""
ERRCHECK_STORE = LINT.format(where="internal/store/store.go:42:15", rule="errcheck", source="\tdefer rows.Close()",
                             message="Error return value of `rows.Close` is not checked (errcheck)")  # fmt: skip
ERRCHECK_SERVER = LINT.format(where="cmd/server/main.go:118:12", rule="errcheck", source="\tsrv.Shutdown(ctx)",
                              message="Error return value of `srv.Shutdown` is not checked (errcheck)")  # fmt: skip
INEFFASSIGN = LINT.format(where="cmd/server/main.go:77:2", rule="ineffassign", source="\terr = cfg.Load()",
                          message="ineffectual assignment to err (ineffassign)")  # fmt: skip
ERRCHECK_FIX = (
    "errcheck: wrap deferred closes in a func that logs the error (the project's closeQuietly helper)"
)


def _lint_session(tmp_path: Path, home: Path) -> tuple[dict[str, str], Path]:
    env = {k: v for k, v in os.environ.items() if k != "RECALL_SERVER_URL"} | {"RECALL_HOME": str(home)}
    repo = tmp_path / "gocli"
    (repo / ".git").mkdir(parents=True)
    out = _run(
        ["learn", "--repo", "gocli", "--error", ERRCHECK_STORE, "--resolution", ERRCHECK_FIX], env, repo
    )
    assert out.returncode == 0, out.stderr
    return env, repo


def _shown(env: dict[str, str], repo: Path, error: str) -> list[str]:
    out = _run(["--scope", "learnings", "--format", "json", error], env, repo)
    assert out.returncode == 0, out.stderr
    return [m["resolution_summary"] for m in json.loads(out.stdout)["learnings"]["response"]["matches"]]


def test_another_rule_under_the_same_task_runner_does_not_get_the_fix(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    env, repo = _lint_session(tmp_path, isolated_recall_env)
    assert _shown(env, repo, ERRCHECK_STORE) == [ERRCHECK_FIX]  # the same failure again: found
    assert _shown(env, repo, INEFFASSIGN) == []  # ineffassign under the same `task lint`: not this cause


def test_the_same_rule_on_another_function_gets_the_earlier_fix(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    env, repo = _lint_session(tmp_path, isolated_recall_env)
    assert _shown(env, repo, ERRCHECK_SERVER) == [ERRCHECK_FIX]


RUFF = "$ ruff check .\n{line}\nFound 1 error.\n[*] 1 fixable with the `--fix` option."
F401_FIX = "ruff F401: drop the unused import; re-exports in __init__.py go in __all__"


def test_the_same_ruff_rule_on_another_import_gets_the_fix_and_another_rule_does_not(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RECALL_SERVER_URL"} | {
        "RECALL_HOME": str(isolated_recall_env)
    }
    repo = tmp_path / "pyapp"
    (repo / ".git").mkdir(parents=True)
    first = RUFF.format(line="app/models.py:3:8: F401 [*] `os` imported but unused")
    out = _run(["learn", "--repo", "pyapp", "--error", first, "--resolution", F401_FIX], env, repo)
    assert out.returncode == 0, out.stderr
    again = RUFF.format(line="app/views/home.py:12:20: F401 [*] `typing.Any` imported but unused")
    assert _shown(env, repo, again) == [F401_FIX]
    other = RUFF.format(line="app/models.py:41:89: E501 Line too long (97 > 88)")
    assert _shown(env, repo, other) == []


def test_the_postgresql_migration_consolidates_once_without_losing_a_signature_or_a_fix(pg_url: str) -> None:
    """A team database at schema 5 (before issue 34) holding three copies of one cause: the first server to
    open it migrates to 6 and runs `consolidate_causes` once; nothing of the copies is lost."""
    import psycopg

    from recall_agent.learnings import pg_store
    from recall_agent.learnings.records import resolution_key, signature_rows

    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    rows = [(uuid4(), f"s{i}", fix, t0 + timedelta(days=i), YAML.format(n=3 + 4 * i))
            for i, fix in enumerate(["pip install pyyaml", "add pyyaml to requirements.txt", "pip install pyyaml"])]  # fmt: skip
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE recall_schema (version integer NOT NULL, applied_at timestamptz NOT NULL)")
        for version, sql in enumerate(pg_store.MIGRATIONS[:5], 1):
            conn.execute(sql)
            conn.execute("INSERT INTO recall_schema VALUES (%s, now())", (version,))
        for lid, session, fix, at, error in rows:
            conn.execute(
                "INSERT INTO learnings (id, session_id, repo, resolution_summary, resolution_key, created_at,"
                " updated_at) VALUES (%s, %s, 'shop', %s, %s, %s, %s)",
                (lid, session, fix, resolution_key(fix), at, at),
            )
            [sig] = signature_rows([error])
            conn.execute(
                "INSERT INTO signatures (learning_id, position, text, normalized, fingerprint, tsv)"
                " VALUES (%s, 0, %s, %s, %s, array_to_tsvector(%s::text[]))",
                (lid, sig.text, sig.normalized, sig.fingerprint, pg_store._terms(sig.normalized)),
            )
    with pg_store.PgStore(pg_url) as st:
        assert st.count() == 1
        kept = st.learning(rows[0][0])
        assert kept is not None and sorted(kept.error_signatures) == sorted(r[4] for r in rows)
        assert [(f["resolution_summary"], f["count"]) for f in kept.fixes] == [
            ("pip install pyyaml", 2),
            ("add pyyaml to requirements.txt", 1),
        ]
        assert (kept.seen_count, kept.session_count) == (3, 3)
    with pg_store.PgStore(pg_url) as st, psycopg.connect(pg_url) as conn:  # once: recorded, not run again
        assert st.count() == 1 and len(st.history(rows[0][0])) == 2
        assert conn.execute("SELECT name FROM recall_data_migrations").fetchall() == [("consolidate_causes",)]
