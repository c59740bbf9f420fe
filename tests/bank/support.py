"""Helpers for the bank tests: a warehouse with a sandbox data set (tests/ledger/support.py's
loader), the bank leg loaded, the checks run, findings scored against the plants."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.bank.loading import load_bank
from recon.checks import CheckParams, run_checks
from recon.config.settings import settings_from
from tests.ledger.support import RUN

BANK_CHECKS = (
    "bank_settlement_missing",
    "bank_settlement_amount_mismatch",
    "bank_unexpected_credit",
    "bank_statement_gap",
)


def bank_findings(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    as_of: datetime,
    *,
    bank: dict[str, Any],
    match: str,
) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Load the statements in `folder` and run the checks: each bank check's findings
    (entity ids) and status."""
    settings = settings_from(
        bank_statements=str(folder / "bank-*"), bank_provider_match=match, bank=bank
    )
    load_bank(con, settings, RUN)
    runs = run_checks(con, run_id=RUN, as_of=as_of, params=CheckParams())
    statuses = {r.check_name: r.status for r in runs if r.check_name in BANK_CHECKS}
    for run in runs:
        assert run.status != "errored", (run.check_name, run.reason)
    got: dict[str, set[str]] = {c: set() for c in BANK_CHECKS}
    for check, entity_id in con.execute(
        "SELECT check_name, entity_id FROM findings WHERE run_id = ? "
        "AND starts_with(check_name, 'bank_')",
        [RUN],
    ).fetchall():
        got[check].add(entity_id)
    return got, statuses


def precision_recall(got: set[str], expected: set[str]) -> tuple[float, float]:
    """(precision, recall) of `got` against `expected` (1.0 each when both are empty)."""
    hits = len(got & expected)
    precision = hits / len(got) if got else 1.0
    recall = hits / len(expected) if expected else 1.0
    return precision, recall
