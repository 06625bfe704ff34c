"""Architecture index benchmark on real repositories (PyPI source distributions).

For httpx, click, rich and django: full index time, one-file re-index time, query latency, index size,
and, against grimp's import graph of the same sources, precision and recall of the module import edges
(equivalently: of every module's direct dependents).

    python3 bench/bench_architecture.py            # all four (django takes a few minutes on 2 cores)
    python3 bench/bench_architecture.py httpx click

Sources are fetched once with `pip download --no-binary :all: --no-deps` into bench/.cache/ (gitignored).
Results: printed table + bench/results/architecture.json.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
RESULTS = HERE / "results" / "architecture.json"

# package -> (file changed for the one-file re-index, queries timed once indexed)
TARGETS: dict[str, tuple[str, list[str]]] = {
    "httpx": (
        "httpx/_models.py",
        [
            "blast radius of httpx._models",
            "who calls Client.send",
            "httpx._models.Request",
            "what imports httpx._config",
            "what does httpx._client depend on",
            "circular imports",
        ],
    ),
    "click": (
        "click/core.py",
        [
            "blast radius of click.core",
            "who calls Context.invoke",
            "click.core.Command",
            "what imports click.types",
            "circular imports",
        ],
    ),
    "rich": (
        "rich/console.py",
        [
            "blast radius of rich.console",
            "who calls Console.print",
            "rich.text.Text",
            "what imports rich.style",
            "circular imports",
        ],
    ),
    "django": (
        "django/db/models/base.py",
        [
            "blast radius of django.db.models.base",
            "who calls Model.save",
            "django.db.models.query.QuerySet",
            "what imports django.utils.functional",
            "circular imports",
        ],
    ),
}
QUERY_REPEATS = 5
REINDEX_REPEATS = 5


def fetch(package: str) -> Path:
    """The extracted sdist folder of `package` (downloaded once)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    existing = sorted(p for p in CACHE.glob(f"{package}-*") if p.is_dir())
    if existing:
        return existing[-1]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "-q",
            package,
            "-d",
            str(CACHE),
        ],
        check=True,
    )
    archive = sorted(CACHE.glob(f"{package}-*.tar.gz"))[-1]
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    return sorted(p for p in CACHE.glob(f"{package}-*") if p.is_dir())[-1]


def package_root(src: Path, package: str) -> Path:
    for root in (src / "src", src):
        if (root / package / "__init__.py").exists():
            return root
    raise SystemExit(f"cannot find the {package} package in {src}")


def grimp_edges(src_root: Path, package: str) -> set[tuple[str, str]]:
    """grimp's module import graph of the extracted sources (run apart so the installed copy is not used)."""
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(src_root)!r})\n"
        "import grimp\n"
        f"g = grimp.build_graph({package!r}, cache_dir=None)\n"
        "print(json.dumps([[m, i] for m in g.modules for i in g.find_modules_directly_imported_by(m)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    # a module importing itself (rich.box in its own __main__ block) is not a dependency: left out
    return {(a, b) for a, b in json.loads(out.stdout) if a != b}


