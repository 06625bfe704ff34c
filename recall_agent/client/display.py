"""Render fan-out outcomes as the seed's Markdown (Jinja2 templates in recall_agent/client/templates/) or as JSON.

Rendering rules for fields the seed's example does not show (documented in docs/client.md):
- ticket null or empty -> the `| **Ticket:** …` part is left out; task_type missing -> `unknown`;
- no files -> the `**Files:**` line is left out; age 0 -> `today`, 1 -> `1 day old`;
- a federation result that names its `engine` gets ` | **Engine:** <engine>` after the rank;
- results per section are capped at --max-results; sources memgraph/repowise -> [Architecture],
  qdrant -> [Antipatterns], anything else -> [Architecture] with its source shown as sent.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from recall_agent.client.fanout import BackendOutcome
from recall_agent.safety import render, trust

TEMPLATES = Path(__file__).parent / "templates"
SEPARATOR = "\n\n---\n\n"
ARCHITECTURE, ANTIPATTERNS, LEARNINGS = "Architecture", "Antipatterns", "Learnings"
SECTION_ROLES = {ARCHITECTURE: {"memgraph", "repowise"}, ANTIPATTERNS: {"qdrant"}}
SCOPE_SECTIONS = {
    "learnings": [LEARNINGS],
    "architecture": [ARCHITECTURE],
    "antipatterns": [ANTIPATTERNS],
    "all": [LEARNINGS, ARCHITECTURE, ANTIPATTERNS],
}
REASON_MAX = 300


def _bytecode_cache():
    """Compiled templates cached under $RECALL_HOME/cache/templates (saves ~15-50 ms per cold call)."""
    from jinja2 import FileSystemBytecodeCache

    from recall_agent.config import recall_home

    folder = recall_home() / "cache" / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # read-only home: compile every time, still correct
    return FileSystemBytecodeCache(str(folder))


@cache
def _env():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=False,
        undefined=StrictUndefined,
        bytecode_cache=_bytecode_cache(),
    )


def _render(name: str, **values: Any) -> str:
    return _env().get_template(name).render(**values)


def one_line(text: object, limit: int = REASON_MAX) -> str:
    return render.inline(text, limit)


def _age(days: object) -> str:
    if isinstance(days, bool) or not isinstance(days, int | float):
        return "age unknown"
    days = int(days)
    return "today" if days <= 0 else "1 day old" if days == 1 else f"{days} days old"


def _percent(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "similarity unknown"
    return f"{int(value * 100 + 0.5)}% similarity"


def _text(value: object, default: str) -> str:
    return str(value).strip() if isinstance(value, str | int | float) and str(value).strip() else default


RESOLUTION_SHOWN = 2000  # the stored limit (protocol.RESOLUTION_MAX); a longer one from a server is cut
FIELD_SHOWN = 300


def learning_view(match: dict) -> dict:
    """A match's fields as the Markdown answer shows them: stored text rendered by `safety.render` (it
    cannot close or open the client's framing), the trust line when it is not an ordinary capture."""
    files = match.get("file_paths_touched")
    return {
        "similarity": _percent(match.get("similarity")),
        "match_type": render.inline(_text(match.get("match_type"), "unknown"), 40),
        "age": _age(match.get("age_days")),
        "repo": render.inline(_text(match.get("repo"), "unknown"), FIELD_SHOWN),
        "ticket": render.inline(_text(match.get("ticket_id"), ""), 64),
        "task_type": render.inline(_text(match.get("task_type"), "unknown"), 64),
        "resolution": render.clean(
            _text(match.get("resolution_summary"), "(no resolution recorded)"), RESOLUTION_SHOWN
        ),
        "files": [render.inline(f.strip(), FIELD_SHOWN) for f in files if isinstance(f, str) and f.strip()][
            :50
        ]
        if isinstance(files, list)
        else [],
        "why": why_line(match.get("why")),
        "check": check_line(match.get("check")),
        "lifecycle": lifecycle_line(match),
        "trust": trust_line(match),
        "learned_from": learned_from(match.get("fix")),
    }


def learned_from(fix: object) -> str:
    """What a captured learning is keyed by when it is not an error a run of the session met: the task the
    prompt asked for (a task learning), or the error the prompt quoted."""
    if not isinstance(fix, dict):
        return ""
    if fix.get("task") is True:
        return "task learning (keyed by the prompt's task, not an error)"
    return "the error the session's prompt reported" if fix.get("reported") is True else ""


def trust_line(match: dict) -> str:
    """Tier, quarantine reasons and provenance, unless it is an ordinary capture injected automatically:
    "not injected: quarantined (pipes a download into a shell) · unverified · agent's note, posted by ci"."""
    tier = trust.tier(match)
    if (
        tier == "trusted"
        and match.get("provenance") in ("captured", "legacy", None)
        and not match.get("author")
    ):
        return ""
    return render.inline(trust.label(match), FIELD_SHOWN)


