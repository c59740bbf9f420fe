"""Loading the books: exact amounts (never rounded), reasons for refused rows, the column
mapping, globs, and the preflight that stops a run before any request."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.config.settings import settings_from
from recon.errors import ConfigError
from recon.ledger.loading import load_books, validate_books

from .support import warehouse

AS_OF = datetime(2026, 11, 20, 12, tzinfo=UTC)
HEADER = "reference,order_id,amount,currency,status,created_at\n"


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    c = warehouse(tmp_path / "recon.duckdb")
    c.execute("INSERT INTO runs (run_id, started_at, status) VALUES ('r1', ?, 'complete')", [AS_OF])
    return c


def _orders(con: duckdb.DuckDBPyConnection, path: Path, **mapping: Any) -> dict[str, Any]:
    settings = settings_from(ledger_orders=str(path), ledger={"orders": mapping})
    load_books(con, settings, "r1")
    loaded = dict(con.execute("SELECT reference, amount_minor FROM ledger_orders").fetchall())
    rejects = dict(con.execute("SELECT row_number, reason FROM ledger_rejects").fetchall())
    return {"loaded": loaded, "rejects": rejects}


def test_major_units_convert_exactly_by_the_currency_exponent(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        HEADER
        + "A,1,12.50,EUR,confirmed,2026-11-01\n"
        + "B,2,1000,JPY,confirmed,2026-11-01\n"
        + "C,3,1.234,BHD,confirmed,2026-11-01\n"
        + "D,4,12.345,EUR,confirmed,2026-11-01\n"
        + "E,5,0.30000000000000004,USD,confirmed,2026-11-01\n"
        + "F,6,12.,usd,confirmed,2026-11-01\n"
        + "G,7,92233720368547758.08,EUR,confirmed,2026-11-01\n"
        + "H,8,-1.00,EUR,confirmed,2026-11-01\n"
        + "I,9,1.5,JPY,confirmed,2026-11-01\n"
    )
    got = _orders(con, books, amounts="major", amount="amount")
    assert got["loaded"] == {"A": 1250, "B": 1000, "C": 1234, "F": 1200}
    assert got["rejects"] == {
        5: "amount '12.345' has 3 decimals; EUR has 2 (never rounded)",
        6: "amount '0.30000000000000004' has 17 decimals; USD has 2 (never rounded)",
        8: "amount '92233720368547758.08' is too large",
        9: "amount '-1.00' is negative",
        10: "amount '1.5' has 1 decimals; JPY has 0 (never rounded)",
    }


def test_minor_units_must_be_whole(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        HEADER
        + "A,1,1250,EUR,confirmed,2026-11-01\n"
        + "B,2,1250.0,EUR,confirmed,2026-11-01\n"
        + "C,3,12.5,EUR,confirmed,2026-11-01\n"
    )
    got = _orders(con, books, amount="amount")
    assert got["loaded"] == {"A": 1250, "B": 1250}
    assert got["rejects"] == {4: "amount '12.5' is not a whole number of minor units"}


def test_a_line_that_is_no_row_is_refused_and_its_neighbours_load(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        HEADER
        + "A,1,1250,EUR,confirmed,2026-11-01\n"
        + "D,4,12,5,EUR,confirmed,2026-11-01\n"  # an unquoted decimal comma: one field too many
        + 'B,2,"1250",EUR,confirmed,2026-11-01\n'
        + "C,3,7\n"  # cut short
        + "E,5,300,EUR,confirmed,2026-11-02\n"
    )
    got = _orders(con, books, amount="amount")
    assert got["loaded"] == {"A": 1250, "B": 1250, "E": 300}
    assert set(got["rejects"]) == {3, 5}
    assert got["rejects"][3].startswith("line not read as a row: Expected Number of Columns: 6")
    assert got["rejects"][5].startswith("line not read as a row: Expected Number of Columns: 6")
    row = con.execute("SELECT source FROM ledger_rejects WHERE row_number = 3").fetchone()
    assert row is not None
    assert row[0] == str(books)


def test_every_problem_of_a_row_is_named(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        HEADER
        + ",1,abc,EURO,paid,yesterday\n"
        + "A,2,100,XAU,confirmed,2026-11-01\n"
        + "B,3,100,EUR,confirmed,2026-11-01\n"
        + "B,4,200,EUR,confirmed,2026-11-02\n"
    )
    got = _orders(con, books, amount="amount")
    assert got["loaded"] == {"B": 100}
    assert got["rejects"][2] == (  # no reference, but its order_id 1 names it
        "amount 'abc' is not a number; currency 'EURO' is not an ISO 4217 code; "
        "status 'paid' is not one of created, pending, confirmed, partially_refunded, refunded, "
        "cancelled, expired (map it in [ledger.orders] status_map); "
        "created_at 'yesterday' is not a date or date-time"
    )
    assert got["rejects"][3] == "currency XAU has no minor unit"
    assert got["rejects"][5] == f"duplicate reference B (first at {books} row 4)"
    raw = con.execute("SELECT raw FROM ledger_rejects WHERE row_number = 2").fetchone()
    assert raw is not None
    assert '"amount":"abc"' in raw[0].replace(" ", "")


def test_a_mapping_renames_columns_and_maps_statuses(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        "Order ref;Total;Ccy;State;Placed\n"
        "A;12,50;EUR;Paid;2026-11-01\n"
        "B;3;JPY;Refunded;2026-11-01\n"
    )
    mapping = {
        "reference": "Order ref",
        "amount": "Total",
        "currency": "Ccy",
        "status": "State",
        "created_at": "Placed",
        "amounts": "major",
        "delimiter": ";",
        "decimal": ",",
        "status_map": {"Paid": "confirmed"},
    }
    got = _orders(con, books, **mapping)
    assert got["loaded"] == {"A": 1250, "B": 3}
    assert con.execute(
        "SELECT status, books_status, order_id FROM ledger_orders ORDER BY reference"
    ).fetchall() == [("confirmed", "Paid", None), ("refunded", "Refunded", None)]


def test_a_glob_of_files_is_one_table(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    (tmp_path / "books").mkdir()
    (tmp_path / "books" / "2026-10.csv").write_text(HEADER + "A,1,100,EUR,confirmed,2026-10-01\n")
    (tmp_path / "books" / "2026-11.csv").write_text(
        HEADER + "B,2,200,EUR,confirmed,2026-11-01\nA,3,100,EUR,confirmed,2026-11-01\n"
    )
    got = _orders(con, tmp_path / "books" / "*.csv", amount="amount")
    assert got["loaded"] == {"A": 100, "B": 200}
    first = tmp_path / "books" / "2026-10.csv"
    assert got["rejects"] == {3: f"duplicate reference A (first at {first} row 2)"}
    scan = con.execute(
        "SELECT status, records, rejects FROM resource_scans WHERE resource = 'ledger_orders'"
    ).fetchone()
    assert scan == ("complete", 2, 1)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"ledger_orders": "nope.csv"}, "RECON_LEDGER_ORDERS: no such file: nope.csv"),
        ({"ledger_orders": "none-*.csv"}, "RECON_LEDGER_ORDERS: no file matches 'none-*.csv'"),
        ({"ledger_orders": "orders.txt"}, "is not a .csv, .parquet, .xlsx file"),
        ({"ledger_orders": "orders.csv"}, "has no column 'status' (the orders' status)"),
        (
            {"ledger": {"refunds": {"query": "SELECT 1"}}},
            "[ledger.refunds] url: is not set (nor RECON_LEDGER_DATABASE_URL) for the query",
        ),
        (
            {"ledger": {"refunds": {"query": "SELECT 1", "url": "mysql://u:pw@h/db"}}},
            "[ledger.refunds] url: is set but is not a postgresql:// URL",
        ),
    ],
)
def test_the_preflight_names_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, values: dict[str, Any], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "orders.txt").write_text("x")
    (tmp_path / "orders.csv").write_text("reference,amount_minor,currency,created_at\n")
    with pytest.raises(ConfigError) as err:
        validate_books(settings_from(**values))
    assert message in str(err.value)
    assert "pw" not in str(err.value)


def test_a_database_that_refuses_the_password_is_named_without_it(tmp_path: Path) -> None:
    url = "postgresql://shop:hunter2-secret@127.0.0.1:1/books"
    settings = settings_from(ledger={"orders": {"query": "SELECT 1", "url": url}})
    with pytest.raises(ConfigError) as err:
        validate_books(settings)
    text = str(err.value)
    assert text.startswith("[ledger.orders] query: cannot connect to postgresql://***@127.0.0.1:1/")
    assert "hunter2" not in text


def test_nightly_stops_before_any_request_on_a_missing_books_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "orders.csv").write_text("reference,amount_minor,currency,created_at\n")
    monkeypatch.setenv("RECON_LEDGER_ORDERS", "orders.csv")
    # Port 9 on loopback answers nothing: had a request been made, the run would abort (1).
    result = CliRunner().invoke(app, ["nightly", "--base-url", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [
        "recon: bad setting RECON_LEDGER_ORDERS: orders.csv has no column 'status' "
        "(the orders' status); columns: reference, amount_minor, currency, created_at"
    ]
    assert not (tmp_path / "data" / "landing").exists() or not any(
        (tmp_path / "data" / "landing").iterdir()
    )
