"""Memory a team can trust (issue 26): a year of simulated use, the self-check's cost on the hook path, the
review page's list at 100k learnings, and what `PRAGMA quick_check` costs at 10k and 100k.

1. A year of use (`--days`, default 365), simulated with the real store, retrieval, self-check and the
   hook's own selection (`hooks.retrieve.select`) against a real checkout whose files change. Causes recur
   at heavy-tailed rates; each starts with a learning that keeps helping (good), a dead-end guess (wrong),
   or a good one whose cited function is renamed on some day of the year (it turns stale). An injected
   learning that really fits helps with p=0.85 (the next run passes), otherwise with p=0.1; every outcome is
   counted in the store (shown/helped/hurt) as the hooks do. A failure nothing helped with is fixed by the
   agent, and the capture stores that fix with p=0.6 (evidence against the current file). Modes: `before`
   (the hook before issue 26: threshold only), then each rule added: self-check (no stale), + hurting,
   + dormant (28 days). Two seeds, decided before any run: 26 ("tuning") and 2026 ("held-out"); no rule
   constant was tuned on either.
2. The self-check's cost: `selfcheck.annotate` over the hook's five matches, each citing three files of a
   real checkout (this repository's own sources): what the failure hook adds. And the count the Stop hook
   now writes (open the store, one UPDATE) at 10k learnings; p50/p95 over `--repeat` runs.
3. The review page's list (`ui.views.list_page`, what the route runs in its worker thread) at `--size`
   learnings (default 100k) on SQLite and PostgreSQL: default list, search, never-used, hurting, page 40.
4. `PRAGMA quick_check` (integrity.problems) and the stamp comparison that skips it, at 10k and `--size`.

    python bench/bench_trust.py                         # everything (the 100k stores take a few minutes)
    python bench/bench_trust.py --only year --days 120  # just the simulation, shorter
PostgreSQL: RECALL_BENCH_DATABASE_URL or RECALL_TEST_DATABASE_URL (a database is created and dropped there).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_agent import selfcheck  # noqa: E402
from recall_agent.models import FixEvidence, Learning  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "trust.json"
SEEDS = {"tuning": 26, "held-out": 2026}
P_HELP_FITS, P_HELP_NOT = 0.85, 0.10
P_CAPTURE = 0.6
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


# --------------------------------------------------------------------------- 1. a year of use


@dataclass
class Cause:
    n: int
    rate: float  # failures a day
    module: int
    func: str
    kind: str  # good | wrong | stale-prone
    stale_day: int | None = None

    def error(self, rng: random.Random) -> str:
        return (
            f'Traceback (most recent call last):\n  File "src/mod_{self.module}.py", line {rng.randrange(5, 90)},'
            f" in {self.func}\nKeyError: 'setting_{self.n}_{self.func}'"
        )


@dataclass
class World:
    root: Path
    causes: list[Cause]
    # learning id -> (cause, the function its evidence cites, a dead-end guess?)
    truth: dict[str, tuple[Cause, str, bool]] = field(default_factory=dict)
    renamed: dict[int, int] = field(default_factory=dict)  # module -> times renamed


def make_checkout(root: Path, modules: int) -> None:
    (root / "src").mkdir(parents=True)
    for m in range(modules):
        (root / "src" / f"mod_{m}.py").write_text(_module(m, 0))


def _module(m: int, version: int) -> str:
    funcs = [f"load_{m}_{k}" if version == 0 else f"read_{m}_{k}_v{version}" for k in range(3)]
    return "".join(f"def {f}(cfg):\n    value = cfg['key']\n    return value\n\n\n" for f in funcs)


def make_world(seed: int, root: Path, causes: int = 120, modules: int = 60, days: int = 365) -> World:
    rng = random.Random(seed)
    make_checkout(root, modules)
    out = []
    for n in range(causes):
        rate = min(3.0, 0.02 * rng.paretovariate(1.2))  # most causes rare, a few every day
        kind = rng.choices(["good", "wrong", "stale-prone"], [0.7, 0.15, 0.15])[0]
        module = rng.randrange(modules)
        cause = Cause(n, rate, module, f"load_{module}_{rng.randrange(3)}", kind)
        if kind == "stale-prone":
            cause.stale_day = rng.randrange(20, days - 20)
        out.append(cause)
    return World(root, out)


def _learning(cause: Cause, func: str, created: datetime, rng: random.Random, resolution: str) -> Learning:
    return Learning(
        repo=REPO,
        error_signatures=[cause.error(rng)],
        resolution_summary=resolution,
        file_paths_touched=[f"src/mod_{cause.module}.py"],
        created_at=created,
        confidence=0.7,
        fix=FixEvidence(
            source="transcript",
            files=[
                {
                    "path": f"src/mod_{cause.module}.py",
                    "symbols": [func],
                    "change": "`value = cfg['key']` → `value = cfg.get('key')`",
                }
            ],  # fmt: skip
        ),
    )


REPO = "billing"


def simulate(seed: int, mode: str, days: int) -> dict[str, Any]:
    """One year in one mode: every injection judged against the truth of that moment."""
    from recall_agent.hooks import retrieve as hook
    from recall_agent.learnings.retrieval import retrieve
    from recall_agent.learnings.store import open_store
    from recall_agent.learnings.wire import RetrievalRequest

    rng = random.Random(seed)  # the world and the failures: the same in every mode
    luck = random.Random(seed + 1)  # outcomes and captures
    work = Path(tempfile.mkdtemp(prefix="recall-year-"))
    world = make_world(seed, work / REPO, days=days)
    counts = {"failures": 0, "injections": 0, "bad": 0, "stale": 0, "wrong": 0, "helped": 0,
              "failures_helped": 0, "withheld_fitting": 0}  # fmt: skip
    try:
        with open_store(path=work / "learnings.db") as store:
            for cause in world.causes:  # each cause was learned some time before the year began
                created = T0 - timedelta(days=rng.randrange(0, 30))
                resolution = (
                    f"{'Guess: reinstall' if cause.kind == 'wrong' else 'Use cfg.get'} for cause {cause.n}"
                )
                learning = _learning(cause, cause.func, created, rng, resolution)
                store.add(learning)
                world.truth[str(learning.id)] = (cause, cause.func, cause.kind == "wrong")
            for day in range(days):
                now = T0 + timedelta(days=day, hours=12)
                _churn(world, day)
                for cause in world.causes:
                    for _ in range(_poisson(rng, cause.rate)):
                        counts["failures"] += 1
                        error = cause.error(rng)
                        _one_failure(
                            store,
                            world,
                            cause,
                            error,
                            now,
                            luck,
                            mode,
                            counts,
                            hook,
                            retrieve,
                            RetrievalRequest,
                        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    inj = max(1, counts["injections"])
    return counts | {
        "bad_share": round(counts["bad"] / inj, 4),
        "stale_share": round(counts["stale"] / inj, 4),
        "hurting_share": round(counts["wrong"] / inj, 4),
        "failures_helped_share": round(counts["failures_helped"] / max(1, counts["failures"]), 4),
    }


def _churn(world: World, day: int) -> None:
    """A stale-prone cause's module is rewritten on its day: its functions get new names."""
    for cause in world.causes:
        if cause.stale_day == day:
            version = world.renamed.get(cause.module, 0) + 1
            world.renamed[cause.module] = version
            (world.root / "src" / f"mod_{cause.module}.py").write_text(_module(cause.module, version))


