"""Screen words as evidence for the capture models (issue 33, eighteenth round): do the words of the error,
of the agent, and the failed command's program tell the episode and variant models which errors are worth
keeping, out of project? On the rows those models are fitted on (the TUNING projects only, replayed with the
shipped weights: `screen_features.rows`), each tuning unit left out in turn (`fit_capture.unit_of`, the
units of `--lopo`), the shipped features plus word indicators from

- `a`: the error's lines (every distinct error of the episode; lower-case word tokens; quoted names, paths,
  file names, numbers and hex dropped),
- `b`: the agent's words between the failure and the candidate pass (`Episode.said`), tokenised alike,
- `c`: the failed call's program and its family (`npm test`, `git push`; a tool other than Bash by its name).

The vocabulary is chosen INSIDE each fold, from the other units' rows only, to transfer: a word counts when it
appears in rows of at least K sessions of at least M different projects (`--spread M K`), at most CAP words a
family, the most widely spread first. Word columns are set to SCALE instead of 1: under the fit's one L2 penalty
that is a penalty SCALE**-2 times as strong on the words as on the hand-made features.

Two stages. `quick`: at a fixed penalty (`screen_features.left_out`), the mean per-unit log-loss and the AUC
(interactive units and SWE-ContextBench apart) of every family, spread and scale asked for. `full` (the best
quick setting per model, or `--full FAMILY M K SCALE`): the shipped fit (`fit_capture.fit_rows` with
`--objective project`, as `screen_models.fit_logistic_class`) with and without the words, each fold's threshold
read off its own out-of-fold curve as the real fit reads it (`screen_models.threshold`), the left-out unit's
rows judged at it: per unit log-loss and P / R, pooled AUC, interactive pooled P / R, and a bootstrap interval
of the mean log-loss difference. Then the 30 heaviest words of the fit on every unit (is it a project's name
or knowledge?).

`--consistent` keeps of the spread words only those whose within-project contrast (positives among a
project's rows with the word against without) has one sign in at least M training projects. `--model run`
screens the run model's judged runs (families `a`, the run's output, and `c`; its full stage is
`screen_features.run_folds` without and with the words).

    nice python3 bench/screen_words.py --model episode [--families a b c abc] [--spread 3 6 4 8 5 10]
        [--scales 0.3 1] [--cap 200] [--consistent] [--full abc 3 6 0.3] [--best 1] [--no-quick] [--cache DIR]

Rows are pickled in `--cache` (one replay per model, ~1 minute; delete them after a change to the engine). On
two shared cores: the quick stage a few minutes per model (the run model ~25 minutes for six settings), the
full one 2-5 minutes per setting with a few dozen words, ~5 minutes a unit with 400, and the run model's
~35 minutes at cap 50. Output of the eighteenth round:
bench/results/screen_round18_words18.txt, notes bench/sessions/NOTES-words18-round18.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import pickle
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))

import fit_capture as F  # noqa: E402
import screen_features as S  # noqa: E402
import screen_models as SM  # noqa: E402

CAP = 200  # words a family may bring, per fold
CONSISTENT = False  # --consistent: only words whose within-project contrast has one sign in most projects
QUICK_L2 = 3.0
QUICK_ALPHA = 0.5

_QUOTED = re.compile(
    r"(?<!\w)'[^'\n]{0,80}'(?!\w)|\"[^\"\n]{0,80}\"|`[^`\n]{0,80}`|\u2018[^\u2019\n]{0,80}\u2019"
)
_PATHISH = re.compile(r"\S*(?:/|\\|\w\.\w|@|=)\S*")
_WORD = re.compile(r"(?<![\w.-])[a-z][a-z_]{1,24}(?![\w])")


def tokens(text: str) -> set[str]:
    """Lower-case word tokens of a text without its quoted names, paths, file names, numbers and hex."""
    text = _QUOTED.sub(" ", text)
    text = _PATHISH.sub(" ", text)
    return set(_WORD.findall(text.lower()))


def words_of(label, ep) -> dict:
    """What a row says, by family, and whose it is (session, project)."""
    err = set()
    for e in ep.errors:
        t = str(e.get("text") or "")
        err |= tokens(t[:3000] + "\n" + t[-3000:] if len(t) > 6000 else t)
    said = set()
    for t in ep.said:
        said |= tokens(t)
    return {"a": err, "b": said, "c": _program(ep.failed), "session": label.session, "project": label.project}


def run_rows() -> tuple:
    """`--model run`: every judged run of the tuning projects with the labels' verdicts, as
    `fit_capture.run_rows_with_ids` replays them (the same rows in the same order: checked against it), and
    what each run's output and program say."""
    import labels as L

    feats, ys, units, folds, info = [], [], [], [], []
    for label in L.load_for_fit(("tune",)):
        failing = label.failed_ids()
        engine = F.replay(label, decide_run=lambda run, f, failing=failing: L.suffix(run.id) in failing)
        assert [(L.suffix(r.id), f, x) for r, f, x in engine.judged_runs] == F.run_rows_with_ids(label)
        for run, features, failed in engine.judged_runs:
            feats.append(dict(features))
            ys.append(1.0 if failed else 0.0)
            units.append(F.unit_of(label))
            folds.append(F.fold_of(label))
            t = str(run.text or "")
            row = {"a": tokens(t[:3000] + "\n" + t[-3000:] if len(t) > 6000 else t), "b": set()}
            row["c"] = _program(run)
            info.append({**row, "session": label.session, "project": label.project})
    return feats, np.array(ys), np.array(units), np.array(folds), info


