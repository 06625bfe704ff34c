"""A resolution that says the fix (issue 33, eleventh round): when a changed command is the fix and its lines
are long, the stored text leads with what changed between the failing and the passing call (a word-level
difference, finer inside a long word), then the passing line around it; each test a real session's shape,
replayed through the engine and read as the on-error hook shows it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from recall_agent.capture import FIX_LINE_MAX, commands, learning, wording
from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript
from recall_agent.hooks.retrieve import shown_summary

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from transcript_writer import TranscriptWriter  # noqa: E402


def _resolution(w: TranscriptWriter, tmp_path: Path) -> str:
    """The resolution of the session's one learning (an episode the fitted models dropped is read too: what
    is tested is the text, not the models' verdict, which moves with every refit)."""
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    ctx = learning.Context(session_id=w.session_id, root=str(tmp_path), branch="main", repo="r")
    (found,) = [b for e in engine.episodes() or engine.judged_episodes[-1:] if (b := learning.build(e, ctx))]
    resolution = str(found["resolution_summary"])
    first = resolution.splitlines()[0]
    assert len(first) <= FIX_LINE_MAX and not first.endswith("…"), first
    return resolution


def _writer(tmp_path: Path, session: str) -> TranscriptWriter:
    w = TranscriptWriter(tmp_path / f"{session}.jsonl", session, str(tmp_path))
    w.prompt("reproduce the prompt bug with the old binary")
    return w


def test_a_dropped_flag_and_another_subcommand_are_said_first(tmp_path: Path) -> None:
    """oh-my-posh 1617cc26: `print primary … --debug` fails (no such flag), `print debug …` passes. The two
    90-character lines said "X instead of Y" and left the reader to find the difference."""
    w = _writer(tmp_path, "sess-omp-debug")
    scratch = 'SCRATCH="C:/Users/jande/AppData/Local/Temp/claude/D--oh-my-posh/1617cc26/scratchpad" && '
    w.bash(
        scratch + '"$SCRATCH/omp-old.exe" print primary --config "$SCRATCH/repro.json" --shell pwsh --debug',
        "Exit code 1\nError: unknown flag: --debug\nUsage:\n  oh-my-posh print [name] [flags]",
        exit_code=1,
    )
    w.bash(
        scratch + '"$SCRATCH/omp-old.exe" print debug --config "$SCRATCH/repro.json" --shell pwsh',
        "\nConfig path: C:/Users/jande/AppData/Local/Temp/claude/repro.json\n\nSegments:\n\nsession(1.2ms)",
    )
    shown = shown_summary(_resolution(w, tmp_path))
    assert shown.startswith(
        "Environment: Fixed by the command: `print primary` → `print debug`, without `--debug` (`"
    ), shown


def test_the_one_path_quoted_among_many_is_named(tmp_path: Path) -> None:
    """me 14f851c3: zsh globs the unquoted Astro route `[id]` in a long `git add`; the same paths with that
    one quoted pass. The shortened lines showed eight paths each and the quote between them."""
    w = _writer(tmp_path, "sess-me-quote")
    paths = [
        "astro.config.mjs", "package.json", "pnpm-lock.yaml", "src/components/FilterSort.astro",
        "src/content.config.ts", "src/content/works/sample-project.md", "src/pages/works/[id].astro",
        "src/pages/works/index.astro", "src/styles/global.css",
    ]  # fmt: skip
    w.bash(
        f"git add {' '.join(paths)}", "Exit code 1\n(eval):1: no matches found: src/pages/works/[id].astro", 1
    )
    quoted = [f'"{p}"' if "[" in p else p for p in paths]
    w.bash(f"git add {' '.join(quoted)}", "")
    first = _resolution(w, tmp_path).splitlines()[0]
    assert "Fixed by the command: quoted `src/pages/works/[id].astro` (`" in first, first
    assert " instead of " not in first


