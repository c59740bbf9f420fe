"""The report's CSVs carry each amount in currency units beside its minor units."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest


@pytest.mark.integration
def test_the_reports_csvs_carry_the_amount_in_currency_units(analyst_db: Path) -> None:
    latest = analyst_db.parent.parent / "reports" / "latest"
    for name in ("findings.csv", "ledger_breaks.csv"):
        with (latest / name).open(newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
        assert rows, name
        columns = list(rows[0])
        assert columns[columns.index("amount_minor") + 1] == "amount", name
        for row in rows:
            if row["amount"] and row["currency"] in ("EUR", "USD", "GBP"):
                assert Decimal(row["amount"]) * 100 == int(row["amount_minor"])


@pytest.mark.integration
def test_breaks_carry_both_ages_and_an_invoice_is_aged_from_its_own_date(
    analyst_db: Path,
) -> None:
    import duckdb

    latest = analyst_db.parent.parent / "reports" / "latest"
    with (latest / "ledger_breaks.csv").open(newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    assert {"item_age_days", "known_days"} <= set(rows[0])
    con = duckdb.connect(str(analyst_db), read_only=True)
    try:
        run_id = latest.resolve().name
        invoices = dict(
            con.execute(
                "SELECT i.id, date_diff('day', i.created_at, r.started_at) FROM invoices AS i, "
                "runs AS r WHERE r.run_id = ?",
                [run_id],
            ).fetchall()
        )
    finally:
        con.close()
    invoice_rows = [r for r in rows if r["entity"] == "invoice"]
    assert invoice_rows
    for row in invoice_rows:
        expected = invoices.get(row["entity_id"])
        # the invoice's own age, or unknown (empty) -- never the night recon first saw it
        assert row["item_age_days"] == ("" if expected is None else str(expected)), row
    assert all(int(r["known_days"]) >= 0 for r in rows)
