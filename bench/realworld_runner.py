"""Rank queries against a fresh store with the package the caller names (RECALL_BENCH_PACKAGE).

bench_learnings.py runs this file twice per corpus: once with the checkout on PYTHONPATH and once with
the release's source tree (`git archive` of the base commit), so both are measured in one run on the same
data. Input (stdin, JSON): {"learnings": [{"key", "repo", "text", "resolution"}], "queries": [{"text",
"repo"}]}. Output (stdout, JSON): per query the keys returned at the request's default threshold, and
every scored (key, similarity) at threshold 0.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    # the package the caller names: this checkout's `recall_agent`, or a release's `recall` (before the rename)
    package = os.environ.get("RECALL_BENCH_PACKAGE", "recall_agent")
    retrieval = importlib.import_module(f"{package}.learnings.retrieval")
    open_store = importlib.import_module(f"{package}.learnings.store").open_store
    models = importlib.import_module(f"{package}.models")
    ERROR_TEXT_MAX, Learning, LearningRetrievalRequest = (  # noqa: N806
        models.ERROR_TEXT_MAX,
        models.Learning,
        models.LearningRetrievalRequest,
    )

    job = json.load(sys.stdin)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp))
        key_of = {}
        for lr in job["learnings"]:
            text = lr["text"][-ERROR_TEXT_MAX:] if len(lr["text"]) > ERROR_TEXT_MAX else lr["text"]
            lid, _ = store.add(
                Learning(repo=lr["repo"], error_signatures=[text], resolution_summary=lr["resolution"])
            )
            key_of[str(lid)] = lr["key"]
        times = []
        for q in job["queries"]:
            text = q["text"][:ERROR_TEXT_MAX]  # the release's wire limit: what a client could send it
            t0 = time.perf_counter()
            res = retrieval.retrieve(
                store,
                LearningRetrievalRequest(match_type="error_signature", error_text=text, repo=q["repo"]),
                record_access=False,
            )
            times.append((time.perf_counter() - t0) * 1000)
            wide = retrieval.retrieve(
                store,
                LearningRetrievalRequest(
                    match_type="error_signature",
                    error_text=text,
                    repo=q.get("wide_repo", q["repo"]),  # cross-repo: where did it rank among its repo's?
                    min_similarity_error=0.0,
                    max_results=20,
                ),
                record_access=False,
            )
            out.append(
                {
                    "ranked": [key_of[str(m.learning_id)] for m in res.matches],
                    "why": [getattr(m, "why", None) for m in res.matches][:1],
                    "all": [[key_of[str(m.learning_id)], m.similarity] for m in wide.matches],
                }
            )
        store.close()
    json.dump({"results": out, "ms": times}, sys.stdout, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
