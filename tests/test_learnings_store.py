"""The SQLite learnings store: a real file under $RECALL_HOME, migrations, merging, and refusing damage."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from uuid import uuid4

import pytest

from recall_agent.learnings import store as store_mod
from recall_agent.learnings.store import open_store
from recall_agent.learnings.types import CandidateStore, StoreError
from recall_agent.models import Learning

ERR = "ModuleNotFoundError: No module named 'yaml'"


def make(**kw) -> Learning:
    base = {
        "repo": "acme",
        "error_signatures": [ERR],
        "resolution_summary": "pip install pyyaml (the import name is yaml, the package is PyYAML)",
        "file_paths_touched": ["src/acme/config.py"],
        "task_type": "dependency",
    }
    base.update(kw)
    return Learning(**base)


def test_round_trip_in_a_real_wal_file(isolated_recall_env: Path) -> None:
    st = open_store()
    learning = make(ticket_id="OPS-7", session_id="s1")
    lid, merged = st.add(learning)
    assert (lid, merged) == (learning.id, False)
    assert st.path == isolated_recall_env / "learnings.db" and st.path.is_file()
    got = st.get(str(lid))
    assert got is not None
    assert got.error_signatures == [ERR]
    assert got.file_paths_touched == ["src/acme/config.py"]
    assert got.ticket_id == "OPS-7" and got.task_type.value == "dependency"
    assert got.created_at == learning.created_at
    assert st.count() == 1
    assert [x.id for x in st.iter_all()] == [lid]
    with sqlite3.connect(st.path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == store_mod.SCHEMA_VERSION
    assert isinstance(st, CandidateStore)


def test_same_fingerprint_and_resolution_merges() -> None:
    st = open_store()
    first, _ = st.add(make())
    again = make(
        error_signatures=[ERR, "ImportError: cannot import name 'CLoader' from 'yaml'"],
        resolution_summary="  PIP INSTALL pyyaml (the import name is yaml, the package is PyYAML) ",
        file_paths_touched=["src/acme/loader.py"],
        confidence=0.95,
    )
    lid, merged = st.add(again)
    assert (lid, merged) == (first, True)
    assert st.count() == 1
    got = st.get(first)
    assert got.file_paths_touched == ["src/acme/config.py", "src/acme/loader.py"]
    assert len(got.error_signatures) == 2
    assert got.confidence == 0.95
    # a different resolution for the same error is the same cause: one row, both fixes (issue 34); another
    # repo is another learning
    assert st.add(make(resolution_summary="add pyyaml to requirements.txt")) == (first, True)
    assert st.add(make(repo="other"))[1] is False
    assert st.count() == 2
    got = st.get(first)
    assert got.seen_count == 3
    assert [(f.resolution_summary, f.count) for f in got.fixes] == [
        ("pip install pyyaml (the import name is yaml, the package is PyYAML)", 2),
        ("add pyyaml to requirements.txt", 1),
    ]
    assert got.resolution_summary == got.fixes[0].resolution_summary


def test_delete_adjust_and_access() -> None:
    st = open_store()
    lid, _ = st.add(make())
    assert st.adjust_confidence(lid, 0.5) == 1.0
    assert st.adjust_confidence(lid, -0.3) == pytest.approx(0.7)
    assert st.adjust_confidence(uuid4(), 0.1) is None
    st.record_access([lid])
    st.record_access([lid])
    got = st.get(lid)
    assert got.access_count == 2 and got.last_accessed_at is not None
    st.record_accesses({lid: 3})  # the server's batched flush: a count per learning, one transaction
    assert st.get(lid).access_count == 5
    assert st.delete(lid) is True
    assert st.delete(lid) is False
    assert st.get(lid) is None and st.count() == 0
    assert st.candidates_by_terms(["modulenotfounderror"], 5) == []
    with pytest.raises(ValueError, match="not a learning id"):
        st.get("not-a-uuid")


def test_candidate_generation() -> None:
    st = open_store()
    a, _ = st.add(make())
    b, _ = st.add(
        make(
            error_signatures=["fatal: refusing to merge unrelated histories"],
            resolution_summary="git pull --allow-unrelated-histories",
            file_paths_touched=["README.md"],
            task_type="ci_fix",
        )
    )
    from recall_agent.learnings.signatures import fingerprint

    assert [c.learning.id for c in st.candidates_by_fingerprint([fingerprint(ERR)], 5)] == [a]
    hits = st.candidates_by_terms(["unrelated", "histories"], 5)
    assert [c.learning.id for c in hits] == [b]
    assert hits[0].signatures[0].normalized
    assert {c.learning.id for c in st.candidates_by_context("acme", ["other/dir/config.py"], None, 5)} == {a}
    assert {c.learning.id for c in st.candidates_by_context("acme", [], "ci_fix", 5)} == {b}
    assert st.candidates_by_context("elsewhere", ["src/acme/config.py"], None, 5) == []


def test_newer_schema_is_refused_and_left_untouched(isolated_recall_env: Path) -> None:
    st = open_store()
    st.add(make())
    st.close()
    db = isolated_recall_env / "learnings.db"
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA user_version = 99")
    before = db.read_bytes()
    with pytest.raises(StoreError, match="schema version 99, newer"):
        open_store()
    assert db.read_bytes() == before


def test_corrupt_file_is_refused_and_kept(isolated_recall_env: Path) -> None:
    isolated_recall_env.mkdir(parents=True)
    db = isolated_recall_env / "learnings.db"
    db.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a SQLite database"):
        open_store()
    assert db.read_bytes() == b"this is not sqlite at all" * 100


def test_malformed_pages_give_a_store_error(isolated_recall_env: Path) -> None:
    st = open_store()
    for i in range(50):
        st.add(make(resolution_summary=f"fix number {i} " + "x" * 500))
    st.close()
    db = isolated_recall_env / "learnings.db"
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    data[4096 * 2 : 4096 * 6] = b"\xff" * (4096 * 4)  # keep the header, trash pages
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="corrupt|learnings store"):
        s2 = open_store()
        list(s2.iter_all())


def test_read_only_store_answers_but_refuses_writes(isolated_recall_env: Path) -> None:
    st = open_store()
    lid, _ = st.add(make())
    st.close()
    db = isolated_recall_env / "learnings.db"
    os.chmod(db, 0o444)
    try:
        ro = open_store()
        assert ro.read_only
        assert ro.get(lid) is not None
        ro.record_access([lid])  # silently skipped
        with pytest.raises(StoreError, match="read-only"):
            ro.add(make(resolution_summary="something else"))
        with pytest.raises(StoreError, match="read-only"):
            ro.delete(lid)
        ro.close()
    finally:
        os.chmod(db, 0o644)
    assert open_store().count() == 1


def test_normalizer_change_reindexes_without_losing_text(monkeypatch: pytest.MonkeyPatch) -> None:
    st = open_store()
    lid, _ = st.add(make())
    st.close()
    with sqlite3.connect(st.path) as raw:
        raw.execute("UPDATE signatures SET fingerprint = 'stale', normalized = 'stale'")
        raw.execute("UPDATE meta SET value = '0' WHERE key = 'normalizer_version'")
    st = open_store()
    from recall_agent.learnings.signatures import fingerprint

    assert [c.learning.id for c in st.candidates_by_fingerprint([fingerprint(ERR)], 5)] == [lid]
    assert st.get(lid).error_signatures == [ERR]


def test_duplicate_id_with_other_content_is_rejected() -> None:
    st = open_store()
    first = make()
    st.add(first)
    clash = make(id=first.id, resolution_summary="entirely different", error_signatures=["boom"])
    with pytest.raises(ValueError, match="already exists"):
        st.add(clash)
    assert st.count() == 1
