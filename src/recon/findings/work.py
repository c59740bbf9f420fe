"""A finding's work state, decided from the audit trail (recon.findings.acks) when read.

Work states (decided by the latest `ack`/`unack`/`assign`/`resolve` of a finding key):

    open               nothing holds (never worked, `unack`ed, or a lapsed ack/resolution)
    investigating      `assign --to NAME`: someone looks at it (the owner)
    acknowledged       `ack`: explained, still listed; holds while the finding keeps the
                       amounts it was acknowledged with and `until` has not passed
    resolved_manually  `resolve --reason CODE`: settled by hand; holds while the amounts hold

The owner is the latest `assign`'s, whatever the state after it.

The view `finding_states` (sql/migrations/0300_work_states.sql) says the same in SQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from recon.findings.acks import WORK_ACTIONS, AckEvent, Amounts

__all__ = ["REASONS", "WORK_ACTIONS", "WORK_STATES", "Work", "judge", "work_events"]

WORK_STATES = ("open", "investigating", "acknowledged", "resolved_manually")
REASONS = ("timing", "provider_error", "books_error", "written_off", "duplicate", "other")


@dataclass(frozen=True)
class Work:
    """What the trail says of one finding key: its latest state event and its owner."""

    event: AckEvent | None  # the latest ack/unack/assign/resolve
    owner: str | None

    def state(self, amounts: Amounts, today: date) -> tuple[str, str | None]:
        """(work state, why an acknowledgement or manual resolution lapsed, if it did)."""
        return judge(self, amounts, today)


def work_events(events: Iterable[AckEvent]) -> dict[str, Work]:
    """Per finding key: its latest work event and owner (other actions are ignored)."""
    latest: dict[str, AckEvent] = {}
    owners: dict[str, str | None] = {}
    for event in events:
        if event.action not in WORK_ACTIONS:
            continue
        latest[event.finding_key] = event
        if event.action == "assign":
            owners[event.finding_key] = event.owner or None
    return {k: Work(e, owners.get(k)) for k, e in latest.items()}


def judge(work: Work | None, amounts: Amounts, today: date) -> tuple[str, str | None]:
    """The work state of a finding now holding `amounts`, and why a decision lapsed."""
    event = work.event if work else None
    if event is None or event.action == "unack":
        return "open", None
    if event.action == "assign":
        return ("investigating", None) if event.owner else ("open", None)
    verb = "acknowledged" if event.action == "ack" else "resolved manually"
    if event.amounts != amounts:
        return "open", f"amount changed since {verb} by {event.who} on {event.at:%Y-%m-%d}"
    if event.action == "ack":
        if event.until is not None and event.until < today:
            return "open", f"acknowledged until {event.until}, which has passed"
        return "acknowledged", None
    return "resolved_manually", None
