"""Every sql/checks file: a valid header, a known severity, the six output columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recon.checks import (
    OUTPUT_COLUMNS,
    SEVERITIES,
    default_checks_dir,
    parse_check,
    parse_check_text,
)
from recon.errors import CheckDefinitionError

from .builder import ANCHOR, REPO, Wh

_SHARED = {"refund_payments", "counted_refunds"}  # read payments and refunds
CHECK_FILES = sorted((REPO / "sql" / "checks").glob("*.sql"))
CATALOGUE = {
    "extraction_completeness": ("error", ()),
    "refunded_amount_mismatch": ("error", ("payments", "refunds")),
    "partially_refunded_out_of_range": ("error", ("payments", "refunds")),
    "confirmed_with_refunds": ("error", ("payments", "refunds")),
    "over_refunded": ("error", ("payments", "refunds")),
    "refund_currency_mismatch": ("error", ("payments", "refunds")),
    "refund_unknown_payment": ("error", ("payments", "refunds")),
    "refund_on_unrefundable_payment": ("error", ("payments", "refunds")),
    "open_invoices": ("info", ("invoices",)),
    "open_invoice_inactive_subscription": ("warn", ("invoices", "subscriptions")),
    "open_invoice_nonpositive_amount": ("warn", ("invoices",)),
    "dispute_on_refunded_payment": ("warn", ("disputes", "payments")),
    "duplicate_payment_reference": ("warn", ("payments",)),
    "impossible_amounts": ("error", ()),
    "unknown_status": ("warn", ()),
    "stuck_non_final": ("warn", ()),
    "intent_negative_amount": ("error", ("payment_intents",)),
    "vanished_records": ("warn", ()),
    "suspicious_changes": ("warn", ()),
    "volume_anomaly": ("warn", ()),
    "refund_in_flight": ("info", ("payments", "refunds")),
    # the merchant's books against the provider (recon.ledger, tests/ledger)
    "ledger_amount_mismatch": ("error", ("payments", "ledger_orders")),
    "ledger_currency_mismatch": ("error", ("payments", "ledger_orders")),
    "ledger_duplicate_charge": ("error", ("payments", "ledger_orders")),
    "ledger_order_missing_at_provider": ("error", ("payments", "ledger_orders")),
    "ledger_payment_missing_from_books": ("error", ("payments", "ledger_orders")),
    "ledger_status_mismatch": ("error", ("payments", "ledger_orders")),
    "ledger_pending": ("info", ("payments", "ledger_orders")),
    "ledger_refund_status": ("error", ("payments", "ledger_refunds")),
    "ledger_refund_unmatched": ("error", ("payments", "ledger_refunds")),
    "ledger_refund_missing_at_provider": ("error", ("payments", "refunds", "ledger_refunds")),
    "ledger_refund_mismatch": ("error", ("payments", "refunds", "ledger_refunds")),
    "ledger_refund_missing_from_books": (
        "error",
        ("payments", "refunds", "ledger_orders", "ledger_refunds"),
    ),
    "ledger_invoice_mismatch": ("warn", ("invoices", "ledger_invoices")),
    "ledger_matched_within_tolerance": ("info", ("payments", "ledger_orders")),
    "ledger_suggested_match": ("warn", ("payments", "ledger_orders")),
    "ledger_manual_match_lapsed": ("warn", ("payments", "ledger_orders")),
}


def test_default_checks_dir_is_the_repository_folder() -> None:
    assert default_checks_dir() == REPO / "sql" / "checks"


def test_the_catalogue_is_complete() -> None:
    assert {p.stem for p in CHECK_FILES} == set(CATALOGUE)


@pytest.mark.parametrize("path", CHECK_FILES, ids=lambda p: p.stem)
def test_check_file_has_a_valid_header(path: Path) -> None:
    check = parse_check(path)
    assert check.name == path.stem
    assert check.severity in SEVERITIES
    assert (check.severity, check.requires) == CATALOGUE[path.stem]
    assert check.description
    assert "\n" not in check.description
    assert not check.sql.rstrip().endswith(";")


def test_every_check_returns_the_output_columns_on_an_empty_warehouse(wh: Wh) -> None:
    wh.run("r1")
    runs = wh.checks("r1")
    assert set(runs) == set(CATALOGUE)
    for name, run in runs.items():
        assert run.status != "errored", (name, run.reason)
    for path in CHECK_FILES:
        check = parse_check(path)
        values = {
            "run_id": "r1",
            "as_of": ANCHOR,
            "stuck_days": 7,
            "volume_ratio": 0.5,
            "failed_statuses": ["failed"],
            "refund_grace_hours": 48,
        }
        bound = {k: v for k, v in values.items() if k in check.parameters}
        cur = wh.con.execute(f"SELECT * FROM ({check.sql}\n) LIMIT 0", bound)
        assert tuple(d[0] for d in cur.description or []) == OUTPUT_COLUMNS, path.stem


def test_check_files_run_as_pasted_into_the_duckdb_shell(wh: Wh) -> None:
    """With the `$param`s written as literals, each file is plain DuckDB SQL."""
    wh.run("r1")
    wh.checks("r1")  # creates the reference tables and the recon_money macro
    literals = {
        "$run_id": "'r1'",
        "$as_of": "TIMESTAMPTZ '2026-11-20 02:00:00+00'",
        "$stuck_days": "7",
        "$volume_ratio": "0.5",
        "$failed_statuses": "['failed', 'canceled', 'cancelled', 'rejected', 'reversed']",
        "$refund_grace_hours": "48",
    }
    for path in CHECK_FILES:
        text = path.read_text(encoding="utf-8")
        for name, literal in literals.items():
            text = text.replace(name, literal)
        cur = wh.con.execute(text)
        assert tuple(d[0] for d in cur.description or []) == OUTPUT_COLUMNS, path.stem
        cur.fetchall()


_READS = re.compile(
    r"\b(?:FROM|JOIN)\s+(payments|refunds|disputes|subscriptions|invoices|payment_intents|"
    r"payment_methods|refund_payments|counted_refunds)\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("path", CHECK_FILES, ids=lambda p: p.stem)
def test_every_resource_a_check_reads_is_declared(path: Path) -> None:
    """Gating and coverage rest on the header: a table read but not declared would be judged
    on last night's rows when tonight's scan of it was not complete."""
    check = parse_check(path)
    read = set()
    for name in _READS.findall(check.sql):
        read |= {"payments", "refunds"} if name in _SHARED else {name}
    assert read <= set(check.resources), sorted(read - set(check.resources))


def test_a_check_tolerates_only_what_it_reads() -> None:
    text = (REPO / "sql" / "checks" / "over_refunded.sql").read_text(encoding="utf-8")
    broken = text.replace("-- tolerates: [payments]", "-- tolerates: [invoices]")
    with pytest.raises(CheckDefinitionError, match="tolerates names invoices"):
        parse_check_text(broken, name="over_refunded")
    broken = text.replace("-- tolerates: [payments]", "-- requires_fields: [refunds.colour]")
    with pytest.raises(CheckDefinitionError, match=r"'refunds\.colour' is not a mapped field"):
        parse_check_text(broken, name="over_refunded")
    broken = text.replace("-- tolerates: [payments]", "-- finding_key: [issue_type]")
    with pytest.raises(CheckDefinitionError, match="finding_key must be"):
        parse_check_text(broken, name="over_refunded")
