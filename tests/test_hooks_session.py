"""recall_agent.session: per-session state on disk, concurrent writers, the client's last_recorded_error()."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from recall_agent import session


def _repo(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def test_update_creates_state_and_last_error_reads_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "proj")
    with session.update("s-1", cwd=str(repo / "src")) as state:
        state["errors"].append({"key": "bash:pytest", "text": "E   ImportError: no module named foo"})
    saved = json.loads(session.session_path("s-1").read_text())
    assert saved["repo_root"] == str(repo.resolve())
    assert saved["errors"][0]["key"] == "bash:pytest"
    assert session.last_recorded_error("s-1", repo) == "E   ImportError: no module named foo"
    assert session.last_recorded_error("unknown", repo) is None


def test_last_error_without_session_id_picks_newest_session_in_same_repo(tmp_path: Path) -> None:
    repo, other = _repo(tmp_path, "proj"), _repo(tmp_path, "other")
    with session.update("old", cwd=str(repo)) as state:
        state["errors"].append({"key": "a", "text": "old error"})
    with session.update("elsewhere", cwd=str(other)) as state:
        state["errors"].append({"key": "b", "text": "error in another repo"})
    with session.update("new", cwd=str(repo / "src")) as state:
        state["errors"].append({"key": "c", "text": "newest error here"})
    with session.update("no-errors", cwd=str(repo)) as state:
        state["injected"]["x"] = ["id"]
    import os
    import time

    now = time.time()
    for i, sid in enumerate(["old", "elsewhere", "new", "no-errors"]):
        os.utime(session.session_path(sid), (now + i, now + i))
    assert session.last_recorded_error(None, repo / "src") == "newest error here"
    assert session.last_recorded_error(None, other) == "error in another repo"
    assert session.last_recorded_error(None, tmp_path / "nowhere") is None


def test_odd_session_ids_stay_inside_sessions_dir(tmp_path: Path) -> None:
    for sid in ("../../etc/passwd", "a/b", "a_b"):
        with session.update(sid, cwd=str(tmp_path)) as state:
            state["errors"].append({"key": sid, "text": sid})
    files = sorted(p.name for p in session.sessions_dir().glob("*.json"))
    assert len(files) == 3
    assert all(session.session_path(s).parent == session.sessions_dir() for s in ("a/b", "../x"))
    assert session.last_recorded_error("a/b", tmp_path) == "a/b"
    assert session.last_recorded_error("a_b", tmp_path) == "a_b"


def test_damaged_state_file_is_replaced_not_fatal(tmp_path: Path) -> None:
    path = session.session_path("bad")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert session.last_recorded_error("bad", tmp_path) is None
    with session.update("bad", cwd=str(tmp_path)) as state:
        state["errors"].append({"key": "k", "text": "after repair"})
    assert session.last_recorded_error("bad", tmp_path) == "after repair"


def test_concurrent_writers_lose_no_update(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    """Eight real processes append 12 errors each to one session: all 96 survive."""
    script = textwrap.dedent(
        """
        import sys
        from recall_agent import session
        for i in range(12):
            with session.update("race", cwd=sys.argv[2], lock_timeout_s=10) as st:
                st["errors"].append({"key": f"{sys.argv[1]}-{i}", "text": "x"})
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(n), str(tmp_path)], env=subprocess_env)
        for n in range(8)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0] * 8
    state = session.load("race")
    assert state is not None
    assert len({e["key"] for e in state["errors"]}) == 96


def test_import_is_stdlib_only(subprocess_env: dict[str, str]) -> None:
    code = (
        "import sys; import recall_agent.session; "
        "bad=[m for m in ('pydantic','httpx','numpy','anyio','jinja2') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=subprocess_env, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def test_prune_removes_only_stale_files(tmp_path: Path) -> None:
    import os

    with session.update("stale", cwd=str(tmp_path)):
        pass
    with session.update("fresh", cwd=str(tmp_path)):
        pass
    os.utime(session.session_path("stale"), (1, 1))
    os.utime(session.session_path("stale").with_suffix(".lock"), (1, 1))
    assert session.prune() == 1
    assert session.load("stale") is None
    assert session.load("fresh") is not None
