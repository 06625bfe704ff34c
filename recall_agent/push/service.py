"""The pushed context for a checkout, as the hooks and the MCP tool ask for it (one place for both)."""

from __future__ import annotations

from pathlib import Path


def _where(cwd: str) -> tuple[Path, Path | None, str]:
    from recall_agent import repo

    here = Path(cwd)
    root = repo.toplevel(here)
    return here, root, repo.name(here, root)


def session_start(cwd: str, *, record: bool = False) -> str:
    """The framed pitfalls block for the repository at `cwd`, or ""."""
    from recall_agent.config import learnings_db
    from recall_agent.push import ledger, pitfalls

    here, root, name = _where(cwd)
    text, n = pitfalls.block(pitfalls.collect(learnings_db(), name, root or here))
    if text and record:
        ledger.record("session_start", text, n, name)
    return text


def task_start(prompt: str, cwd: str, *, record: bool = False, kind: str = "prompt") -> str:
    """The framed code area for a task prompt in the repository at `cwd`, or ""."""
    from recall_agent.push import ledger, task

    if not task.reads_as_task(prompt):
        return ""
    here, root, name = _where(cwd)
    area = task.locate(prompt, root or here)
    text = task.block(area, prompt)
    if text and record:
        ledger.record(kind, text, len(area.files), name)
    return text
