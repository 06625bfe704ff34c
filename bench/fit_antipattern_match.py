"""Fit the antipattern engine's "is this entry about the question?" decision (issue 28).

    python3 bench/fit_antipattern_match.py          # prints the fit and its curve; --write saves the weights

The engine blends the cosine of the offline embeddings and the BM25 share into one score and answers with
entries above a threshold. This fits both — the weights and the bias of a logistic model over (cosine,
lexical) — on labelled data: issue 5's questions (bench/antipatterns_labeled/queries.yaml, with their
off-topic questions) and the tuning half of the mixed questions (mixed_queries.yaml). Each question gives
its ten best entries by the current blend: the expected (or `also`) entries are positives, the others and
every off-topic question's entries negatives. The held-out half of the mixed questions is never read
here except to print the curve at the end (with --curve).

Writes recall_agent/antipatterns/match_weights.json: {"cosine": w1, "lexical": w2, "bias": b}.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recall_agent.antipatterns.catalog import load_catalog  # noqa: E402
from recall_agent.antipatterns.engine import rank_entries  # noqa: E402

DATA = ROOT / "bench" / "antipatterns_labeled"
WEIGHTS = ROOT / "recall_agent" / "antipatterns" / "match_weights.json"
TOP = 10


def examples(catalog, questions: list[dict], negatives: list[str]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for q in questions:
        ok = {q["expect"], *q.get("also", [])}
        ranked, _ = rank_entries(catalog, q["q"])
        for m in ranked[:TOP]:
            xs.append((m.similarity, m.lexical))
            ys.append(1.0 if m.entry.id in ok else 0.0)
    for text in negatives:
        ranked, _ = rank_entries(catalog, text)
        for m in ranked[:TOP]:
            xs.append((m.similarity, m.lexical))
            ys.append(0.0)
    return np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 20_000, lr: float = 0.5) -> np.ndarray:
    """Logistic regression by gradient descent (3 parameters: no library needed); positives weighted up
    to balance the classes."""
    w = np.zeros(3)
    xb = np.hstack([x, np.ones((len(x), 1))])
    weight = np.where(y == 1, (y == 0).sum() / max(1, (y == 1).sum()), 1.0)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ ((p - y) * weight) / weight.sum() + l2 * np.r_[w[:2], 0]
        w -= lr * grad
    return w


def curve(catalog, w: np.ndarray, questions: list[dict], negatives: list[str]) -> list[dict]:
    """top-1 of the fitted score and how many questions are answered, per threshold."""
    rows = []
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7):
        right = answered = off = 0
        for q in questions:
            ok = {q["expect"], *q.get("also", [])}
            best = _best(catalog, w, q["q"])
            if best and best[1] >= threshold:
                answered += 1
                right += best[0] in ok
        for text in negatives:
            best = _best(catalog, w, text)
            off += bool(best and best[1] >= threshold)
        n = len(questions)
        rows.append(
            {"threshold": threshold, "top1": round(right / n, 3), "answered": answered, "off_topic": off}
        )
    return rows


def _best(catalog, w: np.ndarray, text: str) -> tuple[str, float] | None:
    ranked, _ = rank_entries(catalog, text)
    scored = [
        (m.entry.id, 1 / (1 + math.exp(-(w[0] * m.similarity + w[1] * m.lexical + w[2])))) for m in ranked
    ]
    return max(scored, key=lambda s: s[1]) if scored else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="save the weights for the engine")
    parser.add_argument("--curve", action="store_true", help="also print the curve on the held-out half")
    args = parser.parse_args()
    catalog = load_catalog()
    q5 = yaml.safe_load((DATA / "queries.yaml").read_text())
    mixed = yaml.safe_load((DATA / "mixed_queries.yaml").read_text())["queries"]
    train = [*q5["queries"], *(q for q in mixed if q["split"] == "tune")]
    x, y = examples(catalog, train, q5.get("negatives", []))
    w = fit(x, y)
    print(f"fitted on {len(train)} questions ({int(y.sum())} positives, {int(len(y) - y.sum())} negatives):")
    print(f"  score = sigmoid({w[0]:.3f} * cosine + {w[1]:.3f} * lexical + {w[2]:.3f})")
    print("curve on the training questions (issue 5 + mixed tune), off-topic = issue 5's 10 negatives:")
    for row in curve(catalog, w, train, q5.get("negatives", [])):
        print("  ", row)
    if args.curve:
        held = [q for q in mixed if q["split"] == "held"]
        print("curve on the mixed held-out half (semantic ranking alone, no detections):")
        for row in curve(catalog, w, held, q5.get("negatives", [])):
            print("  ", row)
    if args.write:
        WEIGHTS.write_text(
            json.dumps({"cosine": round(w[0], 4), "lexical": round(w[1], 4), "bias": round(w[2], 4)}) + "\n"
        )
        print(f"saved {WEIGHTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
