"""Provenance and trust tiers: which learnings the hooks may inject by themselves.

Every learning records where it came from (`provenance`) and, when it reached a team server through a token,
the token's name (`author`):

| provenance | written by | injected automatically |
|---|---|---|
| `captured` | the capture engine, from a transcript with the failing run and the run that passed (`fix.verified_by`) | yes |
| `person` | a person's `recall learn` on the command line | yes |
| `agent` | an agent's `recall learn` (inside a session) or the `recall_learn` MCP tool | once confirmed: it helped after an injection, a capture of the same fix merged into it, or a person approved it |
| `imported` | `recall learn --from-jsonl` (the person importing vouches for the file) | yes |
| `legacy` | stored before provenance existed | yes (as before) |

`review` overrides the tiers: `pending` (posted to a server started with `--review-posted`) is never
injected until approved; `approved` (a person approved it in `recall review` or on the page) always is, even
a quarantined one. Whatever the source, quarantined text (`quarantine.py`) is never injected unless approved.
`/recall` and MCP answers still list every learning, marked.

Standard library only: the hook imports this when it has something to inject.
"""

from __future__ import annotations

from typing import Any

PROVENANCES = ("captured", "agent", "person", "imported", "legacy")
REVIEWS = ("none", "pending", "approved")
TIERS = ("approved", "trusted", "unverified", "pending", "quarantined")
AUTO = frozenset({"approved", "trusted"})


def provenance_of(source: str | None, verified_by: str | None) -> str:
    """A new learning's provenance from what its fix evidence says of its author (`FixEvidence.source`)."""
    if source == "transcript":
        return "captured" if verified_by else "agent"
    if source == "agent":
        return "agent"
    if source == "manual":
        return "person"
    return "agent"  # no evidence at all: an agent's or a tool's note until someone vouches for it


def quarantine_of(item: dict[str, Any]) -> list[str]:
    """The stored quarantine reasons, or the decision made now for a learning that has none stored (stored
    before the check existed, or answered by an older server)."""
    stored = item.get("quarantine")
    if isinstance(stored, list):
        return [str(r) for r in stored]
    from recall_agent.safety import quarantine

    fix = item.get("fix") if isinstance(item.get("fix"), dict) else None
    return list(
        quarantine.assess(*quarantine.texts_of(str(item.get("resolution_summary") or ""), fix)).reasons
    )


def fields_of(row: Any) -> dict[str, Any]:
    """What the tiers read of a stored learning (`learnings.types.StoredLearning`), as a wire dict."""
    return {
        "provenance": row.provenance,
        "author": row.author,
        "review": row.review,
        "quarantine": row.quarantine,
        "helped_count": row.helped_count,
        "fix": row.fix,
        "resolution_summary": row.resolution_summary,
    }


def tier(item: dict[str, Any]) -> str:
    """One of TIERS for a learning or a match as a wire dict (module docstring)."""
    if item.get("review") == "approved":
        return "approved"
    if quarantine_of(item):
        return "quarantined"
    if item.get("review") == "pending":
        return "pending"
    provenance = item.get("provenance") or "legacy"
    fix = item.get("fix") if isinstance(item.get("fix"), dict) else {}
    if provenance == "agent" and not int(item.get("helped_count") or 0):
        return "unverified"
    if provenance == "captured" and not fix.get("verified_by"):
        return "unverified"
    return "trusted"


def injectable(item: dict[str, Any]) -> bool:
    return tier(item) in AUTO


def origin_word(item: dict[str, Any]) -> str:
    """Where it came from, in a word or two: "captured", "by a person", "agent's note", "posted by alice"."""
    provenance = item.get("provenance") or "legacy"
    word = {
        "captured": "captured",
        "person": "by a person",
        "agent": "agent's note",
        "imported": "imported",
        "legacy": "",
    }.get(provenance, "")
    author = item.get("author")
    if isinstance(author, str) and author.strip():
        posted = f"posted by {author.strip()[:60]}"
        word = f"{word}, {posted}" if word else posted
    return word


def label(item: dict[str, Any]) -> str:
    """The line `/recall` shows: tier, reasons and provenance ("unverified · quarantined: pipes a download
    into a shell · agent's note, posted by token ci-bot")."""
    t = tier(item)
    parts = []
    if t == "quarantined":
        parts.append("not injected: quarantined (" + "; ".join(quarantine_of(item)[:3]) + ")")
    elif t == "pending":
        parts.append("not injected: awaiting review")
    elif t == "unverified":
        parts.append("unverified: not injected until a passing run confirms it or a person approves it")
    elif t == "approved":
        parts.append("approved in review")
    if t == "quarantined" and item.get("review") == "pending":
        parts.append("awaiting review")
    if t in ("quarantined", "pending") and item.get("provenance") == "agent" and not item.get("helped_count"):
        parts.append("unverified")
    word = origin_word(item)
    if word:
        parts.append(word)
    return " · ".join(parts)
