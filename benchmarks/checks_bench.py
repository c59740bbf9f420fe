"""Part 4: all of `sql/checks` over a big warehouse generated directly in DuckDB.

The warehouse is built with set-based SQL (`range()` and `hash()`), never over HTTP and never
row by row in Python: at scale 1.0 it holds 10M payments, 2.5M refunds, 3M invoices, 1M
disputes, 1M payment intents and 500k subscriptions (400k customers), plus one `new`
version per record in `record_versions`, six nightly runs (a backfill and five nights of
~1/90 of each list) with complete `resource_scans`, and the checks of the fifth night
already recorded, so that the timed run (the sixth night) carries findings forward like a
real one. A sprinkle of anomalies (about 1 in 10,000 records per kind) is planted.

The merchant's books are on, as in a real night with books: a books orders file of one order
per payment (varied as in `benchmarks.matching_bench`: lower-case and `#`-prefixed references,
amounts within the tolerance, carts of two orders, orders without a reference, payments with
no order) and a books refunds file of every refund, loaded and matched by every rule of
`sql/matching/` (`recon.ledger.loading.load_books`, part of the night's load step, not timed)
for the fifth night and again for the sixth, so the timed checks include the ledger checks.

The file is cached under `benchmarks/results/` keyed by scale and generator version; the
timed run works on a copy (as the nightly run works on a copy of the published file).

    python -m benchmarks.checks_bench [--scale 1.0] [--regenerate]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._books import books_orders, books_refunds
from benchmarks._common import RESULTS
from recon.warehouse.migrations import apply_migrations

GENERATOR_VERSION = 5
ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
N_RUNS = 6


def run_ids() -> list[tuple[str, datetime]]:
    """Six nightly runs at 02:00 UTC, the last one on the anchor day (the one timed)."""
    runs = []
    for k in range(N_RUNS):
        started = ANCHOR - timedelta(days=N_RUNS - 1 - k) + timedelta(hours=2)
        runs.append((f"{started:%Y%m%dT%H%M%SZ}-b0000{k}", started))
    return runs


@dataclass(frozen=True)
class Sizes:
    payments: int
    refunds: int
    disputes: int
    invoices: int
    subscriptions: int
    customers: int
    payment_intents: int

    @classmethod
    def at(cls, scale: float) -> Sizes:
        n = int(10_000_000 * scale)
        n -= n % 40
        return cls(
            payments=n,
            refunds=n // 4,
            disputes=n // 10,
            invoices=n * 3 // 10,
            subscriptions=n // 20,
            customers=n // 25,
            payment_intents=n // 10,
        )

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def cache_path(scale: float) -> Path:
    return RESULTS / f"checks-{scale:g}x-v{GENERATOR_VERSION}.duckdb"


# Macros shared by the tables, so that a refund can recompute its payment's attributes.
_MACROS = """
CREATE OR REPLACE TEMP MACRO u(i, salt) AS hash(i, salt) % 1000000;
CREATE OR REPLACE TEMP MACRO anom(i, salt) AS hash(i, salt, 'anomaly') % 100000;
CREATE OR REPLACE TEMP MACRO rid(prefix, i) AS
    prefix || '_' || substr(md5(prefix || i::VARCHAR), 1, 8) || printf('%x', i);
CREATE OR REPLACE TEMP MACRO cur(i, salt) AS CASE
    WHEN hash(i, salt, 'cur') % 100 < 40 THEN 'EUR'
    WHEN hash(i, salt, 'cur') % 100 < 65 THEN 'USD'
    WHEN hash(i, salt, 'cur') % 100 < 80 THEN 'GBP'
    WHEN hash(i, salt, 'cur') % 100 < 92 THEN 'JPY'
    ELSE 'BHD' END;
