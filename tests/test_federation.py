"""Federation node: routing, force_backends, deadline, merge/dedupe/rank, failures named, repo resolution.

Engines are swapped through the documented seam `recall_agent.federation.use_engines`; the fakes are real
functions that record what they were asked, so every assertion is on what the node really did.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from recall_agent import federation
from recall_agent.federation import Engine, execute, route, use_engines
from recall_agent.models import BackendRole, FederationResponse, FederationResult, content_hash

M, R, Q = BackendRole.MEMGRAPH, BackendRole.REPOWISE, BackendRole.QDRANT


class Recorder:
    """A fake engine: returns canned results per role and remembers every call."""

    def __init__(
        self, name: str, answers: dict[str, list[str]], delay: float = 0.0, error: Exception | None = None
    ):
        self.name, self.answers, self.delay, self.error = name, answers, delay, error
        self.calls: list[tuple[str, str | None, set[str], int]] = []
        self.threads: set[int] = set()

    def __call__(self, text: str, repo: str | None, roles: set[str], limit: int) -> list[FederationResult]:
        self.calls.append((text, repo, set(roles), limit))
        self.threads.add(threading.get_ident())
        if self.delay:
            time.sleep(self.delay)
        if self.error:
            raise self.error
        out = []
        for role in sorted(roles):
            for i, content in enumerate(self.answers.get(role, [])[:limit]):
                out.append(FederationResult(content=content, source=role, rank=i, content_hash="bogus"))
        return out


def arch(**kw) -> tuple[Recorder, Engine]:
    rec = Recorder(
        "architecture", kw.pop("answers", {"memgraph": ["m0", "m1"], "repowise": ["r0", "r1"]}), **kw
    )
    return rec, Engine("architecture", frozenset({M, R}), rec)


def anti(**kw) -> tuple[Recorder, Engine]:
    rec = Recorder("antipatterns", kw.pop("answers", {"qdrant": ["q0", "q1"]}), **kw)
    return rec, Engine("antipatterns", frozenset({Q}), rec, needs_repo=False)


MODE = {"path": "execute"}


@pytest.fixture(autouse=True, params=["execute", "execute_sync"])
def path(request: pytest.FixtureRequest):
    """Every test runs twice: through the async node (the server) and its plain synchronous form (the
    CLI's in-process fan-out), which must behave the same."""
    MODE["path"] = request.param
    yield request.param
    MODE["path"] = "execute"


def run(req: dict, **kw) -> FederationResponse:
    if MODE["path"] == "execute_sync":
        return federation.execute_sync(req, **kw)  # type: ignore[return-value]
    return anyio.run(lambda: execute(req, **kw))


@pytest.mark.parametrize(
    ("query", "roles"),
    [
        ("what depends on recall_agent/models.py", [M, R]),
        ("blast radius of changing Learning", [M]),
        ("are there circular imports in the store", [M]),
        ("who calls content_hash", [M]),
        ("where is the class FederationRequest defined", [R]),
        ("recall/fanout.py", [R]),
        ("is this a known antipattern", [Q]),
        ("code smell: duplicate retry loops", [Q]),
        ("TypeError: 'NoneType' object is not subscriptable", [M, R, Q]),
    ],
)
def test_routing_by_keyword(query: str, roles: list[BackendRole]) -> None:
    assert route(query) == roles


def test_graph_question_goes_only_to_the_graph_role(tmp_path: Path) -> None:
    a, ae = arch()
    p, pe = anti()
    with use_engines(ae, pe):
        resp = run({"query": "blast radius of store.add", "repo_path": str(tmp_path)})
    assert resp.backends_queried == ["memgraph"]
    assert [r.content for r in resp.results] == ["m0", "m1"]
    assert a.calls == [("blast radius of store.add", str(tmp_path.resolve()), {"memgraph"}, 5)]
    assert p.calls == []
    assert resp.error_message is None


def test_no_keyword_fans_out_to_all_three_concurrently_and_merges(tmp_path: Path) -> None:
    a, ae = arch(delay=0.3)
    p, pe = anti(delay=0.3)
    with use_engines(ae, pe):
        t0 = time.perf_counter()
        resp = run({"query": "KeyError: 'user_id'", "repo_path": str(tmp_path)})
        elapsed = time.perf_counter() - t0
    assert resp.backends_queried == ["memgraph", "repowise", "qdrant"]
    assert elapsed < 0.55, "engines must run concurrently, not one after the other"
    assert a.threads.isdisjoint(p.threads) and threading.get_ident() not in a.threads | p.threads
    # interleaved by each engine's own rank, then one counter over the merged list
    assert [(r.content, r.source.value, r.rank) for r in resp.results] == [
        ("m0", "memgraph", 0),
        ("r0", "repowise", 1),
        ("q0", "qdrant", 2),
        ("m1", "memgraph", 3),
        ("r1", "repowise", 4),
        ("q1", "qdrant", 5),
    ]
    for r in resp.results:
        assert r.content_hash == content_hash(r.content)  # recomputed, never the engine's "bogus"


def test_force_backends_overrides_routing(tmp_path: Path) -> None:
    a, ae = arch()
    p, pe = anti()
    with use_engines(ae, pe):
        resp = run(
            {"query": "what depends on models.py", "force_backends": ["qdrant"], "repo_path": str(tmp_path)}
        )
    assert resp.backends_queried == ["qdrant"]
    assert [r.source for r in resp.results] == [Q, Q]
    assert a.calls == []


def test_force_backends_repowise_only_drops_results_of_other_roles(tmp_path: Path) -> None:
    # an engine that ignores `roles` must not leak a role the caller did not ask for
    leaky = Recorder("architecture", {"memgraph": ["m0"], "repowise": ["r0"]})
    engine = Engine(
        "architecture", frozenset({M, R}), lambda t, rp, roles, n: leaky(t, rp, {"memgraph", "repowise"}, n)
    )
    with use_engines(engine):
        resp = run({"query": "x", "force_backends": ["repowise"], "repo_path": str(tmp_path)})
    assert [(r.content, r.source) for r in resp.results] == [("r0", R)]
    assert resp.backends_queried == ["repowise"]


def test_duplicates_are_merged_by_content_hash(tmp_path: Path) -> None:
    _, ae = arch(answers={"memgraph": ["same", "m1"], "repowise": ["same"]})
    _, pe = anti(answers={"qdrant": ["same", "q1"]})
    with use_engines(ae, pe):
        resp = run({"query": "anything", "repo_path": str(tmp_path)})
    contents = [r.content for r in resp.results]
    assert contents.count("same") == 1
    assert sorted(contents) == ["m1", "q1", "same"]
    assert [r.rank for r in resp.results] == [0, 1, 2]


def test_failing_engine_is_named_and_others_still_answer(tmp_path: Path) -> None:
    _, ae = arch(error=RuntimeError("index corrupt"))
    _, pe = anti()
    with use_engines(ae, pe):
        resp = run({"query": "anything", "repo_path": str(tmp_path)})
    assert [r.content for r in resp.results] == ["q0", "q1"]
    assert resp.error_message is not None
    assert "architecture engine failed" in resp.error_message and "index corrupt" in resp.error_message
    assert "antipatterns" not in resp.error_message
    assert resp.backends_queried == ["memgraph", "repowise", "qdrant"]  # it ran, and failed


def test_slow_engine_times_out_under_the_deadline(tmp_path: Path) -> None:
    _, ae = arch(delay=3.0)
    _, pe = anti()
    with use_engines(ae, pe):
        t0 = time.perf_counter()
        resp = run({"query": "anything", "repo_path": str(tmp_path)}, deadline=0.4)
        elapsed = time.perf_counter() - t0
    assert elapsed < 1.5
    assert [r.content for r in resp.results] == ["q0", "q1"]
    assert resp.error_message == "architecture engine timed out after 0.4s"


def test_unimportable_engine_is_reported_not_invented(tmp_path: Path) -> None:
    def missing(text, repo, roles, limit):
        raise ImportError("No module named 'recall.nowhere'")

    _, pe = anti()
    with use_engines(Engine("architecture", frozenset({M, R}), missing), pe):
        resp = run({"query": "anything", "repo_path": str(tmp_path)})
    assert resp.error_message == "architecture engine unavailable (No module named 'recall.nowhere')"
    assert resp.backends_queried == ["qdrant"]  # the architecture roles never ran
    assert all(r.source == Q for r in resp.results)


def test_real_engine_seam_reports_a_missing_query_function(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import types

    monkeypatch.setitem(
        __import__("sys").modules, "recall_agent.antipatterns", types.ModuleType("recall_agent.antipatterns")
    )
    with use_engines(*federation.DEFAULT_ENGINES[1:]):
        resp = run({"query": "code smell", "repo_path": str(tmp_path)})
    assert resp.results == []
    assert resp.error_message == "antipatterns engine unavailable (recall_agent.antipatterns has no query())"
    assert resp.backends_queried == []


def test_repo_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, ae = arch()
    repo1, repo2, gitrepo = tmp_path / "one", tmp_path / "two", tmp_path / "checkout"
    for d in (repo1, repo2, gitrepo / ".git", gitrepo / "src"):
        d.mkdir(parents=True)
    monkeypatch.chdir(gitrepo / "src")
    with use_engines(ae):
        run({"query": "who calls x"})  # cwd's git top-level
        monkeypatch.setenv(federation.ENV_REPOS, f"{repo1}:{repo2}")
        run({"query": "who calls x"})  # configured repositories, each asked
        run({"query": "who calls x", "repo_path": str(repo2)})  # the request field wins
    asked = [c[1] for c in a.calls]
    assert asked[0] == str(gitrepo)
    assert sorted(asked[1:3]) == [str(repo1), str(repo2)]  # both configured repos, asked concurrently
    assert asked[3] == str(repo2)


def test_configure_repos_overrides_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(federation.ENV_REPOS, "/elsewhere")
    federation.configure_repos([str(tmp_path)])
    try:
        assert federation.resolve_repos(None) == [str(tmp_path.resolve())]
    finally:
        federation.configure_repos([])
    assert federation.resolve_repos(None) == ["/elsewhere"]


@pytest.mark.parametrize(
    "bad",
    [{"query": ""}, {"query": "x", "force_backends": ["neo4j"]}, {"query": "x", "surprise": 1}, {}],
)
def test_bad_requests_raise_validation_error(bad: dict) -> None:
    with pytest.raises(ValidationError):
        run(bad)


def test_plain_request_answers_with_the_wire_json_of_the_async_node(tmp_path: Path) -> None:
    """The real architecture engine on a real tree: the CLI's plain path gives byte for byte the JSON the
    async node's pydantic response gives (the display and `--format json` read it)."""
    import json

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    pkg = tmp_path / "shop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "prices.py").write_text("def total(items):\n    return sum(i.price for i in items)\n")
    (pkg / "cart.py").write_text(
        "from shop.prices import total\n\n\ndef checkout(cart):\n    return total(cart)\n"
    )
    for text, force in [
        ("who calls total", ["repowise"]),
        ("blast radius of shop/prices.py", ["repowise"]),
        ("where is checkout defined", None),
        ("no_such_name_anywhere", ["repowise"]),
    ]:
        wire = {"query": text, "repo_path": str(tmp_path), "force_backends": force}
        plain = federation.execute_sync(federation.Request(**wire)).to_wire()
        model = anyio.run(lambda w=wire: execute(w)).model_dump(mode="json")
        assert plain["results"] and plain["results"][0]["engine"] == "recall-index", text
        assert json.dumps(plain) == json.dumps(model), text


def test_sync_path_reports_a_slow_engine_and_leaves_it_behind(tmp_path: Path) -> None:
    rec, ae = arch(delay=2.0)
    with use_engines(ae):
        t0 = time.perf_counter()
        resp = federation.execute_sync(
            federation.Request("who calls x", repo_path=str(tmp_path)), deadline=0.3
        )
        elapsed = time.perf_counter() - t0
    assert elapsed < 1.0
    assert resp.results == [] and resp.error_message == "architecture engine timed out after 0.3s"
    assert resp.backends_queried == ["memgraph"]
