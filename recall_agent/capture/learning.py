"""An episode (a failure and what fixed it) as a learning: the wire `Learning` fields plus its `fix` evidence.

- `error_signatures`: each distinct error of the episode, its output without background lines, cut to
  the decisive part (`learnings.extract.decisive`), redacted;
- `resolution_summary` (at most three lines, redacted): what fixed it, built from the evidence — the
  files and functions changed and how (old → new, shortened), the changed command, the packages
  installed — then the agent's own words on the cause when it gave them, then where this came from;
  never the agent's next sentence;
- `file_paths_touched`: the files the fix changed, in their final state (repo-relative);
- `fix`: the same evidence as data (files with symbols and change, command before/after, packages, the
  run that verified it; `source: transcript`);
- `ticket_id` from the branch name (`RECALL_TICKET_PATTERN`), `task_type` from the branch, the files and
  the command; `confidence` 0.7 (below a learning the agent or a person wrote).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from recall_agent.capture import FIX_LINE_MAX, SOURCE_PREFIX, commands, edits, output
from recall_agent.capture.commands import ALREADY_THERE
from recall_agent.capture.engine import Episode

CAPTURE_CONFIDENCE = 0.7
ERROR_TEXT_MAX = 4000
SUMMARY_LINE_MAX = 400
CAUSE_MAX = 300
MAX_FILES = 20
MAX_SIGNATURES = 20

DEFAULT_TICKET_PATTERN = r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9]{1,9}-\d{1,7})(?![0-9.])"
_NOT_PROJECT_KEYS = frozenset(
    [
        "fix",
        "bugfix",
        "hotfix",
        "feat",
        "feature",
        "release",
        "rc",
        "v",
        "ver",
        "version",
        "py",
        "python",
        "node",
        "test",
        "tests",
        "wip",
        "step",
        "part",
    ]
)
_BRANCH_TYPES = [
    (re.compile(r"^(?:fix|bugfix|hotfix|bug)[/_-]", re.I), "bug_fix"),
    (re.compile(r"^(?:feat|feature)[/_-]", re.I), "feature"),
    (re.compile(r"^refactor[/_-]", re.I), "refactor"),
    (re.compile(r"^(?:docs?)[/_-]", re.I), "docs"),
    (re.compile(r"^(?:test|tests)[/_-]", re.I), "test"),
    (re.compile(r"^(?:ci|build)[/_-]", re.I), "ci_fix"),
    (re.compile(r"^(?:deps?|dependabot|renovate|chore/deps)[/_-]", re.I), "dependency"),
    (re.compile(r"^(?:migrat\w*)[/_-]", re.I), "migration"),
]
_DEP_FILES = re.compile(
    r"(?:^|/)(?:requirements[\w.-]*\.txt|pyproject\.toml|setup\.cfg|setup\.py|Pipfile(?:\.lock)?|poetry\.lock|"
    r"uv\.lock|package(?:-lock)?\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.(?:toml|lock)|go\.(?:mod|sum)|Gemfile"
    r"(?:\.lock)?|composer\.(?:json|lock))$"
)
_CI_FILES = re.compile(
    r"(?:^|/)(?:\.github/workflows/|\.gitlab-ci\.yml|Jenkinsfile|\.circleci/|azure-pipelines)"
)
_MIGRATION_FILES = re.compile(r"(?:^|/)(?:migrations?|alembic|db/migrate)/")
# the agent's words that explain a cause, and the ones that only narrate
_CAUSE = re.compile(
    r"(?i)\b(?:because|due to|root cause|the (?:issue|problem|bug|error) (?:is|was)|caus(?:e|es|ed|ing)|"
    r"missing|doesn't|does not|isn't|is not|wasn't|never|instead of|should be|expects?|requires?|only|"
    r"wrong|incorrect(?:ly)?|fails? (?:when|because|to)|returns?|raises?)\b"
)
_FILLER = re.compile(
    r"(?i)^(?:perfect|great|excellent|good|now|let me|let's|i'll|i will|i need|i see|ok(?:ay)?|"
    r"the fix (?:works|is working)|all tests pass|done|summary|here's)\b"
)
_FIX_WORDS = re.compile(
    r"(?i)\b(?:chang|replac|add|instal|pin|renam|mov|remov|correct|switch|updat|fix|us(?:e|ed|ing) )\w*"
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{3,}")
_COMMON = frozenset(
    [
        "error",
        "errors",
        "failed",
        "fails",
        "test",
        "tests",
        "this",
        "that",
        "with",
        "from",
        "file",
        "files",
        "line",
        "none",
        "true",
        "false",
        "self",
        "return",
        "python",
        "python3",
        "pytest",
        "exit",
        "code",
        "traceback",
        "most",
        "recent",
        "call",
        "last",
        "module",
        "named",
        "print",
        "import",
    ]
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
_PACKAGE = re.compile(r"^@?[A-Za-z0-9][\w.\-\[\],/]*(?:(?:[=<>~!]=?|@)[\w.*+\-^]+)?$")


@dataclass(frozen=True)
class Context:
    """Where the session ran."""

    session_id: str
    root: str | None  # the repository's top level (or the session's folder)
    branch: str | None
    repo: str
    agent: str = "claude-code"  # which agent's session it was (readers.CLAUDE / readers.CODEX)


def build(episode: Episode, ctx: Context) -> dict[str, Any] | None:
    from recall_agent.learnings.extract import decisive
    from recall_agent.redact import redact

    signatures = []
    for err in episode.errors[-MAX_SIGNATURES:]:
        text = _without_background(err["text"], episode)
        if text.strip():
            signatures.append(decisive(redact(text), ERROR_TEXT_MAX))
    signatures = [s for s in dict.fromkeys(signatures) if s.strip()]
    if not signatures or all(_says_nothing(s) for s in signatures):
        return None
    # redacted before anything is folded or cut: a secret's structure (a YAML block, `key = value` lines)
    # is what the redaction reads
    episode = replace(
        episode,
        changes=[
            replace(c, old=redact(c.old), new=redact(c.new)) for c in made_the_difference(episode)[:MAX_FILES]
        ],
        said=[redact(t) for t in episode.said],
    )
    files = [_relative(c.path, ctx.root) for c in episode.changes]
    summary = redact(summarize(episode, files))
    if not summary.strip():
        return None
    main = episode.failed.command.main
    return {
        "session_id": ctx.session_id[:128] or None,
        "repo": ctx.repo,
        "file_paths_touched": [redact(f) for f in files],
        "error_signatures": signatures,
        "resolution_summary": summary[:2000],
        "ticket_id": redact(t) if (t := ticket_from_branch(ctx.branch)) else None,
        "task_type": task_type(ctx.branch, files, main.key if main else ""),
        "confidence": CAPTURE_CONFIDENCE,
        "fix": {**_evidence(episode, files, redact, ctx.branch), "agent": ctx.agent},
    }


def made_the_difference(episode: Episode) -> list[edits.FileChange]:
    """The episode's changed files without the agent's own new scripts (a debug script written while
    fixing), unless the check runs that script or nothing else changed."""
    # a reported error's fix is the source edits: the script that verified it is the session's own
    checked = (
        (episode.failed.command,)
        if episode.reported or episode.task
        else (episode.failed.command, episode.passed.command)
    )
    ran = {t.rsplit("/", 1)[-1] for cmd in checked for c in cmd.checks
           for t in (*c.targets, c.family.split(" ", 1)[-1])}  # fmt: skip
    named = episode.errors[-1]["text"] if episode.errors else ""
    ran |= {c.path.rsplit("/", 1)[-1] for c in episode.changes if c.path.rsplit("/", 1)[-1] in named}
    kept = [
        c for c in episode.changes
        if not (c.created or c.path in episode.created) or c.path.rsplit("/", 1)[-1] in ran
    ]  # fmt: skip
    # only the session's new scripts changed: they are the fix when nothing else is, never beside a changed
    # command, a folder lesson, an install or a step (a `cd testbed` slip "fixed" by a results file it wrote)
    return kept or ([] if _other_fix(episode) else episode.changes)


def _other_fix(episode: Episode) -> bool:
    """The episode's evidence holds a fix that is not a file: a changed command, the folder, an install, a
    step run before the check."""
    return bool(
        episode.command_change or episode.inside or episode.created_by or episode.installs or episode.steps
    )


def _says_nothing(signature: str) -> bool:
    """A signature of nothing but `Exit code N` lines: every failure prints it, so a learning keyed on it
    would be offered for any failure at all."""
    return all(output.is_exit_code_line(ln) for ln in signature.splitlines() if ln.strip())


def _without_background(text: str, episode: Episode) -> str:
    keep = [ln for ln in text.splitlines() if output.fold(ln) not in episode.background]
    return "\n".join(keep)


# ---------------------------------------------------------------------- the resolution


def summarize(episode: Episode, files: list[str]) -> str:
    """Three lines at most: the fix, the cause in the agent's words, where it came from."""
    fix = _fix_line(episode, files)
    if not fix:
        return ""
    rows = [fix]
    cause = cause_sentence(episode.said, _subject_words(episode, files))
    if cause:
        rows.append(f"Cause (agent): {cause}")
    verified = _shown(episode.passed.command)
    source = "edits" if episode.changes else "commands"
    if episode.reported:  # no run of the session failed with it: the user's prompt quoted it
        quoted = _cut(episode.errors[-1]["text"].splitlines()[-1], 100) if episode.errors else ""
        source = f"prompt, which reported `{quoted}`, and its edits"
    if episode.task:  # no error at all: the task the prompt asked for, done by source edits a run verified
        source = f"task, `{_cut(episode.errors[-1]['text'], 100)}`, and its edits"
    rows.append(f"{SOURCE_PREFIX}{source}; `{verified}` passed after it.")
    rows[0] = rows[0] if len(rows[0]) <= FIX_LINE_MAX else rows[0][: FIX_LINE_MAX - 1] + "…"
    return "\n".join(r if len(r) <= SUMMARY_LINE_MAX else r[: SUMMARY_LINE_MAX - 1] + "…" for r in rows)


