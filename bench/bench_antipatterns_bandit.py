"""Antipatterns next to bandit: coverage of bandit's labelled examples, false alarms on real packages, speed,
and questions written as code.

    python3 bench/bench_antipatterns_bandit.py           # ~2-4 min on the 2-core machine
    python3 bench/bench_antipatterns_bandit.py --no-time # skip the timing runs
    python3 bench/bench_antipatterns_bandit.py --eslint  # also weigh eslint-plugin-security (npm)

Data (downloaded with pip into $RECALL_BENCH_CACHE, default ~/.cache/recall-bench; never committed):
1. bandit's own `examples/` from its sdist (the installed bandit version): bandit's findings are the labels.
   Per mapped check: how many of bandit's findings (file, line, check) recall reports as the catalog entry
   the check maps to; precision of recall's detections (right = bandit reports a mapped check on that line,
   or judged right by hand in bench/antipatterns_labeled/bandit_judged.yaml); the checks no entry maps.
2. Three popular packages no other benchmark here uses (urllib3, tornado, attrs; sdists with their tests):
   detections per 10k lines outside tests, every one judged by hand in bandit_judged.yaml (risk / false
   alarm); files split by a hash of their path into a tuning and a held-out half, both reported.
3. Time per 10k lines, recall's whole catalog against the bandit CLI on the same files: each as a fresh
   process (imports included), and in one process.
4. Questions written as code (bench/antipatterns_labeled/code_queries.yaml, split fixed before tuning):
   top-1 of `query()` against the catalog ranking alone (what the engine did before).
5. With --eslint: eslint-plugin-security's recommended rules (npm) on koa's lib/ and lodash.js, next to
   recall's JavaScript detectors on the same files.
Prints tables and writes bench/results/antipatterns_bandit.json.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recall_agent.antipatterns.catalog import Catalog, load_catalog  # noqa: E402
from recall_agent.antipatterns.scan import detect, is_test_path  # noqa: E402
from recall_agent.antipatterns.source import ScanContext  # noqa: E402

CACHE = Path(os.environ.get("RECALL_BENCH_CACHE", Path.home() / ".cache" / "recall-bench"))
LABELED = ROOT / "bench" / "antipatterns_labeled"
RESULTS = ROOT / "bench" / "results" / "antipatterns_bandit.json"
PACKAGES = (("urllib3", "2.2.3"), ("tornado", "6.4.2"), ("attrs", "24.2.0"))
BANDIT = importlib.metadata.version("bandit")


# --------------------------------------------------------------------------- data


def sdist(name: str, version: str) -> Path:
    """The unpacked sdist of name==version in the cache (pip download on first use)."""
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        + [f"{name}=={version}", "-d", str(CACHE)],
        check=True,
    )
    archive = next(CACHE.glob(f"{name}-{version}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    return target


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def scan_files(catalog: Catalog, root: Path, files: list[Path]) -> list[tuple[str, int, str]]:
    """(relative path, line, entry id) of every hit of recall's detectors (tests as the engine judges them)."""
    out = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        ctx = ScanContext(path.read_text(encoding="utf-8", errors="replace"), "python", rel)
        in_test = is_test_path(rel)
        for entry_id, hits in detect(catalog, ctx, []).items():
            if in_test and catalog.entries[entry_id].in_tests == "skip":
                continue
            out += [(rel, h.line, entry_id) for h in hits]
    return out


def bandit_cli(root: Path, skips: str = "") -> tuple[list[dict], float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = ["bandit", "-q", "-r", str(root), "-f", "json", "-o", out.name]
        if skips:
            cmd += ["-s", skips]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=False, capture_output=True)
        elapsed = time.perf_counter() - t0
        return json.loads(Path(out.name).read_text())["results"], elapsed


def check_map(catalog: Catalog) -> dict[str, str]:
    """bandit test id -> the catalog entry whose `kind: bandit` detector carries it."""
    out = {}
    for entry in catalog.entries.values():
        for det in entry.detectors:
            for check in det.checks:
                out[check] = entry.id
    return out


def judged() -> dict[str, dict]:
    path = LABELED / "bandit_judged.yaml"
    return yaml.safe_load(path.read_text()) if path.exists() else {}


# --------------------------------------------------------------------------- 1. bandit's examples