CREATE OR REPLACE TEMP MACRO created(i, n, span_days) AS
    TIMESTAMPTZ '{anchor}'
        - to_milliseconds(CAST(1 + (i * (span_days * 86400000.0 - 1)) // n AS BIGINT));
CREATE OR REPLACE TEMP MACRO first_run(i, n) AS CASE
    WHEN i * 90 < n THEN '{r5}' WHEN i * 90 < 2 * n THEN '{r4}' WHEN i * 90 < 3 * n THEN '{r3}'
    WHEN i * 90 < 4 * n THEN '{r2}' WHEN i * 90 < 5 * n THEN '{r1}' ELSE '{r0}' END;
-- payments
CREATE OR REPLACE TEMP MACRO pay_amount(i) AS CAST(100 + hash(i, 'amt') % 99900 AS BIGINT);
CREATE OR REPLACE TEMP MACRO pay_group(i) AS CASE
    WHEN i % 4 = 0 THEN CASE WHEN u(i, 'st') < 500000 THEN 'refunded'
                             WHEN u(i, 'st') < 900000 THEN 'partially_refunded'
                             ELSE 'confirmed' END
    ELSE CASE WHEN u(i, 'st') < 900000 THEN 'confirmed'
              WHEN u(i, 'st') < 950000 THEN 'cancelled'
              WHEN u(i, 'st') < 998000 THEN 'expired'
              WHEN u(i, 'st') < 999000 THEN 'pending'
              ELSE 'created' END END;
CREATE OR REPLACE TEMP MACRO pay_status(i) AS CASE
    WHEN anom(i, 'pay') = 8 THEN 'on_hold'
    WHEN anom(i, 'pay') = 4 AND i % 4 = 0 THEN 'cancelled'
    ELSE pay_group(i) END;
CREATE OR REPLACE TEMP MACRO pay_cur(i) AS CASE WHEN anom(i, 'pay') = 6 THEN 'XYZ' ELSE cur(i,
    'pay') END;
"""


def _payments_sql(s: Sizes) -> str:
    return f"""
INSERT INTO payments
SELECT id, amount_minor, currency, status, reference, created_at,
       raw, md5(raw::VARCHAR), first_seen_run,
       CASE WHEN a = 10 THEN '{{r4}}' ELSE '{{r5}}' END,
       CASE WHEN a = 10 THEN '{{r5}}' END
FROM (
    SELECT i, a, id, amount_minor, currency, status, reference, created_at, first_seen_run,
           json_object('id', id, 'object', 'payment',
                       'amountMinor', CASE WHEN a = 7 THEN to_json(12.5)
                           ELSE to_json(amount_minor) END,
                       'currency', currency, 'status', status, 'reference', reference,
                       'createdAt', strftime(timezone('UTC', created_at), '%Y-%m-%dT%H:%M:%S.%gZ'),
                       'customer', json_object('id', rid('cus', i % {s.customers})),
                       'card', json_object('brand', 'visa', 'last4', lpad((i % 10000)::VARCHAR, 4,
                           '0')),
                       'metadata', json_object('orderId', 'ord_' || i)) AS raw
    FROM (
        SELECT i, anom(i, 'pay') AS a, rid('pay', i) AS id,
               CASE WHEN anom(i, 'pay') = 7 THEN NULL
                    WHEN anom(i, 'pay') = 5 THEN -pay_amount(i)
                    ELSE pay_amount(i) END AS amount_minor,
               pay_cur(i) AS currency, pay_status(i) AS status,
               'ord_' || CASE WHEN anom(i, 'pay') = 9 THEN i + 1 ELSE i END AS reference,
               created(i, {s.payments}, 90) AS created_at,
               first_run(i, {s.payments}) AS first_seen_run
        FROM range({s.payments}) AS t(i)
    )
)
"""


def _refunds_sql(s: Sizes) -> str:
    # Refund k is the refund of payment i = 4k (its status group decides amount and status).
    return f"""
INSERT INTO refunds
SELECT id, payment_id, amount_minor, currency, status, created_at,
       raw, md5(raw::VARCHAR), first_seen_run,
       CASE WHEN ra = 10 THEN '{{r4}}' ELSE '{{r5}}' END,
       CASE WHEN ra = 10 THEN '{{r5}}' END
FROM (
    SELECT *, json_object('id', id, 'object', 'refund', 'paymentId', payment_id,
                          'amount', json_object('amountMinor', amount_minor, 'currency', currency),
                          'status', status, 'reason', 'requested_by_customer',
                          'createdAt', strftime(timezone('UTC', created_at),
                              '%Y-%m-%dT%H:%M:%S.%gZ'),
                          'metadata', json_object('ticket', 'T' || k)) AS raw
    FROM (
        SELECT k, anom(k, 'ref') AS ra, rid('re', k) AS id,
               CASE WHEN anom(4 * k, 'pay') = 3 THEN 'pay_unknown_' || k ELSE rid('pay', 4 * k) END
                   AS payment_id,
               CASE WHEN anom(4 * k, 'pay') = 1 THEN pay_amount(4 * k) + 500
                    WHEN anom(4 * k, 'pay') = 0 THEN pay_amount(4 * k) - 1
                    WHEN pay_group(4 * k) = 'partially_refunded' THEN pay_amount(4 * k) // 2
                    ELSE pay_amount(4 * k) END AS amount_minor,
               CASE WHEN anom(4 * k, 'pay') = 2 THEN
                        CASE WHEN pay_cur(4 * k) = 'USD' THEN 'EUR' ELSE 'USD' END
                    ELSE pay_cur(4 * k) END AS currency,
               CASE WHEN pay_group(4 * k) = 'confirmed' THEN 'failed'
                    WHEN anom(k, 'ref') = 8 THEN 'on_hold'
                    WHEN u(k, 'rst') < 4000 THEN 'pending'
                    ELSE 'succeeded' END AS status,
               least(created(4 * k, {s.payments}, 90) + INTERVAL 1 DAY,
                     TIMESTAMPTZ '{{anchor}}' - INTERVAL 1 SECOND) AS created_at,
               first_run(4 * k, {s.payments}) AS first_seen_run
        FROM range({s.refunds}) AS t(k)
    )
)
"""


def _disputes_sql(s: Sizes) -> str:
    statuses = (
        "['needs_response','under_review','won','lost',"
        "'warning_needs_response','warning_under_review','warning_closed']"
    )
    return f"""
INSERT INTO disputes
SELECT id, payment_id, amount_minor, currency, status, reason, created_at,
       raw, md5(raw::VARCHAR), first_run(d, {s.disputes}), '{{r5}}', NULL
FROM (
    SELECT *, json_object('id', id, 'object', 'dispute', 'paymentId', payment_id,
                          'amount', json_object('amountMinor', amount_minor, 'currency', currency),
                          'status', status, 'reason', reason,
                          'createdAt', strftime(timezone('UTC', created_at),
                              '%Y-%m-%dT%H:%M:%S.%gZ'),
                          'evidence', json_object('dueBy', '2026-12-31')) AS raw
    FROM (
        SELECT d, p, rid('dp', d) AS id, rid('pay', p) AS payment_id,
               pay_amount(p) AS amount_minor, pay_cur(p) AS currency,
               {statuses}[CAST(1 + hash(d, 'dst') % 7 AS BIGINT)] AS status,
               ['fraudulent','duplicate','product_not_received','unrecognized'][CAST(1 + hash(d,
                   'drs') % 4 AS BIGINT)] AS reason,
               created(d, {s.disputes}, 90) AS created_at
        FROM (SELECT d, CASE WHEN hash(d, 'dpp') % 1000 = 0 THEN 20 * (d // 2)
            ELSE 10 * d + 1 END AS p
              FROM range({s.disputes}) AS t(d))
    )
)
"""


def _subscriptions_sql(s: Sizes) -> str:
    return f"""
INSERT INTO subscriptions
SELECT id, customer_id, price_id, status, created_at, raw, md5(raw::VARCHAR),
       first_run(x, {s.subscriptions}), '{{r5}}', NULL
FROM (
    SELECT *, json_object('id', id, 'object', 'subscription', 'customerId', customer_id,
                          'priceId', price_id, 'status', status,
                          'createdAt', strftime(timezone('UTC', created_at),
                              '%Y-%m-%dT%H:%M:%S.%gZ')) AS raw
    FROM (
        SELECT x, rid('sub', x) AS id, rid('cus', x % {s.customers}) AS customer_id,
               'price_' || (x % 7) AS price_id,
               CASE WHEN u(x, 'sst') < 800000 THEN 'active' WHEN u(x,
                   'sst') < 900000 THEN 'canceled'
                    WHEN u(x, 'sst') < 940000 THEN 'past_due' WHEN u(x,
                        'sst') < 970000 THEN 'trialing'
                    WHEN u(x, 'sst') < 990000 THEN 'unpaid' ELSE 'paused' END AS status,
               created(x, {s.subscriptions}, 720) AS created_at
        FROM range({s.subscriptions}) AS t(x)
    )
)
"""


def _invoices_sql(s: Sizes) -> str:
    return f"""
INSERT INTO invoices
SELECT id, customer_id, subscription_id, status, amount_due_minor, currency, due_date, created_at,
       raw, md5(raw::VARCHAR), first_run(v, {s.invoices}), '{{r5}}', NULL
FROM (
    SELECT *, json_object('id', id, 'object', 'invoice', 'customerId', customer_id,
                          'subscriptionId', subscription_id, 'status', status,
                          'amountDue', json_object('amountMinor', amount_due_minor, 'currency',
                              currency),
                          'dueDate', strftime(due_date, '%Y-%m-%d'),
                          'createdAt', strftime(timezone('UTC', created_at),
                              '%Y-%m-%dT%H:%M:%S.%gZ')) AS raw
    FROM (
        SELECT v, rid('in', v) AS id, rid('cus', v % {s.customers}) AS customer_id,
               rid('sub', v % {s.customers}) AS subscription_id,
               CASE WHEN anom(v, 'inv') = 8 THEN 'overdue'
                    WHEN u(v, 'ist') < 920000 THEN 'paid' WHEN u(v, 'ist') < 960000 THEN 'open'
                    WHEN u(v, 'ist') < 985000 THEN 'void' WHEN u(v, 'ist') < 995000 THEN 'draft'
                    ELSE 'uncollectible' END AS status,
               CASE WHEN anom(v, 'inv') IN (1, 2, 3, 4, 5, 6, 7, 9, 10) THEN 0
                    WHEN anom(v, 'inv') = 0 THEN -500
                    ELSE CAST(500 + hash(v, 'iam') % 50000 AS BIGINT) END AS amount_due_minor,
               CASE WHEN anom(v, 'inv') = 11 THEN 'EURO' ELSE cur(v, 'inv') END AS currency,
               CAST(timezone('UTC', created(v, {s.invoices}, 365)) AS DATE) + 30 AS due_date,
               created(v, {s.invoices}, 365) AS created_at
        FROM range({s.invoices}) AS t(v)
    )
)
"""


def _intents_sql(s: Sizes) -> str:
    return f"""
INSERT INTO payment_intents
SELECT id, status, capture_method, amount_minor, currency, created_at, raw, md5(raw::VARCHAR),
       first_run(x, {s.payment_intents}), '{{r5}}', NULL
FROM (
    SELECT *, json_object('id', id, 'object', 'payment_intent', 'status', status,
                          'captureMethod', capture_method, 'amount', amount_minor,
                          'currency', currency,
                          'createdAt', strftime(timezone('UTC', created_at),
                              '%Y-%m-%dT%H:%M:%S.%gZ')) AS raw
    FROM (
        SELECT x, rid('pi', x) AS id,
               CASE WHEN u(x, 'pst') < 930000 THEN 'succeeded' WHEN u(x,
                   'pst') < 980000 THEN 'cancelled'
                    ELSE ['requires_payment_method', 'requires_action',
                          'requires_capture', 'processing'][CAST(1 + hash(x, 'pnf') % 4 AS BIGINT)]
               END AS status,
               CASE WHEN hash(x, 'cap') % 10 = 0 THEN 'manual'
                   ELSE 'automatic' END AS capture_method,
               CASE WHEN anom(x, 'pi') = 5 THEN -1000 ELSE CAST(100 + hash(x,
                   'pam') % 99900 AS BIGINT) END
                   AS amount_minor,
               cur(x, 'pi') AS currency,
               created(x, {s.payment_intents}, 30) AS created_at
        FROM range({s.payment_intents}) AS t(x)
    )
)
"""


_TABLES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")


def _versions_sql(table: str, amount: str, anomaly: str | None) -> str:
    """Version 1 (`new`) of every record in its first run; for planted changes (anomaly 11:
    a status that could not have come before; 12: an amount change) version 1 has the old
    values and version 2 (`changed`) is tonight's; for vanished records version 2 is `gone`.
    As in the loader, `raw` is NULL on a record's latest version (the current table has it)."""
    status_v1 = "status"
    amount_v1 = amount
    hash_v1 = "content_hash"
    changed = "FALSE"
    if anomaly is not None:
        status_v1 = f"CASE WHEN {anomaly} = 11 THEN 'refunded' ELSE status END"
        amount_v1 = f"CASE WHEN {anomaly} = 12 THEN {amount} + 1 ELSE {amount} END"
        hash_v1 = f"CASE WHEN {anomaly} IN (11, 12) THEN md5(content_hash) ELSE content_hash END"
        changed = f"{anomaly} IN (11, 12)"
    return f"""
INSERT INTO record_versions
SELECT '{table}', id, 1, CASE WHEN {changed} AND first_seen_run = '{{r5}}' THEN '{{r4}}'
    ELSE first_seen_run END,
       'new', {status_v1}, {amount_v1}, currency, {hash_v1},
       CASE WHEN ({changed}) OR gone_in_run IS NOT NULL THEN raw END
FROM {table};
INSERT INTO record_versions
SELECT '{table}', id, 2, '{{r5}}', CASE WHEN gone_in_run IS NOT NULL THEN 'gone' ELSE 'changed' END,
       CASE WHEN gone_in_run IS NULL THEN status END, CASE
           WHEN gone_in_run IS NULL THEN {amount} END,
       CASE WHEN gone_in_run IS NULL THEN currency END,
       CASE WHEN gone_in_run IS NULL THEN content_hash END, CAST(NULL AS JSON)
FROM {table}
WHERE gone_in_run IS NOT NULL OR ({changed});
"""


def _books(con: duckdb.DuckDBPyConnection, folder: Path, stem: str) -> dict[str, Path]:
    """The books' files for the payments and refunds in the warehouse (matching_bench's mix:
    1% lower-case reference, 0.5% `#REF`, 0.5% two minor units above, 0.5% carts of two
    orders, 0.2% no reference, 0.1% no order)."""
    paths = {
        "orders": folder / f"{stem}-books-orders.csv",
        "refunds": folder / f"{stem}-books-refunds.csv",
    }
    books_orders(con, paths["orders"], where="amount_minor IS NOT NULL AND reference IS NOT NULL")
    books_refunds(con, paths["refunds"])
    return paths


def _books_settings(db: Path, books: dict[str, Path]) -> Any:
    from recon.config.settings import settings_from

    return settings_from(
        db=str(db),
        ledger_orders=str(books["orders"]),
        ledger_refunds=str(books["refunds"]),
        ledger_tolerance_minor=5,
        ledger={"match": {"books_reference": "^#?(.*)$"}},
    )


def generate(path: Path, scale: float, *, say: Any = print) -> dict[str, Any]:
    """Build the warehouse at `path` (replacing it); returns sizes and timings."""
    from recon.checks import CheckParams, ensure_reference_tables, run_checks

    sizes = Sizes.at(scale)
    runs = run_ids()
    names = {f"r{k}": rid for k, (rid, _) in enumerate(runs)}
    fmt = {"anchor": ANCHOR.strftime("%Y-%m-%d %H:%M:%S+00"), **names}
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    # bounded: unbounded, generating 10M with the books peaked at 21 GB on a 24 GB machine
    con = duckdb.connect(str(tmp), config={"memory_limit": "6GB"})
    try:
        apply_migrations(con)
        con.execute(_MACROS.format(**fmt))
        for table, sql in (
            ("payments", _payments_sql(sizes)),
            ("refunds", _refunds_sql(sizes)),
            ("disputes", _disputes_sql(sizes)),
            ("subscriptions", _subscriptions_sql(sizes)),
            ("invoices", _invoices_sql(sizes)),
            ("payment_intents", _intents_sql(sizes)),
        ):
            t0 = time.perf_counter()
            con.execute(sql.format(**fmt))
            timings[table] = time.perf_counter() - t0
            say(f"  generated {table}: {timings[table]:.1f}s")
        t0 = time.perf_counter()
        amount_col = {"invoices": "amount_due_minor"}
        for table in _TABLES:
            amount = amount_col.get(table, "amount_minor")
            anomaly: str | None = None
            if table == "payments":
                anomaly = "anom(CAST(('0x' || split_part(id, '_', 2)[9:]) AS BIGINT), 'pay')"
            elif table == "refunds":
                anomaly = "anom(CAST(('0x' || split_part(id, '_', 2)[9:]) AS BIGINT), 'ref')"
            if table in ("subscriptions", "payment_intents", "disputes", "invoices"):
                amount = {"subscriptions": "CAST(NULL AS BIGINT)"}.get(table, amount)
            if table == "subscriptions":
                sql = (
                    _versions_sql(table, amount, None)
                    .replace("currency,", "CAST(NULL AS VARCHAR),")
                    .replace("THEN currency END", "THEN CAST(NULL AS VARCHAR) END")
                )
            else:
                sql = _versions_sql(table, amount, anomaly)
            con.execute(sql.format(**fmt))
        timings["record_versions"] = time.perf_counter() - t0
        say(f"  generated record_versions: {timings['record_versions']:.1f}s")
        # Runs and their scans: every resource complete in every run.
        for rid, started_at in runs:
            con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 'complete', NULL, 'http://127.0.0.1', 'cli', ?)",
                [
                    rid,
                    started_at,
                    started_at + timedelta(minutes=20),
                    started_at + timedelta(minutes=15),
                ],
            )
        for table in _TABLES:
            con.execute(
                f"""
                INSERT INTO resource_scans
                SELECT r.run_id, '{table}', 'complete', NULL,
                       CAST(ceil(count(t.id) / 200.0) AS INTEGER), count(t.id), 0, 0, 0,
                       count(t.id) FILTER (WHERE t.first_seen_run = r.run_id), 0,
                       count(t.id) FILTER (WHERE t.gone_in_run = r.run_id)
                FROM runs AS r
                LEFT JOIN {table} AS t ON t.first_seen_run <= r.run_id
                GROUP BY r.run_id
                """
            )
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status, reason) "
            "SELECT run_id, 'payment_methods', 'skipped', 'not requested' FROM runs"
        )
        ensure_reference_tables(con)
        timings["tables"] = time.perf_counter() - started
        from recon.ledger.loading import load_books

        t0 = time.perf_counter()
        books = _books(con, path.parent, path.stem)
        settings = _books_settings(tmp, books)
        con.execute("CHECKPOINT")
        prev_id, prev_at = runs[-2]
        load_books(con, settings, prev_id)
        timings["books"] = time.perf_counter() - t0
        say(f"  books written, loaded and matched: {timings['books']:.1f}s")
        # The previous night's checks, so tonight's run carries findings forward.
        t0 = time.perf_counter()
        run_checks(con, run_id=prev_id, as_of=prev_at, params=CheckParams())
        timings["previous_checks"] = time.perf_counter() - t0
        say(f"  previous night's checks: {timings['previous_checks']:.1f}s")
        t0 = time.perf_counter()
        load_books(con, settings, runs[-1][0])  # tonight's load step
        timings["books_tonight"] = time.perf_counter() - t0
        say(f"  tonight's books: {timings['books_tonight']:.1f}s")
        con.execute("CHECKPOINT")
        for file in books.values():  # in the warehouse now
            file.unlink()
    finally:
        con.close()
    tmp.rename(path)
    timings["total"] = time.perf_counter() - started
    meta = {"scale": scale, "sizes": sizes.as_dict(), "generate_s": timings}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def bench_checks(scale: float, *, regenerate: bool = False, say: Any = print) -> dict[str, Any]:
    """Generate (or reuse) the warehouse, then time `run_checks` for tonight on a copy."""
    from recon.checks import CheckParams, run_checks

    path = cache_path(scale)
    meta_path = path.with_suffix(".json")
    if regenerate or not path.exists() or not meta_path.exists():
        say(f"generating the checks warehouse at scale {scale:g} → {path}")
        meta = generate(path, scale, say=say)
        generated = True
    else:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        generated = False
    work = path.with_name(path.stem + ".work.duckdb")
    work.unlink(missing_ok=True)
    shutil.copyfile(path, work)
    run_id, as_of = run_ids()[-1]
    con = duckdb.connect(str(work))
    try:
        counts = {
            t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
            for t in (*_TABLES, "record_versions", "ledger_orders", "ledger_refunds")
        }
        t0, cpu0 = time.perf_counter(), time.process_time()
        results = run_checks(con, run_id=run_id, as_of=as_of, params=CheckParams())
        total = time.perf_counter() - t0
        # CPU-seconds of this process, DuckDB's threads included (a shared machine's load
        # stretches the wall time; the copy of the file before is not in it)
        cpu_s = time.process_time() - cpu0
        per_check = [
            {
                "check": r.check_name,
                "status": r.status,
                "findings": r.finding_count,
                "new": r.new_count,
                "resolved": r.resolved_count,
                "duration_ms": round(r.duration_ms or 0.0, 1),
                "reason": r.reason,
            }
            for r in results
        ]
    finally:
        con.close()
        work.unlink(missing_ok=True)
        work.with_name(work.name + ".wal").unlink(missing_ok=True)
    evaluate_ms = sum(c["duration_ms"] for c in per_check)
    return {
        "scale": scale,
        "rows": counts,
        "generated_now": generated,
        "generate_s": meta.get("generate_s", {}),
        "total_s": round(total, 3),
        "cpu_s": round(cpu_s, 3),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "evaluate_s": round(evaluate_ms / 1000.0, 3),
        "record_s": round(total - evaluate_ms / 1000.0, 3),
        "findings": sum(c["findings"] for c in per_check),
        "checks": sorted(per_check, key=lambda c: -c["duration_ms"]),
        "db_mb": round(path.stat().st_size / 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--regenerate", action="store_true")
    args = parser.parse_args(argv)
    result = bench_checks(
        args.scale, regenerate=args.regenerate, say=lambda m: print(m, file=sys.stderr)
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
