"""The learnings corpora against PostgreSQL: does candidate generation by keys (issue 39) lose answers?

Every corpus of bench/corpora.py (synthetic, realworld, public), both halves (tuning and held-out, each
reported), recorded in three stores: SQLite (the reference), PostgreSQL with candidate keys and the bounded
full-text path (pg_store's default), and PostgreSQL without them (`candidate_keys=False`: the full-text
ranking over every hit, as before). Each query is ranked at the request's default threshold; the table gives
R@1, the false-match rate (a learning offered for a query whose cause is not stored) and the share of
answers identical to SQLite's (same learnings, order and similarities).

    source .ci/services && python bench/bench_learnings_pg.py   # ~1 min; bench/results/learnings-pg.json
    # at scale: bench_server.py's own queries on the store it kept (--database), with and without keys
    python bench/bench_learnings_pg.py --scale-database recall_i39_1m --size 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from corpora import HALVES, all_sets  # noqa: E402

from recall_agent.learnings import retrieval  # noqa: E402
from recall_agent.learnings.store import open_store  # noqa: E402
from recall_agent.models import ERROR_TEXT_MAX, Learning, LearningRetrievalRequest  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "learnings-pg.json"
REPO = "bench"
STORES = ("sqlite", "postgresql keys", "postgresql no keys")


def answers(store: object, job: dict) -> list[list[tuple[str, float]]]:
    key_of = {}
    for lr in job["learnings"]:
        text = lr["text"][-ERROR_TEXT_MAX:]
        lid, _ = store.add(Learning(repo=REPO, error_signatures=[text], resolution_summary=lr["resolution"]))  # type: ignore[attr-defined]
        key_of[str(lid)] = lr["key"]
    out = []
    for q in job["queries"]:
        req = LearningRetrievalRequest(
            match_type="error_signature", error_text=q["text"][:ERROR_TEXT_MAX], repo=REPO
        )
        matches = retrieval.retrieve(store, req, record_access=False).matches  # type: ignore[arg-type]
        out.append([(key_of[str(m.learning_id)], m.similarity) for m in matches])
    return out


def metrics(job: dict, got: list[list[tuple[str, float]]]) -> dict:
    truth = [q["truth"] for q in job["queries"]]
    pos = [(g, t) for g, t in zip(got, truth, strict=True) if t is not None]
    neg = [g for g, t in zip(got, truth, strict=True) if t is None]
    return {
        "R@1": round(sum(1 for g, t in pos if g and g[0][0] == t) / max(1, len(pos)), 4),
        "false_match_rate": round(sum(1 for g in neg if g) / max(1, len(neg)), 4),
        "positives": len(pos),
        "negatives": len(neg),
    }


class Database:
    def __init__(self, admin: str) -> None:
        import psycopg

        self.admin, self.name = admin, "recall_lpg_" + uuid.uuid4().hex[:10]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        self.url = urlunsplit(urlsplit(admin)._replace(path="/" + self.name))

    def __enter__(self) -> str:
        return self.url

    def __exit__(self, *exc: object) -> None:
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def run_set(job: dict, admin: str) -> dict:
    from recall_agent.learnings.pg_store import PgStore

    got: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp)) as lite:
        got["sqlite"] = answers(lite, job)
    for label, keyed in (("postgresql keys", True), ("postgresql no keys", False)):
        with Database(admin) as url, PgStore(url, candidate_keys=keyed) as pg:
            got[label] = answers(pg, job)
    out = {label: metrics(job, g) for label, g in got.items()}
    for label in STORES[1:]:
        same = sum(a == b for a, b in zip(got["sqlite"], got[label], strict=True))
        out[label]["identical_to_sqlite"] = round(same / max(1, len(job["queries"])), 4)
    return out


def at_scale(admin: str, database: str, size: int, count: int) -> dict:
    """bench_server.py's queries on its kept store of `size` learnings: the answers with candidate keys
    against those without (the unbounded full-text ranking), per query kind."""
    from bench_server import make_learnings, make_queries

    from recall_agent.learnings import request_of
    from recall_agent.learnings.pg_store import PgStore

    url = urlunsplit(urlsplit(admin)._replace(path="/" + database))
    queries = make_queries(make_learnings(size), 20_000)[10_000 : 10_000 + count]
    kinds = ("stored error again", "new error", "task context")
    got: dict[bool, list] = {}
    seconds: dict[bool, float] = {}
    for keyed in (True, False):
        with PgStore(url, candidate_keys=keyed) as store:
            started = time.perf_counter()
            got[keyed] = [
                [
                    (str(m.learning_id), m.similarity)
                    for m in retrieval.retrieve(store, request_of(q), record_access=False).matches
                ]
                for q in queries
            ]
            seconds[keyed] = time.perf_counter() - started
    out: dict = {"database": database, "size": size, "queries": count}
    for k, kind in enumerate(kinds):
        idx = [i for i in range(count) if (i % 10 < 5, 5 <= i % 10 < 8, i % 10 >= 8)[k]]
        out[kind] = {
            "queries": len(idx),
            "identical": round(sum(got[True][i] == got[False][i] for i in idx) / max(1, len(idx)), 4),
            "same_first": round(
                sum(got[True][i][:1] == got[False][i][:1] for i in idx) / max(1, len(idx)), 4
            ),
            "answered_with_keys": round(sum(bool(got[True][i]) for i in idx) / max(1, len(idx)), 4),
            "answered_without": round(sum(bool(got[False][i]) for i in idx) / max(1, len(idx)), 4),
        }
    out["seconds_with_keys"] = round(seconds[True], 1)
    out["seconds_without"] = round(seconds[False], 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument(
        "--scale-database",
        help="also compare answers with and without keys on bench_server.py's kept store of this name",
    )
    ap.add_argument("--size", type=int, default=1_000_000, help="that store's size (default 1000000)")
    ap.add_argument("--scale-queries", type=int, default=500, help="queries asked of it (default 500)")
    args = ap.parse_args()
    admin = os.environ.get("RECALL_BENCH_DATABASE_URL") or os.environ.get("RECALL_TEST_DATABASE_URL")
    if not admin:
        print("set RECALL_TEST_DATABASE_URL (source .ci/services)", file=sys.stderr)
        return 2
    if args.scale_database:
        scale = at_scale(admin, args.scale_database, args.size, args.scale_queries)
        print(json.dumps(scale, indent=2))
        out = args.results.with_name(f"learnings-pg-scale-{args.size}.json")
        out.write_text(
            json.dumps({**scale, "loadavg": [round(x, 2) for x in os.getloadavg()]}, indent=2) + "\n"
        )
        print(f"saved {out}")
        return 0
    started = time.time()
    results: dict = {"loadavg_before": [round(x, 2) for x in os.getloadavg()], "sets": {}}
    print(f"{'corpus':<11} {'half':<8} {'store':<19} {'R@1':>6} {'false match':>11} {'= sqlite':>8}")
    for half in HALVES:
        for job in all_sets(half):
            name = f"{job['name']}/{half}"
            results["sets"][name] = row = run_set(job, admin)
            for label in STORES:
                m = row[label]
                same = m.get("identical_to_sqlite", "")
                print(
                    f"{job['name']:<11} {half:<8} {label:<19} {m['R@1']:>6} {m['false_match_rate']:>11} {same:>8}"
                )
    results["seconds"] = round(time.time() - started, 1)
    results["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(results, indent=2) + "\n")
    print(
        f"saved {args.results}; load average {results['loadavg_before'][0]} -> {results['loadavg_after'][0]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