def bench_examples(catalog: Catalog) -> dict:
    root = sdist("bandit", BANDIT) / "examples"
    mapping = check_map(catalog)
    findings, _ = bandit_cli(root)
    labels = {
        (Path(f["filename"]).relative_to(root).as_posix(), f["line_number"], f["test_id"]) for f in findings
    }
    label_lines = defaultdict(set)  # (file, entry) -> lines bandit reports a mapped check on
    for f in findings:
        rel = Path(f["filename"]).relative_to(root).as_posix()
        entry = mapping.get(f["test_id"])
        if entry:
            label_lines[(rel, entry)] |= set(f["line_range"]) | {f["line_number"]}
    detections = set(scan_files(catalog, root, python_files(root)))
    detected = defaultdict(set)
    for rel, line, entry in detections:
        detected[(rel, entry)].add(line)

    per_check: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unmapped: Counter[str] = Counter()
    for rel, line, check in labels:
        entry = mapping.get(check)
        if entry is None:
            unmapped[check] += 1
            continue
        per_check[check][1] += 1
        per_check[check][0] += line in detected[(rel, entry)]
    hand = judged().get("examples", {})
    right, by_hand, wrong, unjudged = 0, 0, [], []
    for rel, line, entry in sorted(detections):
        if line in label_lines[(rel, entry)]:
            right += 1
            continue
        verdict = hand.get(f"{rel}:{line} {entry}")
        if verdict is None:
            unjudged.append(f"{rel}:{line} {entry}")
        elif verdict.startswith("right"):
            by_hand += 1
        else:
            wrong.append(f"{rel}:{line} {entry}: {verdict}")
    found = sum(f for f, _ in per_check.values())
    total = sum(t for _, t in per_check.values())
    names = {f["test_id"]: f["test_name"] for f in findings}
    return {
        "bandit": BANDIT,
        "files": len(python_files(root)),
        "bandit_findings": len(labels),
        "mapped_findings": total,
        "found": found,
        "coverage": round(found / total, 3) if total else None,
        "per_check": {
            c: {"name": names.get(c, ""), "entry": mapping[c], "found": f, "total": t}
            for c, (f, t) in sorted(per_check.items())
        },
        "unmapped": {c: {"name": names.get(c, ""), "findings": n} for c, n in sorted(unmapped.items())},
        "detections": len(detections),
        "right_by_bandit": right,
        "right_by_hand": by_hand,
        "wrong": wrong,
        "unjudged": unjudged,
        "precision": round((right + by_hand) / len(detections), 3) if detections else None,
    }


# --------------------------------------------------------------------------- 2. false alarms on packages


def half(rel: str) -> str:
    return "tune" if hashlib.sha1(rel.encode()).digest()[0] % 2 == 0 else "held"


def bench_packages(catalog: Catalog) -> dict:
    hand = judged().get("packages", {})
    rows = {}
    for name, version in PACKAGES:
        root = sdist(name, version)
        files = python_files(root)
        lines = {"tune": 0, "held": 0}
        for p in files:
            rel = p.relative_to(root).as_posix()
            if not is_test_path(rel):
                lines[half(rel)] += len(p.read_text(encoding="utf-8", errors="replace").splitlines())
        found = [d for d in scan_files(catalog, root, files) if not is_test_path(d[0])]
        row: dict = {"version": version, "files": len(files), "lines_outside_tests": lines}
        for split in ("tune", "held"):
            mine = [d for d in found if half(d[0]) == split]
            verdicts = {
                f"{name}/{rel}:{line} {entry}": hand.get(f"{name}/{rel}:{line} {entry}")
                for rel, line, entry in mine
            }
            alarms = [k for k, v in verdicts.items() if not (v or "").startswith("risk")]
            row[split] = {
                "detections": len(mine),
                "risks": [f"{k}: {v}" for k, v in verdicts.items() if (v or "").startswith("risk")],
                "false_alarms": [f"{k}: {verdicts[k] or 'UNJUDGED'}" for k in alarms],
                "false_alarms_per_10k": round(10_000 * len(alarms) / lines[split], 2)
                if lines[split]
                else None,
            }
        rows[name] = row
    total: dict = {}
    for split in ("tune", "held"):
        lines = sum(r["lines_outside_tests"][split] for r in rows.values())
        alarms = sum(len(r[split]["false_alarms"]) for r in rows.values())
        per10k = round(10_000 * alarms / lines, 2)
        total[split] = {"lines": lines, "false_alarms": alarms, "false_alarms_per_10k": per10k}
    rows["all"] = total
    return rows


# --------------------------------------------------------------------------- 3. time


_RECALL_SCAN = """
import sys, time
from pathlib import Path
t0 = time.perf_counter()
from recall_agent.antipatterns.catalog import load_catalog
from recall_agent.antipatterns.scan import detect
from recall_agent.antipatterns.source import ScanContext
catalog = load_catalog()
n = 0
for p in sorted(Path(sys.argv[1]).rglob("*.py")):
    n += len(detect(catalog, ScanContext(p.read_text(encoding="utf-8", errors="replace"), "python", str(p)), []))
print(n, time.perf_counter() - t0)
"""


