"""`python -m build`: a wheel and an sdist that install into a fresh virtual environment and run offline.

The build runs on a copy of the checkout (the build writes nothing into it). The wheel carries the
templates, the antipattern catalogs, the hook entry script and the plugin's files (recall_agent/plugin/,
the same bytes as the plugin at the top of the checkout); the sdist is also a whole plugin and marketplace.
The wheel is installed into a new venv (its dependencies from the package index, the only network use),
then `recall --help`, `recall index` and `recall mcp` (the official MCP SDK's client lists its tools) run
in a network namespace of their own (tests/install_fixtures.py: `offline`). The sdist is built into a
wheel and installed over it, without the network for dependencies (`--no-deps`, they are there).

Slow: the dependencies are downloaded (about half a minute).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import anyio
import pytest
from install_fixtures import REPO_ROOT, YAML_ERROR, offline, run
from mcp import ClientSession, StdioServerParameters, stdio_client

from recall_agent import __version__
from recall_agent.bootstrap.envs import STAGE_IGNORE

pytestmark = pytest.mark.slow
PLUGIN_FILES = [
    ".claude-plugin/plugin.json",
    ".mcp.json",
    "bin/recall",
    "hooks/hooks.json",
    "hooks/recall-hook",
    "skills/recall/SKILL.md",
]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("build")
    source = work / "src"
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(*STAGE_IGNORE))
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return work / "dist"


def test_the_wheel_and_the_sdist_carry_what_recall_needs(dist: Path) -> None:
    wheel = zipfile.ZipFile(dist / f"recall_agent-{__version__}-py3-none-any.whl")
    names = set(wheel.namelist())
    assert {f"recall_agent/client/templates/{t}.md.j2" for t in ("report", "learning", "status")} <= names
    assert len([n for n in names if n.startswith("recall_agent/antipatterns/catalog/")]) >= 7
    assert "recall_agent/hooks/recall-hook" in names and "recall_agent/py.typed" in names
    assert "recall_agent/antipatterns/match_weights.json" in names
    for rel in PLUGIN_FILES:
        assert wheel.read(f"recall_agent/plugin/{rel}") == (REPO_ROOT / rel).read_bytes(), rel
    modes = {i.filename: i.external_attr >> 16 for i in wheel.infolist()}
    assert modes["recall_agent/plugin/bin/recall"] & 0o111 and modes["recall_agent/hooks/recall-hook"] & 0o111
    metadata = wheel.read(f"recall_agent-{__version__}.dist-info/METADATA").decode()
    assert "Name: recall-agent" in metadata
    assert (
        "recall = recall_agent.cli:main"
        in wheel.read(f"recall_agent-{__version__}.dist-info/entry_points.txt").decode()
    )

    with tarfile.open(dist / f"recall_agent-{__version__}.tar.gz") as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {
        *PLUGIN_FILES,
        ".claude-plugin/marketplace.json",
        "Makefile",
        "pyproject.toml",
        "MANIFEST.in",
    } <= members
    assert "recall_agent/bootstrap/plugin.py" in members
    assert not any(m.startswith(("tests/", "bench/")) for m in members)


async def _mcp_tools(recall: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    command = offline([str(recall), "mcp"])
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd), env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [tool.name for tool in (await session.list_tools()).tools]


def test_the_wheel_installs_into_a_fresh_venv_and_runs_offline(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    wheel = dist / f"recall_agent-{__version__}-py3-none-any.whl"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["RECALL_HOME"] = str(tmp_path / "recall-home")
    installed = run([*pip, str(wheel)], env, tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]
    recall = venv / "bin" / "recall"

    helped = run(offline([str(recall), "--help"]), env, tmp_path)
    assert helped.returncode == 0 and "--scope" in helped.stdout
    repo = tmp_path / "shop"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("import json\n\n\ndef main():\n    return json.dumps({})\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    indexed = run(offline([str(recall), "index"]), env, repo, timeout=300)
    assert indexed.returncode == 0, indexed.stderr
    assert "1 files parsed" in indexed.stdout and "1 in the index (python 1)" in indexed.stdout
    answered = run(offline([str(recall), YAML_ERROR]), env, repo, timeout=120)
    assert answered.returncode == 0 and "## Recall Results" in answered.stdout, answered.stderr
    tools = anyio.run(_mcp_tools, recall, repo, env)
    assert {"recall", "recall_learn", "recall_forget", "recall_index"} <= set(tools)
    packaged = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import recall_agent, pathlib; print(pathlib.Path(recall_agent.__file__).parent)"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout.strip()  # fmt: skip
    assert os.access(Path(packaged) / "plugin" / "bin" / "recall", os.X_OK)

    # the sdist builds and installs too (its build needs setuptools from the index; recall's own
    # dependencies are there already)
    sdist = dist / f"recall_agent-{__version__}.tar.gz"
    again = run([*pip, "--no-deps", "--force-reinstall", str(sdist)], env, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    version = run(offline([str(recall), "--version"]), env, tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"recall {__version__}"
