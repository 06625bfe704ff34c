"""A failing test named by its id, answered from the code: where the test is, the code under test it
calls, and what changed with them recently (git).

Ids read: pytest (`FAILED tests/test_x.py::TestA::test_b[param]`), go test (`--- FAIL: TestX`), jest and
vitest (`FAIL src/x.test.ts > suite > case`), cargo test (`test mod::name ... FAILED`, `---- name stdout
----`, with the `Running tests/x.rs` line when there), minitest (`TestX#test_y [test/x.rb:12]`), rspec
(`rspec ./spec/x_spec.rb:12`) and JUnit (surefire's `XTest.testY:76`, Gradle's `XTest > testY FAILED`).
The code under test is, in this order, the file named after the test file (test_utils.py -> utils.py,
context_test.go -> context.go, GsonTest.java -> Gson.java), the files the test's own calls resolve to,
and the files the test file imports.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from recall_agent.architecture import queries as q
from recall_agent.architecture.missing import AUX_DIRS

KIND = "Failing test"
SHOWN = 3
RECENT = 3
SUBJECT = 90  # characters of a commit's line (sha, date, subject)
CONFIDENT = 0.6  # queries.callees' confidence of a unique definition; below: one of several, not imported
CONFIDENT_IMPORTED = 0.9  # defined in the file itself or in a file it imports
# languages where a test file imports what it uses (Go's same-package files, Rust's crate paths, Ruby's
# and Java's loaded classes do not show as imports of the file)
EXPLICIT_IMPORTS = frozenset({"python", "javascript", "typescript", "tsx"})
FIXTURE_DIRS = frozenset(
    {"testdata", "fixtures", "fixture", "__fixtures__", "__mocks__", "mocks", "testutil"}
)

_PYTEST = re.compile(r"(?<![\w./-])([\w./-]{1,300}\.py)::([\w:.-]{1,300})(?:\[[^\]\n]{0,300}\])?")
_JS = re.compile(r"(?:FAIL|✗|×|✕)\s+([\w./@-]{1,300}\.(?:[cm]?[jt]sx?))(?:\s+>\s+([^\n]{1,300}))?")
_GO = re.compile(r"--- FAIL: (Test\w{0,200}|Example\w{0,200}|Benchmark\w{0,200})")
_CARGO = re.compile(r"(?:\btest ([\w:]{1,300}) \.\.\. FAILED|---- ([\w:]{1,300}) stdout ----)")
_CARGO_RUNNING = re.compile(r"Running (?:unittests )?([\w./-]{1,300}\.rs)")
_MINITEST = re.compile(
    r"(?<![\w:])(\w[\w:]{0,200})#(test_[^\[\n]{0,300}?)\s*\[([\w./-]{1,300}\.rb):(\d{1,7})\]"
)
_RSPEC = re.compile(r"rspec (?:\./)?([\w./-]{1,300}_spec\.rb):(\d{1,7})")
_JUNIT = re.compile(
    r"\b(\w{1,200}(?:Test|Tests|IT|Spec)\w{0,50})[.#](\w{1,200})(?::(\d{1,7})|\s+FAILED|\s+»)"
)
_GRADLE = re.compile(r"\b(\w{1,200}(?:Test|Tests))\s+>\s+(\w{1,200})(?:\(\))?\s+FAILED")
_AFFIX = re.compile(r"^(?:test_|tests_|spec_|test)|(?:_test|_tests|_spec|\.test|\.spec|Tests?|Spec|IT)$")


@dataclass
class TestId:
    path: str = ""  # as written
    name: str = ""  # the test function or method
    line: int = 0
    lang_hint: str = ""


def parse(text: str) -> TestId | None:
    if m := _PYTEST.search(text):
        return TestId(m.group(1), m.group(2).split("::")[-1], lang_hint="python")
    if m := _GO.search(text):
        return TestId("", m.group(1), lang_hint="go")
    if m := _CARGO.search(text):
        running = _CARGO_RUNNING.search(text)
        name = (m.group(1) or m.group(2)).split("::")[-1]
        return TestId(running.group(1) if running else "", name, lang_hint="rust")
    if m := _MINITEST.search(text):
        name = re.sub(r"\W+", "_", m.group(2).strip())
        return TestId(m.group(3), name, int(m.group(4)), lang_hint="ruby")
    if m := _RSPEC.search(text):
        return TestId(m.group(1), "", int(m.group(2)), lang_hint="ruby")
    if m := _JS.search(text):
        case = (m.group(2) or "").split(" > ")[-1].strip()
        return TestId(m.group(1), case, lang_hint="javascript")
    if m := _GRADLE.search(text) or _JUNIT.search(text):
        line = int(m.group(3)) if m.re is _JUNIT and m.group(3) else 0
        return TestId(f"{m.group(1)}.java", m.group(2), line, lang_hint="java")
    return None


def answer(conn: sqlite3.Connection, root: Path, text: str) -> tuple[str, dict] | None:
    tid = parse(text)
    if tid is None:
        return None
    test_file = _test_file(conn, tid)
    test = _test_symbol(conn, tid, test_file)
    if test_file is None and test is None:
        return None
    file_target = test_file or _file_target(conn, test.path)  # type: ignore[union-attr]
    if file_target is None:
        return None
    under = _under_test(conn, root, file_target, test)
    where = f"`{test.qualname}` at {test.path}:{test.line}" if test else f"{file_target.path}"
    if not test and tid.line:
        where += f":{tid.line}"
    parts = [f"{KIND} (read from the code): {where}"]
    if under:
        parts.append(
            "code under test: "
            + ", ".join(
                f"{p}" + (f" ({', '.join(f'`{n}`' for n in names[:3])})" if names else "")
                for p, names in under
            )
        )
    else:
        parts.append("no code of the repository found under it (it calls nothing indexed)")
    changed = _recent(root, [file_target.path] + [p for p, _ in under])
    if changed:
        parts.append("changed recently: " + "; ".join(changed))
    return "; ".join(parts) + ".", {
        "answer": "failing_test",
        "test": f"{test.path}:{test.line}" if test else file_target.path,
        "under_test": [p for p, _ in under],
    }


def _file_target(conn: sqlite3.Connection, path: str) -> q.Target | None:
    return next((t for t in q.lookup(conn, path, fuzzy=False).targets if t.is_file), None)


def _test_file(conn: sqlite3.Connection, tid: TestId) -> q.Target | None:
    if not tid.path:
        return None
    written = tid.path.lstrip("./")
    rows = conn.execute(
        "SELECT path FROM files WHERE path = ? OR path LIKE ? ESCAPE '\\' ORDER BY length(path) LIMIT 5",
        (written, "%/" + q._like_escape(written)),
    ).fetchall()
    if not rows:
        return None
    found = q.lookup(conn, rows[0][0], fuzzy=False).targets
    return next((t for t in found if t.is_file), None)


def _test_symbol(conn: sqlite3.Connection, tid: TestId, test_file: q.Target | None) -> q.Target | None:
    if not tid.name and not (test_file and tid.line):
        return None
    if test_file is not None:
        if tid.name:
            row = conn.execute(
                "SELECT id FROM symbols WHERE file_id = ? AND name = ? ORDER BY line LIMIT 1",
                (test_file.file_id, tid.name),
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT id FROM symbols WHERE file_id = ? AND line <= ? AND end_line >= ? ORDER BY line DESC LIMIT 1",
                (test_file.file_id, tid.line, tid.line),
            ).fetchone()
    else:
        row = conn.execute(
            "SELECT s.id FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ?"
            " ORDER BY f.is_test DESC, f.path LIKE '%test%' DESC, length(f.path) LIMIT 1",
            (tid.name,),
        ).fetchone()
    return _symbol(conn, row[0]) if row else None


def _symbol(conn: sqlite3.Connection, symbol_id: int) -> q.Target | None:
    row = conn.execute(
        "SELECT f.path, s.qualname FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?",
        (symbol_id,),
    ).fetchone()
    found = q.lookup(conn, f"{row[0]}:{row[1]}", fuzzy=False).targets if row else []
    match = [t for t in found if t.symbol_id == symbol_id]
    if match:
        return match[0]
    for t in q.lookup(conn, row[1], fuzzy=False).targets if row else []:
        if t.symbol_id == symbol_id:
            return t
    return None


def _stem(path: str) -> str:
    name = PurePosixPath(path).name.split(".")[0]
    return _AFFIX.sub("", _AFFIX.sub("", name)).strip("_").lower().rstrip("s")


def _under_test(
    conn: sqlite3.Connection, root: Path, test_file: q.Target, test: q.Target | None
) -> list[tuple[str, list[str]]]:
    """(file, names the test calls in it) for the code under test, best first."""
    calls: Counter[str] = Counter()
    names: dict[str, list[str]] = {}
    explicit = test_file.lang in EXPLICIT_IMPORTS
    imported_names = _imported_names(conn, test_file.file_id) if explicit else set()
    for hit in q.callees(conn, test or test_file):
        if not hit.path or hit.path == test_file.path or not _sure(hit, explicit, imported_names):
            continue  # a guess is no evidence: a name defined elsewhere that the test file does not import
        if _is_test(conn, hit.path):
            continue
        calls[hit.path] += 1
        names.setdefault(hit.path, [])
        if hit.name not in names[hit.path]:
            names[hit.path].append(hit.name)
    if test is not None and not calls and not explicit:  # calls inside macros (assert_eq!): the names used
        for path, name in _mentioned(conn, root, test):
            calls[path] += 1
            names.setdefault(path, []).append(name)
    stem = _stem(test_file.path)
    same_name = []
    if stem:
        for (path,) in conn.execute(
            "SELECT path FROM files WHERE is_test = 0 AND lang = ? AND path LIKE ? ESCAPE '\\'",
            (test_file.lang, "%" + q._like_escape(stem) + "%"),
        ):
            if _stem(path) == stem:
                same_name.append(path)
        folder = str(PurePosixPath(test_file.path).parent)
        same_name.sort(key=lambda p: (str(PurePosixPath(p).parent) != folder, -calls[p], len(p)))
    imported = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT f.path FROM edges e JOIN files f ON f.id = e.dst WHERE e.src = ? AND f.is_test = 0",
            (test_file.file_id,),
        )
    ]
    ranked = [p for p in same_name[:1] + [p for p, _ in calls.most_common()] + imported if not _fixture(p)]
    ranked.sort(key=lambda p: PurePosixPath(p).parts[0] in AUX_DIRS)  # benchmarks and scripts last
    out = []
    for path in dict.fromkeys(ranked):
        out.append((path, names.get(path, [])))
        if len(out) >= SHOWN:
            break
    return out


def _mentioned(conn: sqlite3.Connection, root: Path, test: q.Target) -> list[tuple[str, str]]:
    """(file, name) for the names the test's body uses that exactly one non-test file defines."""
    try:
        with open(root / test.path, encoding="utf-8", errors="replace") as fh:
            body = "".join(line for n, line in enumerate(fh, 1) if test.line < n <= test.end_line)
    except OSError:
        return []
    words = list(dict.fromkeys(w for w in re.findall(r"[A-Za-z_]\w{2,60}", body[:20_000])))[:200]
    if not words:
        return []
    rows = conn.execute(
        f"SELECT s.name, f.path FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.is_test = 0"
        f" AND s.name IN ({','.join('?' * len(words))})",
        words,
    ).fetchall()
    defined: dict[str, set[str]] = {}
    for name, path in rows:
        defined.setdefault(name, set()).add(path)
    return [(next(iter(paths)), name) for name, paths in defined.items() if len(paths) == 1]


