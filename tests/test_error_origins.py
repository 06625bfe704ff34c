"""An error's answer starts with the site that raises it and the traceback frames in the repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from architecture_fixtures import write
from conftest import git

from recall_agent.architecture import query
from recall_agent.architecture.indexer import open_index
from recall_agent.architecture.origins import frames

DJANGO_CONF = '''"""Settings and configuration."""
import os

from django.core.exceptions import ImproperlyConfigured

ENVIRONMENT_VARIABLE = "DJANGO_SETTINGS_MODULE"


class LazySettings:
    def _setup(self, name=None):
        settings_module = os.environ.get(ENVIRONMENT_VARIABLE)
        if not settings_module:
            desc = ("setting %s" % name) if name else "settings"
            raise ImproperlyConfigured(
                "Requested %s, but settings are not configured. "
                "You must either define the environment variable %s "
                "or call settings.configure() before accessing settings."
                % (desc, ENVIRONMENT_VARIABLE)
            )

    def __getattr__(self, name):
        self._setup(name)
'''
EXCEPTIONS = "class ImproperlyConfigured(Exception):\n    pass\n"
DJANGO_ERROR = (
    "django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not"
    " configured."
)


def _django(tmp_path: Path) -> Path:
    repo = write(
        tmp_path / "django",
        {
            "django/__init__.py": "",
            "django/conf/__init__.py": DJANGO_CONF,
            "django/core/__init__.py": "",
            "django/core/exceptions.py": EXCEPTIONS,
            **{
                f"django/app{i}.py": "from django.core.exceptions import ImproperlyConfigured\n"
                for i in range(5)
            },
        },
    )
    git(repo, "init", "-q")
    return repo


def test_cli_answers_the_django_error_with_its_raise_site_first(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    repo = _django(tmp_path)
    done = subprocess.run(
        [*recall_cmd, "--scope", "architecture", DJANGO_ERROR],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**subprocess_env, "RECALL_FEDERATION_DEADLINE": "90"},
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.split("### [Architecture] Result 1", 1)[1].split("###", 1)[0]
    assert (
        "Raised at django/conf/__init__.py:14 in `LazySettings._setup` (when `not settings_module`)" in first
    )
    assert "“, but settings are not configured.”" in first
    assert "class ImproperlyConfigured" in done.stdout  # what the class is still follows


def test_traceback_frames_in_the_repository_come_with_their_code(tmp_path: Path) -> None:
    repo = _django(tmp_path)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/manage.py", line 3, in <module>\n'
        '  File "/usr/lib/python3/site-packages/django/conf/__init__.py", line 22, in __getattr__\n'
        "    self._setup(name)\n"
        '  File "/usr/lib/python3/site-packages/django/conf/__init__.py", line 14, in _setup\n'
        f"{DJANGO_ERROR}\n"
    )
    first = query(text, str(repo))[0]
    extras = first.model_extra or {}
    assert extras["answer"] == "error_origin"
    assert extras["sites"][0]["file"] == "django/conf/__init__.py"
    assert [(f["file"], f["line"], f["function"]) for f in extras["frames"]] == [
        ("django/conf/__init__.py", 22, "__getattr__"),
        ("django/conf/__init__.py", 14, "_setup"),
    ]
    assert "django/conf/__init__.py:22 in `__getattr__` — `self._setup(name)`" in first.content


SOURCES = {
    "web/client.js": (
        "function settle(res) {\n  if (res.status >= 400) {\n"
        "    throw new HttpError('Request failed with status code ' + res.status);\n  }\n}\n"
    ),
    "cli/flag.go": (
        'package cli\n\nimport "fmt"\n\nfunc (f *Set) parse(name string) error {\n'
        '\treturn f.failf("unknown flag: --%s", name)\n}\n'
    ),
    "db/Mapper.java": (
        "package db;\n\nclass Mapper {\n  void check(String t) {\n"
        '    String msg = String.format("Cannot construct instance of %s (no Creators exist)", t);\n'
        "    throw new IllegalStateException(msg);\n  }\n}\n"
    ),
    "rt/src/lib.rs": (
        'pub fn enter() {\n    panic!("Cannot start a runtime from within a runtime. \\\n'
        '            This happens when a blocking call runs on the runtime.");\n}\n'
    ),
    "lib/site/doc.rb": (
        "module Site\n  class Doc\n    def date(input)\n"
        "      raise ArgumentError, \"Invalid date '#{input}': not a valid datetime\"\n    end\n  end\nend\n"
    ),
    "app/jobs.py": (
        "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef run(job):\n"
        '    log.error(f"job {job.id} failed after {job.tries} tries, giving up")\n'
    ),
}


@pytest.mark.parametrize(
    ("error", "where"),
    [
        ("AxiosError: Request failed with status code 404", "web/client.js:3"),
        ("Error: unknown flag: --minify", "cli/flag.go:6"),
        (
            "InvalidDefinitionException: Cannot construct instance of `a.B` (no Creators exist)",
            "db/Mapper.java:5",
        ),
        (
            "thread 'main' panicked at 'Cannot start a runtime from within a runtime. This happens when a"
            " blocking call runs on the runtime.'",
            "rt/src/lib.rs:2",
        ),
        ("Invalid date '2024-13-45': not a valid datetime", "lib/site/doc.rb:4"),
        ("ERROR app.jobs: job 42 failed after 3 tries, giving up", "app/jobs.py:7"),
    ],
)
def test_messages_are_traced_in_every_language(tmp_path: Path, error: str, where: str) -> None:
    repo = write(tmp_path / "poly", SOURCES)
    first = query(error, str(repo))[0].model_extra or {}
    assert first["answer"] == "error_origin"
    assert first["location"] == where


def test_an_error_nobody_here_raises_gets_no_origin(tmp_path: Path) -> None:
    repo = write(tmp_path / "poly", SOURCES)
    conn, _ = open_index(repo)
    assert conn.execute("SELECT count(*) FROM sites").fetchone()[0] == len(SOURCES)
    conn.close()
    results = query("ConnectionResetError: [Errno 104] Connection reset by peer", str(repo))
    assert all((r.model_extra or {}).get("answer") != "error_origin" for r in results)


def test_frames_of_each_notation_are_read() -> None:
    text = "\n".join(
        [
            "    at settle (/app/node_modules/axios/lib/core/settle.js:19:12)",
            "\tat com.acme.db.Mapper.check(Mapper.java:42)",
            "/home/dev/go/src/acme/cli/flag.go:120 +0x1d",
            "/srv/site/lib/site/doc.rb:4:in `date'",
            "   at ~/.cargo/registry/src/rt-1.0/src/lib.rs:3:5",
        ]
    )
    assert [(f.path, f.line, f.func) for f in frames(text)] == [
        ("/app/node_modules/axios/lib/core/settle.js", 19, "settle"),
        ("com/acme/db/Mapper.java", 42, "Mapper.check"),
        ("/home/dev/go/src/acme/cli/flag.go", 120, ""),
        ("/srv/site/lib/site/doc.rb", 4, "date"),
        ("~/.cargo/registry/src/rt-1.0/src/lib.rs", 3, ""),
    ]


# A kernel-style C file: many strings in calls of a few names (a table's macro), and a callee longer than the
# kind cache keeps.
C_MESSAGES = b"""#include <linux/device.h>

