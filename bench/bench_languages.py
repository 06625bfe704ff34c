"""Import resolution per language on real projects, against each language's own tools (issue 17).

For each language, one real project fetched once from a registry reachable here (Debian packages via
`apt-get download`, npm tarballs via `npm pack`, PyPI source distributions via `pip download`) into
bench/.cache/languages/ (gitignored). Each is indexed from scratch into a throwaway RECALL_HOME, then the
file-to-file dependency edges are compared with a ground truth computed by the language's own tools:

| language | truth |
|---|---|
| Go | `go list -json` (each import's `ImportPos` file, every Go file of the imported package) |
| PHP | composer's optimized class map + PHP's tokenizer resolving every name (`bench/lang_truth.php`) |
| Ruby | Ruby's lexer (Ripper) for `require`/`require_relative`/`autoload`, Ruby's load-path rule (`lang_truth.rb`) |
| C, C++ | `gcc -MM -MG` with the project's include flags: the header each `#include` line opened |
| Java | javac itself: every name attributed by the compiler, mapped to the file declaring it (`LangTruth.java`) |
| TypeScript, JavaScript | the TypeScript compiler's `preProcessFile` + `resolveModuleName` (`lang_truth.js`) |
| Python | grimp's import graph |
| Rust | rustc's module tree (`--emit=dep-info` per target) plus `use` paths checked by hand on a sample |
| Kotlin, C# | no compiler here: a hand-checked sample of files |

Dependents precision/recall is computed over edges (a file's direct dependents are its incoming edges),
split by a hash of the source path into a tuning half and a held-out half (reported separately).

    python3 bench/bench_languages.py --fetch        # one-time download (needs the registries)
    python3 bench/bench_languages.py                # offline afterwards; or name languages: … go php

Results: printed table + bench/results/languages.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "languages"
RESULTS = HERE / "results" / "languages.json"
sys.path.insert(0, str(HERE.parent))

Truth = dict[str, set[str]]  # file -> files it depends on (repository paths)


@dataclass
class Case:
    lang: str  # the row's label
    source: str  # debian:PKG, npm:PKG@VERSION, pypi:PKG==VERSION
    subdir: str  # the project root inside the extracted package
    langs: tuple[str, ...]  # recall's language names counted for this row
    truth: Callable[[Path, list[str]], Truth]
    partial: bool = False  # the tool's truth covers only some kinds of edges: its precision means nothing
    calls: Callable[[Path, list[str]], list[tuple[str, int, str, str]]] | None = None  # compiler's calls
    hand: dict[str, set[str]] | None = None  # hand-checked edges of a sample of files


# Read by hand from each file's `use` / `mod` lines with Rust's path rules (rayon 1.6.1).
RUST_HAND = {
    "src/iter/chain.rs": {"src/iter/mod.rs", "src/iter/plumbing/mod.rs"},
    "src/slice/mergesort.rs": {"src/iter/mod.rs", "src/lib.rs", "src/slice/mod.rs"},
    "src/str.rs": {"src/iter/mod.rs", "src/iter/plumbing/mod.rs", "src/split_producer.rs"},
    "tests/clones.rs": {"src/lib.rs", "src/prelude.rs"},
    "src/collections/hash_map.rs": {"src/iter/mod.rs", "src/iter/plumbing/mod.rs", "src/vec.rs"},
    "src/iter/collect/consumer.rs": {"src/iter/plumbing/mod.rs", "src/lib.rs"},
    "src/vec.rs": {"src/iter/mod.rs", "src/iter/plumbing/mod.rs", "src/math.rs", "src/slice/mod.rs"},
    "src/iter/plumbing/mod.rs": {"src/iter/mod.rs", "src/lib.rs"},
    "src/range.rs": {"src/iter/mod.rs", "src/iter/plumbing/mod.rs", "src/lib.rs"},
    "tests/octillion.rs": {"src/lib.rs", "src/prelude.rs"},
    "src/prelude.rs": {"src/iter/mod.rs", "src/slice/mod.rs", "src/str.rs"},
}


# --------------------------------------------------------------------------- fetch


def fetched(source: str) -> Path:
    """The folder the package of `source` is extracted to (fetching it when missing and allowed)."""
    kind, _, spec = source.partition(":")
    dest = CACHE / spec.replace("/", "_").replace("@", "_").replace("==", "_")
    if (dest / ".done").exists():
        return dest
    if os.environ.get("BENCH_FETCH") != "1":
        raise SystemExit(f"{source} is not fetched yet: run `python3 bench/bench_languages.py --fetch`")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(dir=CACHE))
    try:
        if kind == "debian":
            subprocess.run(["apt-get", "download", spec], cwd=work, check=True, capture_output=True)
            if spec.startswith("golang-"):  # its dependencies, for go/types' call resolution
                subprocess.run(
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends", spec], check=True
                )
            deb = next(work.glob("*.deb"))
            subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
        elif kind == "npm":
            subprocess.run(["npm", "pack", "--silent", spec], cwd=work, check=True, capture_output=True)
            _untar(next(work.glob("*.tgz")), dest)
        elif kind == "pypi":
            name = spec.split("==")[0]
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", name]
                + ["-d", str(work), spec],
                check=True,
            )
            _untar(next(work.glob("*.tar.gz")), dest)
        else:
            raise ValueError(source)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (dest / ".done").write_text(source)
    return dest


def _untar(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")


# --------------------------------------------------------------------------- ground truths


def _rel(root: Path, path: str) -> str | None:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return None


def go_truth(root: Path, files: list[str]) -> Truth:
    """go/build's reading of every package folder (`lang_truth.go`): each import's files -> every Go file
    the build uses in the imported package."""
    module = re.search(r"^module\s+(\S+)", (root / "go.mod").read_text(), re.M).group(1)
    env = {**os.environ, "GO111MODULE": "off", "GOFLAGS": "", "CGO_ENABLED": "0"}
    out = subprocess.run(
        ["go", "run", str(HERE / "lang_truth.go"), str(root), module],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    packages = _json_stream(out)
    files_of = {}
    for p in packages:
        folder = p["ImportPath"][len(module) :].strip("/")
        files_of[p["ImportPath"]] = [f"{folder}/{f}".lstrip("/") for f in p["GoFiles"] or []]
    truth: Truth = {f: set() for f in files}
    for p in packages:
        for imported, importers in (p["Imports"] or {}).items():
            for path in importers:
                src = _rel(root, path)
                if src in truth:
                    truth[src] |= {f for f in files_of.get(imported, []) if f != src}
    return truth


def _json_stream(text: str) -> list[dict]:
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        out.append(obj)


def _json_truth(cmd: list[str]) -> Truth:
    """Run a truth script that prints one JSON object: file -> [files it depends on]."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {k: set(v) for k, v in json.loads(out).items()}


