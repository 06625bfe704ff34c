"""Skill and plugin packaging: valid frontmatter and manifest, and shell-safe argument passing.

The harness substitutes `$ARGUMENTS` raw into the skill body; the body's bash block must deliver any text
to recall unchanged and run nothing from it. These tests do the substitution, run the block with bash and
look at what reached recall (and that no injected command ran).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from recall_agent.config import DEFAULT_RETRIEVAL_PATH
from recall_agent.safety.render import FRAME  # the one framing line (docs/security.md)

pytest_plugins = ["client_fixtures"]

ROOT = Path(__file__).resolve().parent.parent
SKILL = ROOT / "skills" / "recall" / "SKILL.md"
PLUGIN = ROOT / ".claude-plugin" / "plugin.json"
SID = "5e0f5a3c-2222-4c2a-9e55-7d1f1f2a3b4c"
NASTY = (
    "Error: can't open \"$HOME/x\" `touch CANARY_BACKTICK` $(touch CANARY_DOLLAR) ${PATH} 'single' \\n\n"
    '  File "app.py", line 3, in <module>\n'
    "    print('a' + \"b\") ) ( ; | & && || > out.txt < in.txt \\\n"
    "EOF\n"
    "RECALL_ARGS_3f9c2e (a marker on a line of its own is the one thing to delete; this is not one)\n"
    "!`touch CANARY_BANG` $ARGUMENTS ${CLAUDE_SESSION_ID} end"
)


def frontmatter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    assert match, f"{path} has no YAML frontmatter"
    return yaml.safe_load(match.group(1)), match.group(2)


ERROR_PLACEHOLDER = "<the error line that names the cause, as printed>"
RESOLUTION_PLACEHOLDER = (
    "<at most 3 lines: the cause, the change that fixed it (file and function, old -> new, or the command or "
    "package), how it was verified>"
)


def render(body: str, arguments: str) -> str:
    """What the harness does: substitute the session id and the raw arguments (one pass)."""
    body = body.replace("${CLAUDE_SESSION_ID}", SID)
    return body.replace("$ARGUMENTS", arguments)


def bash_blocks(body: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", body, re.S)


@pytest.fixture
def fake_path(tmp_path: Path) -> Path:
    """A bin folder whose `recall` runs this checkout's recall with this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "recall"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m recall_agent "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def test_frontmatter_is_valid() -> None:
    meta, body = frontmatter(SKILL)
    assert re.fullmatch(r"[a-z0-9-]{1,64}", meta["name"]) and meta["name"] == "recall"
    listing = meta["description"] + meta["when_to_use"]
    assert len(listing) <= 1536, len(listing)
    for needle in ("error", "unfamiliar code", "fails"):
        assert needle in listing
    assert meta["argument-hint"].startswith("[--scope learnings|architecture|antipatterns|all]")
    tools = meta["allowed-tools"]
    tools = tools.split(",") if isinstance(tools, str) else tools
    assert [t.strip() for t in tools] == ["Bash(recall:*)"]
    assert "$ARGUMENTS" in body and 'recall learn --session "${CLAUDE_SESSION_ID}" --error' in body


def test_root_skill_is_the_same_skill() -> None:
    assert (ROOT / "SKILL.md").read_text(encoding="utf-8") == SKILL.read_text(encoding="utf-8")


