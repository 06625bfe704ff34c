"""Code sense (issue 16): questions asked in words, calls followed through values, the right definition,
virtualenvs, tests by directness and TYPE_CHECKING-only dependents, on small real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from architecture_fixtures import git_init, write
from codesense_fixtures import FLASK_LIKE, JS_CALLS, VALUES_REPO

from recall_agent.architecture import query
from recall_agent.architecture.concepts import terms
from recall_agent.architecture.indexer import open_index
from recall_agent.architecture.words import split_identifier


def _one(text: str, repo: Path) -> str:
    results = query(text, str(repo))
    assert results, f"no answer for {text!r}"
    return results[0].content


def _call_sites(text: str, repo: Path) -> set[str]:
    """`path:line in caller` of the call sites listed as resolved (confidence ≥ 0.5)."""
    content = _one(text, repo)
    listed = content.splitlines()[1]
    return {part.rsplit(" (", 1)[0] for part in listed.split(", ")}


@pytest.fixture
def flask_like(tmp_path: Path) -> Path:
    return write(tmp_path / "flask", FLASK_LIKE)


@pytest.fixture
def values_repo(tmp_path: Path) -> Path:
    return write(tmp_path / "vals", VALUES_REPO)


# --------------------------------------------------------------------------- concept search


def test_words_split_identifiers_and_drop_question_words() -> None:
    assert split_identifier("SecureCookieSessionInterface") == [
        "secure",
        "cookie",
        "session",
        "interface",
        "securecookiesessioninterface",
    ]
    assert split_identifier("HTTPServer")[:2] == ["http", "server"]
    assert split_identifier("send_static_file")[:3] == ["send", "static", "file"]
    assert terms("Where are the session cookies signed?") == ["session", "cookies", "signed"]
    assert terms("how does it work") == ["work"]


def test_session_cookie_question_names_sessions_py_first(
    flask_like: Path, recall_cmd: list[str], subprocess_env
) -> None:
    """The done-criterion: `recall --scope architecture "where are session cookies signed"` in a flask
    checkout names sessions.py first (the real client, federation and engine in one process)."""
    git_init(flask_like)
    out = subprocess.run(
        [*recall_cmd, "--scope", "architecture", "where are session cookies signed"],
        cwd=flask_like,
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    listed = [line for line in out.stdout.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    assert listed[0].startswith("1. src/flask/sessions.py — ")
    assert "`SecureCookieSessionInterface.get_signing_serializer`" in listed[0]
    assert "mentions session, cookies, signed" in listed[0]


def test_concept_answers_rank_own_code_and_say_why(flask_like: Path) -> None:
    results = query("where are session cookies signed", str(flask_like))
    extra = results[0].model_extra or {}
    assert extra["answer"] == "concepts"
    files = extra["files"]
    assert files[0] == "src/flask/sessions.py"
    # the tutorial example and the test mention all three words too, but come after the package's own code
    assert files.index("examples/tutorial/flaskr/auth.py") > files.index("src/flask/sessions.py")
    content = _one("how are templates rendered", flask_like)
    assert content.splitlines()[1].startswith("1. src/flask/templating.py — `render_template`")
    # "where is X" with words, not a name, goes to concept search instead of "no symbol named …"
    content = _one("where is the tagged json serializer", flask_like)
    assert content.splitlines()[1].startswith("1. src/flask/json/tag.py")


def test_concept_search_stays_quiet_when_nothing_is_about_it(flask_like: Path) -> None:
    assert query("how do I brew coffee at home today", str(flask_like)) == []
    content = _one("where is the quantum flux capacitor", flask_like)
    assert content.startswith("No file or symbol named `quantum flux capacitor`")


# --------------------------------------------------------------------------- calls that follow values


def test_callers_follow_constructors_annotations_attributes_and_returns(values_repo: Path) -> None:
    sites = _call_sites("who calls Session.send", values_repo)
    assert sites == {
        "pkg/client.py:14 in Client.go",  # self.session = Session()
        "pkg/client.py:21 in top",  # s = Session(); s.send()
        "pkg/client.py:24 in top",  # RetrySession().send(): inherited, not overridden
        "pkg/sessions.py:6 in Session.close",
        "pkg/sessions.py:11 in RetrySession.retry",  # self.send() in a subclass
        "tests/test_client.py:2 in test_send",  # the `session` fixture yields a Session
    }
    sites = _call_sites("who calls Adapter.send", values_repo)
    assert sites == {
        "pkg/client.py:15 in Client.go",  # self.adapter: Adapter = make_adapter()
        "pkg/client.py:23 in top",  # a = make_adapter() -> 'Adapter'
        "pkg/client.py:26 in top",  # adapter: Optional[Adapter]
        "tests/test_client.py:11 in test_adapter",  # no such fixture: spelled like the class, as before
    }


def test_module_qualified_calls_go_to_their_module(values_repo: Path) -> None:
    assert _call_sites("who calls pkg.wsgi.get_host", values_repo) == {"pkg/client.py:16 in Client.go"}
    # an import inside a function binds there only: `wsgi` is sansio.utils in test_local, nowhere else
    assert _call_sites("who calls pkg.sansio.utils.get_host", values_repo) == {
        "pkg/client.py:27 in top",
        "tests/test_client.py:7 in test_local",
    }


def test_javascript_call_apply_and_prototype_methods(tmp_path: Path) -> None:
    repo = write(tmp_path / "js", JS_CALLS)
    assert _call_sites("who calls Runnable.run", repo) == {"lib/hook.js:3 in Hook.run"}  # .apply
    assert _call_sites("who calls Hook.run", repo) == {
        "lib/runner.js:3 in Runner.hooks"
    }  # this.hook = new Hook
    assert _call_sites("who calls Runnable", repo) == {"lib/hook.js:2 in Hook"}  # Runnable.call(this, …)
    card = _one("Runnable.resetTimeout", repo)
    assert card.startswith("`Runnable.resetTimeout` — method, lib/runnable.js:3")


# --------------------------------------------------------------------------- the right definition


def test_own_current_code_is_chosen_over_legacy_stub_and_test_copies(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "pd",
        {
            "pydantic/__init__.py": "",
            "pydantic/fields.py": "class FieldInfo:\n    pass\n",
            "pydantic/main.py": "from .fields import FieldInfo\n",
            "pydantic/v1/__init__.py": "",
            "pydantic/v1/fields.py": "class FieldInfo:\n    pass\n",
            "pydantic/v1/main.py": "from .fields import FieldInfo\n",
            "tests/typechecking/fields.py": "class FieldInfo:\n    pass\n",
        },
    )
    content = _one("what depends on the fields module", repo)
    assert content.startswith("`pydantic.fields` (pydantic/fields.py) has 1 direct dependents")
    results = query("FieldInfo", str(repo))
    assert results[0].content.startswith("`pydantic.fields.FieldInfo` — class, pydantic/fields.py:1")
    others = results[1].content
    assert others.index("pydantic/v1/fields.py") < others.index("tests/typechecking/fields.py")


def test_only_real_virtualenvs_are_skipped(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "ax",
        {
            "lib/env/data.js": "exports.detect = function () { return 1; };\n",
            "lib/index.js": "const env = require('./env/data');\nenv.detect();\n",
            "venv/pyvenv.cfg": "home = /usr/bin\n",
            "venv/lib/python3.11/site-packages/x.py": "def x():\n    pass\n",
            ".venv2/pyvenv.cfg": "home = /usr/bin\n",
            "myenv/pyvenv.cfg": "home = /usr/bin\n",
            "myenv/lib/y.py": "def y():\n    pass\n",
        },
    )
    conn, _ = open_index(repo, progress=False, summary=False)
    try:
        paths = {r[0] for r in conn.execute("SELECT path FROM files")}
    finally:
        conn.close()
    assert paths == {"lib/env/data.js", "lib/index.js"}


# --------------------------------------------------------------------------- tests and TYPE_CHECKING


def test_tests_are_ranked_by_directness(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "tr",
        {
            "app/__init__.py": "",
            "app/config.py": "def load():\n    return {}\n",
            "app/core.py": "from app.config import load\n\n\ndef run():\n    return load()\n",
            "tests/test_a_core.py": "from app.core import run\n\n\ndef test_run():\n    run()\n",
            "tests/test_b_calls.py": "from app import config\n\n\ndef test_load():\n    config.load()\n",
            "tests/test_c_imports.py": "from app.config import load\n\nLOADER = load\n",
        },
    )
    content = _one("tests for app.config.load", repo)
    head, listed = content.splitlines()
    assert head.endswith(
        "3 test files touch `app.config.load` (app/config.py:1): 1 calls it, 1 imports it, 1 transitive"
    )
    assert listed == (
        "tests/test_b_calls.py (calls it), tests/test_c_imports.py (imports it), tests/test_a_core.py (depth 2)"
    )


def test_type_checking_only_dependents_are_marked(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "tc",
        {
            "m/__init__.py": "",
            "m/models.py": "class Model:\n    pass\n",
            "m/views.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from m.models import Model\n\n\n"
                "def show(x: 'Model'):\n    return x\n"
            ),
            "m/forms.py": "import typing\n\nif typing.TYPE_CHECKING:\n    pass\nfrom m.models import Model\n",
        },
    )
    content = _one("what imports m.models", repo)
    assert "m/views.py (Model) [TYPE_CHECKING only]" in content
    assert "m/forms.py (Model)" in content and "m/forms.py (Model) [" not in content


def test_error_messages_are_not_concept_questions(flask_like: Path) -> None:
    """Every plain `recall "<error>"` reaches this engine: an error's words are no search request."""
    assert query("SessionExpiredError session cookie signature mismatch", str(flask_like)) == []
    assert query("session cookie rejected: signature does not match", str(flask_like)) == []
    assert query("session cookie signature mismatch", str(flask_like))  # asked in words: answered


