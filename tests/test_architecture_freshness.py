"""A large index answers without the stat walk while nothing says the tree changed (issue 39), and still
notices what changed: a file added (its folder's mtime), git's index moving, and a file rewritten in place
once the trust window is over. The repositories are small; FRESH_MIN_FILES is lowered to take the large-tree
path, and the walk is replaced by one that counts its calls."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from architecture_fixtures import PY_REPO, write

from recall_agent.architecture import indexer, query


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[int]]:
    """A repository taken as a large one, its folders old (not racy), and a counter of full walks."""
    repo = write(tmp_path / "shop", PY_REPO)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    old = time.time_ns() - 3600 * 10**9
    for folder in [repo, *(p for p in repo.rglob("*") if p.is_dir() and ".git" not in p.parts)]:
        os.utime(folder, ns=(old, old))
    monkeypatch.setattr(indexer, "FRESH_MIN_FILES", 1)
    walks: list[int] = []
    real = indexer.walk
    monkeypatch.setattr(indexer, "walk", lambda *a, **kw: walks.append(1) or real(*a, **kw))
    return repo, walks


def _answer(text: str, repo: Path) -> str:
    results = query(text, str(repo))
    return results[0].content if results else ""


def test_a_fresh_large_index_answers_without_walking(big: tuple[Path, list[int]]) -> None:
    repo, walks = big
    assert "make_order" in _answer("who calls make_order", repo)
    assert len(walks) == 1  # the first question indexes
    for _ in range(3):
        _answer("who calls make_order", repo)
    assert len(walks) == 1  # then trusted: no stat of every file


def test_a_new_file_is_noticed_at_once_by_its_folder(big: tuple[Path, list[int]]) -> None:
    repo, walks = big
    _answer("what imports shop.models", repo)
    write(repo, {"src/shop/report.py": "from shop.models import make_order\n"})  # the folder's mtime moves
    assert "src/shop/report.py" in _answer("what imports shop.models", repo)
    assert len(walks) == 2


def test_an_edit_in_place_is_noticed_when_git_moves_or_the_window_ends(
    big: tuple[Path, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, walks = big
    monkeypatch.setenv(indexer.FRESH_SECONDS_ENV, "1")
    _answer("who calls make_order", repo)
    service = repo / "src/shop/service.py"
    folder_mtime = service.parent.stat().st_mtime_ns
    service.write_text(service.read_text() + "\n\ndef audit():\n    return make_order([])\n")  # in place
    os.utime(service.parent, ns=(folder_mtime, folder_mtime))
    assert "in audit" not in _answer("who calls make_order", repo)  # within the window: trusted
    subprocess.run(["git", "-C", str(repo), "add", "src/shop/service.py"], check=True)  # git's index moves
    assert "in audit" in _answer("who calls make_order", repo)
    assert len(walks) == 2
    # the same edit again without git: seen once the window is over
    service.write_text(service.read_text() + "\n\ndef audit2():\n    return make_order([])\n")
    os.utime(service.parent, ns=(folder_mtime, folder_mtime))
    time.sleep(1.1)
    assert "in audit2" in _answer("who calls make_order", repo)


def test_a_window_of_zero_always_walks(big: tuple[Path, list[int]], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, walks = big
    monkeypatch.setenv(indexer.FRESH_SECONDS_ENV, "0")
    for _ in range(3):
        _answer("who calls make_order", repo)
    assert len(walks) == 3


def test_a_small_tree_always_walks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = write(tmp_path / "shop", PY_REPO)
    walks: list[int] = []
    real = indexer.walk
    monkeypatch.setattr(indexer, "walk", lambda *a, **kw: walks.append(1) or real(*a, **kw))
    for _ in range(3):
        _answer("who calls make_order", repo)
    assert len(walks) == 3
