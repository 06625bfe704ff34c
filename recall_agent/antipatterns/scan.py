"""Which files to look at, and running every catalog detector over them.

Files come from two places: paths named in the question (`app/run.py`, `src/api.ts:42`, absolute paths)
and the working tree's changes (`git status`: modified, added, renamed and untracked files, not deleted
ones). Files that are too big, unreadable or binary are skipped with a note; files no detector reads
(images, lock files, ...) are ignored quietly.
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from recall_agent import worktree
from recall_agent.antipatterns.catalog import Antipattern, Catalog
from recall_agent.antipatterns.snippet import Snippet
from recall_agent.antipatterns.source import Hit, ScanContext, file_kind
from recall_agent.errors import describe

MAX_FILE_BYTES = 1_000_000
MAX_FILES = 200
GIT_TIMEOUT_S = 5
# runs of path characters; which of them name a file is decided in Python (`_path_in`): the one-regex form
# (`[\w./~-]*[\w-]+\.ext`) backtracked over every start of a dotless run (minutes on 4000 characters)
_PATH_RUN = re.compile(r"(?:[A-Za-z]:)?[\w./~-]+")
_CONTAINERFILE = re.compile(r"(?:^|/)(?:Dockerfile|Containerfile)")
_EXT_MAX = 10
_LINE_SUFFIX = re.compile(r"(:\d+){1,2}$")
_CATALOG_FILE = re.compile(
    r"^antipatterns:\s*$", re.MULTILINE
)  # catalog data: its bad examples are on purpose
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|fixtures?)/|(^|/)test_[^/]*$|_test\.\w+$|\.(spec|test)\.\w+$"
)


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


_SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}
SNIPPET_PATH = "the code in the question"


@dataclass
class Detection:
    entry: Antipattern
    path: str  # as shown: relative to the repository when inside it
    hits: list[Hit]
    named: bool  # the question named this file (rather than the working tree changing it)
    in_change: bool = False  # a hit is on a line the working tree adds or changes (git diff)
    in_test: bool = False  # the file is a test (fixtures and assertions are not production risks)
    from_question: bool = False  # found in code written in the question itself

    @property
    def severity(self) -> str:
        """The worst of the checks' own severities (bandit grades each finding), else the entry's."""
        own = [h.severity for h in self.hits if h.severity]
        return min(own, key=lambda s: _SEVERITY_ORDER.get(s, 9)) if own else self.entry.severity

    @property
    def severity_rank(self) -> int:
        return _SEVERITY_ORDER.get(self.severity, 9)


@dataclass
class ScanReport:
    detections: list[Detection] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    query_paths: list[str] = field(default_factory=list)  # the substrings of the question that named files


def _path_tokens(text: str) -> list[str]:
    """Substrings that look like file names: `dir/name.ext` (the last `.ext` of a run, at most 10
    characters of extension) or a Dockerfile/Containerfile."""
    out: list[str] = []
    for match in _PATH_RUN.finditer(text):
        run = match.group()
        if (found := _CONTAINERFILE.search(run)) is not None:
            out.append(run[: found.end()] + _name_chars(run[found.end() :]))
        elif (path := _path_in(run)) is not None:
            out.append(path)
    return out


def _name_chars(rest: str) -> str:
    end = 0
    while end < len(rest) and (rest[end].isalnum() or rest[end] in "_.-"):
        end += 1
    return rest[:end]


def _path_in(run: str) -> str | None:
    dot = run.rfind(".")
    while dot > 0:
        if (
            (run[dot - 1].isalnum() or run[dot - 1] in "_-")
            and dot + 1 < len(run)
            and _ascii_alnum(run[dot + 1])
        ):
            end = dot + 1
            while end < len(run) and end - dot <= _EXT_MAX and _ascii_alnum(run[end]):
                end += 1
            return run[:end]
        dot = run.rfind(".", 0, dot)
    return None


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def named_files(text: str, repo: Path | None) -> tuple[list[Path], list[str]]:
    """Existing files the question names, and the matched text.

    Paths are taken relative to the repository (or the current directory without one) and must resolve
    inside it: a question sent to `recall serve` cannot make it quote lines of arbitrary files.
    """
    root = (repo or Path.cwd()).resolve()
    found: list[Path] = []
    spans: list[str] = []
    for raw in _path_tokens(text):
        token = _LINE_SUFFIX.sub("", raw.strip(".,;:'\"`()[]"))
        if not token:
            continue
        candidate = Path(token)  # no `~` expansion: `~user/x` names nothing inside the repository
        option = candidate if candidate.is_absolute() else root / candidate
        try:
            resolved = option.resolve()
            if resolved.is_file() and resolved.is_relative_to(root):
                found.append(resolved)
                spans.append(raw)
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            continue
    return found, spans


def changed_files(repo: Path) -> list[Path]:
    """Modified, added, renamed and untracked files of a git working tree (empty if not a repository)."""
    entries = worktree.status(repo, GIT_TIMEOUT_S) or []
    return [(repo / path).resolve() for code, path in entries if "D" not in code]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(repo: Path) -> dict[Path, set[int]] | None:
    """Lines each tracked file adds or changes against HEAD (`git diff -U0 HEAD`); None when unknown
    (no commit yet, git failed). Untracked files are not listed: all their lines are new."""
    try:
        proc = subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "diff",
                "-U0",
                "--no-color",
                "--no-ext-diff",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "HEAD",
                "--",
            ],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    out: dict[Path, set[int]] = {}
    current: set[int] | None = None
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = None if name == "/dev/null" else out.setdefault((repo / name[2:]).resolve(), set())
        elif current is not None and (m := _HUNK.match(line)):
            start, count = int(m.group(1)), int(m.group(2) or 1)
            current.update(range(start, start + count))
    return out


def git_toplevel(start: Path) -> Path | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(start), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def _display(path: Path, repo: Path | None) -> str:
    if repo is not None:
        try:
            return path.relative_to(repo.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def _read(path: Path, shown: str, notes: list[str]) -> str | None:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            notes.append(
                f"skipped {shown}: {size / 1_000_000:.1f} MB is over the {MAX_FILE_BYTES // 1_000_000} MB limit"
            )
            return None
        data = path.read_bytes()
    except OSError as exc:
        notes.append(f"skipped {shown}: cannot read ({exc.strerror or type(exc).__name__})")
        return None
    if b"\0" in data[:8192]:
        notes.append(f"skipped {shown}: binary file")
        return None
    return data.decode("utf-8", "replace")


def scan(catalog: Catalog, text: str, repo: Path | None) -> ScanReport:
    """Run every detector of the catalog over the named and changed files."""
    report = ScanReport()
    named, report.query_paths = named_files(text, repo)
    changed = [p for p in changed_files(repo) if p.is_relative_to(repo.resolve())] if repo is not None else []
    diff = changed_lines(repo) if changed else None
    changed_set = set(changed)
    ordered: dict[Path, bool] = {p: True for p in named}
    for p in changed:
        ordered.setdefault(p, False)
    candidates = [(p, is_named) for p, is_named in ordered.items() if file_kind(p) is not None]
    if len(candidates) > MAX_FILES:
        report.notes.append(f"scanned the first {MAX_FILES} of {len(candidates)} files")
        candidates = candidates[:MAX_FILES]
    for path, is_named in candidates:
        shown = _display(path, repo)
        kind = file_kind(path)
        content = _read(path, shown, report.notes)
        if content is None or kind is None:
            continue
        if kind == "yaml" and _CATALOG_FILE.search(content):
            continue
        report.files.append(shown)
        in_test = is_test_path(shown)
        for entry_id, unique in detect(catalog, ScanContext(content, kind, shown), report.notes).items():
            entry = catalog.entries[entry_id]
            if in_test and entry.in_tests == "skip":
                continue
            if diff is not None and path in diff:
                new_lines = diff[path]
                unique.sort(key=lambda h: (h.line not in new_lines, h.line))  # the changed lines first
                in_change = unique[0].line in new_lines
            else:  # untracked (all new) or changed with no diff information
                in_change = path in changed_set
            report.detections.append(Detection(entry, shown, unique, is_named, in_change, in_test))
    return report


def detect(catalog: Catalog, ctx: ScanContext, notes: list[str]) -> dict[str, list[Hit]]:
    """Every detector of the catalog over one file: entry id -> its hits, one per line, by line."""
    by_entry: dict[str, list[Hit]] = {}
    for entry in catalog.entries.values():
        for det in entry.detectors:
            if not det.applies_to(ctx.kind):
                continue
            try:
                hits = det.find(ctx)
            except Exception as exc:  # one broken detector must not hide the others' findings
                notes.append(f"detector of {entry.id} failed on {ctx.path}: {describe(exc)}")
                continue
            if hits:
                by_entry.setdefault(entry.id, []).extend(hits)
    return {
        entry_id: sorted({h.line: h for h in hits}.values(), key=lambda h: h.line)
        for entry_id, hits in by_entry.items()
    }


def scan_snippet(catalog: Catalog, snippet: Snippet, notes: list[str]) -> list[Detection]:
    """Detections in code written in the question, for each language it may be in."""
    found: dict[str, Detection] = {}
    for kind in snippet.kinds:
        header = _implied_imports(snippet.code) if kind == "python" else ""
        shift = header.count("\n")
        ctx = ScanContext(header + snippet.code, kind, SNIPPET_PATH, fragment=snippet.fragment)
        for entry_id, hits in detect(catalog, ctx, notes).items():
            hits = [replace(h, line=h.line - shift, end_line=max(0, h.end_line - shift)) for h in hits]
            hits = [h for h in hits if h.line >= 1]
            if hits and entry_id not in found:
                found[entry_id] = Detection(
                    catalog.entries[entry_id], SNIPPET_PATH, hits, True, True, from_question=True
                )
    return list(found.values())


def _implied_imports(code: str) -> str:
    """`import yaml` for a snippet that calls `yaml.load(f)` without importing it: checks (bandit's among
    them) only trust a module name they saw imported, and a question quotes the call, not the imports."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ""
    bound: set[str] = set()
    roots: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            roots.append(node.value.id)
    modules = sorted({r for r in roots if r not in bound and r.isidentifier() and r not in _NOT_MODULES})
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in _KNOWN_NAMES} - bound)
    lines = [_KNOWN_NAMES[n] for n in names] + [f"import {m}" for m in modules if m not in _KNOWN_NAMES]
    return "".join(line + "\n" for line in lines)


# names a question quotes without their import, each with the import that makes the checks see them
_KNOWN_NAMES = {
    "ElementTree": "from xml.etree import ElementTree",
    "ET": "import xml.etree.ElementTree as ET",
    "minidom": "from xml.dom import minidom",
    "mark_safe": "from django.utils.safestring import mark_safe",
    "Markup": "from markupsafe import Markup",
    "urlopen": "from urllib.request import urlopen",
    "Popen": "from subprocess import Popen",
    "check_output": "from subprocess import check_output",
    "mktemp": "from tempfile import mktemp",
    "lru_cache": "from functools import lru_cache",
    "md5": "from hashlib import md5",
    "sha1": "from hashlib import sha1",
}


_NOT_MODULES = frozenset(
    {"self", "cls", "super", "app", "request", "response", "db", "session", "cur", "conn"}
)
