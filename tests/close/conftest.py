"""A warehouse with nights on both sides of October 2026 whose findings open, move and
resolve inside and across the period's boundaries, with record versions and books."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from tests.ledger.support import warehouse


def at(day: str) -> datetime:
    return datetime.fromisoformat(f"{day}T02:00:00+00:00").astimezone(UTC)


# run id -> (start, status)
RUNS = {
    "20260930T020000Z-000001": (at("2026-09-30"), "complete"),  # the opening run
    "20261001T020000Z-000002": (at("2026-10-01"), "complete"),
    "20261015T020000Z-000003": (at("2026-10-15"), "complete"),
    "20261031T020000Z-000004": (at("2026-10-31"), "complete"),  # the cut-off run
    "20261101T020000Z-000005": (at("2026-11-01"), "complete"),  # after the period
}
S30, O01, O15, O31, N01 = RUNS
# finding key -> {run: (currency, amount)}: present = unresolved in that run
FINDINGS: dict[str, dict[str, tuple[str, int]]] = {
    # open throughout; its amount moves on the 15th
    "over_refunded:pay_a:over_refunded": {
        S30: ("EUR", 100),
        O01: ("EUR", 100),
        O15: ("EUR", 120),
        O31: ("EUR", 120),
        N01: ("EUR", 120),
    },
    # open at the start, resolved by the first night of the period
    "over_refunded:pay_b:over_refunded": {S30: ("EUR", 40)},
    # opens and resolves inside the period
    "ledger_amount_mismatch:ORD-C:provider_short": {O01: ("EUR", 75), O15: ("EUR", 75)},
    # opens inside, open at the end
    "ledger_amount_mismatch:ORD-D:provider_short": {O15: ("USD", 990), O31: ("USD", 990)},
    # opens after the period: not in it
    "ledger_amount_mismatch:ORD-E:provider_short": {N01: ("EUR", 5000)},
    # opens, resolves, opens again inside the period
    "open_invoices:inv_f:0-30": {O01: ("EUR", 300), O31: ("EUR", 300)},
    # its currency changes: resolves in EUR, opens in USD
    "refund_currency_mismatch:ref_g:currency_differs": {
        O01: ("EUR", 50),
        O15: ("USD", 50),
        O31: ("USD", 50),
    },
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def build(path: Path, *, incomplete: str | None = None) -> Path:
    """The warehouse at `path`; `incomplete`: a run id whose night was incomplete."""
    con = warehouse(path)
    for run_id, (started, status) in RUNS.items():
        con.execute(
            "INSERT INTO runs BY NAME SELECT ? AS run_id, ? AS started_at, ? AS finished_at, "
            "? AS status, ? AS reason, ? AS loaded_at",
            [
                run_id,
                started,
                started,
                "incomplete" if run_id == incomplete else status,
                "disputes incomplete (1 page(s) failed for good)" if run_id == incomplete else None,
                started,
            ],
        )
    for key, seen in FINDINGS.items():
        check, entity_id, issue = key.split(":")
        first = min(seen)
        for run_id, (currency, amount) in seen.items():
            con.execute(
                "INSERT INTO findings BY NAME SELECT ? AS run_id, ? AS check_name, "
                "'error' AS severity, ? AS finding_key, ? AS state, 'payment' AS entity, "
                "? AS entity_id, ? AS currency, ? AS amount_minor, ? AS issue_type, "
                "'planted' AS detail, ? AS first_seen_run",
                [run_id, check, key, "new" if run_id == first else "open", entity_id, currency,
                 amount, issue, first],
            )  # fmt: skip
    _records(con)
    _books(con)
    con.close()
    return path


def _record(
    con: duckdb.DuckDBPyConnection,
    entity: str,
    rid: str,
    created: str,
    versions: list[tuple[str, str, int, str]],
) -> None:
    """A record whose versions are (run, status, amount, currency), oldest first."""
    status, amount, currency = versions[-1][1:]
    extra = ", NULL AS payment_id" if entity != "payments" else ""
    con.execute(
        f"INSERT INTO {entity} BY NAME SELECT ? AS id, ? AS amount_minor, ? AS currency, "
        f"? AS status, ? AS created_at, '{{}}' AS raw, 'h' AS content_hash, "
        f"? AS first_seen_run, ? AS last_seen_run{extra}",
        [rid, amount, currency, status, at(created), versions[0][0], versions[-1][0]],
    )
    for n, (run_id, st, amt, cur) in enumerate(versions, start=1):
        con.execute(
            "INSERT INTO record_versions BY NAME SELECT ? AS entity, ? AS id, ? AS version, "
            "? AS run_id, ? AS change, ? AS status, ? AS amount_minor, ? AS currency",
            [entity, rid, n, run_id, "new" if n == 1 else "changed", st, amt, cur],
        )


def _records(con: duckdb.DuckDBPyConnection) -> None:
    # pending when first seen, confirmed by the end: settled
    _record(
        con,
        "payments",
        "pay_1",
        "2026-10-05",
        [(O15, "pending", 1000, "EUR"), (O31, "confirmed", 1000, "EUR")],
    )
    # confirmed at the end, refunded after it: settled as it stood
    _record(
        con,
        "payments",
        "pay_2",
        "2026-10-20",
        [(O31, "confirmed", 500, "EUR"), (N01, "refunded", 500, "EUR")],
    )
    _record(con, "payments", "pay_3", "2026-11-01", [(N01, "confirmed", 700, "EUR")])  # after
    _record(con, "payments", "pay_4", "2026-09-29", [(S30, "confirmed", 900, "EUR")])  # before
    # created in October but first read by the November night: not as it stood at the end
    _record(con, "payments", "pay_5", "2026-10-31", [(N01, "confirmed", 2500, "USD")])
    _record(con, "payments", "pay_6", "2026-10-07", [(O15, "cancelled", 100, "USD")])
    _record(con, "refunds", "ref_1", "2026-10-10", [(O15, "succeeded", 200, "EUR")])
    _record(con, "refunds", "ref_2", "2026-10-11", [(O15, "failed", 999, "EUR")])
    _record(con, "disputes", "dsp_1", "2026-10-12", [(O15, "open", 300, "EUR")])


def _books(con: duckdb.DuckDBPyConnection) -> None:
    for ref, amount, created, state in (
        ("ORD-1", 1000, "2026-10-05", "matched"),
        ("ORD-2", 700, "2026-10-20", "break"),
        ("ORD-3", 400, "2026-11-02", "matched"),  # after the period
    ):
        con.execute(
            "INSERT INTO ledger_orders BY NAME SELECT ? AS reference, ? AS amount_minor, "
            "'EUR' AS currency, 'confirmed' AS status, ? AS created_at, 'books.csv' AS source, "
            "1 AS row_number, ? AS run_id",
            [ref, amount, at(created), N01],
        )
        con.execute(
            "INSERT INTO ledger_matches BY NAME SELECT 'order' AS entity, ? AS entity_id, "
            "? AS reference, 1 AS payments, 1 AS settled, ? AS kind, ? AS state, ? AS run_id",
            [ref, ref, "matched" if state == "matched" else "amount_mismatch", state, N01],
        )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return build(tmp_path / "data" / "recon.duckdb")