static const struct pin pins[] = {
\tPIN(0, "GPIO0", "uart0_tx", "spi0_clk"),
\tPIN(1, "GPIO1", "uart0_rx", "spi0_mosi"),
};

static int probe(struct device *dev, int ret)
{
\tif (ret < 0) {
\t\tWARN(1, "failed to map the registers: %d\\n", ret);
\t\treturn ret;
\t}
\tif (!dev->of_node)
\t\tpanic("no device tree node for this controller\\n");
\treport_error(dev, "falling back to the default pin table\\n");
\tsome_rather_long_macro_name_for_reporting_errors_of_this_particular_driver_and_of_its_subsystem_Error(
\t\tdev, "the controller did not answer in time\\n");
\treturn 0;
}
"""


def test_message_sites_are_the_same_with_the_callee_kinds_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    from recall_agent.architecture import messages
    from recall_agent.architecture.extract import extract
    from recall_agent.architecture.languages import BY_NAME

    def sites() -> list[tuple]:
        found = extract(BY_NAME["c"], C_MESSAGES).sites
        return [(s.line, s.end_line, s.kind, s.scope, s.parts) for s in found]

    messages._known_callee_kind.cache_clear()
    cold = sites()
    assert messages._known_callee_kind.cache_info().hits > 0  # PIN's kind was decided once for its 6 strings
    assert sites() == cold
    monkeypatch.setattr(messages, "CALLEE_CACHED", 0)  # every kind decided anew: the same sites
    assert sites() == cold
    assert [(line, kind) for line, _, kind, _, _ in cold] == [
        (11, "log"),
        (15, "raise"),
        (16, "error"),
        (17, "error"),
    ]
    assert cold[0][3:] == ("probe", ["failed to map the registers:"])
    assert cold[3][4] == ["the controller did not answer in time"]  # a callee too long for the cache
