"""Screen a capture feature before the full left-out run (issue 33, eighth round): on the rows a model is
fitted on — the variant candidates, or the resolved episodes the episode model judges — as this checkout's
engine offers them on the TUNING projects (never the held-out ones), fit a logistic model with each tuning
unit left out in turn (`fit_capture.unit_of`, as `--lopo` groups them) and print the mean per-unit log-loss
and the AUC on the interactive units and on SWE-ContextBench, with and without the named features.

It is a screen, not the criterion: it sees one model, with the others as shipped, and no thresholds. What it
passes goes to `fit_capture.py --objective project --lopo`. A feature must be one the engine computes (in
`Episode.features`, or for `--model run` the run model's features, `engine.Engine._result`).

`--model run` (issue 33, ninth round) screens the run model on every judged run of the tuning projects, with
the labels' verdicts (`fit_capture.run_rows`), and adds what the log-loss alone did not show there: each unit
left out in turn, the run model fitted on the others as a fold of `--lopo` fits it (`fit_capture.fit_rows`
with `--objective project`: its own penalty and weighting, and the best-F1 threshold), and the failures of
the interactive units it then finds and misses out of unit, and of the failures of fixes worth keeping (what
capture's recall counts) how many it finds (the twelfth round's runmodel12 counted them by hand). A feature that lowers the log-loss can still
change which penalty and weighting every fold picks, and with them the threshold: the ninth round's
`sections` cue lowered the interactive units' log-loss by 0.003 and cost 18 interactive failures out of unit
that way, which the left-out criterion then showed (0.600 -> 0.549). Takes ~1 minute per feature set.

    python3 bench/screen_features.py --model variant --add FEATURE [FEATURE ...] [--l2 1 3 10]
    python3 bench/screen_features.py --model run --drop FEATURE [FEATURE ...]   # a feature already computed
"""

from __future__ import annotations

import argparse
import contextlib
import io
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


def rows(
    model: str, episodes: list | None = None
) -> tuple[list[dict[str, float]], np.ndarray, np.ndarray, list[str]]:
    """Each judged row's features, whether it is what the labels want kept, its unit and its session fold;
    with `episodes`, each row's (label, episode) appended to it in the same order (bench/screen_words.py
    reads their words)."""
    feats, ys, units, folds = [], [], [], []
    for label in L.load_for_fit(("tune",)):
        for ep in F.replay(label).judged_episodes:
            if ep.variant != (model == "variant"):
                continue
            match = label.episode_for({L.suffix(e["id"]) for e in ep.errors})
            good = bool(match and L.worth_keeping(match))
            if model == "variant":  # the candidate is the run the label names as the fix
                good = good and L.suffix(str(match.get("passed") or "")) == L.suffix(ep.passed.id)
            feats.append(dict(ep.features))
            if episodes is not None:
                episodes.append((label, ep))
            ys.append(1.0 if good else 0.0)
            units.append(F.unit_of(label))
            folds.append(F.fold_of(label))
    return feats, np.array(ys), np.array(units), folds


