"""The workbench's queue: one page of the latest run's unresolved findings, filtered on the
server, paged by keyset (check_name, finding_key) with an opaque cursor, so the first page
of a million findings costs one scan and a top-N, never an OFFSET.

The work state is decided from the audit trail as read now (recon.findings.work), so an
action shows in the queue at once, before any night loads the trail into the warehouse.

A finding's root cause is read from its check and issue_type by the macro of
sql/workbench/root_cause.sql (`ROOT_CAUSES`: what it can say), defined on every connection
the queue reads with.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import duckdb
import orjson
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.findings.acks import AckEvent
from recon.findings.work import work_events
from recon.warehouse.sql import read_sql
from recon.workbench.config import WorkbenchSettings

__all__ = [
    "MAX_LIMIT",
    "ROOT_CAUSES",
    "STATES",
    "Page",
    "QueueFilters",
    "decode_cursor",
    "define_root_cause",
    "read_queue",
]

MAX_LIMIT = 500
STATES = (
    "open",
    "unworked",
    "new",
    "reopened",
    "investigating",
    "acknowledged",
    "resolved_manually",
    "all",
)
#: The root causes sql/workbench/root_cause.sql gives, in the order the queue lists them.
ROOT_CAUSES = (
    "counterpart_missing",
    "amount_differs",
    "currency_differs",
    "status_differs",
    "needs_a_match",
    "duplicate",
    "in_flight",
    "bad_data",
    "other",
)
_COLUMNS = (
    "finding_key",
    "check_name",
    "severity",
    "currency",
    "amount_minor",
    "work_state",
    "owner",
    "known_days",
    "item_age_days",
    "due_at",
    "entity",
    "entity_id",
    "detail",
    "root_cause",
)


class BadFilter(ValueError):
    """A filter or cursor the queue cannot use."""


@dataclass(frozen=True)
class QueueFilters:
    """The queue's filters; None: not filtered on."""

    state: str | None = "open"
    check: str | None = None
    owner: str | None = None
    currency: str | None = None
    severity: str | None = None
    cause: str | None = None
    known_min: int | None = None
    known_max: int | None = None
    item_min: int | None = None
    item_max: int | None = None
    amount_min: int | None = None
    amount_max: int | None = None
    overdue: bool | None = None
    key: str | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> QueueFilters:
        """The filters of a query string (`state=open&currency=EUR&amount_min=100`…)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "key":
                continue
            raw = query.get(f.name)
            if raw is None or raw == "":
                continue
            if f.name == "overdue":
                if raw not in ("true", "false"):
                    raise BadFilter("overdue must be true or false")
                values["overdue"] = raw == "true"
            elif f.name in ("state", "check", "owner", "currency", "severity", "cause"):
                if len(raw) > 200:
                    raise BadFilter(f"{f.name} is too long")
                values[f.name] = raw
            else:
                try:
                    values[f.name] = int(raw)
                except ValueError:
                    raise BadFilter(
                        f"{f.name} must be a whole number (minor units, days)"
                    ) from None
        if values.get("cause") not in (None, *ROOT_CAUSES):
            raise BadFilter(f"cause must be one of {', '.join(ROOT_CAUSES)}")
        state = values.get("state", "open")
        if state not in STATES:
            raise BadFilter(f"state must be one of {', '.join(STATES)}")
        values["state"] = None if state == "all" else state
        return cls(**values)

    def to_query(self) -> dict[str, str]:
        """The query string's values of these filters (what `from_query` reads back), the
        defaults left out: a saved view's filters."""
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "key":
                continue
            if f.name == "state":
                if value != "open":
                    out["state"] = "all" if value is None else str(value)
            elif isinstance(value, bool):
                out[f.name] = "true" if value else "false"
            elif value is not None:
                out[f.name] = str(value)
        return out


@dataclass(frozen=True)
class Page:
    """One page of the queue and the cursor of the next (None: the last page)."""

    items: list[dict[str, Any]]
    next: str | None


