"""How far the left-out-project criterion moves when each fold's thresholds move a little (issue 33).

    python3 bench/lopo_sensitivity.py DIR [--shift 0.01 0.02] [--out F.json]

DIR is a `fit_capture.py --lopo --lopo-weights DIR` folder (one `lopo-<unit>.json` per fold). Every fold's
sessions are captured again in process with that fold's weights, once as fitted (which must give the run's
own figures) and once per shift with the episode or the variant model's threshold moved by ±shift. A refit
moves a fold's thresholds by about a hundredth (SWE-ContextBench's episode threshold 0.4072 -> 0.3957 in the
fifteenth round, across a tie of 73 identical scores); when a shift of that size moves the criterion as
much as a change being judged, the change's verdict is that noise. Only the tuning projects are read.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "sessions"))

import fit_capture as F  # noqa: E402
import labels as L  # noqa: E402

from recall_agent.capture import model  # noqa: E402

MODELS = ("episode", "variant")


def shifted(weights: dict, name: str | None, by: float) -> dict:
    """The fold's weights with model `name`'s threshold moved by `by` (none moved when `name` is None)."""
    out = json.loads(json.dumps(weights))
    if name is not None:
        out[name]["threshold"] = min(max(float(out[name]["threshold"]) + by, 0.0), 1.0)
    return out


def judged(units: dict[str, list[L.Label]], folds: Path, name: str | None, by: float) -> dict[str, dict]:
    """unit -> fit_capture's left-out summary, with each fold's weights shifted as `shifted` says."""
    from bench_capture import judge

    rows = {}
    with tempfile.TemporaryDirectory(prefix="recall-lopo-shift-") as tmp:
        path = Path(tmp) / "weights.json"
        model.WEIGHTS = path
        for unit, sessions in units.items():
            F.write_weights(path, shifted(json.loads((folds / f"lopo-{unit}.json").read_text()), name, by))
            with contextlib.redirect_stdout(io.StringIO()):
                summary = F.fold_summary(judge(sessions, F.captured(sessions)))
            rows[unit] = {"left_out": summary}
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folds", type=Path, help="fit_capture --lopo-weights folder")
    ap.add_argument("--shift", type=float, nargs="+", default=[0.01], help="threshold shifts (default 0.01)")
    ap.add_argument("--out", type=Path, help="write the table as JSON here")
    args = ap.parse_args(argv)
    units = F.units(L.load_projects(("tune",)))
    missing = [u for u in units if not (args.folds / f"lopo-{u}.json").is_file()]
    if missing:
        print(
            f"lopo_sensitivity: no fold weights for {', '.join(sorted(missing))} in {args.folds}",
            file=sys.stderr,
        )
        return 2
    runs = [("as fitted", None, 0.0)] + [
        (f"{name} {sign}{by:g}", name, s * by)
        for by in args.shift
        for name in MODELS
        for s, sign in ((-1, "-"), (1, "+"))
    ]
    table = []
    print(
        f"{'thresholds':<20}{'criterion':>10}{'P mean':>8}{'R mean':>8}{'right':>8}   per unit P/R that moved"
    )
    base: dict[str, dict] = {}
    for title, name, by in runs:
        rows = judged(units, args.folds, name, by)
        means = F.lopo_means(rows, "left_out")
        base = base or rows
        moved = [
            f"{u} {base[u]['left_out']['precision'] or 0:.2f}/{base[u]['left_out']['recall'] or 0:.2f}"
            f"->{r['left_out']['precision'] or 0:.2f}/{r['left_out']['recall'] or 0:.2f}"
            for u, r in rows.items()
            if (r["left_out"]["precision"], r["left_out"]["recall"])
            != (base[u]["left_out"]["precision"], base[u]["left_out"]["recall"])
        ]
        print(f"{title:<20}{means['score']:>10.3f}{means['precision']:>8.3f}{means['recall']:>8.3f}"
              f"{means['right_resolution']:>8.3f}   {'; '.join(moved)}")  # fmt: skip
        table.append({"thresholds": title, "means": means, "units": rows})
    if args.out:
        args.out.write_text(json.dumps(table, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
