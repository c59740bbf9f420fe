"""Fixtures of the work-queue tests: a clean RECON_* environment and a small published
warehouse whose latest run holds a few findings."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.ledger.support import warehouse

NOW = datetime.now(UTC)
R0 = "20261101T020000Z-000000"  # a run ten days before the latest
R1 = "20261125T020000Z-000001"  # the latest run
KEY_A = "ledger_amount_mismatch:ORD-1:provider_short"
KEY_B = "ledger_payment_missing_from_books:pay_2:not_in_books"
KEY_C = "over_refunded:pay_3:over_refunded"
KEY_D = "refunded_amount_mismatch:pay_4:short"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def add_findings(
    db: Path, run: str, rows: list[tuple[str, str, str, str, str, int, str, str]]
) -> None:
    """Findings of `run`: (key, state, entity, entity_id, currency, amount, detail, first)."""
    import duckdb

    con = duckdb.connect(str(db))
    for key, state, entity, eid, cur, amount, detail, first in rows:
        check, _, issue = key.split(":")
        con.execute(
            "INSERT INTO findings BY NAME SELECT ? AS run_id, ? AS check_name, "
            "'error' AS severity, "
            "? AS finding_key, ? AS state, ? AS entity, ? AS entity_id, ? AS currency, "
            "? AS amount_minor, ? AS issue_type, ? AS detail, ? AS first_seen_run",
            [run, check, key, state, entity, eid, cur, amount, issue, detail, first],
        )
    con.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "recon.duckdb"
    path.parent.mkdir()
    con = warehouse(path)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES "
        "(?, ?, 'complete', ?), (?, ?, 'complete', ?)",
        [R0, NOW - timedelta(days=10), NOW, R1, NOW, NOW],
    )
    con.close()
    add_findings(
        path,
        R1,
        [
            (
                KEY_A,
                "new",
                "order",
                "ORD-1",
                "EUR",
                150,
                "books EUR 10.00, provider EUR 8.50",
                R1,
            ),
            (KEY_B, "open", "payment", "pay_2", "EUR", 900, "provider confirmed EUR 9.00", R0),
            (KEY_C, "open", "payment", "pay_3", "USD", 50, "refunds 3 days old", R0),
            (KEY_D, "open", "payment", "pay_4", "JPY", 700, '=HYPERLINK("http://x")', R0),
        ],
    )
    return path
