"""The findings analysts work off: the latest run's unresolved findings with their work
state, read from the published warehouse and the audit trail.

    new                first seen in the latest run, nothing decided yet
    reopened           resolved on an earlier night and back again, nothing decided yet
                       (it keeps its first sighting: `first_seen_run`, `reopen_count`)
    open               unresolved and nothing holds (new ones included; a lapsed
                       acknowledgement says why in `lapsed`)
    investigating      assigned to an owner
    acknowledged       an acknowledgement holds (amounts unchanged, `until` not passed)
    resolved_manually  resolved by hand with a reason code (amounts unchanged)

Every action of `recon findings` selects its findings with `Filters`, the filters of
`findings list`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.errors import ConfigError, UsageError, WarehouseError
from recon.findings.acks import AckEvent, AckLog, Amounts, amounts_of
from recon.findings.work import Work, judge, work_events
from recon.warehouse.database import open_readonly
from recon.warehouse.sql import read_sql

__all__ = [
    "STATES",
    "Filters",
    "Finding",
    "iter_findings",
    "known_checks",
    "list_findings",
    "parse_age",
]

STATES = ("open", "new", "investigating", "acknowledged", "resolved_manually", "reopened")
_AGE = re.compile(r"^\s*(\d+)\s*([hdw])\s*$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Filters:
    """The filters of `findings list`, taken by every `findings` action."""

    check: str | None = None
    currency: str | None = None
    older_than: timedelta | None = None
    state: str | None = None
    owner: str | None = None
    item_older_than: timedelta | None = None  # by the item's own date (findings.item_at)

    def __post_init__(self) -> None:
        if self.state is not None and self.state not in STATES:
            raise ConfigError("--state", f"must be one of {', '.join(STATES)}, not {self.state!r}")

    @property
    def any(self) -> bool:
        return any(
            v is not None
            for v in (
                self.check,
                self.currency,
                self.older_than,
                self.state,
                self.owner,
                self.item_older_than,
            )
        )

    def describe(self) -> str:
        """The filters in words, as given on the command line."""
        parts = [
            f"--{name.replace('_', '-')} {value}"
            for name, value in (
                ("check", self.check),
                ("currency", self.currency),
                ("state", self.state),
                ("owner", self.owner),
            )
            if value is not None
        ]
        for name, value in (
            ("older-than", self.older_than),
            ("item-older-than", self.item_older_than),
        ):
            if value is not None:
                hours = int(value.total_seconds()) // 3600
                age = f"{hours // 24}d" if hours % 24 == 0 else f"{hours}h"
                parts.append(f"--{name} {age}")
        return " ".join(parts) or "no filter"

    def keeps(self, f: Finding, now: datetime) -> bool:
        if self.check is not None and f.check_name != self.check:
            return False
        if self.currency is not None and (f.currency or "").upper() != self.currency.upper():
            return False
        if self.owner is not None and (f.owner or "") != self.owner:
            return False
        if self.state is not None and not (
            f.work_state == self.state
            or (self.state == "open" and f.work_state in ("new", "reopened"))
        ):
            return False
        if self.item_older_than is not None and not (
            f.item_at is not None and f.item_at <= now - self.item_older_than
        ):
            return False
        return self.older_than is None or (
            f.first_seen_at is not None and f.first_seen_at <= now - self.older_than
        )


@dataclass(frozen=True)
class Finding:
    """One unresolved finding of the latest run, with its work state."""

    run_id: str
    finding_key: str
    check_name: str
    severity: str
    state: str  # new | open | … (the run's lifecycle)
    entity: str
    entity_id: str
    currency: str | None
    amount_minor: int | None
    issue_type: str
    detail: str | None
    first_seen_run: str
    first_seen_at: datetime | None  # how long recon has known the break counts from here
    item_at: datetime | None  # the item's own date (order, payment, refund, invoice)
    work: Work | None  # what the trail says of the key
    decided: str  # open | investigating | acknowledged | resolved_manually
    lapsed: str | None  # why an acknowledgement or a manual resolution no longer holds

    @property
    def amounts(self) -> Amounts:
        return amounts_of(self.check_name, self.currency, self.amount_minor, self.detail)

    @property
    def ack(self) -> AckEvent | None:
        """The latest work event of the key, if any."""
        return self.work.event if self.work else None

    @property
    def owner(self) -> str | None:
        return self.work.owner if self.work else None

    @property
    def acknowledged(self) -> bool:
        return self.decided == "acknowledged"

    @property
    def work_state(self) -> str:
        """new, reopened, open, investigating, acknowledged or resolved_manually."""
        if self.decided == "open" and self.state in ("new", "reopened"):
            return self.state
        return self.decided


def parse_age(text: str, option: str = "--older-than") -> timedelta:
    """`7d`, `12h`, `2w` as a duration; anything else is a ConfigError naming `option`."""
    m = _AGE.match(text)
    if not m:
        raise ConfigError(option, f"{text!r} is not a duration like 7d, 12h or 2w")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


#: The orders SQL can give (`recon findings list --sort`); `converted` needs the user's
#: exchange rates and is sorted in Python (recon.findings.order).
_ORDER_BY = {
    None: "f.amount_minor DESC NULLS LAST, f.finding_key",
    "severity": "CASE f.severity WHEN 'error' THEN 0 WHEN 'warn' THEN 1 WHEN 'info' THEN 2 "
    "ELSE 9 END, r.started_at NULLS LAST, f.finding_key",
    "amount": "f.currency IS NULL, f.currency, f.amount_minor IS NULL, f.amount_minor DESC, "
    "f.finding_key",
}
#: Rows read from DuckDB at a time: the listing streams (a million findings, issue 38).
BATCH_ROWS = 10_000


def list_findings(
    db: Path,
    log_path: Path,
    *,
    check: str | None = None,
    state: str | None = None,
    older_than: timedelta | None = None,
    keys: Sequence[str] | None = None,
    now: datetime | None = None,
    filters: Filters | None = None,
) -> list[Finding]:
    """The latest loaded run's unresolved findings, filtered; largest amounts first."""
    filters = filters or Filters(check=check, state=state, older_than=older_than)
    return list(iter_findings(db, log_path, filters=filters, keys=keys, now=now))


