"""SWE-bench's gold patches as an outside truth for SWE-ContextBench's learnings (issue 33, eighth round).

Each of the 300 transcripts (the "Lite Past Experience" folder) names its SWE-bench instance in its first
prompt (`instance_id: django__django-12915`). The gold patches read here come from the "SWEContextBench Lite"
and "SWEContextBench Verified" folders only (Python tasks; the Multilingual folder and the Full folder are
never read), at the commit pinned in bench/sessions/sources.json (`swecb`, its `gold`), cached under
bench/.cache/swecb_gold/ by `--fetch`.

Those folders hold the benchmark's *related* (later) tasks, not the 300 base tasks the sessions solved, so:

- `agreement` (the census calls it): for the sessions whose own instance has a gold patch there, the share
  of their source-edit learnings (task, prompt-reported and failed-run ones apart) whose named source files
  are all among the gold patch's files;
- `pairs`: a later task whose problem statement or hints cite a base instance of the same repository by its
  number (`#25638`, `/pull/3364`) is paired with that instance's session. For each pair, with real `recall`
  processes on a store of all 300 sessions (this checkout, and the release beside it): is a learning of the
  earlier session among the first 1 / 3 answers to the later task's title (its task line) or to its whole
  problem statement (what an agent would paste into `/recall`), and does that learning name a file the later
  task's gold patch changes?

    python3 bench/gold.py --fetch --mirrors /work/.mirror     # the gold patches, into the cache
    nice python3 bench/gold.py --pairs --release f0803a2      # retrieval on the real pairs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CACHE = BENCH / ".cache" / "swecb_gold"
FOLDERS = (
    "SWEContextBench Lite",
    "SWEContextBench Verified",
)  # Python tasks only; never Multilingual or Full
TRANSCRIPTS = BENCH / ".cache" / "sessions" / "swecb"
SOURCES = BENCH / "sessions" / "sources.json"
_INSTANCE = re.compile(r"instance_id: ([A-Za-z0-9_.-]{1,120})")
_SESSION = re.compile(r'"sessionId":"([0-9a-f-]{8,64})"')
_DIFF_FILE = re.compile(r"^diff --git a/(\S{1,500}) b/", re.M)
_CITED = re.compile(r"(?:#|/pull/|/issues/)(\d{3,6})\b")


def fetch(mirrors: Path) -> int:
    """The pinned commit's Lite and Verified task files, into the cache (nothing else is read)."""
    source = json.loads(SOURCES.read_text())["swecb"]
    git_dir = mirrors / source["repo"].replace("/", "+") / "repo"
    n = 0
    for folder in FOLDERS:
        names = subprocess.run(
            ["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", f"{source['commit']}:cases/{folder}"],
            capture_output=True, text=True, check=True,
        ).stdout.split("\n")  # fmt: skip
        (CACHE / folder).mkdir(parents=True, exist_ok=True)
        for name in (n for n in names if n.endswith(".json")):
            target = CACHE / folder / name
            if not target.exists():
                blob = subprocess.run(
                    ["git", "--git-dir", str(git_dir), "show", f"{source['commit']}:cases/{folder}/{name}"],
                    capture_output=True, check=True,
                ).stdout  # fmt: skip
                target.write_bytes(blob)
            n += 1
    return n


def tasks() -> dict[str, dict[str, Any]]:
    """instance id -> {repo, files (the gold patch's), statement, hints} of the cached Lite and Verified tasks."""
    out: dict[str, dict[str, Any]] = {}
    for folder in FOLDERS:
        for path in sorted((CACHE / folder).glob("*.json")):
            d = json.loads(path.read_text())
            out[str(d["instance_id"])] = {
                "repo": d.get("repo"),
                "files": sorted(set(_DIFF_FILE.findall(str(d.get("patch") or "")))),
                "statement": str(d.get("problem_statement") or ""),
                "hints": str(d.get("hints_text") or ""),
            }
    return out


