"""The history store on real git repositories made here: renames, fixes, bulk and vendored commits,
incremental updates, rewritten histories, and the repositories that have no usable history."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import git

from recall_agent.architecture import history


def commit(repo: Path, message: str, files: dict[str, str], *, author: str = "Ada", when: int = 0) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    env_date = [] if not when else [f"--date={when} +0000"]
    git(repo, "-c", f"user.name={author}", "commit", "-q", "-m", message, *env_date)


def init(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def rows(repo: Path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(history.store_path(repo.resolve()))
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def file_commits(repo: Path, path: str) -> int:
    """Commits of the file now called `path` (its whole lineage)."""
    return rows(
        repo,
        "SELECT count(*) FROM changes c JOIN files f ON f.id = c.file JOIN paths p ON p.id = f.path"
        " WHERE p.path = ? AND f.alive",
        path,
    )[0][0]


BODY = "".join(f"field_{i} = {i}\n" for i in range(20))  # enough lines for git to see a rename


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = init(tmp_path / "shop")
    commit(r, "add models and views", {"models.py": BODY + "a = 1\n", "views.py": "b = 1\n"})
    commit(r, "price field", {"models.py": BODY + "a = 2\n", "views.py": "b = 2\n"})
    commit(r, "Fix crash when the cart is empty", {"models.py": BODY + "a = 3\n"})
    git(r, "mv", "models.py", "shop_models.py")
    commit(r, "rename models", {"shop_models.py": BODY + "a = 3\n# moved\n"})
    commit(
        r, "vendor a library", {"vendor/lib.js": "x\n", "package-lock.json": "{}\n", "views.py": "b = 3\n"}
    )
    return r


def test_walk_follows_renames_and_records_fixes(repo: Path) -> None:
    stats = history.update(repo)
    assert stats.note == "" and stats.commits == 5 and stats.added == 5
    assert file_commits(repo, "shop_models.py") == 4  # the three commits as models.py plus the rename
    fixes = rows(repo, "SELECT fix FROM commits ORDER BY id")
    assert [f for (f,) in fixes] == [0, 0, 1, 0, 0]
    paths = {p for (p,) in rows(repo, "SELECT path FROM paths")}
    assert "vendor/lib.js" not in paths and "package-lock.json" not in paths  # vendored: never stored
    assert rows(repo, "SELECT files FROM commits ORDER BY id DESC LIMIT 1") == [(3,)]  # its size counts them
    assert rows(repo, "SELECT DISTINCT name FROM authors") == [("Ada",)]


def test_bulk_commits_are_kept_but_flagged(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "PAIR_CUTOFF", 3)
    commit(repo, "touch everything", {f"m{i}.py": "x\n" for i in range(5)})
    commit(repo, "Reformat with black", {"views.py": "b = 4\n", "shop_models.py": BODY + "a = 4\n"})
    history.update(repo)
    flags = rows(repo, "SELECT bulk FROM commits ORDER BY id")
    assert [b for (b,) in flags][-2:] == [1, 1]
    assert rows(
        repo, "SELECT DISTINCT c.bulk FROM changes c JOIN commits k ON k.id = c.commit_id WHERE k.bulk"
    ) == [(1,)]


def test_update_walks_only_new_commits(repo: Path) -> None:
    history.update(repo)
    commit(repo, "more views", {"views.py": "b = 9\n"})
    again = history.update(repo)
    assert (again.added, again.commits, again.removed) == (1, 6, 0)
    assert history.update(repo).added == 0  # HEAD unchanged: nothing walked


def test_rewritten_history_is_undone_then_walked(repo: Path) -> None:
    history.update(repo)
    git(repo, "reset", "-q", "--hard", "HEAD~2")  # drops the rename and the vendoring
    commit(repo, "other work", {"views.py": "b = 7\n"})
    stats = history.update(repo)
    assert (stats.removed, stats.added, stats.commits) == (2, 1, 4)
    assert file_commits(repo, "models.py") == 3  # the rename was undone: the file has its old name again
    assert rows(
        repo, "SELECT count(*) FROM files f JOIN paths p ON p.id = f.path WHERE p.path = 'shop_models.py'"
    ) == [(0,)]


def test_merged_fix_branch_marks_its_commits(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "jk/fix-empty-cart")
    commit(repo, "guard the cart", {"views.py": "b = 5\n"})
    commit(repo, "test the guard", {"test_views.py": "t = 1\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "unrelated", {"README.md": "hi\n"})
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'jk/fix-empty-cart'", "jk/fix-empty-cart")
    history.update(repo)
    marked = rows(repo, "SELECT fix, merge FROM commits ORDER BY id")[-4:]
    fixed_by_branch = sum(1 for fix, merge in marked if fix & 2)
    assert fixed_by_branch == 2  # the branch's two commits; not the unrelated one, not the merge
    assert marked[-1] == (0, 1)


def test_unrelated_history_merged_as_subtree_keeps_its_own_names(tmp_path: Path) -> None:
    main = init(tmp_path / "app")
    commit(main, "app makefile", {"Makefile": "all:\n"})
    gui = init(tmp_path / "gui")
    commit(gui, "gui makefile", {"Makefile": "gui:\n"})
    git(main, "fetch", "-q", str(gui), "main:gui")
    git(main, "merge", "-q", "--allow-unrelated-histories", "-s", "ours", "-m", "Merge gui", "gui")
    commit(main, "app makefile again", {"Makefile": "all: app\n"})
    history.update(main)
    lines = rows(
        main,
        "SELECT f.line, count(*) FROM files f JOIN changes c ON c.file = f.id JOIN paths p ON p.id = f.path"
        " WHERE p.path = 'Makefile' GROUP BY f.id ORDER BY f.line",
    )
    assert len(lines) == 2 and sorted(n for _, n in lines) == [1, 2]  # the app's Makefile kept both commits


def test_paths_with_spaces_and_unicode(tmp_path: Path) -> None:
    r = init(tmp_path / "odd")
    commit(r, "odd names", {"my dir/naïve file.py": "x\n", "tab\there.py": "y\n"})
    history.update(r)
    assert {p for (p,) in rows(r, "SELECT path FROM paths")} == {"my dir/naïve file.py", "tab\there.py"}


def test_budget_stops_and_the_next_run_continues(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "BATCH", 2)
    first = history.update(repo, budget=0.0)
    assert first.partial and first.commits == 2
    rest = history.update(repo)
    assert not rest.partial and rest.commits == 5 and rest.added == 3
    assert file_commits(repo, "shop_models.py") == 4


def test_a_subfolder_root_sees_its_own_files(repo: Path) -> None:
    commit(repo, "web app", {"web/app.js": "a\n", "web/util.js": "u\n", "views.py": "b = 8\n"})
    commit(repo, "web again", {"web/app.js": "b\n", "web/util.js": "v\n"})
    stats = history.update(repo / "web")
    assert stats.commits == 2
    assert {p for (p,) in rows(repo / "web", "SELECT path FROM paths")} == {"app.js", "util.js"}


def test_worktree_and_detached_head_read_their_own_history(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), "HEAD~2")
    stats = history.update(tmp_path / "wt")
    assert stats.note == "" and stats.commits == 3


@pytest.mark.parametrize(
    "kind", ["plain folder", "no commits", "shallow clone", "worktree of a deleted repo"]
)
def test_no_usable_history_gets_a_note(kind: str, repo: Path, tmp_path: Path) -> None:
    if kind == "plain folder":
        target = tmp_path / "plain"
        target.mkdir()
        expected = "is not a git repository"
    elif kind == "no commits":
        target = init(tmp_path / "empty")
        expected = "has no commits yet"
    elif kind == "shallow clone":
        target = tmp_path / "shallow"
        subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(target)], check=True)
        expected = "shallow clone"
    else:
        target = tmp_path / "orphan"
        git(repo, "worktree", "add", "-q", str(target))
        import shutil

        shutil.rmtree(repo / ".git")
        expected = "git cannot read this repository's history"
    stats = history.update(target)
    assert expected in stats.note, stats.note
    assert stats.commits == 0 and not history.store_path(target.resolve()).exists()


def test_no_git_installed_is_a_note(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert history.update(repo).note == "git is not installed, so there is no history to read"


def test_fix_and_bulk_rules() -> None:
    assert history.is_fix("Fix crash in parser", "")
    assert history.is_fix("fix(core): null check", "")
    assert history.is_fix("Handle empty input", "Closes #123")
    assert history.is_fix("mm: handle races", 'Fixes: 1a2b3c4d5e6f ("mm: foo")')
    assert not history.is_fix("Add fixtures for prefix matching", "see the issue for details")
    assert not history.is_fix("Debug output for the suffix tree", "")
    assert history.is_bulk("Reformat with black", 3) and history.is_bulk("style: run prettier", 2)
    assert history.is_bulk("Add things", history.PAIR_CUTOFF + 1) and not history.is_bulk("Add things", 3)
    assert history.fix_branch("Merge branch 'jk/fix-leak'")
    assert history.fix_branch("Merge pull request #12 from user/bugfix/empty-cart")
    assert not history.fix_branch("Merge branch 'jk/prefix-matching'")
    assert history.is_vendored("web/node_modules/x/index.js") and history.is_vendored("Cargo.lock")
    assert history.is_vendored("api/v1/service_pb2.py") and not history.is_vendored("src/vendored_notes.md")
