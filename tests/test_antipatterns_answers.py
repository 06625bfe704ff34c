"""What the user sees through the real CLI: every detection of a change, and questions written as code."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import git

from recall_agent.antipatterns import query
from recall_agent.antipatterns.snippet import code_in

# twelve findings of twelve kinds, added by one change to a committed file
RISKY_CHANGE = textwrap.dedent(
    """\
    import hashlib
    import os
    import pickle
    import subprocess
    import tarfile

    import requests
    import yaml

    API_TOKEN = "tok-9f8e7d6c5b4a3f2e1d"


    def handler(cmd, blob, path, url, tags=[]):
        tags.append(cmd)
        subprocess.run(cmd, shell=True)
        data = pickle.loads(blob)
        cfg = yaml.load(blob)
        requests.get(url)
        os.chmod(path, 0o777)
        tarfile.open(path).extractall("/srv")
        digest = hashlib.md5(blob).hexdigest()
        eval(cmd)
        try:
            notify(url, tags)
        except:
            pass
        return data, cfg, digest
    """
)
EXPECTED_KINDS = {
    "hardcoded-secret",
    "py-mutable-default-arg",
    "py-subprocess-shell-true",
    "py-pickle-untrusted",
    "py-yaml-unsafe-load",
    "py-request-without-timeout",
    "py-world-writable-permissions",
    "py-tarfile-unsafe-extract",
    "py-weak-hash",
    "py-eval-dynamic",
    "py-bare-except",
    "py-broad-except-swallow",
}


@pytest.fixture
def changed_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "service.py").write_text("def handler():\n    return None\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "service.py").write_text(RISKY_CHANGE)  # the working tree's change
    return repo


def recall(recall_cmd: list[str], env: dict[str, str], cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        [*recall_cmd, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**env, "RECALL_FEDERATION_DEADLINE": "90"},  # latency lives in bench/, not in a flaky test
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_engine_finds_the_twelve_kinds_of_the_change(changed_repo: Path) -> None:
    results = query("what is risky in my change?", str(changed_repo))
    found = [r.model_extra for r in results if (r.model_extra or {}).get("match_kind") == "detection"]
    assert {f["antipattern_id"] for f in found} == EXPECTED_KINDS
    assert {f["detections_total"] for f in found} == {12}
    ranks = [{"critical": 0, "high": 1, "medium": 2, "low": 3}[f["severity"]] for f in found]
    assert ranks == sorted(ranks), "worst first"


def test_cli_shows_every_detection_of_a_change_and_json_carries_them_all(
    changed_repo: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    out = recall(
        recall_cmd, subprocess_env, changed_repo, "--scope", "antipatterns", "what is risky in my change?"
    )
    assert out.count("Detected pattern:") == 12
    assert "12 detections in the code, all shown, worst first" in out
    assert "in service.py:" in out
    assert "CWE-78" in out  # bandit's CWE for shell=True

    raw = recall(
        recall_cmd,
        subprocess_env,
        changed_repo,
        "--scope",
        "antipatterns",
        "--format",
        "json",
        "what is risky in my change?",
    )
    results = json.loads(raw)["federation"]["response"]["results"]
    detections = [r for r in results if r.get("match_kind") == "detection"]
    assert {r["antipattern_id"] for r in detections} == EXPECTED_KINDS
    shell = next(r for r in detections if r["antipattern_id"] == "py-subprocess-shell-true")
    assert (shell["file"], shell["line"], shell["checks"], shell["cwe"]) == (
        "service.py",
        15,
        ["B602"],
        ["CWE-78"],
    )


def test_cli_names_the_mutable_default_first_for_a_question_written_as_code(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    out = recall(recall_cmd, subprocess_env, tmp_path, "--scope", "antipatterns", "def f(x, acc=[]): ...")
    first = out.split("### [Antipatterns] Result 1", 1)[1].split("###", 1)[0]
    assert "Detected pattern: Mutable default argument" in first
    assert "the code in the question" in first


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("def f(x, acc=[]): acc.append(x); return acc", "py-mutable-default-arg"),
        ("ctx = ssl._create_unverified_context()", "tls-verification-disabled"),
        ("jwt.decode(token, options={'verify_signature': False})", "py-jwt-verification-disabled"),
        ("exec(code_from_user)", "py-eval-dynamic"),
        ("is `yaml.load(f)` safe?", "py-yaml-unsafe-load"),
        ("el.innerHTML = `<b>${name}</b>`;", "js-innerhtml-dynamic"),
    ],
)
def test_code_in_the_question_is_checked_and_ranks_first(
    tmp_path: Path, question: str, expected: str
) -> None:
    top = query(question, str(tmp_path))[0].model_extra or {}
    assert (top["antipattern_id"], top["match_kind"], top["from_question"]) == (expected, "detection", True)


@pytest.mark.parametrize(
    "prose", ["requests.get in async handler", "what is risky in my change?", "retry loop", "not found"]
)
def test_questions_in_words_are_not_code(prose: str) -> None:
    assert code_in(prose) is None


def test_pickle_round_trip_is_not_untrusted_data(tmp_path: Path) -> None:
    from recall_agent.antipatterns.catalog import load_catalog
    from recall_agent.antipatterns.source import ScanContext

    det = load_catalog().entries["py-pickle-untrusted"].detectors[0]
    code = "import pickle\n\ncopy = pickle.loads(pickle.dumps(obj))\nother = pickle.loads(blob)\n"
    assert [h.line for h in det.find(ScanContext(code, "python"))] == [4]


def _found(code: str) -> dict[str, list[int]]:
    from recall_agent.antipatterns.catalog import load_catalog
    from recall_agent.antipatterns.scan import detect
    from recall_agent.antipatterns.source import ScanContext

    hits = detect(load_catalog(), ScanContext(textwrap.dedent(code), "python", "app.py"), [])
    return {entry: [h.line for h in found] for entry, found in hits.items()}


def test_sql_checks_read_only_sql_that_runs_and_carries_values() -> None:
    found = _found(
        """\
        print("delete from the cache as the first argument")
        log.info("update the set of " + name)
        cur.execute(f"DELETE FROM edges WHERE src IN ({marks})", ids)
        cur.execute(f"SELECT a FROM orders WHERE id = {order_id}")
        cur.execute("DELETE FROM sessions")
        """
    )
    assert found.get("sql-string-formatting") == [4]
    assert found.get("sql-update-delete-without-where") == [5]


def test_deliberate_swallows_and_reexport_facades_are_not_alarms() -> None:
    found = _found(
        """\
        def close(sock, path):
            try:
                sock.close()
            except Exception:
                pass
            try:
                parse(path)
            except Exception:  # malformed files are skipped on purpose
                pass
            try:
                load(path)
            except Exception:
                pass
        """
    )
    assert found == {"py-broad-except-swallow": [12]}
    assert _found('"""Public names."""\nfrom .models import *\n\n__all__ = ["Order"]\n') == {}
    assert _found("from .models import *\n\ndef f():\n    pass\n") == {"py-wildcard-import": [1]}


def test_mutable_default_needs_a_mutation_or_a_leak() -> None:
    found = _found(
        """\
        def read_only(names=["a", "b"]):
            return [n.upper() for n in names]

        def rebound(attrs=[]):
            attrs = set(attrs)
            attrs -= {"x"}

        def leaks(acc=[]):
            acc.append(1)
            return acc
        """
    )
    assert found == {"py-mutable-default-arg": [8]}


def test_cli_names_disabled_tls_first_for_code_among_words(
    tmp_path: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    question = "httpx.get(url, verify=False) in the sync job"
    out = recall(recall_cmd, subprocess_env, tmp_path, "--scope", "antipatterns", question)
    first = out.split("### [Antipatterns] Result 1", 1)[1].split("###", 1)[0]
    assert "Detected pattern: TLS certificate verification disabled" in first
    assert "httpx.get(url, verify=False)" in first


@pytest.mark.parametrize(
    ("question", "code", "kind"),
    [
        ("httpx.get(url, verify=False) in the sync job", "httpx.get(url, verify=False)", "python"),
        ("for the export I do os.system('pg_dump ' + db) nightly", "os.system('pg_dump ' + db)", "python"),
        ("if ratio == 0.3: in the scoring code", "if ratio == 0.3: pass", "python"),
        ("except Exception: pass around the refresh", "try:\n    pass\nexcept Exception: pass", "python"),
        ("catch (e) {} around JSON.parse", "try {} catch (e) {}", "javascript"),
        ("rm -rf $TMPDIR/* in the cleanup script", "rm -rf $TMPDIR/*", "shell"),
        ("cd $DIR; make in the deploy script", "cd $DIR\nmake", "shell"),
        (
            "SELECT * FROM events WHERE user_id = $1 in the feed query",
            "SELECT * FROM events WHERE user_id = $1",
            "sql",
        ),
        (
            "WHERE id NOT IN (SELECT uid FROM bans) returns nothing",
            "WHERE id NOT IN (SELECT uid FROM bans)",
            "sql",
        ),
        (
            "COPY . /app and then RUN pip install -r req.txt, slow",
            "COPY . /app\nRUN pip install -r req.txt",
            "dockerfile",
        ),
    ],
)
def test_code_among_words_is_found_with_its_language(question: str, code: str, kind: str) -> None:
    found = code_in(question)
    assert found is not None and found.fragment
    assert (found.code, found.kinds[0]) == (code, kind)


@pytest.mark.parametrize(
    "prose",
    [
        "the container has no USER line, so it runs as root",
        "note: this is slow when the list is long",
        "my bash script carries on after a command fails",
        "each row of {% for o in orders %} hits the database",
    ],
)
def test_words_with_code_like_marks_stay_words(prose: str) -> None:
    found = code_in(prose)
    assert found is None or found.kinds != ("dockerfile",) and "note" not in found.code


def test_a_fragment_is_answered_from_its_own_language(tmp_path: Path) -> None:
    results = query("if ratio == 0.3: in the scoring function never matches", str(tmp_path))
    ids = [(r.model_extra or {}).get("antipattern_id") for r in results]
    assert ids[0] == "float-equality"
    assert "js-loose-equality" not in ids


def test_a_quoted_instruction_is_not_judged_as_a_whole_dockerfile(tmp_path: Path) -> None:
    results = query("FROM python:latest in our Dockerfile for the api", str(tmp_path))
    detected = [
        (r.model_extra or {}).get("antipattern_id")
        for r in results
        if r.model_extra["match_kind"] == "detection"
    ]
    assert detected == ["docker-latest-tag"]  # no "runs as root": the USER line may be further down
