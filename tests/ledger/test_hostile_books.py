"""Hostile books, round two (issue 38, point 4): a decimal-comma file with a '.' in an
amount, a mis-encoded line near the top, a file that grows while it is read."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.config.settings import settings_from
from recon.ledger.loading import load_books

from .support import warehouse

AS_OF = datetime(2026, 11, 20, 12, tzinfo=UTC)
HEADER = "reference;order_id;amount;currency;status;created_at\n"


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


def test_a_point_in_a_decimal_comma_file_is_refused_never_read_as_the_decimal_mark(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    books = tmp_path / "orders.csv"
    books.write_text(
        HEADER
        + "A;1;1,234;BHD;confirmed;2026-11-01\n"
        + "B;2;1.234;BHD;confirmed;2026-11-01\n"  # 1,234 BHD with a thousands point? refused
        + "C;3;12,50;EUR;confirmed;2026-11-01\n"
        + "D;4;1.234,56;EUR;confirmed;2026-11-01\n"
    )
    got = _orders(con, books, amounts="major", amount="amount", delimiter=";", decimal=",")
    assert got["loaded"] == {"A": 1234, "C": 1250}
    assert set(got["rejects"]) == {3, 5}
    assert "decimal mark is ','" in got["rejects"][3]
    assert "'1.234'" in got["rejects"][3]


def test_one_mis_encoded_line_near_the_top_is_refused_not_the_night(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    books = tmp_path / "orders.csv"
    lines = [
        b"reference,order_id,amount,currency,status,created_at\n",
        b"A,1,1250,EUR,confirmed,2026-11-01\n",
        b"M\xfcller,2,300,EUR,confirmed,2026-11-01\n",  # Latin-1, not UTF-8
        *[f"R{i},{i + 3},{i},EUR,confirmed,2026-11-01\n".encode() for i in range(1, 50)],
    ]
    books.write_bytes(b"".join(lines))
    got = _orders(con, books, amounts="minor", amount="amount")
    assert got["loaded"]["A"] == 1250
    assert len(got["loaded"]) == 50  # A and R1..R49
    assert list(got["rejects"]) == [3]
    assert "this line is not UTF-8" in got["rejects"][3]


def test_a_books_file_growing_while_it_is_read_is_read_from_a_snapshot(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    books = tmp_path / "orders.csv"
    body = "".join(f"R{i},{i},{i},EUR,confirmed,2026-11-01\n" for i in range(1, 20_000))
    books.write_text("reference,order_id,amount,currency,status,created_at\n" + body)
    stop = threading.Event()

    def grow() -> None:  # the merchant's export still appending, a line cut mid-way each time
        n = 20_000
        with books.open("a") as fh:
            while not stop.is_set():
                fh.write(f"R{n},{n},{n},EUR,conf")
                fh.flush()
                fh.write("irmed,2026-11-01\n")
                fh.flush()
                n += 1
                time.sleep(0.0005)

    writer = threading.Thread(target=grow, daemon=True)
    writer.start()
    try:
        got = _orders(con, books, amounts="minor", amount="amount")
    finally:
        stop.set()
        writer.join()
    # read from one stable snapshot: every full line before it, nothing cut short refused
    assert len(got["loaded"]) >= 19_999
    assert all(r.startswith("R") for r in got["loaded"])
    assert got["rejects"] == {}


def test_a_line_being_written_while_the_books_are_copied_is_not_read(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recon.ledger.sources as sources

    books = tmp_path / "orders.csv"
    books.write_text(
        "reference,order_id,amount,currency,status,created_at\n"
        "A,1,1250,EUR,confirmed,2026-11-01\n"
        "B,2,300,EUR,conf"  # the export is writing this line right now
    )
    copy_prefix = sources._copy_prefix

    def appending(source: Path, target: Path, size: int) -> None:
        copy_prefix(source, target, size)
        with books.open("a") as fh:  # ... and goes on while recon copies
            fh.write("irmed,2026-11-01\nC,3,7,EUR,confirmed,2026-11-01\n")

    monkeypatch.setattr(sources, "_copy_prefix", appending)
    got = _orders(con, books, amounts="minor", amount="amount")
    assert got["loaded"] == {"A": 1250}  # B is read tomorrow, whole; never half a line today
    assert got["rejects"] == {}