def php_truth(root: Path, files: list[str]) -> Truth:
    work = Path(tempfile.mkdtemp())
    try:
        (work / "composer.json").write_text(json.dumps({"autoload": {"classmap": [str(root)]}}))
        env = {**os.environ, "COMPOSER_ALLOW_SUPERUSER": "1", "COMPOSER_HOME": str(work / ".composer")}
        subprocess.run(
            ["composer", "dump-autoload", "-o", "-q", "--no-interaction"], cwd=work, env=env, check=True
        )
        classmap = work / "classmap.json"
        subprocess.run(
            ["php", "-r", "echo json_encode(require 'vendor/composer/autoload_classmap.php');"],
            cwd=work,
            stdout=classmap.open("w"),
            check=True,
        )
        return _json_truth(
            ["php", str(HERE / "lang_truth.php"), str(classmap), str(root), *[str(root / f) for f in files]]
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ruby_truth(root: Path, files: list[str]) -> Truth:
    script = str(HERE / "lang_truth.rb")
    return _json_truth(["ruby", script, str(root), str(root / "lib"), "--", *[str(root / f) for f in files]])


def ruby_loaded_truth(root: Path, files: list[str]) -> Truth:
    """Ruby's own resolution while the files run (lang_loaded.rb): every require/require_relative/load/
    autoload with the file it resolved to, $LOAD_PATH additions included."""
    cmd = [
        "ruby",
        str(HERE / "lang_loaded.rb"),
        str(root),
        str(root / "lib"),
        "--",
        *[str(root / f) for f in files],
    ]
    done = subprocess.run(
        cmd, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL, timeout=900
    )
    return {k: set(v) for k, v in json.loads(done.stdout)["edges"].items()}


def java_truth(root: Path, files: list[str]) -> Truth:
    return _json_truth(
        ["java", "-Xmx4g", str(HERE / "LangTruth.java"), str(root), *[str(root / f) for f in files]]
    )


def rust_truth(root: Path, files: list[str]) -> Truth:
    """rustc's module tree (`--emit=dep-info` of each crate root: the files of the crate, cfg and `#[path]`
    included) as parent-module -> child edges, and each test/bench/example crate -> the library it names.
    `use` edges have no tool here (no rust-analyzer): they are checked by hand on a sample (see docs)."""
    import tomllib

    name = tomllib.loads((root / "Cargo.toml").read_text())["package"]["name"].replace("-", "_")
    roots = [("src/lib.rs", "lib")] + [
        (f, "bin") for f in files if f.split("/")[0] in ("tests", "benches", "examples") and f.count("/") == 1
    ]
    truth: Truth = {f: set() for f in files}
    work = Path(tempfile.mkdtemp())
    try:
        for crate_root, kind in roots:
            dep = work / "out.d"
            subprocess.run(
                ["rustc", "--edition", "2021", "--crate-type", "lib", "--crate-name", "x", "--emit=dep-info"]
                + ["-o", str(dep), crate_root],
                cwd=root,
                capture_output=True,
                check=False,
            )
            if not dep.exists():
                continue
            first = dep.read_text().split("\n", 1)[0]
            members = first.split(":", 1)[1].split()
            for child in members[1:]:
                truth.setdefault(_parent_module(root, child, crate_root), set()).add(child)
            if kind == "bin" and re.search(rf"\b{name}\b", (root / crate_root).read_text()):
                truth[crate_root].add("src/lib.rs")
            dep.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return truth


def _parent_module(root: Path, path: str, crate_root: str) -> str:
    """The file declaring `mod` for `path`: a/b/c.rs -> a/b.rs or a/b/mod.rs; top level -> the crate root."""
    folder, base = os.path.split(path)
    if base == "mod.rs":
        folder = os.path.dirname(folder)
    if folder == os.path.dirname(crate_root):
        return crate_root
    return f"{folder}.rs" if (root / f"{folder}.rs").exists() else f"{folder}/mod.rs"


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"][^>"\n]+[>"])', re.M)


def cfamily_truth(flags: list[str]) -> Callable[[Path, list[str]], Truth]:
    """gcc's own include search with the project's include flags: each `#include` line of a file, on its
    own in a stub next to that file (so `#if` branches not taken count too), and the header gcc opens
    for it first (`-MM -MG`: a missing system header is fine)."""

    def truth(root: Path, files: list[str]) -> Truth:
        out: Truth = {}
        for f in files:
            folder = (root / f).parent
            cpp = not f.endswith((".c", ".h")) or (f.endswith(".h") and _is_cpp_header(root / f))
            deps = set()
            for line in _INCLUDE.findall((root / f).read_text(errors="replace")):
                stub = folder / (".bench_stub.cpp" if cpp else ".bench_stub.c")
                stub.write_text(f"#include {line}\n")
                try:
                    proc = subprocess.run(
                        ["g++" if cpp else "gcc", "-MM", "-MG", "-w", *[_abs_flag(root, x) for x in flags]]
                        + (["-std=c++17"] if cpp else [])
                        + [stub.name],
                        cwd=folder,
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                finally:
                    stub.unlink()
                opened = proc.stdout.replace("\\\n", " ").split(":", 1)[-1].split()[1:2]
                for o in opened:
                    rel = _rel(root, str(folder / o))
                    if rel and (root / rel).is_file() and rel != f:
                        deps.add(rel)
            out[f] = deps
        return out

    return truth


def _abs_flag(root: Path, flag: str) -> str:
    return f"-I{root / flag[2:]}" if flag.startswith("-I") else flag


def _is_cpp_header(path: Path) -> bool:
    from recall_agent.architecture.lang.cfamily import looks_cpp

    return looks_cpp(path.read_bytes())


def tools() -> Path:
    """bench/.cache/languages/tools: the TypeScript compiler (npm), installed by --fetch."""
    folder = CACHE / "tools"
    if not (folder / "node_modules" / "typescript").exists():
        if os.environ.get("BENCH_FETCH") != "1":
            raise SystemExit("typescript is not fetched yet: run `python3 bench/bench_languages.py --fetch`")
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                "typescript@5.6",
            ],
            check=True,
        )
    return folder


