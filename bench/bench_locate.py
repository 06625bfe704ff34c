"""What the self-check pays to find a fix on another branch (issue 34): `selfcheck.check` on a learning
whose fix lives on an unmerged branch (git asked: pickaxe, ancestry, branches), and the same check
without git. A throwaway repository in a temporary folder; prints p50/p95 of 20 runs each.

    python bench/bench_locate.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recall_agent import selfcheck  # noqa: E402

FIX = {
    "source": "transcript",
    "files": [{"path": "src/pay.py", "symbols": ["charge"],
               "change": "`return gateway.post(amount)` → `return gateway.post(amount, timeout=30)`"}],
}  # fmt: skip
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@example.com"}  # fmt: skip


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, env=ENV)


def repository(root: Path, history: int) -> Path:
    """main rewrote src/pay.py after `history` other commits; feat-retry holds the fix, unmerged."""
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src" / "pay.py").write_text("def charge(amount):\n    return gateway.post(amount)\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pay")
    for i in range(history):
        (root / "src" / f"m{i % 50}.py").write_text(f"x = {i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"m{i}")
    git(root, "checkout", "-q", "-b", "feat-retry")
    (root / "src" / "pay.py").write_text("def charge(amount):\n    return gateway.post(amount, timeout=30)\n")
    git(root, "commit", "-qam", "pay: a timeout")
    git(root, "checkout", "-q", "main")
    (root / "src" / "pay.py").write_text(
        "def charge(amount, currency):\n    return client.send(amount, currency)\n"
    )
    git(root, "commit", "-qam", "pay: new client")
    return root


def timed(root: Path, locate_s: float) -> tuple[str, float, float]:
    walls = []
    for _ in range(20):
        start = time.perf_counter()
        verdict = selfcheck.check(FIX, root, locate_s=locate_s)
        walls.append((time.perf_counter() - start) * 1000)
    walls.sort()
    return verdict.verdict, statistics.median(walls), walls[18]


def main() -> int:
    print(f"load average {os.getloadavg()}")
    for history in (0, 300):
        with tempfile.TemporaryDirectory() as tmp:
            root = repository(Path(tmp), history)
            for locate_s, what in ((selfcheck.LOCATE_S, "git asked"), (0.0, "without git")):
                verdict, p50, p95 = timed(root, locate_s)
                print(f"{history + 3:4d} commits  {what:12} {verdict:7} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