def _fits(world: World, lid: str) -> tuple[bool, str]:
    """Does this learning's fix fit the code as it is now? (False, why) otherwise."""
    cause, func, wrong = world.truth[lid]
    text = (world.root / "src" / f"mod_{cause.module}.py").read_text()
    if not selfcheck.has_word(text, func):
        return False, "stale"
    if wrong:
        return False, "wrong"
    return True, ""


def _one_failure(
    store, world, cause, error, now, rng, mode, counts, hook, retrieve, RetrievalRequest
) -> None:
    request = RetrievalRequest(repo=REPO, match_type="error_signature", error_text=error,
                               max_results=5, min_similarity_error=hook.min_similarity())  # fmt: skip
    matches = [m.to_wire() for m in retrieve(store, request, now=now, record_access=False).matches]
    if mode == "before":
        picked = _select_before(matches)
    else:
        annotated = selfcheck.annotate(matches, world.root, REPO)
        for m in annotated:  # switch off the rules this mode does not have yet
            if mode == "self-check" or mode == "+hurting" and m["state"] == "dormant":
                m["state"] = "active"
        picked = hook.select(annotated, set())
        # what a rule kept out (not the two-injection cap) that would have fitted
        ruled_out = [
            m for m in annotated if m["state"] in hook.NOT_INJECTED_STATES or m["check"]["verdict"] == "stale"
        ]
        counts["withheld_fitting"] += sum(_fits(world, str(m["learning_id"]))[0] for m in ruled_out)
    helped_any = False
    for m in picked:
        lid = str(m["learning_id"])
        fits, why = _fits(world, lid)
        counts["injections"] += 1
        if not fits:
            counts["bad"] += 1
            counts[why] += 1
        helped = rng.random() < (P_HELP_FITS if fits else P_HELP_NOT)
        store.record_outcome([UUID(lid)], "shown", now=now)
        store.record_outcome([UUID(lid)], "helped" if helped else "hurt", now=now)
        counts["helped"] += helped
        helped_any = helped_any or helped
    counts["failures_helped"] += helped_any
    if not helped_any and rng.random() < P_CAPTURE:  # the agent fixed it; the capture stores that fix
        func = _current_func(world, cause)
        learning = _learning(cause, func, now, rng, f"Use cfg.get in {func} (captured {now:%Y-%m-%d})")
        store.add(learning)
        world.truth[str(learning.id)] = (cause, func, False)


