"""The figures of a period's close, read from the published warehouse and the audit trail.

A period is a calendar month in UTC: `2026-10` is [2026-10-01 00:00, 2026-11-01 00:00).
Its runs are the loaded runs started inside it; its **opening run** is the last loaded run
started before it (step 0; none for a warehouse's first month: nothing was open), its
**cut-off run** the last one inside it. Findings "open at start" are the opening run's
unresolved findings, "open at end" the cut-off run's; between two consecutive runs a
finding opens (new), resolves, or stays open with its amount moved (change), so per
currency and check family, exactly:

    open at start + new - resolved + change = open at end     (amounts)
    open at start + new - resolved          = open at end     (counts)

(sql/close/rollforward_items.sql, one row per finding: the sheet lists them.) A check
family is the check's first tag (`ledger`, `refunds`, `invoices`, …).

The long lists (roll-forward items, open at cut-off, resolved in period) are spooled to
disk as DuckDB gives them (recon.close.spool), each batch with the team's decisions and
scrubbed of personal data, and the audit trail is read once, a line at a time: a close at
a million findings, or after a million acknowledgements, holds batches, not the lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.close.spool import BATCH_ROWS, SpooledTable
from recon.errors import ConfigError, WarehouseError
from recon.findings.acks import AckEvent, AckLog, amounts_of
from recon.findings.after_sign_off import AfterSignOff, changed_after_sign_off
from recon.findings.work import Work, judge, work_events
from recon.report.privacy import personal_values, scrub_table, scrub_text
from recon.warehouse.catalogue_views import ensure_live_records
from recon.warehouse.sql import read_sql, sql_dir

__all__ = ["Period", "PeriodFigures", "compute_period", "parse_period"]

_PERIOD = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
DEFAULT_FAILED = ("failed", "canceled", "cancelled", "rejected", "reversed")


@dataclass(frozen=True)
class Period:
    """A calendar month in UTC."""

    year: int
    month: int

    @property
    def name(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        year, month = (self.year + 1, 1) if self.month == 12 else (self.year, self.month + 1)
        return datetime(year, month, 1, tzinfo=UTC)

    @property
    def last_day(self) -> date:
        return (self.end - timedelta(days=1)).date()

    @property
    def days(self) -> list[date]:
        first = self.start.date()
        return [first + timedelta(days=i) for i in range((self.last_day - first).days + 1)]


def parse_period(text: str) -> Period:
    """`2026-10` as a Period; anything else is a ConfigError."""
    m = _PERIOD.fullmatch(text.strip())
    if not m:
        raise ConfigError("PERIOD", f"{text!r} is not a month like 2026-10")
    return Period(int(m.group(1)), int(m.group(2)))


@dataclass(frozen=True)
class RunRow:
    """One run the close reads."""

    run_id: str
    started_at: datetime
    status: str
    reason: str | None
    step: int
    opening: bool


@dataclass
class PeriodFigures:
    """Everything a close pack shows."""

    period: Period
    runs: list[RunRow]
    rollforward_items: SpooledTable  # one row per finding: on disk, read a batch at a time
    rollforward: pa.Table
    open_items: SpooledTable
    resolved_items: SpooledTable
    provider: pa.Table
    books: pa.Table | None
    matched_by_rule: pa.Table | None
    missing_days: list[date]
    manual: list[AckEvent] = field(default_factory=list)  # resolutions by hand in the period
    after_sign_off: list[AfterSignOff] = field(default_factory=list)
    cash: pa.Table | None = None  # the bank leg's roll-forward (None: no statements read)

    @property
    def in_period(self) -> list[RunRow]:
        return [r for r in self.runs if not r.opening]

    @property
    def opening(self) -> RunRow | None:
        return next((r for r in self.runs if r.opening), None)

    @property
    def cutoff(self) -> RunRow | None:
        inside = self.in_period
        return inside[-1] if inside else None

    @property
    def missing_ranges(self) -> str:
        """The days without a run as ranges: `2026-10-02 to 2026-10-14, 2026-10-16`."""
        spans: list[list[date]] = []
        for day in self.missing_days:
            if spans and (day - spans[-1][-1]).days == 1:
                spans[-1].append(day)
            else:
                spans.append([day])
        return ", ".join(str(s[0]) if len(s) == 1 else f"{s[0]} to {s[-1]}" for s in spans)

    @property
    def superseded(self) -> list[RunRow]:
        """Nights that failed (read nothing: a refused key, a wrong address, …) followed by a
        complete night in the period, which read everything again: listed, not holding the
        close up."""
        inside = self.in_period
        return [
            r
            for i, r in enumerate(inside)
            if r.status == "failed" and any(x.status == "complete" for x in inside[i + 1 :])
        ]

    @property
    def incomplete(self) -> list[RunRow]:
        covered = {r.run_id for r in self.superseded}
        return [r for r in self.in_period if r.status != "complete" and r.run_id not in covered]


def _families() -> pa.Table:
    from recon.checks.definition import parse_check

    names, families = [], []
    for path in sorted((sql_dir() / "checks").glob("*.sql")):
        check = parse_check(path)
        names.append(check.name)
        families.append(check.tags[0] if check.tags else "other")
    return pa.table({"check_name": names, "family": families})


def _arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> pa.Table:
    used = {k: v for k, v in params.items() if f"${k}" in sql}
    rel = con.sql(sql, params=used)
    assert rel is not None
    table: pa.Table = rel.to_arrow_table()
    return table


#: Findings a window of sql/close/rollforward_items.sql (resolved_items.sql) runs over at a
#: time: the findings are split into parts by the hash of their key (issue 38).
PART_ROWS = 200_000
_ROWS = "close_rows"  # the temp table a list is gathered in before it is spooled in order


def _gather(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any], parts: int = 1
) -> None:
    """`sql`'s rows into the temp table close_rows, unsorted (DuckDB spills it), a part of
    the findings at a time when `parts` > 1 ($part of $parts in the SQL)."""
    for part in range(parts):
        values = {**params, "part": part, "parts": parts}
        used = {k: v for k, v in values.items() if f"${k}" in sql}
        verb = f"CREATE OR REPLACE TEMP TABLE {_ROWS} AS" if part == 0 else f"INSERT INTO {_ROWS}"
        con.execute(f"{verb} {sql}", used)


def _spool_gathered(
    con: duckdb.DuckDBPyConnection, order_by: str, shape: Any = None
) -> SpooledTable:
    """close_rows spooled to disk in `order_by`'s order: only the rowids are sorted (8 bytes a
    row kept), then the rows are read `BATCH_ROWS` at a time in that order and each batch is
    shaped by `shape` (a million rows sorted with their details ran out of a command's
    64 MiB, issue 38)."""
    order = _arrow(con, f"SELECT rowid AS rid FROM {_ROWS} ORDER BY {order_by}", {})  # noqa: S608
    rids = order.column("rid").combine_chunks()
    read = f"SELECT t.* FROM close_batch AS b JOIN {_ROWS} AS t ON t.rowid = b.rid ORDER BY b.pos"  # noqa: S608

    def batch(start: int, size: int) -> pa.Table:
        part = rids.slice(start, size)
        positions = pa.array(range(start, start + len(part)), pa.int64())
        con.register("close_batch", pa.table({"pos": positions, "rid": part}))
        try:
            return _arrow(con, read, {})
        finally:
            con.unregister("close_batch")

    schema = batch(0, 0).schema

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, len(rids), BATCH_ROWS):
            yield from batch(start, BATCH_ROWS).to_batches()

    try:
        return SpooledTable.write(batches(), schema, shape)
    finally:
        con.execute(f"DROP TABLE IF EXISTS temp.{_ROWS}")


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    rows = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]
    ).fetchall()
    return bool(rows[0][0])


def _with_work(table: pa.Table, works: dict[str, Work], today: date) -> pa.Table:
    """`table` (findings open at cut-off, a batch of them) with what the team has decided on
    each when the pack is written: a close is prepared in the days after the period, and the
    explanations given by then belong in it (each still bound to the amounts the finding had
    at cut-off)."""
    # column by column, not a dict per row, and a batch at a time: 130k open items as dicts
    # peaked the close at 1.46 GB (issue 38)
    names = ("finding_key", "check_name", "currency", "amount_minor", "detail")
    columns = [table.column(n).to_pylist() for n in names]
    states: list[str | None] = []
    owners: list[str | None] = []
    notes: list[str | None] = []
    reasons: list[str | None] = []
    lapsed: list[str | None] = []
    for key, check_name, currency, amount_minor, detail in zip(*columns, strict=True):
        work = works.get(key)
        amounts = amounts_of(check_name, currency, amount_minor, detail)
        state, why = judge(work, amounts, today)
        event = work.event if work else None
        states.append(state)
        owners.append(work.owner if work else None)
        notes.append(event.note if event and event.action != "unack" else None)
        reasons.append(event.reason if event else None)
        lapsed.append(why)
    for name, values in (
        ("work_state", states),
        ("owner", owners),
        ("work_note", notes),
        ("work_reason", reasons),
        ("lapsed_reason", lapsed),
    ):
        table = table.append_column(name, pa.array(values, type=pa.string()))
    return table


def _read_trail(trail: Path, period: Period) -> tuple[dict[str, Work], list[AckEvent]]:
    """The audit trail read once, a line at a time: each finding's work (lean, as
    recon.findings.work keeps it) and the manual resolutions made in the period."""
    manual: dict[str, AckEvent] = {}

    def events() -> Iterator[AckEvent]:
        for e in AckLog(trail).iter_events():
            if e.action in ("resolve", "unack") and period.start <= e.at < period.end:
                manual[e.finding_key] = e
            yield e

    works = work_events(events())
    return works, [e for e in manual.values() if e.action == "resolve"]


def _manual_resolutions(resolutions: list[AckEvent]) -> list[dict[str, Any]]:
    """The manual resolutions made in the period as rows: one per finding (its latest, if
    it still stands: a repeated resolve is one resolution; an `unack` after it withdraws it)."""
    return [
        {
            "finding_key": e.finding_key,
            "who": e.who,
            "at": e.at,
            "reason": e.reason,
            "note": scrub_text(e.note, ()) if e.note else None,
            "currency": e.amounts.currency if e.amounts else None,
            "amount_minor": e.amounts.amount_minor if e.amounts else None,
        }
        for e in resolutions
    ]


def compute_period(
    con: duckdb.DuckDBPyConnection,
    period: Period,
    trail: Path,
    *,
    failed_statuses: tuple[str, ...] = DEFAULT_FAILED,
    now: datetime | None = None,
) -> PeriodFigures:
    """Read every figure of `period` through `con` (the published warehouse, read-only)."""
    params: dict[str, Any] = {"period_start": period.start, "period_end": period.end}
    rows = con.execute(read_sql("close/runs.sql"), params).fetchall()
    runs = [RunRow(r[0], r[1], r[2], r[3], int(r[4]), bool(r[5])) for r in rows]
    if not any(not r.opening for r in runs):
        raise WarehouseError(f"no loaded run started in {period.name}: nothing to close")
    steps = pa.table(
        {
            "run_id": [r.run_id for r in runs],
            "step": pa.array([r.step for r in runs], pa.int32()),
            "started_at": pa.array([r.started_at for r in runs], pa.timestamp("us", tz="UTC")),
        }
    )
    last = max(r.step for r in runs)
    cutoff = next(r for r in runs if r.step == last)
    params.update(
        last_step=last,
        cutoff_run=cutoff.run_id,
        cutoff_at=cutoff.started_at,
        failed_statuses=list(failed_statuses),
    )
    # Read first: one DuckDB query streams at a time, and each batch spooled needs them.
    works, manual = _read_trail(trail, period)
    today = (now or datetime.now(UTC)).date()
    ensure_live_records(con)  # a warehouse published before the view: a TEMP one
    # The pack sits beside the reports and keeps their promise: no personal data in it.
    personal: dict[str, list[str]] = {}
    for r in runs:
        for key, values in personal_values(con, r.run_id).items():
            personal.setdefault(key, []).extend(values)
    con.register("close_families", _families())
    con.register("close_steps", steps)
    try:
        counted = con.execute(
            "SELECT count(*) FROM findings AS f JOIN close_steps USING (run_id) "
            "WHERE f.state IN ('new', 'open', 'reopened')"
        ).fetchone()
        parts = max(1, -(-int(counted[0] if counted else 0) // PART_ROWS))
        # per finding, a part of the findings at a time; summed by sql/close/rollforward.sql
        _gather(con, read_sql("close/rollforward_items.sql"), params, parts)
        con.execute(f"ALTER TABLE {_ROWS} RENAME TO close_items")
        try:
            rollforward = _arrow(con, read_sql("close/rollforward.sql"), {})
            con.execute(f"ALTER TABLE close_items RENAME TO {_ROWS}")
            items = _spool_gathered(con, "family, currency NULLS LAST, check_name, finding_key")
        finally:
            con.execute("DROP TABLE IF EXISTS temp.close_items")
        _gather(con, read_sql("close/open_items.sql"), params)
        open_items = _spool_gathered(
            con,
            "family, currency NULLS LAST, amount_minor DESC NULLS LAST, finding_key",
            lambda t: scrub_table(
                _with_work(t, works, today), ("detail", "work_note", "lapsed_reason"), personal
            ),
        )
        _gather(con, read_sql("close/resolved_items.sql"), params, parts)
        resolved = _spool_gathered(
            con,
            "family, currency NULLS LAST, check_name, finding_key, resolved_at",
            lambda t: scrub_table(t, ("detail",), personal),
        )
    finally:
        con.unregister("close_families")
        con.unregister("close_steps")
    provider = _arrow(con, read_sql("close/provider_activity.sql"), params)
    books = matched = None
    if _has_table(con, "ledger_orders") and _has_table(con, "ledger_matches"):
        books = _arrow(con, read_sql("close/books_activity.sql"), params)
        matched = _arrow(con, read_sql("close/matched_by_rule.sql"), params)
    after = changed_after_sign_off(con, now or datetime.now(UTC))
    cash = None
    if _has_table(con, "bank_settlements"):
        cash = _arrow(con, read_sql("bank/close_cash.sql"), params)
        cash = cash if cash.num_rows else None
    seen_days = {r.started_at.astimezone(UTC).date() for r in runs if not r.opening}
    missing = [d for d in period.days if d not in seen_days]
    return PeriodFigures(
        period=period,
        runs=runs,
        rollforward_items=items,
        rollforward=rollforward,
        open_items=open_items,
        resolved_items=resolved,
        provider=provider,
        books=books,
        matched_by_rule=matched,
        missing_days=missing,
        manual=manual,
        after_sign_off=after,
        cash=cash,
    )


def manual_resolutions(figures: PeriodFigures) -> pa.Table:
    """The findings resolved by hand during the period (from the audit trail)."""
    rows = _manual_resolutions(figures.manual)
    schema = pa.schema(
        [
            ("finding_key", pa.string()),
            ("who", pa.string()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("reason", pa.string()),
            ("note", pa.string()),
            ("currency", pa.string()),
            ("amount_minor", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
