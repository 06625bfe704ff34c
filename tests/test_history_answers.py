"""History answers through the real engine and the real `recall` CLI: what changes with a file, hotspots,
owners, the risk of the working change, tests to run, the blast radius's history line, and the static
answer with a note where there is no history (shallow clone, plain folder, one commit)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import git

from recall_agent.architecture import query

MODELS = "".join(f"FIELD_{i} = {i}\n" for i in range(12))

FILES = {
    "src/shop/__init__.py": "",
    "src/shop/models.py": "class Cart:\n    items = []\n" + MODELS,
    "src/shop/views.py": "from shop.models import Cart\n\n\ndef show():\n    return Cart()\n",
    "src/shop/config.py": "import tomllib\n\n\ndef load():\n    return tomllib.load(open('settings.toml', 'rb'))\n",
    "templates/cart.html": "<ul>{% for i in items %}<li>{{ i }}</li>{% endfor %}</ul>\n",
    "settings.toml": "[shop]\nname = 'x'\n",
    "tests/test_views.py": "from shop.views import show\n\n\ndef test_show():\n    assert show()\n",
    "README.md": "shop\n",
}


DAY = 86_400
NOW = int(time.time())


def _commit(repo: Path, message: str, touched: list[str], author: str, n: int, days_ago: float) -> None:
    for rel in touched:
        path = repo / rel
        mark = f"<!-- {n} -->\n" if rel.endswith(".html") else f"\n# {n}\n"
        path.write_text(path.read_text() + mark)
    when = f"{int(NOW - days_ago * DAY)} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for args in (
        ["add", "-A"],
        ["-c", f"user.name={author}", "-c", "user.email=t@example.com", "commit", "-q", "-m", message],
    ):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """Two years of a small shop's history, saying what its imports cannot: the cart view and its template
    change together, the config reader and its settings file too; the view's recent commits are fixes."""
    repo = tmp_path / "shop"
    repo.mkdir()
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "start the shop", [], "Ada", 0, 700)
    n = 0
    for i in range(6):
        n += 1
        _commit(
            repo, f"cart view step {i}", ["src/shop/views.py", "templates/cart.html"], "Ada", n, 650 - 25 * i
        )
    for i in range(4):
        n += 1
        _commit(repo, f"settings {i}", ["src/shop/config.py", "settings.toml"], "Cy", n, 420 - 30 * i)
    for i in range(3):
        n += 1
        touched = ["src/shop/views.py", "src/shop/models.py", "tests/test_views.py"]
        _commit(repo, f"Fix cart total {i}", touched, "Bob", n, 50 - 20 * i)
    _commit(repo, "readme", ["README.md"], "Ada", n + 1, 5)
    return repo


def _answer(text: str, repo: Path) -> tuple[str, dict]:
    results = query(text, str(repo), roles={"memgraph", "repowise"})
    assert results, text
    return results[0].content, results[0].model_dump()


def test_what_changes_with_a_file_names_partners_no_import_explains(shop: Path) -> None:
    content, extras = _answer("what changes with src/shop/views.py", shop)
    lines = content.splitlines()
    assert lines[0].startswith("Files that change with `src/shop/views.py` (10 commits since")
    template = next(line for line in lines if "templates/cart.html" in line)
    assert "7 commits together (70%)" in template and "[no import]" in template
    models = next(line for line in lines if "src/shop/models.py" in line)
    assert "4 commits together (40%)" in models and "[no import]" not in models  # views imports models
    settings = next(line for line in lines if "settings.toml" in line)
    assert "1 commit together (10%)" in settings  # only the first commit, which added everything
    assert extras["answer"] == "cochange" and "templates/cart.html" in extras["without_import"]
    assert extras["source"] == "memgraph" and extras["engine"] == "recall-index"


def test_a_symbol_is_answered_for_its_file(shop: Path) -> None:
    content, _ = _answer("what changes with Cart", shop)
    assert "`shop.models.Cart` is in src/shop/models.py; history is kept per file" in content
    assert "src/shop/views.py" in content


def test_a_file_the_code_index_does_not_parse_is_still_answered(shop: Path) -> None:
    content, _ = _answer("what changes with settings.toml", shop)
    assert "src/shop/config.py — 5 commits together (100%)" in content


