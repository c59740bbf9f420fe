"""Part 5: rendering the report of a run with 100,000 findings.

A warehouse is built directly in DuckDB (set-based SQL): ten nightly runs, 20 check_runs
each, and per night `--findings` findings (new/open, plus resolved ones) spread over the
checks the way a big merchant's night looks (open invoices and stuck records dominate),
with realistic `detail` text, in EUR/USD/GBP/JPY/BHD; the last night also has failed calls.
Then `recon.report.render_report(con, run_id=…, reports_dir=…)` is timed for the last night,
and report.html is opened in headless Chromium (Debian's, driven by Playwright) to time how
long the page takes until its findings explorer shows the first rows (`browser_ready_ms`,
from navigation start), and how long a search, a currency filter and a sort by amount take
to update the rows shown.

    python -m benchmarks.report_bench [--findings 100000] [--no-browser]

prints one JSON line: render_s, the browser figures, files and their sizes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from recon.warehouse.migrations import apply_migrations

NIGHTS = 10
CHROMIUM = "/usr/bin/chromium"
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ANCHOR = datetime(2026, 11, 20, 2, tzinfo=UTC)
RESOURCES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")
# (check, severity, entity, issue types, share of the night's findings in 1/1000)
CHECKS: tuple[tuple[str, str, str, tuple[str, ...], int], ...] = (
    ("open_invoices", "info", "invoice", ("0-30", "31-60", "61-90", "90+"), 400),
    ("stuck_non_final", "warn", "payment", ("stuck_pending", "stuck_created"), 255),
    ("open_invoice_inactive_subscription", "warn", "invoice", ("inactive_subscription",), 100),
    ("dispute_on_refunded_payment", "warn", "dispute", ("dispute_on_refunded_payment",), 60),
    ("duplicate_payment_reference", "warn", "payment", ("duplicate_reference",), 40),
    ("refunded_amount_mismatch", "error", "payment", ("refunded_short", "refunded_over"), 30),
    ("partially_refunded_out_of_range", "error", "payment", ("partial_without_refund",), 20),
    ("over_refunded", "error", "payment", ("over_refunded",), 20),
    ("impossible_amounts", "error", "payment", ("negative_amount", "invalid_currency"), 20),
    ("unknown_status", "warn", "refund", ("unknown_status",), 15),
    ("refund_unknown_payment", "error", "refund", ("unknown_payment",), 10),
    ("refund_currency_mismatch", "error", "refund", ("currency_mismatch",), 10),
    ("refund_on_unrefundable_payment", "error", "refund", ("unrefundable_payment_state",), 10),
    ("vanished_records", "warn", "payment", ("vanished",), 5),
    ("suspicious_changes", "warn", "payment", ("illegal_transition", "amount_changed"), 5),
    ("confirmed_with_refunds", "error", "payment", ("confirmed_with_refunds",), 0),
    ("open_invoice_nonpositive_amount", "warn", "invoice", ("nonpositive_amount_due",), 0),
    ("intent_negative_amount", "error", "payment_intent", ("negative_amount",), 0),
    ("extraction_completeness", "error", "resource", ("incomplete",), 0),
    ("volume_anomaly", "warn", "resource", ("volume_spike",), 0),
)


def night(k: int) -> tuple[str, datetime]:
    started = ANCHOR - timedelta(days=NIGHTS - 1 - k)
    return f"{started:%Y%m%dT%H%M%SZ}-c0000{k}", started


def build(path: Path, findings: int) -> float:
    """The warehouse at `path`; returns seconds taken."""
    t0 = time.perf_counter()
    con = duckdb.connect(str(path))
    try:
        apply_migrations(con)
        con.execute(
            "CREATE TEMP TABLE checks (k INTEGER, check_name VARCHAR, severity VARCHAR, "
            "entity VARCHAR, issue_types VARCHAR[], share INTEGER, lo INTEGER, hi INTEGER)"
        )
        lo = 0
        for k, (name, severity, entity, issues, share) in enumerate(CHECKS):
            con.execute(
                "INSERT INTO temp.checks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [k, name, severity, entity, list(issues), share, lo, lo + share],
            )
            lo += share
        for k in range(NIGHTS):
            run_id, started = night(k)
            con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 'complete', NULL, 'http://127.0.0.1', 'cli', ?)",
                [run_id, started, started + timedelta(minutes=20), started + timedelta(minutes=15)],
            )
            for r, resource in enumerate(RESOURCES):
                records = 10_000_000 // (r + 1) + k * 1000
                con.execute(
                    "INSERT INTO resource_scans (run_id, resource, status, pages, records, "
                    "new_records) VALUES (?, ?, 'complete', ?, ?, ?)",
                    [run_id, resource, records // 200, records, 110_000 // (r + 1)],
                )
            # This night's findings: key i in [0, findings) for check c with i*1000/findings
            # in [lo, hi); a finding is new when its key was not in last night's range.
            con.execute(
                """
                INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity,
                    entity_id, currency, amount_minor, issue_type, detail, first_seen_run)
                SELECT $run_id, c.check_name, c.severity,
                       c.check_name || ':' || eid || ':' || issue, state, c.entity, eid, cur,
                       amount, issue, detail, first_seen
                FROM (
                    SELECT i, c.*,
                           CASE c.entity WHEN 'invoice' THEN 'in_' WHEN 'refund' THEN 're_'
                                WHEN 'dispute' THEN 'dp_' WHEN 'resource' THEN 'res_'
                                ELSE 'pay_' END || substr(md5(i::VARCHAR), 1, 12) AS eid,
                           c.issue_types[CAST(1 + hash(i) % len(c.issue_types) AS BIGINT)] AS issue,
                           ['EUR','USD','GBP','JPY','BHD'][CAST(1 + hash(i,
                               'c') % 5 AS BIGINT)] AS cur,
                           CAST(100 + hash(i, 'a') % 99900 AS BIGINT) AS amount,
                           CASE WHEN i >= $kept THEN 'new' ELSE 'open' END AS state,
                           CASE WHEN i >= $kept THEN $run_id ELSE $first END AS first_seen,
                           c.entity || ' ' || c.check_name || ': refunded EUR '
                               || (hash(i, 'a') % 99900 // 100) || '.' || lpad((hash(i,
                                   'a') % 100)::VARCHAR, 2, '0')
                               || ' of EUR ' || (hash(i, 'b') % 99900 // 100)
                                   || '.00 (in flight: EUR 0.00; '
                               || (1 + hash(i) % 3) || ' counted refunds)' AS detail
                    FROM range($n) AS t(i)
                    JOIN temp.checks AS c
                      ON i * 1000 // $n >= c.lo AND i * 1000 // $n < c.hi
                ) AS c
                """,
                {
                    "run_id": run_id,
                    "n": findings,
                    "kept": int(findings * 0.98),
                    "first": night(0)[0],
                },
            )
            # A few resolved ones (2% of the night before, carried as `resolved`).
            con.execute(
                """
                INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity,
                    entity_id, currency, amount_minor, issue_type, detail, first_seen_run)
                SELECT $run_id, check_name, severity, finding_key || ':r', 'resolved', entity,
                       entity_id || 'r', currency, amount_minor, issue_type, detail, first_seen_run
                FROM findings WHERE run_id = $run_id AND state = 'new'
                """,
                {"run_id": run_id},
            )
            con.execute(
                """
                INSERT INTO check_runs (run_id, check_name, severity, status, reason,
                    description, finding_count, opening_count, new_count, resolved_count,
                    closing_count, duration_ms)
                SELECT $run_id, c.check_name, c.severity,
                       CASE WHEN count(f.finding_key) > 0 THEN 'failed' ELSE 'passed' END, NULL,
                       'The check ' || c.check_name,
                           count(f.finding_key) FILTER (WHERE f.state <> 'resolved'),
                       count(f.finding_key) FILTER (WHERE f.state <> 'new'),
                       count(f.finding_key) FILTER (WHERE f.state = 'new'),
                       count(f.finding_key) FILTER (WHERE f.state = 'resolved'),
                       count(f.finding_key) FILTER (WHERE f.state <> 'resolved'), 12.5
                FROM temp.checks AS c
                LEFT JOIN findings AS f ON f.run_id = $run_id AND f.check_name = c.check_name
                GROUP BY c.check_name, c.severity
                """,
                {"run_id": run_id},
            )
        last_id, last_at = night(NIGHTS - 1)
        con.execute(
            """
            INSERT INTO api_calls
            SELECT $run_id, 'call-' || (i // 3), 'payments', 'GET', '/api/v1/payments',
                   'skip=' || (i // 3 * 200) || '&max-records=200', 1 + i % 3,
                   503, 'unavailable', 'The service is temporarily unavailable', 'req_' || i,
                   12.5, CASE WHEN i % 3 = 2 THEN 'failed' ELSE 'retry' END,
                   $at + to_seconds(i), CASE WHEN i % 3 = 0 THEN 0 ELSE 1000 END
            FROM range(60) AS t(i)
            """,
            {"run_id": last_id, "at": last_at},
        )
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return time.perf_counter() - t0


def browse(html: Path) -> dict[str, Any]:
    """Open `html` in headless Chromium; time the explorer's first rows and a few actions."""
    from playwright.sync_api import Page, sync_playwright

    def timed(page: Page, action: Any) -> float:
        # the explorer counts its renders in data-renders: wait for the next one
        before = page.get_attribute("#explore", "data-renders")
        t0 = time.perf_counter()
        action()
        page.wait_for_function(
            "b => document.getElementById('explore').dataset.renders !== b", arg=before
        )
        return round((time.perf_counter() - t0) * 1000, 1)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            t0 = time.perf_counter()
            page.goto(html.resolve().as_uri(), timeout=120_000)
            page.wait_for_function(
                "() => document.documentElement.dataset.exploreReady", timeout=120_000
            )
            wall_ms = (time.perf_counter() - t0) * 1000
            ready_ms = float(page.evaluate("document.documentElement.dataset.exploreReady"))
            status = page.locator("#explore-status").inner_text()
            search_ms = timed(page, lambda: page.fill("#f-q", "dispute jpy"))
            timed(page, lambda: page.fill("#f-q", ""))
            currency_ms = timed(page, lambda: page.select_option("#f-currency", "JPY"))
            sort_ms = timed(page, lambda: page.select_option("#f-sort", "amount-asc"))
            age_ms = timed(page, lambda: page.select_option("#f-sort", "age-desc"))
        finally:
            browser.close()
    return {
        "browser_ready_ms": round(ready_ms, 1),
        "browser_wall_ms": round(wall_ms, 1),
        "browser_status": status,
        "search_ms": search_ms,
        "currency_filter_ms": currency_ms,
        "sort_amount_ms": sort_ms,
        "sort_age_ms": age_ms,
    }


def bench(findings: int, browser: bool = True) -> dict[str, Any]:
    from recon.report import render_report

    with tempfile.TemporaryDirectory(prefix="recon-bench-report-") as tmp:
        db = Path(tmp) / "report.duckdb"
        build_s = build(db, findings)
        run_id, _ = night(NIGHTS - 1)
        con = duckdb.connect(str(db), read_only=True)
        try:
            tonight = con.execute(
                "SELECT count(*) FILTER (WHERE state <> 'resolved'), count(*) FROM findings "
                "WHERE run_id = ?",
                [run_id],
            ).fetchone()
            reports = Path(tmp) / "reports"
            t0, cpu0 = time.perf_counter(), time.process_time()
            paths = render_report(con, run_id=run_id, reports_dir=reports)
            render_s = time.perf_counter() - t0
            # this process's CPU (DuckDB's threads too): on a shared machine the wall time
            # says as much about the other jobs as about the report
            render_cpu_s = time.process_time() - cpu0
        finally:
            con.close()
        folder = reports / run_id
        files = {
            p.name: round(p.stat().st_size / 1e6, 2)
            for p in sorted(folder.iterdir())
            if p.is_file()
        }
        seen: dict[str, Any] = {}
        if browser and shutil.which(CHROMIUM):
            seen = browse(paths.report_html)
        elif browser:
            seen = {"browser": f"skipped: {CHROMIUM} is missing"}
    return {
        "findings": int(tonight[0]) if tonight else 0,
        "finding_rows": int(tonight[1]) if tonight else 0,
        "build_s": round(build_s, 2),
        "render_s": round(render_s, 3),
        "render_cpu_s": round(render_cpu_s, 3),
        **seen,
        "files_mb": files,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--findings", type=int, default=100_000)
    parser.add_argument(
        "--no-browser", action="store_true", help="do not time report.html in Chromium"
    )
    args = parser.parse_args()
    print(json.dumps(bench(args.findings, browser=not args.no_browser)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
