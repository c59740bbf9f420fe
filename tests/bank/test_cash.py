"""Where people look: the report's Cash figures add up per currency, and the close pack's
Cash sheet rolls forward (in transit at the start + expected - received + differences = in
transit at the cut-off), over the sandbox's statements with every plant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

from recon.bank.cash import build_cash_section
from recon.bank.loading import load_bank
from recon.config.settings import settings_from
from recon.sandbox.bank import PROVIDER_MATCH, SANDBOX_BANK, plan_statements, write_statements
from recon.sandbox.data import Dataset
from recon.warehouse.sql import read_sql
from tests.ledger.support import RUN, load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)


def test_cash_section_adds_up_and_the_close_sheet_rolls_forward(tmp_path: Path) -> None:
    dataset = Dataset(7, 600, anchor=ANCHOR)
    write_statements(plan_statements(dataset), tmp_path / "bank")
    con = warehouse(tmp_path / "recon.duckdb")
    load_dataset(con, tmp_path, dataset, ANCHOR + timedelta(hours=2))
    settings = settings_from(
        bank_statements=str(tmp_path / "bank" / "bank-*"),
        bank_provider_match=PROVIDER_MATCH,
        bank=SANDBOX_BANK,
    )
    load_bank(con, settings, RUN)
    cash = build_cash_section(con, RUN)
    assert cash.configured
    assert [r.currency for r in cash.rows] == ["BHD", "EUR", "GBP", "JPY", "USD"]
    for r in cash.rows:
        assert r.expected == r.received - r.differences + r.in_transit + r.missing + r.not_judged
    by = {r.currency: r for r in cash.rows}
    assert (by["EUR"].missing_count, by["USD"].mismatches, by["BHD"].gaps) == (1, 1, 1)
    assert (by["GBP"].unexpected, by["JPY"].unexpected) == (1, 1)
    months = [datetime(2026, m, 1, tzinfo=UTC) for m in (8, 9, 10, 11, 12)]
    carried: dict[str, int] = {}
    for start, end in pairwise(months):
        sheet = con.execute(
            read_sql("bank/close_cash.sql"), {"period_start": start, "period_end": end}
        ).fetchall()
        for row in sheet:
            currency, start_minor, ties, end_minor = row[0], row[1], row[-1], row[6]
            assert ties, row
            assert start_minor == carried.get(currency, 0), (currency, start)
            carried[currency] = end_minor
    con.close()