def test_a_field_dropped_from_a_tool_input_is_said_past_what_its_text_keeps(tmp_path: Path) -> None:
    """neuvector-mcp fa25112f: the WAF sensor's patterns carried a `key` field the server forbids; the same
    call without it passed. A tool call's text keeps 80 characters of each input (what calls are compared
    by), so the dropped field was cut off both lines; the resolution reads the call's longer inputs."""
    w = _writer(tmp_path, "sess-nv-waf")

    def sensor(key: bool) -> dict[str, object]:
        patterns = [
            {"context": "header", **({"key": "pattern"} if key else {}), "op": "regex", "value": value}
            for value in ("^https?://(evil|attacker)\\.", "^null$")
        ]
        return {
            "sensor_name": "sensor.mcp-origin-guard",
            "comment": "Compensating control for mcp SDK 1.6.0 CVE-2026-59950 (WS handshake accepted without an "
            "Origin check); drop when the server moves to 1.28.1.",
            "rules": [{"name": "rule.origin-not-allowed", "patterns": patterns}],
        }

    error = (
        "Error executing tool nv_create_waf_sensor: 1 validation error for WafPattern\nkey\n  Extra inputs are "
        "not permitted [type=extra_forbidden, input_value='pattern', input_type=str]"
    )
    w.tool(
        "mcp__neuvector__nv_create_waf_sensor", sensor(True), [{"type": "text", "text": error}], is_error=True
    )
    ok = '{"name": "sensor.mcp-origin-guard", "rules": 1, "created": true}'
    w.tool(
        "mcp__neuvector__nv_create_waf_sensor", sensor(False), [{"type": "text", "text": ok}], is_error=False
    )
    first = _resolution(w, tmp_path).splitlines()[0]
    assert 'Fixed by the command: without `"key":"pattern",` (2 times) (`' in first, first
    # what compares calls is unchanged: the text keeps 80 characters of each input (the second `key` is past
    # them), the longer inputs are beside it
    short = commands.tool_command("mcp__neuvector__nv_create_waf_sensor", sensor(True))
    assert short.text.count('"key"') == 1 and not short.full


def test_backslashes_turned_to_slashes_are_counted_not_shown_twice(tmp_path: Path) -> None:
    """oh-my-posh 44968378: `wsl wslpath -u` loses the backslashes of a Windows path passed through
    PowerShell; the same line with forward slashes runs."""
    w = _writer(tmp_path, "sess-omp-wslpath")
    path = "C:\\Users\\jande\\AppData\\Local\\Temp\\claude\\D--oh-my-posh\\44968378\\scratchpad\\test_zsh.zsh"
    run = {"description": "Run zsh encoder functional test in WSL"}
    w.tool(
        "PowerShell", {"command": f"$p = wsl wslpath -u '{path}'; wsl zsh $p", **run},
        [{"type": "text", "text": "Exit code 127\nzsh:1: no such file or directory: C:UsersjandeAppData"}],
        is_error=True,
    )  # fmt: skip
    w.tool(
        "PowerShell", {"command": f"$p = wsl wslpath -u '{path.replace(chr(92), '/')}'; wsl zsh $p", **run},
        [{"type": "text", "text": "encoded: ok\ndecoded: ok"}], is_error=False,
    )  # fmt: skip
    first = _resolution(w, tmp_path).splitlines()[0]
    assert "Fixed by the command: `\\` → `/` (10 times) (`" in first, first


def test_short_lines_are_still_read_whole() -> None:
    """A change read at a glance keeps the two lines whole; "X instead of X" never comes back."""
    said = commands.change(commands.parse("npm create vite@latest ."), commands.parse("npm create vite@5 ."))
    assert said == "`npm create vite@5 .` instead of `npm create vite@latest .`"


def test_what_changed_stays_cheap_on_huge_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common start and end are stripped in one pass and only a short middle is compared word by word:
    linear in the line (a long middle is one change, and lines that share too little say nothing). Checked
    by what difflib is given, not by a clock: never more than _DIFF_TOKENS tokens a side."""
    import difflib

    compared: list[int] = []
    matcher = difflib.SequenceMatcher

    def counted(*args: object, **kwargs: object) -> difflib.SequenceMatcher:
        m = matcher(*args, **kwargs)
        compared.append(max(len(m.a), len(m.b)))
        return m

    monkeypatch.setattr(difflib, "SequenceMatcher", counted)
    words = " ".join(f"src/file_{i}.py" for i in range(200_000))
    said = wording.led(
        f"tar czf out.tgz {words} --exclude '*.pyc'", f"tar czf out.tgz {words} --exclude '*.pyo'"
    )
    apart = wording.led(f"tar czf a.tgz {words} x", f"tar czf b.tgz {words} y")
    assert all(n <= wording._DIFF_TOKENS for n in compared)
    assert said is not None and said.startswith(
        "`--exclude '*.pyc'` → `--exclude '*.pyo'` (`… src/file_199999.py"
    )
    assert apart is None
