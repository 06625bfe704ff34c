"""Fit the learnings acceptance model (recall_agent/learnings/acceptance.json) on the tuning halves only.

Pairs: every corpus' tuning half (bench/corpora.py: synthetic errors.jsonl, the realworld and public
thread corpora, and the hand-labelled tuning projects' cross-session causes, one set per project), each
set recorded in a store of its own; every query is run through this
checkout's candidate generation (retrieval.error_candidates) and each (query, candidate) pair gets the
features of features.py and the label "same cause". Pairs decided by an identical fingerprint are not
fitted (they are 1.0 by rule) but count when the threshold is chosen.

Model: logistic regression with an L2 penalty (numpy, Newton steps; dev only: the query path evaluates
the weights in pure Python). Threshold: the smallest probability at which the tuning half's false-match
rate (share of no-learning queries whose best candidate reaches it) is at most --target-fmr.

    python bench/fit_acceptance.py                 # fit, print the tuning figures, write the JSON
    python bench/fit_acceptance.py --dry-run       # fit and print only
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpora import all_sets  # noqa: E402  (bench/ is this script's folder)
from logistic import fit_logistic  # noqa: E402

from recall_agent.learnings import acceptance, retrieval  # noqa: E402
from recall_agent.learnings.features import Query  # noqa: E402
from recall_agent.learnings.store import open_store  # noqa: E402
from recall_agent.models import ERROR_TEXT_MAX, Learning  # noqa: E402

REPO = "fit-repo"
# the features the model reads (a subset of features.FEATURES: the others are kept for diagnosis); chosen
# on the tuning half for being few, not collinear and each with a reason to matter
MODEL_FEATURES = (
    "lexical",
    "best_line",
    "shared",
    "shared_mass",
    "template",
    "slot_decisive",
    "decisive_same_template",
    "slot_extra",
    "subj_equal",
    "subj_disjoint",
    "subj_partial",
    "subj_swapped",
    "subj_one_side",
    "short_swap",
    "kind_differs",
    "rule_same",
    "rule_differs",
    "rule_template",
    "rule_other_subject",
    "text",
    "generic_other_frame",
    "query_noise",
    "coverage",
)


def pairs(sets: list[dict], home: Path, features: tuple[str, ...] = MODEL_FEATURES) -> list[dict]:
    """One row per query: {"set", "truth", "cands": [(key, exact, features)]}. Each corpus in a store of its
    own, as the benchmark runs them (corpora share some causes: one store would label a true match to the
    other corpus' learning of the same cause as wrong)."""
    rows = []
    for n, s in enumerate(sets):
        store = open_store(home / str(n))
        key_of: dict[str, str] = {}
        for lr in s["learnings"]:
            text = lr["text"][-ERROR_TEXT_MAX:]
            lid, _ = store.add(
                Learning(repo=REPO, error_signatures=[text], resolution_summary=lr["key"]), consolidate=False
            )  # one row per labelled learning
            key_of[str(lid)] = lr["key"]
        for q in s["queries"]:
            query = Query.from_text(q["text"][:ERROR_TEXT_MAX])
            cands = retrieval.error_candidates(store, query)
            scored = retrieval.score_error(store, query, cands, dense_weight=0.0, dense=None)
            rows.append(
                {
                    "set": s["name"],
                    "truth": q["truth"],
                    "cands": [
                        (
                            key_of[str(x.candidate.learning.id)],
                            x.exact,
                            [x.evidence.get(f, 0.0) for f in features],
                        )
                        for x in scored
                    ],
                }
            )
        store.close()
    return rows


def decisions(rows: list[dict], w: np.ndarray, b: float) -> list[tuple[str | None, str | None, float]]:
    """(truth, top candidate, its probability) per query: exact pairs are 1.0, the rest the model's."""
    out = []
    for r in rows:
        best: tuple[float, str | None] = (0.0, None)
        for key, exact, f in r["cands"]:
            p = 1.0 if exact else float(1.0 / (1.0 + np.exp(-(np.dot(w, f) + b))))
            if p > best[0]:
                best = (p, key)
        out.append((r["truth"], best[1], best[0]))
    return out


def rates(dec: list[tuple[str | None, str | None, float]], t: float) -> dict[str, float]:
    pos = [(truth, top, p) for truth, top, p in dec if truth is not None]
    neg = [p for truth, _, p in dec if truth is None]
    return {
        "R@1": sum(1 for truth, top, p in pos if top == truth and p >= t) / max(1, len(pos)),
        "wrong_top": sum(1 for truth, top, p in pos if top != truth and p >= t) / max(1, len(pos)),
        "false_match_rate": sum(1 for p in neg if p >= t) / max(1, len(neg)),
    }


def choose_threshold(dec: list[tuple[str | None, str | None, float]], target: float) -> float:
    """The smallest threshold whose false-match rate is at most `target` (more recall for the same risk)."""
    neg = sorted((p for truth, _, p in dec if truth is None), reverse=True)
    allowed = int(target * len(neg))  # this many near misses may pass
    above = neg[allowed] if allowed < len(neg) else 0.0  # the highest that must not pass
    return float(min(0.999, np.nextafter(above, 1.0))) if above > 0 else 0.5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target-fmr", type=float, default=0.02, help="false-match rate on the tuning half")
    ap.add_argument("--l2", type=float, default=1.0, help="L2 penalty on the weights")
    ap.add_argument("--dry-run", action="store_true", help="print, do not write acceptance.json")
    ap.add_argument("--features", help="comma-separated model inputs (default: MODEL_FEATURES)")
    args = ap.parse_args()
    features = tuple(args.features.split(",")) if args.features else MODEL_FEATURES
    sets = all_sets("tuning")
    with tempfile.TemporaryDirectory() as tmp:
        rows = pairs(sets, Path(tmp), features)
    x = np.array([f for r in rows for _, exact, f in r["cands"] if not exact], dtype=float)
    y = np.array([float(k == r["truth"]) for r in rows for k, exact, _ in r["cands"] if not exact])
    w, b = fit_logistic(x, y, args.l2)
    dec = decisions(rows, w, b)
    t = choose_threshold(dec, args.target_fmr)
    summary = {
        s["name"]: rates([d for d, r in zip(dec, rows, strict=True) if r["set"] == s["name"]], t)
        for s in sets
    }
    print(f"pairs {len(y)} (same cause {int(y.sum())}), queries {len(rows)}, threshold {t:.4f}")
    for name, wt in sorted(zip(features, w, strict=True), key=lambda x: -abs(x[1])):
        print(f"  {name:<20} {wt:+.3f}")
    print(f"  {'bias':<20} {b:+.3f}")
    print("tuning:", json.dumps(rates(dec, t)), json.dumps(summary))
    model = {
        "kind": "logistic regression, L2",
        "features": list(features),
        "weights": [round(float(v), 6) for v in w],
        "bias": round(b, 6),
        "threshold": round(t, 6),
        "target_false_match_rate": args.target_fmr,
        "l2": args.l2,
        "fitted_on": {
            s["name"]: {"learnings": len(s["learnings"]), "queries": len(s["queries"])} for s in sets
        },
        "pairs": {"total": int(len(y)), "same_cause": int(y.sum())},
        "tuning": {"all": rates(dec, t)} | summary,
        "fit_by": "bench/fit_acceptance.py",
    }
    if not args.dry_run:
        acceptance.MODEL_FILE.write_text(json.dumps(model, indent=1) + "\n")
        print(f"wrote {acceptance.MODEL_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
