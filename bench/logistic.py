"""L2-penalised logistic regression by Newton's method: the one fitter of the bench's yes/no models
(fit_capture.py, fit_acceptance.py, bench_history.py). numpy is a dev dependency; the product evaluates
the weights it writes in pure Python."""

from __future__ import annotations

import numpy as np


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float, sample_weight: np.ndarray | None = None, iters: int = 50
) -> tuple[np.ndarray, float]:
    """Weights and bias; the penalty is on the weights, not the bias."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    sw = np.ones(n) if sample_weight is None else sample_weight
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    w = np.zeros(d + 1)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -60, 60)))
        grad = a.T @ (sw * (p - y)) + penalty * w
        hess = a.T @ (a * (sw * p * (1 - p))[:, None]) + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])
