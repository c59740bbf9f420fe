"""The checks against the sandbox's ground truth: precision and recall 100% (checks 2-17, 21).

The generated records are landed as Parquet pages and typed by the loader's own staging
SQL (recon.warehouse.catalogue_tables), then the checks run and their findings must equal the
oracle's (`recon.sandbox.truth`) exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from recon.checks import CheckParams, run_checks
from recon.sandbox import data as data_module
from recon.sandbox import truth as truth_module
from recon.warehouse.migrations import apply_migrations
from tests.ledger.support import RUN, land_and_load

from .builder import RESOURCES

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


@pytest.mark.parametrize(
    ("seed", "payments"),
    [
        (7, 300),
        pytest.param(11, 2000, marks=pytest.mark.slow),
        pytest.param(3, 6000, marks=pytest.mark.slow),
    ],
)
def test_findings_equal_the_sandbox_truth(tmp_path: Path, seed: int, payments: int) -> None:
    dataset = data_module.Dataset(seed, payments, anchor=ANCHOR)
    truth = truth_module.truth(dataset)
    as_of = ANCHOR + timedelta(hours=12)
    assert truth["as_of"] == as_of.strftime("%Y-%m-%dT%H:%M:%SZ")

    con = duckdb.connect(str(tmp_path / "recon.duckdb"))
    apply_migrations(con)
    # landed and loaded by recon's own loader, every list complete
    land_and_load(con, tmp_path, RUN, as_of, {r: list(dataset.iter_records(r)) for r in RESOURCES})
    runs = run_checks(
        con, run_id=RUN, as_of=as_of, params=CheckParams(stuck_days=truth["stuck_days"])
    )
    for run in runs:
        assert run.status != "errored", (run.check_name, run.reason)
    got: set[Key] = {
        (r[0], r[1], r[2], r[3])
        for r in con.execute(
            "SELECT check_name, entity, entity_id, issue_type FROM findings "
            "WHERE run_id = ? AND state <> 'resolved'",
            [RUN],
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
