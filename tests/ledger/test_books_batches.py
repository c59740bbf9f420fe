"""A books CSV is read a batch of rows at a time (issue 38: a million-row file read whole held
~0.5 GB beside the night's DuckDB): the same orders, line numbers and refused lines as
read whole, shown with batches of two rows."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from recon.config.settings import settings_from
from recon.ledger.loading import load_books
from recon.ledger.sources import read_source, resolve_sources

from .support import warehouse

AS_OF = datetime(2026, 11, 20, 12, tzinfo=UTC)
LINES = [
    "reference,order_id,amount_minor,currency,status,created_at",
    "A,1,100,EUR,confirmed,2026-11-01",
    "B,2,200,EUR,confirmed,2026-11-01",
    "C,3,300,EUR,confirmed,2026-11-01,surplus",  # line 4: more fields than the header
    "D,4,400,EUR,confirmed,2026-11-01",
    "A,5,500,EUR,confirmed,2026-11-01",  # line 6: a duplicate of line 2's reference
    "E,6,600,EUR,confirmed,2026-11-01",
]


def _load(tmp_path: Path, name: str) -> dict[str, Any]:
    books = tmp_path / "orders.csv"
    books.write_text("\n".join(LINES) + "\n")
    settings = settings_from(ledger_orders=str(books))
    parts = [t.num_rows for _, t in read_source(resolve_sources(settings)[0])]
    con = warehouse(tmp_path / f"{name}.duckdb")
    con.execute(
        "INSERT INTO runs (run_id, started_at, status) VALUES ('r1', ?, 'complete')", [AS_OF]
    )
    load_books(con, settings, "r1")
    out = {
        "parts": parts,
        "loaded": con.execute(
            "SELECT reference, amount_minor, row_number FROM ledger_orders ORDER BY ALL"
        ).fetchall(),
        "rejects": con.execute(
            "SELECT row_number, reason FROM ledger_rejects ORDER BY ALL"
        ).fetchall(),
    }
    con.close()
    return out


def test_batches_of_rows_land_as_the_whole_file_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _load(tmp_path, "whole")
    monkeypatch.setattr("recon.ledger.sources.CSV_BATCH_ROWS", 2)
    batched = _load(tmp_path, "batched")
    assert whole["parts"] == [5, 1]  # the rows, then the line that is no row
    assert batched["parts"] == [2, 2, 1, 1]  # two rows at a time
    assert batched["loaded"] == whole["loaded"]
    assert batched["rejects"] == whole["rejects"]
    assert [r for _, _, r in whole["loaded"]] == [2, 3, 5, 7]  # the lines a spreadsheet shows
    assert [n for n, _ in whole["rejects"]] == [4, 6]
    assert "duplicate reference A (first at" in dict(whole["rejects"])[6]
    assert "row 2)" in dict(whole["rejects"])[6]
