"""The audit trail's events as recon reads them (recon.findings.acks writes and reads the
lines; recon.findings.record keeps them in the warehouse)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

__all__ = ["AckEvent", "Amounts"]


@dataclass(frozen=True, slots=True)
class Amounts:
    """What an acknowledgement is bound to: the finding's money, as it stood."""

    currency: str | None
    amount_minor: int | None
    sides: str | None  # ledger findings: their detail (books and provider amounts)


@dataclass(frozen=True, slots=True)
class AckEvent:
    """One line of the log."""

    seq: int  # line number in the log, from 1
    action: str  # ack | unack | assign | resolve | anything another writer audits
    finding_key: str
    who: str
    at: datetime
    note: str | None
    until: date | None
    amounts: Amounts | None
    owner: str | None = None  # assign
    reason: str | None = None  # resolve
    fields: Mapping[str, Any] = field(default_factory=dict)  # the rest of the line
    line_hash: str = ""
    prev: str | None = None

    def holds(self, amounts: Amounts, today: date) -> bool:
        """True if this event acknowledges a finding that now has `amounts`."""
        return (
            self.action == "ack"
            and self.amounts == amounts
            and (self.until is None or self.until >= today)
        )
