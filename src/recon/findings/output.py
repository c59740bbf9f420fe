"""How `recon findings list` prints findings: a table for people (a header row, then one
finding a line), spreadsheet-safe CSV, or one JSON array; each finding written as it comes,
so that a million are listed without holding them (issue 38). Both ages are named as
everywhere else: `known_days` (how long recon has known the break) and `item_age_days` (the
item's own age, from its business date)."""

from __future__ import annotations

import csv
import io
import sys
from collections import Counter
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

import orjson

from recon.money.currency import format_minor, is_iso4217
from recon.output.spreadsheet import neutralise
from recon.output.visible import visible

if TYPE_CHECKING:
    from recon.findings.listing import Finding
    from recon.money.fx import Rates

__all__ = ["COLUMNS", "FindingsWriter", "money"]

#: The columns of `--format csv` and `--format json`, in this order.
COLUMNS = (
    "work_state",
    "severity",
    "check_name",
    "finding_key",
    "entity",
    "entity_id",
    "currency",
    "amount_minor",
    "amount",
    "known_days",
    "item_age_days",
    "first_seen_run",
    "item_date",
    "owner",
    "decided_by",
    "decided_at",
    "until",
    "reason",
    "note",
    "lapsed",
    "detail",
)
_HEADER = "work state   finding key  severity  amount  known since (days)  item date (age)  detail"


def money(amount: int | None, currency: str | None) -> str:
    """An amount for people, with its currency's digits (minor units when not ISO 4217)."""
    if amount is None:
        return "—"
    if currency is None or not is_iso4217(currency):
        return f"{currency or '?'} {amount:,} (minor units)"
    return format_minor(amount, currency)


def _days(since: datetime | None, now: datetime) -> int | None:
    return None if since is None else (now - since).days


class FindingsWriter:
    """Writes findings to `out` (stdout) in `fmt`, one at a time, and counts work states."""

    def __init__(self, fmt: str, rates: Rates | None = None, out: IO[str] | None = None) -> None:
        self.fmt = fmt
        self.rates = rates
        self.out = out if out is not None else sys.stdout
        self.now = datetime.now(UTC)
        self.counts: Counter[str] = Counter()
        self._first = True

    def start(self) -> None:
        if self.fmt == "table":
            self.out.write(_HEADER + "\n")
        elif self.fmt == "csv":
            self._csv_row(list(COLUMNS))
        else:
            self.out.write("[")

    def write(self, f: Finding) -> None:
        self.counts[f.decided] += 1
        if f.work_state in ("new", "reopened"):
            self.counts[f.work_state] += 1
        if self.fmt == "table":
            self.out.write(visible(self._line(f)) + "\n")  # a NUL or RLO shown, not obeyed
            return
        row = self._record(f)
        if self.fmt == "csv":
            self._csv_row([row[c] for c in COLUMNS])
        else:
            text = orjson.dumps(row).decode()
            self.out.write(("\n" if self._first else ",\n") + text)
        self._first = False

    def end(self) -> None:
        if self.fmt == "json":
            self.out.write("\n]\n" if not self._first else "]\n")
        self.out.flush()

    def _line(self, f: Finding) -> str:
        seen = f.first_seen_at.date().isoformat() if f.first_seen_at else "?"
        known = _days(f.first_seen_at, self.now)
        item = ""
        if f.item_at is not None:
            item = f"  item of {f.item_at.date().isoformat()} ({_days(f.item_at, self.now)} d)"
        converted = self.rates.label(f.amount_minor, f.currency) if self.rates else None
        line = (
            f"{f.work_state:<12} {f.finding_key}  {f.severity}  "
            f"{money(f.amount_minor, f.currency)}{f' ({converted})' if converted else ''}  "
            f"known since {seen}{f' ({known} d)' if known is not None else ''}{item}"
            f"  {f.detail or ''}"
        )
        event = f.ack
        if f.owner:
            line += f"  [owner {f.owner}]"
        if event is not None and f.decided in ("acknowledged", "resolved_manually"):
            verb = "acknowledged" if f.decided == "acknowledged" else "resolved manually"
            until = f", until {event.until}" if event.until else ""
            reason = f" ({event.reason})" if event.reason else ""
            line += f"  [{verb} by {event.who} {event.at:%Y-%m-%d}{until}{reason}: {event.note}]"
        if f.lapsed:
            line += f"  [lapsed: {f.lapsed}]"
        return line

    def _record(self, f: Finding) -> dict[str, Any]:
        event = f.ack
        decided = event is not None and f.decided in ("acknowledged", "resolved_manually")
        return {
            "work_state": f.work_state,
            "severity": f.severity,
            "check_name": f.check_name,
            "finding_key": f.finding_key,
            "entity": f.entity,
            "entity_id": f.entity_id,
            "currency": f.currency,
            "amount_minor": f.amount_minor,
            "amount": None if f.amount_minor is None else money(f.amount_minor, f.currency),
            "known_days": _days(f.first_seen_at, self.now),
            "item_age_days": _days(f.item_at, self.now),
            "first_seen_run": f.first_seen_run,
            "item_date": f.item_at.date().isoformat() if f.item_at else None,
            "owner": f.owner,
            "decided_by": event.who if decided and event else None,
            "decided_at": event.at.isoformat() if decided and event else None,
            "until": str(event.until) if decided and event and event.until else None,
            "reason": event.reason if decided and event else None,
            "note": event.note if decided and event else None,
            "lapsed": f.lapsed,
            "detail": f.detail,
        }

    def _csv_row(self, values: list[Any]) -> None:
        buffer = io.StringIO()
        cells = [neutralise(visible(v)) if isinstance(v, str) else v for v in values]
        csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").writerow(cells)
        self.out.write(buffer.getvalue())
