"""Stored text is data, never instructions: what recall does before a learning reaches an agent or a page.

One module per rule, standard library only (the on-error hook imports this package):

- `render`: the one renderer. `render.frame(body)` puts the framing line in front of a block; `render.inline`
  / `render.clean` make stored text inert (no tag, role marker or fence can close or open the client's
  framing; control and invisible characters removed; lengths capped); `render.visible` only removes the
  invisible characters (HTML pages, which escape the rest).
- `quarantine`: is a learning's text instruction-like or dangerous? (a fitted model; reasons a person reads)
- `trust`: provenance and trust tiers: which learnings are injected automatically.

`injection_block(matches, header)` is the API every injection path uses (the on-error hook today; session
start and prompt time next): it takes learnings as wire dicts and returns the framed block, or "" when none
of them may be injected automatically.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recall_agent.safety import render

__all__ = ["injection_block", "render"]


def injection_block(
    items: Sequence[dict[str, Any]],
    header: str,
    line: Callable[[dict[str, Any]], str],
) -> str:
    """The framed block for `items` (learnings or matches as wire dicts) that may be injected automatically:
    the framing line, `header`, then `- <line(item)>` for each, where `line` renders an item with
    `render.inline`. Items that may not be injected (quarantined, unverified, awaiting review) are left
    out; "" when none is left. Callers choose the items first (`trust.injectable`) when the header counts
    them."""
    from recall_agent.safety import trust

    kept = [i for i in items if trust.injectable(i)]
    if not kept:
        return ""
    return render.frame("\n".join([header, *(f"- {line(i)}" for i in kept)]))
