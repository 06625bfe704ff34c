"""The capture rules' yes/no decisions, as logistic models fitted on hand-labelled real sessions.

`weights.json` (package data) holds one model per decision, written by `bench/sessions/fit_capture.py`
from the tuning half's labels: its features' weights, the bias, the threshold chosen on the tuning half,
and what it was fitted on. Evaluating one is a dot product in pure Python (no numpy on the hook path).

- `run`: did this tool call fail (the exit flag, and output that shows a crash when the flag says ok)?
- `episode`: is this failure and what fixed it knowledge worth keeping (not a scratch slip, not a retry)?
- `transient`: is the fix a correction of code the session itself wrote earlier (labels' `transient`)? Such
  an episode is not kept, whatever `episode` says.
- `variant`: is a passing run of the failed program, called another way (`make type` after `make typecheck`
  failed), the fix? Or a passing run that did the failed call's job with another program or tool (`open URL`
  after a browser MCP tool was refused; `variant_replaced`)? It decides those episodes in place of `episode`.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

WEIGHTS = Path(__file__).with_name("weights.json")


@dataclass(frozen=True)
class Model:
    name: str
    weights: dict[str, float]
    bias: float
    threshold: float

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(w * features.get(k, 0.0) for k, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def decide(self, features: dict[str, float]) -> bool:
        return self.probability(features) >= self.threshold


@functools.cache
def load(name: str) -> Model:
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))[name]
    return Model(
        name, {k: float(v) for k, v in data["weights"].items()}, float(data["bias"]), float(data["threshold"])
    )
