"""The report's "Books vs provider" section: the merchant's books against the provider.

    section = build_ledger_section(con, run_id, folder)   # also writes ledger_breaks.csv/.parquet

Per currency: books total, provider total, matched, unmatched on each side, net difference,
pending within the grace; the aging of open breaks; the largest breaks; every break
exported (CSV spreadsheet-safe, Parquet). Reads the warehouse only (`sql/ledger/report_*.sql`);
amounts stay integers per currency and are never added across currencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from recon.money.shown import with_major_amount
from recon.output.spreadsheet import CsvDialect, write_csv, write_parquet
from recon.report.privacy import scrub_table
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
    rel = con.sql(read_sql("ledger/report_breaks.sql"), params={"run_id": run_id})
    # personal data out of every report file (recon.report.privacy)
    table = scrub_table(rel.to_arrow_table(), ("detail", "acknowledged_note"))
    table = with_major_amount(table)  # the amount in currency units beside the minor units
    section.files["ledger_breaks.parquet"] = write_parquet(table, folder / EXPORTS[1])
    section.files["ledger_breaks.csv"] = write_csv(table, folder / EXPORTS[0], dialect=csv_dialect)
    shown: dict[str, int] = {}
    for row in table.to_pylist():
        section.open_breaks += 0 if row["acknowledged"] else 1
        section.acknowledged += 1 if row["acknowledged"] else 0
        currency = row["currency"] or "?"
        count, amount = section.aging.setdefault(currency, {}).get(row["age_bucket"], (0, 0))
        section.aging[currency][row["age_bucket"]] = (
            count + 1,
            amount + (row["amount_minor"] or 0),
        )
        if shown.get(currency, 0) < LARGEST_PER_CURRENCY:
            shown[currency] = shown.get(currency, 0) + 1
            section.largest.append(
                LargestBreak(
                    **{k: row[k] for k in LargestBreak.__dataclass_fields__},
                )
            )
    pending = con.execute(
        "SELECT count(*) FROM findings WHERE run_id = ? AND check_name = 'ledger_pending' "
        "AND state IN ('new', 'open', 'reopened')",
        [run_id],
    ).fetchone()
    section.pending = int(pending[0]) if pending else 0
    return section


def _rows(con: duckdb.DuckDBPyConnection, sql: str, run_id: str) -> list[dict[str, Any]]:
    cur = con.execute(sql, {"run_id": run_id})
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
