"""Fit the capture engine's two decisions on the tuning half's hand labels; write their weights as data.

    python3 bench/sessions/fit_capture.py            # writes recall_agent/capture/weights.json

1. **run** — did a tool call fail? Every labelled session is replayed with the labels' verdicts (a call is
   a failure when a label lists it: `failed`, `also`, `unfixed`), so each run's features are computed
   with the background the engine would have; a logistic regression is fitted on them. Threshold: the
   best F1 on the tuning half.
2. **episode** — is a resolved error knowledge worth storing? The sessions are replayed with the fitted
   run model; each episode the engine resolves is positive when it matches a labelled episode marked
   `useful`. Threshold: the highest recall whose tuning precision is at least TARGET_PRECISION.

Only labels with `half: tune` are read, of both labellers where a session has two (each is a training
example of its own, so the fit sits between their verdicts). Logistic regression by Newton's method with a small L2 penalty
(numpy, a dev dependency; the engine evaluates the weights in pure Python).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import labels as L  # noqa: E402

from recall_agent.capture import model  # noqa: E402
from recall_agent.capture.engine import Engine  # noqa: E402
from recall_agent.capture.transcript import Transcript  # noqa: E402

TARGET_PRECISION = 0.94
L2 = 1.0


def replay(label: L.Label, decide_run=None) -> Engine:
    engine = Engine(record=True, decide_run=decide_run)
    engine.feed(Transcript(label.path).steps())
    engine.end_turn()
    return engine


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Weights and bias of an L2-penalised logistic regression (Newton's method)."""
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(A @ w, -60, 60)))
        grad = A.T @ (p - y) + penalty * w
        H = A.T @ (A * (p * (1 - p))[:, None]) + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(H, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def fit_rows(rows: list[dict[str, float]], ys: list[float]) -> tuple:
    """Feature dicts and 0/1 labels -> (feature names, weights, bias, labels, the tuning curve)."""
    names = sorted({k for r in rows for k in r})
    X = np.array([[r.get(k, 0.0) for k in names] for r in rows])
    y = np.array(ys)
    w, b = fit_logistic(X, y)
    scores = 1 / (1 + np.exp(-(X @ w + b)))
    return names, w, b, y, curve(scores, y)


def curve(scores: np.ndarray, y: np.ndarray) -> list[dict[str, float]]:
    out = []
    for t in sorted(set(np.round(scores, 4)) | {0.5}):
        pred = scores >= t
        tp = int((pred & (y == 1)).sum())
        fp = int((pred & (y == 0)).sum())
        fn = int((~pred & (y == 1)).sum())
        out.append(
            {
                "threshold": float(t),
                "precision": tp / (tp + fp) if tp + fp else 1.0,
                "recall": tp / (tp + fn) if tp + fn else 1.0,
                "tp": tp,
                "fp": fp,
                "fn": fn,
            }
        )
    return out


def to_model(names: list[str], w: np.ndarray, b: float, threshold: float, note: str) -> dict:
    return {
        "fitted": note,
        "weights": {k: round(float(v), 4) for k, v in zip(names, w, strict=True) if abs(v) > 1e-6},
        "bias": round(b, 4),
        "threshold": round(threshold, 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=model.WEIGHTS)
    args = ap.parse_args(argv)
    tune = L.load(("tune-all",))  # both labellers of the tuning half: their disagreement is in the fit
    if not tune:
        print("no tuning labels with transcripts (bench/sessions/fetch.py, labels/)", file=sys.stderr)
        return 1
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    weights = json.loads(args.out.read_text())

    # 1. the run model, on the labels' verdicts
    rows, ys = [], []
    for label in tune:
        failing = label.failed_ids()
        engine = replay(label, decide_run=lambda run, f, failing=failing: L.suffix(run.id) in failing)
        for _run, features, failed in engine.judged_runs:
            rows.append(features)
            ys.append(1.0 if failed else 0.0)
    names, w, b, y, points = fit_rows(rows, ys)
    best = max(points, key=lambda p: 2 * p["precision"] * p["recall"] / (p["precision"] + p["recall"] or 1))
    weights["run"] = to_model(
        names,
        w,
        b,
        best["threshold"],
        f"{stamp}: {len(tune)} tuning sessions, {len(y)} runs, {int(y.sum())} failures",
    )
    print(
        f"run model: {len(y)} runs, {int(y.sum())} failures; threshold {best['threshold']:.3f}: "
        f"P {best['precision']:.3f} R {best['recall']:.3f}"
    )
    args.out.write_text(json.dumps(weights, indent=1) + "\n")
    model.load.cache_clear()

    # 2. the episode model, on what the engine now resolves
    rows, ys = [], []
    for label in tune:
        for ep in replay(label).judged_episodes:
            ids = {L.suffix(e["id"]) for e in ep.errors}
            match = label.episode_for(ids)
            rows.append(ep.features)
            ys.append(1.0 if match and match.get("useful") else 0.0)
    names, w, b, y, points = fit_rows(rows, ys)
    ok = [p for p in points if p["precision"] >= TARGET_PRECISION and p["tp"] > 0]
    pick = (
        max(ok, key=lambda p: (p["recall"], -p["threshold"]))
        if ok
        else max(points, key=lambda p: p["precision"])
    )
    weights["episode"] = to_model(
        names,
        w,
        b,
        pick["threshold"],
        f"{stamp}: {len(tune)} tuning sessions, {len(y)} resolved errors, {int(y.sum())} useful",
    )
    print(
        f"episode model: {len(y)} resolved, {int(y.sum())} useful; threshold {pick['threshold']:.3f}: "
        f"P {pick['precision']:.3f} R {pick['recall']:.3f} (of the resolved)"
    )
    args.out.write_text(json.dumps(weights, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
