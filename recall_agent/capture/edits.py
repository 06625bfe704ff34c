"""What an edit changed, from the transcript: the file, the function or class around the change, and the
lines before and after it.

Claude Code writes an edit's `old_string` / `new_string` (or a Write's `content`) in the call, and the file
as it was before the edit (`originalFile`) with the hunk's line numbers (`structuredPatch`) in the result.
The enclosing definition is found by walking up from the hunk's first line to the nearest less-indented
line that defines something (`def`, `class`, `function`, `func`, `fn`, a method signature); no parser is
loaded. Edits of one file in one fix are folded into one change: the first old text and the last new text,
so a file edited twice counts once, and a file edited back to what it was counts not at all.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

CHANGE_MAX = 160  # characters of old / new text kept for the summary
SYMBOLS_MAX = 6
DIFF_CELLS_MAX = 250_000  # lines × lines of the two sides' changed middle a line diff may cost

_DEF = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:export|default|public|private|protected|static|async|final|abstract|override|"
    r"pub(?:\([\w:]+\))?|unsafe|extern|inline|virtual)\s+)*"
    r"(?:(?P<kw>def|class|function|func|fn|interface|struct|enum|trait|impl|module|object|type)\s+"
    r"(?:\([^)]{0,80}\)\s*)?(?P<name>[A-Za-z_$][\w$]*)"
    r"|(?P<method>[A-Za-z_$][\w$]*)\s*\([^)]{0,200}\)\s*(?::[^{]{0,80})?\{\s*$)"
)
_NAME_IN_NEW = re.compile(
    r"^[ \t]*(?:async\s+)?(?:def|class|function|func|fn)\s+(?:\([^)]{0,80}\)\s*)?([A-Za-z_$][\w$]*)", re.M
)
_CLOSERS = frozenset(")]}")
_NOT_METHODS = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "else", "elif", "try"})


@dataclass
class FileChange:
    """The net change of one file within one fix."""

    path: str
    created: bool = False  # the session created the file
    symbols: list[str] = field(default_factory=list)
    old: str = ""  # the first edit's old text (nothing for a created file)
    new: str = ""  # the last edit's new text (a Write's content)
    edits: int = 0

    def reverted(self) -> bool:
        return not self.created and self.edits > 0 and _norm(self.old) == _norm(self.new)

    def to_state(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ("", [], False, 0)}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> FileChange:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def change_of(tool: str, tool_input: dict[str, Any], details: dict[str, Any], path: str) -> FileChange:
    """The change one Edit / MultiEdit / Write call made (its result's `details` may be {})."""
    original = details.get("originalFile") if isinstance(details.get("originalFile"), str) else None
    created = tool == "Write" and (details.get("type") == "create" or original is None)
    if tool == "Write":
        content = str(tool_input.get("content") or "")
        if created:
            return FileChange(path, created=True, symbols=_defined(content), old="", new=content, edits=1)
        # a file written over: the change is between what it held and what it holds now
        before = original or ""
        symbols = _symbols_at(before, _line_of_change(before, content), content)
        return FileChange(path, symbols=symbols, old=before, new=content, edits=1)
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    edits = [e for e in edits or [] if isinstance(e, dict)]
    old = "\n".join(str(e.get("old_string") or "") for e in edits)
    new = "\n".join(str(e.get("new_string") or "") for e in edits)
    kept = set(old.splitlines())
    added = "\n".join(ln for ln in new.splitlines() if ln not in kept)  # a def both sides show is not new
    symbols = _symbols_at(original or "", _first_line(details), added)
    if not symbols and original:
        symbols = _symbols_at(original, _line_of(original, old), added)
    # no `originalFile` (some clients): a definition the old text holds
    if not symbols and not original and old:
        symbols = _symbols_at(old, _line_of_change(old, new) or len(old.splitlines()), added)
    return FileChange(path, symbols=symbols, old=old, new=new, edits=1)


def written_lines(tool: str, tool_input: dict[str, Any]) -> list[str]:
    """The lines an Edit / MultiEdit / Write call put into a file that were not there before, from its input
    alone (no result needed): the session's own code, which a later fix may change again. Lines too short
    to tell code apart (`}`, `)`, `else:`) are left out."""
    if tool == "Write":
        added = str(tool_input.get("content") or "").splitlines()
        gone: set[str] = set()
    else:
        edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
        edits = [e for e in edits or [] if isinstance(e, dict)]
        added = [ln for e in edits for ln in str(e.get("new_string") or "").splitlines()]
        gone = {ln.strip() for e in edits for ln in str(e.get("old_string") or "").splitlines()}
    return [ln for ln in added if len(ln.strip()) >= 8 and ln.strip() not in gone]


# a test file, by its path (`tests/x.py`, `test_x.py`, `x_test.go`, `x.spec.ts`, `conftest.py`)
TEST_FILE = re.compile(
    r"(?:^|/)(?:tests?/|test_[^/]+$|[^/]+_test\.\w+$|[^/]+\.(?:test|spec)\.\w+$|conftest\.py$)"
)


def line_mark(line: str, path: str = "") -> int:
    """A line of code's identity in a file (by the file's name), whitespace folded, hashed small (kept in the
    session state): a line the session wrote into its own script is not the library line it copied."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return zlib.crc32(f"{name}\0{' '.join(line.split())}".encode("utf-8", "replace"))


def replaced_lines(change: FileChange) -> list[str]:
    """The lines a fix took out or changed (its first old text's lines that its last new text has not)."""
    new = {ln.strip() for ln in change.new.splitlines()}
    return [ln for ln in change.old.splitlines() if len(ln.strip()) >= 8 and ln.strip() not in new]


def fold(earlier: FileChange, later: FileChange) -> FileChange:
    """Two changes of one file in one fix: the first old text, the last new text, every symbol."""
    symbols = list(dict.fromkeys([*earlier.symbols, *later.symbols]))[:SYMBOLS_MAX]
    if later.created:
        return FileChange(earlier.path, True, symbols, "", later.new, earlier.edits + 1)
    if earlier.created:
        return FileChange(earlier.path, True, symbols, "", later.new, earlier.edits + 1)
    old = earlier.old if earlier.old else later.old
    if earlier.new and later.old and later.old not in earlier.new:
        old = earlier.old + "\n" + later.old  # two places in the file: keep both
        return FileChange(
            earlier.path, False, symbols, old, earlier.new + "\n" + later.new, earlier.edits + 1
        )
    new = (
        earlier.new.replace(later.old, later.new, 1) if later.old and later.old in earlier.new else later.new
    )
    return FileChange(earlier.path, False, symbols, old, new, earlier.edits + 1)


def describe(change: FileChange, limit: int = CHANGE_MAX, places: int = 1) -> str:
    """What changed: each place that differs as `old` → `new` (`added …`, `removed …`), each side cut to
    `limit` characters, the lines both sides keep left out. One place (the first) by default: the form the
    fix evidence keeps and the self-check reads (`selfcheck.parse_change`); with `places` > 1 (a summary),
    as many more as fit in `2 × limit` characters, then how many were left out (MORE_MAX characters more)."""
    if change.created:
        return "created"
    found = _differing(change.old, change.new)
    if not found:
        return "no change"
    total = 2 * limit + len("`` → ``")  # what one place shows at most; more places share it
    shown = [_place(*found[0], limit, both=places > 1)]
    if places == 1:
        return shown[0]
    for old, new in found[1:places]:
        left = len(found) - len(shown) - 1
        room = total - len(" … ".join(shown)) - len(" … ") - (len(_more(left)) if left else 0)
        if room < 2 * PLACE_SIDE_MIN + len("`` → ``"):
            break
        shown.append(_place(old, new, (room - len("`` → ``")) // 2, both=True))
    left = len(found) - len(shown)
    return " … ".join(shown) + (_more(left) if left else "")


MORE_MAX = len(" (and 999 more places)")
PLACE_SIDE_MIN = 12  # characters of a further place's old and new text, below which it is counted, not shown


def _place(old: str, new: str, side: int, both: bool) -> str:
    """One place as `old` → `new`, `added …` or `removed …`; `both`: one-sided text may take both sides'
    room (a summary's), else one side's (the evidence's form)."""
    one = max(1, side * 2 - 3) if both else side  # `removed ``` costs what `` → `` does, and 3 more
    if not old:
        return f"added `{_cut(new, one)}`"
    if not new:
        return f"removed `{_cut(old, one)}`"
    if both:  # a summary's: the evidence's form keeps its start, where `selfcheck.parse_change` finds it
        old, new = _from_difference(" ".join(old.split()), " ".join(new.split()), side)
    return f"`{_cut(old, side)}` → `{_cut(new, side)}`"


DIFFERENCE_CONTEXT = 16  # characters kept before the first difference when a long common start is left out


def _from_difference(old: str, new: str, side: int) -> tuple[str, str]:
    """Both sides from a little before their first difference when cutting them at `side` would hide it
    (`x = max_upper + sign…` → `x = max_upper + sign…`): never "X → X". The context before it shrinks with
    the room, so the difference is inside what is shown."""
    start = len(os.path.commonprefix([old, new]))
    context = min(DIFFERENCE_CONTEXT, side // 3)
    if max(len(old), len(new)) <= side or start < side - 1 - context:
        return old, new
    at = max(0, start - context)
    space = old.rfind(" ", max(0, at - context), at)  # from a word's start when one is near
    at = space + 1 if space >= 0 else at
    return "…" + old[at:], "…" + new[at:]


def _more(left: int) -> str:
    return f" (and {left} more place{'s' if left > 1 else ''})"


def _differing(old: str, new: str) -> list[tuple[str, str]]:
    """The places where `old` and `new` differ, by a line diff, each as (its old lines, its new lines): the
    lines both sides keep are left out, so a big hunk is not shown from its unchanged start."""
    import difflib

    a = [ln.strip() for ln in old.splitlines() if ln.strip()]
    b = [ln.strip() for ln in new.splitlines() if ln.strip()]
    while a and b and a[0] == b[0]:
        a, b = a[1:], b[1:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if not a and not b:
        return []
    if len(a) * len(b) > DIFF_CELLS_MAX:  # a file rewritten whole: the diff would cost too much CPU
        return [(" ".join(a), " ".join(b))]
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return [(" ".join(a[i1:i2]), " ".join(b[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _cut(text: str, limit: int = CHANGE_MAX) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _first_line(details: dict[str, Any]) -> int | None:
    patch = details.get("structuredPatch")
    if isinstance(patch, list) and patch and isinstance(patch[0], dict):
        start = patch[0].get("oldStart")
        lines = patch[0].get("lines")
        if isinstance(start, int):
            # the hunk starts with context lines: the first changed line is where the change is
            if isinstance(lines, list):
                for i, ln in enumerate(lines):
                    if isinstance(ln, str) and ln[:1] in "+-":
                        return start + i
            return start
    return None


def _line_of_change(before: str, after: str) -> int | None:
    """The first line where two versions of a file differ (1-based)."""
    for i, (a, b) in enumerate(zip(before.splitlines(), after.splitlines(), strict=False), 1):
        if a != b:
            return i
    return None


def _line_of(text: str, snippet: str) -> int | None:
    at = text.find(snippet.strip()) if snippet.strip() else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _symbols_at(original: str, line: int | None, new: str) -> list[str]:
    """The definitions enclosing `line` of `original` (outermost first, joined: `Class.method`), plus a
    definition the new text adds."""
    found: list[str] = []
    if original and line:
        lines = original.splitlines()
        found = [f for f in (_enclosing(lines, line - 1) or _section(lines, line - 1),) if f]
    added = [m for m in _NAME_IN_NEW.findall(new) if m]
    if added:
        outer = found[0].rsplit(".", 1)[0] if found and "." in found[0] else (found[0] if found else "")
        prefix = outer + "." if outer and not _defines_class(new, added[0]) else ""
        found = [*(f"{prefix}{a}" for a in added[:SYMBOLS_MAX]), *found]
    return list(dict.fromkeys(found))[:SYMBOLS_MAX]


_SECTION = re.compile(r"^\[\[?([A-Za-z_][\w.\-]{0,100})\]\]?[ \t]*(?:#.*)?$")


def _section(lines: list[str], index: int) -> str:
    """The TOML / INI section a line of a configuration file is in (`tool.mypy.overrides`)."""
    for line in reversed(lines[max(0, index - 2000) : index + 1]):
        m = _SECTION.match(line)
        if m:
            return m.group(1)
    return ""


def _defines_class(new: str, name: str) -> bool:
    return re.search(rf"^[ \t]*class\s+{re.escape(name)}\b", new, re.M) is not None


def _enclosing(lines: list[str], index: int) -> str:
    """`Outer.inner` for the definitions around line `index` (0-based), found by indentation."""
    if not 0 <= index < len(lines):
        return ""
    names: list[str] = []
    limit = _indent(lines[index]) if lines[index].strip() else 10**6
    for i in range(index, max(-1, index - 2000), -1):
        line = lines[i]
        if not line.strip() or line.lstrip()[:1] in _CLOSERS:
            continue  # a closing line (`) -> None:` of a signature over several lines) opens nothing
        width = _indent(line)
        if width >= limit and i != index:
            continue
        m = _DEF.match(line)
        name = (m.group("name") or m.group("method")) if m else None
        if name and name not in _NOT_METHODS and (width < limit or i == index):
            names.append(name)
            limit = width
            if width == 0:
                break
        elif width < limit:
            limit = width
    return ".".join(reversed(names))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _defined(content: str) -> list[str]:
    """Top-level definitions of a new file."""
    names = [m.group(1) for m in _NAME_IN_NEW.finditer(content) if not m.group(0)[:1].isspace()]
    return names[:SYMBOLS_MAX]
