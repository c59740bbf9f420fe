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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import Any

from recon.findings.acks import WORK_ACTIONS, AckEvent, Amounts, NewEvent

__all__ = ["REASONS", "WORK_ACTIONS", "WORK_STATES", "Work", "judge", "repeats", "work_events"]

WORK_STATES = ("open", "investigating", "acknowledged", "resolved_manually")
REASONS = ("timing", "provider_error", "books_error", "written_off", "duplicate", "other")


@dataclass(frozen=True, slots=True)
class Work:
    """What the trail says of one finding key: its latest state event and its owner."""

    event: AckEvent | None  # the latest ack/unack/assign/resolve
    owner: str | None

    def state(self, amounts: Amounts, today: date) -> tuple[str, str | None]:
        """(work state, why an acknowledgement or manual resolution lapsed, if it did)."""
        return judge(self, amounts, today)


#: Values kept once however many events repeat them (who, when, the note of a bulk action,
#: a currency): a bound, so that a trail of distinct notes does not grow a second index.
_SHARED_MAX = 10_000


def work_events(events: Iterable[AckEvent]) -> dict[str, Work]:
    """Per finding key: its latest work event and owner (other actions are ignored).

    `events` may be a stream (`AckLog.iter_events()`): one event at a time is read, and
    each key keeps a lean copy of its latest event, without what deciding a state never
    reads (the chain's hashes, an empty `fields`) and with repeated values shared. A
    trail of a million acknowledgements (a bulk action) held 1.2 GB as events, ~0.4 GB so
    (issue 38)."""
    works: dict[str, Work] = {}
    owners: dict[str, str | None] = {}
    shared: dict[Any, Any] = {}
    for event in events:
        if event.action not in WORK_ACTIONS:
            continue
        works[event.finding_key] = Work(_lean(event, shared), None)
        if event.action == "assign":
            owners[event.finding_key] = event.owner or None
    for key, owner in owners.items():
        if owner is not None:
            works[key] = Work(works[key].event, owner)
    return works


def _lean(event: AckEvent, shared: dict[Any, Any]) -> AckEvent:
    """`event` without the chain's hashes, its repeated values shared through `shared`."""

    def one(value: Any) -> Any:
        if value is None:
            return None
        kept = shared.get(value)
        if kept is not None:
            return kept
        if len(shared) < _SHARED_MAX:
            shared[value] = value
        return value

    amounts = event.amounts
    if amounts is not None:
        amounts = Amounts(one(amounts.currency), amounts.amount_minor, amounts.sides)
    return AckEvent(
        seq=event.seq,
        action=one(event.action),
        finding_key=event.finding_key,
        who=one(event.who),
        at=one(event.at),
        note=one(event.note),
        until=one(event.until),
        amounts=amounts,
        owner=one(event.owner),
        reason=one(event.reason),
        fields=event.fields or _NO_FIELDS,
    )


_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


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


def repeats(work: Work | None, event: NewEvent, today: date) -> AckEvent | None:
    """The standing decision that `event` would only repeat (None: it changes something).

    A resolve of a finding resolved by hand with the amounts it has now repeats it, whatever
    its note; an ack, an assign or an unack repeats the latest decision when it says the
    same (note, until, owner). Applying it again would add a line and, for a resolve, a
    second row to the close pack's "Resolved manually": it is a no-op that says so."""
    last = work.event if work else None
    if last is None or last.action != event.action:
        return None
    if event.action == "resolve":
        state, _ = judge(work, event.amounts or Amounts(None, None, None), today)
        return last if state == "resolved_manually" else None
    if event.action == "ack" and (last.amounts != event.amounts or last.until != event.until):
        return None
    if event.action in ("ack", "unack") and last.note != event.note:
        return None
    if event.action == "assign" and last.owner != event.owner:
        return None
    return last
