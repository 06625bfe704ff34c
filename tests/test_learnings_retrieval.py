"""The learnings node end to end in-process: execute() over a real SQLite store under RECALL_HOME."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from recall_agent.learnings import StoreError, execute, retrieval
from recall_agent.learnings.store import open_store
from recall_agent.models import Learning, LearningRetrievalRequest

TB = """Traceback (most recent call last):
  File "{root}/run.py", line 4, in <module>
    main()
  File "{root}/acme/worker.py", line {line}, in main
    import redis
ModuleNotFoundError: No module named 'redis'"""


def tb(root: str = "/home/alice/acme", line: int = 45) -> str:
    return TB.format(root=root, line=line)


def learn(**kw) -> Learning:
    data = {"repo": "acme", "error_signatures": [tb()], "resolution_summary": "pip install redis"}
    data.update(kw)
    learning = Learning(**data)
    open_store().add(learning)
    return learning


def run(req: dict) -> dict:
    return asyncio.run(execute(req)).to_wire()


def test_same_error_from_another_checkout_is_found_first_with_similarity_one() -> None:
    target = learn()
    learn(error_signatures=[tb().replace("redis", "celery")], resolution_summary="pip install celery")
    res = run({"error_text": tb("/tmp/ci-81/build/acme", 97), "repo": "acme"})
    assert res["query_ms"] >= 0
    assert [m["learning_id"] for m in res["matches"]] == [str(target.id)]
    top = res["matches"][0]
    assert top["similarity"] == 1.0 and top["match_type"] == "error_signature"
    assert top["resolution_summary"] == "pip install redis"
    assert top["freshness_score"] == pytest.approx(1.0, abs=1e-3)
    assert top["combined_score"] == pytest.approx(1.0 * 1.0 * (0.5 + 0.5 * 0.8), abs=1e-3)
    assert top["score"] == top["combined_score"]
    assert res["error_matches_count"] == 1


def test_near_miss_is_not_a_match_at_the_default_threshold() -> None:
    learn()
    res = run({"error_text": tb().replace("redis", "celery"), "repo": "acme"})
    assert res["matches"] == []
    # the candidate is still scored below the threshold, and `why` names the value that differs
    res = run({"error_text": tb().replace("redis", "celery"), "repo": "acme", "min_similarity_error": 0.0})
    assert len(res["matches"]) == 1 and res["matches"][0]["similarity"] < 0.85
    assert "celery" in res["matches"][0]["why"]["differs"] and "redis" in res["matches"][0]["why"]["differs"]


GIT_PASSWORD = (
    "remote: Support for password authentication was removed on August 13, 2021.\n"
    "remote: Please see https://docs.github.com/en/get-started/getting-started-with-git/about-remote-"
    "repositories#cloning-with-https-urls for information on currently recommended modes of authentication.\n"
    "fatal: Authentication failed for 'https://github.com/acme/shop.git/'\n"
)
LIBGL = (
    "Traceback (most recent call last):\n"
    '  File "/app/run.py", line 3, in <module>\n'
    "    import cv2\n"
    "ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n"
)


def test_done_means_a_multi_line_learning_answers_a_prefixed_paste_and_its_first_line() -> None:
    """Issue 23: one learning whose error is a multi-line message; the message pasted with a prefix on
    its first line (and another user's repository URL) is answered, and so is its first line alone."""
    target = learn(error_signatures=[GIT_PASSWORD], resolution_summary="use a personal access token")
    prefixed = "Error: " + GIT_PASSWORD.replace("acme/shop", "bob/tools")
    first_line = GIT_PASSWORD.splitlines()[0]
    for text in (prefixed, first_line):
        res = run({"error_text": text, "repo": "acme"})
        assert [m["learning_id"] for m in res["matches"]] == [str(target.id)], text
        assert res["matches"][0]["similarity"] >= 0.85


def test_done_means_a_near_miss_in_the_library_name_is_not_answered_and_why_names_it() -> None:
    """Issue 23: the same message for another missing library is another cause (another package to
    install): not answered at the default threshold, and `why` says which value differs."""
    learn(error_signatures=[LIBGL], resolution_summary="apt-get install -y libgl1")
    near = LIBGL.replace("libGL.so.1", "libgthread-2.0.so.0").replace("/app/run.py", "/srv/bot/main.py")
    assert run({"error_text": near, "repo": "acme"})["matches"] == []
    res = run({"error_text": near, "repo": "acme", "min_similarity_error": 0.0})
    differs = res["matches"][0]["why"]["differs"]
    assert differs.startswith("same message, other library:")
    assert "libgthread" in differs and "libGL" in differs
    # the same library from another checkout is still the same cause
    same = LIBGL.replace("/app/run.py", "/srv/bot/main.py")
    assert len(run({"error_text": same, "repo": "acme"})["matches"]) == 1


def test_similarity_is_the_models_probability_mapped_onto_the_protocol_threshold() -> None:
    """The wire's min_similarity_error keeps its meaning: at the default 0.85 a match is shown exactly
    when the acceptance model's probability reaches its tuned threshold; the map is monotonic in 0-1."""
    from recall_agent.learnings import acceptance

    t = acceptance.model()["threshold"]
    assert acceptance.similarity(t) == pytest.approx(0.85, abs=1e-6)
    ps = [i / 100 for i in range(101)]
    sims = [acceptance.similarity(p) for p in ps]
    assert sims == sorted(sims) and sims[0] == 0.0 and sims[-1] == pytest.approx(1.0)


def test_similar_but_not_identical_error_scores_between() -> None:
    learn(
        error_signatures=["error: could not find `Cargo.toml` in `/w` or any parent directory"],
        resolution_summary="cd into the crate",
    )
    res = run(
        {
            "error_text": "error: could not find `Cargo.toml` in `/x/y` or any parent dir (cargo build)",
            "repo": "acme",
            "min_similarity_error": 0.5,
        }
    )
    sim = res["matches"][0]["similarity"]
    assert 0.5 <= sim < 1.0


def test_freshness_and_age() -> None:
    learn(created_at=datetime.now(UTC) - timedelta(days=28))
    m = run({"error_text": tb(), "repo": "acme"})["matches"][0]
    assert m["age_days"] == 28
    assert m["freshness_score"] == pytest.approx(0.657, abs=0.002)
    assert m["combined_score"] == pytest.approx(0.657 * 0.9, abs=0.003)


def test_repo_scoping() -> None:
    other = learn(repo="billing")
    # clearly the same error (exact fingerprint, specific cause): found from another repo, ranked lower
    res = run({"error_text": tb("/x"), "repo": "acme"})
    assert [m["learning_id"] for m in res["matches"]] == [str(other.id)]
    assert res["matches"][0]["combined_score"] == pytest.approx(0.9 * 0.9, abs=1e-3)
    mine = learn(resolution_summary="add redis to requirements.txt")
    res = run({"error_text": tb("/x"), "repo": "acme"})
    assert [m["learning_id"] for m in res["matches"]] == [str(mine.id), str(other.id)]
    # a merely similar error from another repo is not offered
    generic = 'Traceback (most recent call last):\n  File "/a/p.py", line 3, in f\nIndexError: list index out of range'
    learn(repo="billing", error_signatures=[generic], resolution_summary="guard the index")
    res = run({"error_text": generic.replace("/a/", "/b/"), "repo": "acme", "min_similarity_error": 0.5})
    assert all(m["repo"] == "acme" for m in res["matches"])


def test_task_context_and_auto() -> None:
    a = learn(file_paths_touched=["src/acme/worker.py"], task_type="dependency")
    b = learn(
        error_signatures=["fatal: refusing to merge unrelated histories"],
        resolution_summary="allow it",
        file_paths_touched=["docs/index.md"],
        task_type="docs",
    )
    res = run(
        {"match_type": "task_context", "repo": "acme", "file_paths": ["other/checkout/src/acme/worker.py"]}
    )
    assert [m["learning_id"] for m in res["matches"]] == [str(a.id)]
    assert res["matches"][0]["match_type"] == "task_context"
    assert res["context_matches_count"] == 1 and res["error_matches_count"] == 0
    # same basename elsewhere is weaker evidence: below the default 0.70, found with a lower threshold
    assert (
        run({"match_type": "task_context", "repo": "acme", "file_paths": ["lib/worker.py"]})["matches"] == []
    )
    res = run(
        {
            "match_type": "task_context",
            "repo": "acme",
            "file_paths": ["lib/worker.py"],
            "min_similarity_context": 0.5,
        }
    )
    assert res["matches"][0]["similarity"] == pytest.approx(0.85 * 0.7, abs=1e-3)
    res = run({"match_type": "task_context", "repo": "elsewhere", "file_paths": ["src/acme/worker.py"]})
    assert res["matches"] == []
    res = run(
        {
            "match_type": "auto",
            "repo": "acme",
            "error_text": "fatal: refusing to merge unrelated histories",
            "file_paths": ["src/acme/worker.py"],
            "task_type": "dependency",
        }
    )
    assert {m["learning_id"] for m in res["matches"]} == {str(a.id), str(b.id)}
    assert res["error_matches_count"] == 1 and res["context_matches_count"] == 1
    scores = [m["combined_score"] for m in res["matches"]]
    assert scores == sorted(scores, reverse=True)


def test_thresholds_and_max_results_come_from_the_request() -> None:
    for i in range(4):  # one learning per cause per repository: the same error in four repositories
        learn(resolution_summary=f"fix {i}", repo=f"acme-{i}")
    assert len(run({"error_text": tb(), "repo": "acme", "max_results": 2})["matches"]) == 2
    assert len(run({"error_text": tb(), "repo": "acme"})["matches"]) == 4


def test_retrieval_records_access() -> None:
    target = learn()
    run({"error_text": tb(), "repo": "acme"})
    run({"error_text": tb(), "repo": "acme"})
    got = open_store().get(target.id)
    assert got.access_count == 2 and got.last_accessed_at is not None


def test_bad_requests_raise_validation_errors() -> None:
    for bad in (
        {"repo": "acme", "error_text": "x" * 4001},
        {"repo": ""},
        {"repo": "acme", "unknown": 1},
        {"repo": "acme", "max_results": 0},
        {"repo": "acme", "min_similarity_error": 1.5},
        {"repo": "acme", "match_type": "fuzzy"},
    ):
        with pytest.raises(ValidationError):
            run(bad)


def test_empty_store_answers_without_creating_files(isolated_recall_env: Path) -> None:
    res = run({"error_text": tb(), "repo": "acme"})
    assert res["matches"] == [] and res["query_ms"] >= 0
    assert not (isolated_recall_env / "learnings.db").exists()


def test_broken_store_raises_a_clear_error(isolated_recall_env: Path) -> None:
    learn()
    with sqlite3.connect(isolated_recall_env / "learnings.db") as raw:
        raw.execute("PRAGMA user_version = 42")
    with pytest.raises(StoreError, match="newer than this recall supports"):
        run({"error_text": tb(), "repo": "acme"})


def test_request_model_instance_is_accepted() -> None:
    target = learn()
    res = asyncio.run(execute(LearningRetrievalRequest(error_text=tb("/y"), repo="acme")))
    assert res.matches[0].learning_id == target.id


def test_dense_is_not_loaded_on_the_default_path_and_blends_when_enabled() -> None:
    learn()
    code = (
        "import asyncio, json, sys\n"
        "from recall_agent.learnings import execute\n"
        f"r = asyncio.run(execute({{'error_text': {tb('/q')!r}, 'repo': 'acme'}}))\n"
        "print(json.dumps([len(r.matches), 'numpy' in sys.modules, 'recall_agent.embeddings' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [1, False, False]
    # with dense evidence on, an undecided lexical score gets blended with the cosine
    store = open_store()
    q = "error: could not find `Cargo.toml` in `/x/y` or any parent dir (cargo build)"
    store.add(
        Learning(
            repo="acme",
            error_signatures=["error: could not find `Cargo.toml` in `/w` or any parent directory"],
            resolution_summary="cd into the crate",
        )
    )
    req = LearningRetrievalRequest(error_text=q, repo="acme", min_similarity_error=0.1)
    dense = retrieval.DenseScorer()
    res = retrieval.retrieve(store, req, dense_weight=0.5, dense=dense)
    assert dense.calls == 1 and res.dense_used
    lexical_only = retrieval.retrieve(store, req, dense_weight=0.0)
    assert res.matches[0].similarity != lexical_only.matches[0].similarity


def test_importing_the_package_is_stdlib_only() -> None:
    code = "import json, sys, recall_agent.learnings; print(json.dumps([m in sys.modules for m in ('pydantic', 'numpy')]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [False, False]


def test_lowered_confidence_sinks_a_learning_without_hiding_it() -> None:
    good = learn(resolution_summary="pip install redis")
    bad = learn(resolution_summary="reinstall python", repo="acme-2")  # one learning per cause per repo
    open_store().adjust_confidence(bad.id, -0.7)  # feedback: that fix did not work
    res = run({"error_text": tb("/other"), "repo": "acme-2"})
    assert [m["learning_id"] for m in res["matches"]] == [str(good.id), str(bad.id)]
    assert res["matches"][1]["similarity"] == 1.0  # still the same error: shown, ranked lower
    assert res["matches"][1]["confidence"] == pytest.approx(0.1)


def test_task_type_candidates_also_bring_path_matches_past_the_cut(tmp_path: Path) -> None:
    """The store returns at most CONTEXT_CANDIDATES path matches; the task-type query brings more of them.
    So skipping the task-type candidates whenever a task-type-only match cannot reach the threshold (it
    scores at most 0.49 next to query paths) changes answers once many learnings share a file name: this
    generated store shows it, which is why retrieval always asks for both."""
    import random

    from recall_agent.learnings import RetrievalRequest, answer

    rng = random.Random(13)
    dirs, names = ["src/api", "src/db", "lib", "tests"], ["main.py", "models.py", "util.py", "views.py"]
    tasks = ["bug_fix", "feature", "refactor"]

    def path() -> str:
        return f"{rng.choice(dirs)}/{rng.choice(names)}"

    with open_store(tmp_path) as store:
        store.add_many(
            [
                Learning(
                    repo="shop",
                    file_paths_touched=[path() for _ in range(rng.randint(0, 2))],
                    task_type=rng.choice(tasks),
                    resolution_summary=f"fix {n}",
                )
                for n in range(300)
            ]
        )
        queries = [
            RetrievalRequest(
                repo="shop",
                file_paths=[
                    f"{rng.choice(dirs)}/other_{n}.py" if n % 3 else path() for _ in range(rng.randint(0, 2))
                ],
                task_type=rng.choice(tasks),
                min_similarity_context=rng.choice([0.3, 0.45, 0.49, 0.5, 0.55, 0.7]),
                max_results=20,
            )
            for n in range(150)
        ]

        def answers() -> list[list[tuple[str, float]]]:
            return [
                [(str(m.learning_id), m.similarity) for m in answer(store, q, record_access=False).matches]
                for q in queries
            ]

        inner = store.candidates_by_context
        asked: list[str | None] = []

        def spy(repo, paths, task, limit):  # type: ignore[no-untyped-def]
            asked.append(task)
            return inner(repo, paths, task, limit)

        store.candidates_by_context = spy  # type: ignore[method-assign]
        both = answers()
        assert None not in asked  # retrieval asks for the task type's learnings every time
        assert sum(bool(a) for a in both) > 50  # the queries do find learnings
        store.candidates_by_context = lambda repo, paths, task, limit: inner(  # type: ignore[method-assign]
            repo, paths, task if not paths else None, limit
        )
        assert answers() != both  # path matches only: some answers lose a learning
