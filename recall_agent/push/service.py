"""The pushed context for a checkout, as the hooks and the MCP tool ask for it (one place for both)."""

from __future__ import annotations

from pathlib import Path


def _where(cwd: str) -> tuple[Path, Path | None, tuple[str, ...]]:
    """The folder, its git top level, and the names its repository's learnings are filed under (its
    identity, as capture files them, then the folder's name of a store written before identities)."""
    from recall_agent import repo

    here = Path(cwd)
    root = repo.toplevel(here)
    return here, root, repo.aliases(here, root)


def session_start(cwd: str, *, record: bool = False) -> str:
    """The framed pitfalls block for the repository at `cwd`, or ""."""
    from recall_agent.config import learnings_db
    from recall_agent.push import ledger, pitfalls

    here, root, names = _where(cwd)
    text, n = pitfalls.block(pitfalls.collect(learnings_db(), names, root or here))
    if text and record:
        ledger.record("session_start", text, n, names[0])
    return text


def task_start(prompt: str, cwd: str, *, record: bool = False, kind: str = "prompt") -> str:
    """The framed code area for a task prompt in the repository at `cwd`, or ""."""
    from recall_agent.push import ledger, task

    if not task.reads_as_task(prompt):
        return ""
    here, root, names = _where(cwd)
    area = task.locate(prompt, root or here)
    text = task.block(area, prompt)
    if text:
        text = _with_learnings(text, area, names, root or here)
    if text and record:
        ledger.record(kind, text, len(area.files), names[0])
    return text


LEARNINGS_HEADER = "recall: earlier fixes in these files (from learnings of earlier sessions):"


def _with_learnings(text: str, area: object, names: tuple[str, ...], root: Path) -> str:
    """The code area's block, followed by up to two trusted learnings whose fix touched its files."""
    from recall_agent.config import learnings_db
    from recall_agent.push import ledger, pitfalls
    from recall_agent.safety import injection_block, render

    paths = [p for p, _ in getattr(area, "files", [])]
    found = pitfalls.touching(learnings_db(), names, paths, root)
    if not found:
        return text
    block = injection_block(found, LEARNINGS_HEADER, pitfalls.learning_line)
    extra = block.removeprefix(render.FRAME + "\n")  # one framing line for the whole injection
    joined = f"{text}\n{extra}" if extra else text
    return joined if ledger.tokens(joined) <= 300 else text
