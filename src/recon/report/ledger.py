"""The report's "Books vs provider" section: the merchant's books against the provider.

    section = build_ledger_section(con, run_id, folder)   # also writes ledger_breaks.csv/.parquet

Per currency: books total, provider total, matched, unmatched on each side, net difference,
pending within the grace; the aging of open breaks; the largest breaks; every break
exported (CSV spreadsheet-safe, Parquet). Reads the warehouse only (`sql/ledger/report_*.sql`);
amounts stay integers per currency and are never added across currencies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

from recon.money.shown import major_scale, with_major_amount
from recon.output.spreadsheet import CsvDialect, write_csv_batches, write_parquet_batches
from recon.report.privacy import scrub_table, scrub_text
from recon.warehouse.sql import read_sql

__all__ = ["AGE_BUCKETS", "LargestBreak", "LedgerSection", "build_ledger_section"]

AGE_BUCKETS = ("0-7", "8-30", "31-90", "90+", "unknown")
LARGEST_PER_CURRENCY = 10
EXPORTS = ("ledger_breaks.csv", "ledger_breaks.parquet")


@dataclass(frozen=True)
class CurrencyTotals:
    """One currency's books against the provider, in minor units."""

    currency: str
    orders: int
    payments: int
    books_total: int
    provider_total: int
    matched: int
    unmatched_books: int
    unmatched_provider: int
    net_difference: int
    pending_books: int
    pending_provider: int


@dataclass(frozen=True)
class LargestBreak:
    """One open break, as listed among the largest."""

    check_name: str
    finding_key: str
    entity: str
    entity_id: str
    currency: str | None
    amount_minor: int | None
    issue_type: str
    detail: str | None
    item_age_days: int | None  # the item's own age (NULL: it has no date)
    known_days: int | None  # how long recon has known the break
    acknowledged: bool


@dataclass
class LedgerSection:
    """What the section shows; `configured` is False when this run loaded no books."""

    configured: bool
    loads: list[dict[str, Any]] = field(default_factory=list)
    totals: list[CurrencyTotals] = field(default_factory=list)
    aging: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)  # cur -> bucket
    largest: list[LargestBreak] = field(default_factory=list)
    open_breaks: int = 0
    acknowledged: int = 0
    pending: int = 0
    checks: dict[str, str] = field(default_factory=dict)  # ledger check -> status
    # per matching rule and currency: orders, amount_minor, with_difference (the proposals of
    # suggested_match: with_difference counts the ambiguous ones)
    rules: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, int | None] = field(default_factory=dict)  # export -> rows
    buckets: tuple[str, ...] = AGE_BUCKETS


def build_ledger_section(
    con: duckdb.DuckDBPyConnection, run_id: str, folder: Path, csv_dialect: CsvDialect = "excel"
) -> LedgerSection:
    """Read the section's figures for `run_id` and write its exports into `folder`."""
    try:
        loads = _rows(
            con,
            "SELECT input, source, rows_read, rows_loaded, rejects, grace_hours, suspect, "
            "accepted, unread_sheets FROM ledger_loads WHERE run_id = $run_id ORDER BY input",
            run_id,
        )
    except duckdb.CatalogException:  # a warehouse from before the books were reconciled
        return LedgerSection(configured=False)
    checks = dict(
        con.execute(
            "SELECT check_name, status FROM check_runs WHERE run_id = ? "
            "AND starts_with(check_name, 'ledger_') ORDER BY check_name",
            [run_id],
        ).fetchall()
    )
    if not loads:
        return LedgerSection(configured=False, checks=checks)
    section = LedgerSection(configured=True, loads=loads, checks=checks)
    section.rules = _rows(con, read_sql("ledger/report_rules.sql"), run_id)
    section.totals = [
        CurrencyTotals(**row) for row in _rows(con, read_sql("ledger/report_totals.sql"), run_id)
    ]
    _breaks(con, run_id, folder, csv_dialect, section)
    pending = con.execute(
        "SELECT count(*) FROM findings WHERE run_id = ? AND check_name = 'ledger_pending' "
        "AND state IN ('new', 'open', 'reopened')",
        [run_id],
    ).fetchone()
    section.pending = int(pending[0]) if pending else 0
    return section


#: Breaks read, joined with their items and written at a time (a million breaks: issue 38).
BREAKS_BATCH = 50_000
_BREAKS = "report_breaks"  # the temp table every break of the run goes to, once


