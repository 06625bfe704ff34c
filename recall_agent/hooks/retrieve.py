"""Learnings lookup for a failed tool call, and the few compact lines injected into the agent's context.

In-process (default): `recall_agent.learnings.execute_sync` over the SQLite store under `$RECALL_HOME`, skipped
without importing anything when no store exists yet. Over HTTP when `AGENT_LEARNING_RETRIEVAL_URL` is set
(the seed's endpoint, `RECALL_TOKEN` as Bearer), with the time left before the hook's deadline as timeout.

Only error-signature matches at or above `RECALL_HOOK_MIN_SIMILARITY` (default 0.85, the wire default) are
injected, at most `RECALL_HOOK_MAX_INJECT` (default 2).
"""

from __future__ import annotations

import json
import os
from typing import Any

from recall_agent.capture import FIX_LINE_MAX, SOURCE_PREFIX

DEFAULT_MIN_SIMILARITY = 0.85
DEFAULT_MAX_INJECT = 2
SUMMARY_MAX = FIX_LINE_MAX


def min_similarity() -> float:
    return _env_float("RECALL_HOOK_MIN_SIMILARITY", DEFAULT_MIN_SIMILARITY, 0.0, 1.0)


def max_inject() -> int:
    return int(_env_float("RECALL_HOOK_MAX_INJECT", DEFAULT_MAX_INJECT, 1, 5))


def _env_float(name: str, default: float, low: float, high: float) -> float:
    try:
        return min(high, max(low, float(os.environ[name])))
    except (KeyError, ValueError):
        return default


def request_for(error_text: str, repo: str) -> dict[str, Any]:
    """The retrieval request the hook sends for a failed call's error text."""
    return {
        "match_type": "error_signature",
        "error_text": error_text[:4000],
        "repo": repo[:128] or "unknown",
        "max_results": 5,
        "min_similarity_error": min_similarity(),
    }


def query(error_text: str, repo: str, timeout_s: float) -> list[dict[str, Any]]:
    """Error-signature matches for `error_text` as plain dicts (wire field names), best first."""
    request = request_for(error_text, repo)
    url = os.environ.get("AGENT_LEARNING_RETRIEVAL_URL")
    if url:
        return _query_http(url, request, timeout_s)
    return _query_local(request)


def _query_local(request: dict[str, Any]) -> list[dict[str, Any]]:
    from recall_agent.config import learnings_db

    if not learnings_db().exists():  # nothing learned yet: no import, no file created
        return []
    from recall_agent.learnings import RetrievalRequest, execute_sync

    response = execute_sync(RetrievalRequest(**request))  # our own values: no wire-model validation
    return [m.to_wire() for m in response.matches]


