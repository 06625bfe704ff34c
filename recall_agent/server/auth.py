"""Bearer tokens for `recall serve`: who may read, who may write, and which repositories each may see.

Tokens come from `RECALL_TOKEN` (one token: read + write, every repository) and/or a token file
(`--token-file`, TOML; format in docs/server.md):

    [[tokens]]
    name = "alice-laptop"          # shown in access logs; the token itself never is
    token = "at-least-16-chars..." # or: sha256 = "<hex sha256 of the token>" (keeps the secret out of the file)
    scopes = ["read", "write"]     # read: the two execute routes; write: POST /v1/learnings
    repos = ["recall", "infra"]    # repository names this token may see; ["*"] (the default) = all

A presented token is hashed once and compared with every known hash with `hmac.compare_digest`, without
stopping at the first hit, so timing says nothing about which token (or how much of one) matched.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from recall_agent.config import ENV_TOKEN

SCOPES = frozenset({"read", "write"})
MIN_TOKEN_LENGTH = 16
ALL_REPOS = "*"


class TokenConfigError(ValueError):
    """The token configuration is unusable; the message names the file and the entry."""


@dataclass(frozen=True)
class Principal:
    name: str
    digest: bytes  # sha256 of the token
    scopes: frozenset[str]
    repos: frozenset[str]

    def may(self, scope: str) -> bool:
        return scope in self.scopes

    def may_see_repo(self, repo: str) -> bool:
        """`repo` is a repository name or identity, compared exactly (`B/A` is not `A`); a remote's identity
        (`github.com/o/a`, `recall_agent.repo.identity`) is also seen by a token naming its repository (`a`,
        `A`): tokens written before identities name repositories by folder name."""
        if ALL_REPOS in self.repos or repo in self.repos:
            return True
        from recall_agent import repo as repo_rule

        if not repo_rule.is_remote_identity(repo):
            return False
        short = repo_rule.display(repo)
        return any(name.lower() == short for name in self.repos)

    @property
    def unrestricted(self) -> bool:
        return ALL_REPOS in self.repos


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def load_principals(token_file: Path | None) -> list[Principal]:
    principals: list[Principal] = []
    env_token = os.environ.get(ENV_TOKEN, "")
    if env_token:
        if len(env_token) < MIN_TOKEN_LENGTH:
            raise TokenConfigError(f"{ENV_TOKEN} must be at least {MIN_TOKEN_LENGTH} characters")
        principals.append(Principal("env", digest(env_token), SCOPES, frozenset({ALL_REPOS})))
    if token_file is not None:
        principals += _read_token_file(token_file)
    return principals


def _read_token_file(path: Path) -> list[Principal]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TokenConfigError(f"cannot read token file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TokenConfigError(f"token file {path} is not valid TOML: {exc}") from exc
    entries = data.get("tokens")
    if not isinstance(entries, list) or not entries:
        raise TokenConfigError(f"token file {path} has no [[tokens]] entries")
    return [_principal(path, i, entry) for i, entry in enumerate(entries, 1)]


def _principal(path: Path, i: int, entry: object) -> Principal:
    where = f"token file {path}, entry {i}"
    if not isinstance(entry, dict):
        raise TokenConfigError(f"{where}: not a table")
    unknown = set(entry) - {"name", "token", "sha256", "scopes", "repos"}
    if unknown:
        raise TokenConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    name = str(entry.get("name") or f"token-{i}")
    token, hexdigest = entry.get("token"), entry.get("sha256")
    if (token is None) == (hexdigest is None):
        raise TokenConfigError(f"{where} ({name}): give exactly one of `token` or `sha256`")
    if token is not None:
        if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH:
            raise TokenConfigError(
                f"{where} ({name}): token must be a string of at least {MIN_TOKEN_LENGTH} chars"
            )
        raw = digest(token)
    else:
        try:
            raw = bytes.fromhex(str(hexdigest))
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise TokenConfigError(f"{where} ({name}): sha256 must be 64 hex digits")
    scopes = entry.get("scopes", ["read"])
    if not isinstance(scopes, list) or not scopes or not set(scopes) <= SCOPES:
        raise TokenConfigError(f"{where} ({name}): scopes must be a non-empty list of 'read' and/or 'write'")
    repos = entry.get("repos", [ALL_REPOS])
    if not isinstance(repos, list) or not repos or not all(isinstance(r, str) and r for r in repos):
        raise TokenConfigError(f"{where} ({name}): repos must be a non-empty list of repository names or '*'")
    return Principal(name, raw, frozenset(scopes), frozenset(repos))


def authenticate(authorization: str | None, principals: list[Principal]) -> Principal | None:
    """The principal whose token is in `Authorization: Bearer <token>`, else None (constant time)."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    presented = digest(token.strip())
    found: Principal | None = None
    for principal in principals:  # no early exit: every comparison is made
        if hmac.compare_digest(presented, principal.digest):
            found = principal
    return found