def encode_cursor(check: str, key: str) -> str:
    return base64.urlsafe_b64encode(orjson.dumps([check, key])).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """(check_name, finding_key) after which the next page starts."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        check, key = orjson.loads(raw)
    except (ValueError, TypeError, orjson.JSONDecodeError):
        raise BadFilter("cursor is not one this server gave") from None
    if not isinstance(check, str) or not isinstance(key, str):
        raise BadFilter("cursor is not one this server gave")
    return check, key


_WORK_CACHE: dict[int, tuple[Sequence[AckEvent], pa.Table]] = {}


def _trail_work(events: Sequence[AckEvent]) -> pa.Table:
    """The latest work event per key as a table (kept for the same list of events)."""
    cached = _WORK_CACHE.get(id(events))
    if cached is not None and cached[0] is events:
        return cached[1]
    table = _work_table(events)
    _WORK_CACHE.clear()
    _WORK_CACHE[id(events)] = (events, table)
    return table


def _work_table(events: Sequence[AckEvent]) -> pa.Table:
    works = work_events(events)
    rows = [(k, w) for k, w in works.items() if w.event is not None]
    return pa.table(
        {
            "finding_key": pa.array([k for k, _ in rows], pa.string()),
            "action": pa.array([w.event.action for _, w in rows if w.event], pa.string()),
            "event_owner": pa.array(
                [(w.event.owner or None) if w.event else None for _, w in rows], pa.string()
            ),
            "owner": pa.array([w.owner for _, w in rows], pa.string()),
            "currency": pa.array(
                [
                    w.event.amounts.currency if w.event and w.event.amounts else None
                    for _, w in rows
                ],
                pa.string(),
            ),
            "amount_minor": pa.array(
                [
                    w.event.amounts.amount_minor if w.event and w.event.amounts else None
                    for _, w in rows
                ],
                pa.int64(),
            ),
            "sides": pa.array(
                [w.event.amounts.sides if w.event and w.event.amounts else None for _, w in rows],
                pa.string(),
            ),
            "until": pa.array([w.event.until if w.event else None for _, w in rows], pa.date32()),
        }
    )


def define_root_cause(con: duckdb.DuckDBPyConnection) -> None:
    """The macro `recon_root_cause(check_name, issue_type)` on `con` (a TEMP macro: also on a
    read-only connection; sql/workbench/root_cause.sql)."""
    con.execute(read_sql("workbench/root_cause.sql"))


def read_queue(
    con: duckdb.DuckDBPyConnection,
    events: Sequence[AckEvent],
    filters: QueueFilters,
    limit: int,
    cursor: str | None,
    settings: WorkbenchSettings,
    now: datetime | None = None,
) -> Page:
    """One page of at most `limit` findings after `cursor`."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    after = decode_cursor(cursor) if cursor else (None, None)
    now = now or datetime.now(UTC)
    define_root_cause(con)
    con.register("trail_work", _trail_work(events))
    try:
        params: dict[str, Any] = {
            "key": filters.key,
            "check": filters.check,
            "currency": filters.currency,
            "severity": filters.severity,
            "cause": filters.cause,
            "amount_min": filters.amount_min,
            "amount_max": filters.amount_max,
            "after_check": after[0],
            "after_key": after[1],
            "state": filters.state,
            "owner": filters.owner,
            "known_min": filters.known_min,
            "known_max": filters.known_max,
            "item_min": filters.item_min,
            "item_max": filters.item_max,
            "overdue": filters.overdue,
            "now": now,
            "today": now.date(),
            "sla_error": settings.sla_days_error,
            "sla_warn": settings.sla_days_warn,
            "sla_info": settings.sla_days_info,
            "limit": limit + 1,
        }
        rows = con.execute(read_sql("workbench/queue.sql"), params).fetchall()
    finally:
        con.unregister("trail_work")
    items = []
    for r in rows[:limit]:
        item = dict(zip(_COLUMNS, r, strict=True))
        due = item["due_at"]
        item["due_at"] = (
            due.astimezone(UTC).isoformat().replace("+00:00", "Z") if due is not None else None
        )
        item["overdue"] = due is not None and due < now
        items.append(item)
    nxt = None
    if len(rows) > limit:
        last = items[-1]
        nxt = encode_cursor(last["check_name"], last["finding_key"])
    return Page(items, nxt)
