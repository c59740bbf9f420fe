"""The checks against the sandbox's ground truth: precision and recall 100% (checks 2-17, 21).

The generated records are landed as Parquet pages and typed by the loader's own staging
SQL (`sql/load/<resource>.sql`), then the checks run and their findings must equal the
oracle's (`recon.sandbox.truth`) exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from recon.checks import CheckParams, run_checks
from recon.fields import load_parameters
from recon.sandbox import data as data_module
from recon.sandbox import truth as truth_module

from .builder import REPO, RESOURCES, SCHEMA

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
ORACLE_CHECKS = frozenset(
    {
        "refunded_amount_mismatch",
        "partially_refunded_out_of_range",
        "confirmed_with_refunds",
        "over_refunded",
        "refund_currency_mismatch",
        "refund_unknown_payment",
        "refund_on_unrefundable_payment",
        "open_invoices",
        "open_invoice_inactive_subscription",
        "open_invoice_nonpositive_amount",
        "dispute_on_refunded_payment",
        "duplicate_payment_reference",
        "impossible_amounts",
        "unknown_status",
        "stuck_non_final",
        "intent_negative_amount",
        "refund_in_flight",
    }
)

Key = tuple[str, str, str, str]


def _load(con: duckdb.DuckDBPyConnection, folder: Path, resource: str, records: list[Any]) -> None:
    page = folder / f"{resource}.parquet"
    table = pa.table(
        {
            "id": pa.array([r["id"] for r in records], pa.string()),
            "raw": pa.array([orjson.dumps(r).decode() for r in records], pa.string()),
            "page_offset": pa.array(range(len(records)), pa.int64()),
            "request_id": pa.array([None] * len(records), pa.string()),
        }
    )
    pq.write_table(table, page)
    stage = (REPO / "sql" / "load" / f"{resource}.sql").read_text(encoding="utf-8")
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE staged AS {stage}",
        {"files": [str(page)], **load_parameters(resource)},
    )
    staged = {d[0] for d in con.execute("SELECT * FROM staged LIMIT 0").description or []}
    columns = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "ORDER BY ordinal_position",
            [resource],
        ).fetchall()
        if r[0] in staged
    ]
    names = ", ".join(columns)
    con.execute(
        f"INSERT INTO {resource} ({names}, first_seen_run, last_seen_run) "
        f"SELECT {names}, 'r1', 'r1' FROM staged"
    )


@pytest.mark.parametrize(("seed", "payments"), [(7, 300), (11, 2000), (3, 6000)])
def test_findings_equal_the_sandbox_truth(tmp_path: Path, seed: int, payments: int) -> None:
    dataset = data_module.Dataset(seed, payments, anchor=ANCHOR)
    truth = truth_module.truth(dataset)
    as_of = ANCHOR + timedelta(hours=12)
    assert truth["as_of"] == as_of.strftime("%Y-%m-%dT%H:%M:%SZ")

    con = duckdb.connect(str(tmp_path / "recon.duckdb"))
    con.execute(SCHEMA.read_text(encoding="utf-8"))
    for resource in RESOURCES:
        _load(con, tmp_path, resource, list(dataset.iter_records(resource)))
    con.execute(
        "INSERT INTO runs (run_id, started_at, status) VALUES ('r1', ?, 'complete')", [as_of]
    )
    for resource in RESOURCES:
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status) VALUES ('r1', ?, 'complete')",
            [resource],
        )
    runs = run_checks(
        con, run_id="r1", as_of=as_of, params=CheckParams(stuck_days=truth["stuck_days"])
    )
    for run in runs:
        assert run.status != "errored", (run.check_name, run.reason)
    got: set[Key] = {
        (r[0], r[1], r[2], r[3])
        for r in con.execute(
            "SELECT check_name, entity, entity_id, issue_type FROM findings "
            "WHERE run_id = 'r1' AND state <> 'resolved'"
        ).fetchall()
        if r[0] in ORACLE_CHECKS
    }
    expected: set[Key] = {
        (f["check"], f["entity"], f["entity_id"], f["issue_type"]) for f in truth["findings"]
    }
    assert len(expected) == len(truth["findings"])
    missed = sorted(expected - got)
    extra = sorted(got - expected)
    assert not missed, f"recall < 100%: {len(missed)} missed, e.g. {missed[:5]}"
    assert not extra, f"precision < 100%: {len(extra)} extra, e.g. {extra[:5]}"
    planted = {(p["check"], p["entity_id"], p["issue_type"]) for p in truth["planted"]}
    assert planted <= {(c, i, t) for c, _, i, t in got}
    con.close()
