"""The expected settlement, exactly as the contract says, per currency exponent (JPY 0, BHD
3): settled statuses only, a weekend payment in the next business day, refunds netted by
their own currency and day (failed ones not), fees per payment round-half-even in integers,
pay dates in business days with a country's holidays; then ties proposed, never picked."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.bank.loading import load_bank
from recon.config.settings import settings_from
from tests.ledger.support import RUN, land_and_load, warehouse

FEES = {
    "JPY": {"fee_bps": 360, "fee_fixed_minor": 0},
    "BHD": {"fee_bps": 25, "fee_fixed_minor": 100},
}


def _pay(
    pid: str, amount: int, currency: str, at: str, status: str = "confirmed"
) -> dict[str, Any]:
    return {
        "id": pid,
        "amountMinor": amount,
        "currency": currency,
        "status": status,
        "reference": f"ORD-{pid}",
        "createdAt": at,
    }


def _refund(rid: str, pid: str, amount: int, currency: str, at: str, status: str) -> dict[str, Any]:
    return {
        "id": rid,
        "paymentId": pid,
        "amount": {"amountMinor": amount, "currency": currency},
        "status": status,
        "createdAt": at,
    }


PAYMENTS = [
    _pay("p1", 10_001, "JPY", "2026-11-13T10:00:00Z"),  # Friday
    _pay("p2", 5_000, "JPY", "2026-11-14T23:59:59Z"),  # Saturday: Monday's
    _pay("p3", 7_777, "JPY", "2026-11-16T08:00:00Z", "cancelled"),  # not settled
    _pay("b1", 200, "BHD", "2026-11-16T01:00:00Z"),  # fee 0.5 -> 0 (even) + 100
    _pay("b2", 600, "BHD", "2026-11-16T02:00:00Z"),  # 1.5 -> 2 + 100
    _pay("b3", 1_000, "BHD", "2026-11-16T03:00:00Z", "partially_refunded"),  # 2.5 -> 2 + 100
    _pay("b4", 1_400, "BHD", "2026-11-16T04:00:00Z", "Refunded"),  # 3.5 -> 4 + 100
    _pay("j9", 20_000, "JPY", "2026-11-24T12:00:00Z"),  # Tuesday before Thanksgiving
]
REFUNDS = [
    _refund("r1", "b3", 300, "BHD", "2026-11-16T09:00:00Z", "succeeded"),
    _refund("r2", "b4", 50, "BHD", "2026-11-16T10:00:00Z", "failed"),  # not counted
    _refund("r3", "b4", 1_000, "JPY", "2026-11-15T10:00:00Z", "pending"),  # its own currency
]


def _warehouse(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = warehouse(tmp_path / "recon.duckdb")
    land_and_load(
        con,
        tmp_path,
        RUN,
        datetime(2026, 12, 1, tzinfo=UTC),
        {"payments": PAYMENTS, "refunds": REFUNDS},
    )
    return con


def _statement(tmp_path: Path, rows: list[str]) -> str:
    path = tmp_path / "bank-test.csv"
    path.write_text(
        "booking_date,value_date,amount,currency,counterparty,remittance\n"
        + "\n".join(rows)
        + "\n2026-11-30,2026-11-30,-1,JPY,Landlord,rent\n"
    )
    return str(path)


def _settlements(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[Any, ...]]:
    rows = con.execute(
        "SELECT settlement_id, payments, gross_minor, refunds_minor, fees_minor, net_minor, "
        "pay_date, state FROM bank_settlements"
    ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


@pytest.mark.parametrize(("calendar", "thanksgiving_pay"), [(None, 26), ("US", 27)])
def test_settlements_per_currency_exponent_exact(
    tmp_path: Path, calendar: str | None, thanksgiving_pay: int
) -> None:
    con = _warehouse(tmp_path)
    rows = [
        "2026-11-17,2026-11-17,9641,JPY,SANDBOX PAYMENTS KK,payout",  # 10001 - 360
        "2026-11-18,2026-11-18,3820,JPY,SANDBOX PAYMENTS KK,payout",  # 5000 - 1000 - 180
        "2026-11-18,2026-11-18,2.492,BHD,Sandbox Payments WLL,payout",  # 3200 - 300 - 408
        f"2026-11-{thanksgiving_pay},2026-11-{thanksgiving_pay},19280,JPY,SANDBOX PAYMENTS KK,x",
        "2026-11-20,2026-11-20,500,JPY,JANE DOE,sandbox payments refund to me",
    ]
    bank = {"fees": FEES, "calendar": calendar}
    settings = settings_from(
        bank_statements=_statement(tmp_path, rows),
        bank_provider_match="sandbox payments",
        bank=bank,
    )
    loaded = load_bank(con, settings, RUN)
    assert (loaded.statements, loaded.lines, loaded.provider_lines) == (2, 6, 5)
    got = _settlements(con)
    assert got["JPY:2026-11-13"] == (1, 10_001, 0, 360, 9_641, date(2026, 11, 17), "received")
    assert got["JPY:2026-11-16"] == (1, 5_000, 1_000, 180, 3_820, date(2026, 11, 18), "received")
    assert got["BHD:2026-11-16"] == (4, 3_200, 300, 408, 2_492, date(2026, 11, 18), "received")
    assert got["JPY:2026-11-24"][4:] == (19_280, date(2026, 11, thanksgiving_pay), "received")
    states = dict(
        con.execute(
            "SELECT file_name || ':' || line_no, match_state FROM bank_lines "
            "WHERE match_state IS NOT NULL"
        ).fetchall()
    )
    assert states["bank-test.csv:6"] == "unexpected"  # the provider regex matched a remittance
    assert sorted(states.values()).count("received") == 4
    con.close()


def test_fees_unknown_match_within_tolerance_bps(tmp_path: Path) -> None:
    con = _warehouse(tmp_path)
    rows = ["2026-11-17,2026-11-17,9700,JPY,SANDBOX PAYMENTS KK,payout"]  # 10001 less ~3%
    settings = settings_from(
        bank_statements=_statement(tmp_path, rows),
        bank_provider_match="sandbox",
        bank={"fees": "unknown", "tolerance_bps": 400},
    )
    load_bank(con, settings, RUN)
    row = con.execute(
        "SELECT fees_minor, net_minor, tolerance_minor, state, difference_minor "
        "FROM bank_settlements WHERE settlement_id = 'JPY:2026-11-13'"
    ).fetchone()
    assert row == (None, 10_001, 400, "received", -301)
    con.close()


def test_two_credits_equally_good_are_a_tie_never_picked(tmp_path: Path) -> None:
    con = _warehouse(tmp_path)
    rows = [
        "2026-11-17,2026-11-17,9641,JPY,SANDBOX PAYMENTS KK,payout a",
        "2026-11-18,2026-11-18,9641,JPY,SANDBOX PAYMENTS KK,payout b",
    ]
    settings = settings_from(
        bank_statements=_statement(tmp_path, rows),
        bank_provider_match="sandbox",
        bank={"fees": FEES},
    )
    load_bank(con, settings, RUN)
    row = con.execute(
        "SELECT state, credit, candidates FROM bank_settlements "
        "WHERE settlement_id = 'JPY:2026-11-13'"
    ).fetchone()
    assert row is not None
    assert (row[0], row[1]) == ("ambiguous", None)
    assert "bank-test.csv:2" in row[2]
    assert "bank-test.csv:3" in row[2]
    states = con.execute(
        "SELECT DISTINCT match_state FROM bank_lines WHERE amount_minor = 9641"
    ).fetchall()
    assert states == [("candidate",)]
    con.close()


def _mt940_day(day: str, opening: int, lines: list[tuple[int, str]]) -> str:
    closing = opening + sum(a for a, _ in lines)
    out = [f":20:S{day}", ":25:JP-ACC-1", f":60F:C{day}JPY{opening},"]
    for amount, text in lines:
        mark = "C" if amount >= 0 else "D"
        out += [f":61:{day}{mark}{abs(amount)},NTRFREF{day}", f":86:{text}"]
    return "\n".join([*out, f":62F:C{day}JPY{closing},", "-"])


def test_a_balance_break_is_a_gap_and_its_span_is_not_evaluated(tmp_path: Path) -> None:
    con = _warehouse(tmp_path)
    days = [
        _mt940_day("261116", 1_000, [(50, "rent back")]),
        _mt940_day("261117", 1_000, []),  # opens at 1,000: the 16th closed at 1,050
        _mt940_day("261118", 1_000, [(3_820, "SANDBOX PAYMENTS KK payout")]),
        _mt940_day("261120", 4_820, [(5, "interest")]),  # no statement on the 19th
    ]
    path = tmp_path / "bank-jpy.sta"
    path.write_text("\n".join(days) + "\n")
    settings = settings_from(
        bank_statements=str(path), bank_provider_match="sandbox", bank={"fees": FEES}
    )
    load_bank(con, settings, RUN)
    gaps = con.execute(
        "SELECT currency, first_missing, span_from, span_to, kind, difference_minor "
        "FROM bank_gaps ORDER BY first_missing"
    ).fetchall()
    assert gaps == [
        ("JPY", date(2026, 11, 17), date(2026, 11, 17), date(2026, 11, 17), "balance_break", -50),
        ("JPY", date(2026, 11, 19), date(2026, 11, 19), date(2026, 11, 20), "missing_day", 0),
    ]
    got = _settlements(con)
    assert got["JPY:2026-11-13"][-1] == "not_evaluated"  # due the 17th: in the span
    assert got["JPY:2026-11-16"][-1] == "received"
