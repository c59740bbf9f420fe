"""Issue 12/15 export asks: Excel workbooks, personal data left out, timestamps Excel reads,
integer sums as BIGINT in Parquet. Each test failed before the change it covers."""

from __future__ import annotations

import csv
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import openpyxl
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from recon.analyst.export import export, is_personal_column
from recon.errors import ConfigError
from tests.report.synthetic_warehouse import build

RAW = '{"id":"p","customer":{"email":"ann@example.com","name":"Ann Lee"},"card":{"last4":"4242"}}'


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wh") / "recon.duckdb"
    con = build(path)
    rows = [
        ("pay_1", 1234, "EUR", '=HYPERLINK("http://evil","x")'),
        ("pay_2", 123456, "JPY", "+SUM(A1:A9)"),
        ("pay_3", -1234, "BHD", "@cmd"),
        ("pay_4", 5, "XAU", "-2+3"),
        ("pay_5", None, "EUR", "plain"),
    ]
    for pid, amount, cur, ref in rows:
        con.execute(
            "INSERT INTO payments VALUES (?, ?, ?, 'confirmed', ?, "
            "TIMESTAMPTZ '2026-11-21 02:00:00+01', ?, 'h', 'r1', 'r1', NULL)",
            [pid, amount, cur, ref, RAW],
        )
    con.close()
    return path


def _sheet(path: Path, name: str) -> openpyxl.worksheet.worksheet.Worksheet:
    return openpyxl.load_workbook(path)[name]


def test_xlsx_has_typed_cells_money_in_major_units_and_no_formulas(
    db: Path, tmp_path: Path
) -> None:
    result = export(db, table="payments", out=tmp_path / "p.xlsx")
    ws = _sheet(result.path, "payments")
    header = [c.value for c in ws[1]]
    assert "amount" in header
    assert "amount_minor" not in header
    assert "raw" not in header
    rows = {r[header.index("id")].value: r for r in ws.iter_rows(min_row=2)}
    amount = header.index("amount")
    eur, jpy, bhd = rows["pay_1"][amount], rows["pay_2"][amount], rows["pay_3"][amount]
    assert (eur.value, eur.number_format) == (12.34, '#,##0.00 "EUR"')
    assert (jpy.value, jpy.number_format) == (123456, '#,##0 "JPY"')
    assert (bhd.value, bhd.number_format) == (-1.234, '#,##0.000 "BHD"')
    xau = rows["pay_4"][amount]  # XAU has no minor unit: kept in minor units, and says so
    assert (xau.value, xau.number_format) == (5, '#,##0 "XAU (minor units)"')
    assert rows["pay_5"][amount].value is None
    ref = header.index("reference")
    for pid, text in [("pay_1", '=HYPERLINK("http://evil","x")'), ("pay_3", "@cmd")]:
        cell = rows[pid][ref]
        assert (cell.data_type, cell.value) == ("s", text)  # a string cell, never a formula
    assert rows["pay_4"][ref].value == "-2+3"
    created = rows["pay_1"][header.index("created_at")]
    assert created.is_date
    assert created.value == datetime(2026, 11, 21, 1, 0)  # UTC wall time
    assert ws.freeze_panes == "A2"
    assert ws.tables or ws.auto_filter.ref  # the header carries a filter


def test_xlsx_reads_back_with_polars(db: Path, tmp_path: Path) -> None:
    result = export(
        db, query="SELECT id, amount_minor, currency FROM payments", out=tmp_path / "q.xlsx"
    )
    frame = pl.read_excel(result.path, sheet_name="query")
    assert frame.columns == ["id", "amount", "currency"]
    assert frame.filter(pl.col("id") == "pay_1")["amount"].item() == pytest.approx(12.34)


def test_several_tables_make_one_sheet_each(db: Path, tmp_path: Path) -> None:
    result = export(db, table=["payments", "failed_calls", "findings"], out=tmp_path / "m.xlsx")
    book = openpyxl.load_workbook(result.path)
    assert book.sheetnames == ["payments", "failed_calls", "findings"]
    with pytest.raises(ConfigError, match=r"\.xlsx"):
        export(db, table=["payments", "findings"], out=tmp_path / "m.csv")


def test_money_is_exact_decimal_before_the_cell() -> None:
    from recon.output.excel import _major

    assert _major(10**18 + 1, "BHD") == Decimal("1000000000000000.001")
    assert _major(-1, "EUR") == Decimal("-0.01")


def test_personal_data_is_left_out_unless_asked_for(db: Path, tmp_path: Path) -> None:
    q = (
        "SELECT id, raw, raw->>'$.customer.email' AS customer_email, "
        "raw->>'$.card.last4' AS card_last4, 'mail ann@example.com' AS note FROM payments"
    )
    result = export(db, query=q, out=tmp_path / "pd.csv")
    assert result.left_out == ("raw", "customer_email", "card_last4")
    text = result.path.read_text()
    assert "ann@example.com" not in text
    assert "4242" not in text
    assert "[personal data removed]" in text
    kept = export(db, query=q, out=tmp_path / "all.csv", include_raw=True)
    assert kept.left_out == ()
    assert "ann@example.com" in kept.path.read_text()


@pytest.mark.parametrize(
    ("name", "personal"),
    [
        ("raw", True),
        ("email", True),
        ("customerEmail", True),
        ("exp_month", True),
        ("check_name", False),
        ("customer_id", False),
        ("amount_minor", False),
    ],
)
def test_personal_columns_by_name(name: str, personal: bool) -> None:
    assert is_personal_column(name) is personal


def test_csv_timestamps_are_iso_8601_that_excel_reads(db: Path, tmp_path: Path) -> None:
    result = export(
        db, query="SELECT id, created_at FROM payments ORDER BY id", out=tmp_path / "t.csv"
    )
    with result.path.open(newline="") as fh:
        first = next(csv.DictReader(fh))
    assert first["created_at"] == "2026-11-21 01:00:00"  # UTC, no "+0000" Excel cannot read
    assert datetime.fromisoformat(first["created_at"]) == datetime(2026, 11, 21, 1, 0)


def test_sums_are_bigint_in_parquet(db: Path, tmp_path: Path) -> None:
    q = "SELECT currency, sum(amount_minor) AS total_minor FROM payments GROUP BY ALL"
    result = export(db, query=q, out=tmp_path / "s.parquet")
    assert pq.read_schema(result.path).field("total_minor").type == pa.int64()
    with pytest.raises(ConfigError, match="DuckDB refused"):
        export(db, query="SELECT sum(9223372036854775807) + 5 AS s", out=tmp_path / "o.parquet")


def test_intervals_read_as_iso_8601_durations(db: Path, tmp_path: Path) -> None:
    q = "SELECT INTERVAL 1 DAY AS a, INTERVAL '1 month 2 days 3.5 seconds' AS b"
    result = export(db, query=q, out=tmp_path / "iv.csv")
    assert result.path.read_text().splitlines()[1] == '"P0M1DT0S","P1M2DT3.5S"'
