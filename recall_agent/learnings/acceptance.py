"""Show or don't show: the fitted decision that a candidate learning is the same cause as the query.

A logistic regression over the features of features.py, fitted on labelled (query, candidate, same
cause?) pairs of the tuning halves by `bench/fit_acceptance.py`; its weights are data
(`acceptance.json`, beside this file), evaluated here in pure Python (no numpy on the query path).

`probability(values)` is the model's P(same cause). `similarity(p)` maps it to the wire's similarity
(0–1, monotonic): the operating point chosen on the tuning half (`threshold`, the probability at which
the tuning half's false-match rate is at most `target_false_match_rate`) maps to SAME_CAUSE, the
request's default `min_similarity_error` (0.85); 0 and 1 stay put, linear on each side. So the default
threshold means "the model's chosen operating point", and a request asking for more or less moves along
the same curve (the held-out precision–recall curve is in docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

from recall_agent.protocol import DEFAULT_MIN_SIMILARITY_ERROR as SAME_CAUSE

MODEL_FILE = Path(__file__).with_name("acceptance.json")


@functools.cache
def model() -> dict[str, Any]:
    """The fitted model: {"features": [...], "weights": [...], "bias": b, "threshold": p, ...}."""
    data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    if len(data["features"]) != len(data["weights"]):
        raise ValueError(f"{MODEL_FILE}: {len(data['features'])} features but {len(data['weights'])} weights")
    return data


def probability(values: dict[str, float]) -> float:
    """P(same cause) for one (query, candidate) pair's features; features the model lacks are ignored."""
    m = model()
    z = m["bias"] + sum(
        w * values.get(name, 0.0) for name, w in zip(m["features"], m["weights"], strict=True)
    )
    if z < -60:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


def similarity(p: float) -> float:
    """The model's probability on the wire's scale: the operating point maps to SAME_CAUSE (0.85)."""
    t = model()["threshold"]
    if p >= t:
        return SAME_CAUSE + (1.0 - SAME_CAUSE) * (p - t) / (1.0 - t) if t < 1.0 else 1.0
    return SAME_CAUSE * p / t if t > 0 else 0.0
