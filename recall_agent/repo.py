"""Which repository a folder belongs to, and the name learnings file it under (stdlib only: cheap import).

One rule for every room: the client's payload, `recall learn`, the hooks' capture and their session state
all name a repository the same way, so a learning captured by a hook is found by `/recall` in that repo.
No `git` process: the nearest ancestor holding a `.git` entry (a folder, or a worktree's file) is the top.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_NAME_MAX = 128


def toplevel(path: Path) -> Path | None:
    """The nearest folder at or above `path` holding `.git`, resolved; None outside git."""
    try:
        current = path.resolve()
    except (OSError, RuntimeError):  # a deleted folder, a symlink loop
        return None
    for folder in (current, *current.parents):
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:  # an unreadable parent: keep walking up
            continue
    return None


PROJECT_MANIFESTS = (
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "CMakeLists.txt",
)


def project_root(path: Path) -> Path | None:
    """The folder code questions are answered for: the git top-level (or the folder itself under a hidden
    or vendored folder of that repository, as `recall index` does); outside git, the nearest folder at
    or above `path` that `recall index` has indexed, else the nearest one holding a project manifest
    (package.json, pyproject.toml, go.mod, …); None when there is neither."""
    top = toplevel(path)
    if top is not None:
        return _own_root(top, path)
    try:
        chain = [f for f in (path.resolve(), *path.resolve().parents) if f.parent != f]  # never / itself
    except (OSError, RuntimeError):
        return None
    from recall_agent.architecture.graph import store_path  # only outside git: keeps this import light

    for folder in chain:
        try:
            if store_path(folder).is_file():
                return folder
        except OSError:
            continue
    for folder in chain:
        try:
            if any((folder / m).is_file() for m in PROJECT_MANIFESTS) or any(folder.glob("*.gemspec")):
                return folder
        except OSError:
            continue
    return None


# folders a repository's index never enters (architecture.indexer.SKIP_DIRS, checked equal by a test)
VENDORED_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "vendor",
        "vendors",
        "third_party",
        "site-packages",
        "__pycache__",
        "coverage",
        "htmlcov",
        "Pods",
        "DerivedData",
    }
)


def _own_root(top: Path, path: Path) -> Path:
    """A folder under a hidden or vendored folder of the repository is not indexed with it: `recall index`
    makes it its own root, and so do questions (`.cache/django-4.2` answers about django, not the outer
    repository). Folders ignored only by a .gitignore are left to the architecture engine's own rule."""
    try:
        rel = path.resolve().relative_to(top)
    except (OSError, RuntimeError, ValueError):
        return top
    if any(part.startswith(".") or part in VENDORED_DIRS for part in rel.parts):
        return path.resolve()
    return top


def name(cwd: Path, root: Path | None) -> str:
    """The learnings `repo`: the git top-level folder's name, else the folder's own ("root" for /)."""
    return ((root or cwd).name or "root")[:REPO_NAME_MAX]


def current_dir() -> Path:
    """The working directory, resolved; `$PWD` (else /) when it was deleted under us."""
    try:
        return Path.cwd().resolve()
    except OSError:
        return Path(os.environ.get("PWD") or "/")