def check_line(check: object) -> str:
    """The self-check's verdict against this checkout: "may be stale: `x.py` is gone"."""
    if not isinstance(check, dict) or check.get("verdict") not in ("stale", "applied", "elsewhere", "branch"):
        return ""
    label, reason = _text(check.get("label"), ""), _text(check.get("reason"), "")
    return one_line(f"{label}: {reason}" if reason else label, 300)


def lifecycle_line(match: dict) -> str:
    """Counts and state when there is something to say: "met 12 times in 9 sessions · shown 4 · helped 1 ·
    hurt 3 · not injected: hurting" (one learning per cause: how often it was met, when more than once)."""
    seen, sessions = match.get("seen_count"), match.get("session_count")
    parts = []
    if isinstance(seen, int) and not isinstance(seen, bool) and seen > 1:
        within = f" in {sessions} sessions" if isinstance(sessions, int) and sessions > 1 else ""
        parts.append(f"met {seen} times{within}")
    counts = [(k, match.get(f"{k}_count")) for k in ("shown", "helped", "hurt")]
    parts += [f"{k} {v}" for k, v in counts if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    state = match.get("state")
    if state == "hurting":
        parts.append("not injected: the same failure followed it more often than not")
    elif state == "dormant":
        parts.append("not injected: not useful in a long while")
    return " · ".join(parts)


def why_line(why: object) -> str:
    """The match's reason in one short line: kind · the matched message · the shared subjects · frame."""
    if not isinstance(why, dict):
        return ""
    parts = []
    if isinstance(why.get("kind"), str) and why["kind"].strip():
        parts.append(why["kind"].strip())
    template = why.get("template")
    if isinstance(template, str) and template.strip():
        line = one_line(template)
        parts.append("`" + (line if len(line) <= 120 else line[:119] + "…").replace("`", "'") + "`")
    parts = [render.inline(p, FIELD_SHOWN) for p in parts]
    subjects = [s for s in why.get("subjects") or [] if isinstance(s, str) and s.strip()][:3]
    if subjects:
        parts.append("about " + ", ".join(f"'{s}'" for s in subjects))
    if isinstance(why.get("frame"), str) and why["frame"].strip():
        parts.append(f"in {why['frame'].strip()}")
    if why.get("exact") is True:
        parts.append("same error lines")
    if isinstance(why.get("differs"), str) and why["differs"].strip():
        parts.append(one_line(why["differs"])[:160])
    return " · ".join(parts)


def result_view(result: dict) -> dict:
    rank = result.get("rank")
    return {
        "source": _text(result.get("source"), "unknown"),
        "rank": rank if isinstance(rank, int) and not isinstance(rank, bool) else "?",
        "engine": _text(result.get("engine"), ""),
        "content": _text(result.get("content"), "(empty)"),
    }


def _section_of(result: dict) -> str:
    return ANTIPATTERNS if result.get("source") in SECTION_ROLES[ANTIPATTERNS] else ARCHITECTURE


def _status(kind: str, label: str = "", reason: str = "") -> str:
    return _render("status.md.j2", kind=kind, label=label, reason=reason)


def _failure_reason(outcome: BackendOutcome) -> str:
    failure = outcome.failure or {}
    return one_line(failure.get("message") or failure.get("kind") or "unknown error")


def _learning_blocks(outcome: BackendOutcome, max_results: int) -> tuple[list[str], int]:
    if outcome.failure:
        return [_status("unavailable", LEARNINGS, _failure_reason(outcome))], 0
    matches = [m for m in (outcome.response or {}).get("matches", []) if isinstance(m, dict)][:max_results]
    if not matches:
        return [_status("empty", LEARNINGS)], 0
    blocks = [_render("learning.md.j2", n=i, m=learning_view(m)) for i, m in enumerate(matches, 1)]
    blocks[0] = f"{render.FRAME}\n\n{blocks[0]}"  # framed once, in front of the first stored text
    return blocks, len(blocks)


def _was_asked(section: str, scope: str, response: dict) -> bool:
    """Did the federation route this query to the section's roles? (`all` lets it choose.)"""
    queried = response.get("backends_queried")
    if scope != "all" or not isinstance(queried, list) or not queried:
        return True
    return bool(SECTION_ROLES[section] & set(map(str, queried)))


def _cap(results: list[dict], max_results: int) -> tuple[list[dict], int]:
    """Antipatterns found in the code (`match_kind: detection`) are all shown — a risky change must not lose
    findings to the display limit; every other result counts against --max-results."""
    detections = sum(1 for r in results if r.get("match_kind") == "detection")
    kept, others = [], 0
    for r in results:
        if r.get("match_kind") != "detection":
            others += 1
            if others > max_results:
                continue
        kept.append(r)
    return kept, detections


def _detections_note(count: int) -> str:
    return f"{count} detection{'s' if count != 1 else ''} in the code, all shown, worst first"


def _federation_blocks(outcome: BackendOutcome, scope: str, max_results: int) -> tuple[list[str], int]:
    sections = [s for s in SCOPE_SECTIONS[scope] if s != LEARNINGS]
    if outcome.payload is None:
        reason = "no query text (give a symbol, a file or an error message)"
        return [_status("skipped", s, reason) for s in sections], 0
    if outcome.failure:
        return [_status("unavailable", s, _failure_reason(outcome)) for s in sections], 0
    response = outcome.response or {}
    results = [r for r in response.get("results", []) if isinstance(r, dict)]
    results.sort(key=lambda r: r["rank"] if isinstance(r.get("rank"), int) else 1 << 30)
    blocks, shown = [], 0
    for section in sections:
        mine, detections = _cap([r for r in results if _section_of(r) == section], max_results)
        if detections:
            blocks.append(_status("note", section, _detections_note(detections)))
        if mine:
            blocks += [
                _render("federation_result.md.j2", label=section, n=i, r=result_view(r))
                for i, r in enumerate(mine, 1)
            ]
            shown += len(mine)
        elif _was_asked(section, scope, response):
            blocks.append(_status("empty", section))
    if response.get("error_message"):
        blocks.append(_status("note", "Federation", one_line(response["error_message"])))
    return blocks, shown


def render_markdown(
    scope: str, outcomes: dict[str, BackendOutcome], max_results: int = 5, context_line: str = ""
) -> str:
    blocks: list[str] = []
    shown = 0
    if "learnings" in outcomes:
        found, n = _learning_blocks(outcomes["learnings"], max_results)
        blocks += found
        shown += n
    if "federation" in outcomes:
        found, n = _federation_blocks(outcomes["federation"], scope, max_results)
        blocks += found
        shown += n
    if not shown:  # nothing to show: keep failures/notes, replace the per-backend "no results" lines
        empty_lines = {_status("empty", s) for s in SCOPE_SECTIONS[scope]}
        blocks = [b for b in blocks if b not in empty_lines] + [_status("nothing")]
    text = _render("report.md.j2", scope=scope, context_line=context_line, blocks=blocks)
    return text.rstrip("\n") + "\n"


def render_json(scope: str, outcomes: dict[str, BackendOutcome], context: dict | None = None) -> str:
    """One object: scope, each backend's payload, raw response (or null) and failure (or null)."""
    document: dict[str, Any] = {"scope": scope}
    if context is not None:
        document["context"] = context
    for name in ("learnings", "federation"):
        outcome = outcomes.get(name)
        response = outcome.response if outcome else None
        if name == "learnings" and isinstance(response, dict) and isinstance(response.get("matches"), list):
            document["note"] = render.FRAME
            response = {
                **response,
                "matches": [safe_match(m) for m in response["matches"] if isinstance(m, dict)],
            }
        document[name] = {
            "queried": outcome is not None and outcome.payload is not None,
            "transport": outcome.transport if outcome else None,
            "payload": outcome.payload if outcome else None,
            "response": response,
            "failure": outcome.failure if outcome else None,
        }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


_MATCH_TEXT = ("resolution_summary", "repo", "ticket_id", "task_type", "author")


def safe_match(match: dict) -> dict:
    """A match as the JSON answer carries it: stored text rendered by `safety.render` (capped), and what
    recall decided of it: `trust` (safety/trust.py's tier), whether the hooks would inject it by themselves,
    and the quarantine reasons."""
    out = dict(match)
    for key in _MATCH_TEXT:
        if isinstance(out.get(key), str):
            limit = RESOLUTION_SHOWN if key == "resolution_summary" else FIELD_SHOWN
            out[key] = render.clean(out[key], limit)
    for key in ("error_signatures", "file_paths_touched"):
        if isinstance(out.get(key), list):
            out[key] = [render.clean(v, 4000) for v in out[key][:50] if isinstance(v, str)]
    if isinstance(out.get("why"), dict):
        out["why"] = {
            k: render.clean(v, FIELD_SHOWN) if isinstance(v, str) else v for k, v in out["why"].items()
        }
    out["trust"] = trust.tier(match)
    out["injected_automatically"] = out["trust"] in trust.AUTO
    out["quarantine"] = [render.inline(r, 200) for r in trust.quarantine_of(match)]
    return out
