"""Code sense benchmark (issue 16): concept questions, callers against jedi, query latency.

Repositories no earlier benchmark used: flask 3.1.3, jinja2 3.1.6, marshmallow 4.4.0 (PyPI sdists) and
mocha 10.8.2, express 4.22.3 (npm tarballs). The concept questions (`bench/codesense/concepts.json`) were written
before the concept search existed; they are split into a tuning and a held-out half by sha1 parity.

- concepts: is one of the expected files among the first 3 files answered? For recall (this checkout), for
  today's release (`git archive` of the commit this branch started from, run in a subprocess) and for BM25
  (rank_bm25 over every indexed file's text, identifier-aware words, same stop words).
- callers: for functions and methods of the Python packages (picked by sha1 of their qualified name, the
  first 14 per repository that jedi finds called at least once), the set of (file, calling function) pairs
  from jedi's references that are calls, against recall's call sites with confidence ≥ 0.5.
- latency: every concept and caller question on a warm index, median.

    python3 bench/bench_codesense.py                 # everything (a few minutes: jedi is slow)
    python3 bench/bench_codesense.py --concepts-only

Results: printed tables + bench/results/codesense.json.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
CHECKOUT = HERE.parent
QUESTIONS = HERE / "codesense" / "concepts.json"
RESULTS = HERE / "results" / "codesense.json"
RELEASE_COMMIT = "200406f"  # main when issue 16 started: "today's release"
PY_PACKAGES = {"flask": "src/flask", "jinja2": "src/jinja2", "marshmallow": "src/marshmallow"}
CALLERS_PER_REPO = 14
CONFIDENT = 0.5


def half(question: str) -> str:
    return "tuning" if int(hashlib.sha1(question.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


# --------------------------------------------------------------------------- sources


def fetch_all(repos: dict) -> dict[str, Path]:
    """Extracted sources per repository (downloaded once into bench/.cache/)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, info in repos.items():
        folder = CACHE / info["folder"]
        if not folder.exists():
            source = info["source"]
            if source.startswith("npm pack"):
                npm = CACHE / "npm"
                npm.mkdir(exist_ok=True)
                spec = source.split()[-1]
                subprocess.run(["npm", "pack", spec], cwd=npm, check=True, capture_output=True)
                archive = sorted(npm.glob(f"{spec.split('@')[0]}-*.tgz"))[-1]
                (npm / name).mkdir(exist_ok=True)
                with tarfile.open(archive) as tar:
                    tar.extractall(npm / name, filter="data")
            else:
                pin = source.split()[-1]
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q"]
                    + [pin, "-d", str(CACHE)],
                    check=True,
                )
                archive = sorted(CACHE.glob(f"{pin.split('==')[0]}-*.tar.gz"))[-1]
                with tarfile.open(archive) as tar:
                    tar.extractall(CACHE, filter="data")
        out[name] = folder
    return out


def release_checkout() -> Path:
    target = CACHE / f"release-{RELEASE_COMMIT}"
    if not target.exists():
        target.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "archive", RELEASE_COMMIT, "recall"], cwd=CHECKOUT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "x"], input=archive, cwd=target, check=True)
    return target


# --------------------------------------------------------------------------- jedi ground truth


