"""One repository, one identity (issue 34): every worktree and clone of a repository files and finds its
learnings under the same name; a runner's framing lines never make two failures the same; a fix on another
branch is shown with where it lives. Real git repositories in tmp, real `recall` and hook processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hooks_fixtures import Session, all_learnings, hook_env, injected_context

from recall_agent import repo
from recall_agent.learnings import signatures as sigs

ORIGIN = "git@github.com:Acme/Shop.git"
IDENT = "github.com/acme/shop"


def git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def new_repo(path: Path, origin: str | None = ORIGIN, branch: str = "main") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    if origin:
        git(path, "remote", "add", "origin", origin)
    (path / "README.md").write_text("shop\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "first")
    return path


def push_error(branch: str) -> str:
    return (
        f"Exit code 128\nfatal: The current branch {branch} has no upstream branch.\n"
        "To push the current branch and set the remote as upstream, use\n\n"
        f"    git push --set-upstream origin {branch}\n\n"
        "To have this happen automatically for branches without a tracking\n"
        "upstream, see 'push.autoSetupRemote' in 'git help config'.\n"
    )


# ---------------------------------------------------------------------- the identity


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/Shop.git",
        "https://github.com/acme/shop",
        "https://alice:s3cret@GitHub.com/Acme/Shop.git/",
        "ssh://git@github.com:22/acme/shop.git",
        "git+ssh://git@github.com/acme/shop",
    ],
)
def test_remote_urls_of_one_repository_are_one_identity(url: str) -> None:
    assert repo.normalize_url(url) == IDENT


def test_worktrees_and_clones_share_the_identity_read_from_git_files(tmp_path: Path) -> None:
    main = new_repo(tmp_path / "shop")
    git(main, "worktree", "add", "-q", "-b", "feat-a", str(tmp_path / "wt-a"))
    clone = tmp_path / "elsewhere" / "my-shop-copy"
    clone.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(main), str(clone)], check=True, capture_output=True)
    git(clone, "remote", "set-url", "origin", "https://github.com/acme/shop.git")
    for folder in (main, tmp_path / "wt-a", tmp_path / "wt-a", clone, clone):
        (folder / "sub").mkdir(exist_ok=True)
        assert repo.identity(folder / "sub") == IDENT
    assert repo.display(IDENT) == "shop"


def test_without_a_remote_the_root_commit_is_the_identity_and_is_remembered(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    main = new_repo(tmp_path / "local", origin=None)
    clone = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", str(main), str(clone)], check=True, capture_output=True)
    first = git(main, "rev-list", "--max-parents=0", "HEAD").strip()
    assert repo.identity(main) == repo.identity(clone) == "root:" + first[:16]
    cached = json.loads((isolated_recall_env / repo.IDS_FILE).read_text())
    assert first in cached.values()
    # outside git, or before a first commit (read from HEAD and the refs, no git process): the folder's name
    (tmp_path / "plain").mkdir()
    assert repo.identity(tmp_path / "plain") == "plain"
    (tmp_path / "fresh").mkdir()
    git(tmp_path / "fresh", "init", "-q")
    assert repo.identity(tmp_path / "fresh") == "fresh"
    assert repo.has_commit(main / ".git", main / ".git") and not repo.has_commit(
        tmp_path / "fresh" / ".git", tmp_path / "fresh" / ".git"
    )


def test_a_gone_folder_is_named_by_the_remote_its_transcript_printed() -> None:
    text = "To github.com:acme/shop.git\n ! [rejected] main -> main\norigin\thttps://github.com/other/lib (fetch)"
    assert repo.identity_from_text(text, "shop") == IDENT
    assert repo.identity_from_text(text, "lib") == "github.com/other/lib"
    assert repo.identity_from_text(text, "unrelated") is None


# ---------------------------------------------------------------------- the error names another branch


def test_the_branch_in_gits_messages_is_a_slot() -> None:
    assert sigs.fingerprint(push_error("feat-a")) == sigs.fingerprint(push_error("feature/JIRA-12-b"))
    assert "<branch>" in sigs.normalize(push_error("feat-a"))
    checked_out = "fatal: '{}' is already checked out at '{}'"
    assert sigs.fingerprint(checked_out.format("feat-a", "/work/wt/a")) == sigs.fingerprint(
        checked_out.format("main", "/home/alice/src/shop")
    )


def test_set_upstream_learned_in_one_worktree_is_injected_in_another_on_another_branch(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    main = new_repo(tmp_path / "shop")
    wt_a, wt_b = tmp_path / "shop-feat-a", tmp_path / "shop-feat-b"
    git(main, "worktree", "add", "-q", "-b", "feat-a", str(wt_a))
    git(main, "worktree", "add", "-q", "-b", "feat-b", str(wt_b))
    env = hook_env(isolated_recall_env)

    first = Session("wt-a-1", wt_a, env)
    assert injected_context(first.bash_fails("git push", push_error("feat-a"))) is None
    first.bash_ok(
        "git push --set-upstream origin feat-a", stdout="branch 'feat-a' set up to track 'origin/feat-a'."
    )
    assert first.stop("Pushed with --set-upstream.").returncode == 0
    (learning,) = all_learnings(isolated_recall_env)
    assert learning.repo == IDENT
    assert "--set-upstream" in learning.resolution_summary

    other = Session("wt-b-1", wt_b, env)
    context = injected_context(other.bash_fails("git push", push_error("feat-b")))
    assert context is not None and "--set-upstream" in context
    assert str(learning.id)[:8] in context


def test_two_clones_with_one_origin_share_learnings(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    one = new_repo(tmp_path / "alice" / "shop")
    two = new_repo(tmp_path / "bob" / "shop-checkout", origin="https://github.com/acme/shop.git")
    error = "KeyError: 'SHOP_DATABASE_URL'\n  File \"shop/settings.py\", line 4, in load"
    learned = subprocess.run(
        [*recall_cmd, "learn", "--error", error, "--resolution", "Export SHOP_DATABASE_URL from .env.example."],
        cwd=one, env=subprocess_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    asked = subprocess.run(
        [*recall_cmd, "--scope", "learnings", "--format", "json", error],
        cwd=two, env=subprocess_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    matches = json.loads(asked.stdout)["learnings"]["response"]["matches"]
    assert [m["learning_id"][:8] for m in matches] == [learned.stdout.strip()[:8]]
    assert matches[0]["repo"] == IDENT
    # `--repo shop` typed in a checkout of github.com/acme/shop names its identity
    exported = subprocess.run([*recall_cmd, "export", "--repo", "shop"], cwd=two, env=subprocess_env,
                              capture_output=True, text=True, check=True)  # fmt: skip
    assert [json.loads(line)["repo"] for line in exported.stdout.splitlines()] == [IDENT]


# ---------------------------------------------------------------------- wrappers are not causes

LINT = (
    "task: [lint] golangci-lint run ./...\n{issue}\n{n} issues:\n* {rule}: {n}\n"
    'task: Failed to run task "lint": exit status 1\nERROR task failed\n'
)


def test_two_failures_of_one_task_runner_do_not_match_through_its_lines(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    project = new_repo(tmp_path / "cli")
    exported = LINT.format(
        issue="cmd/root.go:41:6: exported function Execute should have comment or be unexported (revive)",
        n=1,
        rule="revive",
    )
    revive = LINT.format(
        issue="internal/api/client.go:12:9: unused-parameter: parameter 'ctx' seems to be unused (revive)",
        n=1,
        rule="revive",
    )
    assert (
        sigs.normalize(exported) == "exported function Execute should have comment or be unexported (revive)"
    )
    assert sigs.normalize(revive) == "unused-parameter: parameter 'ctx' seems to be unused (revive)"
    subprocess.run(
        [*recall_cmd, "learn", "--error", exported, "--resolution", "Add a doc comment: // Execute runs the CLI."],
        cwd=project, env=subprocess_env, check=True, capture_output=True,
    )  # fmt: skip
    asked = subprocess.run(
        [*recall_cmd, "--scope", "learnings", "--format", "json", revive],
        cwd=project, env=subprocess_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(asked.stdout)["learnings"]["response"]["matches"] == []


@pytest.mark.parametrize(
    "framing",
    [
        "make: *** [Makefile:12: test] Error 1",
        "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1",
        "error: Recipe `test` failed on line 3 with exit code 1",
        "FAILED (failures=1)",
        "exit status 1",
    ],
)
def test_framing_alone_is_never_a_cause(framing: str) -> None:
    one = sigs.normalize("building shop\n" + framing)
    two = sigs.normalize("checking inventory\n" + framing)
    assert all(line.startswith(sigs.FALLBACK) for line in one.splitlines())  # never matched on
    assert sigs.fingerprint_normalized(one) != sigs.fingerprint_normalized(two)


# ---------------------------------------------------------------------- a fix on another branch


def _fix_on_branch(tmp_path: Path) -> tuple[Path, str]:
    """main rewrote src/pay.py; branch feat-retry holds the fix (never merged): (main's checkout, commit)."""
    main = new_repo(tmp_path / "shop")
    (main / "src").mkdir()
    (main / "src" / "pay.py").write_text("def charge(amount):\n    return gateway.post(amount)\n")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "pay")
    git(main, "checkout", "-q", "-b", "feat-retry")
    (main / "src" / "pay.py").write_text("def charge(amount):\n    return gateway.post(amount, timeout=30)\n")
    git(main, "commit", "-qam", "pay: a timeout")
    commit = git(main, "rev-parse", "HEAD").strip()
    git(main, "checkout", "-q", "main")
    (main / "src" / "pay.py").write_text(
        "def charge(amount, currency):\n    return client.send(amount, currency)\n"
    )
    git(main, "commit", "-qam", "pay: new client")
    return main, commit


