"""Error-signature normalization: the same cause from another instance folds to the same fingerprint;
a different cause (even with the same exception type) does not."""

from __future__ import annotations

import pytest

from recall_agent.learnings.signatures import (
    clean,
    fingerprint,
    fingerprint_normalized,
    fold,
    is_generic,
    normalize,
)

PLAIN_TB = """Traceback (most recent call last):
  File "/home/alice/src/acme/run.py", line 4, in <module>
    main()
  File "/home/alice/src/acme/acme/worker.py", line 45, in main
    import redis
ModuleNotFoundError: No module named 'redis'"""

PYTEST_TB = """\x1b[31mF\x1b[0m                                                                        [100%]
=================================== FAILURES ===================================
________________________________ test_main ________________________________

    def test_main():
>       main()

test_worker.py:5:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def main():
>       import redis
\x1b[1m\x1b[31mE       ModuleNotFoundError: No module named 'redis'\x1b[0m

worker.py:61: ModuleNotFoundError
=========================== short test summary info ============================
FAILED test_worker.py::test_main - ModuleNotFoundError: No module named 'redis'
1 failed in 0.33s"""

CI_PREFIXED = "\n".join(
    f"2026-11-29T21:03:{10 + i:02d}.1234567Z {line}"
    for i, line in enumerate(PLAIN_TB.replace("/home/alice/src/acme", "/builds/ci/r1/acme").splitlines())
)

SYSLOG_PREFIXED = "\n".join(
    f"Nov 29 21:03:{10 + i:02d} ci-runner-7 job[48213]: {line}"
    for i, line in enumerate(PLAIN_TB.replace("line 45", "line 97").splitlines())
)


def test_same_cause_same_fingerprint_across_runner_paths_colour_and_log_prefixes() -> None:
    expected = fingerprint(PLAIN_TB)
    assert fingerprint(PYTEST_TB) == expected
    assert fingerprint(CI_PREFIXED) == expected
    assert fingerprint(SYSLOG_PREFIXED) == expected
    assert normalize(PLAIN_TB) == "ModuleNotFoundError: No module named 'redis'\nat worker"


def test_same_type_different_cause_differs() -> None:
    other = PLAIN_TB.replace("'redis'", "'celery'").replace("import redis", "import celery")
    assert fingerprint(other) != fingerprint(PLAIN_TB)


def test_chained_traceback_keeps_both_causes() -> None:
    text = """Traceback (most recent call last):
  File "/srv/app/settings.py", line 12, in load
    return os.environ['APP_SECRET_KEY']
           ~~~~~~~~~~^^^^^^^^^^^^^^^^^^
  File "<frozen os>", line 679, in __getitem__
KeyError: 'APP_SECRET_KEY'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/app/main.py", line 3, in <module>
    load()
  File "/srv/app/settings.py", line 14, in load
    raise RuntimeError('configuration incomplete') from e
RuntimeError: configuration incomplete"""
    norm = normalize(text)
    assert norm.splitlines()[:2] == ["KeyError: 'APP_SECRET_KEY'", "RuntimeError: configuration incomplete"]
    other_key = text.replace("APP_SECRET_KEY", "STRIPE_KEY")
    assert fingerprint(other_key) != fingerprint(text)
    during = text.replace(
        "The above exception was the direct cause", "During handling of the above exception, another"
    ).replace("/srv/app", "/opt/deploy/app")
    assert normalize(during).splitlines()[:2] == norm.splitlines()[:2]


def test_multiline_exception_message_keeps_its_detail() -> None:
    text = """Traceback (most recent call last):
  File "/w/models.py", line 9, in build
    return User(age='abc')
pydantic_core._pydantic_core.ValidationError: 1 validation error for User
age
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='abc', input_type=str]
    For further information visit https://errors.pydantic.dev/2.9/v/int_parsing"""
    norm = normalize(text)
    assert norm.startswith(
        "ValidationError: <int> validation error for User\nage\nInput should be a valid integer"
    )
    assert "input_value=<value>" in norm
    assert fingerprint(text.replace("'abc'", "'x1'")) == fingerprint(text)


