"""The architecture index at kernel scale: the Linux kernel from Debian's `linux-source-6.1` package.

What it measures (issue 29):

* `recall index` from scratch on 1 core (`taskset -c 0`) and on every core: wall time, CPU time, peak memory
  of the whole process tree (sampled from /proc), index size, files and lines the grammar could not read;
* how much of the files tree-sitter parses with errors is recovered, on a fixed sample of the C files
  (every file whose path hashes to 0 mod 20): files with errors, unread lines, definitions and call sites,
  with the raw source and with recall's annotation blanking (`lang/cfamily.py`);
* ten fixed questions: in-process through `recall_agent.architecture.query()` (median of 3, each with the
  stat walk that checks for changes) and as a whole `recall --scope architecture` process run in the tree;
* callers of ten functions against cscope's (`cscope -L3`, Debian's cscope) as the reference: precision and
  recall of the call sites (file, line);
* with `--release`, the previous release's `recall index` on every core, side by side; with `--answers-release`,
  the previous release's answers to the ten questions on the same index (wall and CPU time of each CLI process).

Set up (the script does this when something is missing; root, as on this machine):

    apt-get update && apt-get install -y linux-source-6.1 cscope
    mkdir -p bench/.cache/kernel && tar -xJf /usr/src/linux-source-6.1.tar.xz -C bench/.cache/kernel
    # Debian's packaging adds "ignore everything at the top level" to .gitignore; upstream has no such
    # lines, so they are cut, then the tree is committed (a kernel checkout is a git repository)
    cd bench/.cache/kernel/linux-source-6.1 && git init && git add -A && git commit -m linux-source-6.1

    python3 bench/bench_large_repo.py                 # everything, ~15-25 min on 2 shared cores
    python3 bench/bench_large_repo.py --skip-1-core   # without the 1-core index
    python3 bench/bench_large_repo.py --cache /work/cache/kernel
    python3 bench/bench_large_repo.py --reuse-index --answers-only --answers-release 9069176   # answers, side by side
    python3 bench/bench_large_repo.py --reuse-index --answers-only --answers-release 9069176 --answers-rounds 5
        # and each question 5 more times per version as a CLI process, the two alternated (min / median)

The index goes to a throwaway RECALL_HOME under the cache folder (never into the repository). Results:
the printed tables and bench/results/large_repo.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

RESULTS = HERE / "results" / "large_repo.json"
TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
TREE = "linux-source-6.1"
DEBIAN_IGNORE = "#\n# Debian packaging: ignore everything at the top level"
QUESTIONS = [
    "who calls kref_put",
    "blast radius of include/linux/kref.h",
    "who calls skb_copy_bits",
    "what imports include/linux/skbuff.h",
    "what does net/core/skbuff.c depend on",
    "skb_copy_bits",
    "what does kref_put call",
    "how are pages allocated",
    "where is the scheduler load balancing",
    "mm/page_alloc.c:5000",
]
CALLERS = [
    "kref_put",
    "skb_copy_bits",
    "mutex_lock",
    "kthread_stop",
    "pci_enable_device",
    "netif_rx",
    "alloc_chrdev_region",
    "kstrtoint",
    "kmem_cache_create",
    "crc32c",
]
TARGETS = {"index_s": 180.0, "peak_mb": 1000.0, "index_mb": 1500.0, "answer_s": 1.0, "callers_pr": 0.9}


# --------------------------------------------------------------------------- the tree


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def apt_install(*packages: str) -> None:
    print(f"installing {' '.join(packages)} with apt", file=sys.stderr)
    sh(["apt-get", "update", "-q"], stdout=subprocess.DEVNULL)
    sh(["apt-get", "install", "-y", "-q", *packages], stdout=subprocess.DEVNULL)


def kernel_tree(cache: Path) -> Path:
    """The unpacked kernel as a git repository (installing Debian's package when missing)."""
    tree = cache / TREE
    if (tree / ".git").is_dir() and subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True
    ).returncode == 0:
        return tree
    if not TARBALL.exists():
        apt_install("linux-source-6.1")
    cache.mkdir(parents=True, exist_ok=True)
    if tree.exists():
        shutil.rmtree(tree)
    sh(["tar", "-xJf", str(TARBALL), "-C", str(cache)])
    ignore = tree / ".gitignore"
    text = ignore.read_text()
    if DEBIAN_IGNORE in text:
        ignore.write_text(text[: text.index(DEBIAN_IGNORE)])
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost"}
    env |= {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
    sh(["git", "init", "-q"], cwd=tree)
    sh(["git", "add", "-A"], cwd=tree)
    sh(["git", "commit", "-q", "-m", "linux-source-6.1 (Debian)"], cwd=tree, env=env)
    return tree


def git_files(tree: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:-1]


# --------------------------------------------------------------------------- indexing


class TreeMemory:
    """Peak resident memory of a process and all its descendants, sampled from /proc every 0.2 s."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_kb, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as fh:
                        todo += [int(c) for c in fh.read().split()]
            except OSError:
                continue
        return pids

    def _rss_kb(self, pid: int) -> int:
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, sum(self._rss_kb(p) for p in self._tree()))
            self._stop.wait(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kb


def index_once(
    tree: Path, home: Path, cores: int | None, package: str = "recall_agent", pythonpath: str = ""
) -> dict:
    """A fresh `recall index --json` of the tree; `cores` pins it with taskset (None: every core)."""
    if home.exists():
        shutil.rmtree(home)
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": pythonpath or str(ROOT)}
    env.pop("RECALL_INDEX_MAX_FILES", None)
    cmd = [sys.executable, "-m", package, "index", str(tree), "--json"]
    if cores:
        cmd = ["taskset", "-c", ",".join(str(c) for c in range(cores)), *cmd]
    load = os.getloadavg()
    before = os.times()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    memory = TreeMemory(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    peak = memory.stop()
    after = os.times()
    if proc.returncode != 0:
        raise RuntimeError(f"recall index failed ({proc.returncode}): {err[-2000:]}")
    summary = json.loads(out)
    stores = list((home / "architecture").glob("*.sqlite*"))
    return {
        "cores": cores or os.cpu_count(),
        "wall_s": round(wall, 1),
        "cpu_s": round(
            after.children_user + after.children_system - before.children_user - before.children_system, 1
        ),
        "peak_mb": round(peak / 1024, 1),
        "index_mb": round(sum(p.stat().st_size for p in stores) / 1e6, 1),
        "loadavg_before": [round(x, 2) for x in load],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "summary": {
            k: summary.get(k)
            for k in (
                "files",
                "parsed",
                "skipped",
                "symbols",
                "import_edges",
                "calls",
                "syntax_errors",
                "unread_lines",
                "lines",
                "phases_s",
                "capped_at",
                "seconds",
            )
            if k in summary
        },
    }


def recall_index(tree: Path, home: Path) -> tuple[dict, float]:
    """`recall index --json` over the index in `home`: its summary and the wall time."""
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "recall_agent", "index", str(tree), "--json"]
    out = sh(cmd, env=env, capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - started


def refresh(tree: Path, home: Path) -> dict:
    """`recall index` over an existing index (nothing to parse when the tree is unchanged)."""
    summary, wall = recall_index(tree, home)
    return {
        "refresh_s": round(wall, 2),
        "parsed": summary["parsed"],
        "files": summary["files"],
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def reindex_after_edit(tree: Path, home: Path) -> dict:
    """The index kept current: one header touched and edited, then `recall index` again."""
    path = tree / "include/linux/kref.h"
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n/* bench edit */\n")
        summary, wall = recall_index(tree, home)
    finally:
        path.write_bytes(original)
    return {"wall_s": round(wall, 2), "parsed": summary["parsed"]}


# --------------------------------------------------------------------------- partial parses recovered


def recovery(tree: Path, files: list[str]) -> dict:
    """Definitions, calls and unread lines of a fixed sample of C files, raw and with annotations blanked."""
    from recall_agent.architecture import extract
    from recall_agent.architecture.lang.cfamily import blank_annotations
    from recall_agent.architecture.languages import BY_NAME

    sample = [
        f
        for f in files
        if f.endswith((".c", ".h")) and int(hashlib.sha256(f.encode()).hexdigest(), 16) % 20 == 0
    ]
    totals = {
        k: {"files_with_errors": 0, "unread_lines": 0, "definitions": 0, "calls": 0}
        for k in ("raw", "blanked")
    }
    lines = 0
    for rel in sample:
        data = (tree / rel).read_bytes()
        if b"\0" in data[:8192] or len(data) > 1_000_000:
            continue
        lines += data.count(b"\n") + 1
        for label, source in (("raw", data), ("blanked", blank_annotations(data))):
            facts = extract.extract(BY_NAME["c"], source)
            t = totals[label]
            t["files_with_errors"] += bool(facts.errors)
            t["unread_lines"] += facts.errors
            t["definitions"] += len(facts.symbols)
            t["calls"] += len(facts.calls)
    return {"sample_files": len(sample), "sample_lines": lines, **totals}


# --------------------------------------------------------------------------- answers


def answer_latency(tree: Path, home: Path, package: str = "recall_agent", pythonpath: str = "") -> list[dict]:
    """The ten questions in-process (median of 3) and each as a whole `recall --scope architecture` process:
    its wall time and its CPU time (user + system: what a quiet machine's wall time cannot go below)."""
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": pythonpath or str(ROOT)}
    code = (
        "import json, statistics, sys, time\n"
        f"from {package}.architecture import query\n"
        "out = []\n"
        "for q in json.loads(sys.argv[2]):\n"
        "    times, results = [], []\n"
        "    for _ in range(3):\n"
        "        t = time.perf_counter(); results = query(q, sys.argv[1], limit=3); times.append(time.perf_counter() - t)\n"
        "    head = results[0].content.splitlines()[0][:160] if results else ''\n"
        "    out.append({'question': q, 'in_process_s': round(statistics.median(times), 3), 'headline': head})\n"
        "print(json.dumps(out))\n"
    )
    rows = json.loads(
        sh(
            [sys.executable, "-c", code, str(tree), json.dumps(QUESTIONS)],
            env=env,
            capture_output=True,
            text=True,
        ).stdout
    )
    for row in rows:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", package, "--scope", "architecture", row["question"]],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        row["cli_s"] = round(time.perf_counter() - started, 3)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        row["cli_cpu_s"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3)
        row["cli_ok"] = proc.returncode == 0 and "[Architecture]" in proc.stdout
        row["loadavg"] = round(os.getloadavg()[0], 2)
    return rows


def cli_rounds(tree: Path, home: Path, versions: list[tuple[str, str, str]], rounds: int) -> dict:
    """Each question as a fresh `recall --scope architecture` process, `rounds` times per version, the
    versions (label, package, PYTHONPATH) alternated question by question so they share the load: CPU
    (user + system) and wall time, min and median."""
    out: dict[str, dict] = {label: {} for label, _, _ in versions}
    for question in QUESTIONS:
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in versions}
        for _ in range(rounds):
            for label, package, pythonpath in versions:
                env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": pythonpath}
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                proc = subprocess.run(
                    [sys.executable, "-m", package, "--scope", "architecture", question],
                    cwd=tree,
                    env=env,
                    capture_output=True,
                    text=True,
                )
                wall = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                if proc.returncode != 0 or "[Architecture]" not in proc.stdout:
                    raise SystemExit(f"{label} failed on {question!r}: {proc.stderr[-300:]}")
                runs[label].append((cpu, wall))
        for label, found in runs.items():
            cpus, walls = [c for c, _ in found], [w for _, w in found]
            out[label][question] = {
                "cpu_min_s": round(min(cpus), 3),
                "cpu_median_s": round(statistics.median(cpus), 3),
                "wall_min_s": round(min(walls), 3),
                "wall_median_s": round(statistics.median(walls), 3),
                "loadavg": round(os.getloadavg()[0], 2),
            }
    return {"rounds": rounds, "versions": [label for label, _, _ in versions], "answers": out}


# --------------------------------------------------------------------------- callers against cscope


def cscope_db(tree: Path, cache: Path, files: list[str]) -> Path:
    if shutil.which("cscope") is None:
        apt_install("cscope")
    db = cache / "cscope" / "cscope.out"
    if db.exists():
        return db
    db.parent.mkdir(parents=True, exist_ok=True)
    listing = db.parent / "cscope.files"
    listing.write_text("".join(f"{f}\n" for f in files if f.endswith((".c", ".h"))))
    started = time.perf_counter()
    sh(["cscope", "-b", "-q", "-k", "-i", str(listing), "-f", str(db)], cwd=tree)
    print(f"cscope database built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return db


def cscope_callers(tree: Path, db: Path, name: str) -> set[tuple[str, int]]:
    out = subprocess.run(
        ["cscope", "-d", "-L3", name, "-f", str(db)],
        cwd=tree,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout
    sites = set()
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[2].isdigit():
            sites.add((parts[0], int(parts[2])))
    return sites


def recall_callers(conn, name: str) -> tuple[set[tuple[str, int]], int]:
    """Call sites recall lists for the most likely definition of `name`, and how many definitions it has."""
    from recall_agent.architecture import queries as q

    found = q.lookup(conn, name)
    targets = [t for t in found.targets if not t.is_file and t.name == name]
    if not targets:
        return set(), 0
    return {(h.path, h.line) for h in q.callers(conn, targets[0])}, len(targets)


def callers_vs_cscope(tree: Path, home: Path, cache: Path, files: list[str]) -> dict:
    from recall_agent.architecture import graph

    db = cscope_db(tree, cache, files)
    os.environ["RECALL_HOME"] = str(home)
    conn = graph.connect(graph.store_path(tree))
    rows, tp_all, got_all, truth_all = [], 0, 0, 0
    for name in CALLERS:
        truth = cscope_callers(tree, db, name)
        got, definitions = recall_callers(conn, name)
        tp = len(truth & got)
        tp_all, got_all, truth_all = tp_all + tp, got_all + len(got), truth_all + len(truth)
        rows.append(
            {
                "function": name,
                "cscope_sites": len(truth),
                "recall_sites": len(got),
                "definitions": definitions,
                "precision": round(tp / len(got), 3) if got else None,
                "recall": round(tp / len(truth), 3) if truth else None,
                "missed_examples": sorted(truth - got)[:3],
                "extra_examples": sorted(got - truth)[:3],
            }
        )
    conn.close()
    return {
        "functions": rows,
        "micro_precision": round(tp_all / got_all, 3) if got_all else None,
        "micro_recall": round(tp_all / truth_all, 3) if truth_all else None,
        "macro_precision": round(
            statistics.mean(r["precision"] for r in rows if r["precision"] is not None), 3
        ),
        "macro_recall": round(statistics.mean(r["recall"] for r in rows if r["recall"] is not None), 3),
    }


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--cache", type=Path, default=HERE / ".cache" / "kernel", help="where the kernel is unpacked"
    )
    ap.add_argument("--skip-1-core", action="store_true", help="index on every core only")
    ap.add_argument(
        "--only-1-core",
        action="store_true",
        help="the 1-core index only; the other steps use the every-core index of an earlier run",
    )
    ap.add_argument(
        "--reuse-index",
        action="store_true",
        help="keep the every-core index of an earlier run (brought up to date, not rebuilt) for the other steps",
    )
    ap.add_argument("--release", default="", help="also index with this commit's recall (e.g. 87d8fdf)")
    ap.add_argument(
        "--answers-only",
        action="store_true",
        help="after the index: only the re-index of one header and the ten answers (no recovery, no cscope)",
    )
    ap.add_argument(
        "--results",
        type=lambda p: Path(p).resolve(),
        default=RESULTS,
        help=f"JSON written (default {RESULTS.name})",
    )
    ap.add_argument(
        "--answers-release",
        default="",
        help="also answer the ten questions with this commit's recall, on the same index (e.g. 9069176)",
    )
    ap.add_argument(
        "--answers-rounds",
        type=int,
        default=0,
        help="then each question N more times as a CLI process, alternating this checkout and the"
        " --answers-release (min and median CPU and wall time)",
    )
    ap.add_argument("--no-save", action="store_true", help="print only")
    args = ap.parse_args()

    tree = kernel_tree(args.cache)
    files = git_files(tree)
    results: dict = {
        "tree": TREE,
        "git_files": len(files),
        "c_files": sum(f.endswith((".c", ".h")) for f in files),
        "cores": os.cpu_count(),
        "targets": TARGETS,
        "index": {},
    }
    homes = args.cache / "homes"
    if not args.skip_1_core:
        results["index"]["1_core"] = index_once(tree, homes / "one-core", 1)
        if not args.only_1_core:
            print_index("1 core", results["index"]["1_core"])
    home = homes / "all-cores"
    if args.only_1_core:
        print_index("1 core", results["index"]["1_core"])
        _save(results, RESULTS.with_name("large_repo_1core.json"), args.no_save)
        return 0
    if args.reuse_index and (home / "architecture").is_dir():
        results["index"]["all_cores"] = {"reused": str(home), **refresh(tree, home)}
    else:
        results["index"]["all_cores"] = index_once(tree, home, None)
        print_index(f"{os.cpu_count()} cores", results["index"]["all_cores"])
    if args.release:
        from release import package_in, release_tree

        with tempfile.TemporaryDirectory() as tmp:
            rel = release_tree(Path(tmp), args.release)
            results["release"] = {
                "commit": args.release,
                "index": index_once(tree, homes / "release", None, package_in(rel), str(rel)),
            }
        print_index(f"release {args.release}", results["release"]["index"])
    _save(
        results, RESULTS.with_name("large_repo_partial.json"), args.no_save
    )  # the index, should a later step fail
    results["reindex_one_header"] = reindex_after_edit(tree, home)
    if not args.answers_only:
        results["recovery"] = recovery(tree, files)
    results["answers"] = answer_latency(tree, home)
    with tempfile.TemporaryDirectory() as tmp:
        versions = [("this checkout", "recall_agent", str(ROOT))]
        if args.answers_release:
            from release import package_in, release_tree

            rel = release_tree(Path(tmp), args.answers_release)
            results["release_answers"] = {
                "commit": args.answers_release,
                "answers": answer_latency(tree, home, package_in(rel), str(rel)),
            }
            versions.append((f"release {args.answers_release}", package_in(rel), str(rel)))
        if args.answers_rounds:
            results["cli_rounds"] = cli_rounds(tree, home, versions, args.answers_rounds)
    if not args.answers_only:
        results["callers"] = callers_vs_cscope(tree, home, args.cache, files)
    print_rest(results)
    _save(results, args.results, args.no_save)
    return 0


def _save(results: dict, path: Path, skip: bool) -> None:
    if not skip:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")  # --results elsewhere


def print_index(label: str, r: dict) -> None:
    s = r["summary"]
    print(
        f"index on {label}: {r['wall_s']} s wall, {r['cpu_s']} s CPU, peak {r['peak_mb']} MB, index {r['index_mb']} MB,"
        f" {s.get('files')} files, {s.get('syntax_errors')} with unread lines ({s.get('unread_lines')} of"
        f" {s.get('lines')} lines), phases {s.get('phases_s')}, load {r['loadavg_before'][0]} -> {r['loadavg_after'][0]}"
    )


def print_rest(results: dict) -> None:
    r = results["reindex_one_header"]
    print(f"re-index after editing include/linux/kref.h: {r['wall_s']} s ({r['parsed']} parsed)")
    rec = results.get("recovery")
    if rec:
        print(f"\npartial parses, {rec['sample_files']} sampled C files ({rec['sample_lines']:,} lines)")
        print(f"{'':<9} {'files with errors':>17} {'unread lines':>12} {'definitions':>11} {'calls':>8}")
        for label in ("raw", "blanked"):
            t = rec[label]
            print(
                f"{label:<9} {t['files_with_errors']:>17} {t['unread_lines']:>12} {t['definitions']:>11} {t['calls']:>8}"
            )
    print(f"\n{'question':<42} {'in-process s':>12} {'CLI s':>7} {'CLI CPU s':>9} {'load':>5}  headline")
    released = {a["question"]: a for a in results.get("release_answers", {}).get("answers", [])}
    for a in results["answers"]:
        print(
            f"{a['question']:<42} {a['in_process_s']:>12} {a['cli_s']:>7} {a.get('cli_cpu_s', ''):>9}"
            f" {a['loadavg']:>5}  {a['headline'][:70]}"
        )
        if r := released.get(a["question"]):
            same = "same headline" if r["headline"] == a["headline"] else f"headline: {r['headline'][:60]}"
            print(
                f"{'  release ' + results['release_answers']['commit']:<42} {r['in_process_s']:>12}"
                f" {r['cli_s']:>7} {r['cli_cpu_s']:>9} {r['loadavg']:>5}  {same}"
            )
    rounds = results.get("cli_rounds")
    if rounds:
        print(
            f"\nCLI processes, {rounds['rounds']} rounds alternated: CPU s min / median, wall s min / median"
        )
        labels = rounds["versions"]
        print(f"{'question':<42} " + " ".join(f"{label[:30]:>30}" for label in labels))
        for question in QUESTIONS:
            cells = []
            for label in labels:
                a = rounds["answers"][label][question]
                cells.append(
                    f"{a['cpu_min_s']:.3f}/{a['cpu_median_s']:.3f} {a['wall_min_s']:.3f}/{a['wall_median_s']:.3f}"
                )
            print(f"{question:<42} " + " ".join(f"{c:>30}" for c in cells))
    c = results.get("callers")
    if not c:
        return
    print(f"\n{'callers of':<22} {'cscope':>7} {'recall':>7} {'P':>6} {'R':>6}")
    for row in c["functions"]:
        print(
            f"{row['function']:<22} {row['cscope_sites']:>7} {row['recall_sites']:>7} {row['precision']!s:>6} {row['recall']!s:>6}"
        )
    print(
        f"micro P/R {c['micro_precision']} / {c['micro_recall']}, macro P/R {c['macro_precision']} / {c['macro_recall']}"
    )


if __name__ == "__main__":
    random.seed(0)
    sys.exit(main())
