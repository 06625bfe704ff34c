"""Which repository a folder belongs to, and the identity learnings are filed under (stdlib only: cheap
import).

One rule for every room: the client's payload, `recall learn`, the hooks' capture and their session state,
`recall import-sessions` and the server all name a repository with `identity()`, so a learning captured in
one worktree or clone is found from every other one. A repository is what git says it is:

- its `origin` remote's URL, normalized (`git@github.com:o/r.git`, `https://user@GitHub.com/o/r`,
  `ssh://git@github.com:22/o/r.git` are all `github.com/o/r`: scheme, user, port, `.git`, case folded);
- else (no origin, or an origin that is a folder on this machine) its first (root) commit, `root:<16 hex>`:
  a repository without a remote and every clone made of it share it;
- else (no commit yet, or outside git) the folder's name, as before.

No `git` process on the usual path: the nearest ancestor holding a `.git` entry is the top, a worktree's
`.git` file leads to its git dir, `commondir` to the shared one, whose `config` names the remote. Only a
repository without an origin costs one `git rev-list` (bounded), remembered in `$RECALL_HOME/repo-ids.json`.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
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


# folders a repository's index never enters (architecture.indexer.SKIP_DIRS is this set)
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
    """The folder's name: the git top-level folder's, else the folder's own ("root" for /). The last resort
    of `identity()`, and a repository's display name. A Windows folder read on another system
    (`D:\\work\\shop` in an imported transcript) is named by its last part too."""
    base = (root or cwd).name
    if "\\" in base:
        base = base.rstrip("\\").rsplit("\\", 1)[-1]
    return (base or "root")[:REPO_NAME_MAX]


def aliases(path: Path | str, top: Path | None = None) -> tuple[str, ...]:
    """Every name learnings of this checkout's repository may be filed under: its identity, then the folder's
    name (a store written before identities, or a team server's old client)."""
    path = Path(path)
    top = top if top is not None else toplevel(path)
    return tuple(dict.fromkeys([identity(path, top), name(path, top)]))


def resolve_name(given: str, path: Path | str) -> str:
    """A repository a person typed (`--repo shop`): the identity of the checkout at `path` when `given` is
    one of its names (its folder's name, the identity's short name), else `given` as typed."""
    path = Path(path)
    top = toplevel(path)
    ident = identity(path, top)
    return ident if given in (*aliases(path, top), display(ident)) else given


ROOT_PREFIX = "root:"
ROOT_COMMIT_TIMEOUT_S = 2.0
IDS_FILE = "repo-ids.json"


def identity(path: Path | str, top: Path | None = None) -> str:
    """The repository `path` belongs to (see the module docstring): the normalized origin URL, else
    `root:<first commit>`, else the folder's name. `top`: its git top level when the caller has it."""
    path = Path(path)
    top = top if top is not None else toplevel(path)
    if top is None:
        return name(path, None)
    found = git_identity(top)
    return found or name(path, top)


def git_identity(top: Path) -> str | None:
    """The identity of the git work tree at `top` (origin URL, else root commit), None when it has
    neither (no commit yet, an unreadable `.git`)."""
    common = common_dir(top)
    if common is None:
        return None
    return _identity_of(str(common), _mtime_ns(common / "config"), str(git_dir(top)))


@lru_cache(maxsize=64)
def _identity_of(common: str, _config_mtime: int, own: str) -> str | None:
    url = origin_url(Path(common))
    if url and is_network_url(url):  # a clone of a folder on this machine is known by its first commit
        normalized = normalize_url(url)
        if normalized:
            return normalized
    if not has_commit(Path(own), Path(common)):  # no commit yet: nothing to ask git about
        return None
    commit = root_commit(Path(common))
    return ROOT_PREFIX + commit[:16] if commit else None


def has_commit(own: Path, common: Path) -> bool:
    """Does the work tree's HEAD name a commit (detached, or a branch with a loose or packed ref)? Read from
    the files: a repository before its first commit costs no `git` process."""
    try:
        head = (own / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return False
    if not head.startswith("ref: "):
        return bool(re.fullmatch(r"[0-9a-f]{40,64}", head))
    ref = head[5:].strip()
    if (common / ref).is_file() or (own / ref).is_file():
        return True
    try:
        packed = (common / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.endswith(" " + ref) for line in packed.splitlines())


def git_dir(top: Path) -> Path | None:
    """The work tree's own git dir: `.git`, or where a worktree's (or submodule's) `.git` file points."""
    dot = top / ".git"
    try:
        if dot.is_dir():
            return dot
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.split(":", 1)[1].strip())
    return (target if target.is_absolute() else top / target).resolve()


def common_dir(top: Path) -> Path | None:
    """The git dir every worktree of the repository shares (`commondir`), else the work tree's own."""
    own = git_dir(top)
    if own is None:
        return None
    try:
        rel = (own / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return own
    target = Path(rel)
    return (target if target.is_absolute() else own / target).resolve()


def current_branch(top: Path) -> str | None:
    """The checked-out branch from the work tree's `HEAD` (a worktree's `.git` file is followed); None if
    detached or unreadable."""
    own = git_dir(top)
    if own is None:
        return None
    try:
        head = (own / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


_SECTION = re.compile(r"^\s*\[\s*remote\s+\"(?P<name>[^\"]*)\"\s*\]")
_URL = re.compile(r"^\s*url\s*=\s*(?P<url>.*?)\s*$", re.IGNORECASE)


def origin_url(common: Path) -> str | None:
    """The `url` of `[remote "origin"]` in the repository's config, as written there."""
    try:
        text = (common / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    in_origin = False
    for line in text.splitlines()[:5000]:
        if line.lstrip().startswith("["):
            m = _SECTION.match(line)
            in_origin = bool(m and m.group("name") == "origin")
        elif in_origin and (u := _URL.match(line)):
            return u.group("url").strip('"') or None
    return None


_SCHEME = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<rest>.*)$", re.IGNORECASE)
_SCP = re.compile(r"^(?:[^@/:]+@)?(?P<host>[^/:]+):(?P<path>(?!/).*)$")


def normalize_url(url: str) -> str | None:
    """`host/path` of a remote URL, lower case, without scheme, user, password, port, `.git` and slashes at
    the ends; a local path stays a path (`/srv/git/r`). None for an empty one."""
    url = url.strip()
    if not url:
        return None
    m = _SCHEME.match(url)
    if m and m.group("scheme").lower() != "file":
        rest = m.group("rest")
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].split(":", 1)[0]
        out = f"{host}/{path}"
    elif m:  # file:///srv/git/r.git
        out = m.group("rest")
    elif (scp := _SCP.match(url)) and not re.match(r"^[A-Za-z]:[\\/]", url):
        out = f"{scp.group('host')}/{scp.group('path')}"
    else:
        out = url
    out = out.replace("\\", "/").strip("/").removesuffix(".git").rstrip("/").lower()
    out = re.sub(r"/{2,}", "/", out)
    return out[:REPO_NAME_MAX] or None


_REMOTE_IDENTITY = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+/[^/\s]+(?:/[^/\s]+)*$")


def is_remote_identity(ident: str) -> bool:
    """Is `ident` a normalized remote URL (`github.com/o/r`: a dotted host, then a path)?"""
    return bool(_REMOTE_IDENTITY.match(ident))


def is_network_url(url: str) -> bool:
    """A remote on a host (`https://…`, `ssh://…`, `git@host:path`), not a folder (`/srv/r.git`, `file://`,
    `../r`): a folder's path names a place on one machine, not the repository."""
    m = _SCHEME.match(url.strip())
    if m:
        return m.group("scheme").lower() != "file"
    return bool(_SCP.match(url.strip())) and not re.match(r"^[A-Za-z]:[\\/]", url.strip())


def display(ident: str) -> str:
    """A short name for an identity: the repository's last path segment (`github.com/o/r` -> `r`); a
    root-commit identity or a folder name as it is."""
    if ident.startswith(ROOT_PREFIX) or "/" not in ident:
        return ident
    return ident.rstrip("/").rsplit("/", 1)[-1]


def root_commit(common: Path) -> str | None:
    """The repository's first commit (the smallest, when it has several roots), remembered per git dir in
    `$RECALL_HOME/repo-ids.json`: one bounded `git rev-list` per repository, ever."""
    import subprocess

    key = str(common)
    cache = _ids_cache()
    if isinstance(cache.get(key), str):
        return cache[key]
    try:
        proc = subprocess.run(
            ["git", f"--git-dir={common}", "rev-list", "--max-parents=0", "HEAD"],
            capture_output=True,
            text=True,
            timeout=ROOT_COMMIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    roots = sorted(
        ln.strip() for ln in proc.stdout.splitlines() if re.fullmatch(r"[0-9a-f]{40,64}", ln.strip())
    )
    if proc.returncode != 0 or not roots:
        return None
    cache[key] = roots[0]
    _save_ids(cache)
    return roots[0]


def remembered_folder(folder: str) -> str | None:
    """The identity a transcript once showed for a folder that no longer exists (`remember_folder`)."""
    found = _ids_cache().get("folder:" + folder)
    return found if isinstance(found, str) else None


def remembered_folders() -> dict[str, str]:
    """Every folder's identity `remember_folder` kept."""
    prefix = "folder:"
    return {
        k[len(prefix) :]: v for k, v in _ids_cache().items() if k.startswith(prefix) and isinstance(v, str)
    }


def remember_folder(folder: str, ident: str) -> None:
    """Keep the identity found for a gone folder: its other sessions get it without showing it again."""
    cache = _ids_cache()
    if cache.get("folder:" + folder) != ident:
        cache["folder:" + folder] = ident
        _save_ids(cache)


def _ids_path() -> Path:
    from recall_agent.config import recall_home  # stdlib only

    return recall_home() / IDS_FILE


def _ids_cache() -> dict[str, object]:
    import json

    try:
        data = json.loads(_ids_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_ids(cache: dict[str, object]) -> None:
    import contextlib
    import json
    import tempfile

    path = _ids_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=IDS_FILE + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(dict(list(cache.items())[-500:]), fh)
        os.replace(tmp, path)


def _mtime_ns(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


# a remote named in a transcript's output: `git push`'s `To <url>`, `git fetch`'s `From <url>`,
# `git remote -v`'s `origin  <url> (fetch)`, `git clone`'s `Cloning into ...` does not name it
_REMOTE_IN_TEXT = re.compile(
    r"(?m)^[ \t]{0,8}(?:To|From|origin|Fetch URL:|Push URL:)[ \t]{1,8}"
    r"(?P<url>(?:[a-z][a-z0-9+.-]*://|[\w.-]+@|[\w-]+(?:\.[\w-]+)+:)[^\s'\"<>]{3,300})"
)


def identity_from_text(text: str, folder: str) -> str | None:
    """A repository identity a transcript's output shows for the folder named `folder` (its basename):
    a remote URL that git printed (`To github.com:o/r.git`, `origin  https://... (fetch)`) whose last
    segment is that folder's name. None when nothing there names it. A transcript's raw JSON lines do too:
    escaped newlines and tabs are undone, a quote starts a line (a tool's output is a JSON string)."""
    want = folder.lower().removesuffix(".git")
    text = text.replace("\\n", "\n").replace("\\t", "\t").replace('"', "\n")
    for m in _REMOTE_IN_TEXT.finditer(text):
        ident = normalize_url(m.group("url"))
        if ident and display(ident) == want:
            return ident
    return None


def current_dir() -> Path:
    """The working directory, resolved; `$PWD` (else /) when it was deleted under us."""
    try:
        return Path.cwd().resolve()
    except OSError:
        return Path(os.environ.get("PWD") or "/")