def test_generic_messages_fingerprint_with_their_frame() -> None:
    a = 'Traceback (most recent call last):\n  File "/a/parser.py", line 3, in f\n    x[5]\nIndexError: list index out of range'
    b = a.replace("/a/parser.py", "/b/c/parser.py").replace("line 3", "line 88")
    c = a.replace("parser.py", "billing.py")
    assert is_generic(["IndexError: list index out of range"])
    assert not is_generic(["KeyError: 'DATABASE_URL'"])
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint(c)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (  # mypy: file, line, colour and summary fold away
            'src/acme/handlers.py:5: error: Item "None" of "str | None" has no attribute "upper"  [union-attr]\n'
            "Found 1 error in 1 file (checked 1 source file)",
            '\x1b[1mlib/svc.py:88: \x1b[31merror:\x1b(B\x1b[m Item "None" of "str | None" has no attribute "upper"  [union-attr]',
        ),
        (  # ruff (new output format)
            "F401 [*] `os` imported but unused\n --> app.py:1:8\n  |\n1 | import os\n  |        ^^\n"
            "Found 1 error.\n[*] 1 fixable with the `--fix` option.",
            "F401 [*] `os` imported but unused\n --> src/pkg/worker_2.py:31:8\n   |\n31 | import os\n",
        ),
        (  # tsc
            "src/api/client.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'.",
            "web/src/api/client.ts(88,21): error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
        (  # eslint
            "/home/u/p/src/a.js\n  3:7  error  'foo' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem",
            "/ci/x/src/b.js\n  19:13  error  'foo' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem",
        ),
        (  # rustc via cargo
            "error[E0382]: borrow of moved value: `v`\n  --> src/main.rs:32:22\n   |\n30 |     let v = vec![1];\n"
            'error: could not compile `worker_21` (bin "worker_21") due to 1 previous error',
            "\x1b[1m\x1b[91merror[E0382]\x1b[0m: borrow of moved value: `v`\n  --> src/main.rs:7:9\n"
            'error: could not compile `app` (bin "app") due to 1 previous error',
        ),
        (  # gcc
            "main.c: In function 'run':\nmain.c:2:12: error: 'counter' undeclared (first use in this function)\n"
            "    2 |     return counter + 1;\n      |            ^~~~~~~",
            "lib/x/main.c:41:12: error: 'counter' undeclared (first use in this function)",
        ),
        (  # linker with a random temp object
            "/usr/bin/ld: /tmp/ccttCdQi.o: in function `main':\nm.c:(.text+0xa): undefined reference to `helper'\n"
            "collect2: error: ld returned 1 exit status",
            "/usr/bin/ld: /tmp/ccA81xzQ.o: in function `main':\nm.c:(.text+0x1e): undefined reference to `helper'\n"
            "collect2: error: ld returned 1 exit status",
        ),
        (  # pip
            "ERROR: Could not find a version that satisfies the requirement internal-sdk==2.1 (from versions: none)\n"
            "ERROR: No matching distribution found for internal-sdk==2.1",
            "\x1b[31mERROR: Could not find a version that satisfies the requirement internal-sdk==2.3 (from versions: none)\x1b[0m\n"
            "\x1b[31mERROR: No matching distribution found for internal-sdk==2.3\x1b[0m",
        ),
        (  # npm 10 and the older ERR! style
            'npm error Missing script: "build"\nnpm error\nnpm error To see a list of scripts, run:\nnpm error   npm run\n'
            "npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-29T21_22_19_061Z-debug-0.log",
            'npm ERR! Missing script: "build"\nnpm ERR! A complete log of this run can be found in: /home/x/.npm/_logs/a.log',
        ),
        (  # cargo
            "error: could not find `Cargo.toml` in `/tmp/ws-1/work` or any parent directory",
            "error: could not find `Cargo.toml` in `/home/bob/code/thing` or any parent directory",
        ),
        (  # go
            "main.go:5:2: undefined: fooBar\nnote: module requires Go 1.22",
            "./cmd/server/main.go:77:14: undefined: fooBar",
        ),
        (  # shells
            "bash: line 1: jq_helper: command not found",
            "bash: line 17: jq_helper: command not found",
        ),
        (
            "bash: ./deploy.sh: Permission denied",
            "bash: /srv/ci/42/deploy.sh: Permission denied",
        ),
        (  # git
            "To /tmp/a/remote.git\n ! [rejected]        main -> main (fetch first)\n"
            "error: failed to push some refs to '/tmp/a/remote.git'\nhint: Updates were rejected because",
            "To github.com:acme/api.git\n ! [rejected]        main -> main (fetch first)\n"
            "error: failed to push some refs to 'github.com:acme/api.git'\nhint: Updates were rejected",
        ),
        (
            "fatal: not a git repository (or any of the parent directories): .git",
            "\x1b[31mfatal: not a git repository (or any of the parent directories): .git\x1b[m",
        ),
        (  # HTTP client: host, port and ids fold, the status stays
            "httpx.HTTPStatusError: Client error '404 Not Found' for url 'http://127.0.0.1:39027/api/v1/items/42'\n"
            "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/404",
            "httpx.HTTPStatusError: Client error '404 Not Found' for url 'http://127.0.0.1:51234/api/v1/items/42'",
        ),
        (  # database client
            'psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5999 failed: '
            "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?",
            'psycopg.OperationalError: connection failed: connection to server at "10.0.3.7", port 5432 failed: '
            "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?",
        ),
        (
            "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
            "E   sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
        ),
        (  # node, with its frames
            "/srv/a/app.js:3\n  return resp.items.map((x) => x.id);\n                    ^\n\n"
            "TypeError: Cannot read properties of undefined (reading 'map')\n    at load (/srv/a/app.js:3:21)\n"
            "    at Object.<anonymous> (/srv/a/app.js:5:1)\n\nNode.js v20.20.2",
            "/home/u/b/app.js:41\nTypeError: Cannot read properties of undefined (reading 'map')\n"
            "    at load (/home/u/b/app.js:41:21)\n\nNode.js v22.1.0",
        ),
    ],
)
def test_tool_output_folds_the_instance(first: str, second: str) -> None:
    assert normalize(first) == normalize(second), (normalize(first), normalize(second))
    assert fingerprint(first) == fingerprint(second)
    assert fingerprint_normalized(normalize(first)) == fingerprint(first)


