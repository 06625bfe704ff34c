"""The review pages as HTML: each function reads the store and renders one page (run in a worker thread;
the routes in routes.py decide who may ask). Jinja2 escapes every value from the store."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from recall_agent import selfcheck
from recall_agent.learnings import lifecycle
from recall_agent.learnings.curation import SORTS, STATUSES, ReviewFilter
from recall_agent.learnings.types import StoredLearning
from recall_agent.protocol import TaskType
from recall_agent.safety import render as safe_render
from recall_agent.safety import trust

PAGE_SIZE = 50
TEMPLATES = Path(__file__).with_name("templates")


class NotFound(LookupError):
    """No learning with that id that this visitor may see."""


class Refusal(Exception):
    """A request the page refuses: status, a title and one sentence for the visitor."""

    def __init__(self, status: int, title: str, text: str) -> None:
        super().__init__(text)
        self.status, self.title, self.text = status, title, text


@lru_cache(maxsize=1)
def _env() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every value from the store is text on the page
        finalize=_visible,  # and loses its control and invisible characters (bidi overrides, zero-width)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def _visible(value: Any) -> Any:
    return safe_render.visible(value) if isinstance(value, str) else value


def render(name: str, **values: Any) -> str:
    return _env().get_template(name).render(**values)


@dataclass
class Page:
    """What every page gets: who is signed in, the CSRF token of its forms, a notice to show."""

    who: str
    csrf: str
    can_write: bool
    via: str
    notice: str = ""
    repos: frozenset[str] | None = None  # what the visitor may see (None: everything)
    roots: dict[str, Path] = field(default_factory=dict)  # repository name -> the server's checkout


# ---------------------------------------------------------------------- list


@dataclass
class ListQuery:
    q: str = ""
    repo: str = ""
    task_type: str = ""
    status: str = ""
    older: str = ""
    newer: str = ""
    sort: str = "newest"
    page: int = 1

    @classmethod
    def of(cls, params: dict[str, str]) -> ListQuery:
        """From the query string; a value out of range is an error naming the field (ValueError)."""
        query = cls(
            q=params.get("q", "")[:200],
            repo=params.get("repo", "")[:200],
            task_type=params.get("type", ""),
            status=params.get("status", ""),
            older=params.get("older", ""),
            newer=params.get("newer", ""),
            sort=params.get("sort", "newest") or "newest",
        )
        try:
            query.page = max(1, min(10_000, int(params.get("page") or 1)))
        except ValueError:
            raise ValueError("page: must be a whole number") from None
        if query.task_type and query.task_type not in {t.value for t in TaskType}:
            raise ValueError(f"type: unknown task type {query.task_type!r}")
        if query.status and query.status not in (*STATUSES, "stale"):
            raise ValueError(f"status: one of {', '.join((*STATUSES, 'stale'))}")
        if query.sort not in SORTS:
            raise ValueError(f"sort: one of {', '.join(SORTS)}")
        for name in ("older", "newer"):
            value = getattr(query, name)
            if value:
                try:
                    days = float(value)
                except ValueError:
                    raise ValueError(f"{name}: a number of days") from None
                if not 0 <= days <= 36500:
                    raise ValueError(f"{name}: 0 to 36500 days")
        return query

    def review_filter(self, repos: frozenset[str] | None) -> ReviewFilter:
        return ReviewFilter(
            text=self.q,
            repo=self.repo or None,
            repos=repos,
            task_type=self.task_type or None,
            older_than_days=float(self.older) if self.older else None,
            newer_than_days=float(self.newer) if self.newer else None,
            status=self.status if self.status in STATUSES else None,
            sort=self.sort,
        )

    def link(self, **change: Any) -> str:
        values = {"q": self.q, "repo": self.repo, "type": self.task_type, "status": self.status,
                  "older": self.older, "newer": self.newer, "sort": self.sort, "page": self.page} | change  # fmt: skip
        return "?" + urlencode({k: v for k, v in values.items() if v not in ("", None, 1, "newest")})


def list_page(store: Any, page: Page, query: ListQuery) -> str:
    now = datetime.now(UTC)
    f = query.review_filter(page.repos)
    offset = (query.page - 1) * PAGE_SIZE
    if query.status == "stale":
        rows, total = store.stale(f, page.roots, PAGE_SIZE, offset)
    else:
        rows, total = store.review(f, offset, PAGE_SIZE, now)
    stats = store.stats(page.repos, now, top=0)
    return render(
        "list.html.j2",
        page=page,
        query=query,
        rows=[row_view(r, now, page.roots) for r in rows],
        total=total,
        pages=max(1, -(-total // PAGE_SIZE)),
        stats=stats,
        statuses=(*STATUSES, "stale"),
        sorts=list(SORTS),
        task_types=[t.value for t in TaskType],
        repo_names=[r["repo"] for r in stats.repos],
    )


def row_view(row: StoredLearning, now: datetime, roots: dict[str, Path]) -> dict[str, Any]:
    state = lifecycle.state(row.created_at, row.last_useful_at, row.helped_count, row.hurt_count, now)
    root = roots.get(row.repo)
    check = selfcheck.check(row.fix, root) if root else selfcheck.UNCHECKED
    return {
        "id": str(row.id),
        "short": str(row.id)[:8],
        "repo": row.repo,
        "error": _first((row.error_signatures or [""])[0], 140),
        "resolution": _first(row.resolution_summary, 160),
        "age": _age(row.created_at, now),
        "shown": row.shown_count,
        "helped": row.helped_count,
        "hurt": row.hurt_count,
        "last_useful": _age(row.last_useful_at, now) if row.last_useful_at else "never",
        "state": state,
        "never_used": row.shown_count == 0 and row.access_count == 0,
        "check": check.as_dict(),
        "task_type": str(getattr(row.task_type, "value", row.task_type)),
        **trust_view(row),
    }


def trust_view(row: StoredLearning) -> dict[str, Any]:
    """Who wrote it and whether the hooks inject it by themselves (safety/trust.py)."""
    fields = trust.fields_of(row)
    tier = trust.tier(fields)
    return {
        "tier": tier,
        "provenance": row.provenance,
        "author": row.author or "",
        "origin": trust.origin_word(fields),
        "reasons": trust.quarantine_of(fields),
        "injected": tier in trust.AUTO,
    }


# ---------------------------------------------------------------------- one learning


def visible(store: Any, learning_id: str, repos: frozenset[str] | None) -> StoredLearning:
    try:
        row = store.learning(store.resolve_id(learning_id))
    except ValueError:
        row = None
    if row is None or (repos is not None and row.repo not in repos):
        raise NotFound(learning_id)
    return row


def learning_page(store: Any, page: Page, learning_id: str) -> str:
    now = datetime.now(UTC)
    row = visible(store, learning_id, page.repos)
    history = store.history(row.id)
    for event in history:
        event["before_text"] = _pretty(event["before"])
        event["after_text"] = _pretty(event["after"])
    return render(
        "learning.html.j2",
        page=page,
        r=row_view(row, now, page.roots),
        learning=row,
        created=row.created_at.strftime("%Y-%m-%d %H:%M UTC"),
        fix=row.fix or {},
        fix_text=_pretty(row.fix) if row.fix else "",
        history=history,
        dormant_days=lifecycle.dormant_days(),
    )


def approve_page(store: Any, page: Page, learning_id: str) -> str:
    row = visible(store, learning_id, page.repos)
    return render("confirm.html.j2", page=page, action="approve", rows=[row_view(row, datetime.now(UTC), {})])


def forget_page(store: Any, page: Page, learning_id: str) -> str:
    row = visible(store, learning_id, page.repos)
    return render("confirm.html.j2", page=page, action="forget", rows=[row_view(row, datetime.now(UTC), {})])


def merge_page(store: Any, page: Page, ids: list[str]) -> str:
    now = datetime.now(UTC)
    rows = [visible(store, i, page.repos) for i in dict.fromkeys(ids)]
    if len(rows) < 2:
        raise Refusal(422, "Not merged", "select at least two learnings to merge")
    if len({r.repo for r in rows}) > 1:
        raise Refusal(422, "Not merged", "learnings of different repositories are not duplicates")
    keep = max(rows, key=lambda r: (r.helped_count - r.hurt_count, -r.created_at.timestamp()))
    return render(
        "confirm.html.j2",
        page=page,
        action="merge",
        rows=[row_view(r, now, {}) for r in rows],
        keep=str(keep.id),
    )


def stats_page(store: Any, page: Page) -> str:
    now = datetime.now(UTC)
    s = store.stats(page.repos, now)
    bars = [
        ("active", s.active),
        ("dormant", s.dormant),
        ("hurting", s.hurting),
        ("never used", s.never_used),
    ]
    uses = [("shown", s.shown), ("helped", s.helped), ("hurt", s.hurt), ("/recall listed", s.recalled)]
    return render("stats.html.j2", page=page, s=s, bars=_bars(bars), uses=_bars(uses))


def _bars(items: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """Bar widths (0-300 px) for an SVG chart drawn on the server."""
    top = max([v for _, v in items] + [1])
    return [
        {"label": k, "value": v, "width": round(300 * v / top), "y": 28 * i} for i, (k, v) in enumerate(items)
    ]


def message_page(page: Page | None, title: str, text: str) -> str:
    return render("message.html.j2", page=page, title=title, text=text)


def login_page(csrf: str, error: str = "") -> str:
    return render("login.html.j2", page=None, csrf=csrf, error=error)


# ---------------------------------------------------------------------- helpers


def _first(text: str, limit: int) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _age(when: datetime | None, now: datetime) -> str:
    if when is None:
        return ""
    days = max(0, int((now - when).total_seconds() // 86400))
    return "today" if days == 0 else "1 day" if days == 1 else f"{days} days"


def _pretty(value: Any) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)