def _recall_process(root: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", _RECALL_SCAN, str(root)], check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t0


def _in_process(catalog: Catalog, root: Path) -> tuple[float, float]:
    """(recall's whole catalog, bandit alone through recall's adapter) seconds over the files, warm."""
    from recall_agent.antipatterns import bandit_checks

    files = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in python_files(root)]
    t0 = time.perf_counter()
    for p, text in files:
        detect(catalog, ScanContext(text, "python", str(p)), [])
    t1 = time.perf_counter()
    for p, text in files:
        bandit_checks.findings(ScanContext(text, "python", str(p)))
    return t1 - t0, time.perf_counter() - t1


def bench_time(catalog: Catalog, runs: int) -> dict:
    rows = {}
    for name, version in PACKAGES:
        root = sdist(name, version)
        lines = sum(
            len(p.read_text(encoding="utf-8", errors="replace").splitlines()) for p in python_files(root)
        )
        per10k = 10_000 / lines
        bandit_s = min(bandit_cli(root)[1] for _ in range(runs))
        recall_s = min(_recall_process(root) for _ in range(runs))
        warm = min((_in_process(catalog, root) for _ in range(runs)), key=lambda t: t[0])
        rows[name] = {
            "lines": lines,
            "bandit_cli_s_per_10k": round(bandit_s * per10k, 2),
            "recall_process_s_per_10k": round(recall_s * per10k, 2),
            "ratio_process": round(recall_s / bandit_s, 2),
            "recall_in_process_s_per_10k": round(warm[0] * per10k, 2),
            "bandit_in_process_s_per_10k": round(warm[1] * per10k, 2),
        }
    return rows


# --------------------------------------------------------------------------- 4. code-shaped questions


def bench_code_questions(catalog: Catalog) -> dict:
    from recall_agent.antipatterns.engine import MIN_SCORE, query, rank_entries

    queries = yaml.safe_load((LABELED / "code_queries.yaml").read_text())["queries"]
    out: dict = {}
    with tempfile.TemporaryDirectory() as empty:  # no repository: only the question is read
        for split in ("tune", "held"):
            mine = [q for q in queries if q["split"] == split]
            engine = before = 0
            misses = []
            for q in mine:
                good = {q["expect"], *q.get("also", [])}
                results = query(q["q"], empty)
                top = (results[0].model_extra or {}).get("antipattern_id") if results else None
                ranked, _ = rank_entries(catalog, q["q"])
                old = ranked[0].entry.id if ranked and ranked[0].blended >= MIN_SCORE else None
                engine += top in good
                before += old in good
                if top not in good:
                    misses.append(f"{q['q']!r}: expected {q['expect']}, got {top}")
            out[split] = {
                "questions": len(mine),
                "top1": round(engine / len(mine), 3),
                "top1_catalog_ranking_only": round(before / len(mine), 3),
                "misses": misses,
            }
    return out


# --------------------------------------------------------------------------- 5. eslint-plugin-security

ESLINT_PACKAGES = ("eslint@9.39.5", "eslint-plugin-security@3.0.1", "koa@2.15.3", "lodash@4.17.21")
ESLINT_CONFIG = """import security from "eslint-plugin-security";
export default [security.configs.recommended, {languageOptions: {ecmaVersion: "latest", sourceType: "commonjs"}}];
"""


