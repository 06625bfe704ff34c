"""The self-check on real history: fixes from a public repository's commits, checked against that repository
before the fix, right after it and years later, judged by what git says happened to those lines.

Data: the non-merge commits of a repository nobody here wrote (default pallets/click, brought in with the
search tool's `fetch` into /work/.mirror; never committed) that change a function of a Python file. Each
commit's first such hunk becomes the evidence a capture would record — the file, the function git names in
the hunk header, and the change as `capture.edits.describe` writes it from the hunk's old and new lines.
The commits are split by a hash of their id (first hex digit even: tuning) before anything runs; nothing
here is tuned, both halves are reported.

For each fix the cited file is laid out as it was at three revisions and `selfcheck.check` gives a verdict:
- the parent: the fix is not there yet, so "still applies" (ok) is right;
- the commit: the fix is in place, so "already applied here" is right;
- HEAD: truth from `git diff -M <commit> HEAD` of that file: the fixed lines untouched since (then "already
  applied" is right and "may be stale" a false alarm), changed since or the file deleted (then "may be stale"
  is right), or the file moved elsewhere (the cited path is gone: "may be stale" is what the check can say).

    python bench/bench_selfcheck_history.py [--repo /work/.mirror/pallets+click/repo] [--max 600]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recall_agent import selfcheck  # noqa: E402
from recall_agent.capture.edits import FileChange, describe  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "selfcheck_history.json"
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
DEF = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, errors="replace"
    ).stdout


def commits(repo: Path, limit: int) -> list[str]:
    out = git(repo, "log", "--no-merges", "--format=%H", "--", "*.py")
    return out.split()[:limit]


def first_fix(repo: Path, commit: str) -> dict | None:
    """The commit's first hunk inside a named function of a non-test .py file, as capture evidence."""
    diff = git(repo, "show", "-U2", "--format=", "--no-renames", commit, "--", "*.py")
    path, hunk = None, None
    for line in diff.splitlines() + ["@@ end"]:
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
            continue
        if line.startswith("@@"):
            if hunk and _usable(hunk):
                return hunk
            m = HUNK.match(line)
            name = DEF.search(m.group(5)) if m else None
            ok = m and path and name and "test" not in path
            hunk = {"path": path, "symbol": name.group(1), "start": int(m.group(3)), "count": int(m.group(4) or 1),
                    "old": [], "new": []} if ok else None  # fmt: skip
            continue
        if hunk is None or line.startswith(("---", "diff ", "index ")):
            continue
        if line.startswith("-"):
            hunk["old"].append(line[1:])
        elif line.startswith("+"):
            hunk["new"].append(line[1:])
        elif line.startswith(" "):
            hunk["old"].append(line[1:])
            hunk["new"].append(line[1:])
    return None


def _usable(hunk: dict) -> bool:
    differs = [ln.strip() for ln in hunk["old"]] != [ln.strip() for ln in hunk["new"]]
    return differs and any(ln.strip() for ln in hunk["new"] + hunk["old"])


def evidence(hunk: dict) -> dict:
    change = FileChange(
        path=hunk["path"], symbols=[hunk["symbol"]], old="\n".join(hunk["old"]), new="\n".join(hunk["new"])
    )
    return {
        "source": "transcript",
        "files": [{"path": hunk["path"], "symbols": [hunk["symbol"]], "change": describe(change)}],
    }


def verdict_at(repo: Path, rev: str, fix: dict, work: Path) -> str:
    root = work / rev[:12]
    path = fix["files"][0]["path"]
    text = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True).stdout
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    exists = (
        subprocess.run(
            ["git", "-C", str(repo), "cat-file", "-e", f"{rev}:{path}"], capture_output=True
        ).returncode
        == 0
    )
    if exists:
        target.write_bytes(text)
    try:
        return selfcheck.check(fix, root).verdict
    finally:
        if exists:
            target.unlink()


