"""Stop / SessionEnd: read what the session's transcript gained since the last read, with the capture
engine (`recall_agent.capture`), and store the errors it fixed as learnings. The transcript is Claude
Code's, or a Codex CLI rollout (`transcript_path` of Codex's Stop hook); `capture.readers` picks the reader.

The engine is the one `recall import-sessions` runs; here it reads incrementally. Its state (per transcript
file: the offset read to, the calls still waiting for results, the open errors, recent edits and the
background lines) lives in `$RECALL_HOME/sessions/<session>.capture.json`, next to the hooks' session file,
and `<session>.offset` holds the main transcript's offset for the entry script, which starts Python at
Stop only when the transcript grew. Subagents' transcripts (`<session>/subagents/*.jsonl`) are read too.

Learnings are redacted, then stored with `open_store().add()`, or POSTed to `$RECALL_SERVER_URL/v1/learnings`
(Bearer `RECALL_TOKEN`) when set; if the server cannot take them they are kept locally and the log says so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recall_agent import repo, session
from recall_agent.hooks.runtime import log

STATE_VERSION = 1
# a first read of a session that recall joined late starts this far from the end (a line boundary)
FIRST_READ_MAX = 8 * 1024 * 1024
PENDING_INPUT_MAX = 4000


@dataclass
class Captured:
    learnings: list[dict[str, Any]] = field(default_factory=list)
    resolved_ids: list[str] = field(default_factory=list)  # failing calls that a later run showed fixed
    verdicts: dict[str, str] = field(default_factory=dict)  # failing call -> "helped" / "hurt" (engine.py)
    state: dict[str, Any] = field(default_factory=dict)  # saved with `save()` once the learnings are stored
    transcript: Path | None = None


def capture_path(session_id: str) -> Path:
    return session.session_path(session_id).with_suffix(".capture.json")


def offset_path(session_id: str) -> Path:
    return session.session_path(session_id).with_suffix(".offset")


def transcript_files(transcript: Path) -> list[Path]:
    """The session's transcript and its subagents' (newer clients: `<session>/subagents/*.jsonl`)."""
    sub = transcript.with_suffix("") / "subagents"
    try:
        extra = sorted(p for p in sub.iterdir() if p.suffix == ".jsonl")
    except OSError:
        extra = []
    return [transcript, *extra]


def capture(session_id: str, payload: dict[str, Any], cwd: str) -> Captured:
    """Read the transcript's new lines and return the learnings they complete. Nothing is stored or saved
    here: the caller stores the learnings, then `save()`s the engine's state (a failed store reads the
    same lines again next time)."""
    from recall_agent.capture import learning
    from recall_agent.capture.engine import Engine
    from recall_agent.capture.readers import agent_of, open_reader
    from recall_agent.capture.transcript import Call

    out = Captured()
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        return out
    state = _load(session_id)
    root = repo.toplevel(Path(cwd))
    ctx = learning.Context(
        session_id=session_id,
        root=str(root) if root else cwd,
        branch=learning.current_branch(root) if root else None,
        repo=repo.identity(Path(cwd), root),
        agent=agent_of(Path(path)),
    )
    files = state.setdefault("files", {})
    for file in transcript_files(Path(path)):
        entry = files.get(str(file)) or {}
        start = int(entry.get("offset") or 0) or _first_offset(file)
        calls = {c["id"]: Call(c["id"], c["name"], c["input"], c["stream"]) for c in entry.get("calls") or []}
        reader = open_reader(file, start=start, calls=calls)
        engine = Engine(entry.get("engine"))
        try:
            engine.feed(reader.steps())
        except OSError as exc:
            log("capture", f"transcript not read: {exc}")
            continue
        engine.end_turn()
        for episode in engine.episodes():
            built = learning.build(episode, ctx)
            if built:
                when = episode.passed.ts
                if when:
                    built["created_at"] = datetime.fromtimestamp(when, UTC).isoformat()
                out.learnings.append(built)
        out.resolved_ids.extend(engine.resolved_ids)
        out.verdicts.update(engine.verdicts)
        files[str(file)] = {
            "offset": reader.end,
            "calls": [_call_state(c) for c in reader.pending()],
            "engine": engine.state(),
        }
    out.state, out.transcript = state, Path(path)
    return out


def _first_offset(file: Path) -> int:
    """0, or for a transcript larger than FIRST_READ_MAX the start of a line that far from its end."""
    try:
        size = file.stat().st_size
        if size <= FIRST_READ_MAX:
            return 0
        with file.open("rb") as fh:
            fh.seek(size - FIRST_READ_MAX)
            fh.readline()
            return fh.tell()
    except OSError:
        return 0


def _call_state(call: Any) -> dict[str, Any]:
    from recall_agent.redact import redact_obj

    small = {k: (v[:PENDING_INPUT_MAX] if isinstance(v, str) else v) for k, v in call.input.items()}
    small = redact_obj(small)
    return {"id": call.id, "name": call.name, "input": small, "stream": call.stream}


def _load(session_id: str) -> dict[str, Any]:
    try:
        data = json.loads(capture_path(session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": STATE_VERSION}
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return {"version": STATE_VERSION}
    return data


def save(session_id: str, found: Captured) -> None:
    """Keep where the read stopped (atomically), and the main transcript's offset for the entry script."""
    import tempfile

    if found.transcript is None:
        return
    state, transcript = found.state, found.transcript
    path = capture_path(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(state, fh, separators=(",", ":"))
    os.replace(tmp, path)
    main = (state.get("files") or {}).get(str(transcript)) or {}
    offset_path(session_id).write_text(str(int(main.get("offset") or 0)), encoding="utf-8")


# ---------------------------------------------------------------------- storing


def store(learnings: list[dict[str, Any]]) -> int:
    """Store (or POST) the learnings; returns how many were written. Raises nothing the caller must handle."""
    from recall_agent.models import Learning

    records = [Learning.model_validate(item) for item in learnings]
    server = os.environ.get("RECALL_SERVER_URL")
    pending = records
    if server:
        pending = [r for r in records if not _post(server, r)]
        if not pending:
            return len(records)
        log("capture", f"server {server} did not take {len(pending)} learning(s); kept locally")
    from recall_agent.learnings.store import open_store

    with open_store() as st:
        for record in pending:
            st.add(record)
    return len(records)


def _post(server: str, learning: Any) -> bool:
    import urllib.error
    import urllib.request

    url = server.rstrip("/") + "/v1/learnings"
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("RECALL_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = learning.model_dump_json().encode()
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=0.8) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError, ValueError) as exc:
        log("capture", f"POST {url} failed: {exc}")
        return False
