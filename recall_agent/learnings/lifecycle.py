"""A learning's lifecycle: how often it was shown, helped and hurt, and what that makes of it.

The hooks count (`StoreCore.record_outcome`): `shown` when a learning is injected after a failure, `helped`
when the next run of that check passed, `hurt` when the same failure followed. From the counts and the
clock a learning is in one of three states:

- `active`: injected by the hook, shown by `/recall`;
- `hurting`: more often followed by the same failure than by a pass (at least HURT_MIN times, and the
  Beta(1, 1) posterior mean of "it helps" below HURT_BELOW): never injected again, still found by `/recall`
  with its counts, so a person can fix or forget it;
- `dormant`: never useful for `dormant_days` (default 28, `RECALL_DORMANT_DAYS`): the clock starts when it
  was learned and restarts with every time it helped. It leaves the injection path and stays for `/recall`
  with its age shown.

Standard library only: the hook's and the client's read path import this.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

ENV_DORMANT_DAYS = "RECALL_DORMANT_DAYS"
DEFAULT_DORMANT_DAYS = 28
HURT_MIN = 2
HURT_BELOW = 1 / 3
OUTCOMES = ("shown", "helped", "hurt")
# what an outcome does to confidence (the feedback the hooks gave before the counts existed)
CONFIDENCE_STEP = {"shown": 0.0, "helped": 0.1, "hurt": -0.1}
STATES = ("active", "hurting", "dormant")


def dormant_days() -> float:
    """`RECALL_DORMANT_DAYS` (0 turns dormancy off), else 28."""
    try:
        return max(0.0, float(os.environ[ENV_DORMANT_DAYS]))
    except (KeyError, ValueError):
        return float(DEFAULT_DORMANT_DAYS)


def hurting(helped: int, hurt: int) -> bool:
    return hurt >= HURT_MIN and (helped + 1) / (helped + hurt + 2) < HURT_BELOW


def useful_since(created_at: datetime, last_useful_at: datetime | None) -> datetime:
    """When the dormancy clock started: the last time it helped, else when it was learned."""
    start = last_useful_at if last_useful_at is not None and last_useful_at > created_at else created_at
    return start if start.tzinfo else start.replace(tzinfo=UTC)


def state(
    created_at: datetime,
    last_useful_at: datetime | None,
    helped: int,
    hurt: int,
    now: datetime | None = None,
    days: float | None = None,
) -> str:
    if hurting(helped, hurt):
        return "hurting"
    days = dormant_days() if days is None else days
    now = now or datetime.now(UTC)
    if days > 0 and now - useful_since(created_at, last_useful_at) > timedelta(days=days):
        return "dormant"
    return "active"


def dormant_cutoff(now: datetime | None = None, days: float | None = None) -> datetime | None:
    """Learnings useful last before this are dormant (None: dormancy is off)."""
    days = dormant_days() if days is None else days
    return None if days <= 0 else (now or datetime.now(UTC)) - timedelta(days=days)
