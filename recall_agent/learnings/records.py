"""How every learnings store (SQLite `store.py`, PostgreSQL `pg_store.py`) turns a Learning into rows: one
definition, so the two stores merge, match and read back identically."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

from recall_agent.learnings import signatures as sigs
from recall_agent.learnings.types import SignatureRow
from recall_agent.protocol import RESOLUTION_MAX, TaskType

if TYPE_CHECKING:
    from recall_agent.models import Learning


def resolution_key(text: str) -> str:
    """What "the same resolution" means for merging: case- and whitespace-insensitive equality."""
    return " ".join(text.lower().split())


def parse_id(value: UUID | str) -> UUID:
    """A learning id from user input; ValueError with a readable message when it is not a UUID."""
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value).strip())
    except ValueError:
        raise ValueError(f"not a learning id (expected a UUID): {value!r}") from None


def signature_rows(texts: list[str]) -> list[SignatureRow]:
    """Normalized, fingerprinted signatures; blanks dropped, one row per fingerprint."""
    rows: list[SignatureRow] = []
    seen: set[str] = set()
    for text in texts:
        if not text.strip():
            continue
        normalized = sigs.normalize(text)
        fp = sigs.fingerprint_normalized(normalized)
        if fp not in seen:
            seen.add(fp)
            rows.append(SignatureRow(text=text, normalized=normalized, fingerprint=fp))
    return rows


def read_task_type(value: str) -> TaskType:
    """A stored task type, read leniently (a value from a newer version reads as unknown)."""
    try:
        return TaskType(value)
    except ValueError:
        return TaskType.UNKNOWN


def dedupe(items: list[str]) -> list[str]:
    return [i for i in dict.fromkeys(items) if i]


def path_basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()


def safety_columns(learning: Learning) -> tuple[str, str | None, str, list[str]]:
    """(provenance, author, review, quarantine reasons) as a store writes them for a new learning
    (`recall_agent/safety/trust.py`): the provenance the writer set, else the one its fix evidence implies;
    `pending` kept (a server that asks for review), never `approved` (only a person's approval, in the
    store, sets that); the quarantine decided now, whatever the learning claims."""
    from recall_agent.safety import quarantine, trust

    fix = learning.fix
    provenance = learning.provenance or trust.provenance_of(
        fix.source if fix else None, fix.verified_by if fix else None
    )
    evidence = fix.model_dump(mode="json") if fix else None
    reasons = quarantine.assess(*quarantine.texts_of(learning.resolution_summary, evidence)).reasons
    review = "pending" if learning.review == "pending" else "none"
    return provenance, learning.author, review, list(reasons)


def quarantine_reasons(resolution: str, fix: dict[str, Any] | None) -> list[str]:
    """The quarantine decision for stored values (an edit, a backfill of learnings stored before it)."""
    from recall_agent.safety import quarantine

    return list(quarantine.assess(*quarantine.texts_of(resolution, fix)).reasons)


def clean_resolution(text: object, limit: int = RESOLUTION_MAX) -> str:
    """An edited resolution as the stores keep it: stripped, not blank, no NUL, at most `limit`
    characters; ValueError naming the problem otherwise (the caller redacts it)."""
    if not isinstance(text, str):
        raise ValueError("resolution_summary: must be text")
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise ValueError("resolution_summary: must not be blank")
    if "\x00" in text:
        raise ValueError("resolution_summary: must not contain a NUL character")
    if len(text) > limit:
        raise ValueError(f"resolution_summary: {len(text)} characters; the limit is {limit}")
    return text
