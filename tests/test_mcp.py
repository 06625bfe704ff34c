"""recall over MCP, through the official SDK's clients: `recall mcp` (stdio) spawned in a temporary git
repository, and `/mcp` (streamable HTTP) on a real `recall serve` on 127.0.0.1 with bearer tokens.

An agent that speaks only MCP must get what the CLI (the skill) gives: the same Markdown, the same JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from architecture_fixtures import PY_REPO, git_init, write
from mcp_fixtures import http_session, run, stdio_session, text
from server_fixtures import RunningServer, free_port, start_server

ERROR = "ModuleNotFoundError: No module named 'yaml'"
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
FIX = f"PyYAML was missing from requirements.txt; added it (the old key {SECRET} is not needed)."


@pytest.fixture(autouse=True)
def no_developer_transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code transcripts come from a temporary folder, never from the machine's own ~/.claude."""
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write(tmp_path / "shop", PY_REPO)
    git_init(root)
    return root


@pytest.fixture
def other_repo(tmp_path: Path) -> Path:
    root = write(tmp_path / "billing", {"app.py": "def main():\n    return 1\n"})
    git_init(root)
    return root


def recall_cli(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", *argv],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# --------------------------------------------------------------------------- stdio


def test_stdio_lists_every_tool_with_described_arguments(repo: Path) -> None:
    tools = run(lambda: stdio_session(repo), lambda s: s.list_tools()).tools
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"recall", "recall_learn", "recall_forget", "recall_index", "recall_context"}
    recall = by_name["recall"].input_schema["properties"]
    assert list(recall) == ["query", "scope", "repo", "task_type", "max_results"]
    assert recall["scope"]["enum"] == ["learnings", "architecture", "antipatterns", "all"]
    assert recall["scope"]["default"] == "all"
    assert (recall["max_results"]["minimum"], recall["max_results"]["maximum"]) == (1, 20)
    learn = by_name["recall_learn"].input_schema
    assert list(learn["properties"]) == ["error", "resolution", "files", "repo", "task_type", "ticket"]
    assert learn["required"] == ["error", "resolution"]
    assert "ctx" not in recall and "ctx" not in learn["properties"]
    for tool in tools:  # a model picks tools by these texts: every tool and argument has one
        assert len(tool.description or "") > 60, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert len(prop.get("description", "")) > 20, (tool.name, name)
    output = by_name["recall"].output_schema
    assert set(output["properties"]) == {"scope", "context", "learnings", "federation"}
    assert by_name["recall"].annotations.read_only_hint is True


def test_stdio_learn_then_recall_from_another_path_returns_the_fix(repo: Path, other_repo: Path) -> None:
    async def learn(session):
        return await session.call_tool(
            "recall_learn",
            {"error": ERROR, "resolution": FIX, "files": ["requirements.txt"], "task_type": "dependency"},
        )

    learned = run(lambda: stdio_session(repo), learn)
    assert not learned.is_error, text(learned)
    learning_id = learned.structured_content["id"]
    assert learned.structured_content["merged"] is False
    assert text(learned) == f"Stored learning {learning_id}."

    args = {"query": ERROR, "scope": "learnings"}
    answer = run(lambda: stdio_session(other_repo), lambda s: s.call_tool("recall", args))
    assert not answer.is_error, text(answer)
    markdown = text(answer)
    assert "PyYAML was missing from requirements.txt" in markdown
    assert "**Repo:** shop" in markdown and "**Type:** dependency" in markdown
    assert SECRET not in markdown and "<redacted:openai_key>" in markdown  # redacted before it was stored
    # the skill's answer, word for word: `recall` run in the same folder prints the same Markdown
    assert markdown == recall_cli(other_repo, "--scope", "learnings", ERROR)
    document = answer.structured_content
    assert document["context"]["repo"] == "billing"
    assert document["learnings"]["payload"] == {
        "match_type": "error_signature",
        "error_text": ERROR,
        "repo": "billing",
        "max_results": 5,
    }
    match = document["learnings"]["response"]["matches"][0]
    assert match["learning_id"] == learning_id and match["repo"] == "shop"
    assert document["federation"]["queried"] is False


