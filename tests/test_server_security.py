"""Issue 15 against a real `recall serve` on 127.0.0.1: repository scoping of federation requests and
learnings, hostile repo_path values, and a request the old path regex froze the server with."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from server_fixtures import RunningServer, start_server

from recall_agent.config import DEFAULT_FEDERATION_PATH, DEFAULT_RETRIEVAL_PATH

LEARN = "/v1/learnings"
A_ONLY = "a-only-token-0123456789"
ENGINES = {
    "architecture": {"memgraph": ["graph"], "repowise": ["symbol"]},
    "antipatterns": {"qdrant": ["smell"]},
}


@pytest.fixture
def two_repos(tmp_path: Path):
    """Repositories A and B on one server; B holds a folder named A (the `B/A` trick); a token sees only A."""
    a, b = tmp_path / "srv" / "A", tmp_path / "srv" / "B"
    (b / "A").mkdir(parents=True)
    a.mkdir()
    (a / "to-b").symlink_to(b)  # a link inside A that leads into B
    (a / "loop1").symlink_to(a / "loop2")
    (a / "loop2").symlink_to(a / "loop1")
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "a-only"\ntoken = "{A_ONLY}"\nscopes = ["read", "write"]\nrepos = ["A"]\n'
        '[[tokens]]\nname = "all"\ntoken = "all-repos-token-0123456789"\nscopes = ["read", "write"]\n'
    )
    srv = start_server(
        tmp_path, ["--repo", str(a), "--repo", str(b), "--token-file", str(tokens)], fake_engines=ENGINES
    )
    yield srv, a.resolve(), b.resolve()
    srv.stop()


def _ask(srv: RunningServer, repo_path: str | None, token: str = A_ONLY) -> httpx.Response:
    body = {"query": "who calls x", **({"repo_path": repo_path} if repo_path is not None else {})}
    return httpx.post(
        srv.url + DEFAULT_FEDERATION_PATH, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


def _repos_answered(resp: httpx.Response) -> set[str]:
    return {r["content"].rsplit("(repo=", 1)[1].rstrip(")") for r in resp.json()["results"]}


def test_a_token_for_a_cannot_read_b_through_a_path(two_repos) -> None:
    srv, a, b = two_repos
    for hostile in (f"{b}/A", str(b), f"{b}/A/../..", f"{a}/to-b", f"{a}/to-b/A", f"{a}/../B"):
        r = _ask(srv, hostile)
        assert r.status_code == 403, (hostile, r.status_code, r.text)
        assert "forbidden" in r.json()["detail"]
    # the same paths with a token that sees everything are answered from B (the repository, not the folder)
    r = _ask(srv, f"{b}/A", token="all-repos-token-0123456789")
    assert r.status_code == 200 and _repos_answered(r) == {str(b)}


def test_a_repo_path_resolves_to_exactly_one_configured_repository(two_repos) -> None:
    srv, a, _ = two_repos
    assert _repos_answered(_ask(srv, str(a))) == {str(a)}
    assert _repos_answered(_ask(srv, f"{a}/src/deep/file.py")) == {str(a)}  # a sub-path: the repo's root
    assert _repos_answered(_ask(srv, "/home/alice/src/A")) == {str(a)}  # a client's checkout, by name
    assert _repos_answered(_ask(srv, None)) == {str(a)}  # no repo_path: only what the token may see
    for outside in ("/etc", "/", str(a.parent)):
        assert _ask(srv, outside).status_code == 403, outside


def test_hostile_repo_paths_are_4xx_not_500(two_repos) -> None:
    srv, a, _ = two_repos
    for hostile in (
        "~nosuchuser/x",
        "~root/A",
        "~",
        f"{a}/loop1",
        f"{a}/loop1/x",
        "..",
        "A/../../etc",
        "\\\\?\\C:",
    ):
        r = _ask(srv, hostile)
        assert r.status_code in (200, 403, 422), (hostile, r.status_code, r.text)
        if r.status_code == 200:  # only ever the one repository the token may see
            assert _repos_answered(r) <= {str(a)}, hostile


def test_learnings_repo_names_are_exact(two_repos) -> None:
    srv, *_ = two_repos
    headers = {"Authorization": f"Bearer {A_ONLY}"}
    learning = {"error_signatures": ["KeyError: 'x'"], "resolution_summary": "use dict.get"}
    for name in ("B/A", "/srv/B/A", "A/", "./A", "a"):
        r = httpx.post(srv.url + LEARN, json={**learning, "repo": name}, headers=headers)
        assert r.status_code == 403, (name, r.text)
        r = httpx.post(srv.url + DEFAULT_RETRIEVAL_PATH, json={"repo": name}, headers=headers)
        assert r.status_code == 403, (name, r.text)
    assert httpx.post(srv.url + LEARN, json={**learning, "repo": "A"}, headers=headers).status_code == 201


def test_two_configured_repositories_with_one_name_are_ambiguous(tmp_path: Path) -> None:
    one, two = tmp_path / "x" / "shop", tmp_path / "y" / "shop"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    srv = start_server(tmp_path, ["--repo", str(one), "--repo", str(two)], fake_engines=ENGINES)
    try:
        r = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": "x", "repo_path": "/home/me/shop"})
        assert r.status_code == 422 and "2 configured repositories are named 'shop'" in r.json()["detail"]
        r = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": "x", "repo_path": str(two)})
        assert r.status_code == 200
    finally:
        srv.stop()


def test_server_refuses_a_repo_inside_a_git_work_tree(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "sub").mkdir()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "recall_agent",
            "serve",
            "--port",
            "0",
            "--repo",
            str(tmp_path / "outer" / "sub"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stderr.strip().endswith("pass that folder instead") and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_server_without_repositories_indexes_nothing(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import os\n")  # the server's working folder: not a repository
    env = {k: v for k, v in os.environ.items() if k != "RECALL_REPOS"}
    srv = start_server(tmp_path, [], env=env, fake_engines=ENGINES)
    try:
        for body in ({"query": "app.py"}, {"query": "app.py", "repo_path": str(tmp_path)}):
            r = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json=body)
            assert r.status_code in (200, 403)
            if r.status_code == 200:
                assert r.json()["results"] == [] and "no repository" in r.json()["error_message"]
    finally:
        srv.stop()


# --------------------------------------------------------------------------- a request cannot freeze it


def test_a_4000_zero_query_is_answered_in_a_second_while_health_answers(tmp_path: Path) -> None:
    """Real engines (architecture + antipatterns) over a small repository: the old antipattern path regex
    spent minutes on this query with the GIL held, so /health and every other request stopped too."""
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / "app.py").write_text("import os\n\n\ndef main():\n    return os.environ['TOKEN']\n")
    srv = start_server(tmp_path, ["--repo", str(repo)])
    try:
        # first calls: index build, both engines' imports and catalogs (an error routes to every engine)
        for warm_query in ("who calls main", "TypeError: 'NoneType' object is not callable"):
            warm = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": warm_query}, timeout=120)
            assert warm.status_code == 200
        health_ms: list[float] = []
        stop = threading.Event()

        def poll_health() -> None:
            with httpx.Client(timeout=5) as client:
                while not stop.is_set():
                    t0 = time.perf_counter()
                    assert client.get(srv.url + "/health").status_code == 200
                    health_ms.append((time.perf_counter() - t0) * 1000)
                    time.sleep(0.02)

        poller = threading.Thread(target=poll_health)
        poller.start()
        try:
            for query in ("0" * 4000, "-" * 4000, "a" * 4000, "QUJD" * 1000):
                t0 = time.perf_counter()
                r = httpx.post(srv.url + DEFAULT_FEDERATION_PATH, json={"query": query}, timeout=30)
                took = time.perf_counter() - t0
                assert r.status_code == 200, r.text
                assert took < 1.0, f"{query[:8]}…: {took:.2f} s"
        finally:
            stop.set()
            poller.join()
        assert health_ms and max(health_ms) < 1000, max(health_ms)
    finally:
        srv.stop()


# --------------------------------------------------------------------------- a corrupt store


def test_health_is_503_when_the_sqlite_file_is_corrupted_under_a_running_server(tmp_path: Path) -> None:
    import random

    srv = start_server(tmp_path, [])
    for i in range(200):
        body = {
            "repo": "shop",
            "error_signatures": [f"KeyError: 'field_{i}'"],
            "resolution_summary": "x" * 300,
        }
        assert httpx.post(srv.url + LEARN, json=body).status_code == 201
    srv.stop()  # checkpoint: the rows now live in the main file, not the WAL
    srv = start_server(tmp_path, [])
    try:
        assert httpx.get(srv.url + "/health").status_code == 200
        db = tmp_path / "recall-home" / "learnings.db"
        data = bytearray(db.read_bytes())
        rng = random.Random(15)
        for offset in range(4096 * 3, len(data), 4096):  # every page after the schema: garbage
            data[offset : offset + 4096] = rng.randbytes(4096)
        with db.open("r+b") as fh:
            fh.write(bytes(data))
        deadline = time.monotonic() + 30  # no request needed: the background check finds it
        while httpx.get(srv.url + "/health").status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.5)
        health = httpx.get(srv.url + "/health")
        assert health.status_code == 503 and "corrupt" in health.json()["detail"]
        r = httpx.post(
            srv.url + DEFAULT_RETRIEVAL_PATH, json={"repo": "shop", "error_text": "KeyError: 'field_3'"}
        )
        assert r.status_code == 503 and "corrupt" in r.json()["detail"] and "Traceback" not in r.text
    finally:
        srv.stop()


# --------------------------------------------------------------------------- bad input is a 422 everywhere


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("plain")
    srv = start_server(tmp, [], env={"RECALL_HOME": str(tmp / "home")})
    yield srv
    srv.stop()


@pytest.mark.parametrize(
    "raw",
    [
        b'{"repo":"a","resolution_summary":"x","file_paths_touched":["\\ud800"]}',  # lone surrogate: was a 409
        b'{"repo":"a","resolution_summary":"x","error_signatures":["\\udfff tail"]}',
        b'{"repo":"a\\u0000b","resolution_summary":"x"}',
        b'{"repo":"a","resolution_summary":"x\\u0000"}',
        b'{"repo":"a","resolution_summary":"x","ticket_id":"T-1\\u0000"}',
        b'{"repo":"a","resolution_summary":"x","error_signatures":[' + b",".join([b'"E"'] * 21) + b"]}",
        b'{"repo":"a","resolution_summary":"x","file_paths_touched":[' + b",".join([b'"p"'] * 201) + b"]}",
        b'{"repo":"a","resolution_summary":"x","file_paths_touched":["' + b"p" * 4097 + b'"]}',
    ],
)
def test_unstorable_learnings_are_422(plain: RunningServer, raw: bytes) -> None:
    r = httpx.post(plain.url + LEARN, content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert "invalid request" in r.json()["detail"]


def test_recall_learn_reads_a_bounded_amount_of_stdin(tmp_path: Path) -> None:
    big = "E" * 5_000_000
    r = subprocess.run(
        [sys.executable, "-m", "recall_agent", "learn", "--error", "-", "--resolution", "x"],
        input=big,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "RECALL_HOME": str(tmp_path / "home")},
    )
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr  # read at most 1 MiB of the 5 MB


@pytest.mark.parametrize(
    "command", [["learn", "--error", "KeyError: 'x'", "--resolution", "use get"], ["install", "--project"]]
)
def test_cli_in_a_deleted_folder_has_no_traceback(tmp_path: Path, command: list[str]) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m recall_agent "$@"'
    env = {**os.environ, "RECALL_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    r = subprocess.run(
        ["sh", "-c", script, "sh", *command], capture_output=True, text=True, timeout=60, env=env
    )
    assert "Traceback" not in r.stderr, r.stderr


def test_symlink_loops_and_tilde_paths_in_a_query_are_skipped(tmp_path: Path) -> None:
    from recall_agent.antipatterns.scan import named_files

    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "real.py").write_text("x = 1\n")
    found, _ = named_files("see a.py and ~nosuchuser/x.py and ~/y.py and real.py", tmp_path)
    assert found == [(tmp_path / "real.py").resolve()]
