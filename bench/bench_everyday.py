"""Everyday errors (issue 38): does the architecture answer name what a useful answer must, with no learnings?

    nice python3 bench/bench_everyday.py                 # this checkout and the release, side by side
    nice python3 bench/bench_everyday.py --release ''    # this checkout only
    python3 bench/bench_everyday.py --half tune          # only the tuning half (never tune on `held`)

Data: bench/everyday/errors.yaml — 70 errors an agent hits every day (a missing module or package, a
missing command, a failing test by id, a message the project raises) on 11 public repositories in six
languages, each labelled (before the code that answers them was written) with what a useful answer must
name: groups of alternatives, one of each group in the answer's architecture part, and text it must not
say. The split is by project (`half` in the file). Checkouts go to bench/.cache/everyday/ (never
committed): a PyPI sdist (`pip download --no-binary :all:`, checked against its pinned sha256) or `git
archive` of the search tool's mirror (/work/.mirror/<owner>+<name>/repo) at the tag named, which must
resolve to the pinned commit.

Each tree (this checkout; the release, `git archive` of RELEASE) runs in a worker process of its own
(`--worker TREE`) with an empty RECALL_HOME: it indexes each project once, then asks every error through
`<package>.architecture.query()` as a plain `recall "<error>"` does (both roles, 5 results). An error is
answered usefully when the joined contents satisfy its label. Latency is per question after the index
exists (it includes the check that the index is current), p50/p95 over all errors.
Results: bench/results/everyday.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from release import package_in, release_tree  # noqa: E402

DATA = ROOT / "bench" / "everyday" / "errors.yaml"
CACHE = ROOT / "bench" / ".cache" / "everyday"
MIRRORS = Path("/work/.mirror")
RESULTS = ROOT / "bench" / "results" / "everyday.json"
RELEASE = "092b9df"  # main when issue 38 started


def checkout(spec: dict) -> Path:
    kind, _, what = spec["source"].partition(":")
    if kind == "pypi":
        dest = CACHE / spec["root"]
        if not dest.is_dir():
            CACHE.mkdir(parents=True, exist_ok=True)
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", what]
            subprocess.run([*pip, "-d", str(CACHE)], check=True)
            archive = CACHE / f"{spec['root']}.tar.gz"
            digest = hashlib.sha256(archive.read_bytes()).hexdigest()
            if digest != spec["sha256"]:
                raise SystemExit(f"{archive.name}: sha256 {digest}, the data pins {spec['sha256']}")
            subprocess.run(["tar", "-xzf", str(archive), "-C", str(CACHE)], check=True)
        return dest
    repo, _, ref = what.partition("@")
    dest = CACHE / repo.replace("/", "+")
    if dest.is_dir() and any(dest.iterdir()):
        return dest
    mirror = MIRRORS / repo.replace("/", "+") / "repo"
    if not mirror.is_dir():
        raise SystemExit(f"{repo}: no mirror at {mirror} (bring it with the search tool's fetch)")
    resolved = subprocess.run(
        ["git", "-C", str(mirror), "rev-parse", f"{ref}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if resolved != spec["commit"]:
        raise SystemExit(f"{repo}@{ref} is {resolved} in the mirror, the data pins {spec['commit']}")
    dest.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(mirror), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def useful(text: str, error: dict) -> bool:
    if any(bad in text for bad in error.get("must_not", [])):
        return False
    return all(any(alt in text for alt in group) for group in error["must"])


def worker(tree: str, jobs: str) -> int:
    """Runs in its own process: index each project, ask each error; prints JSON rows."""
    sys.path.insert(0, tree or str(ROOT))  # ahead of the editable install
    package = package_in(Path(tree) if tree else None)
    query = __import__(f"{package}.architecture", fromlist=["query"]).query
    open_index = __import__(f"{package}.architecture.indexer", fromlist=["open_index"]).open_index
    rows = []
    for job in json.loads(Path(jobs).read_text()):
        conn, _ = open_index(job["root"], progress=False)
        conn.close()
        for message in job["messages"]:
            t = time.perf_counter()
            results = query(message, job["root"], limit=5)
            took = time.perf_counter() - t
            rows.append({"message": message, "s": took, "text": "\n".join(r.content for r in results)})
    print(json.dumps(rows))
    return 0


def run_tree(name: str, tree: Path | None, jobs: Path) -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, RECALL_HOME=home)
        argv = [sys.executable, __file__, "--worker", str(tree or ""), "--jobs", str(jobs)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{name}: worker failed\n{done.stderr[-3000:]}")
    return {r["message"]: r for r in json.loads(done.stdout)}


def summarize(errors: list[dict], projects: dict, got: dict[str, dict]) -> dict:
    out: dict = {}
    for half in ("tune", "held", "all"):
        mine = [e for e in errors if half == "all" or projects[e["project"]]["half"] == half]
        ok = [e for e in mine if useful(got[e["message"]]["text"], e)]
        share = round(len(ok) / len(mine), 3) if mine else 0.0
        out[half] = {"errors": len(mine), "useful": len(ok), "share": share}
    kinds = sorted({e["kind"] for e in errors})
    out["by_kind"] = {
        k: f"{sum(useful(got[e['message']]['text'], e) for e in errors if e['kind'] == k)}/"
        f"{sum(e['kind'] == k for e in errors)}"
        for k in kinds
    }
    langs = sorted({projects[e["project"]]["lang"] for e in errors})
    out["by_lang"] = {
        lang: f"{sum(useful(got[e['message']]['text'], e) for e in errors if projects[e['project']]['lang'] == lang)}/"
        f"{sum(projects[e['project']]['lang'] == lang for e in errors)}"
        for lang in langs
    }
    ms = sorted(got[e["message"]]["s"] * 1000 for e in errors)
    out["latency_ms"] = {
        "p50": round(statistics.median(ms), 1),
        "p95": round(ms[int(0.95 * (len(ms) - 1))], 1),
    }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", default=RELEASE, help="commit measured side by side ('' for none)")
    ap.add_argument("--half", choices=("tune", "held", "all"), default="all")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", help=argparse.SUPPRESS)
    ap.add_argument("--show", action="store_true", help="print each miss of the tuning half with its answer")
    ap.add_argument("--show-all", action="store_true", help="print every answer of the tuning half")
    args = ap.parse_args()
    if args.worker is not None:
        return worker(args.worker, args.jobs)
    data = yaml.safe_load(DATA.read_text())
    projects = data["projects"]
    errors = [e for e in data["errors"] if args.half == "all" or projects[e["project"]]["half"] == args.half]
    jobs = []
    for name, spec in projects.items():
        messages = [e["message"] for e in errors if e["project"] == name]
        if messages:
            jobs.append({"root": str(checkout(spec)), "messages": messages})
    out: dict = {"load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()), "trees": {}}
    with tempfile.TemporaryDirectory() as tmp:
        job_file = Path(tmp) / "jobs.json"
        job_file.write_text(json.dumps(jobs))
        trees: dict[str, Path | None] = {"this checkout": None}
        if args.release:
            trees[f"release {args.release}"] = release_tree(Path(tmp), args.release)
        answers = {}
        for name, tree in trees.items():
            answers[name] = run_tree(name, tree, job_file)
            out["trees"][name] = summarize(errors, projects, answers[name])
    out["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{'tree':<22}{'tune':>12}{'held':>12}{'all':>12}{'p50 ms':>9}{'p95 ms':>9}")
    for name, s in out["trees"].items():
        cells = [f"{s[h]['useful']}/{s[h]['errors']} {s[h]['share']:.2f}" for h in ("tune", "held", "all")]
        print(
            f"{name:<22}"
            + "".join(f"{c:>12}" for c in cells)
            + f"{s['latency_ms']['p50']:>9}{s['latency_ms']['p95']:>9}"
        )
        print(f"{'':<22}by kind {s['by_kind']}; by language {s['by_lang']}")
    print(f"load average before {out['load_before']}, after {out['load_after']}")
    out["rows"] = [
        {
            "project": e["project"],
            "half": projects[e["project"]]["half"],
            "kind": e["kind"],
            "message": e["message"],
            "useful": {name: useful(got[e["message"]]["text"], e) for name, got in answers.items()},
        }
        for e in errors
    ]
    if args.show or args.show_all:  # the answers quote the projects' code: printed, never saved
        for r in out["rows"]:
            if (args.show_all or not r["useful"]["this checkout"]) and r["half"] == "tune":
                answer = answers["this checkout"][r["message"]]["text"][:500]
                print(f"--- miss [{r['project']}/{r['kind']}] {r['message'][:100]!r}\n{answer}")
    if args.half == "all":
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(out, indent=2) + "\n")
        print(f"saved {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
