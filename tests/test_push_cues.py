"""What a long issue text says about where the code is (push.cues), and the ranking that uses it on a real
index (push.task): a traceback's deepest frame in the repository, a named path, a named module, a named
definition."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recall_agent.architecture import concepts, graph
from recall_agent.push import cues, task
from tests.test_push import shop  # noqa: F401  (the indexed shop repository of the hook tests)

ISSUE = """Quantity.to fails on masked input

When I convert a masked quantity I get:

```python
from shop.orders import place_order
place_order(cart, "bob")
```

Traceback (most recent call last):
  File "/home/u/venv/lib/python3.11/site-packages/shop/orders.py", line 8, in place_order
    charge(customer, total)
  File "/home/u/venv/lib/python3.11/site-packages/shop/payments.py", line 5, in charge
    return {"customer": customer, "amount": amount}
TypeError: unsupported operand

See `shop/catalog.py` and shop.payments.refund for the other path.
"""


def test_cues_of_an_issue_text() -> None:
    assert cues.title(ISSUE) == "Quantity.to fails on masked input"
    assert cues.frames(ISSUE) == [
        "home/u/venv/lib/python3.11/site-packages/shop/orders.py",
        "home/u/venv/lib/python3.11/site-packages/shop/payments.py",
    ]
    assert "shop/catalog.py" in cues.paths(ISSUE)
    assert "shop.payments.refund" in cues.modules(ISSUE)
    names = cues.identifiers(ISSUE)
    assert "place_order" in names and "from" not in names and "import" not in names
    query = cues.query(ISSUE, concepts.terms).split()
    assert len(query) <= cues.QUERY_TERMS and query[:2] == ["quantity", "fails"]


def test_cues_are_linear_on_a_long_run() -> None:
    text = "a/" * 200_000 + "x" + "_b" * 100_000
    assert cues.paths(text) == []  # cut at MAX_CHARS, one split: no pattern backtracks over the run
    assert len(cues.identifiers(text)) <= 80


def test_candidates_carry_each_cue(shop: tuple[Path, dict[str, str]]) -> None:  # noqa: F811
    root, env = shop
    conn = sqlite3.connect(graph.store_path(root.resolve(), Path(env["RECALL_HOME"])))
    try:
        found = {
            c.path: dict(zip(task.CANDIDATE_FEATURES, c.x, strict=True)) for c in task.candidates(conn, ISSUE)
        }
    finally:
        conn.close()
    assert found["shop/payments.py"]["last_frame"] == 1.0  # the deepest frame in this repository
    assert found["shop/orders.py"]["path"] == 1.0 and found["shop/orders.py"]["last_frame"] == 0.0
    assert found["shop/catalog.py"]["path"] == 1.0
    assert found["shop/payments.py"]["module"] == 1.0  # shop.payments.refund -> shop/payments.py
    assert found["shop/orders.py"]["defines"] == 1.0  # place_order, defined in one file
