"""Migration "repo identity" (issue 34): learnings filed under a folder's name get their repository's identity.

Before issue 34 a learning's `repo` was the name of the folder its session ran in (`shop`, `Sam`, a worktree's
name); now it is `recall_agent.repo.identity` (`github.com/o/shop`, `root:<first commit>`). A stored name is
rewritten when the folder behind it can still be found:

1. per session: the folder the learning's session ran in, from the hooks' session file
   (`$RECALL_HOME/sessions/<id>.json`) or the session's transcript (`~/.claude/projects/*/<id>.jsonl`, the
   files `recall import-sessions` recorded); an existing folder gives `identity(folder)` when its git
   top-level folder carries the stored name, a folder that is gone the identity another of its sessions
   showed (`repo.remembered_folder`, kept by the importer) or the remote URL its transcript printed
   (`repo.identity_from_text`);
2. per name, for the learnings no session resolved: the one identity every resolved session of that name
   agrees on, else a known folder of that name that exists (the store's user's working folder, a server's
   configured repositories).

A name that resolves to nothing, or to two identities, stays as it is: nothing is guessed. Rows already
carrying an identity are never touched, so running it again changes nothing (idempotent). The SQLite store
runs it once (meta key `repo_identity`); the PostgreSQL store when `recall serve` starts, with its configured
repositories as the known folders.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from recall_agent import repo

MARKER = "repo_identity"
VERSION = "1"
HEAD_LINES = 200  # lines of a transcript read for the session's folder
PROJECT_DIRS_MAX = 5000
Pair = tuple[str, str | None]  # (stored repo, session id)


def is_identity(name: str) -> bool:
    return repo.is_remote_identity(name) or name.startswith(repo.ROOT_PREFIX)


class Resolver:
    """Finds the folder a session ran in and the identity of a stored folder name."""

    def __init__(self, home: Path | None, folders: Iterable[Path] = ()) -> None:
        self.home = home
        self.folders = [Path(f) for f in folders]
        self._transcripts: dict[str, Path] | None = None

    def session_identity(self, name: str, session_id: str) -> str | None:
        cwd, transcript = self._session_folder(session_id)
        if not cwd:
            return None
        folder = Path(cwd)
        if folder.is_absolute() and folder.is_dir():
            top = repo.toplevel(folder)
            if top is None or repo.name(folder, top) != name:
                return None
            found = repo.git_identity(top)
            return found
        if repo.name(folder, None) != name:
            return None
        known = repo.remembered_folder(cwd)  # another session of this folder showed it (the importer)
        if known or transcript is None:
            return known
        try:
            text = transcript.read_text(encoding="utf-8", errors="replace")[-8 * 1024 * 1024 :]
        except OSError:
            return None
        return repo.identity_from_text(text, name)

    def folder_identity(self, name: str) -> str | None:
        """The identity of the one known folder (or its git top level) named `name`."""
        found = set()
        for folder in self.folders:
            top = repo.toplevel(folder)
            if top is not None and repo.name(folder, top) == name:
                ident = repo.git_identity(top)
                if ident:
                    found.add(ident)
        return found.pop() if len(found) == 1 else None

    def _session_folder(self, session_id: str) -> tuple[str | None, Path | None]:
        transcript = self._transcript(session_id)
        if self.home is not None:
            from recall_agent.session import session_path

            try:
                state = json.loads(session_path(session_id, self.home).read_text(encoding="utf-8"))
                if isinstance(state, dict) and isinstance(state.get("cwd"), str):
                    return state["cwd"], transcript
            except (OSError, ValueError):
                pass
        if transcript is None:
            return None, None
        return _transcript_cwd(transcript), transcript

    def _transcript(self, session_id: str) -> Path | None:
        if self._transcripts is None:
            self._transcripts = self._index_transcripts()
        return self._transcripts.get(session_id)

    def _index_transcripts(self) -> dict[str, Path]:
        """Session id -> transcript: Claude Code's projects folder, and what `recall import-sessions` read."""
        from recall_agent.config import claude_projects_dir

        out: dict[str, Path] = {}
        if self.home is not None:
            try:
                ledger = json.loads((self.home / "imported.json").read_text(encoding="utf-8"))
                for path in (ledger.get("files") or {}) if isinstance(ledger, dict) else {}:
                    out.setdefault(Path(path).stem, Path(path))
            except (OSError, ValueError, AttributeError):
                pass
        try:
            projects = [p for p in claude_projects_dir().iterdir() if p.is_dir()][:PROJECT_DIRS_MAX]
        except OSError:
            projects = []
        for folder in projects:
            try:
                for file in folder.iterdir():
                    if file.suffix == ".jsonl":
                        out.setdefault(file.stem, file)
            except OSError:
                continue
        return out


def _transcript_cwd(path: Path) -> str | None:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for _, line in zip(range(HEAD_LINES), fh, strict=False):
                if '"cwd"' not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("cwd"), str):
                    return entry["cwd"]
    except OSError:
        return None
    return None


def plan(pairs: Iterable[Pair], resolver: Resolver) -> dict[Pair, str]:
    """(stored repo, session id) -> the identity to file it under, for every pair that resolves."""
    todo = sorted({p for p in pairs if p[0] and not is_identity(p[0])}, key=lambda p: (p[0], p[1] or ""))
    out: dict[Pair, str] = {}
    per_name: dict[str, set[str]] = defaultdict(set)
    for name, sid in todo:
        if sid:
            ident = resolver.session_identity(name, sid)
            if ident:
                out[(name, sid)] = ident
                per_name[name].add(ident)
    for name, sid in todo:
        if (name, sid) in out:
            continue
        agreed = per_name.get(name, set())
        ident = next(iter(agreed)) if len(agreed) == 1 else None
        if not agreed:
            ident = resolver.folder_identity(name)
        if ident:
            out[(name, sid)] = ident
    return out


def run(store: object, resolver: Resolver) -> int:
    """Rewrite the store's folder names that resolve (`plan`); returns how many learnings were moved. The
    store supplies `repo_pairs()` and `rename_repos(plan)` (both adapters do)."""
    pairs = store.repo_pairs()  # type: ignore[attr-defined]
    renames = plan(pairs, resolver)
    return store.rename_repos(renames) if renames else 0  # type: ignore[attr-defined]