def _sure(hit: q.CallHit, explicit: bool, imported_names: set[str]) -> bool:
    """A call resolved well enough to name its file: where files import what they use, the definition is in
    the file or one it imports, or the name itself is imported; elsewhere, one definition of the name."""
    if not explicit:
        return hit.confidence >= CONFIDENT
    return hit.confidence >= CONFIDENT_IMPORTED or (
        hit.confidence >= CONFIDENT and hit.name in imported_names
    )


def _imported_names(conn: sqlite3.Connection, file_id: int) -> set[str]:
    """The names a file imports by name (`from pkg.utils import proxies`, `import { get } from './x'`)."""
    rows = conn.execute("SELECT names FROM imports WHERE file_id = ?", (file_id,)).fetchall()
    return {n for (names,) in rows for n in (names or "").split(",") if n}


def _fixture(path: str) -> bool:
    """Test data and fixtures: code tests use, not code under test."""
    return any(part in FIXTURE_DIRS for part in PurePosixPath(path).parts[:-1])


def _is_test(conn: sqlite3.Connection, path: str) -> bool:
    row = conn.execute("SELECT is_test FROM files WHERE path = ?", (path,)).fetchone()
    return bool(row and row[0])


def _recent(root: Path, paths: list[str]) -> list[str]:
    """The last commits touching these files: `sha date subject (files)`; none outside git."""
    from recall_agent.architecture.history import git

    if not (root / ".git").exists():
        return []
    try:
        done = git(
            root, "log", f"-n{RECENT}", "--format=%x01%h %as %s", "--name-only", "--", *paths, timeout=5.0
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    wanted = set(paths)
    out = []
    for block in done.stdout.split("\x01")[1:]:
        head, *files = [line for line in block.splitlines() if line.strip()]
        head = head if len(head) <= SUBJECT else head[: SUBJECT - 1].rsplit(" ", 1)[0] + "…"
        touched = [f for f in files if f in wanted]
        out.append(f"{head} ({', '.join(touched[:3])})" if touched else head)
    return out
