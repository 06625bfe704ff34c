"""Learnings that check themselves and a lifecycle (issue 26): staleness and "already applied" on real git
checkouts, the hook refusing stale / hurting / dormant learnings, lifecycle rules with a clock the test
controls on both stores, `recall review` / `recall stats` as real processes, and a damaged store refused."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import pytest
from hooks_fixtures import (
    ERROR_TEXT,
    FIX_MESSAGE,
    Session,
    all_learnings,
    hook_env,
    injected_context,
    make_project,
)

from recall_agent import selfcheck
from recall_agent.learnings import lifecycle
from recall_agent.learnings.curation import ReviewFilter
from recall_agent.learnings.store import open_store
from recall_agent.models import Learning

PG_URL = os.environ.get("RECALL_TEST_DATABASE_URL", "")
PYTEST = "cd {project} && python -m pytest tests/test_app.py -q"
YAML_ERROR = (
    'Traceback (most recent call last):\n  File "app/settings.py", line {line}, in <module>\n    import yaml\n'
    "ModuleNotFoundError: No module named 'yaml'"
)


def git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@e",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@e",
    )
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def recall(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_agent", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A real git repository with a config loader, a client and a requirements file, committed."""
    repo = tmp_path / "billing"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "src" / "config.py").write_text(
        "import os\n\n\ndef load_settings(path):\n    with open(path) as fh:\n        return parse(fh.read())\n"
    )
    (repo / "src" / "client.py").write_text(
        "import requests\n\n\ndef fetch(url):\n    return requests.get(url, timeout=5)\n"
    )
    (repo / "requirements.txt").write_text("flask==3.0.0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    return repo


def evidence(path: str, symbols: list[str], change: str | None = None) -> dict:
    return {"source": "transcript", "files": [{"path": path, "symbols": symbols, "change": change}]}


# --------------------------------------------------------------------------- the self-check on checkouts


def test_a_fix_still_fits_then_the_cited_file_is_rewritten_then_deleted(checkout: Path) -> None:
    fix = evidence(
        "src/config.py", ["load_settings"], "`return parse(fh.read())` → `return parse(fh.read() or '{}')`"
    )
    assert selfcheck.check(fix, checkout).verdict == "ok"  # the old line is still there: the fix applies

    (checkout / "src" / "config.py").write_text(
        "import tomllib\n\n\ndef read_config(path):\n    return tomllib.loads(open(path).read())\n"
    )
    git(checkout, "commit", "-qam", "config: toml")
    stale = selfcheck.check(fix, checkout)
    assert stale.verdict == "stale" and "`load_settings` is no longer in `src/config.py`" in stale.reason

    git(checkout, "rm", "-q", "src/config.py")
    git(checkout, "commit", "-qm", "drop config")
    gone = selfcheck.check(fix, checkout)
    assert (gone.verdict, gone.label, gone.reason) == ("stale", "may be stale", "`src/config.py` is gone")


def test_a_rewritten_function_that_kept_its_name_is_stale(checkout: Path) -> None:
    fix = evidence(
        "src/client.py",
        ["fetch"],
        "`return requests.get(url, timeout=5)` → `return requests.get(url, timeout=30)`",
    )
    (checkout / "src" / "client.py").write_text(
        "import httpx\n\n\ndef fetch(url):\n    return httpx.get(url).json()\n"
    )
    git(checkout, "commit", "-qam", "httpx")
    verdict = selfcheck.check(fix, checkout)
    assert verdict.verdict == "stale" and "rewritten" in verdict.reason


def test_a_fix_already_in_place_says_so(checkout: Path) -> None:
    fix = evidence(
        "src/client.py",
        ["fetch"],
        "`return requests.get(url, timeout=5)` → `return requests.get(url, timeout=30)`",
    )
    assert selfcheck.check(fix, checkout).verdict == "ok"
    text = (checkout / "src" / "client.py").read_text().replace("timeout=5", "timeout=30")
    (checkout / "src" / "client.py").write_text(text)
    git(checkout, "commit", "-qam", "longer timeout")
    applied = selfcheck.check(fix, checkout)
    assert (applied.verdict, applied.label) == ("applied", "already applied here")
    assert "`src/client.py` already reads the fixed way" in applied.reason


def test_a_dependency_fix_whose_package_is_now_declared_is_already_applied(checkout: Path) -> None:
    fix = {"source": "transcript", "packages": [{"name": "PyYAML", "version": "6.0.1"}]}
    assert selfcheck.check(fix, checkout).verdict == "ok"  # not declared: installing it still applies
    (checkout / "requirements.txt").write_text("flask==3.0.0\npyyaml>=6\n")
    git(checkout, "commit", "-qam", "yaml")
    applied = selfcheck.check(fix, checkout)
    assert applied.verdict == "applied" and applied.reason == "`PyYAML` is declared in requirements.txt"
    # a longer name that starts the same is another package
    (checkout / "requirements.txt").write_text("pyyaml-include==1.3\n")
    assert selfcheck.check(fix, checkout).verdict == "ok"


def test_nothing_outside_the_checkout_is_read_and_no_evidence_is_unchecked(
    checkout: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("token = 1\n")
    for path in ("../outside.txt", str(secret)):
        assert selfcheck.check(evidence(path, [], "added `token = 1`"), checkout).verdict == "unchecked"
    assert selfcheck.check(None, checkout).verdict == "unchecked"
    assert selfcheck.check(evidence("src/client.py", ["fetch"]), None).verdict == "unchecked"


def test_recall_marks_a_stale_learning_and_lists_it_after_the_others(checkout: Path) -> None:
    error = "KeyError: 'db_url'\n  File \"src/config.py\", line 6, in load_settings"
    with open_store() as store:
        stale = Learning(repo="billing", error_signatures=[error], resolution_summary="Default db_url in load_settings.",
                         fix=evidence("src/gone.py", ["load_settings"]))  # fmt: skip
        fresh = Learning(repo="billing", error_signatures=[error], resolution_summary="Read DB_URL from the env.",
                         fix=evidence("src/config.py", ["load_settings"]), created_at=datetime.now(UTC) - timedelta(days=20))  # fmt: skip
        store.add_many([stale, fresh])
    out = recall("--scope", "learnings", "--format", "json", error, cwd=checkout)
    matches = json.loads(out.stdout)["learnings"]["response"]["matches"]
    assert [m["resolution_summary"] for m in matches] == [
        "Read DB_URL from the env.",
        "Default db_url in load_settings.",
    ]
    assert [m["check"]["verdict"] for m in matches] == ["ok", "stale"]
    text = recall("--scope", "learnings", error, cwd=checkout).stdout
    assert "**Check:** may be stale: `src/gone.py` is gone" in text


# --------------------------------------------------------------------------- the hook, end to end


def _learn_by_fixing(project: Path, env: dict[str, str]) -> None:
    s = Session("sess-fix", project, env)
    command = PYTEST.format(project=project)
    assert injected_context(s.bash_fails(command, ERROR_TEXT)) is None
    s.say(FIX_MESSAGE)
    s.edit("src/app/client.py")
    s.bash_ok(command)
    assert s.stop("All tests pass now.").returncode == 0


@pytest.fixture
def fixed(tmp_path: Path, isolated_recall_env: Path) -> tuple[Path, dict[str, str], Learning]:
    """A real session fixed the error (hook processes fed hook JSON): the project, its env, the learning."""
    project = make_project(tmp_path)
    env = hook_env(isolated_recall_env)
    _learn_by_fixing(project, env)
    [learned] = all_learnings(isolated_recall_env)
    return project, env, learned


def test_the_hook_injects_an_applied_fix_with_a_note_and_never_a_stale_one(
    fixed, isolated_recall_env: Path
) -> None:
    project, env, learned = fixed
    assert learned.fix is not None and learned.fix.files[0].path == "src/app/client.py"

    # the file still reads the fixed way: shown, with "already applied here", and counted as shown
    again = Session("sess-2", project, env)
    context = injected_context(again.bash_fails(PYTEST.format(project=project), ERROR_TEXT))
    assert (
        context is not None
        and "already applied here: `src/app/client.py` already reads the fixed way" in context
    )
    assert again.stop("Still failing.").returncode == 0  # shown is counted at Stop, off the failure path
    with open_store(isolated_recall_env) as store:
        assert store.learning(learned.id).shown_count == 1

    # someone rewrote the file since: the learning is stale here and the hook stays silent
    (project / "src" / "app" / "client.py").write_text("from http import client as http_client\n")
    third = Session("sess-3", project, env)
    assert injected_context(third.bash_fails(PYTEST.format(project=project), ERROR_TEXT)) is None
    shown = recall("--scope", "learnings", "--format", "json", ERROR_TEXT, cwd=project)
    [match] = json.loads(shown.stdout)["learnings"]["response"]["matches"]
    assert match["check"]["verdict"] == "stale"  # /recall still finds it, marked


def test_the_hook_stops_injecting_a_learning_that_keeps_hurting(fixed, isolated_recall_env: Path) -> None:
    project, env, learned = fixed
    with open_store(isolated_recall_env) as store:
        store.record_outcome([learned.id], "hurt")
        store.record_outcome([learned.id], "hurt")
    s = Session("sess-hurt", project, env)
    assert injected_context(s.bash_fails(PYTEST.format(project=project), ERROR_TEXT)) is None
    text = recall("--scope", "learnings", ERROR_TEXT, cwd=project).stdout
    assert "hurt 2 · not injected: the same failure followed it more often than not" in text


# --------------------------------------------------------------------------- lifecycle with a clock


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, isolated_recall_env: Path):
    if request.param == "sqlite":
        with open_store(isolated_recall_env) as st:
            yield st
        return
    if not PG_URL:
        pytest.skip("RECALL_TEST_DATABASE_URL is unset (source .ci/services)")
    pg_url = request.getfixturevalue("pg_url")
    from recall_agent.learnings.pg_store import PgStore

    with PgStore(pg_url) as st:
        yield st


def _learning(i: int, created: datetime, repo: str = "shop", error: str | None = None) -> Learning:
    return Learning(
        repo=repo,
        error_signatures=[error or f"ValueError: bad value {i} in module m{i}"],
        resolution_summary=f"fix {i}",
        created_at=created,
    )


def test_lifecycle_rules_with_time_passing(store) -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    keeps_helping, never_used, hurts = _learning(1, t0), _learning(2, t0), _learning(3, t0)
    store.add_many([keeps_helping, never_used, hurts])
    day = lambda n: t0 + timedelta(days=n)  # noqa: E731

    def states(now: datetime) -> dict[str, str]:
        rows, _ = store.review(ReviewFilter(), now=now)
        return {r.resolution_summary: lifecycle.state(r.created_at, r.last_useful_at, r.helped_count, r.hurt_count, now, 28)
                for r in rows}  # fmt: skip

    assert states(day(10)) == {"fix 1": "active", "fix 2": "active", "fix 3": "active"}
    store.record_outcome([keeps_helping.id, hurts.id], "shown", now=day(20))
    store.record_outcome([keeps_helping.id], "helped", now=day(20))
    store.record_outcome([hurts.id], "hurt", now=day(20))
    assert states(day(21))["fix 3"] == "active"  # one failure is not a pattern
    store.record_outcome([hurts.id], "hurt", now=day(22))
    assert states(day(23)) == {"fix 1": "active", "fix 2": "active", "fix 3": "hurting"}
    # 28 days without use: the unused one leaves the injection path; the one that helped on day 20 has not
    assert states(day(30)) == {"fix 1": "active", "fix 2": "dormant", "fix 3": "hurting"}
    assert states(day(49)) == {"fix 1": "dormant", "fix 2": "dormant", "fix 3": "hurting"}
    store.record_outcome([keeps_helping.id], "helped", now=day(50))  # every use renews it
    assert states(day(51))["fix 1"] == "active"

    helped = store.learning(keeps_helping.id)
    assert (helped.shown_count, helped.helped_count, helped.hurt_count) == (1, 2, 0)
    assert helped.confidence == pytest.approx(1.0)
    assert store.learning(hurts.id).confidence == pytest.approx(0.6)
    with_env = {r.resolution_summary for r in store.review(ReviewFilter(status="dormant"), now=day(30))[0]}
    assert with_env == {"fix 2"}  # RECALL_DORMANT_DAYS default 28, in SQL as in Python
    assert {r.resolution_summary for r in store.review(ReviewFilter(status="hurting"), now=day(30))[0]} == {
        "fix 3"
    }
    assert {
        r.resolution_summary for r in store.review(ReviewFilter(status="never-used"), now=day(30))[0]
    } == {"fix 2"}
    s = store.stats(now=day(30))
    assert (s.total, s.active, s.dormant, s.hurting, s.never_used, s.helped, s.hurt) == (3, 1, 1, 1, 1, 2, 2)


def test_retrieval_reports_the_state_the_hook_reads(store) -> None:
    from recall_agent.learnings.retrieval import retrieve
    from recall_agent.learnings.wire import RetrievalRequest

    old = datetime.now(UTC) - timedelta(days=60)
    learning = _learning(7, old, error="PermissionError: [Errno 13] Permission denied: '/var/run/app.sock'")
    store.add(learning)
    request = RetrievalRequest(
        repo="shop", match_type="error_signature", error_text=learning.error_signatures[0]
    )
    [match] = retrieve(store, request, record_access=False).matches
    assert match.state == "dormant" and match.age_days == 60
    store.record_outcome([learning.id], "helped")
    [match] = retrieve(store, request, record_access=False).matches
    assert match.state == "active" and match.helped_count == 1 and match.last_useful_at is not None


def test_merging_near_duplicates_keeps_every_signature_and_sums_the_counts(store) -> None:
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    base = "KeyError: 'currency'\n  File \"shop/cart.py\", line {n}, in total"
    first = _learning(1, t0, error=base.format(n=10))
    second = Learning(repo="shop", error_signatures=[base.format(n=12), "TypeError: total() missing 1 required positional argument: 'currency'"],
                      resolution_summary="Pass the currency through total().", created_at=t0 + timedelta(days=3))  # fmt: skip
    other_repo = _learning(3, t0, repo="admin", error=base.format(n=10))
    store.add_many([first, second, other_repo])
    store.record_outcome([first.id], "helped", now=t0 + timedelta(days=5))
    store.record_outcome([second.id], "shown", now=t0 + timedelta(days=6))
    store.record_outcome([second.id], "helped", now=t0 + timedelta(days=9))
    assert store.duplicate_groups() == [[str(first.id), str(second.id)]]  # same cause, same repository only
    assert store.same_cause_groups() == [[str(first.id), str(second.id)]]  # the fitted decision agrees
    kept = store.merge(first.id, [second.id], "alice (cli)")
    again = store.learning(first.id)
    assert len(again.error_signatures) == 3 == len(kept.error_signatures)
    assert (again.shown_count, again.helped_count) == (1, 2)
    assert again.last_useful_at == t0 + timedelta(days=9)
    assert store.learning(second.id) is None
    [event] = store.history(first.id)
    assert (
        event["action"] == "merge"
        and event["actor"] == "alice (cli)"
        and event["before"]["id"] == str(second.id)
    )
    with pytest.raises(ValueError, match="a learning of 'admin'"):
        store.merge(first.id, [other_repo.id], "alice (cli)")


def test_edit_and_forget_are_recorded_with_before_and_after(store) -> None:
    learning = _learning(4, datetime(2026, 2, 1, tzinfo=UTC))
    store.add(learning)
    store.edit_resolution(learning.id, "Validate the value before parsing.", "bob (web)")
    assert store.learning(learning.id).resolution_summary == "Validate the value before parsing."
    store.forget(learning.id, "bob (web)")
    assert store.learning(learning.id) is None and store.count() == 0
    edit, forget = list(store.iter_events())
    assert (edit["action"], edit["before"], edit["after"]) == (
        "edit", {"resolution_summary": "fix 4"}, {"resolution_summary": "Validate the value before parsing."})  # fmt: skip
    assert (
        forget["action"] == "forget"
        and forget["before"]["resolution_summary"] == "Validate the value before parsing."
    )
    assert list(store.iter_events(frozenset({"elsewhere"}))) == []


# --------------------------------------------------------------------------- the CLI as real processes


def test_recall_review_and_stats(tmp_path: Path, isolated_recall_env: Path) -> None:
    cwd = tmp_path
    ids = []
    for error, resolution in (
        (YAML_ERROR.format(line=3), "pip install pyyaml"),
        (YAML_ERROR.format(line=7), "add pyyaml to requirements.txt"),
        ("TimeoutError: <script>alert(1)</script>", "raise the timeout"),
    ):
        out = recall("learn", "--repo", "shop", "--error", error, "--resolution", resolution, cwd=cwd)
        assert out.returncode == 0, out.stderr
        ids.append(out.stdout.strip())
    with open_store(isolated_recall_env) as store:
        store.record_outcome([ids[0]], "shown")
        store.record_outcome([ids[0]], "helped")

    listed = recall("review", "--never-used", cwd=cwd)
    assert listed.returncode == 0 and listed.stderr.strip() == "2 learnings"
    assert {line[:8] for line in listed.stdout.splitlines()} == {ids[1][:8], ids[2][:8]}
    found = recall("review", "--search", "SCRIPT", "--json", cwd=cwd)
    assert [json.loads(line)["id"] for line in found.stdout.splitlines()] == [ids[2]]

    show = recall("review", "show", ids[0][:8], cwd=cwd)
    assert "used:        shown 1, helped 1, hurt 0" in show.stdout and "pip install pyyaml" in show.stdout

    assert recall("review", "dedupe", cwd=cwd).stdout.strip() == f"same cause: {ids[0][:8]} {ids[1][:8]}"
    dry = recall("review", "merge", ids[0][:8], ids[1][:8], cwd=cwd)
    assert dry.returncode == 1 and "add --yes" in dry.stderr
    merged = recall("review", "merge", ids[0][:8], ids[1][:8], "--yes", cwd=cwd)
    assert merged.returncode == 0 and merged.stdout.strip() == f"merged 1 into {ids[0]} (2 error signatures)"

    edited = recall("review", "edit", ids[2][:8], "--resolution", "Raise the client timeout to 30 s", cwd=cwd)
    assert edited.returncode == 0
    gone = recall("review", "forget", ids[2], "--yes", cwd=cwd)
    assert gone.stdout.strip() == f"forgot {ids[2]}"

    stats = json.loads(recall("stats", "--json", cwd=cwd).stdout)
    assert (stats["total"], stats["never_used"], stats["helped"], stats["shown"]) == (1, 0, 1, 1)
    assert "learnings   1   active 1" in recall("stats", cwd=cwd).stdout
    exported = [json.loads(line) for line in recall("export", cwd=cwd).stdout.splitlines()]
    assert [e["id"] for e in exported] == [ids[0]] and len(exported[0]["error_signatures"]) == 2

    history = tmp_path / "changes.jsonl"
    assert recall("review", "history", "--export", str(history), cwd=cwd).returncode == 0
    actions = [json.loads(line)["action"] for line in history.read_text().splitlines()]
    assert actions == ["merge", "edit", "forget"]
    assert all(json.loads(line)["actor"].endswith("(cli)") for line in history.read_text().splitlines())

    bad = recall("review", "show", "nothing-like-an-id", cwd=cwd)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_review_of_an_empty_home_is_not_an_error(tmp_path: Path) -> None:
    out = recall("review", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "") and "0 learnings" in out.stderr
    assert json.loads(recall("stats", "--json", cwd=tmp_path).stdout)["total"] == 0


# --------------------------------------------------------------------------- a damaged store


def _damage(db: Path, blocks: int = 20, seed: int = 26) -> None:
    """Random bytes written into the middle of the file, as the issue describes."""
    rng = random.Random(seed)
    size = db.stat().st_size
    with db.open("r+b") as fh:
        for i in range(blocks):
            fh.seek(size // 3 + i * 3 * 4096 + rng.randrange(64, 2048))
            fh.write(rng.randbytes(512))


def test_a_damaged_store_is_never_written_to(tmp_path: Path, isolated_recall_env: Path) -> None:
    with open_store(isolated_recall_env) as store:
        store.add_many([_learning(i, datetime.now(UTC)) for i in range(3000)])
    db = isolated_recall_env / "learnings.db"
    _damage(db)
    before = db.read_bytes()
    out = recall("learn", "--error", "ValueError: x", "--resolution", "y", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "is corrupt" in out.stderr and "recall export" in out.stderr
    assert db.read_bytes() == before  # nothing written
    jsonl = tmp_path / "one.jsonl"
    jsonl.write_text(_learning(1, datetime.now(UTC)).model_dump_json() + "\n")
    imported = recall("learn", "--from-jsonl", str(jsonl), cwd=tmp_path)
    assert imported.returncode == 1 and "is corrupt" in imported.stderr and db.read_bytes() == before
    serve = recall("serve", "--port", "0", cwd=tmp_path)
    assert serve.returncode == 2 and "is corrupt" in serve.stderr and serve.stderr.count("\n") == 1


def test_writes_of_a_sound_store_skip_the_full_check(
    isolated_recall_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_agent.learnings import integrity

    with open_store(isolated_recall_env) as store:
        store.add(_learning(1, datetime.now(UTC)))
    calls = []
    real = integrity.problems
    monkeypatch.setattr(integrity, "problems", lambda conn: calls.append(1) or real(conn))
    with open_store(isolated_recall_env) as store:
        store.add(_learning(2, datetime.now(UTC)))
        store.record_outcome([UUID(int=1)], "shown")
    assert calls == []  # the file is as recall left it: no quick_check
    db = isolated_recall_env / "learnings.db"
    os.utime(db, ns=(db.stat().st_atime_ns, db.stat().st_mtime_ns + 5_000_000_000))  # touched by someone else
    with open_store(isolated_recall_env) as store:
        store.add(_learning(3, datetime.now(UTC)))
    assert calls == [1]


# --------------------------------------------------------------------------- counts on a team server


def test_a_team_server_counts_what_its_learnings_did(tmp_path: Path, isolated_recall_env: Path) -> None:
    import httpx
    from server_fixtures import start_server

    from recall_agent.config import DEFAULT_RETRIEVAL_PATH

    team, other = "team-token-0123456789abcdef", "other-token-0123456789abcd"
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "team"\ntoken = "{team}"\nscopes = ["read", "write"]\nrepos = ["shop-api"]\n'
        f'[[tokens]]\nname = "other"\ntoken = "{other}"\nscopes = ["read", "write"]\nrepos = ["elsewhere"]\n'
    )
    server = start_server(
        tmp_path, ["--token-file", str(tokens)], env={"RECALL_HOME": str(tmp_path / "server-home")}
    )
    try:
        auth = {"Authorization": f"Bearer {team}"}
        body = {"repo": "shop-api", "error_signatures": [ERROR_TEXT], "helped_count": 1000,
                "resolution_summary": "Import requests_oauthlib; the package is requests-oauthlib."}  # fmt: skip
        lid = httpx.post(server.url + "/v1/learnings", json=body, headers=auth).json()["id"]
        project = make_project(tmp_path)
        env = hook_env(isolated_recall_env, AGENT_LEARNING_RETRIEVAL_URL=server.url + DEFAULT_RETRIEVAL_PATH,
                       RECALL_TOKEN=team)  # fmt: skip
        s = Session("sess-team", project, env)
        assert injected_context(s.bash_fails(PYTEST.format(project=project), ERROR_TEXT)) is not None
        assert s.stop("Still failing.").returncode == 0  # the hook sends `shown` to the server
        page = httpx.get(f"{server.url}/ui/learnings/{lid}", headers=auth).text
        assert (
            '<dd id="shown">1</dd>' in page and '<dd id="helped">0</dd>' in page
        )  # posted counts are not taken

        url = server.url + "/v1/learnings/outcomes"
        assert httpx.post(url, json={"learning_ids": [lid], "outcome": "hurt"}, headers=auth).json() == {
            "counted": 1
        }
        foreign = httpx.post(
            url, json={"learning_ids": [lid], "outcome": "hurt"}, headers={"Authorization": f"Bearer {other}"}
        )
        assert foreign.json() == {"counted": 0}  # a token counts only its repositories' learnings
        bad = httpx.post(url, json={"learning_ids": [lid], "outcome": "great"}, headers=auth)
        assert bad.status_code == 422 and "outcome" in bad.json()["detail"]
        assert httpx.post(url, json={"learning_ids": [lid], "outcome": "hurt"}).status_code == 401
        assert '<dd id="hurt">1</dd>' in httpx.get(f"{server.url}/ui/learnings/{lid}", headers=auth).text
    finally:
        server.stop()


CD_ERROR = "Exit code 1\n(eval):cd:1: no such file or directory: testbed"


def test_the_same_cd_error_gets_the_fix_of_the_case_the_shell_is_in(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    """`cd testbed` fails for two causes: the folder does not exist yet (a clone creates it), or the shell is
    already inside it (the folder carries over between calls). The hook shows the fix of the case at hand."""
    project = make_project(tmp_path)
    env = hook_env(isolated_recall_env)
    first = Session("sess-clone", project, env)  # testbed is not cloned yet
    first.bash_fails("cd testbed && ls", CD_ERROR)
    (project / "testbed").mkdir()
    first.bash_ok("git clone https://git.example/shop.git testbed", stdout="Cloning into 'testbed'...")
    first.bash_ok("cd testbed && ls", stdout="setup.py")
    assert first.stop("Cloned it.").returncode == 0
    second = Session("sess-inside", project, env)  # the shell stays in testbed after a `cd testbed && …`
    second.bash_ok("cd testbed && pip install -e .", stdout="Successfully installed shop")
    second.bash_fails("cd testbed && python repro.py", CD_ERROR)
    second.bash_ok("python repro.py", stdout="reproduced")
    assert second.stop("The shell was already there.").returncode == 0
    folders = sorted(
        (lr.fix.folder.cause, lr.fix.folder.path)
        for lr in all_learnings(isolated_recall_env)
        if lr.fix and lr.fix.folder
    )
    assert folders == [("created", "testbed"), ("shell_inside", "testbed")]

    inside = Session("sess-3", project / "testbed", env)
    context = injected_context(inside.bash_fails("cd testbed && python -m pytest", CD_ERROR))
    assert context is not None
    lines = context.splitlines()[2:]  # after the framing line and the header
    assert "shell was already in `testbed`" in lines[0]
    assert all("already applied here" in ln for ln in lines[1:])  # the clone, if shown: it is done here

    (project / "testbed").rmdir()  # a checkout where it is not cloned yet
    outside = Session("sess-4", project, env)
    context = injected_context(outside.bash_fails("cd testbed && python -m pytest", CD_ERROR))
    assert context is not None and "did not exist: created it with" in context
    assert "shell was already in" not in context


@pytest.mark.parametrize(
    ("cause", "cwd", "verdict"),
    [
        ("shell_inside", "./swebench/testbed", "ok"),
        ("shell_inside", "./swebench", "elsewhere"),
        ("shell_inside", "/home/u/testbed-old", "elsewhere"),  # a name that only starts the same
        ("created", "./swebench/testbed", "applied"),
        ("created", "/nonexistent/swebench", "ok"),
    ],
)
def test_a_folder_fix_is_checked_against_where_the_shell_is(cause: str, cwd: str, verdict: str) -> None:
    assert selfcheck.check({"folder": {"path": "testbed", "cause": cause}}, None, cwd).verdict == verdict


def test_a_created_folder_that_exists_is_already_applied(tmp_path: Path) -> None:
    (tmp_path / "build" / "out").mkdir(parents=True)
    fix = {"folder": {"path": "build/out", "cause": "created"}}
    assert selfcheck.check(fix, None, tmp_path).as_dict()["label"] == "already applied here"
    assert selfcheck.check(fix, None, tmp_path / "build" / "out").verdict == "applied"
    assert not selfcheck.shell_inside(str(tmp_path), "../x")  # never a parent's name
    assert selfcheck.check(fix, tmp_path, None).verdict == "unchecked"  # no shell folder: nothing to say


def test_a_folder_fix_is_kept_by_both_stores(store) -> None:
    from recall_agent.models import FixEvidence

    fix = FixEvidence(source="transcript", folder={"path": "testbed", "cause": "shell_inside"})
    learned = Learning(
        repo="shop", error_signatures=[CD_ERROR], resolution_summary="ran it without `cd testbed`", fix=fix
    )
    store.add(learned)
    back = store.learning(learned.id)  # the stored row: its evidence as the wire carries it
    assert back.fix["folder"] == {"path": "testbed", "cause": "shell_inside"}
    assert selfcheck.check(back.fix, None, "/work/testbed").verdict == "ok"