def js_truth(root: Path, files: list[str]) -> Truth:
    return _json_truth(["node", str(HERE / "lang_truth.js"), str(tools()), str(root), *files])


def python_truth(package: str) -> Callable[[Path, list[str]], Truth]:
    """grimp's import graph of the package (run apart so an installed copy is not used)."""

    def truth(root: Path, files: list[str]) -> Truth:
        code = (
            "import json, sys\n"
            f"sys.path.insert(0, {str(root)!r})\n"
            "import grimp\n"
            f"g = grimp.build_graph({package!r}, cache_dir=None)\n"
            "print(json.dumps([[m, i] for m in g.modules for i in g.find_modules_directly_imported_by(m)]))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
        )
        present = set(files)

        def file_of(module: str) -> str | None:
            base = module.replace(".", "/")
            return next((c for c in (f"{base}.py", f"{base}/__init__.py") if c in present), None)

        result: Truth = {f: set() for f in files if f.startswith(package + "/")}  # grimp sees the package
        for a, b in json.loads(out.stdout):
            fa, fb = file_of(a), file_of(b)
            if fa and fb and fa != fb:
                result[fa].add(fb)
        return result

    return truth


def no_tool(root: Path, files: list[str]) -> Truth:
    """No compiler for the language here (kotlinc, dotnet): only the hand-checked sample scores it."""
    return {}