def test_blast_radius_gains_a_changes_with_it_line(shop: Path) -> None:
    content, _ = _answer("blast radius of shop.models", shop)
    line = next(line for line in content.splitlines() if line.startswith("Changes with it:"))
    assert "src/shop/views.py (4×)" in line and "tests/test_views.py (4×, no import)" in line


def test_owners_and_bus_factor(shop: Path) -> None:
    content, extras = _answer("who knows src/shop/views.py", shop)
    assert "10 commits by 2 authors; bus factor 2" in content
    assert "- Ada: 7 commits (70%)" in content and "- Bob: 3 commits (30%)" in content
    assert "Most active in the last year: Bob (3)" in content
    assert extras["owners"] == ["Ada", "Bob"] and extras["source"] == "repowise"
    folder, _ = _answer("who owns src/shop", shop)
    assert "by 3 authors" in folder


def test_hotspots_answer_ranks_and_calibrates(shop: Path) -> None:
    content, extras = _answer("hotspots", shop)
    assert "probability of a fix within 90 days" in content
    assert extras["files"] == 8
    assert set(extras["hotspots"]) <= {"src/shop/views.py", "src/shop/models.py", "tests/test_views.py"}
    assert "settings.toml" not in extras["hotspots"] and "templates/cart.html" not in extras["hotspots"]
    inside, extras = _answer("hotspots in templates", shop)
    assert extras["files"] == 1 and "templates/cart.html" in inside


def test_risk_of_the_working_change_names_the_partner_left_out_and_the_tests(shop: Path) -> None:
    (shop / "src/shop/views.py").write_text(FILES["src/shop/views.py"] + "\n# edit\n")
    content, extras = _answer("what's risky in my change", shop)
    assert content.startswith("Change risk of the working tree: 1 file changed (src/shop/views.py)")
    assert "templates/cart.html" in extras["left_out"]
    assert "Tests to run: tests/test_views.py" in content
    assert "Dependents (blast radius): src/shop/views.py 1 file" in content
    tests, extras = _answer("which tests should I run", shop)
    assert extras["answer"] == "tests_to_run" and extras["tests"][0] == "tests/test_views.py"
    assert "changed with them 4×" in tests and "imports it" in tests


def test_risk_of_a_range_of_commits(shop: Path) -> None:
    content, extras = _answer("what's risky in HEAD~2..HEAD", shop)
    assert content.startswith("Change risk of HEAD~2..HEAD: 4 files changed")
    assert set(extras["files"]) == {
        "README.md",
        "src/shop/models.py",
        "src/shop/views.py",
        "tests/test_views.py",
    }
    bad, _ = _answer("what's risky in nosuch..HEAD", shop)
    assert bad.startswith("git cannot read `nosuch..HEAD`")


def test_a_new_commit_is_seen_by_the_next_question(shop: Path) -> None:
    _answer("what changes with settings.toml", shop)
    _commit(shop, "settings and readme", ["settings.toml", "README.md"], "Dee", 99, 1)
    content, _ = _answer("what changes with settings.toml", shop)
    assert "README.md — 2 commits together" in content  # the first commit and the new one


