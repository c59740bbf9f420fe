"""A books file that does not read as the mapping expects says what is probably wrong: the
delimiter to set, or which sheet of a workbook was read and which others it has."""

from __future__ import annotations

from pathlib import Path

import pytest
import xlsxwriter

from recon.config.settings import settings_from
from recon.errors import ConfigError
from recon.ledger.loading import validate_books

HEADER = ["reference", "order_id", "amount_minor", "currency", "status", "created_at"]


def test_a_semicolon_file_read_with_commas_suggests_the_delimiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "orders.csv").write_text(
        ";".join(HEADER) + "\nORD-1;1;1250;EUR;paid;2026-11-20 10:00:00\n"
    )
    with pytest.raises(ConfigError) as err:
        validate_books(settings_from(ledger_orders="orders.csv"))
    assert 'the file looks ;-delimited: set delimiter = ";" in [ledger.orders]' in str(err.value)


def test_a_workbook_whose_first_sheet_is_notes_names_the_sheet_read_and_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    book = xlsxwriter.Workbook(str(tmp_path / "orders.xlsx"))
    book.add_worksheet("Notes").write_row(0, 0, ["Exported from the shop on 2026-11-20"])
    orders = book.add_worksheet("Orders")
    orders.write_row(0, 0, HEADER)
    orders.write_row(1, 0, ["ORD-1", "1", "1250", "EUR", "paid", "2026-11-20 10:00:00"])
    book.add_worksheet("Totals")
    book.close()
    with pytest.raises(ConfigError) as err:
        validate_books(settings_from(ledger_orders="orders.xlsx"))
    text = str(err.value)
    assert "read sheet 'Notes'; its other sheets: Orders, Totals" in text
    assert 'name one with sheet = "…" in [ledger.orders]' in text
