"""Architecture engine on small real repositories: index, incremental updates, queries, free text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from architecture_fixtures import MULTI_REPO, PY_REPO, git_init, write
from architecture_fixtures import edges as _edges

from recall_agent.architecture import query
from recall_agent.architecture.indexer import find_repo_root, open_index, update


@pytest.fixture
def py_repo(tmp_path: Path) -> Path:
    return write(tmp_path / "shop", PY_REPO)


@pytest.fixture
def multi_repo(tmp_path: Path) -> Path:
    return write(tmp_path / "poly", MULTI_REPO)


def _one(text: str, repo: Path, **kw) -> str:
    results = query(text, str(repo), **kw)
    assert results, f"no answer for {text!r}"
    return results[0].content


# --------------------------------------------------------------------------- indexing


def test_python_modules_and_imports_resolve_in_src_layout(py_repo: Path) -> None:
    write(py_repo, {"scripts/json.py": "def dumps():\n    pass\n", "scripts/run.py": "import json\n"})
    conn, stats = open_index(py_repo)
    modules = dict(conn.execute("SELECT path, module FROM files"))
    assert modules["src/shop/models.py"] == "shop.models"
    assert modules["src/shop/__init__.py"] == "shop"
    edges = _edges(conn)
    assert ("src/shop/service.py", "src/shop/models.py") in edges  # relative: from .models import
    assert ("src/shop/service.py", "src/shop/cycle_a.py") in edges  # from . import submodule
    assert ("src/shop/api.py", "src/shop/service.py") in edges  # absolute: from shop.service import
    assert ("tests/test_models.py", "src/shop/models.py") in edges
    assert ("tests/test_models.py", "tests/helpers.py") in edges  # tests/ has no __init__.py
    assert ("src/shop/api.py", "scripts/json.py") not in edges  # a loose script does not shadow json
    assert ("scripts/run.py", "scripts/json.py") in edges  # ... except for its neighbours
    assert not any(dst.endswith("decimal.py") for _, dst in edges)  # stdlib stays external
    sym = conn.execute("SELECT kind, signature, doc FROM symbols WHERE qualname = 'Order.total'").fetchone()
    assert tuple(sym) == ("method", "def total(self) -> Decimal", "Sum of item prices.")
    assert stats.files == 11


def test_every_language_extracts_symbols_and_resolves_imports(multi_repo: Path) -> None:
    conn, stats = open_index(multi_repo)
    edges = _edges(conn)
    expected = {
        ("web/src/app.ts", "web/src/util.ts"),
        ("web/src/index.js", "web/src/app.ts"),
        ("cmd/main.go", "util/util.go"),
        ("rs/src/lib.rs", "rs/src/net.rs"),
        ("java/com/acme/App.java", "java/com/acme/Store.java"),
        ("c/lib/math.c", "c/lib/math.h"),
        ("c/main.c", "c/lib/math.h"),
        ("cs/Program.cs", "cs/Models/User.cs"),
        ("rb/app.rb", "rb/lib/greeter.rb"),
        ("php/index.php", "php/src/Mailer.php"),
        ("kt/src/com/acme/Main.kt", "kt/src/com/acme/Repo.kt"),
        ("cpp/main.cpp", "cpp/net/socket.hpp"),
        ("cpp/net/socket.cpp", "cpp/net/socket.hpp"),
        ("web/src/Button.tsx", "web/src/util.ts"),
    }
    assert expected <= edges, expected - edges
    symbols = {tuple(r) for r in conn.execute("SELECT qualname, kind FROM symbols")}
    for sym in [
        ("App.render", "method"),
        ("fmt", "function"),
        ("Helper", "function"),
        ("Socket.open", "method"),
        ("Store.count", "method"),
        ("add", "function"),
        ("Acme.Models.User.Name", "method"),
        ("Greeter.greet", "method"),
        ("Mailer.send", "method"),
        ("Repo.load", "method"),
        ("net.Socket.open", "method"),
        ("Button", "function"),
    ]:
        assert sym in symbols
    assert set(stats.languages) >= {"typescript", "javascript", "go", "rust", "java", "c", "csharp", "ruby"}
    paths = {r[0] for r in conn.execute("SELECT path FROM files")}
    assert not any("node_modules" in p or "dist/" in p for p in paths)  # vendored / generated skipped
    doc = conn.execute("SELECT doc FROM symbols WHERE name = 'Helper'").fetchone()[0]
    assert doc == "Helper helps."


def test_gitignore_is_respected_and_subfolder_finds_the_root(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "g",
        {
            ".gitignore": "generated/\n*.gen.py\n",
            "pkg/__init__.py": "",
            "pkg/core.py": "def run():\n    pass\n",
            "pkg/schema.gen.py": "def generated():\n    pass\n",
            "generated/out.py": "def also_generated():\n    pass\n",
            "pkg/sub/.gitignore": "local.py\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/local.py": "def local_only():\n    pass\n",
            "pkg/sub/kept.py": "from pkg.core import run\n",
            "tests/test_pkg.py": "import pkg\n",
        },
    )
    git_init(repo)
    assert find_repo_root(repo / "pkg" / "sub") == repo.resolve()
    conn, _ = open_index(repo / "pkg")
    paths = {r[0] for r in conn.execute("SELECT path FROM files")}
    assert paths == {
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/sub/__init__.py",
        "pkg/sub/kept.py",
        "tests/test_pkg.py",
    }
    assert ("tests/test_pkg.py", "pkg/__init__.py") in _edges(
        conn
    )  # a root-level package, not a loose script
    assert "pkg/sub/kept.py (run)" in _one("what imports pkg.core", repo)


def test_bad_files_are_survived_and_noted(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "bad",
        {
            "ok.py": "def fine():\n    return 1\n",
            "broken.py": "def half(:\n    pass\n\nclass StillFound:\n    def m(self):\n        pass\n",
            "latin1.py": b"# caf\xe9 \xff\xfe\ndef weird_bytes():\n    return '\xe9'\n",
            "blob.py": b"\x00\x01\x02binary\x00" * 100,
            "app.min.js": "function a(){}",
        },
    )
    with open(repo / "huge.py", "wb") as fh:  # a 50 MB generated file (sparse: cheap to make)
        fh.truncate(50_000_000)
    (repo / "loop").symlink_to(repo, target_is_directory=True)  # a symlink loop must not hang the walk
    os.mkfifo(repo / "pipe.py")  # reading a FIFO would block forever
    conn, stats = open_index(repo)
    names = {r[0] for r in conn.execute("SELECT name FROM symbols")}
    assert {"fine", "StillFound", "m", "weird_bytes"} <= names
    notes = dict(conn.execute("SELECT path, note FROM files WHERE note != ''"))
    assert notes["blob.py"] == "skipped: binary"
    assert notes["huge.py"] == "skipped: 50.0 MB is over the 1.0 MB limit"
    assert notes["app.min.js"] == "skipped: minified"
    assert "syntax errors" in notes["broken.py"]
    assert not any(p.startswith("loop/") for p in notes)
    assert stats.files == 3 and stats.skipped == 3
    assert "huge.py: skipped: 50.0 MB is over the 1.0 MB limit" in stats.notes


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_skipped(tmp_path: Path) -> None:
    repo = write(tmp_path / "r", {"a.py": "def a():\n    pass\n", "secret.py": "def s():\n    pass\n"})
    (repo / "secret.py").chmod(0)
    conn, _ = open_index(repo)
    note = conn.execute("SELECT note FROM files WHERE path = 'secret.py'").fetchone()[0]
    assert note.startswith("skipped: unreadable")


def test_incremental_update_parses_only_what_changed(py_repo: Path) -> None:
    conn, first = open_index(py_repo)
    assert first.parsed == 9
    again = update(conn, py_repo)
    assert again.parsed == 0
    models = py_repo / "src/shop/models.py"
    os.utime(models, ns=(time.time_ns(), time.time_ns()))  # touched, same content: no re-parse
    assert update(conn, py_repo).parsed == 0
    models.write_text(models.read_text() + "\n\ndef refund(order):\n    return order\n")
    stats = update(conn, py_repo)
    assert stats.parsed == 1
    assert conn.execute("SELECT count(*) FROM symbols WHERE name = 'refund'").fetchone()[0] == 1
    (py_repo / "src/shop/cycle_b.py").unlink()
    stats = update(conn, py_repo)
    assert stats.removed == 1
    assert ("src/shop/cycle_a.py", "src/shop/cycle_b.py") not in _edges(conn)


def test_query_refreshes_a_stale_index_automatically(py_repo: Path) -> None:
    query("shop.models", str(py_repo))
    write(py_repo, {"src/shop/report.py": "from shop.models import make_order\n"})
    assert "src/shop/report.py" in _one("what imports shop.models", py_repo)


def test_empty_and_missing_repositories(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "No source files indexed" in _one("Order", empty)
    with pytest.raises(ValueError, match="no such folder"):
        query("Order", str(tmp_path / "missing"))
    binaries = write(tmp_path / "bins", {"a.bin": b"\x00" * 100, "b.so": b"\x7fELF"})
    _, stats = open_index(binaries)
    assert stats.files == 0


# --------------------------------------------------------------------------- queries


def test_blast_radius_counts_direct_and_transitive_dependents(py_repo: Path) -> None:
    results = query("blast radius of shop.models", str(py_repo))
    r = results[0]
    assert r.source == "memgraph" and r.engine == "recall-index" and r.rank == 0
    assert len(r.content_hash) == 64
    # direct: __init__ (from .models), service (from .models), tests/test_models.py
    assert r.direct_dependents == 3
    assert "3 direct dependents" in r.content
    assert "src/shop/service.py (Order, make_order)" in r.content
    # transitive: api (via service), tests/test_service.py (via service), cycle_b (via __init__)
    for path in ("src/shop/api.py", "tests/test_service.py", "tests/test_models.py"):
        assert path in r.content
    assert "depth 1: 3" in r.content


def _walk_edge_by_edge(conn, target, max_depth: int = 10) -> list[tuple]:
    """The walk as it was written before issue 39's fourth round: every edge row into the frontier, in
    chunks of 500, the first seen giving `via`; then one sort. The faster walk must give the same list."""
    from recall_agent.architecture import queries as q

    direct = q.direct_dependents(conn, target)
    order = {d.file_id: i for i, d in enumerate(direct)}
    found = {d.file_id: (d.path, 1, d.is_test, "") for d in direct}
    found.pop(target.file_id, None)
    frontier, depth = list(found), 1
    while frontier and depth < max_depth:
        depth += 1
        nxt: dict[int, int] = {}
        for i in range(0, len(frontier), 500):
            chunk = frontier[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for src, dst in conn.execute(f"SELECT src, dst FROM edges WHERE dst IN ({marks})", chunk):
                if src not in found and src != target.file_id and src not in nxt:
                    nxt[src] = dst
        for src, via in nxt.items():
            path, is_test = conn.execute("SELECT path, is_test FROM files WHERE id = ?", (src,)).fetchone()
            found[src] = (path, depth, bool(is_test), found[via][0])
        frontier = list(nxt)
    rows = [(fid, *v) for fid, v in found.items()]
    return sorted(rows, key=lambda r: (r[2], r[3], order.get(r[0], 0), r[1]))


def test_blast_radius_walk_matches_the_edge_by_edge_walk(tmp_path: Path) -> None:
    """A layered tree of 1,200 modules with many imports per file (so frontiers span several chunks of
    500 and most edges lead to files already found): depths, order and `via` of every dependent."""
    import random
    from operator import attrgetter

    from recall_agent.architecture import queries as q

    rng = random.Random(39)
    repo = tmp_path / "layers"
    (repo / ".git").mkdir(parents=True)
    layers = [[f"l{d}_m{i}" for i in range(n)] for d, n in enumerate((1, 40, 560, 599))]
    for d, layer in enumerate(layers):
        for name in layer:
            below = rng.sample(layers[d - 1], min(6, len(layers[d - 1]))) if d else []
            text = "".join(f"import {m}\n" for m in below) + "X = 1\n"
            folder = repo / ("tests" if d == 3 and rng.random() < 0.2 else "pkg")
            folder.mkdir(exist_ok=True)
            (folder / f"{name}.py").write_text(text)
    conn, _ = open_index(repo)
    target = q.lookup(conn, "l0_m0").targets[0]
    for depth in (10, 2):
        radius = q.blast_radius(conn, target, depth)
        got = [(d.file_id, d.path, d.depth, d.is_test, d.via) for d in radius]
        assert got == _walk_edge_by_edge(conn, target, depth)
    full = q.blast_radius(conn, target)
    assert len(full) > 1000 and {d.depth for d in full} == {1, 2, 3}  # depth 3 walked from 560 files
    # what an answer lists: every direct dependent and test file, the first six others; the rest counted
    for scan_at in (q.SCAN_TESTS_AT, 0):  # looked up per file, and all test files read in one scan
        q.SCAN_TESTS_AT, saved = scan_at, q.SCAN_TESTS_AT
        try:
            summary = q.blast_summary(conn, target)
        finally:
            q.SCAN_TESTS_AT = saved
        others = [d for d in full if d.depth > 1 and not d.is_test]
        expected = [d for d in full if d.depth == 1 or d.is_test] + others[:6]
        key = attrgetter("file_id", "path", "depth", "is_test", "via")
        assert sorted(map(key, summary.dependents)) == sorted(map(key, expected))
        assert summary.size == len(full) and summary.deeper == len(others)
        assert summary.depths == {n: sum(d.depth == n for d in full) for n in (1, 2, 3)}


def test_blast_radius_with_depth_limit(py_repo: Path) -> None:
    content = _one("blast radius of shop.models depth 1", py_repo)
    assert "(depth ≤ 1)" in content
    assert "src/shop/api.py" not in content


def test_callers_and_callees_resolve_with_confidence(py_repo: Path) -> None:
    callers = _one("who calls make_order", py_repo)
    assert "src/shop/service.py:6 in checkout (0.90)" in callers
    total = _one("who calls Order.total", py_repo)
    assert "src/shop/service.py:7 in checkout" in total
    assert "tests/test_models.py:6 in test_order" in total
    callees = _one("what does checkout call", py_repo)
    assert "make_order → src/shop/models.py:19" in callees


def test_dependencies_list_repo_and_external_imports(py_repo: Path) -> None:
    content = _one("what does shop.api depend on", py_repo)
    assert "src/shop/service.py (checkout)" in content
    assert "External: json" in content


def test_import_cycles_are_found(py_repo: Path) -> None:
    content = _one("circular imports", py_repo)
    assert "src/shop/cycle_a.py" in content and "src/shop/cycle_b.py" in content
    assert "1 import cycle" in content


def test_tests_touching_a_file(py_repo: Path) -> None:
    content = _one("which tests touch src/shop/models.py", py_repo)
    assert "tests/test_models.py (imports it)" in content
    assert "tests/test_service.py (depth 2)" in content


def test_lookup_exact_qualified_and_unknown(py_repo: Path) -> None:
    card = query("shop.models.Order", str(py_repo))[0]
    assert card.source == "repowise"
    assert card.content.startswith("`shop.models.Order` — class, src/shop/models.py:5-16")
    assert "> One customer order." in card.content
    assert "Defines 3 methods" in card.content
    where = _one("where is make_order defined", py_repo)
    assert where.startswith("`shop.models.make_order` — function, src/shop/models.py:19-20")
    assert _one("src/shop/models.py:12", py_repo).startswith("`shop.models.Order.total` — method")
    assert "tests/helpers.py" in _one("tests.helpers", py_repo).splitlines()[0]  # no tests/__init__.py
    assert "tests/helpers.py:1" in _one("tests.helpers.sample", py_repo).splitlines()[0]
    unknown = _one("Ordr", py_repo)
    assert "No file or symbol named `Ordr`" in unknown and "`Order`" in unknown


def test_roles_restrict_the_answer(py_repo: Path) -> None:
    only_repowise = query("blast radius of shop.models", str(py_repo), roles={"repowise"})
    assert [r.source for r in only_repowise] == ["repowise"]
    assert only_repowise[0].content.startswith("Blast radius of `shop.models`")
    assert "3 direct dependents" in only_repowise[0].content
    only_memgraph = query("shop.models", str(py_repo), roles={"memgraph"})
    assert only_memgraph[0].source == "memgraph" and "Blast radius" in only_memgraph[0].content
    cycles = query("circular imports", str(py_repo), roles={"repowise"})
    assert cycles[0].source == "repowise" and "cycle_a.py" in cycles[0].content
    assert query("shop.models", str(py_repo), roles={"qdrant"}) == []


def test_free_text_error_finds_the_files_it_names(py_repo: Path) -> None:
    text = (
        'Traceback (most recent call last):\n  File "src/shop/service.py", line 7, in checkout\n'
        "AttributeError: 'Order' object has no attribute 'totl'"
    )
    results = query(text, str(py_repo))
    # the traceback's frame in the repository first, then what the names it mentions are
    assert results[0].content.startswith(
        "Traceback frames in this repository:\n  src/shop/service.py:7 in `checkout`"
    )
    assert (results[0].model_extra or {})["answer"] == "error_origin"
    assert results[1].content.startswith("`shop.service.checkout` — function, src/shop/service.py:5-7")
    assert results[2].content.startswith("`shop.service` — python module")
    assert any(r.content.startswith("`shop.models.Order`") for r in results)
    assert query("how do I make coffee today", str(py_repo)) == []
    elsewhere = 'File "/usr/lib/python3/site-packages/shop/models.py", line 3, in total'
    found = query(elsewhere, str(py_repo))
    assert found[0].content.startswith(
        "Traceback frames in this repository:\n  src/shop/models.py:3 in `total`"
    )
    assert found[1].content.startswith("`shop.models` — python module")


def test_multi_language_queries(multi_repo: Path) -> None:
    assert "web/src/app.ts" in _one("what imports web/src/util.ts", multi_repo)
    assert "cmd/main.go" in _one("who calls Helper", multi_repo)
    assert "rb/app.rb" in _one("who calls greet", multi_repo)
    assert "cs/Program.cs" in _one("who calls User.Name", multi_repo)
    ambiguous = query("where is open defined", str(multi_repo))  # Rust Socket::open and C++ net::Socket::open
    assert len(ambiguous) == 2
    assert ambiguous[1].content.startswith("1 other match for `open`: ")


# --------------------------------------------------------------------------- processes


def test_recall_index_command(py_repo: Path, recall_cmd: list[str]) -> None:
    out = subprocess.run([*recall_cmd, "index", str(py_repo)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "9 files parsed" in out.stdout and "python 9" in out.stdout
    again = subprocess.run([*recall_cmd, "index", str(py_repo), "--json"], capture_output=True, text=True)
    assert '"parsed": 0' in again.stdout and '"files": 9' in again.stdout
    asked = subprocess.run(
        [*recall_cmd, "index", str(py_repo), "--query", "who calls make_order"],
        capture_output=True,
        text=True,
    )
    assert "in checkout (0.90)" in asked.stdout


def test_recall_index_bad_path_is_one_line(tmp_path: Path, recall_cmd: list[str]) -> None:
    out = subprocess.run([*recall_cmd, "index", str(tmp_path / "nope")], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "no such folder" in out.stderr
    assert "Traceback" not in out.stderr


def test_import_is_light() -> None:
    code = (
        "import sys, recall_agent.architecture; print('tree_sitter' in sys.modules, 'sqlite3' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_interrupted_first_index_resumes_and_resolves(py_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recall_agent.architecture import graph, indexer

    monkeypatch.setattr(indexer, "BATCH_FILES", 2)
    real_parse = indexer._parse_file
    calls = {"n": 0}

    def flaky(*args):
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt
        return real_parse(*args)

    monkeypatch.setattr(indexer, "_parse_file", flaky)
    conn = graph.connect(graph.store_path(py_repo))
    with pytest.raises(KeyboardInterrupt):
        update(conn, py_repo)
    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 4  # two committed batches kept
    monkeypatch.setattr(indexer, "_parse_file", real_parse)
    stats = update(conn, py_repo)
    assert stats.parsed == 5 and stats.files == 9
    assert ("src/shop/service.py", "src/shop/models.py") in _edges(conn)


def test_js_workspace_packages_and_tsconfig_paths(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "mono",
        {
            "packages/ui/package.json": '{"name": "@acme/ui", "main": "dist/index.js", "source": "src/index.ts"}',
            "packages/ui/src/index.ts": "export { Button } from './button';\n",
            "packages/ui/src/button.ts": "export function Button() { return 1; }\n",
            "apps/web/tsconfig.json": (
                '{\n  // comments are allowed here\n  "compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["src/*"]},},\n}\n'
            ),
            "apps/web/src/lib/api.ts": "export function get() { return 1; }\n",
            "apps/web/src/page.tsx": (
                "import { Button } from '@acme/ui';\nimport { Button as B } from '@acme/ui/button';\n"
                "import { get } from '@/lib/api';\nimport React from 'react';\n"
            ),
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("apps/web/src/page.tsx", "packages/ui/src/index.ts") in edges
    assert ("apps/web/src/page.tsx", "packages/ui/src/button.ts") in edges
    assert ("apps/web/src/page.tsx", "apps/web/src/lib/api.ts") in edges
    assert ("packages/ui/src/index.ts", "packages/ui/src/button.ts") in edges
    assert "External: react" in _one("what does apps/web/src/page.tsx depend on", repo)
    tsconfig = repo / "apps/web/tsconfig.json"  # edited in place: every import is re-resolved
    tsconfig.write_text('{"compilerOptions": {"baseUrl": ".", "paths": {"~/*": ["src/*"]}}}')
    os.utime(tsconfig, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    stats = update(conn, repo)
    assert stats.parsed == 0
    assert ("apps/web/src/page.tsx", "apps/web/src/lib/api.ts") not in _edges(conn)


def test_recall_scope_architecture_end_to_end(py_repo: Path, recall_cmd: list[str], subprocess_env) -> None:
    """The done-criterion path: the real client, federation and engine in one `recall` process."""
    git_init(py_repo)
    out = subprocess.run(
        [*recall_cmd, "--scope", "architecture", "blast radius of shop.models"],
        cwd=py_repo / "src",
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "Blast radius of `shop.models` (src/shop/models.py): 3 direct dependents" in out.stdout
    assert "src/shop/service.py (Order, make_order)" in out.stdout
    assert "recall-index" in out.stdout


def test_folder_cache_still_sees_new_changed_and_ignored_files(py_repo: Path) -> None:
    """Folders untouched for a while are listed from the cache; what changes inside them is still seen."""
    (py_repo / ".gitignore").write_text("*.tmp\n")
    old = time.time_ns() - 3600 * 10**9
    for folder in [py_repo, *(p for p in py_repo.rglob("*") if p.is_dir())]:
        os.utime(folder, ns=(old, old))
    conn, _ = open_index(py_repo)
    listings = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'dirs'").fetchone()[0])
    assert sorted(p for p, (mtime, *_) in listings.items() if mtime > 0) == ["", "src", "src/shop", "tests"]
    write(py_repo, {"src/shop/extra.py": "from shop.models import Order\n"})  # folder mtime moves
    assert "src/shop/extra.py" in _one("what imports shop.models", py_repo)
    service = py_repo / "src/shop/service.py"  # edited in place: the folder mtime does not move
    service.write_text(service.read_text() + "\n\ndef audit():\n    return make_order([])\n")
    os.utime(service.parent, ns=(old, old))
    assert "in audit" in _one("who calls make_order", py_repo)
    (py_repo / ".gitignore").write_text("tests/\n")  # edited in place: rules apply on the next walk
    os.utime(py_repo, ns=(old, old))
    assert "tests/test_models.py" not in _one("what imports shop.models", py_repo)


def test_unchanged_folders_skip_gitignore_matching_but_see_an_edit(
    py_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose listing and .gitignore chain are unchanged keeps its filtered listing (no .gitignore is
    read again); an edited .gitignore (by its stat) filters its folders again."""
    from recall_agent.architecture import indexer

    old = time.time_ns() - 3600 * 10**9
    (py_repo / ".gitignore").write_text("*.tmp\n")
    for path in [py_repo, *py_repo.rglob("*")]:
        os.utime(path, ns=(old, old))
    conn, _ = open_index(py_repo)
    reads: list[str] = []
    real = indexer._load_gitignore
    monkeypatch.setattr(indexer, "_load_gitignore", lambda folder: reads.append(folder) or real(folder))
    assert "tests/test_models.py" in _one("what imports shop.models", py_repo)
    assert reads == []  # nothing changed: no .gitignore read, no pattern matched
    (py_repo / ".gitignore").write_text("tests/\n")
    later = old + 10**9
    os.utime(py_repo / ".gitignore", ns=(later, later))  # an old-looking stamp: not racy, just different
    os.utime(py_repo, ns=(old, old))
    assert "tests/test_models.py" not in _one("what imports shop.models", py_repo)
    assert reads == [str(py_repo)]


