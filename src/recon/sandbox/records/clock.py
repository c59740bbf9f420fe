"""Timestamps of generated records: the anchor and fast ISO 8601 formatting."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

__all__ = ["DAY_MS", "default_anchor", "iso_date", "iso_ms"]

DAY_MS = 86_400_000

_DATE_CACHE: dict[int, str] = {}


def default_anchor() -> datetime:
    """Today 00:00 UTC."""
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)


def iso_ms(epoch_ms: int) -> str:
    """ISO 8601 UTC with milliseconds, e.g. ``2026-11-19T23:59:52.123Z`` (fast)."""
    days, ms = divmod(epoch_ms, DAY_MS)
    d = _DATE_CACHE.get(days)
    if d is None:
        d = (date(1970, 1, 1) + timedelta(days=days)).isoformat()
        _DATE_CACHE[days] = d
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{d}T{h:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def iso_date(epoch_ms: int) -> str:
    """The UTC date of ``epoch_ms`` as YYYY-MM-DD."""
    return (date(1970, 1, 1) + timedelta(days=epoch_ms // DAY_MS)).isoformat()
