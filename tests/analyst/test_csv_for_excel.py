"""CSV for Excel (issue 42, point 3): a UTF-8 byte-order mark on every CSV file, amounts in
currency units with the currency's own decimals, and `amount` beside every `amount_minor`."""

from __future__ import annotations

import csv
import io
import os
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.output.spreadsheet import BOM, major_text, write_csv

MONEY = pa.table(
    {
        "currency": ["EUR", "JPY", "BHD", "XYZ", "EUR"],
        "amount_minor": [55233, 59631, -1234, 5, None],
        "name": ["Müller €5", "b", "c", "d", "e"],
    }
)


def _rows(path: Path, delimiter: str = ",") -> list[list[str]]:
    data = path.read_bytes()
    assert data.startswith(BOM)
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig")), delimiter=delimiter))


@pytest.mark.parametrize("dialect", ["excel", "excel-eu"])
def test_both_dialects_write_a_byte_order_mark(tmp_path: Path, dialect: str) -> None:
    out = tmp_path / "t.csv"
    write_csv(MONEY, out, dialect=dialect)  # type: ignore[arg-type]
    assert out.read_bytes().startswith(BOM)
    assert "Müller €5" in out.read_bytes().decode("utf-8-sig")


def test_amounts_carry_the_currencys_own_decimals(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    write_csv(MONEY, out)
    rows = _rows(out)
    assert rows[0] == ["currency", "amount_minor", "amount", "name"]
    assert [r[2] for r in rows[1:]] == ["552.33", "59631", "-1.234", "", ""]
    # a negative amount is a number, not a neutralised formula
    assert "'-1.234" not in out.read_text(encoding="utf-8-sig")


def test_the_european_dialect_writes_the_amount_with_a_decimal_comma(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    write_csv(MONEY, out, dialect="excel-eu")
    assert [r[2] for r in _rows(out, ";")[1:]] == ["552,33", "59631", "-1,234", "", ""]


def test_a_decimal_amount_beside_its_minor_units_is_rewritten_with_its_decimals(
    tmp_path: Path,
) -> None:
    table = pa.table(
        {
            "amount_minor": [55233, 59631],
            "currency": ["EUR", "JPY"],
            "amount": pa.array([Decimal("552.3300"), Decimal("59631.0000")], pa.decimal128(38, 4)),
        }
    )
    out = tmp_path / "t.csv"
    write_csv(table, out)
    assert _rows(out)[1:] == [["55233", "EUR", "552.33"], ["59631", "JPY", "59631"]]


def test_major_text_is_exact() -> None:
    assert major_text(10**20 + 1, "EUR") == "1000000000000000000.01"
    assert major_text(-5, "EUR") == "-0.05"
    assert major_text(5, "XAU") is None


def test_recon_export_of_a_table_carries_the_amount_beside_amount_minor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE payments AS SELECT * FROM (VALUES ('pay_1', 55233, 'EUR'), "
        "('pay_2', 59631, 'JPY'), ('pay_3', 1234, 'BHD')) AS t(id, amount_minor, currency)"
    )
    con.close()
    out = tmp_path / "payments.csv"
    result = CliRunner().invoke(app, ["export", str(out), "--table", "payments", "--db", str(db)])
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert rows[0] == ["id", "amount_minor", "amount", "currency"]
    assert [r[2] for r in rows[1:]] == ["552.33", "59631", "1.234"]


def test_a_formula_behind_blanks_or_in_fullwidth_is_neutralised(tmp_path: Path) -> None:
    table = pa.table({"t": [" =1+1", "\u3000=HYPERLINK()", "\uff1dSUM(A1)", "  @cmd", "a=b"]})
    out = tmp_path / "t.csv"
    write_csv(table, out)
    assert [r[0] for r in _rows(out)[1:]] == [
        "' =1+1",
        "'\u3000=HYPERLINK()",
        "'\uff1dSUM(A1)",
        "'  @cmd",
        "a=b",
    ]
