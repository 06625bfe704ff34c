"""Fit the UserPromptSubmit models (`recall_agent/push/task_weights.json`) on the fit half of bench_push.py's
rows (split by project, `bench_push.FIT_PROJECTS`; the held-out projects are never read).

1. The ranking (`rank`): an L2 logistic regression (`bench/logistic.py`) over every candidate file's
   `push.task.CANDIDATE_FEATURES`; label: the file is in the gold patch. Each fit task is there twice, its
   whole issue text and its title alone (as short as a typed prompt); each (task, prompt) weighs the same
   whatever its number of candidates.
2. The confidence gate: a logistic over the ranking's `push.task.FEATURES` (the top file's log-odds and its
   lead over the runner-up), computed with the fitted ranking; label: one of the files the hook names (its
   top MAX_FILES) is in the gold patch. Threshold not tuned: the hook answers when a right answer is more
   likely than a wrong one (p >= 0.5).

Out-of-fold figures (leave one fit project out, both models refitted) go to bench/results/push_fit.json.

    nice python bench/bench_push.py && python bench/fit_push.py && nice python bench/bench_push.py
"""

from __future__ import annotations

import json
import math
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
REPORT = ROOT / "bench" / "results" / "push_fit.json"


def _prompts(rows: list[dict]) -> list[dict]:
    """Each task's two prompts (its issue text, its title), with the task's gold and project."""
    return [{**r[k], "project": r["project"]} for r in rows for k in ("text", "title") if k in r]


def fit_rank(prompts: list[dict]) -> dict:
    x, y, w = [], [], []
    for p in prompts:
        for c in p["candidates"]:
            x.append(c["x"])
            y.append(1.0 if c["gold"] else 0.0)
            w.append(1.0 / len(p["candidates"]))
    weight = np.array(w) * len(w) / max(1e-9, sum(w))
    coef, bias = fit_logistic(np.array(x, dtype=float), np.array(y), L2, sample_weight=weight)
    return {"features": list(task.CANDIDATE_FEATURES), "weights": [round(float(v), 4) for v in coef],
            "bias": round(bias, 4)}  # fmt: skip


def ranked(p: dict, model: dict) -> tuple[list[dict], list[float]]:
    scored = [
        (task._logit(model, dict(zip(task.CANDIDATE_FEATURES, c["x"], strict=True))), c["path"], c)
        for c in p["candidates"]
    ]
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[0][0] if scored else -30.0
    second = scored[1][0] if len(scored) > 1 else -30.0
    return [s[2] for s in scored], [top, top - second]


def fit_gate(prompts: list[dict], model: dict) -> dict:
    x, y = [], []
    for p in prompts:
        order, row = ranked(p, model)
        x.append([min(30.0, max(-30.0, v)) for v in row])
        y.append(1.0 if any(c["gold"] for c in order[: task.MAX_FILES]) else 0.0)
    coef, bias = fit_logistic(np.array(x, dtype=float), np.array(y), L2)
    return {"features": list(task.FEATURES), "weights": [round(float(v), 4) for v in coef],
            "bias": round(bias, 4), "threshold": THRESHOLD}  # fmt: skip


def scores(prompts: list[dict], rank_model: dict, gate: dict) -> dict:
    def acc(k: int, part: list[list[dict]]) -> float | None:
        return round(sum(any(c["gold"] for c in o[:k]) for o in part) / len(part), 3) if part else None

    orders, answered = [], []
    for p in prompts:
        order, row = ranked(p, rank_model)
        orders.append(order)
        z = gate["bias"] + sum(w * v for w, v in zip(gate["weights"], row, strict=True))
        if 1 / (1 + math.exp(-max(-30, min(30, z)))) >= gate["threshold"]:
            answered.append(order)
    return {"prompts": len(prompts), "acc1": acc(1, orders), "acc5": acc(5, orders),
            "answered": len(answered), "answered_acc3": acc(3, answered)}  # fmt: skip


def main() -> int:
    rows = [r for r in json.loads(RESULTS.read_text())["rows"] if r["project"] in FIT_PROJECTS]
    prompts = _prompts(rows)
    rank_model = fit_rank(prompts)
    gate = fit_gate(prompts, rank_model)
    folds = {}
    for project in sorted({r["project"] for r in rows}):
        inside = [p for p in prompts if p["project"] != project]
        out = [p for p in prompts if p["project"] == project]
        rm = fit_rank(inside)
        folds[project] = scores(out, rm, fit_gate(inside, rm))
    model = {
        **gate,
        "rank": rank_model,
        "fitted": True,
        "fit_prompts": len(prompts),
        "fit_projects": sorted({r["project"] for r in rows}),
        "command": "nice python bench/bench_push.py && python bench/fit_push.py",
    }
    task.WEIGHTS_FILE.write_text(json.dumps(model, indent=2) + "\n")
    report = {"model": model, "in_sample": scores(prompts, rank_model, gate), "leave_one_project_out": folds}
    REPORT.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