def _program(run) -> set[str]:
    main = run.command.main
    if run.tool != "Bash":
        return {f"tool {run.tool}"}
    if main is None:
        return set()
    out = {f"prog {main.program}"}
    if re.fullmatch(r"[\w-]+ [a-z][\w-]*", main.family):
        out.add(f"fam {main.family}")
    return out


def cached(model: str, cache: Path) -> tuple:
    path = cache / f"words-{model}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    if model == "run":
        out = run_rows()
        cache.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(out))
        return out
    episodes: list = []
    feats, y, units, folds = S.rows(model, episodes)
    if model == "variant":
        feats = [{k: r.get(k, 0.0) for k in F.VARIANT_FEATURES} for r in feats]
    else:
        feats = [{k: v for k, v in r.items() if not k.startswith("variant_")} for r in feats]
    info = [words_of(label, ep) for label, ep in episodes]
    out = (feats, y, units, np.array(folds), info)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def vocabulary(
    info: list[dict], rows: np.ndarray, family: str, m: int, k: int, cap: int | None = None, y=None
) -> list[str]:
    """The words of `family` (one of a, b, c) in rows of at least k sessions of at least m projects among
    `rows` (a boolean mask), the most widely spread first, at most cap."""
    sessions, projects = defaultdict(set), defaultdict(set)
    for i in np.flatnonzero(rows):
        for w in info[i][family]:
            sessions[w].add(info[i]["session"])
            projects[w].add(info[i]["project"])
    ok = [w for w in sessions if len(sessions[w]) >= k and len(projects[w]) >= m]
    ok.sort(key=lambda w: (-len(projects[w]), -len(sessions[w]), w))
    if CONSISTENT and y is not None:
        ok = consistent(info, rows, y, family, ok, m)
    return [f"{family}:{w}" for w in ok[: cap or CAP]]


def consistent(info, rows, y, family, words, m, margin: float = 0.05) -> list[str]:
    """`--consistent`: of `words`, those whose rows are more often (or less often) positive than the other
    rows of the same project in at least m training projects and the other way in at most a quarter as many
    (within-project contrasts: a word that only names a project with many keepers says nothing of another),
    the most consistent first."""
    by_project = defaultdict(list)
    for i in np.flatnonzero(rows):
        by_project[info[i]["project"]].append(i)
    score = {}
    for w in words:
        up = down = 0
        for idx in by_project.values():
            has = [y[i] for i in idx if w in info[i][family]]
            hasnt = [y[i] for i in idx if w not in info[i][family]]
            if len(has) < 2 or not hasnt:
                continue
            d = np.mean(has) - np.mean(hasnt)
            up += d > margin
            down += d < -margin
        if max(up, down) >= m and min(up, down) * 4 <= max(up, down):
            score[w] = max(up, down) - min(up, down)
    return sorted(score, key=lambda w: (-score[w], w))


def columns(info: list[dict], vocab: list[str], scale: float) -> np.ndarray:
    index = {w: j for j, w in enumerate(vocab)}
    x = np.zeros((len(info), len(vocab)))
    for i, r in enumerate(info):
        for fam in "abc":
            for w in r[fam]:
                j = index.get(f"{fam}:{w}")
                if j is not None:
                    x[i, j] = scale
    return x


def fold_vocab(info, train: np.ndarray, families: str, m: int, k: int, y=None) -> list[str]:
    return [w for fam in families for w in vocabulary(info, train, fam, m, k, y=y)]


