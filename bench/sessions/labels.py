"""The hand labels of real sessions (README.md here), and how the capture benchmark and the fitting
script compare what the engine found with them."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels"
CACHE = HERE.parent / ".cache" / "sessions"
SPLIT = json.loads((HERE / "split.json").read_text())


@dataclass
class Label:
    corpus: str
    session: str
    half: str
    data: dict[str, Any]
    path: Path  # the transcript

    @property
    def episodes(self) -> list[dict[str, Any]]:
        return [e for e in self.data.get("episodes") or [] if isinstance(e, dict)]

    @property
    def unfixed(self) -> list[dict[str, Any]]:
        return [e for e in self.data.get("unfixed") or [] if isinstance(e, dict)]

    @property
    def background(self) -> list[str]:
        return [str(b) for b in self.data.get("background") or []]

    @property
    def project(self) -> str:
        """The project the session worked on: its label's `project`, else SWE-ContextBench's `repo:` in the
        first prompt, else the corpus (each other corpus is one project)."""
        named = self.data.get("project")
        if isinstance(named, str) and named:
            return named
        if self.corpus.startswith("swecb"):
            with self.path.open(encoding="utf-8", errors="replace") as fh:
                for _, line in zip(range(40), fh, strict=False):
                    m = _REPO.search(line)
                    if m:
                        return m.group(1)
        return self.corpus

    @property
    def project_half(self) -> str:
        return project_half(self.project)

    def session_ids(self) -> set[str]:
        """The session ids the transcript carries (a continued session has its first session's id too)."""
        found = {self.session}
        with self.path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = _SESSION_ID.search(line)
                if m:
                    found.add(m.group(1))
        return found

    def failed_ids(self) -> set[str]:
        ids = set()
        for e in [*self.episodes, *self.unfixed]:
            ids.add(str(e.get("failed")))
            ids.update(str(a) for a in e.get("also") or [])
        return ids

    @staticmethod
    def episode_ids(episode: dict[str, Any]) -> set[str]:
        return {str(episode.get("failed"))} | {str(a) for a in episode.get("also") or []}

    def episode_for(self, ids: set[str]) -> dict[str, Any] | None:
        """The labelled episode whose failing calls include one of `ids` (8-character id suffixes)."""
        for e in self.episodes:
            if ({str(e.get("failed"))} | {str(a) for a in e.get("also") or []}) & ids:
                return e
        return None


SECOND = "C"  # the labeller who labelled part of the tuning half again, independently (agreement)
# The labellers of a second sample of held-out sessions, labelled after the models were fitted and the first
# held-out half scored: a held-out set no fit was chosen on (`heldout-fresh`).
FRESH = frozenset({"E", "F"})


def load(halves: tuple[str, ...] = ("tune",), corpora: tuple[str, ...] | None = None) -> list[Label]:
    """Labels of the given halves, with their transcripts in the cache (bench/sessions/fetch.py). The
    half `tune-second` is the second labeller's labels of tuning sessions, kept out of `tune` so that
    each session is judged once per labeller; `tune-all` is both (what the fitting script reads).
    `heldout-fresh` is the later held-out sample (FRESH's labellers), never part of `heldout`."""
    out = []
    for path in sorted(LABELS.glob("*/*.yaml")):
        data = yaml.safe_load(path.read_text())
        if not isinstance(data, dict):
            continue
        corpus = str(data.get("corpus") or path.parent.name)
        half = str(data.get("half"))
        if half == "tune" and data.get("labeller") == SECOND:
            half = "tune-second"
        if half == "heldout" and data.get("labeller") in FRESH:
            half = "heldout-fresh"
        wanted = set(halves) | ({"tune", "tune-second"} if "tune-all" in halves else set())
        if half not in wanted or (corpora and corpus not in corpora):
            continue
        session = str(data.get("session") or path.stem)
        transcript = CACHE / corpus / f"{session}.jsonl"
        if transcript.is_file():
            out.append(Label(corpus, session, half, data, transcript))
    return out


_REPO = re.compile(r"\brepo: ([\w.-]{1,100}/[\w.-]{1,100})")
PROJECTS = SPLIT.get("projects") or {}


def project_half(project: str) -> str:
    """`tune` or `heldout` in the project split (split.json `projects`)."""
    for half in ("tune", "heldout"):
        if project in (PROJECTS.get(half) or []):
            return half
    return "tune" if hashlib.sha256(f"project:{project}".encode()).digest()[0] % 2 == 0 else "heldout"


def load_projects(half: str, *, every_labeller: bool = False) -> list[Label]:
    """The labelled sessions of the tuning (`tune`) or held-out (`heldout`) projects, whichever session half
    and labeller: one label per session (the first labeller's) unless `every_labeller` (the fit reads each
    labeller's verdicts as examples of their own)."""
    out, seen = [], set()
    for label in load(("tune", "tune-second", "heldout", "heldout-fresh")):
        if label.project_half != half:
            continue
        key = (label.corpus.removesuffix("-second"), label.session)
        if not every_labeller and (label.half == "tune-second" or key in seen):
            continue
        seen.add(key)
        out.append(label)
    return out


def worth_keeping(episode: dict[str, Any]) -> bool:
    """A labelled fix recall should store: `useful`, and not `transient` (a fix to code the session itself
    wrote earlier, or a compile error in the middle of its own refactor: issue 33's labels say so; the
    older labels have no such field)."""
    return bool(episode.get("useful")) and not episode.get("transient")


def suffix(tool_use_id: str) -> str:
    return tool_use_id[-8:]


# ---------------------------------------------------------------------- judging a learning against a label

_SESSION_ID = re.compile(r'"sessionId":\s*"([^"]{1,200})"')
_WORD = re.compile(r"[A-Za-z0-9_][\w.\-/]*")


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


def says_the_fix(resolution: str, episode: dict[str, Any]) -> bool:
    """Does the resolution say what fixed it, as the label has it? Edits: a fixed file and (when labelled) a
    changed symbol; a command: a word the later command has and the failing one had not; an install: the
    package."""
    text = _norm(resolution)
    fix = episode.get("fix") or {}
    kind = fix.get("kind")
    files = [str(f) for f in fix.get("files") or []]
    symbols = [str(s) for s in fix.get("symbols") or []]
    packages = [str(p.get("name") if isinstance(p, dict) else p) for p in fix.get("packages") or []]
    if packages and any(p.lower() in text for p in packages):
        return True
    if kind in ("edit", "config") and files:
        file_ok = any(f.rsplit("/", 1)[-1].lower() in text for f in files)
        sym_ok = not symbols or any(s.rsplit(".", 1)[-1].lower() in text for s in symbols)
        return file_ok and sym_ok
    command = fix.get("command") or {}
    if kind == "command" and isinstance(command, dict) and command.get("after"):
        before_words = _WORD.findall(str(command.get("before") or "").lower())
        after_words = _WORD.findall(str(command["after"]).lower())
        new = [w for w in after_words if w not in set(before_words) and len(w) > 1]
        gone = [w for w in before_words if w not in set(after_words) and len(w) > 1]
        if new:
            return any(w in text for w in new)
        return bool(gone) and "without" in text and any(w in text for w in gone)
    return False


def keyed_on_error(signatures: list[str], episode: dict[str, Any]) -> bool:
    """Does a stored signature hold the labelled error line?"""
    want = _norm(episode.get("error") or "")
    return bool(want) and any(want[:120] in _norm(s) for s in signatures)


def keyed_on_background(signatures: list[str], label: Label) -> bool:
    """Is the stored error only background (every line of its last signature's tail is a labelled
    background line)?"""
    back = {_norm(b) for b in label.background}
    if not back or not signatures:
        return False
    lines = [_norm(ln) for ln in signatures[-1].splitlines() if ln.strip()]
    errorish = [ln for ln in lines if re.search(r"error|exception|warning|fail", ln)]
    return bool(errorish) and all(any(b in ln or ln in b for b in back) for ln in errorish)
