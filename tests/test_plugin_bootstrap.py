"""The plugin's launcher (bin/recall) and its first-use setup (recall_agent/bootstrap/), without a full build.

Real processes: `sh bin/recall …` and `python3 -I recall_agent/bootstrap/plugin.py …` as Claude Code runs
them, fed hook JSON on stdin, with CLAUDE_PLUGIN_DATA in a temporary folder. A build that fails at once
(RECALL_PYTHON names an interpreter that is not there) shows the lock, the one-line messages and the retry
rule; the MCP stand-in is driven by the official MCP SDK's own client. The full build, with the real
client, is tests/test_plugin_install.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

REPO_ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = REPO_ROOT / "bin" / "recall"
HOOK_JSON = json.dumps({"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Bash"})


def plugin_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No recall on PATH (only the system's folders), the plugin's data folder, a Python that is missing."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RECALL_BIN", "RECALL_PYTHON")}
    env.update(
        PATH="/usr/local/bin:/usr/bin:/bin",
        HOME=str(tmp_path / "home"),
        CLAUDE_PLUGIN_DATA=str(tmp_path / "data"),
        RECALL_PYTHON=str(tmp_path / "no-such-python3"),
    )
    env.update(extra)
    return env


def launch(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(LAUNCHER), *args], input=stdin, env=env, capture_output=True, text=True, timeout=120
    )


def wait_state(data: Path, state: str) -> dict:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status = json.loads((data / "setup.json").read_text())
        except (OSError, ValueError):
            status = {}
        if status.get("state") == state:
            return status
        time.sleep(0.2)
    raise AssertionError((data / "setup.log").read_text())


def test_first_hook_starts_the_setup_and_says_so_once(tmp_path: Path) -> None:
    env = plugin_env(tmp_path)
    data = tmp_path / "data"
    hooks = [
        subprocess.Popen(
            ["sh", str(LAUNCHER), "hook", "PostToolUse"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(4)
    ]
    started = time.monotonic()
    outs = [hook.communicate(HOOK_JSON, timeout=30) for hook in hooks]
    assert time.monotonic() - started < 5  # within the hook's cap: the build runs detached
    assert all(hook.returncode == 0 for hook in hooks) and all(err == "" for _, err in outs)
    said = [json.loads(out)["systemMessage"] for out, _ in outs if out.strip()]
    first_use = [m for m in said if m.startswith("recall: setting itself up on first use")]
    assert len(first_use) == 1, outs  # once, whoever came first
    assert "\n" not in first_use[0] and str(data / "setup.log") in first_use[0]
    assert (data / "recall-plugin-root").read_text().strip() == str(REPO_ROOT)

    # the build fails (no such Python): a hook says so once, with the reason (one of the four may have,
    # the failure comes fast); then hooks stay quiet
    status = wait_state(data, "failed")
    assert f"found {tmp_path / 'no-such-python3'} (does not run)" in status["error"]
    assert "RECALL_PYTHON=/path/to/python3" in status["error"]
    later = [launch(["hook", "Stop"], env, HOOK_JSON) for _ in range(2)]
    assert all(hook.returncode == 0 and hook.stderr == "" for hook in later)
    said += [json.loads(hook.stdout)["systemMessage"] for hook in later if hook.stdout.strip()]
    failed = [m for m in said if m not in first_use]
    assert len(failed) == 1, said
    assert failed[0].startswith("recall: setting itself up failed: recall needs Python 3.11")
    assert "it tries again in 10 minutes" in failed[0] and "\n" not in failed[0]
    assert "== failed: recall needs Python 3.11" in (data / "setup.log").read_text()
    assert not (data / "current").exists() and not list(data.glob("venvs/*"))


def test_the_command_says_why_it_cannot_answer(tmp_path: Path) -> None:
    """/recall (the Bash tool: no CLAUDE_PLUGIN_DATA) finds the plugin's data folder by its mark."""
    env = plugin_env(tmp_path)
    data = tmp_path / "data"
    assert launch(["hook", "PostToolUse"], env, HOOK_JSON).returncode == 0
    wait_state(data, "failed")
    del env["CLAUDE_PLUGIN_DATA"]
    (tmp_path / "home" / ".claude" / "plugins").mkdir(parents=True)
    (tmp_path / "home" / ".claude" / "plugins" / "data").symlink_to(tmp_path)  # data/ among the plugin data
    started = time.monotonic()
    done = launch(["ModuleNotFoundError: No module named 'yaml'"], env)
    assert time.monotonic() - started < 10  # a failed setup is not waited for
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("recall: setting itself up failed: recall needs Python 3.11")
    assert (
        lines[-1].startswith("recall: not set up yet (recall needs Python 3.11")
        and "Traceback" not in done.stderr
    )


