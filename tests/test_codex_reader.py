"""The Codex rollout reader (`recall_agent.capture.codex_transcript`) feeding the one capture engine.

Rollout lines here are in the shapes real Codex versions write (checked against jdx/mise's saved Codex
Desktop 0.142-0.144 rollouts and the rollouts Codex CLI 0.169 writes in tests/test_codex_real_client.py):
`exec_command` calls whose output starts with `Process exited with code N` (or `Process running with
session ID N`, ended by a later `write_stdin` or an `item_completed` CommandExecution), `apply_patch` custom
tool calls, code-mode `exec` cells, older `shell` calls with JSON `metadata.exit_code`, `local_shell_call`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from recall_agent.capture import learning
from recall_agent.capture.codex_patch import parse_patch
from recall_agent.capture.codex_transcript import CodexRollout, exit_code_of
from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Call, Result

SID = "019f0000-0000-7000-8000-000000000001"
CWD = "/work/calc"
FAIL = (
    "F\n=================================== FAILURES ===================================\n"
    "    def test_total():\n>       assert total([1, 2]) == 3\nE       assert 2 == 3\n\n"
    "tests/test_mod.py:5: AssertionError\nFAILED tests/test_mod.py::test_total - assert 2 == 3\n1 failed in 0.08s\n"
)
PASS = ".\n1 passed in 0.01s\n"
PATCH = (
    "*** Begin Patch\n*** Update File: pkg/mod.py\n@@ def total(items):\n     count = sum(items)\n"
    "-    return count - 1\n+    return count\n*** End Patch\n"
)


def line(kind: str, payload: dict, ts: str = "2026-07-01T10:00:00.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":"))


def meta() -> str:
    return line(
        "session_meta", {"id": SID, "cwd": CWD, "cli_version": "0.144.2", "git": {"branch": "fix/ABC-7"}}
    )


def exec_call(cid: str, cmd: str) -> str:
    args = json.dumps({"cmd": cmd, "workdir": CWD, "yield_time_ms": 10000})
    return line(
        "response_item", {"type": "function_call", "name": "exec_command", "arguments": args, "call_id": cid}
    )


def exec_out(cid: str, code: int | None, body: str, running: int | None = None) -> str:
    status = (
        f"Process exited with code {code}"
        if code is not None
        else f"Process running with session ID {running}"
    )
    text = f"Chunk ID: ab12cd\nWall time: 0.5 seconds\n{status}\nOriginal token count: 40\nOutput:\n{body}"
    return line("response_item", {"type": "function_call_output", "call_id": cid, "output": text})


def patch_call(cid: str, patch: str = PATCH) -> list[str]:
    return [
        line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": cid}),
        line("response_item", {"type": "custom_tool_call_output", "call_id": cid,
                                "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM pkg/mod.py\n"}),
    ]  # fmt: skip


def shell(cid: str, argv: list[str]) -> str:
    """An older `shell` function call (argv, output as JSON with metadata.exit_code)."""
    args = json.dumps({"command": argv})
    return line(
        "response_item", {"type": "function_call", "name": "shell", "arguments": args, "call_id": cid}
    )


def said(text: str) -> str:
    return line("response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": text}]})  # fmt: skip


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def learnings(path: Path) -> list[dict]:
    reader = CodexRollout(path)
    engine = Engine()
    engine.feed(reader.steps())
    engine.end_turn()
    ctx = learning.Context(session_id=reader.stats.session_id or "", root=CWD, branch=reader.stats.branch,
                           repo="calc", agent="codex")  # fmt: skip
    return [b for e in engine.episodes() if (b := learning.build(e, ctx))]


def fix_session() -> list[str]:
    test = "python -m pytest -q tests"
    return [
        meta(),
        line("event_msg", {"type": "user_message", "message": "fix the tests"}),
        exec_call("call_a1", test),
        exec_out("call_a1", 1, FAIL),
        said("The test fails because total() subtracts one from the sum it computes."),
        *patch_call("call_a2"),
        exec_call("call_a3", test),
        exec_out("call_a3", 0, PASS),
        said("All tests pass now."),
    ]


def test_a_shell_failure_its_patch_and_the_passing_run_make_one_learning(tmp_path: Path) -> None:
    path = write(tmp_path / "rollout-2026-07-01T10-00-00-x.jsonl", fix_session())
    [lr] = learnings(path)
    assert lr["file_paths_touched"] == ["pkg/mod.py"]
    assert "`pkg/mod.py` (`total`)" in lr["resolution_summary"]
    assert "`return count - 1` → `return count`" in lr["resolution_summary"]
    assert "subtracts one" in lr["resolution_summary"]
    assert lr["fix"]["agent"] == "codex" and lr["fix"]["files"][0]["symbols"] == ["total"]
    assert lr["fix"]["calls"] == ["call_a1", "call_a3"]
    assert lr["ticket_id"] == "ABC-7"
    assert any("assert 2 == 3" in s for s in lr["error_signatures"])


def test_compressed_rollouts_read_as_the_plain_ones(tmp_path: Path) -> None:
    plain = write(tmp_path / "rollout-a.jsonl", fix_session())
    packed = tmp_path / "rollout-b.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert learnings(packed) == learnings(plain)
    reader = CodexRollout(packed, start=len(plain.read_bytes().split(b"\n", 4)[0]) + 1)
    assert list(reader.steps())  # an offset into a compressed rollout skips decompressed bytes


def test_reading_on_from_an_offset_gives_what_one_read_gives(tmp_path: Path) -> None:
    lines = fix_session()
    path = tmp_path / "rollout-live.jsonl"
    write(path, lines[:4])
    first = CodexRollout(path)
    engine = Engine()
    engine.feed(first.steps())
    state, calls = engine.state(), {c.id: c for c in first.pending()}
    path.write_text("\n".join(lines) + "\n")  # the session went on
    second = CodexRollout(path, start=first.end, calls=calls)
    engine = Engine(state)
    engine.feed(second.steps())
    engine.end_turn()
    [episode] = engine.episodes()
    assert episode.changes[0].symbols == ["total"] and episode.passed.id == "call_a3"


def test_a_half_written_last_line_is_left_for_the_next_read(tmp_path: Path) -> None:
    lines = fix_session()
    path = tmp_path / "rollout-partial.jsonl"
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    reader = CodexRollout(path)
    steps = list(reader.steps())
    assert [s.id for s in steps if isinstance(s, Call)] == ["call_a1"]
    assert reader.stats.partial and reader.end < path.stat().st_size


def test_a_command_still_running_gets_its_result_where_it_ran(tmp_path: Path) -> None:
    """`Process running with session ID N`: the exit comes later (a write_stdin poll, or the
    item_completed event Codex writes when it ends); the result is placed before the fix, not after it."""
    test = "python -m pytest -q tests"
    done = {"type": "item_completed", "item": {"type": "CommandExecution", "id": "call_a1", "exit_code": 1,
                                               "aggregated_output": FAIL}}  # fmt: skip
    lines = [meta(), exec_call("call_a1", test), exec_out("call_a1", None, FAIL[:30], running=4242),
             *patch_call("call_a2"), line("event_msg", done),
             exec_call("call_a3", test), exec_out("call_a3", 0, PASS)]  # fmt: skip
    [lr] = learnings(write(tmp_path / "rollout-late.jsonl", lines))
    assert lr["file_paths_touched"] == ["pkg/mod.py"]
    polled = [meta(), exec_call("call_a1", test), exec_out("call_a1", None, FAIL[:30], running=4242),
              line("response_item", {"type": "function_call", "name": "write_stdin", "call_id": "call_p1",
                                     "arguments": json.dumps({"session_id": 4242, "chars": ""})}),
              exec_out("call_p1", 1, FAIL[30:]).replace('"call_id":"call_p1"', '"call_id":"call_p1"'),
              *patch_call("call_a2"), exec_call("call_a3", test), exec_out("call_a3", 0, PASS)]  # fmt: skip
    [lr] = learnings(write(tmp_path / "rollout-polled.jsonl", polled))
    assert lr["fix"]["calls"][0] == "call_a1"


def test_older_shell_calls_code_mode_cells_and_local_shell_calls(tmp_path: Path) -> None:
    old_fail = json.dumps({"output": "bash: pytst: command not found\n", "metadata": {"exit_code": 127}})
    old_pass = json.dumps({"output": PASS, "metadata": {"exit_code": 0}})
    cell = 'const r = await tools.exec_command({cmd:"cargo test --lib x","workdir":"/w"}); text(JSON.stringify(r));'
    cell_out = [{"type": "input_text", "text": "Script completed\nWall time 0.9 seconds\nOutput:\n"},
                {"type": "input_text", "text": json.dumps({"exit_code": 101, "output": "error: no library targets found in package `mise`"})}]  # fmt: skip
    lines = [
        meta(),
        shell("c1", ["bash", "-lc", "pytst -q"]),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": old_fail}),
        shell("c2", ["bash", "-lc", "pytest -q"]),
        line("response_item", {"type": "function_call_output", "call_id": "c2", "output": old_pass}),
        line("response_item", {"type": "custom_tool_call", "name": "exec", "input": cell, "call_id": "c3"}),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "c3", "output": cell_out}),
        line("response_item", {"type": "local_shell_call", "call_id": "c4", "status": "completed",
                               "action": {"type": "exec", "command": ["ls", "-la", "my dir"]}}),
        line("response_item", {"type": "function_call_output", "call_id": "c4", "output": "total 0\n"}),
    ]  # fmt: skip
    steps = list(CodexRollout(write(tmp_path / "rollout-old.jsonl", lines)).steps())
    results = {s.call.id: s for s in steps if isinstance(s, Result)}
    assert results["c1"].is_error and results["c1"].call.input["command"] == "pytst -q"
    assert not results["c2"].is_error and results["c2"].text == PASS
    assert results["c3"].is_error and results["c3"].call.input["command"] == "cargo test --lib x"
    assert results["c3"].text.endswith("\nerror: no library targets found in package `mise`")  # not the JSON
    assert results["c4"].call.input["command"] == "ls -la 'my dir'" and not results["c4"].is_error


def test_a_code_mode_patch_comes_from_patch_apply_end(tmp_path: Path) -> None:
    change = {"type": "update", "unified_diff": "@@ -1,3 +1,3 @@\n def total(items):\n     count = sum(items)\n"
                                                "-    return count - 1\n+    return count\n"}  # fmt: skip
    end = {
        "type": "patch_apply_end",
        "call_id": "exec-1",
        "success": True,
        "changes": {f"{CWD}/pkg/mod.py": change},
    }
    lines = fix_session()
    at = next(i for i, ln in enumerate(lines) if '"apply_patch"' in ln)
    lines[at : at + 2] = [line("event_msg", end)]
    [lr] = learnings(write(tmp_path / "rollout-cell.jsonl", lines))
    assert lr["file_paths_touched"] == ["pkg/mod.py"] and lr["fix"]["files"][0]["symbols"] == ["total"]


def test_a_failed_patch_changes_nothing(tmp_path: Path) -> None:
    lines = fix_session()
    at = next(i for i, ln in enumerate(lines) if '"custom_tool_call_output"' in ln)
    lines[at] = line("response_item", {"type": "custom_tool_call_output", "call_id": "call_a2",
                                       "output": "apply_patch verification failed: Failed to find expected lines"})  # fmt: skip
    assert all(
        not lr["file_paths_touched"] for lr in learnings(write(tmp_path / "rollout-nopatch.jsonl", lines))
    )


def test_parse_patch_reads_every_kind_of_file() -> None:
    files = parse_patch(
        "*** Begin Patch\n*** Add File: new.py\n+x = 1\n*** Delete File: old.py\n*** Update File: a.py\n"
        "*** Move to: b.py\n@@ class A:\n-    y = 1\n+    y = 2\n*** End Patch\n"
    )
    assert [(f.path, f.kind) for f in files] == [("new.py", "add"), ("old.py", "delete"), ("b.py", "update")]
    assert files[0].content == "x = 1\n" and files[2].hunks == [("class A:", ["-    y = 1", "+    y = 2"])]


@pytest.mark.parametrize("kind", ["item_completed", "exec_command_end", "output"])
def test_exit_code_of_a_shell_call_from_the_rollout(tmp_path: Path, kind: str) -> None:
    events = {
        "item_completed": line("event_msg", {"type": "item_completed", "item": {"type": "CommandExecution", "id": "call_x", "exit_code": 2}}),
        "exec_command_end": line("event_msg", {"type": "exec_command_end", "call_id": "call_x", "exit_code": 2}),
        "output": exec_out("call_x", 2, "boom\n"),
    }  # fmt: skip
    path = write(tmp_path / "rollout-exit.jsonl", [meta(), exec_call("call_x", "make"), events[kind]])
    assert exit_code_of(path, "call_x") == 2
    assert exit_code_of(path, "call_other") is None
    assert exit_code_of(tmp_path / "missing.jsonl", "call_x") is None