def test_tool_noise_is_dropped_and_cause_kept() -> None:
    norm = normalize(
        "error[E0382]: borrow of moved value: `v`\n  --> src/main.rs:32:22\n   |\n"
        "help: consider cloning the value\nFor more information about this error, try `rustc --explain E0382`."
    )
    assert norm == "error[E0382]: borrow of moved value: `v`"
    assert normalize(
        'src/a.py:5: error: Incompatible return value type (got "int", expected "str")  [return-value]'
    ) == ('error: Incompatible return value type (got "int", expected "str") [return-value]')


def test_distinct_tool_errors_stay_distinct() -> None:
    pairs = [
        ('npm error Missing script: "build"', 'npm error Missing script: "lint"'),
        ("bash: line 1: jq_helper: command not found", "bash: line 1: kubectl: command not found"),
        ("error[E0382]: borrow of moved value: `v`", "error[E0502]: cannot borrow `v` as mutable"),
        (
            "Client error '404 Not Found' for url 'http://h/x'",
            "Client error '403 Forbidden' for url 'http://h/x'",
        ),
        ("OSError: [Errno 2] No such file", "OSError: [Errno 13] No such file"),
        (
            'src/a.py:1: error: Library stubs not installed for "yaml"  [import-untyped]',
            'src/a.py:1: error: Library stubs not installed for "toml"  [import-untyped]',
        ),
    ]
    for a, b in pairs:
        assert fingerprint(a) != fingerprint(b), (a, b)


def test_fold_placeholders() -> None:
    line = (
        "at 2026-11-29T21:03:11Z id=3f2b8c1e-9d4a-4b7e-8f00-1234567890ab sha 9fceb02d0ae598e95dc970b74767f19372d61af8 "
        "pid=4242 addr 0x7ffd5e8c user bob@example.com took 1.5s from 10.1.2.3:8080 at 0.75 x 17 v2.31.4"
    )
    out = fold(line)
    for ph in (
        "<date>",
        "<value>",
        "<sha>",
        "<hex>",
        "<email>",
        "<duration>",
        "<ip>",
        "<float>",
        "<int>",
        "<version>",
    ):
        assert ph in out, (ph, out)
    assert "bob" not in out and "8080" not in out
    # values that name the cause stay
    assert fold("KeyError: 'DATABASE_URL'") == "KeyError: 'DATABASE_URL'"
    assert (
        fold("urllib.error.HTTPError: HTTP Error 401: Unauthorized")
        == "urllib.error.HTTPError: HTTP Error 401: Unauthorized"
    )
    assert fold("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/x/config/settings.yaml'") == (
        "FileNotFoundError: [Errno 2] No such file or directory: 'settings.yaml'"
    )
    assert fold("ValueError: invalid literal for int() with base 10: 'abc'") == (
        "ValueError: invalid literal for int() with base <int>: <value>"
    )


def test_clean_strips_ansi_carriage_returns_and_prefixes() -> None:
    raw = "\x1b[32m[12:00:01]\x1b[0m step\rDownloading 50%\rERROR: boom\n[pid 4242] x"
    assert clean(raw) == ["ERROR: boom", "x"]


def test_empty_and_noise_only_input() -> None:
    assert normalize("") == ""
    assert normalize("   \n\n") == ""
    assert normalize("just some words") == "~ just some words"  # marked: no error, never matched on
    assert len(fingerprint("")) == 32


def test_python_suggestions_are_not_part_of_the_cause() -> None:
    plain = (
        'Traceback (most recent call last):\n  File "/w/utils.py", line 5, in run\n    json.loadz("{}")\n'
        "AttributeError: module 'json' has no attribute 'loadz'. Did you mean: 'load'?"
    )
    pytest_style = (
        "E       AttributeError: module 'json' has no attribute 'loadz'\n\nutils.py:5: AttributeError"
    )
    assert fingerprint(plain) == fingerprint(pytest_style)
    assert "Did you mean" not in normalize(plain)