def quick(model, feats, y, units, info, families, spreads, scales) -> tuple[str, list[tuple]]:
    names = sorted({k for r in feats for k in r})
    x = SM.matrix(feats, names)
    inter = units != "swecb"
    out, scored = [], []
    base, oof = S.left_out(x, y, units, QUICK_L2, QUICK_ALPHA)
    out.append(f"  quick, L2 {QUICK_L2:g} alpha {QUICK_ALPHA:g}: {'shipped features':34} log-loss {base:.4f}  "
               f"AUC interactive {S.auc(y[inter], oof[inter]):.3f}  swecb {S.auc(y[~inter], oof[~inter]):.3f}")  # fmt: skip
    for fams in families:
        for m, k in spreads:
            vocabs = {u: fold_vocab(info, units != u, fams, m, k, y) for u in sorted(set(units))}
            for scale in scales:
                loss, oof = S.left_out(
                    x,
                    y,
                    units,
                    QUICK_L2,
                    QUICK_ALPHA,
                    extra=lambda u, v=vocabs, s=scale: columns(info, v[u], s),
                )
                size = np.mean([len(v) for v in vocabs.values()])
                tag = f"+{fams} m{m} k{k} scale {scale:g} ({size:.0f} words)"
                out.append(f"  {'':30}  {tag:34} log-loss {loss:.4f}  AUC interactive "
                           f"{S.auc(y[inter], oof[inter]):.3f}  swecb {S.auc(y[~inter], oof[~inter]):.3f}")  # fmt: skip
                scored.append((loss, fams, m, k, scale))
                print(out[-1], file=sys.stderr, flush=True)
    return "\n".join(out), sorted(scored)


def full(model, feats, y, units, folds, info, setting, target) -> str:
    """Shipped fit with and without the words, each unit left out, at each fold's own threshold."""
    fams, m, k, scale = setting
    F.OBJECTIVE, F.FOLD_BY = "project", "session"
    classes = ("shipped", "words")
    res = {c: {"oof": np.zeros(len(y)), "said": np.zeros(len(y), dtype=bool), "rows": {}} for c in classes}
    for unit in sorted(set(units)):
        test = units == unit
        vocab = fold_vocab(info, ~test, fams, m, k, y)
        cols = columns(info, vocab, scale)
        aug = [{**r, **{w: v for w, v in zip(vocab, cols[i], strict=True) if v}} for i, r in enumerate(feats)]
        for c, rows_ in zip(classes, (feats, aug), strict=True):
            tr = [rows_[i] for i in np.flatnonzero(~test)]
            te = [rows_[i] for i in np.flatnonzero(test)]
            predict, points, _info = SM.fit_logistic_class(tr, y[~test], units[~test], folds[~test])
            p = predict(te)
            thr = SM.threshold(model, points, target)
            said, truth = p >= thr, y[test] == 1
            res[c]["oof"][test], res[c]["said"][test] = p, said
            res[c]["rows"][unit] = {
                "loss": F._log_loss(p, y[test]),
                "tp": int((said & truth).sum()),
                "fp": int((said & ~truth).sum()),
                "fn": int((~said & truth).sum()),
                "thr": thr,
                "auc": S.auc(y[test], p),
            }
            r = res[c]["rows"][unit]
            print(f"  {unit:26} {c:8} loss {r['loss']:.4f} thr {thr:.3f} tp {r['tp']} fp {r['fp']} fn {r['fn']}",
                  file=sys.stderr, flush=True)  # fmt: skip

    out = [f"  full: +{fams} m{m} k{k} scale {scale:g}; {model} target {target}"]
    out.append(f"  {'unit':26} {'rows':>5} {'pos':>4}  " + "  ".join(f"{c:>30}" for c in classes))
    out.append(
        f"  {'':26} {'':>5} {'':>4}  " + "  ".join(f"{'loss   AUC     P     R   thr':>30}" for c in classes)
    )
    for unit in sorted(set(units)):
        test = units == unit
        cells = []
        for c in classes:
            r = res[c]["rows"][unit]
            cells.append(
                f"{r['loss']:.4f} {r['auc']:5.3f} {SM.share(r, 'fp'):5.3f} {SM.share(r, 'fn'):5.3f} {r['thr']:5.3f}"
            )
        out.append(
            f"  {unit:26} {int(test.sum()):5d} {int(y[test].sum()):4d}  "
            + "  ".join(f"{x:>30}" for x in cells)
        )
    inter = units != "swecb"
    for c in classes:
        rs = res[c]["rows"]
        ps = [SM.share(r, "fp") for r in rs.values() if r["tp"] + r["fp"]]
        rr = [SM.share(r, "fn") for r in rs.values() if r["tp"] + r["fn"]]
        s, t = res[c]["said"][inter], y[inter] == 1
        st, tt = res[c]["said"][~inter], y[~inter] == 1
        out.append(
            f"  {c:8} mean unit log-loss {np.mean([r['loss'] for r in rs.values()]):.4f}; AUC interactive "
            f"{S.auc(y[inter], res[c]['oof'][inter]):.3f} swecb {S.auc(y[~inter], res[c]['oof'][~inter]):.3f}; "
            f"P/R unit means {np.mean(ps):.3f} / {np.mean(rr):.3f}; interactive pooled P "
            f"{(s & t).sum() / max(1, s.sum()):.3f} R {(s & t).sum() / max(1, t.sum()):.3f} "
            f"(kept {int(s.sum())}, right {int((s & t).sum())} of {int(t.sum())}); swecb P "
            f"{(st & tt).sum() / max(1, st.sum()):.3f} R {(st & tt).sum() / max(1, tt.sum()):.3f}"
        )
    out.append(SM.versus("words", "shipped", res["shipped"]["rows"], res["words"]["rows"]))
    # the fit on every unit: what it learned
    vocab = fold_vocab(info, np.ones(len(y), dtype=bool), fams, m, k, y)
    cols = columns(info, vocab, scale)
    aug = [{**r, **{w: v for w, v in zip(vocab, cols[i], strict=True) if v}} for i, r in enumerate(feats)]
    _predict, _points, fitted = SM.fit_logistic_class(aug, y, units, folds)
    weights = dict(zip(fitted["names"], fitted["w"], strict=True))
    # a word column is `scale` when present: its effect on the log-odds is weight * scale
    effect = {w: weights[w] * scale for w in vocab if w in weights}
    top = sorted(effect, key=lambda w: -abs(effect[w]))[:30]
    out.append(
        f"  the 30 heaviest words of the fit on every unit ({len(vocab)} words; log-odds when present):"
    )
    for w in top:
        n = sum(1 for r in info if w.split(":", 1)[1] in r[w[0]])
        pos = sum(1 for r, t in zip(info, y, strict=True) if t and w.split(":", 1)[1] in r[w[0]])
        out.append(f"    {effect[w]:+.3f}  {w:40} rows {n:5d}, positive {pos}")
    heavy = sorted(((abs(weights[f]), f, weights[f]) for f in weights if f not in vocab), reverse=True)[:8]
    out.append(
        "  the heaviest hand-made features beside them: " + ", ".join(f"{f} {v:+.2f}" for _a, f, v in heavy)
    )
    return "\n".join(out)


