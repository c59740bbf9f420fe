"""The bank checks against the sandbox's plants, in process (DuckDB only): the statements the
sandbox writes — in each bank's format, and every currency in each one format — read back,
every settlement the Python oracle expects found by recon's SQL, and the findings exactly the
planted missing, short and unexpected credits and the gap: precision and recall 100%."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recon.sandbox.bank import PROVIDER_MATCH, SANDBOX_BANK, plan_statements, write_statements
from recon.sandbox.data import Dataset
from tests.bank.support import BANK_CHECKS, bank_findings, precision_recall
from tests.ledger.support import load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seed", "payments", "fmt"),
    [
        (7, 600, None),
        (7, 600, "camt053"),
        (7, 600, "mt940"),
        (7, 600, "bai2"),
        (7, 600, "csv"),
        pytest.param(11, 3000, None, marks=pytest.mark.slow),
    ],
)
def test_bank_findings_are_the_plants(
    tmp_path: Path, seed: int, payments: int, fmt: str | None
) -> None:
    dataset = Dataset(seed, payments, anchor=ANCHOR)
    plan = plan_statements(dataset)
    truth = write_statements(plan, tmp_path / "bank", fmt)
    as_of = ANCHOR + timedelta(hours=2)
    con = warehouse(tmp_path / "recon.duckdb")
    load_dataset(con, tmp_path, dataset, as_of)
    got, statuses = bank_findings(
        con, tmp_path / "bank", as_of, bank=SANDBOX_BANK, match=PROVIDER_MATCH
    )
    for check in BANK_CHECKS:
        expected = set(truth[check])
        assert precision_recall(got[check], expected) == (1.0, 1.0), (check, got[check], expected)
        assert statuses[check] == ("failed" if expected else "passed")
    # the findings are in the work queue with their item's own date (the item's age)
    undated = con.execute(
        "SELECT count(*) FROM findings WHERE starts_with(check_name, 'bank_') AND item_at IS NULL"
    ).fetchone()
    assert undated == (0,)
    # every other settlement the oracle expects was found, to the minor unit
    received = dict(
        con.execute(
            "SELECT settlement_id, received_minor FROM bank_settlements WHERE state = 'received'"
        ).fetchall()
    )
    oracle = {s.key: s.net for s in plan.settlements if s.net > 0}
    assert received, "nothing matched"
    assert all(oracle[key] == amount for key, amount in received.items())
    con.close()


def test_without_statements_the_bank_checks_are_not_evaluated(tmp_path: Path) -> None:
    from recon.bank.loading import load_bank
    from recon.checks import CheckParams, run_checks
    from recon.config.settings import settings_from
    from tests.ledger.support import RUN

    dataset = Dataset(7, 200, anchor=ANCHOR)
    con = warehouse(tmp_path / "recon.duckdb")
    load_dataset(con, tmp_path, dataset, ANCHOR)
    load_bank(con, settings_from(), RUN)
    runs = run_checks(con, run_id=RUN, as_of=ANCHOR, params=CheckParams())
    assert {r.check_name: r.status for r in runs if r.check_name in BANK_CHECKS} == dict.fromkeys(
        BANK_CHECKS, "not_evaluated"
    )
    con.close()