def _functions(path: Path) -> list[tuple[str, int, int, int]]:
    """(qualname, line, column of the name, kind flag) of every def in a file; nested defs included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}.{child.name}" if prefix else child.name
                if not isinstance(child, ast.ClassDef):
                    line_text = path.read_text(encoding="utf-8").splitlines()[child.lineno - 1]
                    out.append((qual, child.lineno, line_text.index(child.name, child.col_offset), 0))
                visit(child, qual)

    visit(tree, "")
    return out


def _enclosing(tree: ast.AST, line: int) -> str:
    """The qualified name of the innermost function around `line` ("" at module or class level)."""
    best = ""

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}.{child.name}" if prefix else child.name
                if child.lineno <= line <= (child.end_lineno or child.lineno):
                    if not isinstance(child, ast.ClassDef):
                        best = qual
                    visit(child, qual)

    visit(tree, "")
    return best


def jedi_callers(root: Path, package_dir: str, limit: int) -> list[dict]:
    """Functions of the package with the (file, caller) pairs of their call sites, per jedi."""
    import jedi

    # the sources under test before site-packages: an installed copy of the same package (flask and jinja2
    # are installed here) would otherwise take the imports and hide every reference; pytest stays reachable
    # so jedi can follow fixtures
    own = [str(root / "src"), str(root)]
    project = jedi.Project(str(root), sys_path=own + [p for p in sys.path if p and p != str(HERE)])
    candidates = []
    for path in sorted((root / package_dir).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for qual, line, col, _ in _functions(path):
            name = qual.rsplit(".", 1)[-1]
            if name.startswith("__") or "<" in qual:
                continue
            candidates.append((hashlib.sha1(f"{rel}:{qual}".encode()).hexdigest(), rel, qual, line, col))
    candidates.sort()
    trees: dict[str, ast.AST] = {}
    lines: dict[str, list[str]] = {}
    chosen = []
    for _, rel, qual, line, col in candidates:
        script = jedi.Script(path=str(root / rel), project=project)
        refs = script.get_references(line, col, scope="project", include_builtins=False)
        name = qual.rsplit(".", 1)[-1]
        pairs = set()
        for ref in refs:
            if (
                ref.module_path is None
                or (ref.line, ref.column) == (line, col)
                and Path(ref.module_path) == root / rel
            ):
                continue
            ref_rel = Path(ref.module_path).relative_to(root).as_posix()
            if ref_rel not in lines:
                text = Path(ref.module_path).read_text(encoding="utf-8")
                lines[ref_rel] = text.splitlines()
                trees[ref_rel] = ast.parse(text)
            after = lines[ref_rel][ref.line - 1][ref.column + len(name) :].lstrip()
            if not after.startswith("("):
                continue  # a reference, not a call (our call graph only has calls)
            pairs.add((ref_rel, _enclosing(trees[ref_rel], ref.line)))
        if pairs:
            chosen.append({"file": rel, "qualname": qual, "line": line, "callers": sorted(pairs)})
        if len(chosen) >= limit:
            break
    return chosen


# --------------------------------------------------------------------------- runtime trace (second opinion)


def traced_callers(root: Path, functions: list[dict]) -> dict[str, list[list[str]]]:
    """Call sites seen while the package's own test suite runs, per function ("file:qualname" → pairs).

    jedi misses receivers it cannot infer (pytest fixtures such as `env` or `app`, `self.application`), so
    its references undercount. A pair observed at run time is real. It is kept only when the calling line
    itself spells a call of the name (a decorator's wrapper calling on someone's behalf is not a call site).
    """
    job = {"root": str(root), "functions": [[f["file"], f["qualname"]] for f in functions]}
    return _in_subprocess("--trace", job, f"{root / 'src'}{os.pathsep}{root}", root)


def _in_subprocess(mode: str, job: dict, pythonpath: str, cwd: Path) -> dict:
    """Run this script in `mode` with `job` on stdin; its last stdout line is the JSON answer."""
    env = {**os.environ, "PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, str(Path(__file__)), mode],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        cwd=str(cwd),
        timeout=900,
    )
    lines = out.stdout.strip().splitlines()
    if (out.returncode and mode == "--worker") or not lines:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(lines[-1])


def _trace_worker(job: dict) -> dict:
    import threading

    import pytest

    root = Path(job["root"]).resolve()
    wanted = {(str(root / f), q) for f, q in job["functions"]}
    seen: dict[str, set[tuple[str, str]]] = {f"{f}:{q}": set() for f, q in job["functions"]}
    lines: dict[str, list[str]] = {}
    trees: dict[str, ast.AST] = {}

    def plain(qualname: str) -> str:
        parts = [p for p in qualname.split(".") if p != "<locals>"]
        while parts and parts[-1].startswith("<"):  # <listcomp>, <lambda>, <genexpr>: their function
            parts.pop()
        return ".".join(parts)

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        key = (code.co_filename, plain(code.co_qualname))
        if key not in wanted or frame.f_back is None:
            return
        back = frame.f_back
        path = Path(back.f_code.co_filename)
        if not path.is_relative_to(root):
            return
        rel = path.relative_to(root).as_posix()
        if rel not in lines:
            source = path.read_text(encoding="utf-8", errors="replace")
            lines[rel] = source.splitlines()
            trees[rel] = ast.parse(source)
        text = lines[rel][back.f_lineno - 1] if 0 < back.f_lineno <= len(lines[rel]) else ""
        name = code.co_name
        if f"{name}(" not in text.replace(" (", "("):
            return
        caller = _enclosing(trees[rel], back.f_lineno)  # as for jedi: the def around the line
        seen[f"{Path(key[0]).relative_to(root).as_posix()}:{key[1]}"].add((rel, caller))

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        pytest.main(["-q", "-p", "no:cacheprovider", "tests"])
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return {k: sorted(v) for k, v in seen.items()}


# --------------------------------------------------------------------------- one engine (run in a worker)


def worker(job: dict) -> dict:
    """Run inside a subprocess whose PYTHONPATH points at the recall checkout being measured."""
    os.environ["RECALL_HOME"] = job["home"]
    import importlib

    package = job.get("package", "recall_agent")  # a release before the rename is `recall`
    q = importlib.import_module(f"{package}.architecture.queries")
    query = importlib.import_module(f"{package}.architecture").query
    open_index = importlib.import_module(f"{package}.architecture.indexer").open_index

    root = job["root"]
    query("circular imports", root)  # index once (warm)
    concept_out = []
    for text in job["questions"]:
        runs, files = [], []
        for _ in range(3):
            start = time.perf_counter()
            results = query(text, root, limit=5)
            runs.append((time.perf_counter() - start) * 1000)
        for r in results:
            extra = r.model_extra or {}
            for path in extra.get("files") or [str(extra.get("location", "")).split(":")[0]]:
                if path and path not in files:
                    files.append(path)
        concept_out.append({"question": text, "files": files[:5], "ms": statistics.median(runs)})
    caller_out = []
    conn, _ = open_index(root, progress=False, summary=False)
    for fn in job["functions"]:
        rows = conn.execute(
            "SELECT s.id FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ? AND s.qualname = ?",
            (fn["file"], fn["qualname"]),
        ).fetchall()
        found = []
        ms = 0.0
        if rows:
            module = conn.execute("SELECT module FROM files WHERE path = ?", (fn["file"],)).fetchone()[0]
            targets = [
                t for t in q.lookup(conn, f"{module}.{fn['qualname']}").targets if t.path == fn["file"]
            ]
            if targets:
                start = time.perf_counter()
                hits = q.callers(conn, targets[0])
                ms = (time.perf_counter() - start) * 1000
                found = sorted({(h.path, h.caller) for h in hits if h.confidence >= CONFIDENT})
        caller_out.append({"file": fn["file"], "qualname": fn["qualname"], "found": found, "ms": ms})
    conn.close()
    return {"concepts": concept_out, "callers": caller_out}


def run_engine(pythonpath: Path, root: Path, questions: list[str], functions: list[dict]) -> dict:
    home = tempfile.mkdtemp(prefix="recall-bench-cs-")
    package = "recall" if (pythonpath / "recall" / "__init__.py").is_file() else "recall_agent"
    job = {
        "home": home,
        "root": str(root),
        "questions": questions,
        "functions": functions,
        "package": package,
    }
    return _in_subprocess("--worker", job, str(pythonpath), pythonpath)


# --------------------------------------------------------------------------- BM25 baseline


def bm25_files(root: Path, questions: list[str]) -> list[list[str]]:
    from rank_bm25 import BM25Okapi

    sys.path.insert(0, str(CHECKOUT))
    from recall_agent.architecture.concepts import terms
    from recall_agent.architecture.indexer import walk
    from recall_agent.architecture.words import text_words

    paths = sorted(walk(root).files)
    docs = [text_words(p + "\n" + (root / p).read_text(encoding="utf-8", errors="replace")) for p in paths]
    bm25 = BM25Okapi(docs)
    out = []
    for text in questions:
        scores = bm25.get_scores(terms(text))
        order = sorted(range(len(paths)), key=lambda i: -scores[i])
        out.append([paths[i] for i in order[:5]])
    return out


# --------------------------------------------------------------------------- scoring


def top3(files: list[str], expected: list[str]) -> bool:
    return any(f in expected for f in files[:3])


def pr(found: list, truth: list) -> tuple[int, int, int]:
    f, t = {tuple(x) for x in found}, {tuple(x) for x in truth}
    return len(f & t), len(f - t), len(t - f)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--trace"]:
        print(json.dumps(_trace_worker(json.loads(sys.stdin.read()))))
        return 0
    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(json.loads(sys.stdin.read()))))
        return 0
    concepts_only = "--concepts-only" in argv
    data = json.loads(QUESTIONS.read_text())
    roots = fetch_all(data["repos"])
    release = release_checkout()
    report: dict = {"repos": {}, "questions": []}
    for repo, root in roots.items():
        print(f"== {repo}", file=sys.stderr, flush=True)
        asked = [(q, exp) for r, q, exp in data["questions"] if r == repo]
        texts = [q for q, _ in asked]
        functions = []
        if repo in PY_PACKAGES and not concepts_only:
            cached = CACHE / f"jedi-{repo}-{CALLERS_PER_REPO}.json"
            if not cached.exists():
                cached.write_text(json.dumps(jedi_callers(root, PY_PACKAGES[repo], CALLERS_PER_REPO)))
            functions = json.loads(cached.read_text())
            traced_file = CACHE / f"trace-{repo}-{CALLERS_PER_REPO}.json"
            if not traced_file.exists():
                traced_file.write_text(json.dumps(traced_callers(root, functions)))
            traced = json.loads(traced_file.read_text())
            for fn in functions:
                fn["traced"] = traced.get(f"{fn['file']}:{fn['qualname']}", [])
                fn["union"] = sorted({tuple(x) for x in fn["callers"]} | {tuple(x) for x in fn["traced"]})
        ours = run_engine(CHECKOUT, root, texts, functions)
        before = run_engine(release, root, texts, functions)
        bm25 = bm25_files(root, texts)
        for i, (text, expected) in enumerate(asked):
            report["questions"].append(
                {
                    "repo": repo,
                    "question": text,
                    "half": half(text),
                    "expected": expected,
                    "ours": ours["concepts"][i]["files"],
                    "release": before["concepts"][i]["files"],
                    "bm25": bm25[i],
                    "ms": round(ours["concepts"][i]["ms"], 1),
                }
            )
        stats = {"callers": [], "latency_ms": [c["ms"] for c in ours["concepts"]]}
        for fn, mine, old in zip(functions, ours["callers"], before["callers"], strict=True):
            stats["callers"].append(
                {**fn, "ours": mine["found"], "release": old["found"], "ms": round(mine["ms"], 1)}
            )
            stats["latency_ms"].append(mine["ms"])
        report["repos"][repo] = stats
    print_tables(report)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report["machine"] = f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"
    report["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(f"saved {RESULTS.relative_to(CHECKOUT)}")
    return 0


def print_tables(report: dict) -> None:
    print("\nConcept questions: expected file in the top 3")
    print(f"{'repo':<13}{'half':<10}{'n':>4}{'recall':>9}{'release':>9}{'BM25':>7}")
    groups: dict[tuple[str, str], list[dict]] = {}
    for q in report["questions"]:
        for key in ((q["repo"], q["half"]), ("all", q["half"]), ("all", "both")):
            groups.setdefault(key, []).append(q)
    for (repo, part), qs in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0])):
        rates = [sum(top3(q[k], q["expected"]) for q in qs) / len(qs) for k in ("ours", "release", "bm25")]
        print(
            f"{repo:<13}{part:<10}{len(qs):>4}"
            + "".join(f"{r:>9.0%}" if i < 2 else f"{r:>7.0%}" for i, r in enumerate(rates))
        )
    print("\nCallers, function level (confidence ≥ 0.5): precision / recall against jedi's references,")
    print("and against jedi ∪ the call sites seen running the package's test suite (jedi misses fixtures)")
    print(
        f"{'repo':<13}{'half':<10}{'fns':>5}{'jedi':>6}{'+trace':>7}{'recall vs jedi':>16}{'vs jedi+trace':>15}"
        f"{'release vs jedi':>17}{'vs jedi+trace':>15}{'p50 ms':>8}"
    )
    for (repo, part), callers in _caller_groups(report):
        cells = [
            _pr_cell(callers, key, truth) for key in ("ours", "release") for truth in ("callers", "union")
        ]
        jedi_pairs = sum(len(c["callers"]) for c in callers)
        union_pairs = sum(len(c["union"]) for c in callers)
        lat = statistics.median([c["ms"] for c in callers])
        print(
            f"{repo:<13}{part:<10}{len(callers):>5}{jedi_pairs:>6}{union_pairs:>7}{cells[0]:>16}{cells[1]:>15}"
            f"{cells[2]:>17}{cells[3]:>15}{lat:>8.1f}"
        )


def _pr_cell(callers: list[dict], key: str, truth: str) -> str:
    tp = fp = fn = 0
    for c in callers:
        a, b, d = pr(c[key], c[truth])
        tp, fp, fn = tp + a, fp + b, fn + d
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return f"{p:.2f} / {r:.2f}"


def _caller_groups(report: dict) -> list[tuple[tuple[str, str], list[dict]]]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for repo, stats in report["repos"].items():
        for c in stats["callers"]:
            part = half(f"{c['file']}:{c['qualname']}")
            for key in ((repo, part), (repo, "both"), ("all", part), ("all", "both")):
                groups.setdefault(key, []).append(c)
    return sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
