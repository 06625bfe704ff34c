"""bench/bench_capture.py's judge on a real consolidated store: a row credited to another session than its
first is paired by that session's own fix of the row and judged by what the hook shows for it."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
ERROR = "/bin/bash: line 1: cd: testbed: No such file or directory"
INSIDE = "Environment: The shell was already in `testbed` (the folder carries over between calls): "


@pytest.fixture
def bc(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH / "sessions"))
    monkeypatch.syspath_prepend(str(BENCH))
    for name in ("bench_capture", "labels"):
        sys.modules.pop(name, None)
    return importlib.import_module("bench_capture")


def _learning(session: str, shown: str, passed: str, before: str, seen: int = 1):
    from recall_agent.models import Learning

    return Learning.model_validate(
        {
            "session_id": session,
            "repo": "r",
            "error_signatures": [ERROR],
            "resolution_summary": f"{INSIDE}{shown}\nFrom the session's commands; `{passed}` passed after it.",
            "seen_count": seen,
            "session_count": 1,
            "provenance": "captured",
            "fix": {
                "source": "transcript",
                "kind": "environment",
                "command": {"before": before, "after": passed},
                "folder": {"path": "testbed", "cause": "shell_inside"},
                "verified_by": passed,
                "calls": [f"toolu_01{session}fail", f"toolu_01{session}pass"],
            },
        }
    )


def _label(bc, tmp_path: Path, session: str, before: str, after: str):
    transcript = tmp_path / f"{session}.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": session}) + "\n")
    episode = {"failed": f"{session}fail", "error": "cd: testbed: No such file or directory",
               "useful": True, "fix": {"kind": "command", "command": {"before": before, "after": after}}}  # fmt: skip
    return bc.L.Label(corpus="t", session=session, half="tune", data={"episodes": [episode]}, path=transcript)


def test_a_credited_row_is_judged_by_what_the_hook_shows_for_its_session(tmp_path: Path, bc) -> None:
    from recall_agent.learnings.store import open_store

    home = tmp_path / "home"
    with open_store(home) as store:  # one cause met in three sessions: one row, three fixes
        store.add(
            _learning("aaaa", "ran it without `cd testbed`.", "python3 t.py", "cd testbed && python3 t.py", 2)
        )
        store.add(
            _learning(
                "bbbb",
                "ran it without `cd testbed`.",
                "python3 ./w/testbed/t.py",
                "cd testbed && python3 t.py",
            )
        )
        store.add(_learning("dddd", "used the paths without their `testbed/` prefix (`d.py` for `testbed/d.py`).",
                            "python3 d.py", "python3 testbed/d.py"))  # fmt: skip
        rows = [json.loads(lr.model_dump_json()) for lr in store.iter_all()]
    assert len(rows) == 1 and rows[0]["session_id"] == "aaaa"
    credited = bc.per_session(rows, home / "learnings.db")
    assert {c["session_id"] for c in credited} == {"aaaa", "bbbb", "dddd"}
    labels = [
        _label(bc, tmp_path, "aaaa", "cd testbed && python3 t.py", "python3 t.py"),
        # the same lesson shown, in this session's own words (only the never-shown source line differs)
        _label(bc, tmp_path, "bbbb", "cd testbed && python3 t.py", "python3 ./w/testbed/t.py"),
        # another form of the slip: the row shows the `cd testbed` fix, not this session's
        _label(bc, tmp_path, "dddd", "python3 testbed/d.py", "python3 d.py"),
    ]
    result = bc.judge(labels, credited, merged=True)
    assert (result["real"], result["right"]) == (3, 2)
    assert [m["session"] for m in result["wrong_resolutions"]] == ["dddd"]
    # what the hook injects has no source line: bbbb's own words are in no text an agent is shown
    assert result["right_shown"] == round(1 / 3, 3)
    # before the row was credited by its session's own fix, bbbb's copy was judged by aaaa's source line
    plain = [{k: v for k, v in c.items() if k not in ("credited", "row_fixes")} for c in credited]
    assert bc.judge(labels, plain, merged=True)["right"] == 1


def test_learnings_exported_with_the_same_time_are_judged_in_one_order(tmp_path: Path, bc) -> None:
    """The export orders rows by `created_at`, ties by their random ids; `judge` pairs them with the labelled
    episodes first come first served, so the bench sorts the ties by what the rows hold (`_export_order`)."""
    cd_slip = json.loads(_learning("aaaa", "ran it without `cd testbed`.", "python3 t.py", "cd testbed && python3 t.py")
                         .model_dump_json())  # fmt: skip
    prefix = json.loads(_learning("aaaa", "used the paths without their `testbed/` prefix.", "python3 d.py",
                                  "python3 testbed/d.py").model_dump_json())  # fmt: skip
    for lr in (cd_slip, prefix):  # keyed on the error alone: the label cites other calls
        lr["fix"]["calls"] = ["toolu_01other"]
    transcript = tmp_path / "aaaa.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "aaaa"}) + "\n")
    episodes = [  # the same error met twice in the session, fixed each time another way
        {"failed": f"x{n}", "error": "cd: testbed: No such file or directory", "useful": True,
         "fix": {"kind": "command", "command": {"before": before, "after": after}}}
        for n, (before, after) in enumerate([("cd testbed && python3 t.py", "python3 t.py"),
                                             ("python3 testbed/d.py", "python3 d.py")])
    ]  # fmt: skip
    label = bc.L.Label(corpus="t", session="aaaa", half="tune", data={"episodes": episodes}, path=transcript)
    one, other = [cd_slip, prefix], [prefix, cd_slip]
    assert bc.judge([label], one)["right"] != bc.judge([label], other)["right"]  # the order decides
    ordered = [sorted(x, key=bc._export_order) for x in (one, other)]
    assert ordered[0] == ordered[1]
