"""Where recall keeps its data and which environment variables steer it (read lazily, never cached)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_HOME = "RECALL_HOME"
ENV_RETRIEVAL_URL = "AGENT_LEARNING_RETRIEVAL_URL"
ENV_FEDERATION_URL = "KNOWLEDGE_FEDERATION_URL"
ENV_DATABASE_URL = "RECALL_DATABASE_URL"
ENV_QDRANT_URL = "QDRANT_URL"
ENV_TOKEN = "RECALL_TOKEN"
ENV_EMBEDDINGS_URL = "RECALL_EMBEDDINGS_URL"

DEFAULT_RETRIEVAL_PATH = "/v1/nodes/node_agent_learning_retrieval_effect/execute"
DEFAULT_FEDERATION_PATH = "/v1/nodes/node_knowledge_query_federation_orchestrator/execute"


LEARNINGS_DB = "learnings.db"  # the embedded learnings store, under recall_home()


def learnings_db(home: Path | None = None) -> Path:
    """The embedded learnings store's file (it may not exist yet: nothing learned)."""
    return (home or recall_home()) / LEARNINGS_DB


def recall_home() -> Path:
    """$RECALL_HOME, else $XDG_DATA_HOME/recall, else ~/.local/share/recall. Not created here."""
    explicit = os.environ.get(ENV_HOME)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "recall"


def ensure_home() -> Path:
    home = recall_home()
    home.mkdir(parents=True, exist_ok=True)
    return home


def claude_projects_dir() -> Path:
    """Where Claude Code keeps session transcripts: `$CLAUDE_CONFIG_DIR/projects`, else ~/.claude/projects."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def codex_home() -> Path:
    """Codex CLI's home: `$CODEX_HOME`, else ~/.codex (sessions, config.toml, hooks.json)."""
    base = os.environ.get("CODEX_HOME")
    return Path(base).expanduser() if base else Path.home() / ".codex"


def codex_sessions_dir() -> Path:
    """Where Codex CLI keeps rollouts: `<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]`."""
    return codex_home() / "sessions"


def claude_project_dir_names(folder: Path) -> list[str]:
    """The transcript folder names Claude Code gives a working directory: `/` replaced by `-` (older
    versions), and every character but letters and digits replaced by `-` (current versions)."""
    import re

    text = str(folder)
    return list(dict.fromkeys([text.replace("/", "-"), re.sub(r"[^A-Za-z0-9]", "-", text)]))
