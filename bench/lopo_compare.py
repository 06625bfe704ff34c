"""Two left-out-project runs side by side, with how far their criterion could move by which units happen to be
in the tuning half.

    python3 bench/lopo_compare.py BASE.json CHANGE.json [--rounds 10000] [--out F.json]

Each file is `fit_capture.py --lopo --lopo-out` output. The criterion is fit_capture's: min(P mean / 0.9,
R mean / 0.7) over the units (projects, small projects as one) that have the figure. The interval is a paired
bootstrap over the units both runs share: the same units drawn, with replacement, for both, so a change that
moves one unit by chance shows as a wide interval, not as a gain or a loss. It says how much the criterion
depends on which units happen to be in the tuning half; how far a threshold's luck inside one unit moves it is
`bench/lopo_sensitivity.py`'s. Neither is a test on new projects.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "sessions"))
from fit_capture import STORED_PRECISION, STORED_RECALL  # noqa: E402  the criterion's targets


def figures(path: Path) -> dict[str, tuple[float, float]]:
    """unit -> (left-out precision, recall); NaN where a unit has none (stored nothing / no useful fix)."""
    rows = json.loads(path.read_text())["projects"]
    return {
        unit: tuple(
            np.nan if r["left_out"].get(k) is None else r["left_out"][k] for k in ("precision", "recall")
        )
        for unit, r in rows.items()
    }


def criterion(pr: np.ndarray) -> np.ndarray:
    """pr: (..., units, 2) -> the criterion over the last-but-one axis, NaNs left out of each mean."""
    p, r = np.nanmean(pr[..., 0], axis=-1), np.nanmean(pr[..., 1], axis=-1)
    return np.minimum(p / STORED_PRECISION, r / STORED_RECALL)


def compare(base: dict, change: dict, rounds: int, seed: int = 15) -> dict:
    units = sorted(set(base) & set(change))
    a = np.array([base[u] for u in units], dtype=float)
    b = np.array([change[u] for u in units], dtype=float)
    draw = np.random.default_rng(seed).integers(0, len(units), size=(rounds, len(units)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a draw with no unit that has a P: its mean is NaN
        diff = criterion(b[draw]) - criterion(a[draw])
    diff = diff[~np.isnan(diff)]
    lo, hi = np.percentile(diff, [2.5, 97.5])
    return {
        "units": units,
        "only_in_base": sorted(set(base) - set(change)),
        "only_in_change": sorted(set(change) - set(base)),
        "base": round(float(criterion(a)), 3),
        "change": round(float(criterion(b)), 3),
        "difference": round(float(criterion(b) - criterion(a)), 3),
        "bootstrap_95": [round(float(lo), 3), round(float(hi), 3)],
        "share_change_better": round(float((diff > 0).mean()), 3),
        "rounds": int(len(diff)),
        "per_unit": {u: {"base": _plain(base[u]), "change": _plain(change[u])} for u in units},
    }


def _plain(pr: tuple[float, float]) -> list[float | None]:
    """A unit's (P, R) for JSON: a missing figure is null, not NaN (which strict JSON readers refuse)."""
    return [None if v != v else v for v in pr]


def show(result: dict) -> None:
    def f(v: float | None) -> str:
        return "   —  " if v is None else f"{v:6.3f}"

    print(f"{'unit':<26}{'P base':>8}{'P change':>10}{'R base':>8}{'R change':>10}")
    for unit, r in result["per_unit"].items():
        (pa, ra), (pb, rb) = r["base"], r["change"]
        print(f"{unit:<26}{f(pa):>8}{f(pb):>10}{f(ra):>8}{f(rb):>10}")
    for side in ("only_in_base", "only_in_change"):
        if result[side]:
            print(f"{side.replace('_', ' ')} (left out of both): {', '.join(result[side])}")
    lo, hi = result["bootstrap_95"]
    print(
        f"criterion on the {len(result['units'])} shared units: {result['base']:.3f} -> {result['change']:.3f} "
        f"({result['difference']:+.3f}); paired bootstrap over units, 95%: [{lo:+.3f}, {hi:+.3f}], "
        f"change better in {result['share_change_better']:.0%} of {result['rounds']} draws"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path, help="fit_capture --lopo-out of the baseline")
    ap.add_argument("change", type=Path, help="fit_capture --lopo-out of the change")
    ap.add_argument("--rounds", type=int, default=10000, help="bootstrap draws (default 10000)")
    ap.add_argument("--out", type=Path, help="write the comparison as JSON here")
    args = ap.parse_args(argv)
    try:
        base, change = figures(args.base), figures(args.change)
    except (OSError, ValueError, KeyError) as exc:
        print(f"lopo_compare: cannot read a left-out run: {exc}", file=sys.stderr)
        return 2
    if args.rounds < 1:
        ap.error("--rounds: at least 1")
    result = compare(base, change, args.rounds)
    if not result["units"]:
        print("lopo_compare: the two runs share no unit", file=sys.stderr)
        return 2
    show(result)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
