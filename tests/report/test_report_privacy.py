"""Personal data stays out of every report file.

Records carry customer emails, names, card last4 and expiry, addresses and phone numbers in
`raw`, the way the API sends them; a careless merchant also made references out of them, and
an error message echoed some. The real check catalogue runs over them, the report is
written, and every file of the report folder (Parquet read back value by value) is searched
for every planted value.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from recon.checks import CheckParams, run_checks
from recon.money.currency import create_currencies_table
from recon.report import render_report
from recon.report.privacy import REMOVED, scrub_text

from .synthetic_warehouse import RESOURCES, create_schema

RUN = "20261121T020000Z-0000aa"
STARTED = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)

EMAIL = "jane.customer@example.org"
NAME = "Janet Quinterra"
LAST4 = "7319"
EXPIRY = "11/2031"
LINE1 = "17 Rue des Lilas"
PHONE = "+33 6 12 34 56 78"
CARD = "4539 1488 0343 6467"  # a Luhn-valid test number
OTHER_EMAIL = "ops-contact@merchant.example"
PERSONAL = (EMAIL, NAME, LAST4, EXPIRY, LINE1, PHONE, CARD, OTHER_EMAIL, "4539148803436467")


def _customer() -> dict[str, Any]:
    return {
        "id": "cus_1",
        "email": EMAIL,
        "name": NAME,
        "phone": PHONE,
        "address": {"line1": LINE1, "city": "Lyon", "postalCode": "69003"},
    }


def _card() -> dict[str, Any]:
    return {"brand": "visa", "last4": LAST4, "expMonth": 11, "expYear": 2031, "expiry": EXPIRY}


def _payment(con: duckdb.DuckDBPyConnection, pid: str, reference: str, status: str) -> None:
    raw = {
        "id": pid,
        "amountMinor": 1250,
        "currency": "EUR",
        "status": status,
        "reference": reference,
        "createdAt": "2026-11-19T10:00:00Z",
        "customer": _customer(),
        "card": _card(),
        "billingDetails": {"name": NAME, "email": EMAIL},
    }
    con.execute(
        "INSERT INTO payments (id, amount_minor, currency, status, reference, created_at, raw, "
        "content_hash, first_seen_run, last_seen_run) VALUES (?, 1250, 'EUR', ?, ?, ?, ?, 'h', "
        "?, ?)",
        [pid, status, reference, STARTED - timedelta(days=1), json.dumps(raw), RUN, RUN],
    )


@pytest.fixture(scope="module")
def report_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every file of the run's report folder, as text (Parquet: its values, one per line)."""
    root = tmp_path_factory.mktemp("privacy")
    con = duckdb.connect(str(root / "w.duckdb"))
    create_schema(con)
    create_currencies_table(con)
    con.execute(
        "INSERT INTO runs (run_id, started_at, finished_at, status, reason) VALUES "
        "(?, ?, ?, 'incomplete', ?)",
        [RUN, STARTED, STARTED + timedelta(minutes=3), f"1 call failed ({OTHER_EMAIL} paged)"],
    )
    for resource in RESOURCES:
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status, pages, records) "
            "VALUES (?, ?, 'complete', 1, 2)",
            [RUN, resource],
        )
    # references made of personal data, shared by two payments: duplicate_payment_reference
    # quotes them in its detail; an unknown status is quoted by unknown_status
    _payment(con, "pay_1", EMAIL, "confirmed")
    _payment(con, "pay_2", EMAIL, "confirmed")
    _payment(con, "pay_3", f"Order for {NAME}", "confirmed")
    _payment(con, "pay_4", f"Order for {NAME}", f"held: call {PHONE}")
    refund_raw = {
        "id": "re_1",
        "paymentId": "pay_1",
        "amount": {"amountMinor": 100, "currency": {"code": "EUR", "payer": {"email": EMAIL}}},
        "status": "succeeded",
        "customer": _customer(),
    }
    con.execute(
        "INSERT INTO refunds (id, payment_id, amount_minor, currency, status, raw, content_hash,"
        " first_seen_run, last_seen_run) VALUES ('re_1', 'pay_1', 100, NULL, 'succeeded', ?, "
        "'h', ?, ?)",
        [json.dumps(refund_raw), RUN, RUN],
    )
    con.execute(
        "INSERT INTO payment_methods (id, customer_id, type, raw, content_hash, first_seen_run, "
        "last_seen_run) VALUES ('pm_1', 'cus_1', 'card', ?, 'h', ?, ?)",
        [json.dumps({"id": "pm_1", "type": "card", "card": _card()}), RUN, RUN],
    )
    con.execute(
        "INSERT INTO api_calls (run_id, call_id, resource, method, path, query, attempt, "
        "http_status, error, message, request_id, latency_ms, outcome, attempted_at) VALUES "
        "(?, 'c1', 'payments', 'GET', '/api/v1/payments', ?, 1, 402, 'card_declined', ?, "
        "'req_1', 12.0, 'failed', ?)",
        [
            RUN,
            f"skip=0&email={EMAIL}",
            f'card {CARD} of {EMAIL} declined; {{"name": "{NAME}", "last4": "{LAST4}"}}',
            STARTED + timedelta(minutes=1),
        ],
    )
    results = run_checks(con, run_id=RUN, as_of=STARTED, params=CheckParams())
    statuses = {r.check_name: r.status for r in results}
    assert statuses["duplicate_payment_reference"] == "failed"
    assert statuses["unknown_status"] == "failed"
    assert statuses["impossible_amounts"] == "failed"
    # the planted values did reach the warehouse's findings, so the report has work to do
    details = " ".join(
        d for (d,) in con.execute("SELECT detail FROM findings WHERE run_id = ?", [RUN]).fetchall()
    )
    for value in (EMAIL, NAME, PHONE):
        assert value in details, value
    paths = render_report(con, run_id=RUN, reports_dir=root / "reports")
    con.close()
    files: dict[str, str] = {}
    for path in sorted(paths.folder.iterdir()):
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            files[path.name] = "\n".join(
                str(v) for column in table.columns for v in column.to_pylist()
            )
        else:
            files[path.name] = path.read_text(encoding="utf-8-sig")
    files["index.html"] = paths.index_html.read_text(encoding="utf-8")
    return files


