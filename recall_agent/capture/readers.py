"""Which reader reads a session file: one module per agent's transcript format, the same steps out.

- Claude Code: `transcript.py` (`~/.claude/projects/<folder>/<session>.jsonl`);
- Codex CLI: `codex_transcript.py` (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]`).

A third agent's format is another reader module and a line here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CLAUDE = "claude-code"
CODEX = "codex"
# the names `recall import-sessions --agent` takes, and the agent each one means
CLI_NAMES = {"claude": CLAUDE, "codex": CODEX}


def agent_of(path: Path) -> str:
    """The agent that wrote a session file, from its name (Codex names every rollout `rollout-*`)."""
    from recall_agent.capture.codex_transcript import is_rollout

    return CODEX if is_rollout(path) else CLAUDE


def open_reader(
    path: Path, start: int = 0, calls: dict[str, Any] | None = None, agent: str | None = None
) -> Any:
    """The reader of `agent`'s format (default: told by the file's name), reading from `start` (calls read
    before it still waiting for their results)."""
    if (agent or agent_of(path)) == CODEX:
        from recall_agent.capture.codex_transcript import CodexRollout

        return CodexRollout(path, start=start, calls=calls or {})
    from recall_agent.capture.transcript import Transcript

    return Transcript(path, start=start, calls=calls or {})