def test_a_subject_described_in_words(flask_like: Path) -> None:
    content = _one("what imports the json tag module", flask_like)
    assert content.startswith("`flask.json.tag` (src/flask/json/tag.py) has 1 direct dependents")
    assert "src/flask/sessions.py (TaggedJSONSerializer)" in content
    # words no single file clearly is: said so, not guessed
    assert _one("who calls the frobnicator thing", flask_like).startswith("No file or symbol named")


@pytest.mark.parametrize("table_max", [1 << 18, 3])
def test_identifier_words_are_the_identifier_regex_words(table_max: int, monkeypatch) -> None:
    """identifier_words finds identifiers by bytes.translate + split and splits a file's new ones all at once
    (issue 39): the same words, in the same order, as splitting each match of the identifier regex with
    split_identifier, on numbers, `$`, non-ASCII, line ends, one-letter parts and case changes — also when
    the per-process table of split names fills up and is emptied between files."""
    import re

    from recall_agent.architecture import words

    monkeypatch.setattr(words, "RUN_WORDS_MAX", table_max)
    sources = [
        "x = 0x1F + foo$bar; 123abc _a9 __init__\nparseHTTPResponse(é_name, naïve) 42 $el\r\nkref_put\n",
        "a_b x1 _1ab $x a$b AbcDEFGhi __x__ HTTPServer $ _ 12ab_3 A_B aB ABc Foo_Bar_baz foo$ _$ab __5 _5a a5_",
        "XMLHttpRequest2Go getX i j k __x _y_ Z9 ABCdefGHIjk kref_put x = 0x1F;\n",
    ]
    for source in sources:
        expected: dict[str, None] = {}
        for name in dict.fromkeys(re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", source)):
            expected.update(dict.fromkeys(split_identifier(name)))
        assert words.identifier_words(source.encode()) == " ".join(expected)
    assert {"x1f", "parse", "kref", "xml", "http", "xmlhttprequest2go"} <= set(
        words.identifier_words("\n".join(sources).encode()).split()
    )
