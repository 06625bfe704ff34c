"""Shared by the capture tests: a session of shell calls written as the client writes it, replayed through
the capture engine."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from transcript_writer import TranscriptWriter  # noqa: E402


def replay_bash(tmp_path: Path, session: str, prompt: str, calls: list[tuple[str, str, int]]) -> Engine:
    """The engine (recording what it judged) after one session that runs `calls` (command, output, exit code)
    in order after `prompt`, its turn ended."""
    w = TranscriptWriter(tmp_path / "s.jsonl", session, str(tmp_path))
    w.prompt(prompt)
    for command, out, code in calls:
        w.bash(command, out, exit_code=code)
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return engine