def auc(y: np.ndarray, p: np.ndarray) -> float:
    """The area under the ROC curve (ties counted half), from ranks: the run model's 14k rows in linear memory."""
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    allp = np.concatenate([pos, neg])[order]
    # average ranks of ties
    i = 0
    while i < len(allp):
        j = i
        while j + 1 < len(allp) and allp[j + 1] == allp[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def left_out(
    x: np.ndarray, y: np.ndarray, units: np.ndarray, l2: float, alpha: float, extra=None
) -> tuple[float, np.ndarray]:
    """Mean per-unit log-loss and the out-of-fold probabilities, each unit predicted by a fit on the others.
    `extra(unit)`, when given, returns columns for every row chosen without the left-out unit's rows (a
    vocabulary chosen inside the fold: bench/screen_words.py), appended to `x` for that unit's fit."""
    oof, losses = np.zeros(len(y)), []
    full = x
    for unit in sorted(set(units)):
        train = units != unit
        if extra is not None:
            x = np.hstack([full, extra(unit)])
        w, b = fit_logistic(x[train], y[train], l2, F.project_weights(units[train], alpha))
        p = 1 / (1 + np.exp(-np.clip(x[~train] @ w + b, -60, 60)))
        oof[~train] = p
        losses.append(-np.mean(y[~train] * np.log(p + 1e-9) + (1 - y[~train]) * np.log(1 - p + 1e-9)))
    return float(np.mean(losses)), oof


def run_rows() -> tuple[list[dict[str, float]], np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Every judged run of the tuning projects (`fit_capture.run_rows`, one replay per session): its
    features, whether the labels call it a failure, its unit, its fold, and whether it is the failing call
    of a fix worth keeping (`labels.worth_keeping`: what capture's recall counts)."""
    feats, ys, units, folds, useful = [], [], [], [], []
    for label in L.load_for_fit(("tune",)):
        kept = {i for e in label.episodes if L.worth_keeping(e) for i in label.episode_ids(e)}
        for call, features, failed in F.run_rows_with_ids(label):
            feats.append(dict(features))
            ys.append(1.0 if failed else 0.0)
            units.append(F.unit_of(label))
            folds.append(F.fold_of(label))
            useful.append(failed and call in kept)
    return feats, np.array(ys), np.array(units), folds, np.array(useful, dtype=bool)


def run_folds(
    feats: list[dict[str, float]],
    y: np.ndarray,
    units: np.ndarray,
    folds: list[str],
    useful: np.ndarray,
    augment=None,
) -> str:
    """The run model as each `--lopo` fold fits it (penalty, weighting and best-F1 threshold chosen on the
    other units), judged on the left-out unit's runs: one line per unit, and the interactive units' failures
    found, missed and false, pooled; and of the failures of fixes worth keeping (what capture's recall
    counts, the rest are failures nobody needs stored), how many it finds. `augment(unit)`, when given,
    returns every row's features for the fold that leaves `unit` out (columns chosen without its rows:
    bench/screen_words.py)."""
    F.OBJECTIVE = "project"
    out, total, kept = [], np.zeros(3, dtype=int), np.zeros(2, dtype=int)
    given = feats
    for unit in sorted(set(units)):
        feats = given if augment is None else augment(unit)
        train = [i for i in range(len(y)) if units[i] != unit]
        with contextlib.redirect_stdout(io.StringIO()):
            names, w, b, _y, points, chosen, _losses = F.fit_rows(
                [feats[i] for i in train], list(y[train]), [folds[i] for i in train], list(units[train])
            )
        best = F.best_point(points, F._f1, lambda p: F._se(F._f1(p), p["tp"] + p["fp"] + p["fn"]))
        test = units == unit
        x = np.array([[r.get(k, 0.0) for k in names] for r, t in zip(feats, test, strict=True) if t])
        said = 1 / (1 + np.exp(-np.clip(x @ w + b, -60, 60))) >= best["threshold"]
        truth = y[test] == 1
        counts = np.array([(said & truth).sum(), (~said & truth).sum(), (said & ~truth).sum()])
        worth = useful[test]
        useful_counts = np.array([(said & worth).sum(), worth.sum()])
        total += counts if unit != "swecb" else 0
        kept += useful_counts if unit != "swecb" else 0
        out.append(f"    {unit:26} L2 {chosen[0][0]:g} alpha {chosen[0][1]:g} threshold {best['threshold']:.3f}: "
                   f"found {counts[0]}, missed {counts[1]}, false {counts[2]}; "
                   f"worth keeping {useful_counts[0]} of {useful_counts[1]}")  # fmt: skip
    out.append(f"    interactive units, out of unit: found {total[0]}, missed {total[1]}, false {total[2]}; "
               f"worth keeping {kept[0]} of {kept[1]}")  # fmt: skip
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["variant", "episode", "run"], default="variant")
    ap.add_argument("--add", nargs="+", default=[], help="the features to screen (engine feature names)")
    ap.add_argument(
        "--drop", nargs="+", default=[], help="--model run: features the engine computes, left out"
    )
    ap.add_argument("--l2", nargs="+", type=float, default=[1.0, 3.0, 10.0])
    ap.add_argument("--alpha", type=float, default=0.5, help="rows weighted by unit size ** -alpha")
    args = ap.parse_args(argv)
    if not args.add and not args.drop:
        ap.error("name the features to screen: --add (or, for --model run, --drop)")
    if args.model == "run":
        return screen_run(*run_rows(), args.add + args.drop, args)
    feats, y, units, _folds = rows(args.model)
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


def screen_run(
    feats: list[dict[str, float]],
    y: np.ndarray,
    units: np.ndarray,
    folds: list[str],
    useful: np.ndarray,
    screened: list[str],
    args: argparse.Namespace,
) -> int:
    """The run model without and with the screened features: log-loss and AUC per left-out unit at the
    penalties asked for, then each `--lopo` fold's own choice and what it finds out of unit."""
    missing = [f for f in screened if not any(f in r for r in feats)]
    if missing:
        print(f"not a feature of the run model's rows: {', '.join(missing)}", file=sys.stderr)
        return 2
    inter = units != "swecb"
    print(f"run: {len(y)} runs, {int(y.sum())} failures; units {len(set(units))}")
    for extra in ([], screened):
        keep = [{k: v for k, v in r.items() if k not in screened or k in extra} for r in feats]
        names = sorted({k for r in keep for k in r})
        x = np.array([[r.get(k, 0.0) for k in names] for r in keep])
        name = "+".join(extra) or "(none)"
        for l2 in args.l2:
            loss, oof = left_out(x, y, units, l2, args.alpha)
            print(f"  L2 {l2:g} {name:40} log-loss {loss:.4f}  AUC interactive {auc(y[inter], oof[inter]):.3f}"
                  f"  AUC swecb {auc(y[~inter], oof[~inter]):.3f}")  # fmt: skip
        print(f"  {name}, each unit left out as --lopo fits the run model:")
        print(run_folds(keep, y, units, folds, useful))
    return 0


if __name__ == "__main__":
    sys.exit(main())
