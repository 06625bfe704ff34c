"""Error text as tools print it and people paste it, through the real CLI (`python -m recall_agent` processes
against a real SQLite store in RECALL_HOME): long runs with the failure at the end, errors inside make
output, tracebacks after a sentence of prose find their prior fix with the reason shown; text without an
error finds nothing."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from recall_agent.learnings.extract import decisive
from recall_agent.learnings.signatures import normalize

REPO = "shop"


def rec(cmd: list[str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, input=stdin, env=dict(os.environ), timeout=120
    )


def learn(cmd: list[str], error: str, resolution: str) -> str:
    out = rec(cmd, "learn", "--repo", REPO, "--error", "-", "--resolution", resolution, stdin=error)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def ask(cmd: list[str], text: str) -> tuple[str, dict]:
    md = rec(cmd, "--scope", "learnings", "--repo", REPO, text)
    js = rec(cmd, "--scope", "learnings", "--repo", REPO, "--format", "json", text)
    assert md.returncode == 0 and js.returncode == 0, md.stderr + js.stderr
    return md.stdout, json.loads(js.stdout)


def matches(payload: dict) -> list[dict]:
    return payload["learnings"]["response"]["matches"]


PYTEST_LEARNED = """\
    def test_cart_total():
>       assert total(cart) == 118
E       assert 120 == 118
E        +  where 120 = total(['apple', 'pear'])

tests/test_cart.py:14: AssertionError
"""


def pytest_run(passing: int) -> str:
    """A whole pytest run, ~6000 characters, its one failure at the very end."""
    head = (
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0\n"
        "rootdir: /home/ci/work/shop\nconfigfile: pyproject.toml\nplugins: cov-5.0.0, xdist-3.6.1\n"
        f"collected {passing + 1} items\n\n"
    )
    body = "".join(
        f"tests/test_module_{i:03d}.py ........................................ [{i:3d}%]\n"
        for i in range(passing)
    )
    fail = (
        "\n=================================== FAILURES ===================================\n"
        "_______________________________ test_cart_total ________________________________\n\n"
        "    def test_cart_total():\n"
        ">       assert total(cart) == 118\n"
        "E       assert 120 == 118\n"
        "E        +  where 120 = total(['apple', 'pear'])\n\n"
        "tests/test_cart.py:31: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_cart.py::test_cart_total - assert 120 == 118\n"
        f"========================= 1 failed, {passing * 40} passed in 12.31s =========================\n"
    )
    return head + body + fail


def test_a_long_pytest_run_with_the_failure_at_the_end_finds_its_fix(recall_cmd: list[str]) -> None:
    lid = learn(recall_cmd, PYTEST_LEARNED, "total() double-counts the delivery fee: drop it from line items")
    run = pytest_run(passing=75)
    assert len(run) > 6000
    md, js = ask(recall_cmd, run)
    found = matches(js)
    assert found and found[0]["learning_id"] == lid
    assert found[0]["why"]["kind"] == "AssertionError"
    assert "where <int> = total" in found[0]["why"]["template"] or "assert" in found[0]["why"]["template"]
    assert "double-counts the delivery fee" in md and "**Matched on:** AssertionError" in md


MAKE_LEARNED = """\
gcc -O2 -Iinclude -c src/config.c -o build/config.o
src/config.c:7:10: fatal error: yaml.h: No such file or directory
    7 | #include <yaml.h>
      |          ^~~~~~~~
compilation terminated.
"""

MAKE_QUERY = """\
make -C native all
make[1]: Entering directory '/builds/team/shop/native'
mkdir -p build
gcc -O2 -Wall -Iinclude -c src/main.c -o build/main.o
gcc -O2 -Wall -Iinclude -c src/util.c -o build/util.o
gcc -O2 -Wall -Iinclude -c src/config.c -o build/config.o
src/config.c:9:10: fatal error: yaml.h: No such file or directory
    9 | #include <yaml.h>
      |          ^~~~~~~~
compilation terminated.
make[1]: *** [Makefile:23: build/config.o] Error 1
make[1]: Leaving directory '/builds/team/shop/native'
make: *** [Makefile:8: native] Error 2
"""


def test_an_error_inside_make_output_finds_its_fix(recall_cmd: list[str]) -> None:
    lid = learn(recall_cmd, MAKE_LEARNED, "apt-get install libyaml-dev (headers for yaml.h)")
    md, js = ask(recall_cmd, MAKE_QUERY)
    found = matches(js)
    assert found and found[0]["learning_id"] == lid
    assert "yaml.h" in found[0]["why"]["template"]
    assert "libyaml-dev" in md and "**Matched on:**" in md and "yaml.h" in md


PROSE_LEARNED = """\
Traceback (most recent call last):
  File "/srv/shop/app/settings.py", line 12, in <module>
    DATABASE_URL = os.environ["DATABASE_URL"]
  File "/usr/lib/python3.12/os.py", line 714, in __getitem__
    raise KeyError(key) from None
KeyError: 'DATABASE_URL'
"""

PROSE_QUERY = """\
Hi all, after pulling main the app does not start any more on my laptop, this is what I get:

Traceback (most recent call last):
  File "/Users/kim/code/shop/manage.py", line 22, in <module>
    main()
  File "/Users/kim/code/shop/app/settings.py", line 15, in <module>
    DATABASE_URL = os.environ["DATABASE_URL"]
  File "<frozen os>", line 685, in __getitem__
KeyError: 'DATABASE_URL'

Any idea what changed?
"""


def test_a_traceback_pasted_after_prose_finds_its_fix(recall_cmd: list[str]) -> None:
    lid = learn(recall_cmd, PROSE_LEARNED, "copy .env.example to .env (DATABASE_URL is read at import)")
    md, js = ask(recall_cmd, PROSE_QUERY)
    found = matches(js)
    assert found and found[0]["learning_id"] == lid
    assert found[0]["why"]["kind"] == "KeyError" and "DATABASE_URL" in found[0]["why"]["subjects"]
    assert ".env.example" in md and "**Matched on:** KeyError" in md and "about 'DATABASE_URL'" in md


def test_a_near_miss_with_another_subject_finds_nothing(recall_cmd: list[str]) -> None:
    learn(recall_cmd, PROSE_LEARNED, "copy .env.example to .env")
    _, js = ask(recall_cmd, PROSE_QUERY.replace("DATABASE_URL", "REDIS_URL"))
    assert matches(js) == []


def test_text_without_an_error_finds_nothing(recall_cmd: list[str]) -> None:
    """Binary junk, a long log without any error, a pytest header, a message in a language we do not
    parse: no match, even when learnings recorded from pytest runs share their boilerplate."""
    learn(recall_cmd, pytest_run(passing=3), "fix total()")
    learn(recall_cmd, PROSE_LEARNED, "copy .env.example to .env")
    junk = bytes(range(1, 256)).decode("latin-1") * 8  # argv cannot carry NUL
    header = pytest_run(passing=3).split("\n\n=====")[0]
    log = "\n".join(
        f"2026-11-30T10:{i % 60:02d}:00Z INFO worker {i}: processed batch {i} in 12ms" for i in range(1500)
    )
    unknown = "Fehlermeldung 4711: Die Datei konnte nicht geöffnet werden, Zeile 9 in Modul Lager"
    for text in (junk, header, log, unknown):
        md, js = ask(recall_cmd, text)
        assert matches(js) == [], text[:80]
        assert "No relevant knowledge found" in md


def test_megabytes_of_log_without_an_error_are_cheap_and_match_nothing() -> None:
    log = "\n".join(
        f"2026-11-30T10:00:00Z INFO worker {i}: processed batch {i} in 12ms" for i in range(60_000)
    )
    assert len(log) > 3_000_000
    started = time.perf_counter()
    kept = decisive(log, 4000)
    assert time.perf_counter() - started < 10
    assert len(kept) <= 4000 and kept.endswith("processed batch 59999 in 12ms")
    assert all(line.startswith("~ ") for line in normalize(kept).split("\n"))  # marked: never matched on


@pytest.mark.parametrize(
    "paste, expected",
    [
        # a Python list of output lines, as a test harness printed it
        (
            "\tSTDOUT: ['Traceback (most recent call last):\\n', '  File \"make_report.py\", line 10, in <module>\\n', "
            "'    from jinja2 import Environment\\n', \"ImportError: cannot import name 'soft_unicode' from 'markupsafe' "
            '(/usr/lib/python3/markupsafe/__init__.py)\\n"]',
            "ImportError: cannot import name 'soft_unicode' from 'markupsafe'",
        ),
        # BuildKit step prefixes
        (
            "#12 2.981 Collecting numpy\n#12 3.026 ERROR: Could not find a version that satisfies the requirement torch==9.9\n"
            "#12 3.027 ERROR: No matching distribution found for torch==9.9",
            "ERROR: No matching distribution found for torch==<value>",
        ),
        # GitHub Actions timestamps and a `$ command` line
        (
            "2026-05-02T07:44:31.5390429Z $ git status\n"
            "2026-05-02T07:44:31.5390838Z fatal: detected dubious ownership in repository at '/github/workspace'",
            "fatal: detected dubious ownership in repository at '<dir>'",
        ),
        # a message quoted inside a sentence
        (
            'Whenever I run train.py I get "AssertionError: Torch not compiled with CUDA enabled", any advice?',
            "AssertionError: Torch not compiled with CUDA enabled",
        ),
    ],
)
def test_pastes_are_unwrapped_to_their_error(paste: str, expected: str) -> None:
    assert expected in normalize(paste).split("\n")


def test_long_output_keeps_the_error_at_its_end_not_the_head() -> None:
    text = pytest_run(passing=200)
    kept = decisive(text, 4000)
    assert len(text) > 8000 and len(kept) <= 4000
    assert "E       assert 120 == 118" in kept and "where 120 = total" in kept


@pytest.fixture(autouse=True)
def _home(isolated_recall_env: Path) -> Path:
    return isolated_recall_env