def _fix_line(episode: Episode, files: list[str]) -> str:
    parts = []
    packages = packages_of(episode.installs)
    if packages:
        parts.append("Installed " + ", ".join(f"`{p}`" for p in packages[:5]) + ".")
    elif episode.installs:
        parts.append(f"Ran `{_cut(episode.installs[-1])}`.")
    # the shell already inside the folder: a clone made from there nests it (`testbed/testbed`), so that
    # `created it` would contradict the lesson below
    if episode.created_by and not episode.inside:
        missing = ", ".join(f"`{m}`" for m in episode.missing[:3])
        parts.append(
            f"{missing or 'The missing path'} did not exist: created it with `{_cut(episode.created_by)}`."
        )
    if episode.inside and not episode.changes:
        lesson = _inside_lesson(episode)
        parts.append(
            f"The shell was already in `{episode.inside}` (the folder carries over between calls): {lesson}."
            if lesson
            else f"The shell was already in `{episode.inside}` (the folder carries over between calls)"
            + (f": {episode.command_change.removesuffix(ALREADY_THERE)}." if episode.command_change else ".")
        )
    elif episode.command_change and not episode.changes:
        parts.append(f"Fixed by the command: {episode.command_change}.")
    if episode.steps and not episode.changes and not episode.created_by:
        room = FIX_LINE_MAX - len("Environment: ") - sum(len(p) + 1 for p in parts)
        parts.append(_steps(episode.steps, room))
        parts = [p for p in parts if p]
    if parts and fix_kind(episode) == "environment":
        return "Environment: " + " ".join(parts)
    if episode.changes:
        beside = _beside_edits(episode, FIX_LINE_MAX // 3 - sum(len(p) + 1 for p in parts))
        parts.extend([beside] if beside else [])
        rest = sum(len(p) + 1 for p in parts)
        parts.insert(0, _changed(episode, files, FIX_LINE_MAX - rest))
    return " ".join(parts)


def _beside_edits(episode: Episode, room: int) -> str:
    """What else the fix did when it also changed files, in `room` characters: the folder lesson when the
    shell was already inside (no edit fixes a `cd testbed` slip), else the changed command (`python -m pytest`
    failed under another interpreter, `python3 -m pytest` passed): a part of the fix that the files alone do
    not say, so the line never credits the edit with all of it. Its differing words when the whole does not
    fit; nothing when even they do not."""
    lesson = _inside_lesson(episode) if episode.inside else None
    if lesson:
        text = f"The shell was already in `{episode.inside}`: {lesson}."
        if len(text) <= room:
            return text
    change = episode.command_change
    if (
        not change
        or episode.created_by
        or not _another_program(episode.failed.command, episode.passed.command)
    ):
        return ""  # another script or test checked the edits: how the check was run is not the fix
    text = f"Also the command: {change.removesuffix(ALREADY_THERE)}."
    if len(text) <= room:
        return text
    lead = commands.change(episode.failed.command, episode.passed.command, context=False)
    if lead and lead != change and len(f"Also the command: {lead}.") <= room:
        return f"Also the command: {lead}."  # what changed, without the passing line around it
    side = (room - len("Also the command: `` instead of ``.")) // 2
    for context in (1, 0):
        before, after = commands.differing(episode.failed.command.text, episode.passed.command.text, context)
        if max(len(before), len(after)) <= side:
            break
    if side < STEP_MIN:
        return ""
    return f"Also the command: `{_cut(after, side)}` instead of `{_cut(before, side)}`."


def _another_program(failed: commands.Command, passed: commands.Command) -> bool:
    """Both run the same script or tests (by file name) under another program: another interpreter
    (`python` → `python3`), without `python -m`. A test selection or a folder changed is how the edits were
    checked, not part of the fix."""
    a, b = failed.main, passed.main
    if a is None or b is None or a.key.split()[:1] == b.key.split()[:1]:
        return False
    names = [{t.split("::", 1)[0].rsplit("/", 1)[-1] for t in c.targets} for c in (a, b)]
    return bool(names[0]) and names[0] == names[1]


STEP_MIN = 24  # characters of a step below which it is counted, not shown


def _steps(steps: list[str], room: int) -> str:
    """`Ran `a` then `b` before it.` in `room` characters: every step's start shown when they fit (what a
    command is, `npm install`, `timeout 60 go test`, is at its start), the room shared among them; else
    the steps nearest the check, the earlier ones counted."""
    for n in range(len(steps), 0, -1):
        more = f" (and {len(steps) - n} earlier)" if n < len(steps) else ""
        free = room - len("Ran  before it.") - len(more) - (n - 1) * len(" then ") - 2 * n
        if free // n >= STEP_MIN:
            shown = [f"`{_cut(_without_cd(x), min(120, free // n))}`" for x in steps[-n:]]
            return f"Ran {' then '.join(shown)}{more} before it."
    counted = f"Ran {len(steps)} other command{'s' if len(steps) > 1 else ''} before it."
    return counted if len(counted) <= room else ""


_LEADING_CD = re.compile(r"^\s*cd +(?:\"[^\"]*\"|'[^']*'|\S+) *(?:&&|;) *")


def _without_cd(command: str) -> str:
    """A step without its leading `cd DIR &&` (the evidence keeps it): what it ran is what a reader needs."""
    return _LEADING_CD.sub("", command, count=1) or command


FILES_SHOWN = 3
PLACES_SHOWN = 3  # places of one file's change shown, as they fit
CHANGE_SIDE_MIN = 24  # characters of old and of new text below which a file is named without its change


def _changed(episode: Episode, files: list[str], room: int) -> str:
    """`Changed `a.py` (`f`): `old` → `new`; `b.py` …` within `room` characters: the project's source files
    first, then tests, then files the session created; each shown file named with its functions before any
    change text is shown, the old → new text cut to share what is left (never the next file's name)."""
    pairs = sorted(zip(episode.changes, files, strict=True), key=lambda cp: _rank(cp[0], cp[1], episode))
    shown = pairs[:FILES_SHOWN]
    more = f"; and {len(pairs) - FILES_SHOWN} more file(s)" if len(pairs) > FILES_SHOWN else ""
    room -= len("Changed .") + len(more) + 2 * (len(shown) - 1)
    per_file = max(1, room // len(shown))
    described = []
    named = _error_words(episode)
    for change, path in shown:
        symbols = _named_first(change.symbols, named)
        where = f"`{path}`" + (f" (`{_symbols(symbols, per_file // 2)}`)" if symbols else "")
        side = (per_file - len(where) - len(": `` → ``") - edits.MORE_MAX) // 2
        if change.created or side >= CHANGE_SIDE_MIN:
            described.append(f"{where}: {edits.describe(change, min(side, edits.CHANGE_MAX), PLACES_SHOWN)}")
        else:
            described.append(where)
    return f"Changed {'; '.join(described)}{more}."


def _rank(change: edits.FileChange, path: str, episode: Episode) -> int:
    """0 the project's source, 1 its tests, 2 a file the session created (a script, a new test)."""
    if change.created or change.path in episode.created:
        return 2
    return 1 if edits.TEST_FILE.search(path) else 0


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _error_words(episode: Episode) -> set[str]:
    """The identifiers the episode's errors print (a failing test's name, the function in a traceback)."""
    return {w for e in episode.errors[-MAX_SIGNATURES:] for w in _WORD.findall(e["text"][-ERROR_TEXT_MAX:])}


def _named_first(symbols: list[str], named: set[str]) -> list[str]:
    """The changed functions the error names first (`test_show_fixtures_testmodule` failed, and the fix
    changed five tests of that class): the one a reader looks for is then the one shown when few fit."""
    return sorted(symbols, key=lambda s: s.rsplit(".", 1)[-1] not in named)


def _symbols(symbols: list[str], room: int) -> str:
    """As many of the changed functions as fit in `room` (at least one), the first whole and the rest
    without the class they share with it (`T.test_a, test_b`)."""
    outer = symbols[0].rsplit(".", 1)[0] + "." if "." in symbols[0] else ""
    names = [symbols[0], *(s.removeprefix(outer) if outer else s for s in symbols[1:])]
    text = names[0]
    for name in names[1:]:
        if len(text) + 2 + len(name) > room:
            break
        text += ", " + name
    return text


def _inside_lesson(episode: Episode) -> str | None:
    """What the failing command did that the shell being inside the folder already undid, said as what to
    leave out: its `cd testbed` (`cd testbed && pytest`), else the folder's prefix on its paths (`ls
    testbed/sympy`). Whatever run later passed, that is the fix a later session needs."""
    folder = episode.inside or ""
    failed, passed = episode.failed.command, episode.passed.command
    if passed.cwd and passed.cwd != failed.cwd:
        return None  # it went somewhere else by its own `cd` (a full path): the changed command says where
    cds = [c.targets[0] for c in failed.checks if c.family == "cd" and c.targets]
    for target in [*([failed.cwd] if failed.cwd else []), *cds]:
        if target.removeprefix("./").split("/", 1)[0] == folder:
            return f"ran it without `cd {_cut(target, 80)}`"
    # `testbed/x` is `x` from inside it, and `testbed` itself (`find testbed`, `pip install -e ./testbed`) is `.`
    named = [m for m in episode.missing if m.removeprefix("./").split("/", 1)[0] == folder]
    if named:
        inner = named[0].removeprefix("./").removeprefix(folder).lstrip("/") or "."
        return f"used the paths without their `{folder}/` prefix (`{_cut(inner, 80)}` for `{_cut(named[0], 80)}`)"
    return None


def fix_kind(episode: Episode) -> str:
    """`project` when the fix changed the project's files, else `environment` (the machine and its tools:
    an install, another command or interpreter, a folder, a step run before the check)."""
    return "project" if episode.changes else "environment"


def _subject_words(episode: Episode, files: list[str]) -> set[str]:
    """Words that tie a sentence to this episode: identifiers of the error lines, the files and
    functions changed, the commands."""
    text = " ".join(
        [
            *[ln for e in episode.errors for ln in output.error_lines(output.lines_of(e["text"]), ())][-6:],
            *(f.rsplit("/", 1)[-1] for f in files),
            *(s for c in episode.changes for s in c.symbols),
            episode.failed.command.text,
            episode.passed.command.text,
        ]
    )
    return {w.lower() for w in _IDENT.findall(text)} - _COMMON


def cause_sentence(said: list[str], subject: set[str] | None = None) -> str | None:
    """The agent's sentence that best says why it failed (said before the fix, if at all), and the next
    one when it says more about it; filler skipped, and with `subject`, only sentences that name something
    of this episode (an identifier of its error, a changed file or function, its command)."""
    sentences: list[tuple[int, str]] = []
    for text in said:
        clean = re.sub(r"```.*?```", " ", text, flags=re.S).replace("**", "")
        for sentence in _SENTENCE.split(" ".join(clean.split())):
            sentence = sentence.strip(" -*#:")
            if len(sentence) < 20 or _FILLER.match(sentence):
                continue
            related = subject is None or bool({w.lower() for w in _IDENT.findall(sentence)} & subject)
            sentences.append((len(_CAUSE.findall(sentence)) if related else 0, sentence))
    scored = [(score, -i, i) for i, (score, _) in enumerate(sentences) if score]
    if not scored:
        return None
    _, _, at = max(scored)
    text = sentences[at][1]
    if at + 1 < len(sentences):
        following = sentences[at + 1][1]
        says_more = sentences[at + 1][0] or _FIX_WORDS.search(following)
        if says_more and len(text) + len(following) < CAUSE_MAX:
            text += " " + following
    return text if len(text) <= CAUSE_MAX else text[: CAUSE_MAX - 1] + "…"


def packages_of(installs: list[str]) -> list[str]:
    """Package names (and pins) of install commands: `pip install 'numpy<2' requests` -> numpy<2, requests."""
    found = []
    for command in installs:
        for check in commands.parse(command).checks:
            if check.family in commands.INSTALLS or check.family.startswith("uv pip"):
                found.extend(t for t in check.targets if _PACKAGE.match(t) and t not in ("install", "."))
    return list(dict.fromkeys(found))


def _evidence(episode: Episode, files: list[str], redact: Any, branch: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"source": "transcript", "kind": fix_kind(episode)}
    if branch:
        out["branch"] = redact(branch)[:250]
    if episode.changes:
        out["files"] = [
            {
                "path": redact(path),
                "symbols": change.symbols[:10],
                "change": redact(edits.describe(change))[:400],
            }
            for change, path in zip(episode.changes, files, strict=True)
        ]
    if episode.command_change:
        out["command"] = {
            "before": redact(episode.failed.command.text)[:1000],
            "after": redact(episode.passed.command.text)[:1000],
        }
    packages = packages_of(episode.installs)
    if packages:
        out["packages"] = [_package(p) for p in packages[:20]]
    # what ran before the check: an install that names no package (`npm install`), `go mod tidy`, `mv a b`
    steps = [*([] if packages else episode.installs[-2:]), *episode.steps] if not episode.changes else []
    if steps:
        out["steps"] = [redact(c)[:1000] for c in steps[:5]]
    # beside edits too: the lesson is shown there (`_beside_edits`), and it is the row it joins
    if episode.inside:
        out["folder"] = {"path": redact(episode.inside)[:1000], "cause": "shell_inside"}
    elif episode.created_by and episode.missing:
        out["folder"] = {"path": redact(episode.missing[0])[:1000], "cause": "created"}
    out["verified_by"] = redact(episode.passed.command.text)[:1000]
    if episode.reported:
        out["reported"] = True
    if episode.task:
        out["task"] = True
    out["calls"] = [*(e["id"] for e in episode.errors[-20:]), episode.passed.id]
    return out


def _package(spec: str) -> dict[str, Any]:
    m = re.match(r"^(@?[A-Za-z0-9][\w.\-/]*)(?:\[[^\]]*\])?(?:(?:[=<>~!]=?|@)([\w.*+\-^]+))?$", spec)
    name, version = (m.group(1), m.group(2)) if m else (spec, None)
    return {"name": name[:200], "version": version[:64] if version else None}


def _shown(command: commands.Command) -> str:
    main = command.main
    return _cut(main.key if main else command.text)


def _cut(text: str, limit: int = 120) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]")


def _relative(path: str, root: str | None) -> str:
    """Repo-relative when the file lies in the repository, else as the session named it."""
    if root and _WINDOWS_PATH.match(root):  # a Windows session read here: its paths are not this machine's
        inner, top = path.replace("\\", "/"), root.replace("\\", "/").rstrip("/") + "/"
        return inner[len(top) :] if inner.lower().startswith(top.lower()) else path
    if root:
        try:
            return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
        except (ValueError, OSError):
            pass
        if not path.startswith("/"):
            rel = path.removeprefix("./")
            base = root.removeprefix("./").rstrip("/") + "/"
            return rel.removeprefix(base) if base != "/" else rel
    return path


# ---------------------------------------------------------------------- ticket and task type


def current_branch(root: Path) -> str | None:
    """The checked-out branch (`recall_agent.repo.current_branch`)."""
    from recall_agent import repo

    return repo.current_branch(root)


def ticket_from_branch(branch: str | None) -> str | None:
    if not branch:
        return None
    pattern = os.environ.get("RECALL_TICKET_PATTERN") or DEFAULT_TICKET_PATTERN
    try:
        matches = list(re.finditer(pattern, branch))
    except re.error:
        from recall_agent.hooks.runtime import log

        log("capture", f"RECALL_TICKET_PATTERN is not a valid regex: {pattern!r}")
        pattern = DEFAULT_TICKET_PATTERN
        matches = list(re.finditer(pattern, branch))
    for match in matches:
        ticket = match.group(1) if match.groups() else match.group(0)
        if pattern == DEFAULT_TICKET_PATTERN and ticket.split("-")[0].lower() in _NOT_PROJECT_KEYS:
            continue  # fix-42, release-3: branch words, not tracker keys
        return (
            ticket.upper()[:64] if re.fullmatch(r"(?<![A-Za-z0-9])[A-Za-z0-9]+-\d+", ticket) else ticket[:64]
        )
    return None


def task_type(branch: str | None, files: list[str], command: str) -> str:
    """Wire task type: branch prefix first, then what the files are, then the failing command."""
    if branch:
        tail = branch.split("/", 1)[-1] if branch.count("/") > 1 else branch
        for pattern, kind in _BRANCH_TYPES:
            if pattern.search(branch) or pattern.search(tail):
                return kind
    if files:
        if all(f.endswith((".md", ".rst", ".txt")) and not _DEP_FILES.search(f) for f in files):
            return "docs"
        if any(_MIGRATION_FILES.search(f) for f in files):
            return "migration"
        if any(_CI_FILES.search(f) for f in files):
            return "ci_fix"
        if all(_DEP_FILES.search(f) for f in files):
            return "dependency"
        if all(edits.TEST_FILE.search(f) for f in files):
            return "test"
    if re.match(
        r"^\s*(?:pip|uv|poetry|npm|yarn|pnpm|cargo|bundle|go)\s+(?:install|add|sync|get|update)\b", command
    ):
        return "dependency"
    return "bug_fix" if files else "unknown"
