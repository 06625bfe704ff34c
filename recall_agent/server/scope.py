"""Which configured repository a federation request may look at (the server's access rule for repo_path).

A request's `repo_path` resolves to exactly one of the server's configured repositories, or it is refused:

1. inside a configured repository: its real path (symlinks followed, `~` NOT expanded: it is the client's
   text, not the operator's) equals a configured repository or lies below one (the deepest one wins);
   the engines are then given that repository's root, never the sub-folder (an indexer would walk up
   from the sub-folder to whatever git top-level encloses it);
2. else, when that path does not exist on the server (a client sends its own checkout path, which a team
   server rarely has): the configured repository with the same folder name — exactly one, or 422;
3. anything else is a 403, and so is a repository the token may not see (tokens name repositories by
   folder name, exactly).

Without `repo_path` a request is asked of every configured repository the token may see. A server with no
configured repository answers no repository questions (it never indexes a folder it was not given).
"""

from __future__ import annotations

import os
from pathlib import Path

from recall_agent.server.auth import Principal


class ScopeError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def repo_name(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path


def repo_names(path: str) -> set[str]:
    """What a configured repository (a path on the server) answers to: its folder's name and its repository
    identity (`recall_agent.repo.identity`: what clients send as `repo`)."""
    from recall_agent import repo

    return {repo_name(path), repo.identity(Path(path))}


def federation_repos(requested: str | None, configured: list[str], principal: Principal | None) -> list[str]:
    """The configured repositories (real paths) this request is answered from; ScopeError otherwise."""
    if not requested:
        visible = [r for r in configured if principal is None or principal.may_see_repo(repo_name(r))]
        if configured and not visible and principal is not None:
            raise ScopeError(
                403, f"forbidden: token '{principal.name}' may not read any configured repository"
            )
        return visible
    repo = _configured_repo(requested, configured)
    if principal is not None and not principal.may_see_repo(repo_name(repo)):
        raise ScopeError(403, f"forbidden: token '{principal.name}' may not read repo_path {requested!r}")
    return [repo]


def _configured_repo(requested: str, configured: list[str]) -> str:
    real = _realpath(requested)
    if real is not None:
        inside = [r for r in configured if real == r or real.startswith(r.rstrip("/") + "/")]
        if inside:
            return max(inside, key=len)
        if os.path.lexists(real):
            raise ScopeError(
                403, f"forbidden: repo_path {requested!r} is not one of this server's repositories"
            )
    name = repo_name(requested.replace("\\", "/"))
    named = [r for r in configured if repo_name(r) == name]
    if len(named) > 1:
        raise ScopeError(
            422,
            f"repo_path {requested!r}: {len(named)} configured repositories are named {name!r}; send the server's path",
        )
    if not named:
        raise ScopeError(403, f"forbidden: repo_path {requested!r} is not one of this server's repositories")
    return named[0]


def _realpath(path: str) -> str | None:
    """The real path of an absolute `path` (symlink loops stay unresolved rather than raising); None for a
    relative one (relative to what? the server's working folder means nothing to a client)."""
    if not os.path.isabs(path):
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def checked_repos(paths: list[str]) -> list[str]:
    """The server's configured repositories as real paths; ValueError for one that is not a folder or lies
    inside a git work tree without being its top (an engine would index the enclosing repository)."""
    from recall_agent import repo

    out: list[str] = []
    for raw in paths:
        path = os.path.realpath(os.path.expanduser(raw))
        if not os.path.isdir(path):
            raise ValueError(f"--repo {raw}: not a directory")
        top = repo.toplevel(Path(path))
        if top is not None and str(top) != path:
            raise ValueError(f"--repo {raw}: inside the git repository {top}; pass that folder instead")
        out.append(path)
    return out
