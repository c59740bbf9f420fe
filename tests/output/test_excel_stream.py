"""close.xlsx and `recon export … .xlsx` are written a row at a time (issue 38): xlsxwriter's
constant memory mode, from record batches taken one at a time, a sheet past Excel's rows
going on in `<name> (2)` — with the cells typed as before."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import openpyxl
import pyarrow as pa
import pytest

from recon.output.excel import Sheet, write_xlsx


def _table(n: int) -> pa.Table:
    return pa.table(
        {
            "finding_key": [f"k{i}" for i in range(n)],
            "currency": ["EUR", "JPY", "BHD", None][: min(n, 4)] + ["EUR"] * max(0, n - 4),
            "amount_minor": list(range(1, n + 1)),
            "at": pa.array(
                [datetime(2026, 10, 1, 2, i % 60, tzinfo=UTC) for i in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "ties": [i % 2 == 0 for i in range(n)],
        }
    )


class _Batches:
    """Rows given a batch at a time, and never whole (what recon.close.spool gives)."""

    def __init__(self, table: pa.Table) -> None:
        self.schema = table.schema
        self._table = table
        self.sizes: list[int | None] = []

    def to_batches(self, max_chunksize: int | None = None) -> Iterator[pa.RecordBatch]:
        self.sizes.append(max_chunksize)
        yield from self._table.to_batches(max_chunksize=2)


def test_rows_are_written_from_batches_in_constant_memory_with_typed_cells(
    tmp_path: Path,
) -> None:
    rows = _Batches(_table(5))
    target = tmp_path / "book.xlsx"
    assert write_xlsx([Sheet("Items", rows)], target) == {"Items": 5}
    assert rows.sizes  # read a batch at a time
    assert all(s is not None for s in rows.sizes)
    with zipfile.ZipFile(target) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode()
    assert 't="inlineStr"' in xml  # constant memory mode: strings written inline, row by row
    ws = openpyxl.load_workbook(target)["Items"]
    header = [c.value for c in ws[1]]
    assert header == ["finding_key", "currency", "amount", "at", "ties"]
    assert ws.auto_filter.ref == "A1:E6"
    assert ws.freeze_panes == "A2"
    cells = list(ws.iter_rows(min_row=2))
    amount = header.index("amount")
    assert [(c[amount].value, c[amount].number_format) for c in cells[:4]] == [
        (0.01, '#,##0.00 "EUR"'),
        (2, '#,##0 "JPY"'),
        (0.003, '#,##0.000 "BHD"'),
        (4, "#,##0"),  # no currency: minor units, as before
    ]
    at = cells[0][header.index("at")]
    assert (at.is_date, at.value) == (True, datetime(2026, 10, 1, 2, 0))  # UTC wall time
    assert [c[header.index("ties")].value for c in cells] == [True, False, True, False, True]


def test_a_sheet_past_excels_rows_goes_on_in_the_next_sheet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.output.excel.MAX_ROWS", 2)
    target = tmp_path / "book.xlsx"
    counts = write_xlsx([Sheet("Roll-forward items", _table(5)), Sheet("Cash", _table(1))], target)
    assert counts == {
        "Roll-forward items": 2,
        "Roll-forward items (2)": 2,
        "Roll-forward items (3)": 1,
        "Cash": 1,
    }
    wb = openpyxl.load_workbook(target)
    assert wb.sheetnames == list(counts)
    keys = []
    for name in list(counts)[:3]:
        values = list(wb[name].iter_rows(values_only=True))
        assert values[0][0] == "finding_key"  # each part has its header
        keys += [r[0] for r in values[1:]]
    assert keys == [f"k{i}" for i in range(5)]
