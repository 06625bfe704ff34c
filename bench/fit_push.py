"""Fit the UserPromptSubmit confidence model (`recall_agent/push/task_weights.json`) on the fit half of
bench_push.py's rows (split by project, `bench_push.FIT_PROJECTS`; the held-out projects are never read).

Rows: each fit-half task twice, its whole issue text and its title alone. Label: one of the files the hook names (its top MAX_FILES) is a file of the gold patch. Model: L2 logistic
regression (`bench/logistic.py`) over `push.task.FEATURES`. Threshold: not tuned: the hook answers when a
right answer is more likely than a wrong one (a wrong code area costs the agent about what a right one
saves: p >= 0.5).

    python bench/fit_push.py            # after nice python bench/bench_push.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_push import FIT_PROJECTS, RESULTS  # noqa: E402
from logistic import fit_logistic  # noqa: E402

from recall_agent.push import task  # noqa: E402

L2 = 1.0
THRESHOLD = 0.5
# scale-free features only: BM25 scores and word counts grow with the text's length, and the labelled
# prompts (whole issue texts) are far longer than what a user types ("fix the typo in place_order"); a
# model on log_top learns "long text" rather than "clear answer"
USED = ("lead", "matched", "named")


def main() -> int:
    tasks = [r for r in json.loads(RESULTS.read_text())["rows"] if r["project"] in FIT_PROJECTS]
    # each task twice: the whole issue text, and its title alone (as short as a typed prompt)
    rows = tasks + [r["title"] for r in tasks if "title" in r]
    x = np.array([[task.bounded(r["features"])[f] for f in USED] for r in rows], dtype=float)
    y = np.array([1.0 if r["rank"] is not None and r["rank"] <= task.MAX_FILES else 0.0 for r in rows])
    w, b = fit_logistic(x, y, L2)
    model = {
        "features": list(USED),
        "weights": [round(float(v), 4) for v in w],
        "bias": round(b, 4),
        "threshold": THRESHOLD,
        "fitted": True,
        "fit_tasks": len(rows),
        "fit_positive": int(y.sum()),
        "fit_projects": sorted(FIT_PROJECTS),
        "command": "nice python bench/bench_push.py && python bench/fit_push.py",
    }
    task.WEIGHTS_FILE.write_text(json.dumps(model, indent=2) + "\n")
    print(json.dumps(model))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