def bench_eslint(catalog: Catalog) -> dict:
    """eslint-plugin-security's recommended rules against recall's JavaScript detectors on koa + lodash."""
    folder = CACHE / "eslint"
    if not (folder / "node_modules" / "eslint-plugin-security").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=folder, check=True, capture_output=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", *ESLINT_PACKAGES],
            cwd=folder,
            check=True,
            capture_output=True,
        )
    src = folder / "src"  # eslint ignores node_modules: copy the code out
    src.mkdir(exist_ok=True)
    files = [
        *(folder / "node_modules" / "koa" / "lib").glob("*.js"),
        folder / "node_modules" / "lodash" / "lodash.js",
    ]
    for f in files:
        (src / f"{f.parent.name}-{f.name}").write_bytes(f.read_bytes())
    (folder / "eslint.config.mjs").write_text(ESLINT_CONFIG)
    out = folder / "out.json"
    t0 = time.perf_counter()
    subprocess.run(
        [
            "npx",
            "eslint",
            "--no-config-lookup",
            "-c",
            "eslint.config.mjs",
            "-f",
            "json",
            "src",
            "-o",
            str(out),
        ],
        cwd=folder,
        check=False,
        capture_output=True,
    )
    eslint_s = time.perf_counter() - t0
    found = Counter(m["ruleId"] for f in json.loads(out.read_text()) for m in f["messages"])
    lines = sum(len(p.read_text().splitlines()) for p in src.glob("*.js"))
    t0 = time.perf_counter()
    mine: Counter[str] = Counter()
    for p in sorted(src.glob("*.js")):
        for entry, hits in detect(catalog, ScanContext(p.read_text(), "javascript", p.name), []).items():
            mine[entry] += len(hits)
    return {
        "lines": lines,
        "eslint_security": dict(found.most_common()),
        "eslint_process_s": round(eslint_s, 2),
        "recall": dict(mine.most_common()),
        "recall_in_process_s": round(time.perf_counter() - t0, 2),
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-time", action="store_true", help="skip the timing runs")
    parser.add_argument(
        "--eslint", action="store_true", help="also weigh eslint-plugin-security (npm install)"
    )
    parser.add_argument("--runs", type=int, default=3, help="timing runs per row (the fastest counts)")
    args = parser.parse_args(argv)
    catalog = load_catalog(include_shipped=True)
    result: dict = {"load": "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())}

    ex = result["examples"] = bench_examples(catalog)
    print(
        f"\n## bandit {ex['bandit']} examples/ — {ex['files']} files, {ex['bandit_findings']} bandit findings"
    )
    print(f"mapped checks: recall reports {ex['found']}/{ex['mapped_findings']} = {ex['coverage']}")
    print(f"{'check':<6}{'name':<42}{'entry':<32}{'found':>6}{'total':>6}")
    for c, r in ex["per_check"].items():
        print(f"{c:<6}{r['name'][:41]:<42}{r['entry'][:31]:<32}{r['found']:>6}{r['total']:>6}")
    print("unmapped:", ", ".join(f"{c} {r['name']} ({r['findings']})" for c, r in ex["unmapped"].items()))
    print(
        f"precision: {ex['precision']} ({ex['right_by_bandit']} by bandit + {ex['right_by_hand']} by hand of "
        f"{ex['detections']}; {len(ex['unjudged'])} unjudged count as wrong)"
    )
    for w in ex["wrong"] + [f"{u}: UNJUDGED" for u in ex["unjudged"]]:
        print("  wrong:", w)

    pk = result["packages"] = bench_packages(catalog)
    print("\n## False alarms outside tests (per 10k lines; every detection judged by hand)")
    print(f"{'package':<18}{'split':<6}{'lines':>8}{'detections':>11}{'risks':>6}{'false':>6}{'per 10k':>8}")
    for name, row in pk.items():
        if name == "all":
            continue
        for split in ("tune", "held"):
            r = row[split]
            print(
                f"{name + ' ' + row['version']:<18}{split:<6}{row['lines_outside_tests'][split]:>8}"
                f"{r['detections']:>11}{len(r['risks']):>6}{len(r['false_alarms']):>6}{r['false_alarms_per_10k']:>8}"
            )
            for a in r["false_alarms"]:
                print("    false alarm:", a)

    for split, r in pk["all"].items():
        print(
            f"all packages, {split}: {r['false_alarms']} false alarms in {r['lines']} lines = {r['false_alarms_per_10k']} per 10k"
        )

    cq = result["code_questions"] = bench_code_questions(catalog)
    print("\n## Questions written as code — top-1")
    for split, r in cq.items():
        print(
            f"{split:<6}{r['questions']:>4} questions  engine {r['top1']:.3f}  catalog ranking only {r['top1_catalog_ranking_only']:.3f}"
        )
        for m in r["misses"]:
            print("    miss:", m)

    if args.eslint:
        es = result["eslint"] = bench_eslint(catalog)
        print(
            f"\n## eslint-plugin-security (recommended) vs recall on koa lib/ + lodash.js ({es['lines']} lines)"
        )
        print(f"eslint-plugin-security: {es['eslint_security']} in {es['eslint_process_s']} s (process)")
        print(f"recall: {es['recall']} in {es['recall_in_process_s']} s (in process)")

    if not args.no_time:
        tm = result["time"] = bench_time(catalog, args.runs)
        print(f"\n## Time per 10k lines (fastest of {args.runs}; {result['load']})")
        print(
            f"{'package':<10}{'lines':>7}{'bandit CLI':>11}{'recall proc':>12}{'ratio':>6}{'recall warm':>12}{'bandit warm':>12}"
        )
        for name, r in tm.items():
            print(
                f"{name:<10}{r['lines']:>7}{r['bandit_cli_s_per_10k']:>10.2f}s{r['recall_process_s_per_10k']:>11.2f}s"
                f"{r['ratio_process']:>6.2f}{r['recall_in_process_s_per_10k']:>11.2f}s{r['bandit_in_process_s_per_10k']:>11.2f}s"
            )
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nsaved {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