def test_concurrent_first_indexes_agree(multi_repo: Path, recall_cmd: list[str]) -> None:
    procs = [
        subprocess.Popen([*recall_cmd, "index", str(multi_repo), "--json"], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    conn, stats = open_index(multi_repo)
    assert stats.parsed == 0
    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == len(
        {r[0] for r in conn.execute("SELECT path FROM files")}
    )
    assert ("cmd/main.go", "util/util.go") in _edges(conn)
    assert all('"files": ' in out for out in outputs)


def test_unwritable_home_is_one_line(py_repo: Path, recall_cmd: list[str], tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = {**os.environ, "RECALL_HOME": str(blocker / "home")}
    out = subprocess.run([*recall_cmd, "index", str(py_repo)], capture_output=True, text=True, env=env)
    assert out.returncode == 1
    assert (
        out.stderr.startswith("recall index: cannot open the index store") and "Traceback" not in out.stderr
    )


@pytest.mark.parametrize(
    ("text", "action", "subject"),
    [
        ("who calls Client.send?", "callers", "Client.send"),
        ("callers of `make_order`", "callers", "`make_order`"),
        ("where is checkout used", "callers", "checkout"),
        ("what does checkout call", "callees", "checkout"),
        ("blast radius of httpx._models", "blast", "httpx._models"),
        ("What's the blast radius for the httpx._models module?", "blast", "httpx._models"),
        ("what breaks if I change httpx/_models.py", "blast", "httpx/_models.py"),
        ("impact of changing Request", "blast", "Request"),
        ("what imports httpx._config", "dependents", "httpx._config"),
        ("who uses the class Request", "dependents", "Request"),
        ("what does httpx._client depend on", "dependencies", "httpx._client"),
        ("dependencies of src/app.ts", "dependencies", "src/app.ts"),
        ("where is Client defined", "lookup", "Client"),
        ("what is httpx._models.Request", "lookup", "httpx._models.Request"),
        ("httpx._models", "lookup", "httpx._models"),
        ("src/shop/models.py:12", "lookup", "src/shop/models.py:12"),
        ("circular imports", "cycles", ""),
        ("any import cycles in src?", "cycles", "src"),
        ("which tests touch httpx/_urlparse.py", "tests", "httpx/_urlparse.py"),
        ("tests for Order.total", "tests", "Order.total"),
    ],
)
def test_free_text_understanding(text: str, action: str, subject: str) -> None:
    from recall_agent.architecture.understand import understand

    intent = understand(text)
    assert (intent.action, intent.subject) == (action, subject)


def test_free_text_depth_and_candidates() -> None:
    from recall_agent.architecture.understand import understand

    assert understand("blast radius of pkg.mod depth 2").depth == 2
    auto = understand("ImportError: cannot import name 'Foo' from 'pkg.bar' (src/pkg/bar.py)")
    assert auto.action == "auto"
    assert auto.candidates[:3] == ["src/pkg/bar.py", "Foo", "pkg.bar"]


def test_cycles_scoped_to_a_folder(py_repo: Path) -> None:
    assert "1 import cycle" in _one("import cycles in src/shop", py_repo)
    assert _one("circular imports in tests", py_repo).startswith("No import cycles")


def test_python_import_errors_are_explained(py_repo: Path) -> None:
    typo = _one("ImportError: cannot import name 'Ordr' from 'shop.models' (/x/src/shop/models.py)", py_repo)
    assert typo.startswith("`shop.models` (src/shop/models.py) has no top-level `Ordr`. Closest: `Order`.")
    assert typo.endswith("It defines: Order, make_order.")
    moved = _one("ImportError: cannot import name 'checkout' from 'shop.models'", py_repo)
    assert "Defined elsewhere: `shop.service.checkout` (src/shop/service.py:5)" in moved
    cycle = _one(
        "ImportError: cannot import name 'a' from partially initialized module 'shop.cycle_a' "
        "(most likely due to a circular import)",
        py_repo,
    )
    assert cycle.startswith("`shop.cycle_a` (src/shop/cycle_a.py) does define `a` at line 4; it is part of")
    assert "src/shop/cycle_a.py → src/shop/cycle_b.py → src/shop/cycle_a.py" in cycle
    attr = _one("AttributeError: module 'shop.models' has no attribute 'refund'", py_repo)
    assert attr.startswith("`shop.models` (src/shop/models.py) has no top-level `refund`.")
    missing = _one("ModuleNotFoundError: No module named 'shop.modles'", py_repo)
    assert missing == (
        "Module of this repository (read from the code): no module `shop.modles` in it."
        " Closest modules: `shop.models`."
    )
    assert query("ModuleNotFoundError: No module named 'requests'", str(py_repo)) == []


def test_a_local_definition_shadows_the_imported_one(py_repo: Path) -> None:
    write(
        py_repo,
        {
            "src/shop/legacy.py": (
                "from shop import models\n\n\ndef make_order(items):\n    return None\n\n\n"
                "def old_checkout(items):\n    return make_order(items)\n"
            )
        },
    )
    callers = _one("who calls shop.models.make_order", py_repo)
    assert "src/shop/service.py:6 in checkout (0.90)" in callers.splitlines()[1]
    assert "legacy.py" not in callers.splitlines()[1]  # legacy.py calls its own make_order
    own = _one("who calls shop.legacy.make_order", py_repo)
    assert "src/shop/legacy.py:9 in old_checkout (0.95)" in own


# --------------------------------------------------------------------------- scale: workers, caps


def _store_rows(conn) -> dict[str, list]:
    """Every fact of an index by file path (ids differ between two builds, paths do not)."""
    path = {i: p for i, p in conn.execute("SELECT id, path FROM files")}
    rows = {
        "files": list(
            conn.execute("SELECT path, lang, package, lines, unread, is_test, doc, note FROM files")
        ),
        "symbols": list(
            (path[f], *rest)
            for f, *rest in conn.execute(
                "SELECT file_id, name, qualname, kind, line, end_line, signature, doc, returns FROM symbols"
            )
        ),
        "calls": list(
            (path[f], *rest)
            for f, *rest in conn.execute("SELECT file_id, caller, name, recv, line, rtype FROM calls")
        ),
        "edges": list(
            (path[s], path[d], line) for s, d, line in conn.execute("SELECT src, dst, line FROM edges")
        ),
        "text": list(
            (path[r], *rest)
            for r, *rest in conn.execute("SELECT rowid, path, defs, docs, idents FROM file_text")
        ),
        "symbol_text": list(
            conn.execute(
                "SELECT s.qualname, t.words, t.doc FROM symbol_text t JOIN symbols s ON s.id = t.rowid"
            )
        ),
    }
    return {name: sorted(tuple(r) for r in table) for name, table in rows.items()}


def test_a_parse_worker_collects_young_objects_rarely() -> None:
    """A parse worker (its pool initializer, in a process of its own) runs the cyclic GC every 100,000 new
    containers, not CPython's 700: its per-match objects are gone by the file's end (docs/benchmarks.md)."""
    code = "import gc; from recall_agent.architecture import indexer; indexer._worker_init(); print(gc.get_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "(100000, 50, 100)"


def test_parse_workers_build_the_same_index(
    multi_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsed by a pool of 2 processes or in-process, the index holds the same facts."""
    from recall_agent.architecture import graph, indexer

    serial = graph.connect(tmp_path / "serial.sqlite")
    monkeypatch.setenv("RECALL_INDEX_WORKERS", "1")
    update(serial, multi_repo)
    monkeypatch.setenv("RECALL_INDEX_WORKERS", "2")
    monkeypatch.setattr(indexer, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(indexer, "PARSE_CHUNK", 2)
    monkeypatch.setattr(indexer, "BATCH_FILES", 3)
    pools: list[int] = []
    stream = indexer._parsed_stream

    def watched(root, jobs):
        import multiprocessing

        for n, item in enumerate(stream(root, jobs)):
            if n == 0:
                pools.append(len(multiprocessing.active_children()))
            yield item

    monkeypatch.setattr(indexer, "_parsed_stream", watched)
    pooled = graph.connect(tmp_path / "pooled.sqlite")
    stats = update(pooled, multi_repo)
    assert pools and pools[0] >= 2  # the parse ran in worker processes
    assert stats.parsed == stats.files > 6
    assert _store_rows(pooled) == _store_rows(serial)


def test_no_file_cap_by_default_and_a_loud_one_when_asked(
    py_repo: Path, recall_cmd: list[str], subprocess_env: dict[str, str]
) -> None:
    env = {k: v for k, v in subprocess_env.items() if k != "RECALL_INDEX_MAX_FILES"}
    full = subprocess.run(
        [*recall_cmd, "index", str(py_repo), "--json"], capture_output=True, text=True, env=env
    )
    assert full.returncode == 0 and json.loads(full.stdout)["capped_at"] == 0
    assert "WARNING" not in full.stderr
    total = json.loads(full.stdout)["files"]
    capped = subprocess.run(
        [*recall_cmd, "index", str(py_repo), "--json"],
        capture_output=True,
        text=True,
        env={**env, "RECALL_INDEX_MAX_FILES": "3"},
    )
    assert capped.returncode == 0, capped.stderr
    assert json.loads(capped.stdout)["files"] == 3 < total
    assert "WARNING: the index stopped at 3 files" in capped.stderr
    answer = subprocess.run(
        [*recall_cmd, "index", str(py_repo), "--max-files", "3", "--query", "who calls nothing_here"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "the index stopped at 3 files" in answer.stdout and "answers do not see them" in answer.stdout
    bad = subprocess.run(
        [*recall_cmd, "index", str(py_repo)],
        capture_output=True,
        text=True,
        env={**env, "RECALL_INDEX_MAX_FILES": "lots"},
    )
    assert bad.returncode == 2 and "RECALL_INDEX_MAX_FILES must be a whole number" in bad.stderr
    assert "Traceback" not in bad.stderr
    again = subprocess.run(
        [*recall_cmd, "index", str(py_repo), "--json"], capture_output=True, text=True, env=env
    )
    assert json.loads(again.stdout)["files"] == total  # uncapped again: every file is back
