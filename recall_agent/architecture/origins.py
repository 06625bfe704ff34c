"""Where an error comes from in this repository: the raise or log site whose message's literal parts the
error carries, and the frames of its traceback that lie in the repository.

`locate(conn, root, text)` finds candidate sites by full text (the message's words), keeps those whose
literal parts really occur in the text (whitespace and case folded), and ranks them by how many
characters of literal text match, with the raised type named in the error and a traceback frame on the
site as tie-breakers; sites in tests come after real code. Frames are read in the notations of Python,
JavaScript/TypeScript (V8), Java/Kotlin, Go, Ruby and Rust, and mapped to indexed files by the longest
common path suffix.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from recall_agent.architecture.messages import SEPARATOR

MIN_MATCHED = 12  # characters of literal text a site must share with the error
CANDIDATES = 300
MAX_WORDS = 40
SHOWN_SITES = 3
SHOWN_FRAMES = 6
CODE_MAX = 140
FRAME_SLACK = 3  # lines between a frame and a site it passes through (a raise spans the lines after it)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_PY_FRAME = re.compile(r'File "([^"\n]{1,400})", line (\d{1,7})(?:, in ([\w<>.$]{1,200}))?')
_JS_FRAME = re.compile(
    r"\bat (?:([\w$.<>\[\] ]{1,200}?) \()?((?:[A-Za-z]:)?[^\s():]{1,400}\.(?:[cm]?[jt]sx?)):(\d{1,7})"
)
_JAVA_FRAME = re.compile(
    r"\bat ([\w$.]{1,300})\.([\w$<>]{1,100})\(([\w$]{1,100}\.(?:java|kt|scala|groovy)):(\d{1,7})\)"
)
_GO_FRAME = re.compile(r"(?m)^[ \t]*((?:[A-Za-z]:)?[^\s:]{1,400}\.go):(\d{1,7})")
# The lookbehind starts a path only where a token starts: without it every character of a long run
# would begin its own 400-character scan.
_RB_FRAME = re.compile(r"(?<![^\s:'\"`])([^\s:'\"`]{1,400}\.rb):(\d{1,7}):in [`']([^'\n]{1,200})'")
_RS_FRAME = re.compile(r"(?<![^\s:'\"`])([^\s:'\"`]{1,400}\.rs):(\d{1,7}):\d{1,5}")


@dataclass
class Frame:
    path: str  # as written in the traceback
    line: int
    func: str = ""
    repo_path: str = ""  # the indexed file it maps to
    code: str = ""


@dataclass
class SiteHit:
    path: str
    line: int
    end_line: int
    kind: str
    scope: str
    exc: str
    cond: str
    matched: list[str]
    score: float
    is_test: bool
    code: str = ""


@dataclass
class Origins:
    sites: list[SiteHit] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def frames(text: str) -> list[Frame]:
    """Traceback frames in the order written (Python: outermost first; the others: innermost first)."""
    out: list[Frame] = []
    for m in _PY_FRAME.finditer(text):
        out.append(Frame(m.group(1), int(m.group(2)), m.group(3) or ""))
    for m in _JS_FRAME.finditer(text):
        if not m.group(2).endswith(".java"):
            out.append(Frame(m.group(2), int(m.group(3)), (m.group(1) or "").strip()))
    for m in _JAVA_FRAME.finditer(text):
        package = m.group(1).split("$")[0].rsplit(".", 1)[0].replace(".", "/")
        out.append(
            Frame(
                f"{package}/{m.group(3)}", int(m.group(4)), m.group(1).rsplit(".", 1)[-1] + "." + m.group(2)
            )
        )
    for m in _GO_FRAME.finditer(text):
        out.append(Frame(m.group(1), int(m.group(2))))
    for m in _RB_FRAME.finditer(text):
        out.append(Frame(m.group(1), int(m.group(2)), m.group(3).split(" ")[-1]))
    for m in _RS_FRAME.finditer(text):
        out.append(Frame(m.group(1), int(m.group(2))))
    return out


def locate(conn: sqlite3.Connection, root: Path, text: str) -> Origins:
    found = Origins()
    found.frames = _in_repository(conn, root, frames(text))
    found.sites = _sites(conn, root, text, found.frames)
    return found


def _in_repository(conn: sqlite3.Connection, root: Path, written: list[Frame]) -> list[Frame]:
    out = []
    seen: set[tuple[str, int]] = set()
    for frame in written:
        path = _repo_file(conn, frame.path)
        if path is None or (path, frame.line) in seen:
            continue
        seen.add((path, frame.line))
        frame.repo_path = path
        frame.code = _line(root, path, frame.line)
        frame.func = frame.func or _enclosing(conn, path, frame.line)
        out.append(frame)
    return out


def _repo_file(conn: sqlite3.Connection, written: str) -> str | None:
    """The indexed file a traceback path names: the longest common suffix of path components."""
    parts = [p for p in written.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return None
    rows = conn.execute(
        "SELECT path FROM files WHERE lang IS NOT NULL AND (path = ? OR path LIKE ? ESCAPE '\\')",
        (parts[-1], "%/" + _like(parts[-1])),
    ).fetchall()
    best, best_len = None, 0
    for (path,) in rows:
        mine = path.split("/")
        common = 0
        while common < min(len(mine), len(parts)) and mine[-1 - common] == parts[-1 - common]:
            common += 1
        if common > best_len or (common == best_len and best is not None and len(path) < len(best)):
            best, best_len = path, common
    if best is None or (best_len == 1 and len(parts) > 1 and len(rows) > 1):
        return None  # only the file name agrees and several files share it: not enough to say which
    return best


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _line(root: Path, path: str, line: int) -> str:
    try:
        with open(root / path, encoding="utf-8", errors="replace") as fh:
            for n, code in enumerate(fh, 1):
                if n == line:
                    return " ".join(code.split())[:CODE_MAX]
    except OSError:
        return ""
    return ""


def _enclosing(conn: sqlite3.Connection, path: str, line: int) -> str:
    row = conn.execute(
        "SELECT s.qualname FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ? AND s.line <= ?"
        " AND s.end_line >= ? AND s.kind NOT IN ('class', 'interface', 'struct', 'enum', 'trait', 'module',"
        " 'namespace', 'type') ORDER BY s.line DESC LIMIT 1",
        (path, line, line),
    ).fetchone()
    return row[0] if row else ""


def _fts_query(text: str) -> str:
    words: dict[str, None] = {}
    for w in _WORD.findall(text):
        words.setdefault(w.lower(), None)
    ranked = sorted(words, key=len, reverse=True)[:MAX_WORDS]
    return " OR ".join(f'"{w}"' for w in ranked)


def _sites(conn: sqlite3.Connection, root: Path, text: str, in_repo: list[Frame]) -> list[SiteHit]:
    match = _fts_query(text)
    if not match:
        return []
    try:
        rows = conn.execute(
            "SELECT s.line, s.end_line, s.kind, s.scope, s.exc, s.cond, s.parts, f.path, f.is_test"
            " FROM site_text t JOIN sites s ON s.id = t.rowid JOIN files f ON f.id = s.file_id"
            " WHERE site_text MATCH ? ORDER BY t.rank LIMIT ?",
            (match, CANDIDATES),
        ).fetchall()
    except sqlite3.OperationalError:  # an index from before sites were kept
        return []
    folded = fold(text)
    framed_files = {f.repo_path for f in in_repo}
    hits = []
    for line, end_line, kind, scope, exc, cond, parts, path, is_test in rows:
        matched = [p for p in parts.split(SEPARATOR) if fold(p) in folded]
        chars = sum(len(p) for p in matched)
        if chars < MIN_MATCHED:
            continue
        score = float(chars)
        if exc and re.search(rf"\b{re.escape(exc)}\b", text):
            score += 10  # the error names the type this site raises
        if _on_a_frame(in_repo, path, line, end_line, scope):
            score += 50  # the traceback passes through this very site
        elif path in framed_files:
            score += 5
        hits.append(SiteHit(path, line, end_line, kind, scope, exc, cond, matched, score, bool(is_test)))
    hits.sort(key=lambda h: (h.is_test, -h.score, h.path, h.line))
    if hits and not hits[0].is_test:  # a test's string literal is evidence only when nothing else matches
        hits = [h for h in hits if not h.is_test]
    for h in hits[:SHOWN_SITES]:
        h.code = _line(root, h.path, h.line)
    return hits


def _on_a_frame(in_repo: list[Frame], path: str, line: int, end_line: int, scope: str) -> bool:
    """A frame of the traceback at the site (a few lines around it) or in the function that holds it."""
    for f in in_repo:
        if f.repo_path != path:
            continue
        if line - FRAME_SLACK <= f.line <= end_line + FRAME_SLACK:
            return True
        if scope and f.func and (scope == f.func or scope.endswith("." + f.func.rsplit(".", 1)[-1])):
            return True
    return False