def _query_http(url: str, request: dict[str, Any], timeout_s: float) -> list[dict[str, Any]]:
    import urllib.request

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    token = os.environ.get("RECALL_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=json.dumps(request).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=max(0.05, timeout_s)) as resp:
        body = json.loads(resp.read(4 * 1024 * 1024))
    matches = body.get("matches") if isinstance(body, dict) else None
    return [m for m in matches if isinstance(m, dict)] if isinstance(matches, list) else []


# lifecycle states (learnings/lifecycle.py) and self-check verdicts (selfcheck.py) never injected
NOT_INJECTED_STATES = frozenset({"hurting", "dormant"})
NOT_INJECTED_CHECKS = frozenset({"stale", "elsewhere"})


def select(matches: list[dict[str, Any]], shown: set[str]) -> list[dict[str, Any]]:
    """Matches worth injecting: error matches over the threshold, not yet shown for this error, neither
    hurting nor dormant, neither stale in this checkout nor about the other case of the error, and
    trusted to be injected automatically (`safety.trust`: not quarantined, not unverified, not awaiting
    review)."""
    floor = min_similarity()
    picked = []
    for m in matches:
        lid = str(m.get("learning_id", ""))
        if not lid or lid in shown or m.get("match_type") != "error_signature":
            continue
        if (
            m.get("state") in NOT_INJECTED_STATES
            or (m.get("check") or {}).get("verdict") in NOT_INJECTED_CHECKS
        ):
            continue
        if float(m.get("similarity") or 0.0) < floor:
            continue
        picked.append(m)
    if not picked:
        return []
    from recall_agent.safety import trust  # only with something to inject: the common path stays light

    return [m for m in picked if trust.injectable(m)][: max_inject()]


def format_context(matches: list[dict[str, Any]]) -> str:
    """The framing line, a header line and one line per learning (`safety.injection_block`); short enough
    never to crowd the context window. Stored text goes through `safety.render.inline`."""
    from recall_agent.safety import injection_block

    noun = "a prior fix" if len(matches) == 1 else f"{len(matches)} prior fixes"
    return injection_block(
        matches, f"recall: {noun} for this error (from learnings of earlier sessions):", _line
    )


def _line(m: dict[str, Any]) -> str:
    from recall_agent.safety import render, trust

    summary = render.inline(shown_summary(str(m.get("resolution_summary", ""))), SUMMARY_MAX)
    facts = [f"{round(float(m.get('similarity') or 0) * 100)}% match"]
    files = [render.inline(f, 200) for f in m.get("file_paths_touched") or []][:3]
    if files:
        facts.append("files: " + ", ".join(files))
    if m.get("ticket_id"):
        facts.append(f"ticket {render.inline(m['ticket_id'], 64)}")
    check = m.get("check") or {}
    if check.get("verdict") == "applied":
        facts.append(f"already applied here: {render.inline(check.get('reason'), 300)}")
    elif check.get("verdict") == "branch":  # not in this checkout: where it lives
        facts.append(render.inline(check.get("reason"), 300))
    seen, sessions = int(m.get("seen_count") or 1), int(m.get("session_count") or 0)
    if sessions > 1:
        facts.append(f"met {seen} times in {sessions} sessions")
    origin = trust.origin_word(m)
    if origin and m.get("provenance") not in ("captured", "legacy", None):
        facts.append(render.inline(origin, 80))  # captured ones read as before: the header says it
    if m.get("review") == "approved":
        facts.append("approved in review")
    age = m.get("age_days")
    if isinstance(age, int):
        facts.append("today" if age == 0 else f"{age}d ago")
    facts.append(f"id {render.inline(str(m.get('learning_id'))[:8])}")
    return f"{summary} ({'; '.join(facts)})"


def shown_summary(resolution: str) -> str:
    """A resolution in at most SUMMARY_MAX characters: its first line (the fix) first and whole as far as
    it fits, then what follows it (the cause) in the room left; never the line saying where it came from."""
    rows = [" ".join(r.split()) for r in resolution.splitlines() if r.strip()]
    rows = [r for r in rows if not r.startswith(SOURCE_PREFIX)]
    if not rows:
        return ""
    first = rows[0] if len(rows[0]) <= SUMMARY_MAX else rows[0][: SUMMARY_MAX - 1].rstrip() + "…"
    rest = " ".join(rows[1:])
    room = SUMMARY_MAX - len(first) - 1
    if rest and room >= 20:
        first += " " + (rest if len(rest) <= room else rest[: room - 1].rstrip() + "…")
    return first


def server_base() -> str | None:
    """The team server the learnings come from: `RECALL_SERVER_URL`, else `AGENT_LEARNING_RETRIEVAL_URL`
    without the node's path (None when it is some other endpoint)."""
    from recall_agent.config import DEFAULT_RETRIEVAL_PATH

    explicit = os.environ.get("RECALL_SERVER_URL")
    if explicit:
        return explicit.rstrip("/")
    url = os.environ.get("AGENT_LEARNING_RETRIEVAL_URL", "").rstrip("/")
    return url[: -len(DEFAULT_RETRIEVAL_PATH)] if url.endswith(DEFAULT_RETRIEVAL_PATH) else None


def send_outcome(ids: list[str], outcome: str, event: str, timeout_s: float = 1.0) -> bool:
    """POST the outcome to the team server's /v1/learnings/outcomes (Bearer RECALL_TOKEN); logged on failure."""
    import urllib.error
    import urllib.request

    from recall_agent.hooks import runtime

    base = server_base()
    if base is None:
        runtime.log(event, f"{outcome} not counted for {len(ids)} remote learning(s): set RECALL_SERVER_URL")
        return False
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("RECALL_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps({"learning_ids": list(dict.fromkeys(ids))[:50], "outcome": outcome}).encode()
    req = urllib.request.Request(base + "/v1/learnings/outcomes", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError, ValueError) as exc:
        runtime.log(event, f"{outcome} not counted on {base}: {exc}")
        return False