def _breaks(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    folder: Path,
    csv_dialect: CsvDialect,
    section: LedgerSection,
) -> None:
    """Every open break: read a batch at a time into a temp table (DuckDB spills it), its
    counts and aging summed and the largest per currency taken there, then written to
    ledger_breaks.parquet and .csv in order (currency, largest first) a batch at a time."""
    p = {"run_id": run_id}
    rids = _arrow(con, read_sql("ledger/report_break_rows.sql"), p).column("rid").combine_chunks()
    sql = read_sql("ledger/report_breaks.sql")
    for start in range(0, max(len(rids), 1), BREAKS_BATCH):
        con.register("report_batch", pa.table({"rid": rids.slice(start, BREAKS_BATCH)}))
        try:
            verb = (
                f"CREATE OR REPLACE TEMP TABLE {_BREAKS} AS"
                if start == 0
                else (f"INSERT INTO {_BREAKS}")
            )
            con.execute(f"{verb} {sql}", p)
        finally:
            con.unregister("report_batch")
    try:
        for currency, bucket, n, acknowledged, amount in con.execute(
            f"SELECT currency, age_bucket, count(*), count(*) FILTER (WHERE acknowledged), "  # noqa: S608
            f"CAST(coalesce(sum(amount_minor), 0) AS HUGEINT) FROM {_BREAKS} GROUP BY ALL"
        ).fetchall():
            section.open_breaks += int(n) - int(acknowledged)
            section.acknowledged += int(acknowledged)
            section.aging.setdefault(currency or "?", {})[bucket] = (int(n), int(amount))
        codes = [c for (c,) in con.execute(
            f"SELECT DISTINCT currency FROM {_BREAKS} ORDER BY currency NULLS LAST"  # noqa: S608
        ).fetchall()]  # fmt: skip
        fields = ", ".join(LargestBreak.__dataclass_fields__)
        for code in codes:
            cur = con.execute(
                f"SELECT {fields} FROM {_BREAKS} WHERE currency IS NOT DISTINCT FROM ? "  # noqa: S608
                "ORDER BY amount_minor DESC NULLS LAST, finding_key LIMIT ?",
                [code, LARGEST_PER_CURRENCY],
            )
            names = [d[0] for d in cur.description or []]
            for row in cur.fetchall():
                largest = dict(zip(names, row, strict=True))
                largest["detail"] = scrub_text(largest.get("detail"))
                section.largest.append(LargestBreak(**largest))
        _export(con, folder, csv_dialect, section, major_scale(codes))
    finally:
        con.execute(f"DROP TABLE IF EXISTS temp.{_BREAKS}")


def _export(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    csv_dialect: CsvDialect,
    section: LedgerSection,
    scale: int,
) -> None:
    """ledger_breaks.parquet, then .csv from it, in order (currency, largest first): the
    rowids sorted (keys only), the rows read a batch of them at a time."""
    order = (
        _arrow(
            con,
            f"SELECT rowid AS rid FROM {_BREAKS} "  # noqa: S608
            "ORDER BY currency, amount_minor DESC NULLS LAST, finding_key",
            {},
        )
        .column("rid")
        .combine_chunks()
    )
    read = (
        f"SELECT t.* FROM report_batch AS b JOIN {_BREAKS} AS t ON t.rowid = b.rid "  # noqa: S608
        "ORDER BY b.pos"
    )

    def batch(start: int, size: int) -> pa.Table:
        rids = order.slice(start, size)
        positions = pa.array(range(start, start + len(rids)), pa.int64())
        con.register("report_batch", pa.table({"pos": positions, "rid": rids}))
        try:
            table = _arrow(con, read, {})
        finally:
            con.unregister("report_batch")
        # personal data out of every report file (recon.report.privacy)
        table = scrub_table(table, ("detail", "acknowledged_note"))
        # the amount in currency units beside the minor units
        return with_major_amount(table, scale=scale)

    schema = batch(0, 0).schema

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, len(order), BREAKS_BATCH):
            yield from batch(start, BREAKS_BATCH).to_batches()

    parquet = folder / EXPORTS[1]
    reader = pa.RecordBatchReader.from_batches(schema, batches())
    section.files["ledger_breaks.parquet"] = write_parquet_batches(reader, parquet)
    written = pq.ParquetFile(parquet)
    section.files["ledger_breaks.csv"] = write_csv_batches(
        pa.RecordBatchReader.from_batches(
            written.schema_arrow, written.iter_batches(batch_size=BREAKS_BATCH)
        ),
        folder / EXPORTS[0],
        dialect=csv_dialect,
    )


def _arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> pa.Table:
    rel = con.sql(sql, params=params or None)
    assert rel is not None
    table: pa.Table = rel.to_arrow_table()
    return table


def _rows(con: duckdb.DuckDBPyConnection, sql: str, run_id: str) -> list[dict[str, Any]]:
    cur = con.execute(sql, {"run_id": run_id})
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