def _hand(lang: str) -> dict[str, set[str]]:
    """bench/hand_samples/<lang>.json: 14 files drawn at random (8 + 6 held out), each edge read in the
    source (a real use of the type, not a comment), each capitalized name naming a type of the project
    checked for a missed dependency."""
    data = json.loads((HERE / "hand_samples" / f"{lang}.json").read_text())
    return {k: set(v) for k, v in data.items()}


def go_calls(root: Path, files: list[str]) -> list[tuple[str, int, str, str]]:
    """go/types' resolution of every method call (`lang_calls.go`, type-checked from source in a GOPATH)."""
    module = re.search(r"^module\s+(\S+)", (root / "go.mod").read_text(), re.M).group(1)
    gopath = Path(tempfile.mkdtemp())
    try:
        shutil.copytree(root, gopath / "src" / module, symlinks=True)
        # the dependencies come from Debian's Go packages (--fetch installs them into /usr/share/gocode)
        deps = "/usr/share/gocode"
        _link_major_versions(Path(deps) / "src", gopath / "src")
        env = {
            **os.environ,
            "GO111MODULE": "off",
            "GOPATH": f"{gopath}:{deps}",
            "GOFLAGS": "",
            "CGO_ENABLED": "0",
        }
        out = subprocess.run(
            ["go", "run", str(HERE / "lang_calls.go"), str(gopath / "src" / module), module],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        shutil.rmtree(gopath, ignore_errors=True)
    rows = []
    for line in out.splitlines():
        src, num, decl, key = line.split("\t")
        rows.append((src, int(num), decl, key))
    return rows


def _link_major_versions(src: Path, dest: Path) -> None:
    """GOPATH mode knows no `/v13` module suffix: link each such module at its import path."""
    for mod in src.glob("**/go.mod"):
        found = re.search(r"^module\s+(\S+)", mod.read_text(errors="replace"), re.M)
        if found and not str(mod.parent).endswith(found.group(1)):
            link = dest / found.group(1)
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(mod.parent, target_is_directory=True)


def java_calls(root: Path, files: list[str]) -> list[tuple[str, int, str, str]]:
    """javac's resolution of every method call: (file, line, file declaring the method, Class.method)."""
    out = subprocess.run(
        [
            "java",
            "-Xmx4g",
            str(HERE / "LangTruth.java"),
            "--calls",
            str(root),
            *[str(root / f) for f in files],
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        src, num, decl, key = line.split("\t")
        rows.append((json.loads(src), int(num), json.loads(decl), json.loads(key)))
    return rows


# --------------------------------------------------------------------------- cases

CASES: list[Case] = [
    Case(
        "go",
        "debian:golang-github-hashicorp-hcl-v2-dev",
        "usr/share/gocode/src/github.com/hashicorp/hcl/v2",
        ("go",),
        go_truth,
        calls=go_calls,
    ),
    Case("java", "npm:react-native@0.70.6", "package/ReactAndroid", ("java",), java_truth, calls=java_calls),
    Case(
        "rust",
        "debian:librust-rayon-dev",
        "usr/share/cargo/registry/rayon-1.6.1",
        ("rust",),
        rust_truth,
        partial=True,
        hand=RUST_HAND,
    ),
    Case("python", "pypi:pygments==2.19.2", "pygments-2.19.2", ("python",), python_truth("pygments")),
    Case("typescript", "npm:rxjs@7.8.2", "package/src", ("typescript", "tsx"), js_truth),
    Case("javascript", "npm:lodash-es@4.17.21", "package", ("javascript",), js_truth),
    Case("c", "pypi:pillow==12.0.0", "pillow-12.0.0/src", ("c", "cpp"), cfamily_truth([])),
    Case("cpp", "pypi:pybind11==3.0.1", "pybind11-3.0.1", ("c", "cpp"), cfamily_truth(["-Iinclude"])),
    Case(
        "kotlin",
        "npm:react-native@0.86.3",
        "package/ReactAndroid",
        ("kotlin",),
        no_tool,
        hand=_hand("kotlin"),
    ),
    Case("csharp", "pypi:pythonnet==3.0.5", "pythonnet-3.0.5", ("csharp",), no_tool, hand=_hand("csharp")),
    Case("php", "debian:php-league-commonmark", "usr/share/php", ("php",), php_truth),
    Case(
        "ruby",
        "debian:ruby-activesupport",
        "usr/share/rubygems-integration/all/gems/activesupport-6.1.7.10",
        ("ruby",),
        ruby_truth,
    ),
    # issue 28: two more gems of other layouts, against what Ruby loads when the files run
    Case(
        "ruby-rack",
        "debian:ruby-rack",
        "usr/share/rubygems-integration/all/gems/rack-2.2.22",
        ("ruby",),
        ruby_loaded_truth,
    ),
    Case(
        "ruby-rake",
        "debian:rake",
        "usr/share/rubygems-integration/all/gems/rake-13.0.6",
        ("ruby",),
        ruby_loaded_truth,
    ),
]


# --------------------------------------------------------------------------- measure


def held_out(path: str) -> bool:
    """The fixed split: half of the source files (by a hash of their path) are never looked at to tune."""
    return hashlib.sha1(path.encode()).digest()[0] % 2 == 1


def index(root: Path) -> tuple[dict[str, set[str]], dict, float]:
    """Recall's edges (src -> dsts), per-file facts and the index time, in a throwaway RECALL_HOME."""
    home = tempfile.mkdtemp()
    os.environ["RECALL_HOME"] = home
    try:
        from recall_agent.architecture.indexer import open_index

        started = time.perf_counter()
        conn, stats = open_index(root, progress=False)
        seconds = time.perf_counter() - started
        edges: dict[str, set[str]] = {}
        for src, dst in conn.execute(
            "SELECT f.path, g.path FROM edges e JOIN files f ON f.id = e.src JOIN files g ON g.id = e.dst"
        ):
            edges.setdefault(src, set()).add(dst)
        files = {
            path: (lang, note) for path, lang, note in conn.execute("SELECT path, lang, note FROM files")
        }
        conn.close()
        return edges, files, seconds
    finally:
        shutil.rmtree(home, ignore_errors=True)


def score(truth: Truth, edges: dict[str, set[str]], domain: set[str], half: bool | None) -> dict:
    tp = fp = fn = 0
    for src, want in truth.items():
        if half is not None and held_out(src) != half:
            continue
        got = {d for d in edges.get(src, set()) if d in domain}
        want = {d for d in want if d in domain}
        tp += len(got & want)
        fp += len(got - want)
        fn += len(want - got)
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "edges_truth": tp + fn,
        "edges_recall": tp + fp,
    }


def misses(truth: Truth, edges: dict[str, set[str]], domain: set[str], n: int = 8) -> dict[str, list]:
    """A few wrong and missing edges of the tuning half, to read."""
    wrong, missing = [], []
    for src, want in sorted(truth.items()):
        if held_out(src):
            continue
        got = {d for d in edges.get(src, set()) if d in domain}
        wrong += [f"{src} -> {d}" for d in sorted(got - want)]
        missing += [f"{src} -> {d}" for d in sorted(want & domain - got)]
    return {"extra": wrong[:n], "missing": missing[:n]}


def run(case: Case) -> dict:
    from recall_agent.architecture.languages import language_for

    root = fetched(case.source) / case.subdir
    edges, files, seconds = index(root)
    on_disk = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and (spec := language_for(p.name)) is not None and _counted(spec.name, case)
    )
    domain = {p for p, (lang, _) in files.items() if lang in case.langs}
    sources = sorted(domain)
    truth = case.truth(root, sources)
    row = {
        "lang": case.lang,
        "project": case.source,
        "files_on_disk": len(on_disk),
        "files_indexed": len(domain),
        "skipped_with_note": sum(1 for p in on_disk if p in files and files[p][0] is None),
        "not_in_index": [p for p in on_disk if p not in files][:10],
        "syntax_errors": sum(1 for p in domain if "syntax" in files[p][1]),
        "index_seconds": round(seconds, 2),
        "tuning": score(truth, edges, domain, False),
        "held_out": score(truth, edges, domain, True),
        "examples": misses(truth, edges, domain),
    }
    if case.partial:  # the tool sees only some edges: recall against it, precision from the hand sample
        for half in ("tuning", "held_out"):
            row[half]["precision"] = None
    if case.calls is not None:
        row["callers"] = callers_sample(root, case.calls(root, sources))
    if case.hand:
        row["hand_sample"] = {"files": len(case.hand), **score(case.hand, edges, domain, None)}
    return row


CALLER_SAMPLE = 24  # methods, half tuning, half held out


def callers_sample(root: Path, calls: list[tuple[str, int, str, str]]) -> dict:
    """`who calls Class.method` (answers with confidence >= 0.5) against the compiler's call sites, on
    methods drawn by a hash of their name among those called from at least two places."""
    sites: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for src, line, decl, key in calls:
        if not key.endswith(".<init>"):
            sites.setdefault((decl, key), set()).add((src, line))
    keys = sorted(
        (k for k, v in sites.items() if len(v) >= 2),
        key=lambda k: hashlib.sha1(f"{k[0]}:{k[1]}".encode()).hexdigest(),
    )[:CALLER_SAMPLE]
    home = tempfile.mkdtemp()
    os.environ["RECALL_HOME"] = home
    try:
        from recall_agent.architecture import queries as q
        from recall_agent.architecture.indexer import open_index

        conn, _ = open_index(root, progress=False)
        halves: dict[bool, list[int]] = {False: [0, 0, 0], True: [0, 0, 0]}  # tp, fp, fn
        worst = []
        for decl, key in keys:
            cls, name = key.rsplit(".", 1)
            row = conn.execute(
                "SELECT s.qualname FROM symbols s JOIN files f ON f.id = s.file_id"
                " WHERE f.path = ? AND s.name = ? AND (s.qualname = ? OR s.qualname LIKE ?)",
                (decl, name, key, f"%.{key}"),
            ).fetchone()
            got: set[tuple[str, int]] = set()
            if row is not None:
                targets = [t for t in q.lookup(conn, row[0]).targets if t.path == decl] or []
                target = targets[0] if targets else None
                if target is not None:
                    got = {(h.path, h.line) for h in q.callers(conn, target) if h.confidence >= 0.5}
            want = sites[(decl, key)]
            counts = halves[held_out(key)]
            counts[0] += len(got & want)
            counts[1] += len(got - want)
            counts[2] += len(want - got)
            if got != want and not held_out(key):
                worst.append(
                    f"{key}: {len(got & want)} right, {len(got - want)} extra, {len(want - got)} missed"
                )
        conn.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)

    def pr(c: list[int]) -> dict:
        tp, fp, fn = c
        return {
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None,
            "sites": tp + fn,
        }

    return {
        "methods": len(keys),
        "tuning": pr(halves[False]),
        "held_out": pr(halves[True]),
        "examples": worst[:8],
    }


