"""Case and spelling: currency codes are upper-cased and status values lower-cased on load
(Column.read, recon.warehouse.catalogue_tables), the value as sent stays in `raw`, and a value that
is still
unknown after that is a finding."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.checks import CheckParams, run_checks

from .conftest import LandNight

PAY = {
    "id": "pay_1",
    "amountMinor": 1000,
    "currency": "eur",
    "status": "Refunded",
    "reference": "ORD-1",
    "createdAt": "2026-11-10T10:00:00Z",
}


def _refund(rid: str, amount: int, currency: str, status: str) -> dict[str, Any]:
    return {
        "id": rid,
        "paymentId": "pay_1",
        "amount": {"amountMinor": amount, "currency": currency},
        "status": status,
        "createdAt": "2026-11-11T10:00:00Z",
    }


def _check(tmp_path: Path, run_id: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    run_checks(
        con,
        run_id=run_id,
        as_of=datetime(2026, 11, 20, 2, tzinfo=UTC),
        params=CheckParams(),
    )
    return con


def _found(con: duckdb.DuckDBPyConnection, run_id: str) -> set[tuple[str, str, str]]:
    return {
        (r[0], r[1], r[2])
        for r in con.execute(
            "SELECT check_name, entity_id, issue_type FROM findings "
            "WHERE run_id = ? AND state <> 'resolved' AND check_name NOT IN "
            "('open_invoices', 'refund_in_flight')",
            [run_id],
        ).fetchall()
    }


def test_codes_and_statuses_are_normalised_and_the_raw_value_kept(
    tmp_path: Path, land_night: LandNight
) -> None:
    run_id, _ = land_night(
        {
            "payments": [PAY],
            "refunds": [_refund("re_1", 600, "Eur", "SUCCEEDED")],
            "disputes": [
                {
                    "id": "dp_1",
                    "paymentId": "pay_1",
                    "status": "Needs_Response",
                    "amount": {"amountMinor": 5, "currency": "gbp"},
                }
            ],
            "invoices": [
                {
                    "id": "in_1",
                    "customerId": "cus_1",
                    "status": "OPEN",
                    "amountDue": {"amountMinor": 5, "currency": "jpy"},
                }
            ],
            "payment_intents": [
                {"id": "pi_1", "status": "Succeeded", "amount": 5, "currency": "usd"}
            ],
            "subscriptions": [{"id": "sub_1", "customerId": "cus_1", "status": "Active"}],
        }
    )
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute(
        "SELECT currency, status, raw->>'$.currency', raw->>'$.status' FROM payments"
    ).fetchone() == (
        "EUR",
        "refunded",
        "eur",
        "Refunded",
    )
    assert con.execute("SELECT currency, status FROM refunds").fetchone() == ("EUR", "succeeded")
    assert con.execute("SELECT currency, status FROM disputes").fetchone() == (
        "GBP",
        "needs_response",
    )
    assert con.execute("SELECT currency, status FROM invoices").fetchone() == ("JPY", "open")
    assert con.execute("SELECT currency, status FROM payment_intents").fetchone() == (
        "USD",
        "succeeded",
    )
    assert con.execute("SELECT status FROM subscriptions").fetchone() == ("active",)
    assert con.execute(
        "SELECT status, currency FROM record_versions WHERE entity = 'payments'"
    ).fetchone() == ("refunded", "EUR")
    con.close()
    # 'Refunded' no longer escapes the refund checks; 'eur' no longer floods them.
    con = _check(tmp_path, run_id)
    assert _found(con, run_id) == {
        ("refunded_amount_mismatch", "pay_1", "refunded_short"),
        ("dispute_on_refunded_payment", "dp_1", "dispute_on_refunded_payment"),
    }
    con.close()


def test_an_unknown_value_is_still_a_finding(tmp_path: Path, land_night: LandNight) -> None:
    run_id, _ = land_night(
        {
            "payments": [{**PAY, "currency": "euro", "status": "Settled"}],
            "refunds": [_refund("re_1", 1000, "EURO", "Succeeded")],
        }
    )
    con = _check(tmp_path, run_id)
    assert _found(con, run_id) == {
        ("impossible_amounts", "pay_1", "invalid_currency"),
        ("impossible_amounts", "re_1", "invalid_currency"),
        ("unknown_status", "pay_1", "unknown_status"),
    }
    detail = con.execute(
        "SELECT detail FROM findings WHERE run_id = ? AND check_name = 'unknown_status'", [run_id]
    ).fetchone()
    assert detail == ("payment status 'settled' is not a known value",)
    con.close()


def test_a_warehouse_loaded_before_the_change_is_normalised_on_open(
    tmp_path: Path, land_night: LandNight
) -> None:
    land_night({"payments": [PAY]})
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    # As an earlier version loaded it: the values as sent, and no migration recorded (the
    # warehouses of that version had no schema_migrations).
    con.execute("UPDATE payments SET currency = 'eur', status = 'Refunded'")
    con.execute("DROP TABLE schema_migrations")
    con.close()
    land_night({"payments": [PAY]})  # the same record, unchanged: not merged again
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("SELECT currency, status FROM payments").fetchone() == ("EUR", "refunded")
    con.close()
