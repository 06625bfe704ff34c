"""Replace secrets in free text with typed placeholders such as `<redacted:password>` (stdlib only).

Learnings are built from error text, commands and agent messages, so this runs before anything is stored
or sent: by the hooks' capture, `recall learn`, `recall import-sessions` and the server's POST /v1/learnings.

Rules, by what decides (all of them find spans in the original text; overlapping spans are merged):
1. structure (recall_agent.redact.structure, .urls, .commands): a secret-bearing name next to the value
   (key-value pairs in every config and code syntax, YAML block scalars, XML, headers, flags, tools'
   password arguments, URL userinfo, Kubernetes Secret data). The value goes whatever it looks like.
2. known formats (recall_agent.redact.formats): gitleaks' default rules and a few of recall's own, for
   tokens that carry their vendor's prefix or shape wherever they stand.
3. last resort (recall_agent.redact.entropy): a long random-looking run with nothing around it, judged by
   a fitted model, and never on the shapes of ordinary data (paths, module names, digests, ids).
`redact()` is idempotent: placeholders never match a rule.
"""

from __future__ import annotations

import re
from typing import Any

from recall_agent.redact import commands, entropy, formats, structure, urls
from recall_agent.redact.entropy import looks_random
from recall_agent.redact.finding import Finding
from recall_agent.redact.formats import shannon_entropy

__all__ = [
    "Finding",
    "find_secrets",
    "looks_random",
    "redact",
    "redact_learning",
    "redact_obj",
    "shannon_entropy",
]

PLACEHOLDER = "<redacted:{}>"
_PLACEHOLDER_RE = re.compile(r"<redacted:[a-z0-9_]{1,60}>")


def find_secrets(text: str) -> list[Finding]:
    """Every secret in `text`, as non-overlapping spans in text order (the structured form of `redact`)."""
    if not text:
        return []
    found = [
        *structure.find(text),
        *urls.find(text),
        *commands.find(text),
        *formats.find(text),
    ]
    found.extend(f for f in entropy.find(text) if not _inside(f, found))
    return _merge(found, text)


def _inside(f: Finding, found: list[Finding]) -> bool:
    return any(o.start <= f.start and f.end <= o.end for o in found)


def _merge(found: list[Finding], text: str) -> list[Finding]:
    """Overlapping spans become one (named by `_rank`); spans inside a placeholder are dropped."""
    merged: list[Finding] = []
    held = _placeholders(text)
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if f.end <= f.start or any(s < f.end and f.start < e for s, e in held):
            continue
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            keep = min(last, f, key=lambda x: (_rank(x), x.start - x.end))
            merged[-1] = Finding(last.start, max(last.end, f.end), keep.kind, keep.rule)
            continue
        merged.append(f)
    return merged


def _rank(f: Finding) -> int:
    """Whose kind names a merged span: a known format says most (recall's own names first, the ones
    earlier releases wrote: `github_token`, `aws_access_key`), then structure, then the last resort."""
    if f.rule.startswith("format:"):
        return 0 if f.rule.startswith("format:recall:") else 1
    return 3 if f.rule == "entropy" else 2


def _placeholders(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PLACEHOLDER_RE.finditer(text)] if "<redacted:" in text else []


def redact(text: str) -> str:
    """`text` with every secret recall recognises replaced by `<redacted:kind>`."""
    spans = find_secrets(text)
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for f in spans:
        out.append(text[pos : f.start])
        out.append(PLACEHOLDER.format(f.kind))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def redact_obj(value: object) -> object:
    """Redact every string inside nested lists/dicts (for JSON payloads); other values unchanged."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_obj(v) for k, v in value.items()}
    return value


def redact_learning(learning: Any) -> Any:
    """A `recall_agent.models.Learning` with every free-text field redacted: error signatures, resolution, file
    paths, ticket id, session id and the fix evidence (the one rule for every path that stores a learning)."""
    fix = learning.fix
    if fix is not None:
        fix = type(fix).model_validate(redact_obj(fix.model_dump(mode="json")))
    return learning.model_copy(
        update={
            "resolution_summary": redact(learning.resolution_summary),
            "error_signatures": [redact(s) for s in learning.error_signatures],
            "file_paths_touched": [redact(p) for p in learning.file_paths_touched],
            "ticket_id": redact(learning.ticket_id) if learning.ticket_id else learning.ticket_id,
            "session_id": redact(learning.session_id) if learning.session_id else learning.session_id,
            "fix": fix,
            "fixes": [_redacted_fix(f) for f in getattr(learning, "fixes", None) or []],
        }
    )


def _redacted_fix(record: Any) -> Any:
    """One of a learning's fixes (models.FixRecord) with its resolution and evidence redacted."""
    fix = record.fix
    if fix is not None:
        fix = type(fix).model_validate(redact_obj(fix.model_dump(mode="json")))
    return record.model_copy(update={"resolution_summary": redact(record.resolution_summary), "fix": fix})
