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
        with (latest / name).open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert rows, name
        columns = list(rows[0])
        assert columns[columns.index("amount_minor") + 1] == "amount", name
        for row in rows:
            if row["amount"] and row["currency"] in ("EUR", "USD", "GBP"):
                assert Decimal(row["amount"]) * 100 == int(row["amount_minor"])
