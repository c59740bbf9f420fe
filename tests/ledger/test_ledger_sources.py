"""Every books source gives the same matches: CSV, Parquet, .xlsx (number cells) and a SQL
query against a real PostgreSQL on 127.0.0.1 (amounts as NUMERIC major units there)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from recon.config.settings import load_settings, settings_from
from recon.ledger.loading import load_books
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import make_books, write_books

from . import postgres
from .support import RUN, ledger_findings, load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
AS_OF = ANCHOR + timedelta(hours=12)
SEED, PAYMENTS = 7, 2000

MATCHES = (
    "SELECT entity, entity_id, books_amount_minor, books_currency, books_status, payment_ids, "
    "provider_amount_minor, provider_currency, provider_status, kind, state "
    "FROM ledger_matches ORDER BY entity, entity_id"
)
REFUNDS = (
    "SELECT side, refund_key, books_amount_minor, books_currency, payment_id, resolution, "
    "provider_amount_minor, young FROM ledger_refund_matches ORDER BY side, refund_key"
)


def _reconcile(tmp_path: Path, name: str, settings: Any) -> dict[str, Any]:
    folder = tmp_path / name
    folder.mkdir()
    con = warehouse(folder / "recon.duckdb")
    try:
        load_dataset(con, folder, Dataset(SEED, PAYMENTS, anchor=ANCHOR), AS_OF)
        loaded = load_books(con, settings, RUN)
        got, _ = ledger_findings(con, RUN, AS_OF)
        return {
            "findings": got,
            "matches": con.execute(MATCHES).fetchall(),
            "refunds": con.execute(REFUNDS).fetchall(),
            "loaded": [(i.input, i.rows_loaded, i.rejects) for i in loaded.inputs],
            "rejects": con.execute(
                "SELECT input, row_number, reason FROM ledger_rejects ORDER BY ALL"
            ).fetchall(),
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def books_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("books")
    write_books(make_books(Dataset(SEED, PAYMENTS, anchor=ANCHOR)), folder)
    return folder


def _files(books_dir: Path, fmt: str) -> Any:
    return settings_from(
        **{f"ledger_{t}": str(books_dir / f"{t}.{fmt}") for t in ("orders", "refunds", "invoices")}
    )


@pytest.mark.slow  # three full reconciliations, one through an .xlsx
def test_parquet_and_excel_give_the_same_matches_as_csv(tmp_path: Path, books_dir: Path) -> None:
    csv = _reconcile(tmp_path, "csv", _files(books_dir, "csv"))
    assert csv["findings"]
    assert csv["matches"]
    assert csv["refunds"]
    assert [r[2] for r in csv["rejects"]][:2] == [
        "no reference and no order_id",
        "amount '12.5' is not a whole number of minor units",
    ]
    for fmt in ("parquet", "xlsx"):
        other = _reconcile(tmp_path, fmt, _files(books_dir, fmt))
        assert _without(other, "rejects") == _without(csv, "rejects"), fmt
        # a spreadsheet's row numbers count the header as row 1; Parquet's are record numbers
        offset = 0 if fmt == "xlsx" else 1
        assert other["rejects"] == [(i, row - offset, why) for i, row, why in csv["rejects"]]


def _without(result: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != key}


@pytest.mark.integration
@pytest.mark.database
def test_a_postgresql_query_gives_the_same_matches_as_csv(
    tmp_path: Path, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import adbc_driver_postgresql.dbapi as pg

    reason = postgres.install()
    if reason is not None:
        pytest.skip(f"!!! POSTGRESQL TEST SKIPPED: {reason} !!!")
    csv = _reconcile(tmp_path, "csv", _files(books_dir, "csv"))
    with postgres.server() as url:
        con = pg.connect(url)
        try:
            cur = con.cursor()
            for table in ("orders", "refunds", "invoices"):
                frame = pl.read_csv(books_dir / f"{table}.csv", infer_schema=False)
                cur.adbc_ingest(f"raw_{table}", frame.to_arrow(), mode="create")
            # The shop's own layout: its column names, amounts in major units as NUMERIC,
            # times as timestamptz.
            for statement in SHOP_SCHEMA.split(";"):
                if statement.strip():
                    cur.execute(statement)
            con.commit()
        finally:
            con.close()
        toml = tmp_path / "recon.toml"
        toml.write_text(SHOP_TOML)
        monkeypatch.setenv("RECON_CONFIG", str(toml))
        monkeypatch.setenv("RECON_LEDGER_DATABASE_URL", url)
        settings = load_settings()
        assert postgres.PASSWORD not in repr(settings)
        from_db = _reconcile(tmp_path, "postgres", settings)
    # the rejects differ only in where the row came from (row numbers are record numbers)
    assert _without(from_db, "rejects") == _without(csv, "rejects")
    # the same rows refused (the shop's table turned the malformed amount into NULL)
    assert [r[0] for r in from_db["rejects"]] == [r[0] for r in csv["rejects"]]
    stored = duckdb.connect(str(tmp_path / "postgres" / "recon.duckdb"), read_only=True)
    try:
        sources = [r[0] for r in stored.execute("SELECT source FROM ledger_loads").fetchall()]
        dumped = str(stored.execute("SELECT * FROM ledger_loads, resource_scans").fetchall())
    finally:
        stored.close()
    assert all(s.startswith("query on postgresql://***@127.0.0.1:") for s in sources)
    assert postgres.PASSWORD not in dumped


SHOP_SCHEMA = """
CREATE TABLE shop_orders AS
SELECT reference AS order_ref, order_id AS order_no, payment_reference, currency AS ccy,
       status AS state,
       created_at::timestamptz AS placed_at,
       CASE WHEN amount_minor ~ '^[0-9]+$'
            THEN (amount_minor::numeric / power(10, CASE currency WHEN 'JPY' THEN 0
                                                   WHEN 'BHD' THEN 3 ELSE 2 END))::numeric(20, 3)
       END::text AS total
FROM raw_orders
WHERE created_at IS NOT NULL;
CREATE TABLE shop_refunds AS SELECT * FROM raw_refunds;
CREATE TABLE shop_invoices AS SELECT * FROM raw_invoices;
"""

SHOP_TOML = """
[ledger.orders]
query = '''SELECT order_ref, order_no, payment_reference, total, ccy, state, placed_at
           FROM shop_orders'''
amounts = "major"
reference = "order_ref"
order_id = "order_no"
amount = "total"
currency = "ccy"
status = "state"
created_at = "placed_at"

[ledger.refunds]
query = "SELECT * FROM shop_refunds"

[ledger.invoices]
query = "SELECT * FROM shop_invoices"
"""