FIX = {
    "source": "transcript",
    "verified_by": "pytest",  # a captured fix: a passing run confirmed it (safety/trust.py)
    "files": [{"path": "src/pay.py", "symbols": ["charge"],
               "change": "`return gateway.post(amount)` → `return gateway.post(amount, timeout=30)`"}],
}  # fmt: skip


def test_a_fix_on_another_branch_is_located_not_stale(tmp_path: Path) -> None:
    from recall_agent import selfcheck

    main, commit = _fix_on_branch(tmp_path)
    verdict = selfcheck.check(FIX, main)
    assert verdict.verdict == "branch", verdict
    assert verdict.reason == f"fix on branch feat-retry, commit {commit[:10]}"
    # merged, then rewritten since: the fix was here, stale stands
    git(main, "merge", "-q", "-s", "ours", "feat-retry", "-m", "merge")
    assert selfcheck.check(FIX, main).verdict == "stale"
    assert selfcheck.check(FIX, main, locate_s=0).verdict == "stale"


def test_the_hook_injects_a_fix_on_another_branch_saying_where(
    tmp_path: Path, isolated_recall_env: Path
) -> None:
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning

    main, commit = _fix_on_branch(tmp_path)
    error = 'TimeoutError: gateway did not answer\n  File "src/pay.py", line 2, in charge'
    with open_store() as store:
        store.add(Learning(repo=repo.identity(main), error_signatures=[error], fix=FIX,
                           resolution_summary="Give gateway.post a timeout=30 in charge."))  # fmt: skip
    context = injected_context(
        Session("s-main", main, hook_env(isolated_recall_env)).bash_fails("pytest", error)
    )
    assert context is not None and "timeout=30" in context
    assert f"fix on branch feat-retry, commit {commit[:10]}" in context