def _current_func(world: World, cause: Cause) -> str:
    version = world.renamed.get(cause.module, 0)
    return cause.func if version == 0 else f"read_{cause.module}_{cause.func.rsplit('_', 1)[1]}_v{version}"


def _select_before(matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hook's selection before issue 26: error matches over the threshold, at most two."""
    from recall_agent.hooks import retrieve as hook

    floor = hook.min_similarity()
    picked = [m for m in matches if m.get("match_type") == "error_signature" and m["similarity"] >= floor]
    return picked[: hook.max_inject()]


def _poisson(rng: random.Random, lam: float) -> int:
    threshold, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= threshold:
            return k
        k += 1


# (mode, RECALL_DORMANT_DAYS): each rule added to the one before; the last, the knob turned to 90 days
MODES = [
    ("before", "28"),
    ("self-check", "28"),
    ("+hurting", "28"),
    ("+dormant", "28"),
    ("+dormant 90d", "90"),
]


def year(days: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for half, seed in SEEDS.items():
        out[half] = {}
        for mode, dormant in MODES:
            os.environ["RECALL_DORMANT_DAYS"] = dormant
            t0 = time.perf_counter()
            out[half][mode] = simulate(seed, mode, days) | {"seconds": round(time.perf_counter() - t0, 1)}
            print(f"  year {half} {mode}: {out[half][mode]}", flush=True)
    return out


# --------------------------------------------------------------------------- 2. the hook path's added cost


def hook_cost(repeat: int) -> dict[str, Any]:
    from bench_server import fill_sqlite, make_learnings

    from recall_agent.learnings.store import open_store

    sources = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "recall_agent").rglob("*.py"))
    rng = random.Random(7)
    matches = []
    for i in range(5):
        files = [{"path": p, "symbols": ["main", "check"], "change": "`return x` → `return x or 0`"}
                 for p in rng.sample(sources, 3)]  # fmt: skip
        matches.append({"learning_id": f"00000000-0000-0000-0000-00000000000{i}", "repo": "recall",
                        "fix": {"source": "transcript", "files": files,
                                "packages": [{"name": "pydantic"}] if i == 0 else []}})  # fmt: skip
    check_ms = []
    for _ in range(repeat):
        batch = [dict(m) for m in matches]
        t0 = time.perf_counter()
        selfcheck.annotate(batch, ROOT, "recall")
        check_ms.append((time.perf_counter() - t0) * 1000)
    home = Path(tempfile.mkdtemp(prefix="recall-hookcost-"))
    try:
        data = make_learnings(10_000)
        fill_sqlite(home, data)
        ids = [d[0].id for d in data[:2]]
        count_ms = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            with open_store(home) as store:  # as handlers._count does, per injection
                store.record_outcome(ids, "shown")
            count_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {
        "repeat": repeat,
        "files_read": 15,
        "selfcheck_p50_ms": pct(check_ms, 0.5),
        "selfcheck_p95_ms": pct(check_ms, 0.95),
        # the failure hook adds only the self-check; the counts are written at Stop with the verdicts
        "added_p95_ms": pct(check_ms, 0.95),
        "count_at_stop_p50_ms": pct(count_ms, 0.5),
        "count_at_stop_p95_ms": pct(count_ms, 0.95),
    }