def _sorted_batches(
    con: duckdb.DuckDBPyConnection, params: dict[str, object], order_by: str
) -> Iterator[pa.RecordBatch]:
    """sql/findings/list.sql's rows in `order_by`'s order, `BATCH_ROWS` at a time: only the
    rowids are sorted (sql/findings/list_keys.sql; 8 bytes a finding kept), then each batch
    of them is read in that order (sql/findings/list_rows.sql). A sort of a million findings
    with their details ran out of a command's 64 MiB (issue 38)."""
    keys = f"{read_sql('findings/list_keys.sql')}\nORDER BY {order_by}"
    rel = con.sql(keys, params=params)
    assert rel is not None
    rids = rel.to_arrow_table().column("rid").combine_chunks()
    rows = read_sql("findings/list_rows.sql")
    for start in range(0, len(rids), BATCH_ROWS):
        batch = rids.slice(start, BATCH_ROWS)
        positions = pa.array(range(start, start + len(batch)), pa.int64())
        con.register("listing_batch", pa.table({"pos": positions, "rid": batch}))
        try:
            read = con.sql(rows)
            assert read is not None
            table = read.to_arrow_table()
        finally:
            con.unregister("listing_batch")
        yield from table.to_batches()


def known_checks(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every check the warehouse knows: those that ran on some night, or found something."""
    rows = con.execute(read_sql("findings/known_checks.sql")).fetchall()
    return [str(r[0]) for r in rows]


def iter_findings(
    db: Path,
    log_path: Path,
    *,
    filters: Filters,
    keys: Sequence[str] | None = None,
    now: datetime | None = None,
    order: str | None = None,
) -> Iterator[Finding]:
    """`list_findings` one finding at a time, in `order` (None: largest amounts first;
    `severity`: most severe, then known longest; `amount`: per currency, largest first;
    `none`: as stored, for counting and bulk actions: no sort to hold within the limit),
    read from DuckDB in batches: memory holds one batch, whatever the number of findings.
    A `--check` that names no check the warehouse knows is a UsageError naming them."""
    now = now or datetime.now(UTC)
    works = work_events(AckLog(log_path).iter_events())
    con = open_readonly(db)
    try:
        latest = con.execute(  # fetched whole: DuckDB 2.0 runs nothing else beside a result
            "SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1"
        ).fetchall()
        row = latest[0] if latest else None
        if row is None:
            raise WarehouseError("the warehouse holds no run yet: run `recon nightly` first")
        if filters.check is not None and filters.check not in (known := known_checks(con)):
            raise UsageError(
                "--check",
                f"unknown check {filters.check!r}: the checks are {', '.join(known)}",
            )
        params = {"run": row[0], "check": filters.check}
        if order == "none":  # counting, bulk actions: as stored, no sort to make
            reader: Iterable[pa.RecordBatch] = con.sql(
                read_sql("findings/list.sql"), params=params
            ).to_arrow_reader(BATCH_ROWS)
        else:
            reader = _sorted_batches(con, params, _ORDER_BY[order])
        today = now.astimezone(UTC).date()
        wanted = set(keys) if keys is not None else None
        for batch in reader:
            columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            for r in zip(*columns, strict=True):
                if wanted is not None and r[1] not in wanted:
                    continue
                work = works.get(r[1])
                decided, lapsed = judge(work, amounts_of(r[2], r[7], r[8], r[10]), today)
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
                    item_at=r[13],
                    work=work,
                    decided=decided,
                    lapsed=lapsed,
                )
                if filters.keeps(finding, now):
                    yield finding
    finally:
        con.close()