def test_every_report_file_is_written(report_files: dict[str, str]) -> None:
    assert set(report_files) == {
        "summary.json",
        "report.html",
        "report.md",
        "findings.csv",
        "findings.parquet",
        "failed_calls.csv",
        "manifest.json",
        "index.html",
    }


@pytest.mark.parametrize("value", PERSONAL)
def test_no_report_file_carries_personal_data(report_files: dict[str, str], value: str) -> None:
    pattern = re.compile(rf"(?<![\w]){re.escape(value)}(?![\w])")
    for name, text in report_files.items():
        assert not pattern.search(text), f"{value!r} found in {name}"


def test_what_was_removed_says_so(report_files: dict[str, str]) -> None:
    csv_text = report_files["findings.csv"]
    assert f"reference {REMOVED} is shared by 2 live payments" in csv_text
    assert f"reference Order for {REMOVED} is shared" in csv_text
    calls = report_files["failed_calls.csv"]
    assert f"email={REMOVED}" in calls
    assert "req_1" in calls  # ids stay: they are how the provider finds the call
    summary = json.loads(report_files["summary.json"])
    assert summary["failed_calls"][0]["message"] == (
        f'card {REMOVED} of {REMOVED} declined; {{"name": "{REMOVED}", "last4": "{REMOVED}"}}'
    )
    assert summary["run"]["reason"] == f"1 call failed ({REMOVED} paged)"


def test_no_raw_column_in_findings_exports(report_files: dict[str, str]) -> None:
    header = next(csv.reader(io.StringIO(report_files["findings.csv"])))
    assert header == [
        "run_id",
        "check_name",
        "severity",
        "state",
        "entity",
        "entity_id",
        "currency",
        "amount_minor",
        "amount",
        "issue_type",
        "detail",
        "first_seen_run",
        "finding_key",
        "work_state",
        "owner",
        "work_note",
        "work_reason",
        "lapsed_reason",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("refund of EUR 12.50 since 2024-01-02 (3 refunds)", None),
        ("order 1234567890123 is not a card", None),  # fails the Luhn check
        ("a@b.co and x.y+z@sub.example.com", f"{REMOVED} and {REMOVED}"),
        ("card 4539-1488-0343-6467 ok", f"card {REMOVED} ok"),
        (
            '{"firstName":"Ann","bankName":"Sandbox Bank"}',
            f'{{"firstName":"{REMOVED}","bankName":"Sandbox Bank"}}',
        ),
        ("GET /x?phone_number=0612&skip=200", f"GET /x?phone_number={REMOVED}&skip=200"),
        ("the name: field is required", None),  # prose, not a key/value pair
    ],
)
def test_scrub_text(text: str, expected: str | None) -> None:
    assert scrub_text(text) == (text if expected is None else expected)


def test_scrub_text_removes_known_values_as_whole_words() -> None:
    assert scrub_text("Order for Ann Lee (pay_7319x, 7319)", ["Ann Lee", "7319"]) == (
        f"Order for {REMOVED} (pay_7319x, {REMOVED})"
    )
