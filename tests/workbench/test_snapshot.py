"""The queue's snapshot: the same answers as the published warehouse, and never stale after
a publish (a new file renamed over the published one)."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from recon.workbench.config import WorkbenchSettings
from recon.workbench.queue import QueueFilters
from recon.workbench.service import Workbench
from tests.workbench.support import R1, build_warehouse


def _keys(bench: Workbench, **filters: object) -> list[str]:
    page = bench.queue(QueueFilters(state=None, **filters), 500, None)  # type: ignore[arg-type]
    return [i["finding_key"] for i in page.items]


def test_the_snapshot_answers_as_the_warehouse_and_follows_a_publish(tmp_path: Path) -> None:
    db = tmp_path / "data" / "recon.duckdb"
    build_warehouse(db)
    bench = Workbench(db, WorkbenchSettings())
    direct = _keys(bench)
    assert bench.snapshot.wait(120) is not None
    assert _keys(bench) == direct
    assert _keys(bench, currency="EUR") == [k for k in direct if k.startswith("ledger_")]
    # a publish: a new file with one more finding renamed over the published one
    fresh = tmp_path / "next" / "recon.duckdb"
    build_warehouse(fresh)
    con = duckdb.connect(str(fresh))
    con.execute(
        "INSERT INTO findings BY NAME SELECT ? AS run_id, 'over_refunded' AS check_name, "
        "'error' AS severity, 'over_refunded:pay_new:over_refunded' AS finding_key, "
        "'new' AS state, 'payment' AS entity, 'pay_new' AS entity_id, 'EUR' AS currency, "
        "10 AS amount_minor, 'over_refunded' AS issue_type, 'x' AS detail, ? AS first_seen_run",
        [R1, R1],
    )
    con.close()
    os.replace(fresh, db)
    assert "over_refunded:pay_new:over_refunded" in _keys(bench)  # at once, from the warehouse
    assert bench.snapshot.wait(120) is not None
    assert "over_refunded:pay_new:over_refunded" in _keys(bench)
