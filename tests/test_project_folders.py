"""Folders that are not git repositories: whatever `recall index` accepts, questions accept too."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from recall_agent import repo
from recall_agent.errors import describe

LIB = "function parse(str) {\n  return Number(str);\n}\nmodule.exports = { parse };\n"


def _run(cmd: list[str], env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*cmd, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**env, "RECALL_FEDERATION_DEADLINE": "90"},
        timeout=180,
    )


def _outside_git(tmp_path: Path) -> Path:
    if repo.toplevel(tmp_path) is not None:
        pytest.skip("the temporary folder lies inside a git repository")
    return tmp_path


def test_an_unpacked_package_is_answered_without_git(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    pkg = _outside_git(tmp_path) / "package"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "package.json").write_text('{"name": "tiny", "main": "lib/index.js"}\n')
    (pkg / "lib" / "index.js").write_text(LIB)
    done = _run(recall_cmd, subprocess_env, pkg / "lib", "--scope", "architecture", "where is parse defined")
    assert done.returncode == 0, done.stderr
    assert "`parse` — function, lib/index.js:1-3" in done.stdout
    assert "Error" not in done.stdout + done.stderr


def test_a_folder_recall_indexed_is_answered_from_a_subfolder(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    base = _outside_git(tmp_path) / "plain"
    (base / "src" / "deep").mkdir(parents=True)
    (base / "src" / "util.js").write_text(LIB)
    indexed = _run(recall_cmd, subprocess_env, base, "index", ".")
    assert indexed.returncode == 0, indexed.stderr
    done = _run(
        recall_cmd, subprocess_env, base / "src" / "deep", "--scope", "architecture", "where is parse defined"
    )
    assert done.returncode == 0, done.stderr
    assert "`parse` — function, src/util.js:1-3" in done.stdout
    assert repo.project_root(base / "src" / "deep") == base.resolve()


def test_no_project_is_said_in_words(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    empty = _outside_git(tmp_path) / "nothing"
    empty.mkdir()
    done = _run(recall_cmd, subprocess_env, empty, "--scope", "architecture", "where is parse defined")
    assert "no project here" in done.stdout + done.stderr
    assert "RuntimeError" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (RuntimeError("no project here"), "no project here"),
        (TimeoutError(), "timed out"),
        (KeyError("name"), "missing key 'name'"),
        (FileNotFoundError(2, "No such file or directory", "/x"), "No such file or directory: /x"),
        (ValueError(), "unexpected failure"),
    ],
)
def test_failures_are_described_without_class_names(exc: BaseException, text: str) -> None:
    assert describe(exc) == text


def test_a_checkout_under_a_hidden_folder_of_a_repository_is_its_own_project(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    from conftest import git

    outer = tmp_path / "outer"
    (outer / "src").mkdir(parents=True)
    (outer / "src" / "main.js").write_text("function start() {}\n")
    git(outer, "init", "-q")
    pkg = outer / ".cache" / "pkg"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "package.json").write_text('{"name": "pkg"}\n')
    (pkg / "lib" / "index.js").write_text(LIB)
    assert (
        repo.project_root(pkg / "lib") == pkg.resolve() / "lib"
    )  # the engine's root rule takes it from there
    done = _run(recall_cmd, subprocess_env, pkg / "lib", "--scope", "architecture", "where is parse defined")
    assert done.returncode == 0, done.stderr
    assert "`parse` — function, index.js:1-3" in done.stdout


def test_vendored_names_match_the_indexer() -> None:
    from recall_agent.architecture.indexer import SKIP_DIRS

    assert repo.VENDORED_DIRS == SKIP_DIRS
