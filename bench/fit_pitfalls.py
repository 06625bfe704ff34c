"""Fit which learnings make the session-start list (`recall_agent/push/pitfall_weights.json`) on the replay of
the tuning projects' labelled sessions (split.json `projects`; the held-out projects are never read here).

Rows: every candidate cause of every replayed session of a tuning project (`bench/bench_push.py --replay`
saves them, features as `push.pitfalls.FEATURES` computed from the store as it stood when the session
started). Label: the session met the cause (a labelled failure of one of the causes its learning was captured
from, or its error). Model: L2 logistic regression (`bench/logistic.py`), each project weighted equally
(SWE-ContextBench's 300 sessions would otherwise decide alone). Threshold: the lowest (0.05 to 0.95) at which the tuning projects' lists (at most MAX_LINES lines and
MAX_TOKENS tokens, most likely first) keep a precision of at least PRECISION, the issue's target (half the
lines shown are needed), but never above the fitted probability of the issue's own least pitfall (an
environment lesson met in two sessions: SPEC_FLOOR). Out-of-fold figures (leave one
tuning project out, model and threshold refitted) show what that buys before the held-out projects are
scored.

    nice python bench/bench_push.py --replay   # saves the candidates (bench/.cache/push-replay-rows.json)
    python bench/fit_pitfalls.py               # writes the weights
    nice python bench/bench_push.py --replay   # the lists the fitted model shows, both halves
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_push import REPLAY_ROWS  # noqa: E402
from logistic import fit_logistic  # noqa: E402

from recall_agent.push import pitfalls  # noqa: E402

L2 = 1.0
PRECISION = 0.5
# Chosen on the tuning projects before the held-out replay was scored with them: the share of known sessions
# (`rate`), the gap to the newest learning and whether the fix edited files took weight with signs that
# follow the store's age in the replay (early in a project every cause has a high share and is rarely met
# next), and their lists covered fewer recurring failures at the same precision (docs/benchmarks.md).
USED = ("log_sessions", "log_seen", "environment", "log_days")
# Projects whose labels name each failure's cause (split.json `projects`); SWE-ContextBench's labels name
# none (its 300 sessions are 300 repositories' tasks, not one project's sessions), so whether a session
# needed a line cannot be judged by cause there.
NO_CAUSES = frozenset({"swecb"})
RESULT = ROOT / "bench" / "results" / "pitfall_fit.json"


def _rows(sessions: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y, proj = [], [], []
    for s in sessions:
        for c in s["candidates"]:
            x.append(_used(c["x"]))
            y.append(1.0 if c["needed"] else 0.0)
            proj.append(s["project"])
    names = np.array(proj)
    weight = np.array([1.0 / float((names == p).sum()) for p in proj]) if proj else np.array([])
    weight *= len(proj) / max(1, len(set(proj)))  # each project weighs as much; the mean weight stays 1
    return np.array(x, dtype=float).reshape(len(y), -1), np.array(y), weight


def _used(row: list[float]) -> list[float]:
    return [row[pitfalls.FEATURES.index(f)] for f in USED]


def fit(sessions: list[dict]) -> tuple[np.ndarray, float]:
    x, y, w = _rows(sessions)
    return fit_logistic(x, y, L2, sample_weight=w)


def _overhead() -> int:
    from recall_agent.push import ledger
    from recall_agent.safety import render

    return ledger.tokens(render.frame(pitfalls.HEADER))


def lists(sessions: list[dict], w: np.ndarray, b: float, threshold: float) -> dict:
    """The lists shown at `threshold` (most likely first): see `tally`."""

    def pick(s: dict) -> list[int]:
        probs = [1 / (1 + np.exp(-(np.dot(w, _used(c["x"])) + b))) for c in s["candidates"]]
        return sorted((i for i, p in enumerate(probs) if p >= threshold), key=lambda i: -probs[i])

    return tally(sessions, pick)


def tally(sessions: list[dict], pick: Callable[[dict], list[int]]) -> dict:
    """Each session's list (the candidates `pick` orders, at most MAX_LINES lines and MAX_TOKENS tokens):
    lines, needed lines, and the recurring (environment) failures a shown line covers."""
    shown = needed = with_list = rec = rec_cov = env = env_cov = 0
    base = _overhead()
    for s in sessions:
        kept, tokens = [], base
        for i in pick(s)[: pitfalls.MAX_LINES]:
            if tokens + s["candidates"][i]["tokens"] > pitfalls.MAX_TOKENS:
                break
            kept.append(i)
            tokens += s["candidates"][i]["tokens"]
        shown += len(kept)
        needed += sum(1 for i in kept if s["candidates"][i]["needed"])
        with_list += bool(kept)
        for r in s.get("recurring", []):
            hit = bool(set(r["covered_by"]) & set(kept))
            rec, rec_cov = rec + 1, rec_cov + hit
            if r["env"]:
                env, env_cov = env + 1, env_cov + hit
    return {"sessions": len(sessions), "with_list": with_list, "lines": shown, "needed": needed,
            "precision": round(needed / shown, 3) if shown else None,
            "recurring": rec, "covered": rec_cov, "env_recurring": env, "env_covered": env_cov,
            "env_coverage": round(env_cov / env, 3) if env else None}  # fmt: skip


def choose_threshold(sessions: list[dict], w: np.ndarray, b: float) -> float:
    """The lowest threshold (0.05 to 0.95, steps of 0.01) whose lists keep precision >= PRECISION."""
    for t in np.arange(0.05, 0.951, 0.01):
        got = lists(sessions, w, b, float(t))
        if got["precision"] is not None and got["precision"] >= PRECISION:
            return round(float(t), 2)
    return 0.95


# The issue's own definition of a pitfall (issue 35: "learnings whose cause recurred in >= 2 sessions or that
# are environment lessons"), at its least: an environment lesson met once in each of two sessions, today.
# The fitted precision rule may not raise the bar above it (the done-means: two sessions that failed on
# `git push` without an upstream teach the third); the list's order and cap stay the model's.
SPEC_FLOOR = {"log_sessions": math.log1p(2), "log_seen": math.log1p(2), "rate": 1.0, "environment": 1.0,
              "code_fix": 0.0, "log_days": 0.0, "log_gap": 0.0}  # fmt: skip


def spec_floor(w: np.ndarray, b: float) -> float:
    """The fitted probability of SPEC_FLOOR, rounded down to the threshold grid (0.01)."""
    z = b + sum(float(wi) * SPEC_FLOOR[f] for wi, f in zip(w, USED, strict=True))
    return math.floor(100 / (1 + math.exp(-z))) / 100


def main() -> int:
    data = json.loads(REPLAY_ROWS.read_text())
    assert data["features"] == list(pitfalls.FEATURES), "replay rows of other features: rerun the replay"
    # the held-out half is never read
    tune = [s for s in data["sessions"] if s["half"] == "tune" and s["project"] not in NO_CAUSES]
    w, b = fit(tune)
    fitted = choose_threshold(tune, w, b)
    threshold = min(fitted, spec_floor(w, b))
    folds = {}
    for project in sorted({s["project"] for s in tune}):
        inside = [s for s in tune if s["project"] != project]
        fw, fb = fit(inside)
        folds[project] = lists(
            [s for s in tune if s["project"] == project], fw, fb, choose_threshold(inside, fw, fb)
        )
    _, y, _ = _rows(tune)
    model = {
        "features": list(USED),
        "weights": [round(float(v), 4) for v in w],
        "bias": round(b, 4),
        "threshold": threshold,
        "precision_target": PRECISION,
        "threshold_for_precision": fitted,
        "threshold_spec_floor": spec_floor(w, b),
        "fitted": True,
        "fit_candidates": len(y),
        "fit_needed": int(y.sum()),
        "fit_projects": sorted({s["project"] for s in tune}),
        "command": "nice python bench/bench_push.py --replay && python bench/fit_pitfalls.py",
    }
    pitfalls.WEIGHTS_FILE.write_text(json.dumps(model, indent=2) + "\n")
    report = {"model": model, "in_sample": lists(tune, w, b, threshold), "leave_one_project_out": folds}
    RESULT.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