def test_shallow_clone_gets_the_static_answer_and_a_note(shop: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{shop}", str(clone)], check=True)
    content, extras = _answer("what changes with src/shop/models.py", clone)
    assert content.startswith("Blast radius of `shop.models`")  # the import graph's answer
    assert "shallow clone" in content and "this answer comes from the import graph alone" in content
    hot, _ = _answer("hotspots", clone)
    assert hot.startswith("No history to answer from:") and "shallow clone" in hot


@pytest.mark.parametrize("kind", ["plain folder", "one commit"])
def test_no_history_notes(kind: str, tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    repo.mkdir()
    for rel in ("src/shop/__init__.py", "src/shop/models.py", "src/shop/views.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(FILES[rel])
    if kind == "one commit":
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "only")
    content, _ = _answer("what changes with src/shop/models.py", repo)
    expected = (
        "is not a git repository" if kind == "plain folder" else "has 1 commit: no history to learn from yet"
    )
    assert expected in content and "src/shop/views.py" in content  # the dependent, from the graph


def _recall(recall_cmd: list[str], env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*recall_cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_cli_done_criterion(shop: Path, recall_cmd: list[str], subprocess_env) -> None:
    """In a real clone, through the `recall` client: co-change partners with support and the ones no
    import explains; with an uncommitted change, the usual partner left out and the tests to run."""
    summary = json.loads(_recall(recall_cmd, subprocess_env, shop, "index", "--json", str(shop)).stdout)
    assert summary["history"]["commits"] == 15 and summary["history"]["note"] == ""
    text = _recall(recall_cmd, subprocess_env, shop, "index", str(shop)).stdout
    assert "History: 15 commits, 8 files (0 new commits read" in text
    out = _recall(
        recall_cmd, subprocess_env, shop, "--scope", "architecture", "what changes with src/shop/views.py"
    )
    assert "templates/cart.html — 7 commits together (70%)" in out.stdout and "[no import]" in out.stdout
    (shop / "src/shop/views.py").write_text(FILES["src/shop/views.py"] + "\n# edit\n")
    risky = _recall(recall_cmd, subprocess_env, shop, "--scope", "architecture", "what's risky in my change")
    assert "left out of this change" in risky.stdout and "templates/cart.html" in risky.stdout
    assert "Tests to run: tests/test_views.py" in risky.stdout


def test_index_without_history_and_outside_git(tmp_path: Path, recall_cmd: list[str], subprocess_env) -> None:
    plain = tmp_path / "plain"
    (plain / "pkg").mkdir(parents=True)
    (plain / "pkg" / "a.py").write_text("x = 1\n")
    text = _recall(recall_cmd, subprocess_env, plain, "index", str(plain)).stdout
    assert "History: none read (plain is not a git repository)" in text
    skipped = json.loads(
        _recall(recall_cmd, subprocess_env, plain, "index", "--json", "--no-history", str(plain)).stdout
    )
    assert "history" not in skipped


@pytest.mark.parametrize(
    ("text", "action", "subject"),
    [
        ("what changes with src/shop/views.py", "cochange", "src/shop/views.py"),
        ("which files usually change together with settings.toml?", "cochange", "settings.toml"),
        ("co-change partners of Cart", "cochange", "Cart"),
        ("hotspots in src/shop", "hotspots", "src/shop"),
        ("where do bugs land", "hotspots", ""),
        ("who knows src/shop/views.py best", "owners", "src/shop/views.py"),
        ("bus factor", "owners", ""),
        ("what's risky in my change", "risk", ""),
        ("what's risky in main..HEAD", "risk", "main..HEAD"),
        ("which tests should I run", "tests_to_run", ""),
        ("tests to run for shop.models", "tests_to_run", "shop.models"),
        ("what does shop.models affect", "blast", "shop.models"),
        ("tests for shop.models", "tests", "shop.models"),  # the graph's answer, as before
    ],
)
def test_history_questions_are_understood_and_routed(text: str, action: str, subject: str) -> None:
    from recall_agent.architecture.understand import understand
    from recall_agent.federation import route

    intent = understand(text)
    assert (intent.action, intent.subject) == (action, subject)
    roles = {r.value for r in route(text)}
    assert roles & {"memgraph", "repowise"}, roles


def test_a_go_file_of_the_same_package_is_not_called_unexplained(tmp_path: Path) -> None:
    """Go files of one folder are one package: they use each other without an import."""
    repo = tmp_path / "svc"
    files = {
        "go.mod": "module example.com/svc\n\ngo 1.21\n",
        "server.go": "package svc\n\nfunc Serve() { route() }\n",
        "routes.go": "package svc\n\nfunc route() {}\n",
        "CHANGELOG.md": "changes\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "start", [], "Ada", 0, 300)
    for i in range(5):
        _commit(repo, f"routes {i}", ["server.go", "routes.go"], "Ada", i + 1, 250 - 20 * i)
    for i in range(3):
        _commit(repo, f"release {i}", ["server.go", "CHANGELOG.md"], "Bob", i + 10, 100 - 20 * i)
    content, _ = _answer("what changes with server.go", repo)
    routes = next(
        line for line in content.splitlines() if line.startswith(("1.", "2.")) and "routes.go" in line
    )
    changelog = next(line for line in content.splitlines() if "CHANGELOG.md" in line)
    assert routes.endswith("[same Go package]") and changelog.endswith("[no import]")
    unexplained = sum(line.endswith("[no import]") for line in content.splitlines())
    assert f"{unexplained} of " in content.splitlines()[-1]  # the same package is not counted
