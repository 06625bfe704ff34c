"""Screen a model class for a capture decision before any code change (issue 33, seventeenth round): is the
logistic model the limit? On the rows one model is fitted on (the episode model's resolved errors, the variant
model's candidates, or the run model's judged runs; the TUNING projects only, replayed with the shipped
weights as bench/screen_features.py builds them), each tuning unit left out in turn (`fit_capture.unit_of`, the
units of `--lopo`), three model classes fitted on the other units:

- `logistic`: the shipped fit (`fit_capture.fit_rows` with `--objective project`: its penalty and weighting
  grid, its averaging of tied settings, and its out-of-fold curve over session folds);
- `trees`: gradient-boosted shallow trees (scikit-learn's HistGradientBoostingClassifier), the setting (depth,
  trees, shrinkage, leaf size) chosen by the mean per-unit log-loss with each of the other units left out in
  turn (never the left-out one), its out-of-fold curve over the same session folds as the logistic fit's;
- `inter`: the logistic fit with up to MAX_TERMS pairwise products or quantile bins of the same features,
  chosen greedily inside the fold by that inner per-unit log-loss, then fitted by `fit_rows` like `logistic`.

Each fold's threshold is read off its own out-of-fold curve as the real fit reads it (the episode model:
`episode_point` at the shipped target; variant: `best_point` nearest both targets; run: best F1), and the
left-out unit's rows are judged at it. Printed per unit: log-loss, and P / R at the fold's threshold; pooled:
the mean per-unit log-loss, the AUC of the out-of-unit scores (interactive units and SWE-ContextBench apart)
and P / R over the interactive units. It is a screen of one model with the others as shipped, not the
criterion.

scikit-learn is not a dependency of recall: run it with an interpreter of your own that has it,

    python3 -m venv --system-site-packages .venv-screen
    .venv-screen/bin/pip install scikit-learn
    OMP_NUM_THREADS=1 nice .venv-screen/bin/python bench/screen_models.py --model episode \
        [--classes logistic trees inter] [--cache DIR]

The rows are pickled in `--cache` (one replay of the tuning sessions per model, ~1 minute; delete the file
after a change to the engine), and each run's out-of-unit scores and decisions beside them
(`results-<model>-<classes>.pkl`). Without scikit-learn, `--classes logistic inter` runs on the project's own
interpreter. On a quiet core: the episode and variant models ~5 minutes each with `--tree-alphas 0 0.5 1`,
the run model's 14k rows ~15 minutes with alpha 0.5 alone. Issue 33's seventeenth round:
bench/sessions/NOTES-trees17-round17.md, bench/results/screen_round17_trees17.txt.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import itertools
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))

import fit_capture as F  # noqa: E402
import screen_features as S  # noqa: E402
from logistic import fit_logistic  # noqa: E402

# boosted trees' settings, chosen per fold by the inner per-unit log-loss
TREE_GRID = [
    {"max_depth": d, "max_iter": n, "learning_rate": lr, "min_samples_leaf": leaf}
    for d, n, lr, leaf in [
        (1, 100, 0.05, 40), (1, 300, 0.05, 40), (2, 100, 0.05, 40), (2, 200, 0.05, 80),
        (2, 300, 0.03, 40), (3, 100, 0.05, 80), (3, 200, 0.03, 80), (3, 300, 0.03, 120),
    ]
]  # fmt: skip
TREE_ALPHAS = [
    0.5
]  # rows weighted by unit size ** -alpha (--tree-alphas: chosen among several, as the logistic's)
MAX_TERMS = 4  # interactions or bins the `inter` class may add
TOP_PAIRS = 8  # the pairs are among the features the fold's logistic fit weighs most
INNER_L2 = 3.0  # the inner selection's penalty (the outer fit chooses its own)


def rows(model: str) -> tuple[list[dict[str, float]], np.ndarray, np.ndarray, np.ndarray]:
    """Each judged row's features, its label, its unit and its session fold (`fit_capture.fold_of`), as the
    real fit builds them (screen_features' rows): the episode model every feature of a non-variant episode,
    the variant model VARIANT_FEATURES, the run model the judged runs with the labels' verdicts."""
    if model == "run":
        feats, y, units, folds, _useful = S.run_rows()
        return feats, y, units, np.array(folds)
    feats, y, units, folds = S.rows(model)
    if model == "variant":
        feats = [{k: r.get(k, 0.0) for k in F.VARIANT_FEATURES} for r in feats]
    return feats, y, units, np.array(folds)


def cached_rows(model: str, cache: Path) -> tuple:
    path = cache / f"rows-{model}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    out = rows(model)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def threshold(model: str, points: list[dict[str, float]], target: float) -> float:
    """The fold's threshold from its own out-of-fold curve, as fit_capture reads it for this model."""
    if model == "episode":
        return F.episode_point(points, target)["threshold"]
    if model == "variant":
        return F.best_point(points, F._both, F._both_se)["threshold"]
    return F.best_point(points, F._f1, lambda p: F._se(F._f1(p), p["tp"] + p["fp"] + p["fn"]))["threshold"]


def matrix(feats: list[dict[str, float]], names: list[str]) -> np.ndarray:
    return np.array([[r.get(k, 0.0) for k in names] for r in feats])


# --- (a) the shipped logistic fit --------------------------------------------------------------------------


def fit_logistic_class(feats, y, units, folds):
    """fit_capture.fit_rows on the rows: (predict(rows) -> probabilities, the out-of-fold curve)."""
    with contextlib.redirect_stdout(io.StringIO()):
        names, w, b, _y, points, _chosen, _losses = F.fit_rows(feats, list(y), list(folds), list(units))

    def predict(rows_):
        return 1 / (1 + np.exp(-np.clip(matrix(rows_, names) @ w + b, -60, 60)))

    return predict, points, {"names": names, "w": w}


# --- (b) boosted shallow trees -----------------------------------------------------------------------------


def _hgb(setting: dict, seed: int = 0):
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_depth=setting["max_depth"],
        max_leaf_nodes=2 ** setting["max_depth"],
        max_iter=setting["max_iter"],
        learning_rate=setting["learning_rate"],
        min_samples_leaf=setting["min_samples_leaf"],
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


def _tree_fit(x, y, units, setting):
    sw = F.project_weights(units, setting["alpha"])
    return _hgb(setting).fit(x, y, sample_weight=sw)


def fit_trees_class(feats, y, units, folds):
    """The setting with the lowest mean per-unit log-loss, each other unit left out in turn; the out-of-fold
    curve over the session folds; the fit on every row given."""
    names = sorted({k for r in feats for k in r})
    x = matrix(feats, names)
    inner = {}
    grid = [{**s, "alpha": a} for s in TREE_GRID for a in TREE_ALPHAS]
    for i, setting in enumerate(grid):
        losses = []
        for u in sorted(set(units)):
            test = units == u
            m = _tree_fit(x[~test], y[~test], units[~test], setting)
            losses.append(F._log_loss(m.predict_proba(x[test])[:, 1], y[test]))
        inner[i] = float(np.mean(losses))
    best = min(inner, key=inner.get)
    setting = grid[best]
    oof = np.zeros(len(y))
    for k in sorted(set(folds)):
        test = folds == k
        oof[test] = _tree_fit(x[~test], y[~test], units[~test], setting).predict_proba(x[test])[:, 1]
    m = _tree_fit(x, y, units, setting)

    def predict(rows_):
        return m.predict_proba(matrix(rows_, names))[:, 1]

    return predict, F.curve(oof, y), {"setting": setting, "inner": inner[best]}


# --- (c) logistic with a few interactions or bins -----------------------------------------------------------


def _candidates(feats, y, units) -> list[tuple]:
    """Pairwise products of the TOP_PAIRS features the plain logistic fit weighs most (standardised), and
    quartile indicators of the continuous features (more than 4 distinct values), cut at the training rows'
    quantiles."""
    names = sorted({k for r in feats for k in r})
    x = matrix(feats, names)
    sd = x.std(axis=0) + 1e-9
    w, _b = fit_logistic(x / sd, y, INNER_L2, F.project_weights(units, 0.5))
    top = [names[i] for i in np.argsort(-np.abs(w))[:TOP_PAIRS]]
    out = [("pair", a, c) for a, c in itertools.combinations(sorted(top), 2)]
    for j, k in enumerate(names):
        if len(np.unique(x[:, j])) > 4:
            cuts = np.unique(np.quantile(x[:, j], [0.25, 0.5, 0.75]))
            for lo, hi in zip([-np.inf, *cuts], [*cuts, np.inf], strict=True):
                out.append(("bin", k, (float(lo), float(hi))))
    return out


def _term(r: dict[str, float], t: tuple) -> float:
    if t[0] == "pair":
        return r.get(t[1], 0.0) * r.get(t[2], 0.0)
    lo, hi = t[2]
    return 1.0 if lo < r.get(t[1], 0.0) <= hi else 0.0


def _name(t: tuple) -> str:
    return f"{t[1]}*{t[2]}" if t[0] == "pair" else f"{t[1]} in ({t[2][0]:g},{t[2][1]:g}]"


def _inner_loss(x, y, units) -> float:
    sw = F.project_weights(units, 0.5)
    losses = []
    for u in sorted(set(units)):
        test = units == u
        w, b = fit_logistic(x[~test], y[~test], INNER_L2, sw[~test])
        losses.append(F._log_loss(1 / (1 + np.exp(-np.clip(x[test] @ w + b, -60, 60))), y[test]))
    return float(np.mean(losses))


def fit_inter_class(feats, y, units, folds):
    """Up to MAX_TERMS terms added greedily while each lowers the inner per-unit log-loss, then fit_rows."""
    names = sorted({k for r in feats for k in r})
    x = matrix(feats, names)
    cands = _candidates(feats, y, units)
    cols = {t: np.array([_term(r, t) for r in feats]) for t in cands}
    chosen: list[tuple] = []
    current = _inner_loss(x, y, units)
    for _ in range(MAX_TERMS):
        base = np.column_stack([x] + [cols[t] for t in chosen]) if chosen else x
        scored = {
            t: _inner_loss(np.column_stack([base, cols[t]]), y, units) for t in cands if t not in chosen
        }
        t = min(scored, key=scored.get)
        if scored[t] >= current - 1e-4:
            break
        chosen.append(t)
        current = scored[t]

    def augment(rows_):
        return [{**r, **{f"x:{_name(t)}": _term(r, t) for t in chosen}} for r in rows_]

    predict, points, info = fit_logistic_class(augment(feats), y, units, folds)
    return (
        (lambda rows_: predict(augment(rows_))),
        points,
        {"terms": [_name(t) for t in chosen], "inner": current},
    )


def loss_interval(base: dict, other: dict, rounds: int = 10000, seed: int = 0) -> tuple[float, float, float]:
    """The mean over units of `other`'s per-unit log-loss minus `base`'s, and a 90% paired bootstrap interval
    (units drawn with replacement): how far the mean moves with which units happen to be in the tuning half."""
    d = np.array([other[u]["loss"] - base[u]["loss"] for u in sorted(base)])
    draws = np.random.default_rng(seed).integers(0, len(d), size=(rounds, len(d)))
    means = d[draws].mean(axis=1)
    return float(d.mean()), float(np.quantile(means, 0.05)), float(np.quantile(means, 0.95))


CLASSES = {"logistic": fit_logistic_class, "trees": fit_trees_class, "inter": fit_inter_class}


def share(r: dict, key: str) -> float:
    """Of a unit's counts, precision (`key` "fp") or recall (`key` "fn"); nan when there is nothing to share."""
    return r["tp"] / (r["tp"] + r[key]) if r["tp"] + r[key] else float("nan")


def versus(name: str, base: str, a: dict, b: dict) -> str:
    """One line comparing the per-unit rows `b` (model `name`) with `a` (model `base`): the mean unit
    log-loss difference with its bootstrap interval, and on how many units log-loss, P and R moved which way."""
    ps = [
        (share(b[u], "fp"), share(a[u], "fp"))
        for u in a
        if b[u]["tp"] + b[u]["fp"] and a[u]["tp"] + a[u]["fp"]
    ]
    rs = [(share(b[u], "fn"), share(a[u], "fn")) for u in a if a[u]["tp"] + a[u]["fn"]]
    diff, lo, hi = loss_interval(a, b)
    return (
        f"  {name} vs {base}: mean unit log-loss {diff:+.4f} (90% bootstrap over units {lo:+.4f}..{hi:+.4f}); "
        f"lower on {sum(b[u]['loss'] < a[u]['loss'] for u in a)} of {len(a)} units; P higher / equal / lower on "
        f"{sum(x > z for x, z in ps)} / {sum(x == z for x, z in ps)} / {sum(x < z for x, z in ps)}; "
        f"R higher / equal / lower on {sum(x > z for x, z in rs)} / {sum(x == z for x, z in rs)} / "
        f"{sum(x < z for x, z in rs)}"
    )


def screen(model: str, classes: list[str], cache: Path, target: float) -> str:
    feats, y, units, folds = cached_rows(model, cache)
    F.OBJECTIVE, F.FOLD_BY = "project", "session"
    out = [f"{model}: {len(y)} rows, {int(y.sum())} positive; {len(set(units))} units; target {target}"]
    res = {c: {"oof": np.zeros(len(y)), "said": np.zeros(len(y), dtype=bool), "rows": {}} for c in classes}
    for unit in sorted(set(units)):
        test = units == unit
        train_idx = np.flatnonzero(~test)
        tr = [feats[i] for i in train_idx]
        te = [feats[i] for i in np.flatnonzero(test)]
        for c in classes:
            t0 = time.time()
            predict, points, info = CLASSES[c](tr, y[~test], units[~test], folds[~test])
            p = predict(te)
            thr = threshold(model, points, target)
            said = p >= thr
            truth = y[test] == 1
            tp, fp, fn = int((said & truth).sum()), int((said & ~truth).sum()), int((~said & truth).sum())
            res[c]["oof"][test] = p
            res[c]["said"][test] = said
            res[c]["rows"][unit] = {"loss": F._log_loss(p, y[test]), "tp": tp, "fp": fp, "fn": fn, "thr": thr}
            extra = {k: v for k, v in info.items() if k not in ("names", "w")}
            print(f"  {unit:26} {c:9} loss {F._log_loss(p, y[test]):.4f} thr {thr:.3f} tp {tp} fp {fp} fn {fn}"
                  f" ({time.time() - t0:.0f}s) {extra}", file=sys.stderr, flush=True)  # fmt: skip
    out.append(f"  {'unit':26} {'rows':>5} {'pos':>4}  " + "  ".join(f"{c:>24}" for c in classes))
    out.append(f"  {'':26} {'':>5} {'':>4}  " + "  ".join(f"{'loss    P     R    thr':>24}" for c in classes))
    for unit in sorted(set(units)):
        test = units == unit
        cells = []
        for c in classes:
            r = res[c]["rows"][unit]
            cells.append(f"{r['loss']:.4f} {share(r, 'fp'):5.3f} {share(r, 'fn'):5.3f} {r['thr']:5.3f}")
        out.append(
            f"  {unit:26} {int(test.sum()):5d} {int(y[test].sum()):4d}  "
            + "  ".join(f"{c:>24}" for c in cells)
        )
    inter = units != "swecb"
    for c in classes:
        rs = res[c]["rows"]
        loss = np.mean([r["loss"] for r in rs.values()])
        ps = [share(r, "fp") for r in rs.values() if r["tp"] + r["fp"]]
        rr = [share(r, "fn") for r in rs.values() if r["tp"] + r["fn"]]
        s, t = res[c]["said"][inter], y[inter] == 1
        within = [
            S.auc(y[units == u], res[c]["oof"][units == u])
            for u in sorted(set(units))
            if min(y[units == u].sum(), (1 - y[units == u]).sum()) >= 3
        ]
        out.append(
            f"  {c:9} mean unit log-loss {loss:.4f}; AUC interactive {S.auc(y[inter], res[c]['oof'][inter]):.3f} "
            f"swecb {S.auc(y[~inter], res[c]['oof'][~inter]):.3f}; P/R unit means {np.mean(ps):.3f} / {np.mean(rr):.3f}; "
            f"interactive pooled P {(s & t).sum() / max(1, s.sum()):.3f} R {(s & t).sum() / max(1, t.sum()):.3f}; "
            f"mean AUC within a unit {np.mean(within):.3f} ({len(within)} units with 3 of each)"
        )
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"results-{model}-{'-'.join(classes)}.pkl").write_bytes(
        pickle.dumps({"y": y, "units": units, **res})
    )
    if "logistic" in classes:
        out += [
            versus(c, "logistic", res["logistic"]["rows"], res[c]["rows"]) for c in classes if c != "logistic"
        ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["episode", "variant", "run"], default="episode")
    ap.add_argument("--classes", nargs="+", choices=list(CLASSES), default=list(CLASSES))
    ap.add_argument(
        "--cache", type=Path, default=BENCH / ".cache" / "screen_models", help="where rows are pickled"
    )
    ap.add_argument("--target", type=float, help="the episode target (default: the shipped one)")
    ap.add_argument(
        "--tree-alphas", nargs="+", type=float, default=TREE_ALPHAS, help="trees: weightings tried"
    )
    args = ap.parse_args(argv)
    if "trees" in args.classes and importlib.util.find_spec("sklearn") is None:
        ap.error(
            "--classes trees needs scikit-learn, which recall does not install: run this with an interpreter "
            "that has it (the module docstring), or pass --classes logistic inter"
        )

    TREE_ALPHAS[:] = args.tree_alphas
    target = args.target or float(json.loads(F.SHIPPED.read_text())["episode"].get("target_precision") or 0.8)
    print(screen(args.model, args.classes, args.cache, target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