def our_edges(conn, package: str) -> set[tuple[str, str]]:
    rows = conn.execute(
        "SELECT f.module, g.module FROM edges e JOIN files f ON f.id = e.src JOIN files g ON g.id = e.dst"
        " WHERE f.lang = 'python' AND g.lang = 'python' AND f.path NOT LIKE '%.pyi' AND g.path NOT LIKE '%.pyi'"
    )

    def inside(m: str) -> bool:
        return m == package or m.startswith(package + ".")

    return {(a, b) for a, b in rows if inside(a) and inside(b) and a != b}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def bench_one(package: str) -> dict:
    from recall_agent.architecture import graph, query
    from recall_agent.architecture.indexer import update

    changed_rel, questions = TARGETS[package]
    src = fetch(package)
    root = package_root(src, package)
    changed = root / changed_rel
    store = graph.store_path(src)
    for suffix in ("", "-wal", "-shm"):
        Path(str(store) + suffix).unlink(missing_ok=True)

    conn = graph.connect(store)
    start = time.perf_counter()
    stats = update(conn, src, progress=False)
    full_s = time.perf_counter() - start

    original = changed.read_bytes()
    reindex = []
    try:
        for i in range(REINDEX_REPEATS):
            changed.write_bytes(original + f"\n\ndef _bench_probe_{i}():\n    return {i}\n".encode())
            reindex.append(timed(lambda: update(conn, src, progress=False)))
    finally:
        changed.write_bytes(original)
        update(conn, src, progress=False)
    noop = [timed(lambda: update(conn, src, progress=False)) for _ in range(3)]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = store.stat().st_size

    latencies: dict[str, float] = {}
    answers: dict[str, str] = {}
    for text in questions:
        runs = []
        for _ in range(QUERY_REPEATS):
            start = time.perf_counter()
            results = query(text, str(src))
            runs.append((time.perf_counter() - start) * 1000)
        latencies[text] = statistics.median(runs)
        answers[text] = results[0].content.splitlines()[0] if results else ""

    conn = graph.connect(store)
    ours = our_edges(conn, package)
    conn.close()
    theirs = grimp_edges(root, package)
    both = ours & theirs
    precision = len(both) / len(ours) if ours else 0.0
    recall = len(both) / len(theirs) if theirs else 0.0
    return {
        "package": package,
        "source": src.name,
        "files": stats.files,
        "symbols": stats.symbols,
        "import_edges": stats.edges,
        "calls": stats.calls,
        "full_index_s": round(full_s, 3),
        "reindex_one_file_ms_median": round(statistics.median(reindex), 1),
        "reindex_one_file_ms_max": round(max(reindex), 1),
        "noop_refresh_ms_median": round(statistics.median(noop), 1),
        "query_ms_median": round(statistics.median(latencies.values()), 1),
        "query_ms_max": round(max(latencies.values()), 1),
        "query_ms": {k: round(v, 1) for k, v in latencies.items()},
        "answers": answers,
        "index_bytes": size,
        "grimp_edges": len(theirs),
        "our_edges": len(ours),
        "edge_precision": round(precision, 4),
        "edge_recall": round(recall, 4),
        "missed_examples": sorted(theirs - ours)[:10],
        "extra_examples": sorted(ours - theirs)[:10],
    }


def cold_cli(package: str) -> float:
    """Wall time of a cold `recall index PATH --query ...` process on an indexed repository."""
    src = fetch(package)
    question = TARGETS[package][1][0]
    cmd = [sys.executable, "-m", "recall_agent", "index", str(src), "--query", question]
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        runs.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(runs), 1)


def main(argv: list[str]) -> int:
    packages = argv or list(TARGETS)
    home = Path(tempfile.mkdtemp(prefix="recall-bench-arch-"))
    os.environ["RECALL_HOME"] = str(home)
    rows = []
    try:
        for package in packages:
            print(f"== {package}", file=sys.stderr, flush=True)
            row = bench_one(package)
            row["cold_cli_query_ms"] = cold_cli(package)
            rows.append(row)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    header = (
        f"{'repo':<16}{'files':>7}{'full s':>8}{'1-file ms':>11}{'query ms p50/max':>18}"
        f"{'cold CLI ms':>13}{'size MB':>9}{'edges P/R vs grimp':>22}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['source']:<16}{r['files']:>7}{r['full_index_s']:>8.2f}{r['reindex_one_file_ms_median']:>11.0f}"
            f"{r['query_ms_median']:>11.0f} / {r['query_ms_max']:<5.0f}{r['cold_cli_query_ms']:>13.0f}"
            f"{r['index_bytes'] / 1e6:>9.1f}{r['edge_precision']:>13.3f} / {r['edge_recall']:.3f}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    by_package = {r["package"]: r for r in previous.get("repos", [])}
    by_package.update({r["package"]: r for r in rows})
    RESULTS.write_text(
        json.dumps(
            {
                "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
                "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "targets": {"httpx_full_index_s": 3.0, "one_file_reindex_ms": 300, "query_ms": 100},
                "repos": [by_package[p] for p in TARGETS if p in by_package],
            },
            indent=2,
        )
        + "\n"
    )
    print(f"saved {RESULTS.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