def instances() -> dict[str, str]:
    """session id (and transcript stem) -> the SWE-bench instance its first prompt names."""
    out: dict[str, str] = {}
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        text = path.read_text(encoding="utf-8", errors="replace")
        found, sid = _INSTANCE.search(text), _SESSION.search(text)
        if found:
            out[path.stem] = found.group(1)
            if sid:
                out[sid.group(1)] = found.group(1)
    return out


def kind_of(lr: dict[str, Any]) -> str:
    fix = lr.get("fix") or {}
    return "task" if fix.get("task") else "reported" if fix.get("reported") else "failed run"


def _source_files(lr: dict[str, Any]) -> list[str]:
    from recall_agent.capture.edits import TEST_FILE

    return [f for f in lr.get("file_paths_touched") or [] if not TEST_FILE.search(f)]


def _among(path: str, gold: list[str]) -> bool:
    return any(path == g or path.endswith("/" + g) for g in gold)


def agreement(credited: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind of source-edit learning: of those whose session's own instance has a gold patch in the Lite
    or Verified folders, how many name only files of that patch."""
    if not CACHE.exists():
        return {"note": "no gold patches cached (bench/gold.py --fetch)"}
    gold, of = tasks(), instances()
    out: dict[str, Any] = {"sessions": len({k for k in of if len(k) == 8}),
                           "sessions_with_gold": len({v for v in of.values() if v in gold})}  # fmt: skip
    for kind in ("task", "reported", "failed run"):
        mine = [lr for lr in credited if kind_of(lr) == kind and _source_files(lr)]
        judged = [lr for lr in mine if of.get(str(lr.get("session_id"))) in gold]
        agree = sum(
            all(_among(f, gold[of[str(lr.get("session_id"))]]["files"]) for f in _source_files(lr))
            for lr in judged
        )
        out[kind] = {"learnings": len(mine), "with_gold": len(judged), "files_in_gold": agree}
    return out


def print_agreement(g: dict[str, Any]) -> None:
    if "note" in g:
        print("   gold patches:", g["note"])
        return
    parts = [
        f"{k}: {g[k]['files_in_gold']} of {g[k]['with_gold']}" for k in ("task", "reported", "failed run")
    ]
    print(f"   gold patches (Lite/Verified folders): {g['sessions_with_gold']} of {g['sessions']} sessions' own "
          f"instances have one; source files all in it, per kind: {'; '.join(parts)}")  # fmt: skip


def pairs() -> list[dict[str, Any]]:
    """Later tasks that cite a base instance of the same repository by number, with that instance's session."""
    gold, of = tasks(), instances()
    sessions_of: dict[str, str] = {}
    for key, inst in of.items():
        if len(key) > 8:
            sessions_of.setdefault(inst, key)
    base = {}
    for inst in sessions_of:
        repo, number = inst.rsplit("-", 1)
        base[(repo, number)] = inst
    out = []
    for later, t in sorted(gold.items()):
        repo = later.rsplit("-", 1)[0]
        cited = sorted(set(_CITED.findall(t["statement"] + "\n" + t["hints"])))
        for number in cited:
            earlier = base.get((repo, number))
            if earlier and earlier != later:
                out.append({"later": later, "earlier": earlier, "session": sessions_of[earlier],
                            "files": t["files"], "statement": t["statement"]})  # fmt: skip
    return out


def ask(package: str, pythonpath: Path, home: Path, text: str, repo: str) -> list[dict[str, Any]]:
    """The learnings a real `recall` process answers for `text` (JSON format), best first."""
    env = dict(os.environ, RECALL_HOME=str(home), PYTHONPATH=str(pythonpath))
    env.pop("RECALL_SERVER_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", package, "--scope", "learnings", "--format", "json", "--repo", repo,
         "--max-results", "3", "--stdin"],
        input=text, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        return []
    response = (data.get("learnings") or {}).get("response") or {}
    return [m for m in response.get("matches") or [] if isinstance(m, dict)]


def run_pairs(release: str) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH))
    sys.path.insert(0, str(BENCH / "sessions"))
    import labels as L
    from bench_capture import import_learnings, per_session
    from release import package_in, release_tree

    from recall_agent.capture.task import task_line

    found = pairs()
    labels = [L.Label("swecb", p.stem, "", {}, p) for p in sorted(TRANSCRIPTS.glob("*.jsonl"))]
    report: dict[str, Any] = {"load_average": os.getloadavg(), "pairs": len(found), "systems": {}}
    with tempfile.TemporaryDirectory(prefix="recall-bench-gold-") as tmp:
        work = Path(tmp)
        systems = [("recall", ROOT)] + (
            [(f"release {release}", release_tree(work, release))] if release else []
        )
        for name, tree in systems:
            stored, _ = import_learnings(labels, tree, work, rows=True)
            repo = str(stored[0].get("repo")) if stored else "r"
            home = work / f"home-{len(report['systems'])}"
            (work / "home").rename(home)
            met: dict[str, set[str]] = {}  # learning id -> the sessions that met its cause
            for lr in per_session(stored, home / "learnings.db"):
                met.setdefault(str(lr.get("id")), set()).add(str(lr.get("session_id")))
            package = package_in(None if tree == ROOT else tree)
            report["systems"][name] = {}
            for mode in ("title", "statement"):
                rows = []
                for p in found:
                    query = (
                        (task_line(p["statement"]) or p["statement"][:400])
                        if mode == "title"
                        else p["statement"]
                    )
                    matches = ask(package, tree, home, query[:4000], repo)
                    rank = next(
                        (
                            i + 1
                            for i, m in enumerate(matches)
                            if p["session"] in met.get(str(m.get("learning_id")), ())
                        ),
                        None,
                    )
                    hit = matches[rank - 1] if rank else None
                    rows.append({"later": p["later"], "earlier": p["earlier"], "query": query[:200], "rank": rank,
                                 "answers": len(matches), "kind": kind_of(hit) if hit else None,
                                 "names_gold_file": bool(hit) and any(
                                     _among(f, p["files"]) for f in hit.get("file_paths_touched") or []),
                                 "earlier_kinds": sorted({kind_of(lr) for lr in stored
                                                          if p["session"] in met.get(str(lr.get("id")), ())})})  # fmt: skip
                n = len(rows)
                report["systems"][name][mode] = {
                    "r_at_1": round(sum(r["rank"] == 1 for r in rows) / n, 3) if n else None,
                    "r_at_3": round(sum(r["rank"] is not None for r in rows) / n, 3) if n else None,
                    "earlier_with_a_task_learning": sum("task" in r["earlier_kinds"] for r in rows),
                    "found_names_a_gold_file": sum(r["names_gold_file"] for r in rows),
                    "rows": rows,
                }
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fetch", action="store_true", help="cache the Lite and Verified task files")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--pairs", action="store_true", help="retrieval on the real later/earlier pairs")
    ap.add_argument("--release", default="", help="commit imported side by side ('' skips)")
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "gold_pairs.json")
    args = ap.parse_args(argv)
    if args.fetch:
        print(f"{fetch(args.mirrors)} task files cached under {CACHE}")
    if args.pairs:
        report = run_pairs(args.release)
        for name, system in report["systems"].items():
            for mode, r in system.items():
                print(f"{name}, the later task's {mode} as the query: {report['pairs']} pairs; R@1 {r['r_at_1']}, "
                      f"R@3 {r['r_at_3']}; earlier sessions with a task learning "
                      f"{r['earlier_with_a_task_learning']}; the found learning names a file of the later gold "
                      f"patch {r['found_names_a_gold_file']}")  # fmt: skip
                for row in r["rows"]:
                    print(f"   {row['later']:<34} <- {row['earlier']:<34} rank {row['rank']} of {row['answers']} "
                          f"{row['kind'] or ''} (earlier: {', '.join(row['earlier_kinds'])})")  # fmt: skip
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
