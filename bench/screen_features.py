"""Screen a capture feature before the full left-out run (issue 33, eighth round): on the rows a model is
fitted on — the variant candidates, or the resolved episodes the episode model judges — as this checkout's
engine offers them on the TUNING projects (never the held-out ones), fit a logistic model with each tuning
unit left out in turn (`fit_capture.unit_of`, as `--lopo` groups them) and print the mean per-unit log-loss
and the AUC on the interactive units and on SWE-ContextBench, with and without the named features.

It is a screen, not the criterion: it sees one model, with the others as shipped, and no thresholds. What it
passes goes to `fit_capture.py --objective project --lopo`. A feature must be one the engine computes (in
`Episode.features`).

    python3 bench/screen_features.py --model variant --add FEATURE [FEATURE ...] [--l2 1 3 10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))

import fit_capture as F  # noqa: E402
import labels as L  # noqa: E402
from logistic import fit_logistic  # noqa: E402


def rows(model: str) -> tuple[list[dict[str, float]], np.ndarray, np.ndarray]:
    """Each judged row's features, whether it is what the labels want kept, and its unit."""
    feats, ys, units = [], [], []
    for label in L.load_for_fit(("tune",)):
        for ep in F.replay(label).judged_episodes:
            if ep.variant != (model == "variant"):
                continue
            match = label.episode_for({L.suffix(e["id"]) for e in ep.errors})
            good = bool(match and L.worth_keeping(match))
            if model == "variant":  # the candidate is the run the label names as the fix
                good = good and L.suffix(str(match.get("passed") or "")) == L.suffix(ep.passed.id)
            feats.append(dict(ep.features))
            ys.append(1.0 if good else 0.0)
            units.append(F.unit_of(label))
    return feats, np.array(ys), np.array(units)


def auc(y: np.ndarray, p: np.ndarray) -> float:
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    return float(
        ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
        / (len(pos) * len(neg))
    )


def left_out(
    x: np.ndarray, y: np.ndarray, units: np.ndarray, l2: float, alpha: float
) -> tuple[float, np.ndarray]:
    """Mean per-unit log-loss and the out-of-fold probabilities, each unit predicted by a fit on the others."""
    oof, losses = np.zeros(len(y)), []
    for unit in sorted(set(units)):
        train = units != unit
        w, b = fit_logistic(x[train], y[train], l2, F.project_weights(units[train], alpha))
        p = 1 / (1 + np.exp(-np.clip(x[~train] @ w + b, -60, 60)))
        oof[~train] = p
        losses.append(-np.mean(y[~train] * np.log(p + 1e-9) + (1 - y[~train]) * np.log(1 - p + 1e-9)))
    return float(np.mean(losses)), oof


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["variant", "episode"], default="variant")
    ap.add_argument("--add", nargs="+", required=True, help="the features to screen (engine feature names)")
    ap.add_argument("--l2", nargs="+", type=float, default=[1.0, 3.0, 10.0])
    ap.add_argument("--alpha", type=float, default=0.5, help="rows weighted by unit size ** -alpha")
    args = ap.parse_args(argv)
    feats, y, units = rows(args.model)
    if args.model == "variant":
        base = [f for f in F.VARIANT_FEATURES if f not in args.add]
    else:
        base = sorted({k for r in feats for k in r if k not in args.add and not k.startswith("variant_")})
    inter = units != "swecb"
    print(f"{args.model}: {len(y)} rows, {int(y.sum())} positive; units {len(set(units))}")
    for l2 in args.l2:
        for extra in ([], list(args.add)):
            x = np.array([[r.get(f, 0.0) for f in base + extra] for r in feats])
            loss, oof = left_out(x, y, units, l2, args.alpha)
            name = "+".join(extra) or "(none)"
            print(f"  L2 {l2:g} {name:40} log-loss {loss:.4f}  AUC interactive {auc(y[inter], oof[inter]):.3f}"
                  f"  AUC swecb {auc(y[~inter], oof[~inter]):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
