"""No regular expression in recall takes super-linear time: each one, found in the code itself
(tests/regex_inventory.py), is timed on adversarial inputs of 4000 characters (the size of a query or a
signature), and at 8000 and 64000 characters, where a quadratic pattern shows as ~64x the time
instead of ~8x.

The 1 MiB table (files the antipattern engine reads) is bench/bench_regex.py; timings there are for the
record, this test is the rule."""

from __future__ import annotations

import re

import pytest
import regex_inventory as inv

BUDGET_4000 = 0.050  # seconds on any 4000-character input (issue 15's target)
PATTERNS = inv.all_patterns()


def test_the_inventory_finds_the_patterns_it_must() -> None:
    where = {p.where.split(":")[0] for p in PATTERNS}
    assert len(PATTERNS) >= 200
    for module in (
        "recall_agent.redact",
        "recall_agent.learnings.signatures",
        "recall_agent.federation",
        "recall_agent.antipatterns.scan",
        "recall_agent.capture.output",
        "recall_agent.capture.commands",
    ):
        assert module in where, module
    assert any(p.where.startswith("catalog:") for p in PATTERNS)
    assert sum(p.where.startswith("redact.formats:") for p in PATTERNS) >= 250  # gitleaks' rules and recall's
    assert any(
        p.where.startswith("recall_agent/capture/learning.py:") for p in PATTERNS
    )  # inline re.sub(...) calls


def _min_time(pattern: re.Pattern[str], text: str, runs: int = 3) -> float:
    return min(inv.time_pattern(pattern, text) for _ in range(runs))


@pytest.mark.parametrize("found", PATTERNS, ids=lambda f: f.where)
def test_pattern_is_linear_on_adversarial_input(found: inv.Found) -> None:
    small = inv.adversarial_inputs(4000)
    timed = sorted(((inv.time_pattern(found.pattern, t), name) for name, t in small.items()), reverse=True)
    worst_name = timed[0][1]
    worst = _min_time(found.pattern, small[worst_name])  # re-timed: the machine is shared, one run is noisy
    assert worst < BUDGET_4000, f"{found.where}: {worst * 1000:.0f} ms on {worst_name} (4000 chars)"
    medium, large = inv.adversarial_inputs(8000), inv.adversarial_inputs(64000)
    for _, name in timed[:2]:  # 8x the input: ~8x the time if linear, ~64x if quadratic
        base = _min_time(found.pattern, medium[name])
        grown = _min_time(found.pattern, large[name], runs=2)
        assert grown <= 24 * base + 0.010, (
            f"{found.where}: {base * 1000:.2f} ms at 8000 chars but {grown * 1000:.1f} ms at 64000 on {name} "
            "(super-linear growth)"
        )


def test_a_dotless_federation_query_is_answered_quickly() -> None:
    """The reported case: the antipattern engine's path regex on `"0" * 4000` backtracked for minutes."""
    import time

    from recall_agent.antipatterns.scan import named_files

    for text in ("0" * 4000, "-" * 4000, "a/" * 2000, inv.adversarial_inputs(4000)["base64"]):
        t0 = time.perf_counter()
        assert named_files(text, None) == ([], [])
        assert time.perf_counter() - t0 < 0.2