def test_stdio_answers_an_architecture_question_about_the_repository(repo: Path) -> None:
    args = {"query": "who calls checkout", "scope": "architecture"}
    answer = run(lambda: stdio_session(repo), lambda s: s.call_tool("recall", args))
    assert not answer.is_error, text(answer)
    markdown = text(answer)
    assert markdown.startswith("## Recall Results — scope: architecture")
    assert "src/shop/api.py" in markdown and "handle" in markdown  # the real caller, found in the temp repo
    results = answer.structured_content["federation"]["response"]["results"]
    assert any("src/shop/api.py" in r["content"] for r in results)
    assert answer.structured_content["context"]["repo_root"] == str(repo.resolve())


def test_stdio_bad_arguments_are_tool_errors_naming_the_argument_and_the_server_keeps_serving(
    repo: Path,
) -> None:
    bad = [
        ({"query": "x", "scope": "everything"}, "scope"),
        ({"query": "x", "max_results": 0}, "max_results"),
        ({"query": "x", "max_results": 21}, "max_results"),
        ({"query": "x", "max_results": "5"}, "max_results"),
        ({"query": "x", "max_results": True}, "max_results"),
        ({"query": 42}, "query"),
        ({"query": "x", "task_type": "chores"}, "task_type"),
        ({"query": "x", "repo": ""}, "repo"),
    ]

    async def calls(session):
        results = [(await session.call_tool("recall", args), name) for args, name in bad]
        results.append((await session.call_tool("recall_learn", {"error": ERROR}), "resolution"))
        results.append((await session.call_tool("recall_learn", {"error": "", "resolution": "x"}), "error"))
        results.append((await session.call_tool("recall_forget", {"id": "not-a-uuid"}), "id"))
        # an argument the tool does not take (meant for recall_learn) is named, never silently dropped
        results.append((await session.call_tool("recall", {"error": ERROR}), "unknown argument(s) 'error'"))
        good = await session.call_tool("recall", {"query": ERROR, "scope": "learnings"})
        return results, good

    results, good = run(lambda: stdio_session(repo), calls)
    for result, name in results:
        assert result.is_error, name
        message = text(result)
        assert name in message and "Traceback" not in message, message
    assert not good.is_error and "No relevant knowledge found" in text(good)


def test_stdio_forget_removes_a_learning(repo: Path) -> None:
    async def calls(session):
        learned = await session.call_tool(
            "recall_learn", {"error": ERROR, "resolution": "pip install pyyaml"}
        )
        learning_id = learned.structured_content["id"]
        forgot = await session.call_tool("recall_forget", {"id": learning_id})
        again = await session.call_tool("recall_forget", {"id": learning_id})
        answer = await session.call_tool("recall", {"query": ERROR, "scope": "learnings"})
        return learning_id, forgot, again, answer

    learning_id, forgot, again, answer = run(lambda: stdio_session(repo), calls)
    assert not forgot.is_error and learning_id in text(forgot)
    assert again.is_error and f"no learning with id {learning_id}" in text(again)
    assert "pip install pyyaml" not in text(answer)


def test_stdio_index_reports_the_repository(repo: Path) -> None:
    result = run(lambda: stdio_session(repo), lambda s: s.call_tool("recall_index", {}))
    assert not result.is_error, text(result)
    assert result.structured_content["root"] == str(repo.resolve())
    assert result.structured_content["languages"].get("python", 0) >= 8
    assert "Indexed shop" in text(result)


def test_stdio_with_an_empty_query_uses_auto_mode_like_the_cli(repo: Path) -> None:
    answer = run(lambda: stdio_session(repo), lambda s: s.call_tool("recall", {}))
    assert not answer.is_error
    assert "auto mode for repo shop" in text(answer)
    assert text(answer) == recall_cli(repo)
    assert answer.structured_content["learnings"]["payload"]["match_type"] == "auto"


