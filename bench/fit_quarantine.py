"""Fit the quarantine decision (recall_agent/safety/quarantine.py) on the fit half of the labelled texts
(bench/injection/: public prompt-injection corpora against the learnings and agent prose of SWE-ContextBench's
sessions, split by group/project) and write its weights: recall_agent/safety/quarantine_weights.json.

A logistic model over the module's features (bench/logistic.py), classes weighted to equal mass (each attack
source and each benign source to equal mass within its class, so the 666 jailbreaks do not outweigh the 100
coding attacks); the threshold is the highest one that keeps at most MAX_FP_FIT of the fit half's benign
texts quarantined and catches the most attacks. The held-out half is never read here
(bench/bench_injection.py reports it).

    python bench/fit_quarantine.py            # fit and write the weights
    python bench/fit_quarantine.py --dry-run  # print them only
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(BENCH)]

from injection import corpus  # noqa: E402
from logistic import fit_logistic  # noqa: E402

from recall_agent.safety import quarantine  # noqa: E402

L2_GRID = (0.1, 0.3, 1.0)  # chosen by two-fold cross-validation inside the fit half, by group
WORDS = True  # the hashed bag of words beside the named patterns
WORD_MIN = 0.01  # word-bucket weights smaller than this are left out of the file
MAX_FP_FIT = 0.005  # benign texts of the fit half the threshold may quarantine (the target is 2% held out)
MIN_CAUGHT_FIT = 0.975  # attacks of the fit half the threshold must still catch (the target is 95% held out)


def matrix(items: list[corpus.Item], names: list[str]) -> np.ndarray:
    """The named features, then one column per word bucket (quarantine.words)."""
    x = np.zeros((len(items), len(names) + (quarantine.BUCKETS if WORDS else 0)))
    for r, item in enumerate(items):
        text = "\n".join(t for t in corpus.texts(item) if t)
        values = quarantine.features(text)
        x[r, : len(names)] = [values[n] for n in names]
        bag = quarantine.words(text) if WORDS else set()
        for b in bag:
            x[r, len(names) + b] = 1.0 / np.sqrt(len(bag))  # as quarantine.score weighs it
    return x


def sample_weights(items: list[corpus.Item]) -> np.ndarray:
    """Each class half the mass, each source within it an equal share."""
    per_source = Counter(i.source for i in items)
    sources = {c: {i.source for i in items if i.label == c} for c in (0, 1)}
    return np.array([1.0 / (per_source[i.source] * len(sources[i.label])) for i in items]) * len(items) / 2


def choose_threshold(p: np.ndarray, y: np.ndarray, policy: np.ndarray) -> float:
    """The highest threshold that still catches MIN_CAUGHT_FIT of the fit half's attacks (the policy's hits
    count as caught): as few ordinary notes as possible are held back. Never below what keeps the fit half's
    benign texts under MAX_FP_FIT, nor below 0.5."""
    benign = np.sort(p[(y == 0) & ~policy])[::-1]
    allowed = int(MAX_FP_FIT * len(benign))  # this many benign texts may score at or above it
    floor = float(np.nextafter(benign[allowed], 1.0)) if allowed < len(benign) else 0.0
    attacks = np.sort(p[(y == 1) & ~policy])
    missable = int((1 - MIN_CAUGHT_FIT) * (y == 1).sum())  # attacks allowed below it (policy hits are caught)
    ceiling = float(attacks[min(len(attacks) - 1, max(0, missable))]) if len(attacks) else 0.5
    return float(min(0.99, max(0.5, floor, ceiling)))


def _fold(item: corpus.Item) -> int:
    import hashlib

    return hashlib.sha256(f"fold:{item.group}".encode()).digest()[0] % 2


def choose_l2(items: list[corpus.Item], x: np.ndarray, y: np.ndarray) -> float:
    """The penalty with the lowest weighted log-loss on the other fold (two folds by group)."""
    folds = np.array([_fold(i) for i in items])
    sw = sample_weights(items)
    best, best_loss = L2_GRID[0], float("inf")
    for l2 in L2_GRID:
        loss = 0.0
        for k in (0, 1):
            train, test = folds != k, folds == k
            w, b = fit_logistic(x[train], y[train], l2, sample_weight=sw[train], iters=30)
            p = np.clip(1 / (1 + np.exp(-(x[test] @ w + b))), 1e-6, 1 - 1e-6)
            loss += float(-(sw[test] * (y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p))).sum())
        print(f"  l2 {l2:5}: held-out-fold log-loss {loss:.1f}", file=sys.stderr)
        if loss < best_loss:
            best, best_loss = l2, loss
    return best


def fit(items: list[corpus.Item]) -> dict:
    names = list(quarantine.FEATURES)
    x, y = matrix(items, names), np.array([i.label for i in items], dtype=float)
    l2 = choose_l2(items, x, y)
    w, b = fit_logistic(x, y, l2, sample_weight=sample_weights(items))
    named, buckets = w[: len(names)], w[len(names) :]
    p = 1 / (1 + np.exp(-(x @ w + b)))
    policy = x[:, [names.index(n) for n in quarantine.POLICY]].max(axis=1) > 0
    threshold = choose_threshold(p, y, policy)
    flagged = (p >= threshold) | policy
    caught = float(np.mean(flagged[y == 1]))
    fp = float(np.mean(flagged[y == 0]))
    for source in sorted({i.source for i in items}):
        rows = np.array([i.source == source for i in items])
        print(
            f"  fit half  {source:28} {rows.sum():5}  quarantined {flagged[rows].mean():6.1%}",
            file=sys.stderr,
        )
    return {
        "features": names,
        "weights": [round(float(v), 4) for v in named],
        "bias": round(b, 4),
        "words": {str(i): round(float(v), 3) for i, v in enumerate(buckets) if abs(v) >= WORD_MIN},
        "threshold": round(threshold, 4),
        "fitted_on": {
            "half": "fit",
            "attacks": int(y.sum()),
            "benign": int(len(y) - y.sum()),
            "attacks_quarantined": round(caught, 4),
            "benign_quarantined": round(fp, 4),
            "l2": l2,
            "script": "bench/fit_quarantine.py",
        },
    }


def fit_items() -> list[corpus.Item]:
    items = [i for i in corpus.load() if i.half == "fit"]
    attacks = [i for i in items if i.label == 1]
    return items + corpus.wrapped(attacks, items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    model = fit(fit_items())
    text = json.dumps(model, indent=1) + "\n"
    if args.dry_run:
        print(text)
    else:
        quarantine.WEIGHTS.write_text(text)
        print(f"wrote {quarantine.WEIGHTS.relative_to(ROOT)}: {json.dumps(model['fitted_on'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
