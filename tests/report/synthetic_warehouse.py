"""A synthetic warehouse for report and export tests: the migrated schema plus hand-made rows.

Ten nights, one run each (`20261111T020000Z-000011` … `20261120T020000Z-000020`).
The last night is incomplete
(two failed calls, disputes incomplete), the night of the 15th too; the others complete.
Findings in EUR, USD, JPY, BHD, a bad code `XYZ`, and cells that look like formulas.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from recon.catalogue.resources import nightly_resources
from recon.warehouse.migrations import apply_migrations

# The lists a nightly run reads, from the catalogue (tests/checks/test_catalogue.py checks it).
RESOURCES = tuple(r.name for r in nightly_resources())
NIGHTS = [f"202611{d:02d}T020000Z-0000{d:02d}" for d in range(11, 21)]
LAST = NIGHTS[-1]
COMPLETE = NIGHTS[-2]
INCOMPLETE_NIGHTS = {NIGHTS[4], LAST}

# (check, severity, entity, entity_id, currency, amount_minor, issue_type, detail)
LAST_FINDINGS = [
    (
        "refunded_amount_mismatch",
        "error",
        "payment",
        "pay_eur_1",
        "EUR",
        1250,
        "refunded_short",
        "refunded but counted refunds 0 of 1250",
    ),
    (
        "refunded_amount_mismatch",
        "error",
        "payment",
        "pay_eur_2",
        "EUR",
        100000,
        "refunded_short",
        "counted 0",
    ),
    (
        "refunded_amount_mismatch",
        "error",
        "payment",
        "pay_jpy_1",
        "JPY",
        900,
        "refunded_over",
        "over by 900",
    ),
    (
        "refunded_amount_mismatch",
        "error",
        "payment",
        "pay_bhd_1",
        "BHD",
        12345,
        "refunded_short",
        "short by 12.345",
    ),
    ("over_refunded", "error", "payment", "pay_usd_1", "USD", 777, "over_refunded", "<b>bold</b>"),
    (
        "impossible_amounts",
        "error",
        "payment",
        '=HYPERLINK("http://x")',
        "EUR",
        -1250,
        "negative_amount",
        "+cmd|' /C calc'!A0",
    ),
    (
        "impossible_amounts",
        "error",
        "payment",
        "pay_bad_cur",
        "XYZ",
        5000,
        "invalid_currency",
        "@SUM(1+1)",
    ),
    ("open_invoices", "info", "invoice", "inv_eur_1", "EUR", 5000, "0-30", "due in 3 days"),
    ("open_invoices", "info", "invoice", "inv_eur_2", "EUR", 2500, "31-60", "35 days late"),
    ("open_invoices", "info", "invoice", "inv_eur_3", "EUR", 1000, "90+", "120 days late"),
    ("open_invoices", "info", "invoice", "inv_jpy_1", "JPY", 3000, "61-90", "70 days late"),
    ("open_invoices", "info", "invoice", "inv_bhd_1", "BHD", 1500, "0-30", "due"),
    ("unknown_status", "warn", "payment", "pay_odd", None, None, "unknown_status", "-status weird"),
]
RESOLVED = [
    (
        "refunded_amount_mismatch",
        "error",
        "payment",
        "pay_fixed",
        "EUR",
        300,
        "refunded_short",
        "fixed",
    ),
]
# carried forward unchanged by a check that was not evaluated tonight
CARRIED = [
    (
        "dispute_on_refunded_payment",
        "warn",
        "dispute",
        "dp_carried_1",
        "EUR",
        4200,
        "dispute_on_refunded_payment",
        "dispute on a refunded payment (last night)",
    ),
]
OPEN_ROWS = len(LAST_FINDINGS) + len(CARRIED)
TOTAL_ROWS = OPEN_ROWS + len(RESOLVED)
CHECKS_LAST = [
    # name, severity, status, reason, description
    (
        "refunded_amount_mismatch",
        "error",
        "failed",
        None,
        "Refunded payment whose refunds do not add up.",
    ),
    ("over_refunded", "error", "failed", None, "Refunds above the payment amount."),
    ("impossible_amounts", "error", "failed", None, "Negative, non-integer or bad currency."),
    ("open_invoices", "info", "failed", None, "Every open invoice, with its age."),
    ("unknown_status", "warn", "failed", None, "Status not in the known set."),
    ("refund_currency_mismatch", "error", "passed", None, "Refund currency differs."),
    (
        "dispute_on_refunded_payment",
        "warn",
        "not_evaluated",
        "disputes incomplete in this run",
        "Dispute on a refunded payment.",
    ),
    (
        "broken_check",
        "warn",
        "errored",
        "Parser Error: syntax error at or near FROM",
        "A check whose SQL is broken.",
    ),
]


# named, so that columns other areas add to check_runs (e.g. `coverage`) keep their defaults
CHECK_RUNS_COLUMNS = (
    "run_id, check_name, severity, status, reason, description, finding_count, "
    "opening_count, new_count, resolved_count, closing_count, duration_ms"
)


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """The warehouse schema, through the migrations a real warehouse takes."""
    apply_migrations(con)


def build(path: Path, *, extra_findings: int = 0) -> duckdb.DuckDBPyConnection:
    """Create the warehouse at `path`; return an open read-write connection."""
    con = duckdb.connect(str(path))
    create_schema(con)
    start = datetime(2026, 11, 11, 2, 0, tzinfo=UTC)
    for i, run_id in enumerate(NIGHTS):
        started = start + timedelta(days=i)
        status = "incomplete" if run_id in INCOMPLETE_NIGHTS else "complete"
        reason = "2 calls failed for good after retries (disputes)" if run_id == LAST else None
        con.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, 'https://payments.example.com', 'cli', ?)",
            [
                run_id,
                started,
                started + timedelta(minutes=3, seconds=7),
                status,
                reason,
                started + timedelta(minutes=3),
            ],
        )
        for j, res in enumerate(RESOURCES):
            bad = run_id == LAST and res == "disputes"
            con.execute(
                "INSERT INTO resource_scans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    res,
                    "incomplete" if bad else "complete",
                    "page at offset 200 failed after 3 attempts" if bad else None,
                    5 + j,
                    1000 + 40 * i + 150 * j,
                    2 if res == "payments" else 0,
                    1 if bad else 0,
                    1 if (run_id == LAST and res == "payments") else 0,
                    40,
                    3,
                    0,
                ],
            )
        if run_id != LAST:
            # earlier nights: a varying number of findings, for the trend chart
            for k in range(5 + (i * 7) % 11):
                sev = ("error", "warn", "info")[k % 3]
                con.execute(
                    "INSERT INTO findings (run_id, check_name, severity, finding_key, state, "
                    "entity, "
                    "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
                    "VALUES (?, 'refunded_amount_mismatch', ?, ?, ?, "
                    "'payment', ?, 'EUR', 100, 'refunded_short', 'x', ?)",
                    [run_id, sev, f"k{k}", "new" if k % 4 == 0 else "open", f"pay_{k}", run_id],
                )
            con.execute(
                f"INSERT INTO check_runs ({CHECK_RUNS_COLUMNS}) "
                "VALUES (?, 'refunded_amount_mismatch', 'error', 'failed',"
                " NULL, 'd', 5, 4, 1, 0, 5, 12.0)",
                [run_id],
            )
    for check, sev, status, reason, desc in CHECKS_LAST:
        rows = [f for f in LAST_FINDINGS if f[0] == check]
        resolved = sum(1 for f in RESOLVED if f[0] == check)
        n = len(rows)
        con.execute(
            f"INSERT INTO check_runs ({CHECK_RUNS_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                LAST,
                check,
                sev,
                status,
                reason,
                desc,
                n,
                max(n - 1, 0) + resolved,
                min(n, 1),
                resolved,
                n,
                3.5,
            ],
        )
    for state, rows in (("new", LAST_FINDINGS), ("resolved", RESOLVED), ("open", CARRIED)):
        for check, sev, entity, eid, cur, amount, issue, detail in rows:
            con.execute(
                "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
                "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    LAST,
                    check,
                    sev,
                    f"{check}:{eid}:{issue}",
                    state,
                    entity,
                    eid,
                    cur,
                    amount,
                    issue,
                    detail,
                    LAST,
                ],
            )
    if extra_findings:
        con.execute(
            "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
            "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
            "SELECT $run, 'stuck_non_final', 'warn', "
            "'stuck_non_final:pay_' || i || ':stuck_pending', 'open', 'payment', 'pay_' || i, "
            "['EUR','JPY','BHD','USD'][i % 4 + 1], (i * 37) % 100000, 'stuck_pending', "
            "'pending for ' || (i % 30) || ' days', $run FROM range($n) t(i)",
            {"run": LAST, "n": extra_findings},
        )
        con.execute(
            f"INSERT INTO check_runs ({CHECK_RUNS_COLUMNS}) "
            "VALUES ($run, 'stuck_non_final', 'warn', 'failed', NULL, "
            "'Stuck in a non-final state.', $n, $n, 0, 0, $n, 50.0)",
            {"run": LAST, "n": extra_findings},
        )
    # the incomplete night's call log: one call retried to failure, one transport failure
    at = start + timedelta(days=9, minutes=1)
    calls = [
        (
            1,
            "disputes",
            "GET",
            "/api/v1/disputes",
            "max-records=200&skip=400",
            1,
            503,
            "service_unavailable",
            "try later",
            "req-disputes-a1",
            "retry",
        ),
        (
            1,
            "disputes",
            "GET",
            "/api/v1/disputes",
            "max-records=200&skip=400",
            2,
            503,
            "service_unavailable",
            "try later",
            "req-disputes-a2",
            "retry",
        ),
        (
            1,
            "disputes",
            "GET",
            "/api/v1/disputes",
            "max-records=200&skip=400",
            3,
            503,
            "service_unavailable",
            "=cmd try later",
            "req-disputes-a3",
            "failed",
        ),
        (
            2,
            "disputes",
            "GET",
            "/api/v1/disputes",
            "max-records=200&skip=200",
            1,
            None,
            "read_timeout",
            "no answer within 30 s",
            None,
            "failed",
        ),
        (
            3,
            "payments",
            "GET",
            "/api/v1/payments",
            "max-records=200&skip=0",
            1,
            200,
            None,
            None,
            "req-ok-1",
            "ok",
        ),
    ]
    for n, (cid, res, method, path_, query, attempt, status_, err, msg, rid, outcome) in enumerate(
        calls
    ):
        con.execute(
            "INSERT INTO api_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 12.5, ?, ?, 0)",
            [
                LAST,
                cid,
                res,
                method,
                path_,
                query,
                attempt,
                status_,
                err,
                msg,
                rid,
                outcome,
                at + timedelta(seconds=n),
            ],
        )
    return con