def test_stdio_with_an_empty_query_answers_the_sessions_last_error(
    repo: Path, no_developer_transcripts: Path
) -> None:
    failed = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": f"Traceback ...\n{ERROR}",
        "is_error": True,
    }
    entry = {"type": "user", "message": {"role": "user", "content": [failed]}}
    folder = no_developer_transcripts / "projects" / str(repo.resolve()).replace("/", "-")
    folder.mkdir(parents=True)
    (folder / "0b6c3f7e-2222-4c2a-9e55-7d1f1f2a3b4c.jsonl").write_text(json.dumps(entry) + "\n")

    async def calls(session):
        await session.call_tool("recall_learn", {"error": ERROR, "resolution": "pip install pyyaml"})
        return await session.call_tool("recall", {"scope": "learnings"})

    answer = run(lambda: stdio_session(repo), calls)
    markdown = text(answer)
    assert "Query: the last error of this session (transcript)" in markdown
    assert "pip install pyyaml" in markdown
    assert answer.structured_content["context"]["error_source"] == "transcript"
    assert markdown == recall_cli(repo, "--scope", "learnings")


def test_stdio_names_a_backend_that_is_down_and_still_answers(repo: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1/nodes/node_agent_learning_retrieval_effect/execute"
    env = {"AGENT_LEARNING_RETRIEVAL_URL": down}
    args = {"query": "who calls checkout"}
    answer = run(lambda: stdio_session(repo, env=env), lambda s: s.call_tool("recall", args))
    assert not answer.is_error
    markdown = text(answer)
    assert "[Learnings] unavailable" in markdown and "connection refused" in markdown
    assert "src/shop/api.py" in markdown  # the federation still answered
    assert answer.structured_content["learnings"]["failure"]["kind"] == "connection"


def test_stdio_cwd_option_answers_for_that_repository(repo: Path, tmp_path: Path) -> None:
    args = {"query": "who calls checkout", "scope": "architecture"}
    answer = run(lambda: stdio_session(tmp_path, "--cwd", str(repo)), lambda s: s.call_tool("recall", args))
    assert "src/shop/api.py" in text(answer)


def test_the_plugin_registers_recall_mcp(repo: Path) -> None:
    """`.mcp.json` at the plugin root (where Claude Code reads a plugin's MCP servers) starts `recall mcp`."""
    config = json.loads((Path(__file__).resolve().parent.parent / ".mcp.json").read_text())
    server = config["mcpServers"]["recall"]
    # the plugin's launcher: the plugin's own recall, or recall on PATH (tests/test_plugin_install.py)
    assert server == {"command": "${CLAUDE_PLUGIN_ROOT}/bin/recall", "args": ["mcp"]}
    tools = run(lambda: stdio_session(repo, *server["args"][1:]), lambda s: s.list_tools()).tools
    assert "recall" in {t.name for t in tools}


def test_recall_mcp_without_the_sdk_says_what_to_install(tmp_path: Path) -> None:
    code = "import sys; sys.modules['mcp'] = None; from recall_agent.cli import main; sys.exit(main(['mcp']))"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and not proc.stdout
    assert proc.stderr.startswith("recall mcp: the MCP SDK is not installed") and "pip install" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_recall_mcp_refuses_a_missing_cwd(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", "mcp", "--cwd", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "not a directory" in proc.stderr and not proc.stdout


# --------------------------------------------------------------------------- streamable HTTP

TOKENS = {"rw": "rw-token-0123456789", "ro": "ro-token-0123456789", "billing": "billing-token-012345"}


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    """A real `recall serve` answering for the temporary `shop` repository, with three tokens."""
    base = tmp_path_factory.mktemp("team")
    shop = write(base / "shop", PY_REPO)
    git_init(shop)
    (base / "tokens.toml").write_text(
        f'[[tokens]]\nname = "rw"\ntoken = "{TOKENS["rw"]}"\nscopes = ["read", "write"]\n\n'
        f'[[tokens]]\nname = "ro"\ntoken = "{TOKENS["ro"]}"\nscopes = ["read"]\n\n'
        f'[[tokens]]\nname = "billing"\ntoken = "{TOKENS["billing"]}"\nscopes = ["read", "write"]\n'
        'repos = ["billing"]\n'
    )
    env = {"RECALL_HOME": str(base / "home")}
    server = start_server(base, ["--token-file", str(base / "tokens.toml"), "--repo", str(shop)], env=env)
    try:
        yield server, shop
    finally:
        server.stop()


def test_http_without_a_token_is_refused_with_401(team) -> None:
    server, _ = team
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer not-a-known-token-at-all"}):
        response = httpx.post(server.url + "/mcp", json=initialize, headers={**headers, **auth})
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"] == "Bearer"
    with pytest.raises(BaseException) as refused:  # the SDK's own client, without a token
        run(lambda: http_session(server.url + "/mcp"), lambda s: s.list_tools())
    assert "MCPError" in repr(refused.value)
    last = [line for line in server.log_lines() if line.get("path") == "/mcp"][-1]
    assert (last["status"], last["token"]) == (401, None)


def test_http_lists_the_shared_tools(team) -> None:
    server, _ = team
    tools = run(lambda: http_session(server.url + "/mcp", TOKENS["ro"]), lambda s: s.list_tools()).tools
    assert {t.name for t in tools} == {"recall", "recall_learn"}  # forget/index act on a local machine
    recall = next(t for t in tools if t.name == "recall")
    assert recall.input_schema["properties"]["scope"]["enum"] == [
        "learnings",
        "architecture",
        "antipatterns",
        "all",
    ]


def test_http_learn_then_recall_returns_the_fix_as_the_cli_against_the_server_does(team, other_repo) -> None:
    server, _ = team
    url = server.url + "/mcp"
    error = "KeyError: 'customer_id' in shop/api.py"
    learned = run(
        lambda: http_session(url, TOKENS["rw"]),
        lambda s: s.call_tool(
            "recall_learn", {"error": error, "resolution": FIX, "repo": "shop", "ticket": "OPS-7"}
        ),
    )
    assert not learned.is_error, text(learned)
    args = {"query": error, "scope": "learnings", "repo": "shop"}
    answer = run(lambda: http_session(url, TOKENS["ro"]), lambda s: s.call_tool("recall", args))
    assert not answer.is_error, text(answer)
    markdown = text(answer)
    assert "PyYAML was missing" in markdown and "**Ticket:** OPS-7" in markdown
    assert SECRET not in markdown
    match = answer.structured_content["learnings"]["response"]["matches"][0]
    assert match["learning_id"] == learned.structured_content["id"]
    # the CLI pointed at the same server prints the same Markdown (the payload's repo is the same: shop)
    env = {
        "AGENT_LEARNING_RETRIEVAL_URL": server.url + "/v1/nodes/node_agent_learning_retrieval_effect/execute",
        "RECALL_TOKEN": TOKENS["ro"],
    }
    assert markdown == recall_cli(other_repo, "--scope", "learnings", "--repo", "shop", error, env=env)


def test_http_answers_an_architecture_question_about_the_served_repository(team) -> None:
    server, _ = team
    args = {"query": "who calls make_order", "scope": "architecture"}
    answer = run(
        lambda: http_session(server.url + "/mcp", TOKENS["ro"]), lambda s: s.call_tool("recall", args)
    )
    assert not answer.is_error, text(answer)
    assert "src/shop/service.py" in text(answer) and "checkout" in text(answer)


def test_http_learnings_of_a_repository_the_server_does_not_index_still_answer(team) -> None:
    server, _ = team
    url = server.url + "/mcp"
    error = "TypeError: unsupported operand type(s) for +: 'int' and 'str'"
    learn = {"error": error, "resolution": "cast the count with int() before adding", "repo": "billing"}
    assert not run(
        lambda: http_session(url, TOKENS["rw"]), lambda s: s.call_tool("recall_learn", learn)
    ).is_error
    answer = run(
        lambda: http_session(url, TOKENS["rw"]),
        lambda s: s.call_tool("recall", {"query": error, "repo": "billing"}),
    )
    assert not answer.is_error, text(answer)
    assert "cast the count with int()" in text(answer)
    assert (
        "[Architecture] unavailable (repo 'billing' is not one of this server's repositories (shop))"
        in text(answer)
    )


def test_http_write_needs_the_write_scope_and_the_repository(team) -> None:
    server, _ = team
    url = server.url + "/mcp"
    learn = {"error": "ValueError: bad", "resolution": "validate input", "repo": "shop"}
    refused = run(lambda: http_session(url, TOKENS["ro"]), lambda s: s.call_tool("recall_learn", learn))
    assert refused.is_error and "lacks the 'write' scope" in text(refused)
    other = run(lambda: http_session(url, TOKENS["billing"]), lambda s: s.call_tool("recall_learn", learn))
    assert other.is_error and "may not write repo 'shop'" in text(other)
    ask = {"query": "who calls checkout", "repo": "shop"}
    hidden = run(lambda: http_session(url, TOKENS["billing"]), lambda s: s.call_tool("recall", ask))
    assert hidden.is_error and "repo" in text(hidden) and "shop" in text(hidden)


def test_http_bad_argument_is_a_tool_error_and_the_server_keeps_serving(team) -> None:
    server, _ = team

    async def calls(session):
        bad = await session.call_tool("recall", {"query": "x", "max_results": 99})
        good = await session.call_tool("recall", {"query": "who calls checkout", "scope": "architecture"})
        return bad, good

    bad, good = run(lambda: http_session(server.url + "/mcp", TOKENS["rw"]), calls)
    assert bad.is_error and "max_results" in text(bad)
    assert not good.is_error and "src/shop/api.py" in text(good)
    assert httpx.get(server.url + "/health").json()["status"] == "ok"


def test_http_is_stateless_across_workers_and_refuses_foreign_hosts_on_loopback(
    tmp_path: Path, repo: Path
) -> None:
    """--workers 2: every POST is a whole exchange, so calls spread over two processes still work; bound to
    loopback without tokens, a DNS-rebinding page (foreign Host or Origin) is refused."""
    server = start_server(tmp_path, ["--workers", "2", "--repo", str(repo)])
    try:

        async def calls(session):
            return [await session.call_tool("recall", {"query": "who calls checkout"}) for _ in range(6)]

        answers = run(lambda: http_session(server.url + "/mcp"), calls)
        assert all(not a.is_error and "src/shop/api.py" in text(a) for a in answers)
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        accept = {"Accept": "application/json, text/event-stream"}
        foreign_host = httpx.post(
            server.url + "/mcp", json=initialize, headers={**accept, "Host": "evil.example"}
        )
        assert foreign_host.status_code == 421
        foreign_origin = httpx.post(
            server.url + "/mcp", json=initialize, headers={**accept, "Origin": "http://evil.example"}
        )
        assert foreign_origin.status_code == 403
    finally:
        server.stop()


def test_http_names_a_store_that_is_down_and_still_answers(tmp_path: Path, repo: Path) -> None:
    """A team server whose PostgreSQL is unreachable: `recall` says so in the answer (as the CLI does for a
    backend that is down) and the architecture still answers; `recall_learn` is a tool error saying why."""
    down = f"postgresql://recall@127.0.0.1:{free_port()}/recall"
    server = start_server(tmp_path, ["--repo", str(repo)], env={"RECALL_DATABASE_URL": down})
    try:

        async def calls(session):
            asked = await session.call_tool("recall", {"query": "who calls checkout"})
            learned = await session.call_tool(
                "recall_learn", {"error": ERROR, "resolution": "pip install pyyaml"}
            )
            return asked, learned

        asked, learned = run(lambda: http_session(server.url + "/mcp"), calls)
    finally:
        server.stop()
    assert not asked.is_error
    assert "[Learnings] unavailable (learnings store unavailable:" in text(asked)
    assert "src/shop/api.py" in text(asked)
    assert asked.structured_content["learnings"]["failure"]["kind"] == "unavailable"
    assert learned.is_error and "learnings store unavailable" in text(learned)


def test_http_server_without_repositories_answers_learnings_only(tmp_path: Path) -> None:
    server = start_server(tmp_path)
    try:

        async def calls(session):
            await session.call_tool(
                "recall_learn", {"error": ERROR, "resolution": "pip install pyyaml", "repo": "shop"}
            )
            return await session.call_tool("recall", {"query": ERROR})

        answer = run(lambda: http_session(server.url + "/mcp"), calls)
    finally:
        server.stop()
    assert not answer.is_error
    assert "pip install pyyaml" in text(answer)
    assert "this server has no repository to answer from (start it with --repo PATH)" in text(answer)
