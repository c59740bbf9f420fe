"""The Cash figures, per currency, read from the warehouse for the report's "Cash" section
(`sql/bank/report_cash.sql`) and the close pack's Cash sheet (`sql/bank/close_cash.sql`).
Amounts stay integers in minor units per currency, never added across currencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import duckdb

from recon.warehouse.sql import read_sql

__all__ = ["CashRow", "CashSection", "build_cash_section"]


@dataclass(frozen=True)
class CashRow:
    """One currency's settlements against the statements."""

    currency: str
    first_date: date | None
    last_date: date | None
    settlements: int
    expected: int
    received: int
    differences: int  # received - expected over the settlements found
    in_transit: int
    missing: int
    not_judged: int  # in a gap, or ambiguous
    mismatches: int
    missing_count: int
    unexpected: int
    unexpected_minor: int
    gaps: int


@dataclass(frozen=True)
class CashSection:
    """The Cash section (configured False: no statements were read)."""

    configured: bool
    rows: list[CashRow] = field(default_factory=list)
    source: str | None = None
    not_covered: list[str] = field(default_factory=list)  # currencies with no statement


def build_cash_section(con: duckdb.DuckDBPyConnection, run_id: str) -> CashSection:
    """The Cash section of run `run_id` (the bank tables are the newest night's snapshot)."""
    try:
        load = con.execute(
            "SELECT source FROM bank_loads WHERE run_id = ? ORDER BY loaded_at DESC LIMIT 1",
            [run_id],
        ).fetchall()
    except duckdb.CatalogException:  # a warehouse from before the bank leg
        return CashSection(False)
    if not load:
        return CashSection(False)
    rows = [CashRow(*r) for r in con.execute(read_sql("bank/report_cash.sql")).fetchall()]
    uncovered = [
        str(r[0])
        for r in con.execute(
            "SELECT DISTINCT currency FROM bank_settlements WHERE state = 'not_covered' "
            "AND currency NOT IN (SELECT currency FROM bank_statements) ORDER BY 1"
        ).fetchall()
    ]
    return CashSection(True, rows, str(load[0][0]), uncovered)
