"""How every learnings store (SQLite `store.py`, PostgreSQL `pg_store.py`) turns a Learning into rows: one
definition, so the two stores merge, match and read back identically."""

from __future__ import annotations

from uuid import UUID

from recall_agent.learnings import signatures as sigs
from recall_agent.learnings.types import SignatureRow
from recall_agent.protocol import RESOLUTION_MAX, TaskType


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
