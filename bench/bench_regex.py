"""Every regular expression recall runs (collected from the code: tests/regex_inventory.py), timed on
adversarial inputs: the slowest input of each at 4000 characters; the slowest `--top` patterns are then
timed on that input at 1 MiB.

CPU time of this thread (time.thread_time), best of 3, so other jobs on a shared machine do not count.
A linear pattern costs ~262x more at 1 MiB than at 4000 characters; a quadratic one ~68,000x.

    python bench/bench_regex.py            # all patterns (~2 min)
    python bench/bench_regex.py --top 20   # print the 20 slowest
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
RESULTS = ROOT / "bench" / "results" / "regex.json"

import regex_inventory as inv  # noqa: E402

BUDGET_MS = 50.0


def best(pattern, text: str, runs: int = 3) -> float:
    return min(inv.time_pattern(pattern, text) for _ in range(runs)) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    patterns = inv.all_patterns()
    small, large = inv.adversarial_inputs(4000), inv.adversarial_inputs(1024 * 1024)
    rows = []
    for found in patterns:
        timed = sorted(((inv.time_pattern(found.pattern, t), n) for n, t in small.items()), reverse=True)
        name = timed[0][1]
        ms_small = best(found.pattern, small[name])
        rows.append(
            {
                "where": found.where,
                "pattern": found.pattern.pattern[:80],
                "input": name,
                "ms_4000": round(ms_small, 3),
            }
        )
    rows.sort(key=lambda r: -r["ms_4000"])
    by_where = {f.where: f for f in patterns}
    for r in rows[: args.top]:
        r["ms_1mib"] = round(best(by_where[r["where"]].pattern, large[r["input"]], runs=1), 1)
        r["growth"] = round(r["ms_1mib"] / max(r["ms_4000"], 1e-3))
    over = [r for r in rows if r["ms_4000"] > BUDGET_MS]
    print(f"{len(rows)} patterns; {len(over)} over {BUDGET_MS:g} ms at 4000 chars")
    print(
        f"slowest at 4000 chars: {rows[0]['ms_4000']:.2f} ms; slowest at 1 MiB: {max(r['ms_1mib'] for r in rows):.0f} ms\n"
    )
    print("| pattern (where) | worst input | 4000 chars | 1 MiB | growth |")
    print("|---|---|---|---|---|")
    for r in rows[: args.top]:
        print(
            f"| `{r['where']}` | {r['input']} | {r['ms_4000']:.2f} ms | {r['ms_1mib']:.0f} ms | {r['growth']:.0f}x |"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {"machine": platform.platform(), "budget_ms": BUDGET_MS, "over_budget": len(over), "rows": rows},
            indent=1,
        )
        + "\n"
    )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