# ---------------------------------------------------------------------- migration "repo identity"


def _old_learnings() -> list:
    from recall_agent.models import Learning

    def one(repo_name: str, sid: str | None, text: str) -> Learning:
        return Learning(repo=repo_name, session_id=sid, error_signatures=[f"KeyError: '{text}'"],
                        resolution_summary=f"Set {text}.")  # fmt: skip

    return [
        one("shop", "s-hook", "A"),  # its session file names the folder: resolved
        one("shop", "s-transcript", "B"),  # its transcript names the folder: resolved
        one("shop", None, "C"),  # no session: every resolved session of `shop` agrees
        one("gone-app", "s-gone", "D"),  # the folder is gone: the remote its transcript printed
        one("mystery", "s-unknown", "E"),  # nothing names it: left as it is
    ]


def _sessions(tmp_path: Path, home: Path, shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "sessions").mkdir(parents=True, exist_ok=True)
    (home / "sessions" / "s-hook.json").write_text(json.dumps({"session_id": "s-hook", "cwd": str(shop)}))
    projects = tmp_path / "claude" / "projects" / "-x"
    projects.mkdir(parents=True)
    (projects / "s-transcript.jsonl").write_text(
        json.dumps({"type": "user", "cwd": str(shop / "src")}) + "\n"
    )
    gone = {"type": "user", "cwd": str(tmp_path / "deleted" / "gone-app")}
    pushed = {
        "type": "user",
        "toolUseResult": {"stderr": "To github.com:acme/gone-app.git\n   1..2  main -> main"},
    }
    (projects / "s-gone.jsonl").write_text(json.dumps(gone) + "\n" + json.dumps(pushed) + "\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))


EXPECTED = {"A": IDENT, "B": IDENT, "C": IDENT, "D": "github.com/acme/gone-app", "E": "mystery"}


def test_an_existing_sqlite_store_files_its_learnings_under_identities(
    tmp_path: Path, isolated_recall_env: Path, monkeypatch: pytest.MonkeyPatch,
    recall_cmd: list[str], subprocess_env: dict[str, str],
) -> None:  # fmt: skip
    from recall_agent.learnings import reidentify
    from recall_agent.learnings.store import open_store

    shop = new_repo(tmp_path / "shop")
    (shop / "src").mkdir()
    _sessions(tmp_path, isolated_recall_env, shop, monkeypatch)
    with open_store() as store:  # a store written before identities: no marker
        store.add_many(_old_learnings())
        with store._writing("forget the marker", changes="access") as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (reidentify.MARKER,))
    env = {**subprocess_env, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    listed = subprocess.run([*recall_cmd, "review", "--json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    rows = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    rows = rows[0] if rows and isinstance(rows[0], list) else rows
    by_key = {r["error_signatures"][0].split("'")[1]: r["repo"] for r in rows}
    assert by_key == EXPECTED
    with open_store() as store:  # again: nothing moves (idempotent), the marker stays
        assert reidentify.run(store, reidentify.Resolver(isolated_recall_env, [shop])) == 0


def test_a_postgresql_store_files_its_learnings_under_identities(
    tmp_path: Path, isolated_recall_env: Path, monkeypatch: pytest.MonkeyPatch, pg_url: str
) -> None:
    from recall_agent.learnings import reidentify
    from recall_agent.learnings.pg_store import PgStore

    shop = new_repo(tmp_path / "shop")
    (shop / "src").mkdir()
    _sessions(tmp_path, isolated_recall_env, shop, monkeypatch)
    with PgStore(pg_url) as store:
        store.add_many(_old_learnings())
        assert reidentify.run(store, reidentify.Resolver(isolated_recall_env, [])) == 4
        assert reidentify.run(store, reidentify.Resolver(isolated_recall_env, [])) == 0
        by_key = {x.error_signatures[0].split("'")[1]: x.repo for x in store.iter_all()}
    assert by_key == EXPECTED
    # a server's configured repository names a folder no session resolves
    with PgStore(pg_url) as store:
        from recall_agent.models import Learning

        store.add(Learning(repo="shop", error_signatures=["KeyError: 'F'"], resolution_summary="Set F."))
        assert reidentify.run(store, reidentify.Resolver(None, [shop])) == 1


def test_a_token_naming_a_repository_sees_its_remote_identity_and_nothing_else() -> None:
    from recall_agent.server.auth import Principal

    token = Principal("a", b"", frozenset({"read"}), frozenset({"A"}))
    assert token.may_see_repo("A") and token.may_see_repo("github.com/acme/a")
    for other in ("B/A", "/srv/B/A", "a", "github.com/acme/b", "root:0123456789abcdef", "github.com/a/x"):
        assert not token.may_see_repo(other), other


def test_review_stale_leaves_out_a_fix_on_another_branch(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning

    main, _ = _fix_on_branch(tmp_path)
    with open_store() as store:
        store.add(Learning(repo=repo.identity(main), error_signatures=["TimeoutError: gateway did not answer"],
                           fix=FIX, resolution_summary="Give gateway.post a timeout=30 in charge."))  # fmt: skip

    def stale() -> list[str]:
        out = subprocess.run([*recall_cmd, "review", "--stale", "--json"], cwd=main, env=subprocess_env,
                             capture_output=True, text=True, check=True)  # fmt: skip
        return [line for line in out.stdout.splitlines() if line.strip() not in ("", "[]")]

    assert stale() == []  # the fix lives on feat-retry: not stale
    git(main, "merge", "-q", "-s", "ours", "feat-retry", "-m", "merge")
    assert len(stale()) == 1  # merged and rewritten since: stale
