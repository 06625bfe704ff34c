"""Build the learnings benchmark corpus by really running real tools (python, pytest, ruff, mypy, git, bash,
node, npm, cargo/rustc, gcc, sqlite3, pip) in varied surroundings and capturing what they print.

Every cause is a small scenario that provokes one real failure. Each instance runs it again somewhere else:
a fresh temp directory with a different name and depth, other file/function names, the failing line moved
down, pytest instead of plain python, colour forced on or off, and for some instances every line prefixed
the way CI logs do (timestamps, PIDs). Distractors are near misses: same exception type / tool / error code
as a cause, but a different underlying problem (so a different fix). They have no learning.

    python bench/corpus/generate.py            # writes bench/corpus/errors.jsonl (a few minutes, 2 workers)

No network: npm runs with --offline, pip with --no-index. mypy must be installed (pip install mypy).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parent / "errors.jsonl"
INSTANCES = 4
DISTRACTOR_INSTANCES = 2
MAX_CHARS = 4000

PROJECT_NAMES = ["billing-svc", "acme_api", "ml-pipeline", "webshop", "infra-tools", "dash", "core"]
FILE_NAMES = ["app", "service", "worker", "main", "handlers", "tasks", "utils", "jobs"]
FUNC_NAMES = ["process", "handle_request", "run_job", "load", "compute_totals", "sync", "build"]
DIR_DEPTHS = [["src"], ["pkg", "lib"], ["code"], ["apps", "backend", "src"], []]


@dataclass
class Ctx:
    """Where and how one instance runs."""

    cause: str
    instance: int
    base: Path  # the temp directory removed afterwards
    root: Path  # the instance's working directory inside it
    color: bool
    pytest: bool  # python causes: run under pytest instead of plain python
    pad: int  # blank/comment lines inserted before the failing code
    name: str  # module/file base name
    func: str  # function name
    rng: random.Random

    def write(self, rel: str, content: str, mode: int | None = None) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        if mode is not None:
            path.chmod(mode)
        return path

    def run(self, cmd: list[str] | str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
        base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "CLICOLOR_FORCE")}
        base.update({"HOME": str(self.root / ".home"), "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8"})
        (self.root / ".home").mkdir(exist_ok=True)
        if self.color:
            base.update(
                {"FORCE_COLOR": "1", "CLICOLOR_FORCE": "1", "MYPY_FORCE_COLOR": "1", "PY_COLORS": "1"}
            )
        else:
            base["NO_COLOR"] = "1"
        base["CARGO_HOME"] = os.environ.get("CARGO_HOME", str(Path.home() / ".cargo"))
        base["RUSTUP_HOME"] = os.environ.get("RUSTUP_HOME", str(Path.home() / ".rustup"))
        base.update(env or {})
        proc = subprocess.run(
            cmd,
            cwd=cwd or self.root,
            env=base,
            shell=isinstance(cmd, str),
            executable="/bin/bash" if isinstance(cmd, str) else None,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return (proc.stdout + proc.stderr).strip("\n")

    def git(self, *args: str, cwd: Path | None = None) -> str:
        color = ["-c", "color.ui=always"] if self.color else ["-c", "color.ui=never"]
        ident = ["-c", "user.name=Dev", "-c", "user.email=dev@example.com", "-c", "init.defaultBranch=main"]
        return self.run(["git", *color, *ident, *args], cwd=cwd)


# --------------------------------------------------------------------------- python scenarios


def py(body: str, *, entry_arg: str = "") -> Callable[[Ctx], str]:
    """A python failure raised inside `<func>()` of `<name>.py`, called from a script or a pytest test."""

    def scenario(c: Ctx) -> str:
        pkg = Path(*c.rng.choice(DIR_DEPTHS)) if c.rng.random() < 0.8 else Path()
        code = "import os\nimport sys\n" + "# --\n" * c.pad + f"\n\ndef {c.func}({entry_arg}):\n"
        code += textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
        c.write(str(pkg / f"{c.name}.py"), code)
        call = f"{c.func}()" if not entry_arg else f"{c.func}(None)"
        if c.pytest:
            c.write(
                str(pkg / f"test_{c.name}.py"),
                f"from {c.name} import {c.func}\n\n\ndef test_{c.func}():\n    {call}\n",
            )
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"test_{c.name}.py"]
            cmd.append("--color=yes" if c.color else "--color=no")
            return c.run(cmd, cwd=c.root / pkg)
        c.write(
            str(pkg / "run.py"), f"from {c.name} import {c.func}\n\nif __name__ == '__main__':\n    {call}\n"
        )
        return c.run([sys.executable, "run.py"], cwd=c.root / pkg)

    return scenario


def py_http(status: int, path: str, client: str) -> Callable[[Ctx], str]:
    """A real local HTTP server answering `status`, called with urllib/httpx/requests."""
    call = {
        "httpx": "import httpx\nr = httpx.get(url)\nr.raise_for_status()",
        "requests": "import requests\nr = requests.get(url, timeout=5)\nr.raise_for_status()",
        "urllib": "import urllib.request\nurllib.request.urlopen(url)",
    }[client]
    server = f"""
