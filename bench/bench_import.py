"""`recall import-sessions`: how fast it reads a large history, and how right it is on labelled episodes.

Speed: a history of `--sessions` transcripts (default 1,000) totalling `--mb` (default 1,024 MB) is generated
under /tmp in the client's layout (bench/transcript_writer.py): per session, prompts, thinking, Read results
of whole files, edits carrying the original file, Bash runs, progress/snapshot/system entries, and error
episodes whose error texts are real tool output (bench/corpus/errors.jsonl: produced by running real tools).
Then the real command runs on it as a process (`python -m recall_agent import-sessions --all -q`, fresh
RECALL_HOME): once from scratch, once more (every file unchanged: skipped by the ledger), and once with
`--reread` (everything read again, all of it already known). Sessions/s and MB/s are wall time.

Quality: every labelled transcript in bench/corpus/transcripts/ (built by its build.py, which says how they are labelled) is read by the importer;
a stored learning is a true positive when its error signature carries the `marker` of an episode labelled
`fix: true` in that file, a false positive otherwise; recall is over the episodes labelled as fixes.
The corpus is split into a tuning and a held-out half by a hash of the episode file name, fixed before
any tuning; both halves are reported.

    python3 bench/bench_import.py                 # both parts, writes bench/results/import.json
    python3 bench/bench_import.py --quality-only  # seconds
    python3 bench/bench_import.py --sessions 100 --mb 100   # a quick speed run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

from transcript_writer import TranscriptWriter  # noqa: E402

CORPUS = BENCH / "corpus" / "transcripts"
ERRORS = BENCH / "corpus" / "errors.jsonl"
RESULTS = BENCH / "results" / "import.json"

RUNNERS = {
    "pytest": "python -m pytest -q {target}",
    "direct": "python {target}",
}


# ---------------------------------------------------------------------- speed: the generated history


def _filler(rng: random.Random, kb: int) -> str:
    words = ["def", "return", "self", "value", "items", "config", "result", "for", "in", "if", "None", "x"]
    lines = []
    size = 0
    while size < kb * 1024:
        line = "    " * rng.randint(0, 3) + " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _write_session(path: Path, cwd: str, sid: str, rng: random.Random, errors: list[dict], kb: int) -> int:
    """One session of about `kb` KB; returns the number of fix episodes in it."""
    start = datetime(2026, 10, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 80_000))
    w = TranscriptWriter(
        path, sid, cwd, rng.choice(["main", "fix/PAY-12-totals", "feat/search"]), start=start
    )
    w.prompt("work on the failing build")
    module = _filler(rng, 24)
    fixes = 0
    while sum(len(line) for line in w.lines) < kb * 1024:
        w.noise()
        roll = rng.random()
        if roll < 0.45:
            w.read(f"src/pkg/mod_{rng.randint(0, 300)}.py", module)
        elif roll < 0.6:
            w.edit(f"src/pkg/mod_{rng.randint(0, 300)}.py", "value", "result")
        elif roll < 0.8:
            w.bash("git status --short", " M src/pkg/mod_1.py\n" * rng.randint(1, 20))
            w.say("Checking the working tree before the next step.", thinking=_filler(rng, 1))
        elif roll < 0.9:
            case = rng.choice(errors)
            command = RUNNERS.get(case["runner"], "python {target}").format(target="tests/")
            w.bash(command, case["text"], exit_code=1)
            w.read("src/pkg/app.py", module)
            w.edit("src/pkg/app.py", "import x", "import y")
            w.bash(command, "3 passed in 0.12s")
            w.say(f"The run failed; the fix was: {case['resolution']}. It passes now.")
            fixes += 1
        else:
            w.bash(
                "pytest -q tests/test_slow.py", "E   TimeoutError: the service did not answer", exit_code=1
            )
            w.prompt("leave that one, go on")
    w.save()
    return fixes


def generate(root: Path, sessions: int, mb: int, seed: int = 7) -> dict[str, float]:
    rng = random.Random(seed)
    errors = [json.loads(line) for line in ERRORS.read_text().splitlines() if line.strip()]
    errors = [e for e in errors if e.get("kind") == "cause"]
    kb = max(8, mb * 1024 // sessions)
    projects = root / "projects"
    fixes = 0
    started = time.monotonic()
    for i in range(sessions):
        cwd = f"/home/dev/src/project-{i % 25}"
        folder = projects / re.sub(r"[^A-Za-z0-9]", "-", cwd)
        sid = f"{i:08d}-{rng.randrange(16**8):08x}"
        fixes += _write_session(folder / f"{sid}.jsonl", cwd, sid, rng, errors, kb)
    size = sum(p.stat().st_size for p in projects.rglob("*.jsonl"))
    return {
        "sessions": sessions,
        "bytes": size,
        "fix_episodes": fixes,
        "generate_s": time.monotonic() - started,
    }


def run_import(config_dir: Path, home: Path, *extra: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("RECALL_SERVER_URL",)}
    env |= {"CLAUDE_CONFIG_DIR": str(config_dir), "RECALL_HOME": str(home), "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", "import-sessions", "--all", "-q", *extra],
        env=env,
        capture_output=True,
        text=True,
        cwd=home.parent,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"import failed: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "summary": proc.stdout.strip(),
        "max_rss_mb": after.ru_maxrss / 1024,
    }


def speed(sessions: int, mb: int, keep: bool) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix="recall-import-bench-", dir="/tmp"))
    try:
        gen = generate(root, sessions, mb)
        print(
            f"generated {gen['sessions']} sessions, {gen['bytes'] / 1e6:.0f} MB in {gen['generate_s']:.0f} s"
        )
        first = run_import(root, root / "home")
        again = run_import(root, root / "home")
        reread = run_import(root, root / "home", "--reread")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    mbytes = float(gen["bytes"]) / 1e6
    out = {"history": gen, "first": first, "again": again, "reread": reread}
    for name in ("first", "again", "reread"):
        run = out[name]
        run["sessions_per_s"] = sessions / run["wall_s"]
        run["mb_per_s"] = mbytes / run["wall_s"]
    return out


# ---------------------------------------------------------------------- quality: the labelled episodes


def split_of(name: str) -> str:
    return "tuning" if int(hashlib.sha1(name.encode()).hexdigest(), 16) % 2 == 0 else "heldout"


def quality() -> dict[str, object]:
    from recall_agent.capture.sessions import sessions_in
    from recall_agent.hooks.importer import read_session

    labels = json.loads((CORPUS / "labels.json").read_text())
    per_split: dict[str, dict[str, int]] = {}
    misses: list[str] = []
    false_positives: list[str] = []
    for name, episodes in sorted(labels.items()):
        split = split_of(name)
        counts = per_split.setdefault(split, {"files": 0, "fixes": 0, "found": 0, "stored": 0, "true": 0})
        counts["files"] += 1
        learnings = []
        subagents = CORPUS / Path(name).stem
        for files in sessions_in([CORPUS / name, *([subagents] if subagents.is_dir() else [])]):
            learnings.extend(read_session(files).learnings)
        fixes = [e for e in episodes if e["fix"]]
        counts["fixes"] += len(fixes)
        counts["stored"] += len(learnings)
        for learning in learnings:
            text = "\n".join(learning["error_signatures"])
            if any(e["marker"] in text for e in fixes):
                counts["true"] += 1
            else:
                false_positives.append(f"{name}: {text.splitlines()[-1][:100]}")
        for episode in fixes:
            hit = any(episode["marker"] in "\n".join(lr["error_signatures"]) for lr in learnings)
            counts["found"] += hit
            if not hit:
                misses.append(f"{name}: {episode['marker'][:80]} ({episode.get('note', '')})")
    report: dict[str, object] = {}
    for split, c in sorted(per_split.items()):
        report[split] = c | {
            "precision": c["true"] / c["stored"] if c["stored"] else 1.0,
            "recall": c["found"] / c["fixes"] if c["fixes"] else 1.0,
        }
    report["misses"] = misses
    report["false_positives"] = false_positives
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--quality-only", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the generated history in /tmp")
    args = parser.parse_args()

    results: dict[str, object] = {"when": datetime.now(UTC).isoformat(timespec="seconds")}
    results["load_avg"] = os.getloadavg()
    results["cores"] = os.cpu_count()
    q = quality()
    results["quality"] = q
    print("\nlabelled episodes        files  fixes  found  stored  true  precision  recall")
    for split in ("tuning", "heldout"):
        c = q[split]
        print(
            f"{split:<24} {c['files']:>5} {c['fixes']:>6} {c['found']:>6} {c['stored']:>7} {c['true']:>5}"
            f" {c['precision']:>10.3f} {c['recall']:>7.3f}"
        )
    for line in q["misses"]:
        print(f"  missed: {line}")
    for line in q["false_positives"]:
        print(f"  false positive: {line}")
    if not args.quality_only:
        s = speed(args.sessions, args.mb, args.keep)
        results["speed"] = s
        mb = float(s["history"]["bytes"]) / 1e6
        print(
            f"\nhistory: {args.sessions} sessions, {mb:.0f} MB, {s['history']['fix_episodes']} fix episodes"
        )
        print("run          wall s   CPU s   sessions/s    MB/s   max RSS MB")
        for name in ("first", "again", "reread"):
            r = s[name]
            print(
                f"{name:<10} {r['wall_s']:>8.1f} {r['cpu_s']:>7.1f} {r['sessions_per_s']:>12.1f}"
                f" {r['mb_per_s']:>7.1f} {r['max_rss_mb']:>12.0f}"
            )
            print(f"  {r['summary']}")
    if args.quality_only and RESULTS.exists():
        previous = json.loads(RESULTS.read_text())
        if "speed" in previous:
            results["speed"] = previous["speed"]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
