"""The findings analysts work off: the latest run's unresolved findings with their
acknowledgement state, read from the published warehouse and the audit log.

    new           first seen in the latest run, not acknowledged
    open          unresolved and not acknowledged (new ones included)
    acknowledged  an acknowledgement holds (amounts unchanged, `until` not passed)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from recon.database import open_readonly
from recon.errors import ConfigError, WarehouseError
from recon.findings.acks import AckEvent, AckLog, Amounts, amounts_of, current_acks

__all__ = ["STATES", "Finding", "list_findings", "parse_age"]

STATES = ("open", "new", "acknowledged")
_AGE = re.compile(r"^\s*(\d+)\s*([hdw])\s*$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Finding:
    """One unresolved finding of the latest run, with its acknowledgement."""

    run_id: str
    finding_key: str
    check_name: str
    severity: str
    state: str  # new | open (the run's lifecycle)
    entity: str
    entity_id: str
    currency: str | None
    amount_minor: int | None
    issue_type: str
    detail: str | None
    first_seen_run: str
    first_seen_at: datetime | None
    ack: AckEvent | None  # the latest ack/unack event of the key, if any
    acknowledged: bool

    @property
    def amounts(self) -> Amounts:
        return amounts_of(self.check_name, self.currency, self.amount_minor, self.detail)

    @property
    def work_state(self) -> str:
        """acknowledged, new or open."""
        if self.acknowledged:
            return "acknowledged"
        return "new" if self.state == "new" else "open"


def parse_age(text: str) -> timedelta:
    """`7d`, `12h`, `2w` as a duration; anything else is a ConfigError."""
    m = _AGE.match(text)
    if not m:
        raise ConfigError("--older-than", f"{text!r} is not a duration like 7d, 12h or 2w")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


def list_findings(
    db: Path,
    log_path: Path,
    *,
    check: str | None = None,
    state: str | None = None,
    older_than: timedelta | None = None,
    keys: Sequence[str] | None = None,
    now: datetime | None = None,
) -> list[Finding]:
    """The latest loaded run's unresolved findings, filtered; largest amounts first."""
    if state is not None and state not in STATES:
        raise ConfigError("--state", f"must be one of {', '.join(STATES)}, not {state!r}")
    now = now or datetime.now(UTC)
    latest = current_acks(AckLog(log_path).read())
    con = open_readonly(db)
    try:
        row = con.execute(
            "SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
        if row is None:
            raise WarehouseError("the warehouse holds no run yet: run `recon nightly` first")
        rows = con.execute(
            "SELECT f.run_id, f.finding_key, f.check_name, f.severity, f.state, f.entity, "
            "f.entity_id, f.currency, f.amount_minor, f.issue_type, f.detail, "
            "f.first_seen_run, r.started_at "
            "FROM findings AS f LEFT JOIN runs AS r ON r.run_id = f.first_seen_run "
            "WHERE f.run_id = $run AND f.state IN ('new', 'open') "
            "AND ($check IS NULL OR f.check_name = $check) "
            "ORDER BY f.amount_minor DESC NULLS LAST, f.finding_key",
            {"run": row[0], "check": check},
        ).fetchall()
    finally:
        con.close()
    today = now.astimezone(UTC).date()
    out: list[Finding] = []
    wanted = set(keys) if keys is not None else None
    for r in rows:
        if wanted is not None and r[1] not in wanted:
            continue
        amounts = amounts_of(r[2], r[7], r[8], r[10])
        event = latest.get(r[1])
        acknowledged = event is not None and event.holds(amounts, today)
        finding = Finding(
            run_id=r[0],
            finding_key=r[1],
            check_name=r[2],
            severity=r[3],
            state=r[4],
            entity=r[5],
            entity_id=r[6],
            currency=r[7],
            amount_minor=r[8],
            issue_type=r[9],
            detail=r[10],
            first_seen_run=r[11],
            first_seen_at=r[12],
            ack=event,
            acknowledged=acknowledged,
        )
        if (
            state is not None
            and finding.work_state != state
            and not (state == "open" and finding.work_state == "new")
        ):
            continue
        if older_than is not None and (
            finding.first_seen_at is None or finding.first_seen_at > now - older_than
        ):
            continue
        out.append(finding)
    return out
