"""The ledger checks against the sandbox's books' ground truth, in process (DuckDB only):
precision and recall 100% across seeds and sizes, with every list and with the spec's only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recon.config.settings import settings_from
from recon.ledger.loading import load_books
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import LIST_CHECKS, ledger_truth, make_books, write_books

from .support import RUN, keys, ledger_findings, load_dataset, score, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seed", "payments"),
    [
        (7, 300),
        pytest.param(11, 2000, marks=pytest.mark.slow),
        pytest.param(3, 6000, marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("lists", ["all", "spec-only"])
def test_ledger_findings_equal_the_truth(
    tmp_path: Path, seed: int, payments: int, lists: str
) -> None:
    dataset = Dataset(seed, payments, anchor=ANCHOR)
    books = make_books(dataset)
    paths = write_books(books, tmp_path / "books", formats=("csv",))
    as_of = ANCHOR + timedelta(hours=12)
    offered = ("refunds", "invoices") if lists == "all" else ()
    resources = ["payments", "disputes", "subscriptions", "payment_intents", *offered]
    con = warehouse(tmp_path / "recon.duckdb")
    load_dataset(con, tmp_path, dataset, as_of, resources=resources)
    settings = settings_from(**{f"ledger_{k}": str(v[0]) for k, v in paths.items()})
    loaded = load_books(con, settings, RUN)
    assert {i.input: i.rejects for i in loaded.inputs} == {
        "orders": books.rejects["orders"],
        "refunds": books.rejects["refunds"],
        "invoices": books.rejects["invoices"],
    }
    got, statuses = ledger_findings(con, RUN, as_of)
    expected = keys(ledger_truth(dataset, books, as_of=as_of, lists=offered))
    score(got, expected)
    planted = keys(p.as_dict() | {"check": p.check} for p in books.planted)
    unlisted = {c for name, checks in LIST_CHECKS.items() if name not in offered for c in checks}
    assert {k for k in planted if k[0] not in unlisted and not _needs_refunds(k, offered)} <= got
    for check in unlisted:
        assert statuses[check] == "not_evaluated"
    con.close()


def _needs_refunds(key: tuple[str, str, str, str], offered: tuple[str, ...]) -> bool:
    """A pending refund is shown only when the refunds list is there to compare with."""
    return key[0] == "ledger_pending" and key[1] == "refund" and "refunds" not in offered