def run_full(feats, y, units, folds, info, setting) -> str:
    """`--model run --full`: the run model as each `--lopo` fold fits it (`screen_features.run_folds`),
    without and with the words (chosen without the left-out unit), judged on the left-out unit's runs."""
    fams, m, k, scale = setting
    *_rest, useful = S.run_rows()
    out = [f"  full, run model: +{fams} m{m} k{k} scale {scale:g} (cap {CAP})", "  shipped:"]
    out.append(S.run_folds(feats, y, units, list(folds), useful))

    def augment(unit):
        vocab = fold_vocab(info, units != unit, fams, m, k, y)
        cols = columns(info, vocab, scale)
        return [
            {**r, **{w: v for w, v in zip(vocab, cols[i], strict=True) if v}} for i, r in enumerate(feats)
        ]

    out.append("  words:")
    out.append(S.run_folds(feats, y, units, list(folds), useful, augment))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    global CAP, CONSISTENT  # noqa: PLW0603
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["episode", "variant", "run"], default="episode")
    ap.add_argument("--families", nargs="+", default=["a", "b", "c", "abc"])
    ap.add_argument("--spread", nargs="+", type=int, default=[3, 6, 4, 8, 5, 10], help="pairs M K")
    ap.add_argument("--scales", nargs="+", type=float, default=[0.3, 1.0])
    ap.add_argument("--full", nargs=4, metavar=("FAMILY", "M", "K", "SCALE"), action="append", default=[])
    ap.add_argument("--best", type=int, default=1, help="full stage for the N best quick settings")
    ap.add_argument("--no-quick", action="store_true")
    ap.add_argument("--consistent", action="store_true", help="words of one-signed within-project contrast")
    ap.add_argument("--cap", type=int, default=200, help="words a family may bring, per fold")
    ap.add_argument("--cache", type=Path, default=BENCH / ".cache" / "screen_words")
    args = ap.parse_args(argv)
    CAP = args.cap
    CONSISTENT = args.consistent
    spreads = list(zip(args.spread[::2], args.spread[1::2], strict=True))
    feats, y, units, folds, info = cached(args.model, args.cache)
    target = float(json.loads(F.SHIPPED.read_text())["episode"].get("target_precision") or 0.8)
    print(f"{args.model}: {len(y)} rows, {int(y.sum())} positive; {len(set(units))} units")
    settings = [(f, int(m), int(k), float(s)) for f, m, k, s in args.full]
    if not args.no_quick:
        text, scored = quick(args.model, feats, y, units, info, args.families, spreads, args.scales)
        print(text, flush=True)
        settings += [s[1:] for s in scored[: args.best]]
    for setting in settings:
        if args.model == "run":
            print(run_full(feats, y, units, folds, info, setting), flush=True)
            continue
        with contextlib.redirect_stdout(io.StringIO()) as _quiet:
            text = full(args.model, feats, y, units, folds, info, setting, target)
        print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
