"""Where a learning's fix lives when this checkout does not have it: another branch, a commit never merged.

The self-check (`selfcheck.py`) calls a learning stale when its cited file is gone or reads neither the old nor
the fixed way. That is wrong when the fix was made on another branch (a feature branch not merged yet, a
worktree's branch): the fix is not stale, it is elsewhere. `locate()` asks git, bounded in time:

1. the commits of every branch and remote branch (`git log --all`) that brought the fixed text into the cited
   file (`-S`, git's pickaxe: a commit that changes how often the text occurs), or that created the file;
2. one not in this checkout's history (`git merge-base --is-ancestor` says no) is where the fix lives: the
   branches that contain it (`git for-each-ref --contains`), else the commit alone;
3. one that is in this checkout's history means the fix was here and was rewritten since: stale stands.

Without a commit, the branch the fix was made on (`fix.branch`, recorded by the capture) names where it
lives when that branch exists and is not the one checked out (the fix may be uncommitted in its worktree).

Every git call shares one deadline (`budget_s`); a slow or missing git means "not found", never an error.
Standard library only (the hook's path).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_BUDGET_S = 1.5
MAX_FILES = 3  # stale files looked up
MAX_BRANCHES = 3  # branches named
FRAGMENT_MAX = 200  # characters of the fixed text given to the pickaxe
ELLIPSIS = "…"


@dataclass(frozen=True)
class Located:
    branches: tuple[str, ...]  # short ref names (`feat-x`, `origin/feat-x`); empty: only the commit
    commit: str  # abbreviated; empty when only the recorded branch says where

    def describe(self) -> str:
        where = ", ".join(self.branches[:MAX_BRANCHES])
        noun = "branch" if len(self.branches) == 1 else "branches"
        parts = [f"fix on {noun} {where}" if where else "fix in a commit on no branch"]
        if self.commit:
            parts.append(f"commit {self.commit}")
        else:
            parts.append("no commit of it found")
        return ", ".join(parts)


class _Git:
    def __init__(self, root: Path, budget_s: float) -> None:
        self.root = root
        self.deadline = time.monotonic() + budget_s

    def _call(self, args: tuple[str, ...]) -> subprocess.CompletedProcess[bytes] | None:
        left = self.deadline - time.monotonic()
        if left <= 0.02:
            return None
        try:
            return subprocess.run(
                ["git", "-C", str(self.root), *args], capture_output=True, timeout=left, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None

    def run(self, *args: str) -> str | None:
        """git's output; None when it failed or could not answer in time."""
        proc = self._call(args)
        return proc.stdout.decode("utf-8", "replace") if proc is not None and proc.returncode == 0 else None

    def ok(self, *args: str) -> bool | None:
        """True / False for git's exit status; None when git could not answer in time."""
        proc = self._call(args)
        return proc.returncode == 0 if proc is not None and proc.returncode in (0, 1) else None


def locate(
    fix: dict[str, Any], root: Path, stale_paths: list[str], budget_s: float = DEFAULT_BUDGET_S
) -> Located | None:
    """Where the fix lives when it is not in this checkout (see the module docstring); None when it is
    nowhere else git knows of, or when it was here once (stale)."""
    git = _Git(root, budget_s)
    files = {
        f["path"]: f for f in fix.get("files") or [] if isinstance(f, dict) and isinstance(f.get("path"), str)
    }
    for path in stale_paths[:MAX_FILES]:
        item = files.get(path)
        if item is None:
            continue
        for commit in _commits_bringing(git, path, item):
            here = git.ok("merge-base", "--is-ancestor", commit, "HEAD")
            if here is None:
                return None
            if here:
                return None  # the fix was in this history: rewritten since, stale stands
            return Located(_branches_containing(git, commit), commit[:10])
    return _recorded_branch(fix, root)


def _commits_bringing(git: _Git, path: str, item: dict[str, Any]) -> list[str]:
    """Commits of any ref that brought the fix into `path`, newest first (at most 3)."""
    from recall_agent.selfcheck import parse_change

    kind, _old, new = parse_change(item.get("change"))
    fragment = _fragment(new) if kind in ("replace", "added") else ""
    if fragment:
        out = git.run("log", "--all", "-n", "3", "--format=%H", f"-S{fragment}", "--", path)
    else:  # created, or nothing to search for: the commits that added the file
        out = git.run("log", "--all", "-n", "3", "--format=%H", "--diff-filter=A", "--", path)
    return [ln.strip() for ln in (out or "").splitlines() if ln.strip()]


def _fragment(text: str) -> str:
    """The longest line of the fixed text, without the capture's `…` cut (the pickaxe matches it whole)."""
    lines = [ln.strip().removesuffix(ELLIPSIS).strip() for ln in text.splitlines()]
    best = max(lines, key=len, default="")
    return best[:FRAGMENT_MAX] if len(best) >= 3 else ""


def _branches_containing(git: _Git, commit: str) -> tuple[str, ...]:
    out = git.run(
        "for-each-ref", "--contains", commit, "--format=%(refname:short)", "refs/heads", "refs/remotes"
    )
    names = [ln.strip() for ln in (out or "").splitlines() if ln.strip() and not ln.strip().endswith("/HEAD")]
    local = [
        n for n in names if "/" not in n or not any(n.startswith(r + "/") for r in ("origin", "upstream"))
    ]
    return tuple(dict.fromkeys(local + names))[:MAX_BRANCHES]


def _recorded_branch(fix: dict[str, Any], root: Path) -> Located | None:
    """The branch the capture recorded, when it still exists here and is not the checked-out one."""
    from recall_agent import repo

    branch = fix.get("branch")
    if not isinstance(branch, str) or not branch.strip():
        return None
    if repo.current_branch(root) == branch:
        return None
    common = repo.common_dir(root)
    if common is None or not _branch_exists(common, branch):
        return None
    return Located((branch,), "")


def _branch_exists(common: Path, branch: str) -> bool:
    """`refs/heads/<branch>` as a loose ref or in packed-refs (no git process)."""
    if ".." in branch or branch.startswith("/"):
        return False
    try:
        if (common / "refs" / "heads" / branch).is_file():
            return True
        packed = (common / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    want = f" refs/heads/{branch}"
    return any(line.endswith(want) for line in packed.splitlines())