def test_plugin_manifest_is_valid() -> None:
    manifest = json.loads(PLUGIN.read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert re.fullmatch(r"[a-z0-9-]{1,64}", manifest["name"])
    assert manifest["version"] == project["version"]
    assert len(manifest["description"]) > 20
    assert manifest["skills"].startswith("./")
    assert (ROOT / manifest["skills"] / "recall" / "SKILL.md").is_file()
    assert manifest["author"]["name"]
    # the client loads hooks/hooks.json by itself; naming it again is logged as a duplicate (hook-load-failed)
    assert "hooks" not in manifest
    assert isinstance(
        json.loads((ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8")).get("hooks"), dict
    )


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", block], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("arguments", [NASTY, "--scope learnings " + NASTY, ""])
def test_nasty_arguments_reach_recall_unchanged(
    arguments, http_backend, client_env, fake_path, tmp_path
) -> None:
    _, body = frontmatter(SKILL)
    block = bash_blocks(render(body, arguments))[0]
    env = dict(client_env, PATH=f"{fake_path}{os.pathsep}{client_env['PATH']}")
    env["AGENT_LEARNING_RETRIEVAL_URL"] = http_backend.url("empty", "learnings")
    env["KNOWLEDGE_FEDERATION_URL"] = http_backend.url("empty", "federation")
    work = tmp_path / "work"
    work.mkdir()
    proc = run_block(block, work, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Recall Results — scope: ")
    assert sorted(p.name for p in work.iterdir()) == []  # no CANARY_*, no out.txt: nothing was executed
    posted = dict(http_backend.requests)[f"/empty{DEFAULT_RETRIEVAL_PATH}"]
    if arguments:
        assert posted["error_text"] == NASTY
    else:
        assert posted["match_type"] == "auto"
    if arguments.startswith("--scope learnings"):
        assert proc.stdout.startswith("## Recall Results — scope: learnings")


def test_learn_block_passes_error_and_resolution_unchanged(tmp_path: Path, client_env) -> None:
    """The `recall learn` block, filled with nasty text, gives recall exactly that text as argv."""
    _, body = frontmatter(SKILL)
    block = bash_blocks(render(body, ""))[1]
    resolution = 'Quote "$x" and `y` (really); it\'s fixed.\nVerified with `make test`.'
    block = block.replace(ERROR_PLACEHOLDER, NASTY).replace(RESOLUTION_PLACEHOLDER, resolution)
    bin_dir = tmp_path / "stub"
    bin_dir.mkdir()
    dump = tmp_path / "argv.json"
    stub = bin_dir / "recall"  # stands in for the learnings CLI: records the argv it was given
    stub.write_text(f'#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open("{dump}", "w"))\n')
    stub.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(client_env, PATH=f"{bin_dir}{os.pathsep}{client_env['PATH']}")
    proc = run_block(block, work, env)
    assert proc.returncode == 0, proc.stderr
    argv = json.loads(dump.read_text())
    assert argv == [
        "learn",
        "--session",
        SID,
        "--error=" + NASTY,
        "--resolution=" + resolution,
        "--file",
        "path/to/the/changed/file",
    ]
    assert list(work.iterdir()) == []


def test_learn_then_recall_end_to_end(tmp_path: Path, client_env, fake_path, git_repo: Path) -> None:
    """The skill's two blocks with the real recall: record a fix, then an agent hitting the same error
    gets it back from the in-process learnings node (SQLite under this test's RECALL_HOME)."""
    _, body = frontmatter(SKILL)
    error = "ModuleNotFoundError: No module named 'yaml'"
    fix = (
        "PyYAML was missing from the runtime dependencies. Added pyyaml>=6 to pyproject.toml and reinstalled."
    )
    learn = bash_blocks(render(body, ""))[1]
    learn = learn.replace(ERROR_PLACEHOLDER, error).replace(RESOLUTION_PLACEHOLDER, fix)
    learn = learn.replace("path/to/the/changed/file", "pyproject.toml")
    env = dict(client_env, PATH=f"{fake_path}{os.pathsep}{client_env['PATH']}")
    stored = run_block(learn, git_repo, env)
    assert stored.returncode == 0, stored.stderr
    asked = run_block(bash_blocks(render(body, "--scope learnings " + error))[0], git_repo, env)
    assert asked.returncode == 0, asked.stderr
    out = asked.stdout
    assert out.startswith(f"## Recall Results — scope: learnings\n\n{FRAME}\n\n### [Learnings] Match 1 (")
    assert "**Source:** agent_learnings | **Repo:** omnibase_infra" in out
    assert f"**Resolution:** {fix}" in out
    assert "**Files:** pyproject.toml" in out
