"""Error origins (issue 28): does an error's architecture answer start with the site that raises it?

    python3 bench/bench_error_origins.py            # checkouts into bench/.cache/origins/ (never committed)

Data: bench/error_origins/errors.yaml — real error messages from public issue threads, each with the
project version that raises it and the raise/log sites that build it (read in the source). Checkouts:
`git archive` of the search tool's mirror (/work/.mirror/<owner>+<name>/repo, brought by `fetch`) at the
tag named, or a PyPI sdist (`pip download --no-binary :all:`). Each project is indexed from scratch, then
every message is asked through `recall_agent.architecture.query()`; a message counts when the first
answer is the error-origin answer and its first site lies in an expected file within 10 lines of an
expected line. Messages are split by the first byte of sha256(message) (even: tune). Latency is the
query after indexing (warm process), p50 / p95 over all messages. Results: bench/results/error_origins.json.
"""

from __future__ import annotations

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
sys.path.insert(0, str(ROOT))

DATA = ROOT / "bench" / "error_origins" / "errors.yaml"
CACHE = ROOT / "bench" / ".cache" / "origins"
MIRRORS = Path("/work/.mirror")
RESULTS = ROOT / "bench" / "results" / "error_origins.json"
NEAR = 10  # lines between the answer's site and an expected one


def split(message: str) -> str:
    return "tune" if hashlib.sha256(message.encode()).digest()[0] % 2 == 0 else "held"


def checkout(name: str, spec: dict) -> Path:
    dest = CACHE / name
    if dest.is_dir() and any(dest.iterdir()):
        return dest / spec["root"] if "root" in spec else dest
    dest.mkdir(parents=True, exist_ok=True)
    kind, _, what = spec["source"].partition(":")
    if kind == "pypi":
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                what,
                "-d",
                dest,
            ],
            check=True,
        )
        archive = next(dest.glob("*.tar.gz"))
        subprocess.run(["tar", "-xzf", str(archive), "-C", str(dest)], check=True)
        archive.unlink()
        return dest / spec["root"]
    repo, _, ref = what.partition("@")
    mirror = MIRRORS / repo.replace("/", "+") / "repo"
    if not mirror.is_dir():
        raise SystemExit(f"{repo}: no mirror at {mirror} (bring it with the search tool's fetch)")
    tar = subprocess.run(["git", "-C", str(mirror), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def hit(result, expect: list[str]) -> bool:
    extras = result.model_extra or {}
    if extras.get("answer") != "error_origin" or not extras.get("sites"):
        return False
    site = extras["sites"][0]
    for want in expect:
        path, _, line = want.rpartition(":")
        if site["file"] == path and abs(site["line"] - int(line)) <= NEAR:
            return True
    return False


def main() -> int:
    from recall_agent.architecture import query
    from recall_agent.architecture.indexer import open_index

    data = yaml.safe_load(DATA.read_text())
    rows: list[dict] = []
    per_project: dict[str, dict] = {}
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        os.environ["RECALL_HOME"] = home
        for name, spec in data["projects"].items():
            errors = [e for e in data["errors"] if e["project"] == name]
            if not errors:
                continue
            root = checkout(name, spec)
            t0 = time.perf_counter()
            conn, stats = open_index(root, progress=False)
            conn.close()
            indexed = time.perf_counter() - t0
            found = 0
            for e in errors:
                t = time.perf_counter()
                results = query(e["message"], str(root), roles={"repowise"}, limit=5)
                latencies.append(time.perf_counter() - t)
                ok = bool(results) and hit(results[0], e["expect"])
                found += ok
                first = (results[0].model_extra or {}) if results else {}
                got = (first.get("sites") or [{}])[0] if first.get("answer") == "error_origin" else {}
                rows.append(
                    {
                        "project": name,
                        "split": split(e["message"]),
                        "from": e["from"],
                        "ok": ok,
                        "got": f"{got.get('file')}:{got.get('line')}" if got else first.get("answer"),
                        "expect": e["expect"],
                    }
                )
            per_project[name] = {
                "lang": spec["lang"],
                "messages": len(errors),
                "raise_site_first": found,
                "files": stats.files,
                "index_s": round(indexed, 2),
            }
            print(
                f"{name:<14}{spec['lang']:<12}{found:>3}/{len(errors):<3} index {indexed:6.1f} s ({stats.files} files)"
            )
    out: dict = {"projects": per_project, "load": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    for half in ("tune", "held"):
        mine = [r for r in rows if r["split"] == half]
        out[half] = {
            "messages": len(mine),
            "share": round(sum(r["ok"] for r in mine) / len(mine), 3) if mine else None,
        }
    out["all"] = {"messages": len(rows), "share": round(sum(r["ok"] for r in rows) / len(rows), 3)}
    ms = sorted(x * 1000 for x in latencies)
    out["latency_ms"] = {
        "p50": round(statistics.median(ms), 1),
        "p95": round(ms[int(0.95 * (len(ms) - 1))], 1),
    }
    out["misses_tune"] = [r for r in rows if r["split"] == "tune" and not r["ok"]]
    out["rows"] = rows
    print(
        f"raise site first: tune {out['tune']['share']} ({out['tune']['messages']}), held {out['held']['share']}"
        f" ({out['held']['messages']}), all {out['all']['share']}; latency p50 {out['latency_ms']['p50']} ms,"
        f" p95 {out['latency_ms']['p95']} ms; load {out['load']}"
    )
    for r in out["misses_tune"]:
        print(f"  tune miss [{r['project']}] {r['from']}: got {r['got']}, expected {r['expect']}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"saved {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
