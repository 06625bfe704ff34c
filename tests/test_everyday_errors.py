"""Everyday errors answered from the code with no learnings (issue 38): a missing module or package, a
module of this repository (never "missing"), a missing command, a failing test by id, and test files'
string literals kept out of the answer when the code answers.

Repositories are real files on disk (git where the answer reads history); the done-means cases run the
real `recall` process as a user does (`recall "<error>"` in the project's folder). The real rich 13.9.4
sdist is used when bench/bench_everyday.py has brought it into bench/.cache/everyday/.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from architecture_fixtures import write
from conftest import git

from recall_agent.architecture import query

REPO_ROOT = Path(__file__).resolve().parent.parent
RICH_SDIST = REPO_ROOT / "bench" / ".cache" / "everyday" / "rich-13.9.4"

RICH_LIKE = {
    "pyproject.toml": (
        '[tool.poetry]\nname = "rich"\nversion = "13.9.4"\n\n[tool.poetry.dependencies]\npython = ">=3.8.0"\n'
        'pygments = "^2.13.0"\nmarkdown-it-py = ">=2.2.0"\n\n[build-system]\nrequires = ["poetry-core>=1.0.0"]\n'
    ),
    "rich/__init__.py": '"""Rich text."""\n',
    "rich/syntax.py": "from pygments.lexer import Lexer\nfrom pygments.token import Token\n\n\nclass Syntax:\n    pass\n",
    "rich/traceback.py": "from pygments.lexers import guess_lexer_for_filename\n\n\ndef install():\n    pass\n",
    "rich/markdown.py": "from markdown_it import MarkdownIt\n",
    "rich/console.py": "import os\n\n\nclass Console:\n    pass\n",
}


def recall(text: str, cwd: Path) -> str:
    """A real `recall "<error>"` in `cwd` (in-process engines, no server): its Markdown answer."""
    done = subprocess.run(
        [sys.executable, "-m", "recall_agent", text], cwd=cwd, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def answers(text: str, repo: Path) -> list[dict]:
    return [{"content": r.content, **(r.model_extra or {})} for r in query(text, str(repo))]


def test_a_missing_package_in_a_rich_like_sdist_names_its_importers_and_declaration(tmp_path: Path) -> None:
    sdist = write(tmp_path / "rich-13.9.4", RICH_LIKE)  # an unpacked sdist: no git
    out = recall("ModuleNotFoundError: No module named 'pygments'", sdist)
    assert "No relevant knowledge found" not in out
    assert "Missing package (read from the code): `pygments`" in out
    assert "imported by rich/syntax.py:1, rich/traceback.py:1" in out
    assert 'declared in pyproject.toml:7 [tool.poetry.dependencies]: `pygments = "^2.13.0"`' in out
    assert "the project's install command: `poetry install`" in out
    # the import name differs from the distribution's: markdown_it is markdown-it-py
    first = answers("ModuleNotFoundError: No module named 'markdown_it'", sdist)[0]
    assert first["answer"] == "missing_package" and first["declared"] == ["pyproject.toml:8"]
    assert first["importers"] == ["rich/markdown.py"]
    # a standard-library module is no package to declare: the Python lacks it
    stdlib = answers("ModuleNotFoundError: No module named '_ctypes'", sdist)[0]["content"]
    assert stdlib.startswith(
        "Missing standard-library module: `_ctypes` is part of Python's standard library"
    )


@pytest.mark.skipif(not RICH_SDIST.is_dir(), reason="rich's sdist is not in bench/.cache (bench_everyday.py)")
def test_the_real_rich_sdist(tmp_path: Path) -> None:
    out = recall("ModuleNotFoundError: No module named 'pygments'", RICH_SDIST)
    assert "imported by rich/syntax.py:" in out and "rich/traceback.py:" in out
    assert "declared in pyproject.toml:" in out and "[tool.poetry.dependencies]" in out


def test_a_module_of_this_repository_is_never_reported_missing(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "shop",
        {
            "orders.py": "def place(order):\n    return order\n",
            "app/main.py": "import orders\n\n\ndef run():\n    return orders.place(1)\n",
        },
    )
    git(repo, "init", "-q")
    out = recall("ModuleNotFoundError: No module named 'orders'", repo)
    assert "No module `orders`" not in out and "Closest modules: `orders`" not in out
    assert (
        "Module of this repository (read from the code): `orders` is this repository's own, at orders.py"
        in out
    )
    assert "not a missing package" in out and "sys.path" in out
    # a submodule that really is not there is still named, with the closest real one
    first = answers("ModuleNotFoundError: No module named 'orders.refunds'", repo)[0]["content"]
    assert first.startswith("Module of this repository (read from the code): no module `orders.refunds`")


def test_a_tests_string_literal_is_no_evidence_when_the_code_answers(tmp_path: Path) -> None:
    error = "ModuleNotFoundError: No module named 'yaml'"
    repo = write(
        tmp_path / "tool",
        {
            "pyproject.toml": '[project]\nname = "tool"\ndependencies = [\n    "pyyaml>=6.0",\n]\n',
            "Makefile": "dev:  ## editable install with the test tools\n\tpip install -e .\n",
            "tool/config.py": "import yaml\n\n\ndef load(path):\n    return yaml.safe_load(path)\n",
            "tests/fixtures.py": f'YAML_ERROR = "{error}"\n',
        },
    )
    git(repo, "init", "-q")
    found = answers(error, repo)
    assert found[0]["answer"] == "missing_package", found
    text = "\n".join(a["content"] for a in found)
    assert "tests/fixtures.py" not in text and "Message defined" not in text
    assert "imported by tool/config.py:1" in text and "pyproject.toml:4 [project] dependencies" in text
    assert "`make dev` (Makefile:1: editable install with the test tools)" in text
    # with nothing else to go on, the literal is still shown (and marked as a test's)
    only = answers("ValueError: the frobnicator is out of tune today", write(repo, {"tests/t.py": (
        'MSG = "the frobnicator is out of tune today"\n')}))  # fmt: skip
    assert only and "[test file]" in only[0]["content"]


def test_missing_packages_in_node_go_rust_and_ruby(tmp_path: Path) -> None:
    node = write(
        tmp_path / "web",
        {
            "package.json": '{\n  "name": "web",\n  "dependencies": {\n    "follow-redirects": "^1.15.6"\n  },\n'
            '  "devDependencies": {\n    "mocha": "^10.0.0"\n  },\n  "scripts": {\n    "test": "mocha test/"\n  }\n}\n',
            "package-lock.json": "{}\n",
            "lib/http.js": "const follow = require('follow-redirects');\nmodule.exports = follow;\n",
        },
    )
    first = answers("Error: Cannot find module 'follow-redirects'", node)[0]["content"]
    assert "imported by lib/http.js:1" in first and "package.json:4 dependencies" in first
    assert "`npm ci` (package-lock.json)" in first
    mocha = answers("sh: 1: mocha: not found", node)[0]["content"]
    assert mocha.startswith("Missing command (read from the code): `mocha`; used in package.json:10")
    assert "package.json:7 devDependencies" in mocha and "npx mocha" in mocha

    go = write(
        tmp_path / "svc",
        {
            "go.mod": "module example.com/svc\n\ngo 1.21\n\nrequire (\n\tgithub.com/go-playground/validator/v10 v10.20.0\n)\n",
            "go.sum": "",
            "check.go": 'package svc\n\nimport "github.com/go-playground/validator/v10"\n\nvar V = validator.New()\n',
        },
    )
    first = answers("no required module provides package github.com/go-playground/validator/v10", go)[0]
    assert "imported by check.go:3" in first["content"] and "go.mod:6 require" in first["content"]
    assert "`go mod download` (go.sum)" in first["content"]
    own = answers("no required module provides package example.com/svc/internal", go)[0]["content"]
    assert own.startswith("Module of this repository") and "no folder internal/ in it" in own
    write(go, {"internal/x.go": "package internal\n"})
    own = answers("no required module provides package example.com/svc/internal", go)[0]["content"]
    assert "`example.com/svc/internal` is this repository's own, at internal" in own
    assert "not a missing package" in own

    crate = write(
        tmp_path / "crate",
        {
            "Cargo.toml": '[package]\nname = "crate"\n\n[dev-dependencies]\n# comment about thiserror\nthiserror = "2"\n',
            "src/lib.rs": "pub fn f() {}\n",
            "tests/t.rs": "use thiserror::Error;\n\n#[test]\nfn t() {}\n",
        },
    )
    first = answers("error[E0432]: unresolved import `thiserror`", crate)[0]["content"]
    assert "imported by tests/t.rs:1 [test]" in first
    assert 'Cargo.toml:6 [dev-dependencies]: `thiserror = "2"`' in first and "only as a development" in first

    gem = write(
        tmp_path / "site",
        {
            "site.gemspec": 'Gem::Specification.new do |s|\n  s.add_runtime_dependency("kramdown", "~> 2.3")\nend\n',
            "Gemfile": 'source "https://rubygems.org"\ngemspec\n',
            "lib/site.rb": 'require "kramdown"\n',
        },
    )
    first = answers("cannot load such file -- kramdown (LoadError)", gem)[0]["content"]
    assert "imported by lib/site.rb:1" in first and "site.gemspec:2 runtime" in first
    own = answers("cannot load such file -- site (LoadError)", gem)[0]["content"]
    assert own.startswith("Module of this repository") and "lib/site.rb" in own and "ruby -Ilib" in own


def test_a_missing_command_names_where_the_repository_uses_it(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "proj",
        {
            "go.mod": "module example.com/proj\n\ngo 1.21\n",
            "verify/golint.sh": "#!/bin/sh\nset -e\n# lint\ngolint ./...\n",
            ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: verify/golint.sh\n      - run: go test ./...\n",
            "main.go": "package main\n\nfunc main() {}\n",
        },
    )
    first = answers("verify/golint.sh: line 4: golint: command not found", repo)[0]
    assert first["answer"] == "missing_command" and first["uses"] == ["verify/golint.sh:4"]
    assert "no manifest of the project declares it" in first["content"]
    assert answers("zsh: command not found: golint", repo)[0]["command"] == "golint"  # not "zsh"
    go = answers("bash: go: command not found", repo)[0]["content"]
    assert ".github/workflows/ci.yml:5" in go and "it is the toolchain of go.mod" in go
    assert answers("bash: frobnicate: command not found", repo) == []  # nothing of the repository involved


def test_a_failing_test_names_the_code_under_test_and_what_changed(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "lib",
        {
            "pkg/utils.py": "def proxies(env):\n    return {k: v for k, v in env.items() if k.endswith('_proxy')}\n",
            "tests/test_utils.py": (
                "from pkg.utils import proxies\n\n\ndef test_proxies():\n    assert proxies({'http_proxy': 'x'})\n"
                "    again = check()\n"  # a local helper's name, defined once elsewhere and not imported
            ),
            "bench/server.py": "def check():\n    return 1\n",
            "flag.go": "package flag\n\nfunc Parse(s string) string { return s }\n",
            "flag_test.go": 'package flag\n\nimport "testing"\n\nfunc TestShorthand(t *testing.T) {\n\tParse("-x")\n}\n',
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "proxies from the environment")
    first = answers("FAILED tests/test_utils.py::test_proxies[env0] - AssertionError", repo)[0]
    assert first["answer"] == "failing_test" and first["test"] == "tests/test_utils.py:4"
    assert first["under_test"][0] == "pkg/utils.py"
    assert "code under test: pkg/utils.py (`proxies`)" in first["content"]
    assert "bench/server.py" not in first["content"]  # a name the test file does not import is a guess
    assert "proxies from the environment (pkg/utils.py, tests/test_utils.py)" in first["content"]
    go = answers("--- FAIL: TestShorthand (0.00s)", repo)[0]
    assert go["test"] == "flag_test.go:5" and go["under_test"][0] == "flag.go"


def test_an_error_the_repository_raises_still_answers_with_the_raise_site_first(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "cli",
        {
            "cli/flags.py": "def parse(arg):\n    raise ValueError(f'unknown shorthand flag: {arg!r} in -{arg}')\n",
            "tests/test_flags.py": "MSG = \"unknown shorthand flag: 'x' in -x\"\n",
        },
    )
    first = answers("ValueError: unknown shorthand flag: 'x' in -x", repo)[0]
    assert first["answer"] == "error_origin" and first["sites"][0]["file"] == "cli/flags.py"
    assert "[test file]" not in first["content"]  # the real raise site is there: the test's literal is not


def test_failing_test_ids_of_jest_cargo_minitest_and_junit(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "poly",
        {
            "lib/headers.js": "class AxiosHeaders {\n  get(name) { return name; }\n}\nmodule.exports = AxiosHeaders;\n",
            "test/unit/headers.test.js": (
                "const AxiosHeaders = require('../../lib/headers');\n\n"
                "test('gets', () => {\n  new AxiosHeaders().get('a');\n});\n"
            ),
            "src/error.rs": "pub struct Error;\nimpl Error {\n    pub fn downcast_ref(&self) -> Option<&str> { None }\n}\n",
            "tests/test_downcast.rs": (
                "#[test]\nfn test_downcast_ref() {\n    assert_eq!(None, Error.downcast_ref());\n}\n"
            ),
            "lib/site/config.rb": "module Site\n  class Config\n    def stringify_keys(h)\n      h\n    end\n  end\nend\n",
            "test/test_config.rb": (
                'require "site/config"\n\nclass TestConfig < Minitest::Test\n  def test_stringify\n'
                "    Site::Config.new.stringify_keys({})\n  end\nend\n"
            ),
            "src/main/java/com/x/Gson.java": "package com.x;\n\npublic class Gson {\n  public int n() { return 1; }\n}\n",
            "src/test/java/com/x/GsonTest.java": (
                "package com.x;\n\npublic class GsonTest {\n  public void testN() {\n    new Gson().n();\n  }\n}\n"
            ),
        },
    )
    jest = answers("FAIL test/unit/headers.test.js > AxiosHeaders > gets", repo)[0]
    assert jest["answer"] == "failing_test" and jest["under_test"][0] == "lib/headers.js", jest
    cargo = answers(
        "     Running tests/test_downcast.rs (target/debug/deps/x)\ntest test_downcast_ref ... FAILED", repo
    )
    assert cargo[0]["test"] == "tests/test_downcast.rs:2" and cargo[0]["under_test"][0] == "src/error.rs"
    minitest = answers("Failure:\nTestConfig#test_stringify [test/test_config.rb:5]", repo)[0]
    assert minitest["test"] == "test/test_config.rb:4" and minitest["under_test"][0] == "lib/site/config.rb"
    junit = answers("[ERROR]   GsonTest.testN:5 expected:<2> but was:<1>", repo)[0]
    assert junit["test"].startswith("src/test/java/com/x/GsonTest.java:")
    assert junit["under_test"][0] == "src/main/java/com/x/Gson.java"