def test_without_sources_or_recall_the_launcher_says_so_once(tmp_path: Path) -> None:
    """The copy of the plugin inside the wheel (recall_agent/plugin/) has no sources to build from."""
    plugin = tmp_path / "plugin"
    (plugin / "bin").mkdir(parents=True)
    (plugin / "bin" / "recall").write_bytes(LAUNCHER.read_bytes())
    env = plugin_env(tmp_path)
    why = f"no recall on PATH, and no recall sources in {plugin} to set it up from (install recall: make install)"
    hooks = [
        subprocess.run(["sh", str(plugin / "bin" / "recall"), "hook", "Stop"], input=HOOK_JSON, env=env,
                       capture_output=True, text=True, timeout=30)
        for _ in range(2)
    ]  # fmt: skip
    assert all(hook.returncode == 0 and hook.stderr == "" for hook in hooks)
    assert json.loads(hooks[0].stdout) == {"systemMessage": f"recall cannot run: {why}"}
    assert hooks[1].stdout == ""
    command = subprocess.run(
        ["sh", str(plugin / "bin" / "recall"), "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert command.returncode == 1 and command.stderr == f"recall cannot run: {why}\n"


def test_a_recall_on_path_is_used_and_another_programs_is_not(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    other = bindir / "recall"
    other.write_text("#!/bin/sh\necho another program called recall\n")
    other.chmod(0o755)
    env = plugin_env(tmp_path, PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin")
    done = launch(["hook", "PostToolUse"], env, HOOK_JSON)
    assert "another program" not in done.stdout  # it does not run recall_agent: not ours, the setup starts
    assert json.loads(done.stdout)["systemMessage"].startswith("recall: setting itself up")
    ours = bindir / "recall"
    ours.write_text(f'#!/bin/sh\n# runs recall_agent\nexec {sys.executable} -m recall_agent "$@"\n')
    env["PYTHONPATH"] = str(REPO_ROOT)
    version = launch(["--version"], env)
    assert version.returncode == 0 and version.stdout.startswith("recall 0.1.0")


async def _stand_in_session(env: dict[str, str], flag: Path) -> tuple[list[str], list[str], str]:
    code = (
        "import os, sys; from recall_agent.bootstrap import mcp_standin; "
        f"sys.exit(mcp_standin.run([sys.executable, '-m', 'recall_agent', 'mcp'], "
        f"lambda: os.path.exists({str(flag)!r}), '0.1.0'))"
    )
    params = StdioServerParameters(command=sys.executable, args=["-c", code], env=env)
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if "ToolListChangedNotification" in repr(message):
            changed.set()

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=on_message) as s,
    ):
        init = await s.initialize()
        assert init.server_info.name == "recall"
        before = [t.name for t in (await s.list_tools()).tools]
        flag.write_text("ready")
        with anyio.fail_after(60):
            await changed.wait()
        after = [t.name for t in (await s.list_tools()).tools]
        answer = await s.call_tool("recall", {"query": "ModuleNotFoundError: No module named 'yaml'"})
        return before, after, "\n".join(b.text for b in answer.content if b.type == "text")


def test_the_mcp_stand_in_hands_the_session_to_recall_mcp(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    before, after, answer = anyio.run(_stand_in_session, env, tmp_path / "ready")
    assert before == []
    assert {"recall", "recall_learn", "recall_forget", "recall_index"} <= set(after)
    assert "## Recall Results" in answer