def truth_at_head(repo: Path, commit: str, hunk: dict) -> str:
    """untouched / changed / deleted / moved: what `git diff -M commit HEAD` did to the fixed lines."""
    path = hunk["path"]
    status = git(repo, "diff", "-M", "--name-status", commit, "HEAD", "--", path)
    if not status.strip():
        return "untouched"
    kind = status.split()[0]
    if kind.startswith("D"):
        moved = git(repo, "diff", "-M", "--name-status", commit, "HEAD")
        return (
            "moved"
            if any(r.startswith("R") and f"\t{path}\t" in r + "\t" for r in moved.splitlines())
            else "deleted"
        )
    lo, hi = hunk["start"], hunk["start"] + hunk["count"]
    for line in git(repo, "diff", "-U0", commit, "HEAD", "--", path).splitlines():
        m = HUNK.match(line)
        if m:
            a, n = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            if a < hi and a + max(n, 1) > lo:
                return "changed"
    return "untouched"


def half_of(commit: str) -> str:
    return "tuning" if int(hashlib.sha256(commit.encode()).hexdigest()[0], 16) % 2 == 0 else "held-out"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=Path("/work/.mirror/pallets+click/repo"))
    ap.add_argument("--max", type=int, default=600, help="newest commits looked at")
    args = ap.parse_args()
    head = git(args.repo, "rev-parse", "HEAD").strip()
    if not head:
        print(f"no repository at {args.repo} (bring it with the search tool's fetch)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for commit in commits(args.repo, args.max):
            hunk = first_fix(args.repo, commit)
            parent = git(args.repo, "rev-parse", f"{commit}^").strip()
            if hunk is None or not parent:
                continue
            fix = evidence(hunk)
            rows.append({
                "commit": commit, "half": half_of(commit), "path": hunk["path"], "symbol": hunk["symbol"],
                "change": fix["files"][0]["change"],
                "before": verdict_at(args.repo, parent, fix, work),
                "after": verdict_at(args.repo, commit, fix, work),
                "head": verdict_at(args.repo, head, fix, work),
                "truth": truth_at_head(args.repo, commit, hunk),
            })  # fmt: skip
    report = {"repo": str(args.repo), "head": head, "load_average": [round(x, 2) for x in os.getloadavg()],
              "halves": {h: summarize([r for r in rows if r["half"] == h]) for h in ("tuning", "held-out")},
              "rows": rows}  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{args.repo} at {head[:12]}: {len(rows)} fixes from commits")
    for half, s in report["halves"].items():
        print(f"\n{half}: {s['fixes']} fixes")
        print(f"  parent (fix not there yet): ok {s['before_ok']:.3f}   verdicts {s['before']}")
        print(f"  commit (fix in place):      applied {s['after_applied']:.3f}   verdicts {s['after']}")
        print(f"  HEAD by what git did to the lines: {s['head_by_truth']}")
        print(
            f"  'may be stale' precision {s['stale_precision']:.3f} (right when the lines changed, the file went or moved)"
        )
        print(
            f"  changed or deleted since, flagged stale: {s['stale_recall']:.3f};  untouched, flagged stale: {s['false_stale']:.3f}"
        )
    return 0


def summarize(rows: list[dict]) -> dict:
    n = max(1, len(rows))
    by_truth: dict[str, Counter] = {}
    for r in rows:
        by_truth.setdefault(r["truth"], Counter())[r["head"]] += 1
    flagged = [r for r in rows if r["head"] == "stale"]
    right = [r for r in flagged if r["truth"] != "untouched"]
    gone = [r for r in rows if r["truth"] in ("changed", "deleted")]
    untouched = [r for r in rows if r["truth"] == "untouched"]
    return {
        "fixes": len(rows),
        "before": dict(Counter(r["before"] for r in rows)),
        "after": dict(Counter(r["after"] for r in rows)),
        "before_ok": sum(r["before"] == "ok" for r in rows) / n,
        "after_applied": sum(r["after"] == "applied" for r in rows) / n,
        "head_by_truth": {k: dict(v) for k, v in sorted(by_truth.items())},
        "stale_precision": len(right) / max(1, len(flagged)),
        "stale_recall": sum(r["head"] == "stale" for r in gone) / max(1, len(gone)),
        "false_stale": sum(r["head"] == "stale" for r in untouched) / max(1, len(untouched)),
    }


if __name__ == "__main__":
    sys.exit(main())
