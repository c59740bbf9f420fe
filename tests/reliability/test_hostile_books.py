"""Hostile books (issue 25, point 11): a 0-byte or fake .xlsx, a CSV naming a column twice,
a header with a quote in it. One line and exit 2 before any request, naming the file or the
column; a quoted header is mapped like any other.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.config.settings import load_settings
from recon.ledger.sources import read_source, resolve_sources

from .hostile import Hostile

pytestmark = [pytest.mark.integration]

HEADER = "reference,order_id,amount_minor,currency,status,created_at"
ROW = "ORD-1,O1,1250,EUR,paid,2026-11-01T10:00:00Z"


def _nightly(url: str, tmp_path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(
        app, ["nightly", "--base-url", url, "--db", str(tmp_path / "w.duckdb")]
    )
    return result.exit_code, [line for line in result.output.splitlines() if line.strip()]


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 not really a zip"], ids=["empty", "fake"])
def test_a_broken_xlsx_is_one_line_exit_2(
    content: bytes,
    hostile_server: Hostile,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    books = tmp_path / "orders.xlsx"
    books.write_bytes(content)
    monkeypatch.setenv("RECON_LEDGER_ORDERS", str(books))
    code, lines = _nightly(hostile_server.url, tmp_path)
    assert code == 2
    assert len(lines) == 1
    assert lines[0].startswith(f"recon: bad setting RECON_LEDGER_ORDERS: cannot read {books}")
    assert hostile_server.requests == []


def test_a_csv_naming_a_column_twice_is_refused_naming_it(
    hostile_server: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(f"{HEADER},amount_minor\n{ROW},999\n")
    monkeypatch.setenv("RECON_LEDGER_ORDERS", str(books))
    code, lines = _nightly(hostile_server.url, tmp_path)
    assert code == 2
    assert len(lines) == 1
    assert "the column 'amount_minor' appears twice in the header" in lines[0]
    assert hostile_server.requests == []


def test_a_header_with_a_quote_in_it_can_be_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        'Order ""ref"" ,order_id,amount_minor,currency,status,created_at\n'.replace(
            'Order ""ref"" ', '"Order ""ref"""'
        )
        + f"{ROW}\n"
    )
    (tmp_path / "recon.toml").write_text(
        f"[ledger.orders]\npath = '{books}'\nreference = 'Order \"ref\"'\n"
    )
    monkeypatch.chdir(tmp_path)
    (source,) = resolve_sources(load_settings())
    from recon.ledger.sources import check_columns

    check_columns(source)  # the preflight finds the column…
    ((_, table),) = list(read_source(source))  # …and the reader reads it
    assert table.column("reference").to_pylist() == ["ORD-1"]
