"""The analysts' views on a hand-made history: three runs, the middle one incomplete."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from recon.warehouse.working_copy import Warehouse

RUNS = [
    ("20261101T020000Z-000001", "2026-11-01 02:00:00+00", "complete"),
    ("20261102T020000Z-000002", "2026-11-02 02:00:00+00", "incomplete"),
    ("20261105T020000Z-000003", "2026-11-05 02:00:00+00", "complete"),
]
R1, R2, R3 = (r[0] for r in RUNS)
FINDINGS = [  # run, key, state, amount
    (R1, "a", "new", 100),
    (R1, "b", "new", 50),
    (R2, "a", "open", 100),
    (R2, "c", "new", 7),
    (R3, "a", "open", 120),
    (R3, "d", "new", 9),
    (R3, "b", "resolved", 50),
]


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    wh = Warehouse(tmp_path / "recon.duckdb")
    with wh.session("test", fresh=True, publish=True) as w:
        for run_id, at, status in RUNS:
            w.execute(
                "INSERT INTO runs (run_id, started_at, status) VALUES (?, ?, ?)",
                [run_id, at, status],
            )
        for run_id, key, state, amount in FINDINGS:
            w.execute(
                "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
                "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
                "VALUES (?, 'chk', 'error', ?, ?, 'payment', ?, 'BHD', ?, "
                "'issue', 'detail', NULL)",
                [run_id, key, state, f"pay_{key}", amount],
            )
        for run_id, version, amount in [(R1, 1, 10), (R2, 2, 20), (R3, 3, 30)]:
            w.execute(
                "INSERT INTO record_versions VALUES ('payments', 'pay_x', ?, ?, 'changed', "
                "'confirmed', ?, 'JPY', 'h', NULL)",
                [version, run_id, amount],
            )
        w.execute(
            "INSERT INTO invoices VALUES ('in_due', 'cus', NULL, 'open', 1234, 'EUR', "
            "DATE '2026-10-01', NULL, '{}', 'h', ?, ?, NULL), "
            "('in_later', 'cus', NULL, 'open', 5, 'JPY', DATE '2026-11-20', NULL, '{}', 'h', "
            "?, ?, NULL), "
            "('in_paid', 'cus', NULL, 'paid', 5, 'JPY', DATE '2026-10-01', NULL, '{}', 'h', "
            "?, ?, NULL)",
            [R1, R3] * 3,
        )
    c = duckdb.connect(str(wh.path), read_only=True)
    yield c
    c.close()


def test_night_over_night_compares_with_the_previous_complete_run(
    con: duckdb.DuckDBPyConnection,
) -> None:
    rows = con.execute(
        "SELECT kind, change, entity_id, amount_minor_before, amount_minor_after, amount_before, "
        "amount_after, since_run, run_id FROM night_over_night "
        "ORDER BY kind, entity_id, amount_minor_after"
    ).fetchall()
    assert rows == [
        (
            "finding",
            "amount changed",
            "pay_a",
            100,
            120,
            Decimal("0.1000"),
            Decimal("0.1200"),
            R1,
            R3,
        ),
        ("finding", "resolved", "pay_b", 50, None, Decimal("0.0500"), None, R1, R3),
        ("finding", "new", "pay_d", None, 9, None, Decimal("0.0090"), R1, R3),
        ("record", "changed", "pay_x", 10, 20, Decimal("10.0000"), Decimal("20.0000"), R1, R3),
        ("record", "changed", "pay_x", 20, 30, Decimal("20.0000"), Decimal("30.0000"), R1, R3),
    ]


def test_findings_current_is_each_findings_latest_state(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.execute(
        "SELECT finding_key, state, first_seen_run, last_seen_run, age_days, amount "
        "FROM findings_current ORDER BY finding_key"
    ).fetchall()
    assert rows == [
        ("a", "open", R1, R3, 4, Decimal("0.1200")),
        ("b", "resolved", R1, R1, 0, Decimal("0.0500")),
        ("c", "resolved", R2, R2, 0, Decimal("0.0070")),
        ("d", "new", R3, R3, 0, Decimal("0.0090")),
    ]


def test_open_invoices_are_aged_as_of_the_latest_run(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.execute(
        "SELECT id, amount_due, days_overdue, aging_bucket FROM open_invoices ORDER BY id"
    ).fetchall()
    assert rows == [
        ("in_due", Decimal("12.3400"), 35, "31-60"),
        ("in_later", Decimal("5.0000"), -15, "not yet due"),
    ]
