"""CSV as documented: timestamps `2026-11-21 02:00:00`, a European Excel dialect (`;` and a
decimal comma), and amounts in currency units beside the minor units in the report's CSVs."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.money.shown import with_major_amount
from recon.output.spreadsheet import write_csv

TABLE = pa.table(
    {
        "id": ["pay_1", "pay_2"],
        "note": ["a;b", "-x"],
        "amount": pa.array([Decimal("12.34"), Decimal("-1.50")], pa.decimal128(38, 2)),
        "at": pa.array(
            [datetime(2026, 11, 21, 2, 0, 0, 343568, tzinfo=UTC)] * 2, pa.timestamp("us", "UTC")
        ),
    }
)


def test_timestamps_are_written_to_the_second(tmp_path: Path) -> None:
    write_csv(TABLE, tmp_path / "t.csv")
    lines = (tmp_path / "t.csv").read_text(encoding="utf-8-sig").splitlines()
    assert lines[1] == '"pay_1","a;b",12.34,"2026-11-21 02:00:00"'


def test_the_european_dialect_uses_semicolons_and_decimal_commas(tmp_path: Path) -> None:
    write_csv(TABLE, tmp_path / "t.csv", dialect="excel-eu")
    assert (tmp_path / "t.csv").read_text(encoding="utf-8-sig").splitlines() == [
        '"id";"note";"amount";"at"',
        '"pay_1";"a;b";12,34;"2026-11-21 02:00:00"',
        '"pay_2";"\'-x";-1,50;"2026-11-21 02:00:00"',
    ]


def test_recon_export_takes_the_dialect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT 'EUR' AS currency, 12.34::DECIMAL(18, 2) AS amount")
    con.close()
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        app, ["export", str(out), "--table", "t", "--db", str(db), "--csv-dialect", "excel-eu"]
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8-sig").splitlines()
    assert lines == ['"currency";"amount"', '"EUR";12,34']
    monkeypatch.setenv("RECON_CSV_DIALECT", "excel-eu")
    result = CliRunner().invoke(app, ["export", str(out), "--table", "t", "--db", str(db)])
    assert out.read_text(encoding="utf-8-sig").splitlines()[1] == '"EUR";12,34'


def test_amounts_in_currency_units_sit_beside_the_minor_units() -> None:
    table = pa.table(
        {
            "currency": ["EUR", "JPY", "BHD", "XYZ", None],
            "amount_minor": [1234, 98489, 176414, 5, 7],
            "detail": ["a", "b", "c", "d", "e"],
        }
    )
    shown = with_major_amount(table)
    assert shown.column_names == ["currency", "amount_minor", "amount", "detail"]
    assert shown.column("amount").to_pylist() == [
        Decimal("12.340"),
        Decimal("98489.000"),
        Decimal("176.414"),
        None,  # not ISO 4217: no scale to apply
        None,
    ]