def _callers(row: dict) -> str:
    c = row.get("callers")
    if not c:
        return "—"
    t, h = c["tuning"], c["held_out"]
    return f"{t['precision']} / {t['recall']}; {h['precision']} / {h['recall']} ({c['methods']} methods)"


def _hand(row: dict) -> str:
    sample = row.get("hand_sample")
    if not sample:
        return "—"
    return f"{sample['precision']} / {sample['recall']} ({sample['files']} files)"


def _counted(lang: str, case: Case) -> bool:
    return lang in case.langs or (lang == "c" and "cpp" in case.langs)


def main(argv: list[str]) -> None:
    if "--fetch" in argv:
        os.environ["BENCH_FETCH"] = "1"
        argv = [a for a in argv if a != "--fetch"]
    wanted = set(argv)
    rows = [run(c) for c in CASES if not wanted or c.lang in wanted]
    print(
        "| language | project | files (indexed / on disk) | syntax errors | index | dependents P / R (tuning) "
        "| P / R (held-out) | truth edges | hand sample P / R | callers P / R (tuning; held-out) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        t, h = r["tuning"], r["held_out"]
        print(
            f"| {r['lang']} | {r['project'].split(':', 1)[1]} | {r['files_indexed']} / {r['files_on_disk']} "
            f"| {r['syntax_errors']} | {r['index_seconds']} s | {t['precision']} / {t['recall']} "
            f"| {h['precision']} / {h['recall']} | {t['edges_truth'] + h['edges_truth']} | {_hand(r)} | {_callers(r)} |"
        )
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    previous.update({r["lang"]: r for r in rows})
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(previous, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
