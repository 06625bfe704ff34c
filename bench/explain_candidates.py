"""EXPLAIN (ANALYZE, BUFFERS) of the PostgreSQL candidate queries (issue 39) on a filled store: what one
request reads. Run against the database bench_server.py keeps with `--database`:

    source .ci/services
    python bench/bench_server.py --pg --size 1000000 --database recall_i39_1m ...   # fills and keeps it
    python bench/explain_candidates.py recall_i39_1m --size 1000000                   # bench/results/explain-*.txt

For one query of each kind of bench_server.py's mix (a stored error again, a new error of a known shape, task
context) it prints the plan of each SQL statement pg_store.py runs for it, with the buffers read: the key and
path-key queries should be index-only scans reading a handful of pages whatever the store's size.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import psycopg  # noqa: E402
from bench_server import make_learnings, make_queries  # noqa: E402

from recall_agent.learnings import keys as ckeys  # noqa: E402
from recall_agent.learnings import pg_store  # noqa: E402
from recall_agent.learnings.features import Query  # noqa: E402
from recall_agent.learnings.records import path_basename  # noqa: E402


def statements(q: dict) -> list[tuple[str, str, tuple]]:
    """(label, SQL, parameters) of what pg_store runs for the request `q`."""
    out: list[tuple[str, str, tuple]] = []
    if q.get("error_text"):
        query = Query.from_text(q["error_text"])
        keys = ckeys.keys_of(query.normalized)
        out.append(
            (
                "fingerprint",
                "SELECT learning_id FROM signatures WHERE fingerprint = ANY(%s) GROUP BY learning_id LIMIT %s",
                ([query.fingerprint], 20),
            )
        )
        for kind, group in (
            ("line + slot keys", [k.value for k in keys if k.kind != "template"]),
            ("template keys", [k.value for k in keys if k.kind == "template"]),
        ):
            if group:
                out.append(
                    (
                        kind,
                        "SELECT k.learning_id FROM unnest(%s::bigint[]) WITH ORDINALITY AS u (key, n) CROSS JOIN"
                        " LATERAL (SELECT learning_id FROM learning_keys WHERE key = u.key LIMIT %s) AS k"
                        " ORDER BY u.n",
                        (group, pg_store.KEY_READS),
                    )
                )
        out.append(
            (
                "term document counts",
                "SELECT term, df FROM signature_terms WHERE term = ANY(%s)",
                ([t.lower() for t in query.terms()],),
            )
        )
    if q.get("file_paths"):
        paths = q["file_paths"]
        bases = [path_basename(p) for p in paths]
        out.append(
            (
                "path keys",
                "SELECT k.learning_id FROM unnest(%s::bigint[]) AS u (key) CROSS JOIN LATERAL (SELECT learning_id,"
                " created_at FROM learning_path_keys WHERE repo_key = %s AND key = u.key ORDER BY created_at DESC"
                " LIMIT %s) AS k ORDER BY k.created_at DESC, k.learning_id",
                (ckeys.path_keys(paths, bases), ckeys.repo_key(q["repo"]), 50),
            )
        )
    if q.get("task_type"):
        out.append(
            (
                "task type",
                "SELECT id FROM learnings WHERE repo = %s AND task_type = %s ORDER BY created_at DESC LIMIT %s",
                (q["repo"], q["task_type"], 50),
            )
        )
    return out


def full_text(conn: psycopg.Connection, q: dict) -> list[tuple[str, str, tuple]]:
    """The bounded full-text query pg_store runs (core._rarest: the 4 rarest terms in <= FT_MAX_DF
    signatures, all of them first), when any term qualifies."""
    if not q.get("error_text"):
        return []
    terms = [t.lower() for t in Query.from_text(q["error_text"]).terms()]
    docs = dict(
        conn.execute("SELECT term, df FROM signature_terms WHERE term = ANY(%s)", (terms,)).fetchall()
    )
    rare = sorted((t for t in terms if 0 < docs.get(t, 0) <= pg_store.FT_MAX_DF), key=lambda t: (docs[t], t))[
        :4
    ]
    if not rare:
        return [(f"full text: no term in <= {pg_store.FT_MAX_DF} signatures, not asked", "SELECT 1", ())]
    tsquery = " & ".join(f"'{t}'" for t in rare)
    return [
        (
            f"full text on {rare} (document counts {[docs[t] for t in rare]})",
            "SELECT learning_id FROM signatures WHERE tsv @@ %s::tsquery ORDER BY ts_rank(tsv, %s::tsquery) DESC,"
            " id LIMIT %s",
            (tsquery, tsquery, 80),
        )
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("database", help="the database name on RECALL_TEST_DATABASE_URL's server")
    ap.add_argument("--size", type=int, default=1_000_000, help="the store's size (to rebuild its queries)")
    ap.add_argument(
        "--from-store",
        action="store_true",
        help="take the stored error from the database instead of regenerating the store's queries (a million"
        " learnings take minutes to regenerate)",
    )
    ap.add_argument("--out", type=Path, help="text written (default bench/results/explain-<size>.txt)")
    args = ap.parse_args()
    admin = os.environ.get("RECALL_BENCH_DATABASE_URL") or os.environ.get("RECALL_TEST_DATABASE_URL", "")
    if not admin:
        print("set RECALL_TEST_DATABASE_URL (source .ci/services)", file=sys.stderr)
        return 2
    url = urlunsplit(urlsplit(admin)._replace(path="/" + args.database))
    if (
        args.from_store
    ):  # a stored error of bench-repo as it was recorded; a new error and a context made here
        with psycopg.connect(url) as conn:
            text = conn.execute(
                "SELECT s.text FROM signatures s JOIN learnings l ON l.id = s.learning_id"
                " WHERE l.repo = 'bench-repo' ORDER BY l.created_at DESC LIMIT 1"
            ).fetchone()[0]
        picked = {
            "stored error again": {"error_text": text, "repo": "bench-repo"},
            "new error": {"error_text": "KeyError: 'qwertyx_zzkey'", "repo": "bench-repo"},
            "task context": {
                "repo": "bench-repo",
                "file_paths": ["src/pkg/mod_460.py"],
                "task_type": "bug_fix",
            },
        }
    else:
        queries = make_queries(make_learnings(args.size), 20_000)
        picked = {
            "stored error again": queries[10_000],
            "new error": queries[10_005],
            "task context": queries[10_008],
        }
    lines = [f"{args.size:,} learnings, database {args.database}; load average {os.getloadavg()[0]:.2f}", ""]
    with psycopg.connect(url, autocommit=True) as conn:
        for kind, q in picked.items():
            lines.append(f"## {kind}: {q.get('error_text') or q.get('file_paths')} ({q['repo']})")
            for label, sql, params in statements(q) + full_text(conn, q):
                plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()
                lines += [f"-- {label}", *(r[0] for r in plan), ""]
    text = "\n".join(lines) + "\n"
    out = args.out or ROOT / "bench" / "results" / f"explain-{args.size}.txt"
    out.write_text(text)
    print(text)
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