import http.server, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response({status}); self.end_headers(); self.wfile.write(b'{{"error": "nope"}}')
    def log_message(self, *a): pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d{path}" % srv.server_address[1]
"""
    return py(server + call)


def py_refused(client: str) -> Callable[[Ctx], str]:
    call = {
        "httpx": "import httpx\nhttpx.get(f'http://127.0.0.1:{port}/health')",
        "psycopg": "import psycopg\npsycopg.connect(f'host=127.0.0.1 port={port} user=app dbname=app connect_timeout=3')",
        "requests": "import requests\nrequests.get(f'http://127.0.0.1:{port}/api/items', timeout=3)",
    }[client]
    free = (
        "import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
    )
    return py(free + call)


# --------------------------------------------------------------------------- tool scenarios


def ruff_case(code: str) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        c.write(f"{c.name}.py", "# --\n" * c.pad + textwrap.dedent(code).replace("FUNC", c.func))
        color = ["--color", "always"] if c.color else []
        return c.run(["ruff", "check", "--no-cache", "--select", "E,F,W", *color, f"{c.name}.py"])

    return scenario


def mypy_case(code: str, extra: list[str] | None = None) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        c.write(f"{c.name}.py", "# --\n" * c.pad + textwrap.dedent(code).replace("FUNC", c.func))
        flags = ["--color-output"] if c.color else ["--no-color-output"]
        cache = ["--cache-dir", str(c.root / ".mypy_cache")]
        return c.run(
            ["mypy", *flags, *cache, "--no-error-summary" if c.instance % 2 else "--pretty"]
            + (extra or [])
            + [f"{c.name}.py"]
        )

    return scenario


def node_case(code: str, *, ext: str = "js") -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        c.write(f"{c.name}.{ext}", "// --\n" * c.pad + textwrap.dedent(code).replace("FUNC", c.func))
        return c.run(["node", f"{c.name}.{ext}"])

    return scenario


def npm_case(setup: Callable[[Ctx], None], args: list[str]) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        setup(c)
        color = ["--color", "always"] if c.color else ["--no-color"]
        return c.run(["npm", *args, *color, "--offline", "--cache", str(c.root / ".npm-cache")])

    return scenario


def package_json(scripts: dict[str, str] | None = None) -> Callable[[Ctx], None]:
    def setup(c: Ctx) -> None:
        c.write(
            "package.json",
            json.dumps({"name": c.name.replace("_", "-"), "version": "1.0.0", "scripts": scripts or {}}),
        )

    return setup


def rust_case(code: str) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        crate = c.name.replace("-", "_")
        c.write("Cargo.toml", f'[package]\nname = "{crate}"\nversion = "0.1.0"\nedition = "2021"\n')
        c.write("src/main.rs", "// --\n" * c.pad + textwrap.dedent(code).replace("FUNC", c.func))
        color = ["--color", "always" if c.color else "never"]
        return c.run(
            ["cargo", "build", "--offline", "-q", *color], env={"CARGO_TARGET_DIR": str(c.root / "target")}
        )

    return scenario


def c_case(code: str, *, link: bool = False) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        c.write(f"{c.name}.c", "/* -- */\n" * c.pad + textwrap.dedent(code).replace("FUNC", c.func))
        color = ["-fdiagnostics-color=always" if c.color else "-fdiagnostics-color=never"]
        out = ["-o", str(c.root / "a.out")] if link else ["-c", "-o", str(c.root / "a.o")]
        return c.run(["gcc", "-Wall", *color, f"{c.name}.c", *out])

    return scenario


def sh(script: str) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        return c.run(textwrap.dedent(script).replace("NAME", c.name).replace("FUNC", c.func))

    return scenario


def git_repo(c: Ctx, path: Path | None = None) -> Path:
    repo = path or c.root / c.rng.choice(PROJECT_NAMES)
    repo.mkdir(parents=True, exist_ok=True)
    c.git("init", "-q", cwd=repo)
    (repo / "README.md").write_text(f"# {c.name}\n")
    c.git("add", ".", cwd=repo)
    c.git("commit", "-qm", "init", cwd=repo)
    return repo


def git_non_ff(c: Ctx) -> str:
    bare = c.root / "remote.git"
    c.git("init", "-q", "--bare", str(bare))
    a = git_repo(c, c.root / "a")
    c.git("remote", "add", "origin", str(bare), cwd=a)
    c.git("push", "-q", "origin", "main", cwd=a)
    c.git("clone", "-q", str(bare), str(c.root / "b"))
    b = c.root / "b"
    (b / f"{c.name}.txt").write_text("theirs\n")
    c.git("add", ".", cwd=b)
    c.git("commit", "-qm", "theirs", cwd=b)
    c.git("push", "-q", "origin", "main", cwd=b)
    (a / f"{c.name}.txt").write_text("mine\n")
    c.git("add", ".", cwd=a)
    c.git("commit", "-qm", "mine", cwd=a)
    return c.git("push", "origin", "main", cwd=a)


def git_conflict(c: Ctx) -> str:
    repo = git_repo(c)
    f = repo / f"{c.name}.cfg"
    f.write_text("value = 1\n")
    c.git("add", ".", cwd=repo)
    c.git("commit", "-qm", "base", cwd=repo)
    c.git("checkout", "-qb", "feature", cwd=repo)
    f.write_text("value = 2\n")
    c.git("commit", "-qam", "feature", cwd=repo)
    c.git("checkout", "-q", "main", cwd=repo)
    f.write_text("value = 3\n")
    c.git("commit", "-qam", "main", cwd=repo)
    return c.git("merge", "feature", cwd=repo)


def git_unrelated(c: Ctx) -> str:
    a = git_repo(c, c.root / "one")
    b = git_repo(c, c.root / "two")
    (b / "other.txt").write_text("unrelated\n")  # else both roots can be the very same commit
    c.git("add", ".", cwd=b)
    c.git("commit", "-qm", "other", cwd=b)
    c.git("remote", "add", "other", str(b), cwd=a)
    c.git("fetch", "-q", "other", cwd=a)
    return c.git("merge", "other/main", cwd=a)


def git_overwritten(c: Ctx) -> str:
    repo = git_repo(c)
    c.git("checkout", "-qb", "topic", cwd=repo)
    (repo / "README.md").write_text("topic change\n")
    c.git("commit", "-qam", "topic", cwd=repo)
    c.git("checkout", "-q", "main", cwd=repo)
    (repo / "README.md").write_text(f"local edit {c.instance}\n")
    return c.git("checkout", "topic", cwd=repo)


def git_detached_push(c: Ctx) -> str:
    repo = git_repo(c)
    return c.git("push", cwd=repo)


def git_pathspec(c: Ctx) -> str:
    repo = git_repo(c)
    return c.git("add", f"{c.name}_notes.md", cwd=repo)


def git_not_repo(c: Ctx) -> str:
    d = c.root / c.rng.choice(PROJECT_NAMES) / "sub"
    d.mkdir(parents=True)
    return c.git("status", cwd=d)


def git_identity(c: Ctx) -> str:
    repo = c.root / c.rng.choice(PROJECT_NAMES)
    repo.mkdir()
    c.run(["git", "init", "-q", str(repo)])
    (repo / "x.txt").write_text("x")
    c.run(["git", "add", "."], cwd=repo)
    return c.run(["git", "commit", "-qm", "x"], cwd=repo, env={"GIT_AUTHOR_NAME": "", "EMAIL": ""})


def sqlite_cli(sql: str) -> Callable[[Ctx], str]:
    def scenario(c: Ctx) -> str:
        return c.run(["sqlite3", str(c.root / f"{c.name}.db"), sql])

    return scenario


# --------------------------------------------------------------------------- the causes

CAUSES: dict[str, tuple[Callable[[Ctx], str], str]] = {
    # python runtime
    "py-missing-redis": (
        py("import redis\nreturn redis.Redis()"),
        "pip install redis (add redis to requirements.txt)",
    ),
    "py-missing-django": (
        py("import django\nreturn django.VERSION"),
        "pip install django; the venv was not activated",
    ),
    "py-env-key": (
        py("return os.environ['DATABASE_URL']"),
        "export DATABASE_URL (copy .env.example to .env) before running",
    ),
    "py-none-group": (
        py("import re\nm = re.match(r'v(\\d+)', 'release-1')\nreturn m.group(1)"),
        "re.match returned None: check the match before calling .group()",
    ),
    "py-int-plus-str": (
        py("count = 3\nlabel = ' items'\nreturn count + label"),
        "convert with str(count) or use an f-string",
    ),
    "py-json-empty": (
        py("import json\nreturn json.loads('')"),
        "the response body was empty: check status/content before json.loads",
    ),
    "py-missing-config": (
        py("return open('config/settings.yaml').read()"),
        "create config/settings.yaml from settings.example.yaml",
    ),
    "py-recursion": (
        py("def walk(n):\n    return walk(n + 1)\nreturn walk(0)"),
        "add a base case to the recursive walk",
    ),
    "py-utf8-decode": (
        py("return bytes([0xff, 0xfe, 0x41]).decode('utf-8')"),
        "open the file with encoding='utf-16' (it has a BOM) or errors='replace'",
    ),
    "py-zero-div": (
        py("values = []\nreturn sum(values) / len(values)"),
        "guard the empty list before averaging",
    ),
    "py-index-range": (py("items = [1, 2]\nreturn items[5]"), "check len(items) before indexing"),
    "py-missing-arg": (
        py("def area(w, h):\n    return w * h\nreturn area(3)"),
        "pass the missing h argument to area()",
    ),
    "py-int-literal": (py("raw = 'abc'\nreturn int(raw)"), "validate the input before int(); strip units"),
    "py-asyncio-running": (
        py(
            "import asyncio\nasync def inner():\n    return asyncio.run(asyncio.sleep(0))\nreturn asyncio.run(inner())"
        ),
        "await the coroutine instead of nesting asyncio.run()",
    ),
    "py-sqlite-no-table": (
        py(
            "import sqlite3\nconn = sqlite3.connect(':memory:')\nreturn conn.execute('SELECT * FROM users').fetchall()"
        ),
        "run the migrations (create the users table) before querying",
    ),
    "py-sqlite-unique": (
        py(
            "import sqlite3\nconn = sqlite3.connect(':memory:')\nconn.execute('CREATE TABLE users (email TEXT UNIQUE)')\nconn.execute(\"INSERT INTO users VALUES ('a@b.c')\")\nconn.execute(\"INSERT INTO users VALUES ('a@b.c')\")"
        ),
        "use INSERT ... ON CONFLICT(email) DO NOTHING",
    ),
    "py-chained-config": (
        py(
            "try:\n    return os.environ['APP_SECRET_KEY']\nexcept KeyError as e:\n    raise RuntimeError('configuration incomplete') from e"
        ),
        "set APP_SECRET_KEY in the environment (see docs/config.md)",
    ),
    "py-unbound-local": (py("for x in []:\n    total = x\nreturn total"), "initialise total before the loop"),
    "py-pydantic-int": (
        py("from pydantic import BaseModel\nclass User(BaseModel):\n    age: int\nreturn User(age='abc')"),
        "coerce the age field to int before building User",
    ),
    "py-dict-iter-change": (
        py("d = {'a': 1, 'b': 2}\nfor k in d:\n    d.pop(k)\nreturn d"),
        "iterate over list(d) when removing keys",
    ),
    "py-not-callable": (py("name = 'x'\nreturn name()"), "a variable shadows the function name: rename it"),
    "py-http-404": (py_http(404, "/api/v1/items/42", "httpx"), "the API moved to /api/v2: update BASE_URL"),
    "py-http-500-requests": (
        py_http(500, "/orders", "requests"),
        "the server crashes on empty payloads: send the required body",
    ),
    "py-http-401-urllib": (
        py_http(401, "/private/report", "urllib"),
        "set the Authorization header from RECALL_TOKEN",
    ),
    "py-httpx-refused": (py_refused("httpx"), "start the dev server (make dev) before running the client"),
    "py-psycopg-refused": (py_refused("psycopg"), "start postgres (docker compose up db) and check PGPORT"),
    # pytest-specific
    "pytest-fixture-missing": (
        sh("""
        mkdir -p tests && printf 'def test_query(db_session):\\n    assert db_session\\n' > tests/test_FUNC.py
        python -m pytest -q -p no:cacheprovider tests/test_FUNC.py"""),
        "the db_session fixture lives in tests/conftest.py of the api package: run pytest from the repo root",
    ),
    "pytest-unknown-arg": (
        sh("""
        printf 'def test_ok():\\n    assert True\\n' > test_NAME.py
        python -m pytest -q -p no:cacheprovider --cov=NAME test_NAME.py"""),
        "pip install pytest-cov (the --cov flag comes from it)",
    ),
    "pytest-async-unsupported": (
        sh("""
        printf 'async def test_FUNC():\\n    assert True\\n' > test_NAME.py
        python -m pytest -q -p no:cacheprovider test_NAME.py"""),
        "pip install pytest-asyncio and mark the test with @pytest.mark.asyncio",
    ),
    # ruff
    "ruff-unused-import": (
        ruff_case("import os\nimport json\n\n\ndef FUNC():\n    return json.dumps({})\n"),
        "remove the unused import (ruff check --fix)",
    ),
    "ruff-undefined-name": (
        ruff_case("def FUNC():\n    return undefined_helper(1)\n"),
        "import undefined_helper from utils",
    ),
    "ruff-none-compare": (
        ruff_case("def FUNC(x):\n    if x == None:\n        return 1\n    return 2\n"),
        "use `is None` instead of == None",
    ),
    # mypy
    "mypy-return-type": (
        mypy_case("def FUNC() -> str:\n    return 42\n"),
        "return str(value) or fix the annotation",
    ),
    "mypy-stubs-yaml": (
        mypy_case("import yaml\n\n\ndef FUNC() -> None:\n    yaml.safe_load('a: 1')\n"),
        "pip install types-PyYAML",
    ),
    "mypy-union-attr": (
        mypy_case(
            "from typing import Optional\n\n\ndef FUNC(s: Optional[str]) -> str:\n    return s.upper()\n"
        ),
        "narrow the Optional with `if s is None: ...` first",
    ),
    "mypy-arg-type": (
        mypy_case("def area(w: int) -> int:\n    return w\n\n\ndef FUNC() -> int:\n    return area('3')\n"),
        "pass an int (parse the string first)",
    ),
    # git
    "git-non-ff": (git_non_ff, "git pull --rebase, then push"),
    "git-conflict": (git_conflict, "resolve the conflict markers, git add, git commit"),
    "git-unrelated": (git_unrelated, "git merge --allow-unrelated-histories"),
    "git-overwritten": (git_overwritten, "commit or git stash the local changes before switching branches"),
    "git-no-upstream": (
        git_detached_push,
        "add a remote: git remote add origin URL && git push -u origin main",
    ),
    "git-pathspec": (git_pathspec, "the file was never created: check the name / generate it first"),
    "git-not-repo": (git_not_repo, "run it inside the checkout (cd to the repo root) or git init"),
    # shell
    "sh-cmd-not-found": (
        sh("jq_helper_tool --version"),
        "install the helper: make tools (puts jq_helper_tool on PATH)",
    ),
    "sh-permission": (
        sh("printf '#!/bin/sh\\necho hi\\n' > deploy_NAME.sh && ./deploy_NAME.sh"),
        "chmod +x the script (git update-index --chmod=+x)",
    ),
    "sh-cat-missing": (sh("cat build/NAME/VERSION"), "run `make version` to generate build/VERSION first"),
    # node / npm
    "node-undefined-map": (
        node_case("function FUNC(resp) {\n  return resp.items.map((x) => x.id);\n}\nFUNC({});\n"),
        "the API returns `data`, not `items`: read resp.data",
    ),
    "node-missing-module": (
        node_case("const express = require('express');\nfunction FUNC() { return express(); }\nFUNC();\n"),
        "npm install express",
    ),
    "node-not-function": (
        node_case("const cfg = { load: 1 };\nfunction FUNC() { return cfg.load(); }\nFUNC();\n"),
        "cfg.load is a number: call loadConfig() instead",
    ),
    "npm-missing-script": (
        npm_case(package_json({"test": "echo ok"}), ["run", "build"]),
        'add a "build" script to package.json',
    ),
    "npm-no-package-json": (
        npm_case(lambda c: None, ["install"]),
        "run npm install from the directory that has package.json",
    ),
    "npm-not-cached": (
        npm_case(package_json(), ["install", "left-pad-nonexistent-pkg-zz"]),
        "go online once (npm ci) to fill the cache, or vendor the package",
    ),
    # rust
    "rust-moved-value": (
        rust_case(
            'fn FUNC(v: Vec<i32>) -> usize { v.len() }\nfn main() {\n    let v = vec![1, 2];\n    FUNC(v);\n    println!("{:?}", v);\n}\n'
        ),
        "pass &v (borrow) or clone before moving",
    ),
    "rust-mismatched": (
        rust_case('fn FUNC() -> i32 {\n    "seven"\n}\nfn main() { FUNC(); }\n'),
        "return an i32 (parse the string)",
    ),
    "rust-unknown-value": (
        rust_case('fn FUNC() -> i32 { 1 }\nfn main() {\n    println!("{}", FUNC() + counter);\n}\n'),
        "declare counter before use",
    ),
    "cargo-no-manifest": (
        sh("cargo build --offline"),
        "run cargo from the crate directory that has Cargo.toml",
    ),
    # C
    "c-undeclared": (
        c_case("int FUNC(void) {\n    return counter + 1;\n}\n"),
        "declare counter (extern int counter;) in the header",
    ),
    "c-missing-header": (
        c_case('#include "config_gen.h"\nint FUNC(void) { return 0; }\n'),
        "run ./configure to generate config_gen.h",
    ),
    "c-undefined-ref": (
        c_case("int helper_compute(int);\nint main(void) { return helper_compute(2); }\n", link=True),
        "link helper.o (add helper.c to the Makefile SRCS)",
    ),
    # sqlite3 CLI, pip
    "sqlite-syntax": (sqlite_cli("SELEC * FROM t;"), "typo in the SQL: SELECT"),
    "pip-no-dist": (
        sh("pip install --no-index --disable-pip-version-check internal-sdk-zz==2.1"),
        "configure the private index: pip install --extra-index-url $PRIVATE_INDEX internal-sdk-zz",
    ),
    "pip-bad-requirement": (
        sh("pip install --no-index --disable-pip-version-check 'requests===' 2>&1"),
        "fix the requirement specifier (requests==2.32.3)",
    ),
}

# near misses: same type/tool/code as a cause, different problem (no learning exists for them)
DISTRACTORS: dict[str, Callable[[Ctx], str]] = {
    "py-missing-celery": py("import celery\nreturn celery"),
    "py-env-key-other": py("return os.environ['STRIPE_API_KEY']"),
    "py-none-split": py("value = None\nreturn value.split(',')"),
    "py-str-minus-int": py("a = 'x'\nreturn a - 1"),
    "py-json-bad-quote": py("import json\nreturn json.loads(\"{'a': 1}\")"),
    "py-missing-secrets": py("return open('secrets/credentials.json').read()"),
    "py-key-dict": py("d = {'id': 1}\nreturn d['name']"),
    "py-index-tuple": py("t = ()\nreturn t[0]"),
    "py-missing-arg-other": py("def connect(host, port):\n    return host\nreturn connect('h')"),
    "py-sqlite-no-table-orders": py(
        "import sqlite3\nconn = sqlite3.connect(':memory:')\nreturn conn.execute('SELECT * FROM orders').fetchall()"
    ),
    "py-http-403": py_http(403, "/admin", "httpx"),
    "py-requests-refused": py_refused("requests"),
    "ruff-unused-variable": ruff_case("def FUNC():\n    result = 1\n    return 2\n"),
    "mypy-stubs-requests-untyped": mypy_case(
        "import toml\n\n\ndef FUNC() -> None:\n    toml.loads('a = 1')\n"
    ),
    "mypy-assign-type": mypy_case("def FUNC() -> None:\n    x: int = 'a'\n"),
    "git-bad-revision": lambda c: c.git("checkout", "no-such-branch-zz", cwd=git_repo(c)),
    "sh-cmd-not-found-other": sh("kubectl_wrapper get pods"),
    "node-missing-lodash": node_case(
        "const _ = require('lodash');\nfunction FUNC() { return _; }\nFUNC();\n"
    ),
    "node-undefined-length": node_case("function FUNC(o) {\n  return o.rows.length;\n}\nFUNC({});\n"),
    "npm-missing-script-lint": npm_case(package_json({"test": "echo ok"}), ["run", "lint"]),
    "rust-borrow-mut": rust_case(
        'fn main() {\n    let v = vec![1];\n    let r = &v;\n    let m = &mut v;\n    m.push(2);\n    println!("{:?}", r);\n}\n'
    ),
    "c-missing-header-other": c_case("#include <libpq-fe.h>\nint FUNC(void) { return 0; }\n"),
    "pip-no-dist-other": sh("pip install --no-index --disable-pip-version-check analytics-client-zz"),
}

# unrelated errors no learning covers at all
UNRELATED: dict[str, Callable[[Ctx], str]] = {
    "py-assert-plain": py("assert 1 + 1 == 3, 'math is broken'"),
    "py-os-error-dir": py("return os.listdir('/nonexistent-dir-zz')"),
    "py-type-len": py("return len(5)"),
    "node-syntax": node_case("function FUNC( {\n  return 1;\n}\n"),
    "sh-exit-status": sh("false && echo never; ls /no/such/dir/zz"),
    "sqlite-constraint-notnull": sqlite_cli("CREATE TABLE t(a NOT NULL); INSERT INTO t VALUES(NULL);"),
    "git-nothing-commit": lambda c: c.git("commit", "-m", "empty", cwd=git_repo(c)),
}

# held-out set: written after recall's scoring was tuned on the corpus above, evaluated once, not tuned on
HELDOUT_OUT = Path(__file__).resolve().parent / "heldout.jsonl"
HELDOUT_INSTANCES = 3
HELDOUT_CAUSES: dict[str, tuple[Callable[[Ctx], str], str]] = {
    "py-module-attr": (py("import json\nreturn json.loadz('{}')"), "it is json.loads (typo)"),
    "py-none-subscript": (
        py("row = None\nreturn row['id']"),
        "the query returned no row: check for None first",
    ),
    "py-import-name": (
        py("from os import missing_fn\nreturn missing_fn"),
        "missing_fn moved to os.path in the refactor",
    ),
    "py-is-a-directory": (
        py("os.makedirs('data', exist_ok=True)\nreturn open('data').read()"),
        "pass the file inside data/, not the directory",
    ),
    "py-key-user-id": (
        py("payload = {'name': 'x'}\nreturn payload['user_id']"),
        "the webhook sends userId: map it",
    ),
    "py-json-datetime": (
        py("import json, datetime\nreturn json.dumps({'t': datetime.datetime.now()})"),
        "use default=str or .isoformat()",
    ),
    "py-unpack-many": (py("a, b = (1, 2, 3)\nreturn a"), "the tuple grew a third field: unpack three"),
    "ruff-import-not-top": (
        ruff_case("x = 1\nimport os\n\n\ndef FUNC():\n    return os, x\n"),
        "move the import to the top",
    ),
    "mypy-name-defined": (
        mypy_case("def FUNC() -> int:\n    return undefined_thing\n"),
        "import undefined_thing",
    ),
    "git-src-refspec": (
        lambda c: c.git("push", str(c.root), "nonexistent-branch", cwd=git_repo(c)),
        "push an existing branch (git branch -a)",
    ),
    "git-branch-exists": (
        lambda c: c.git("branch", "main", cwd=git_repo(c)),
        "switch to it instead: git switch main",
    ),
    "node-reference": (
        node_case("function FUNC() {\n  return fooBar + 1;\n}\nFUNC();\n"),
        "declare fooBar (it was renamed)",
    ),
    "node-stack-size": (
        node_case("function FUNC(n) {\n  return FUNC(n + 1);\n}\nFUNC(0);\n"),
        "add the missing base case",
    ),
    "rust-assign-twice": (
        rust_case('fn main() {\n    let x = 1;\n    x = 2;\n    println!("{}", x);\n}\n'),
        "declare it let mut x",
    ),
    "c-conflicting-types": (
        c_case("int FUNC(int a);\nlong FUNC(int a) { return a; }\n"),
        "make the prototype match the definition",
    ),
    "sh-mkdir-exists": (sh("mkdir out_NAME && mkdir out_NAME"), "use mkdir -p"),
    "sqlite-no-column": (
        sqlite_cli("CREATE TABLE u(email); SELECT emial FROM u;"),
        "typo in the column name: email",
    ),
}
HELDOUT_DISTRACTORS: dict[str, Callable[[Ctx], str]] = {
    "py-module-attr-other": py("import json\nreturn json.dumpz({})"),
    "py-int-subscript": py("row = 5\nreturn row['id']"),
    "py-import-name-other": py("from os import other_fn\nreturn other_fn"),
    "py-key-order-id": py("payload = {'name': 'x'}\nreturn payload['order_id']"),
    "py-json-set": py("import json\nreturn json.dumps({'t': {1, 2}})"),
    "py-unpack-few": py("a, b, c = (1, 2)\nreturn a"),
    "ruff-multiple-imports": ruff_case("import os, sys\n\n\ndef FUNC():\n    return os, sys\n"),
    "mypy-name-defined-other": mypy_case("def FUNC() -> int:\n    return other_thing\n"),
    "git-branch-exists-other": lambda c: c.git("checkout", "-b", "main", cwd=git_repo(c)),
    "node-reference-other": node_case("function FUNC() {\n  return bazQux + 1;\n}\nFUNC();\n"),
    "rust-no-method": rust_case("fn main() {\n    let x = 1;\n    x.push(2);\n}\n"),
    "c-redefinition": c_case("int FUNC(int a) { return a; }\nint FUNC(int a) { return a; }\n"),
    "sh-rmdir-not-empty": sh("mkdir -p d_NAME/x && rmdir d_NAME"),
    "sqlite-no-column-other": sqlite_cli("CREATE TABLE u(email); SELECT nmae FROM u;"),
}


# --------------------------------------------------------------------------- surroundings


def ci_prefix(text: str, rng: random.Random, style: int) -> str:
    """Prefix lines the way CI/log collectors do (GitHub Actions timestamps, syslog-style host + PID)."""
    day, hh, mm, ss = rng.randrange(1, 28), rng.randrange(24), rng.randrange(60), rng.randrange(50)
    host, pid = f"ci-runner-{rng.randrange(99)}", rng.randrange(1000, 99999)
    out = []
    for n, line in enumerate(text.splitlines()):
        if style == 1:
            frac = rng.randrange(10**7)
            out.append(f"2026-11-{day:02d}T{hh:02d}:{mm:02d}:{ss + n // 20:02d}.{frac:07d}Z {line}")
        else:
            out.append(f"Nov {day:2d} {hh:02d}:{mm:02d}:{ss + n // 20:02d} {host} job[{pid}]: {line}")
    return "\n".join(out)


def make_ctx(cause: str, instance: int, seed: int) -> Ctx:
    """Instances 0-2 run the same code (same module/function names, as another checkout of the same repo
    would); instance 3 renames them too. Paths, temp names, depth and line offsets differ every time."""
    rng = random.Random(f"{cause}/{instance}/{seed}")
    names = random.Random(f"{cause}/names/{seed}" if instance < 3 else f"{cause}/{instance}/names/{seed}")
    base = Path(tempfile.mkdtemp(prefix=f"{rng.choice(['ws', 'tmp', 'ci', 'build', 'agent'])}-"))
    parts = ["work", "checkout", rng.choice(PROJECT_NAMES), f"run{rng.randrange(999)}"]
    root = base.joinpath(*rng.sample(parts, k=rng.randrange(1, 4)))
    root.mkdir(parents=True)
    return Ctx(
        cause=cause,
        instance=instance,
        base=base,
        root=root,
        color=instance % 2 == 1,
        pytest=instance in (1, 2),
        pad=rng.randrange(0, 40),
        name=f"{names.choice(FILE_NAMES)}_{names.randrange(99)}",
        func=f"{names.choice(FUNC_NAMES)}_{names.randrange(9)}",
        rng=rng,
    )


def run_one(
    kind: str, cause: str, scenario: Callable[[Ctx], str], instance: int, resolution: str | None
) -> dict:
    ctx = make_ctx(cause, instance, seed=1)
    try:
        text = scenario(ctx)
    finally:
        shutil.rmtree(ctx.base, ignore_errors=True)
    prefix = (kind == "cause" and instance == 3) or (kind != "cause" and instance == 1)
    if prefix:
        text = ci_prefix(text, ctx.rng, style=1 + instance % 2)
    return {
        "kind": kind,
        "cause": cause,
        "instance": instance,
        "color": ctx.color,
        "runner": "pytest" if ctx.pytest and cause.startswith("py-") else "direct",
        "log_prefix": prefix,
        "resolution": resolution,
        "text": text[-MAX_CHARS:],
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Run real tools to build bench/corpus/errors.jsonl.")
    ap.add_argument("--only", nargs="+", metavar="CAUSE", help="re-run these causes, keep the other rows")
    ap.add_argument("--heldout", action="store_true", help="write the held-out set (heldout.jsonl) instead")
    args = ap.parse_args(argv)
    if not shutil.which("mypy"):
        print("mypy is needed: pip install mypy", file=sys.stderr)
        return 2
    if args.heldout:
        return write_heldout()
    jobs = [("cause", k, fn, i, res) for k, (fn, res) in CAUSES.items() for i in range(INSTANCES)]
    jobs += [
        ("distractor", k, fn, i, None) for k, fn in DISTRACTORS.items() for i in range(DISTRACTOR_INSTANCES)
    ]
    jobs += [("unrelated", k, fn, 0, None) for k, fn in UNRELATED.items()]
    kept: list[dict] = []
    if args.only:
        jobs = [j for j in jobs if j[1] in args.only]
        kept = [
            json.loads(x) for x in OUT.read_text().splitlines() if json.loads(x)["cause"] not in args.only
        ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = kept + list(pool.map(lambda j: run_one(*j), jobs))
    order = {k: n for n, k in enumerate([*CAUSES, *DISTRACTORS, *UNRELATED])}
    rows.sort(key=lambda r: (r["kind"] != "cause", order.get(r["cause"], 1 << 30), r["instance"]))
    empty = [f"{r['cause']}#{r['instance']}" for r in rows if not r["text"].strip()]
    with OUT.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    print(
        f"{len(rows)} errors ({len(CAUSES)} causes x {INSTANCES}, {len(DISTRACTORS)} distractors x "
        f"{DISTRACTOR_INSTANCES}, {len(UNRELATED)} unrelated) -> {OUT}"
    )
    if empty:
        print("WARNING: empty output for " + ", ".join(empty), file=sys.stderr)
    return 1 if empty else 0


def write_heldout() -> int:
    jobs = [
        ("cause", k, fn, i, res) for k, (fn, res) in HELDOUT_CAUSES.items() for i in range(HELDOUT_INSTANCES)
    ]
    jobs += [("distractor", k, fn, 0, None) for k, fn in HELDOUT_DISTRACTORS.items()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda j: run_one(*j), jobs))
    with HELDOUT_OUT.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    empty = [f"{r['cause']}#{r['instance']}" for r in rows if not r["text"].strip()]
    print(f"{len(rows)} held-out errors -> {HELDOUT_OUT}" + (f"; EMPTY: {empty}" if empty else ""))
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main())
