"""A workbook's sheets: `sheet = "*"` reads every sheet with the input's columns as one table;
with no `sheet` setting, a workbook of several sheets reads the first and names the others
(run log, ledger_loads, the report's inputs, summary.json) instead of saying nothing."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
import xlsxwriter

from recon.config.settings import settings_from
from recon.errors import ConfigError
from recon.ledger.loading import load_books, validate_books
from recon.ledger.sources import unread_sheets
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import make_books, write_books

from .support import RESOURCES, load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
COLUMNS = ["reference", "order_id", "amount_minor", "currency", "status", "created_at"]


def _workbook(path: Path, sheets: dict[str, pl.DataFrame]) -> None:
    book = xlsxwriter.Workbook(str(path))
    for name, frame in sheets.items():
        sheet = book.add_worksheet(name)
        for c, column in enumerate(frame.columns):
            sheet.write(0, c, column)
            for r, value in enumerate(frame[column].to_list(), start=1):
                sheet.write(r, c, value)
    book.close()


@pytest.fixture
def orders(tmp_path: Path) -> tuple[Dataset, pl.DataFrame]:
    dataset = Dataset(7, 500, anchor=ANCHOR)
    paths = write_books(make_books(dataset), tmp_path / "books", formats=("csv",))
    return dataset, pl.read_csv(paths["orders"][0], infer_schema=False).select(COLUMNS)


def test_every_sheet_as_one_table_and_unread_sheets_named(
    tmp_path: Path, orders: tuple[Dataset, pl.DataFrame], caplog: pytest.LogCaptureFixture
) -> None:
    dataset, frame = orders
    half = frame.height // 2
    book = tmp_path / "orders.xlsx"
    notes = pl.DataFrame({"remark": ["exported by the shop"]})
    _workbook(
        book, {"Jan": frame.head(half), "Feb": frame.tail(frame.height - half), "Notes": notes}
    )
    db = tmp_path / "recon.duckdb"
    con = warehouse(db)
    at = ANCHOR + timedelta(hours=12)
    load_dataset(con, tmp_path, dataset, at, resources=RESOURCES)

    first_only = settings_from(db=str(db), ledger_orders=str(book))
    (source,) = validate_books(first_only)
    assert unread_sheets(source) == ["orders.xlsx[Feb]", "orders.xlsx[Notes]"]
    with caplog.at_level(logging.WARNING, logger="recon"):
        (load,) = load_books(con, first_only, "20261120T120000Z-000001").inputs
    assert load.unread_sheets == ("orders.xlsx[Feb]", "orders.xlsx[Notes]")
    assert "sheets not read: orders.xlsx[Feb], orders.xlsx[Notes]" in caplog.text
    assert con.execute("SELECT unread_sheets FROM ledger_loads").fetchone() == (
        "orders.xlsx[Feb], orders.xlsx[Notes]",
    )

    every = settings_from(db=str(db), ledger={"orders": {"sheet": "*"}}, ledger_orders=str(book))
    (source,) = validate_books(every)
    assert unread_sheets(source) == ["orders.xlsx[Notes]"]  # no orders' columns there
    (load,) = load_books(con, every, "20261120T120000Z-000001").inputs
    assert load.rows_read == frame.height  # every row of both sheets
    sources = dict(
        con.execute("SELECT source, count(*) FROM ledger_orders GROUP BY ALL").fetchall()
    )
    assert set(sources) == {f"{book}[Jan]", f"{book}[Feb]"}
    assert sum(sources.values()) + load.rejects == frame.height
    con.close()


def test_a_workbook_with_no_sheet_holding_the_columns_stops_the_run(tmp_path: Path) -> None:
    book = tmp_path / "orders.xlsx"
    _workbook(book, {"Notes": pl.DataFrame({"remark": ["nothing here"]})})
    settings = settings_from(ledger={"orders": {"sheet": "*"}}, ledger_orders=str(book))
    with pytest.raises(ConfigError, match=r"orders.xlsx\[Notes\] has no column 'amount_minor'"):
        validate_books(settings)
    _ = duckdb  # the module is the tests' usual companion