# --------------------------------------------------------------------------- 3 + 4. the page and the check at size


def with_lifecycle(data: list, seed: int = 3) -> list:
    """Counts as a store that has been used has them: most never shown, some helped, a few hurting."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    for item in data:
        learning = item[0]
        learning.created_at = now - timedelta(days=rng.randrange(0, 400), seconds=rng.randrange(86400))
        if rng.random() < 0.3:
            learning.shown_count = rng.randrange(1, 30)
            learning.helped_count = rng.randrange(0, learning.shown_count + 1)
            learning.hurt_count = learning.shown_count - learning.helped_count
            if learning.helped_count:
                learning.last_useful_at = learning.created_at + timedelta(days=rng.randrange(0, 30))
    return data


PAGE_QUERIES = {
    "list": {},
    "search": {"q": "timeout"},
    "never-used": {"status": "never-used"},
    "hurting": {"status": "hurting"},
    "dormant, page 40": {"status": "dormant", "page": "40"},
    "repo + type": {"repo": "bench-repo", "type": "bug_fix"},
}


def time_pages(store: Any, repeat: int) -> dict[str, Any]:
    from recall_agent.server.ui import views

    page = views.Page(who="bench", csrf="x" * 40, can_write=True, via="bearer")
    out = {}
    for name, params in PAGE_QUERIES.items():
        query = views.ListQuery.of(params)
        views.list_page(store, page, query)  # warm: templates compiled, pages in the cache
        ms, fresh = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            html = views.list_page(store, page, query)
            ms.append((time.perf_counter() - t0) * 1000)
            store.__dict__.get("_stats_cache", {}).clear()  # as after a write: the summary is computed again
            t0 = time.perf_counter()
            views.list_page(store, page, query)
            fresh.append((time.perf_counter() - t0) * 1000)
        out[name] = {"p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95), "after_write_p50_ms": pct(fresh, 0.5),
                     "after_write_p95_ms": pct(fresh, 0.95), "bytes": len(html)}  # fmt: skip
    return out


def time_check(db: Path, repeat: int = 5) -> dict[str, Any]:
    import sqlite3

    from recall_agent.learnings import integrity

    ms = []
    for _ in range(repeat):
        conn = sqlite3.connect(db)
        t0 = time.perf_counter()
        assert integrity.problems(conn) is None
        ms.append((time.perf_counter() - t0) * 1000)
        conn.close()
    integrity.note_sound(db)
    stamp_ms = []
    for _ in range(200):
        t0 = time.perf_counter()
        integrity.known_sound(db)
        stamp_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "file_mb": round(db.stat().st_size / 1e6, 1),
        "quick_check_p50_ms": pct(ms, 0.5),
        "quick_check_max_ms": round(max(ms), 1),
        "stamp_check_p50_ms": pct(stamp_ms, 0.5),
    }


def at_size(sizes: list[int], repeat: int) -> dict[str, Any]:
    from bench_server import fill_pg, fill_sqlite, make_learnings

    from recall_agent.learnings.store import open_store

    out: dict[str, Any] = {}
    for size in sizes:
        data = with_lifecycle(make_learnings(size))
        home = Path(tempfile.mkdtemp(prefix=f"recall-trust-{size}-"))
        try:
            fill_s = fill_sqlite(home, data)
            entry: dict[str, Any] = {
                "fill_sqlite_s": round(fill_s, 1),
                "quick_check": time_check(home / "learnings.db"),
            }
            with open_store(home) as store:
                entry["page_sqlite"] = time_pages(store, repeat)
            url = pg_database()
            if url:
                try:
                    entry["fill_postgresql_s"] = round(fill_pg(url, data), 1)
                    from recall_agent.learnings.pg_store import PgStore

                    with PgStore(url) as pg:
                        entry["page_postgresql"] = time_pages(pg, repeat)
                finally:
                    drop_database(url)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        out[str(size)] = entry
        print(f"  size {size}: {json.dumps(entry)}", flush=True)
    return out


_ADMIN = os.environ.get("RECALL_BENCH_DATABASE_URL") or os.environ.get("RECALL_TEST_DATABASE_URL") or ""


def pg_database() -> str | None:
    if not _ADMIN:
        return None
    import psycopg
    from conftest import with_db  # tests/conftest.py's helper

    name = f"recall_bench_trust_{os.getpid()}"
    with psycopg.connect(_ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return with_db(_ADMIN, name)


def drop_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=["year", "hook", "size"], help="run one part")
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=200, help="runs per timing (pages: a tenth)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    report: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() and args.only else {}
    report["load_average_start"] = load()
    if args.only in (None, "year"):
        print("== a year of use", flush=True)
        report["year"] = {"days": args.days, **year(args.days)}
    if args.only in (None, "hook"):
        print("== the hook path's added cost", flush=True)
        report["hook"] = hook_cost(args.repeat)
        print(f"  {report['hook']}", flush=True)
    if args.only in (None, "size"):
        print("== the review list and quick_check at size", flush=True)
        report["size"] = at_size(sorted({10_000, args.size}), max(10, args.repeat // 10))
    report["load_average_end"] = load()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(report)
    return 0


def print_table(report: dict[str, Any]) -> None:
    if "year" in report:
        print(
            "\nyear of use: share of injections that were stale or hurting (bad), stale, hurting; failures a fix helped"
        )
        for half in SEEDS:
            for mode, r in report["year"][half].items():
                print(f"  {half:9} {mode:13} injections {r['injections']:5}  bad {r['bad_share']:.3f}  "
                      f"stale {r['stale_share']:.3f}  hurting {r['hurting_share']:.3f}  "
                      f"helped {r['failures_helped_share']:.3f}  withheld-fitting {r['withheld_fitting']}")  # fmt: skip
    if "hook" in report:
        h = report["hook"]
        print(f"\nhook path: self-check p50 {h['selfcheck_p50_ms']} ms p95 {h['selfcheck_p95_ms']} ms; "
              f"added to the failure hook p95 {h['added_p95_ms']} ms; counts at Stop p95 {h['count_at_stop_p95_ms']} ms")  # fmt: skip
    for size, entry in (report.get("size") or {}).items():
        qc = entry["quick_check"]
        print(
            f"\n{size} learnings: quick_check {qc['quick_check_p50_ms']} ms ({qc['file_mb']} MB), stamp {qc['stamp_check_p50_ms']} ms"
        )
        for store in ("sqlite", "postgresql"):
            for name, t in (entry.get(f"page_{store}") or {}).items():
                print(f"  page {store:10} {name:17} p50 {t['p50_ms']:7} ms  p95 {t['p95_ms']:7} ms   after a write:"
                      f" p50 {t['after_write_p50_ms']:7} ms  p95 {t['after_write_p95_ms']:7} ms")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
