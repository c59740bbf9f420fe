"""Scale benchmark of the checks (not collected by pytest).

    .venv/bin/python tests/checks/bench_checks.py 10000000

builds a synthetic warehouse of N payments, N/4 refunds, 3N/10 invoices, N/10 disputes,
N/10 subscriptions and N/2 intents (a few planted problems, realistic finding volumes) in
a temporary folder, runs every check and prints wall and CPU time per check and in total.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from recon.catalogue.resources import nightly_resources
from recon.checks import CheckParams, run_checks
from recon.warehouse.migrations import apply_migrations

RESOURCES = tuple(r.name for r in nightly_resources())

CUR = "['EUR','USD','GBP','JPY','BHD']"
RAW = '\'{"id": "x"}\''
BOOK = f"{RAW}, 'h', 'r1', 'r1', NULL"


def build(con: duckdb.DuckDBPyConnection, n: int) -> None:
    """Fill the warehouse with `n` payments and proportional other resources."""
    apply_migrations(con)
    statements = [
        f"""INSERT INTO payments SELECT 'pay_' || i, (hash(i) % 100000)::BIGINT + 1,
            {CUR}[(i % 5) + 1],
            CASE WHEN i % 10 = 3 THEN 'refunded' WHEN i % 1000 = 5 THEN 'pending'
                 ELSE 'confirmed' END,
            CASE WHEN i % 100000 = 0 THEN 'ORD-dup' ELSE 'ORD-' || i END,
            TIMESTAMPTZ '2026-11-20' - to_minutes((i % 1000)::INTEGER)
                - CASE WHEN i % 100000 = 5 THEN INTERVAL 30 DAY ELSE INTERVAL 0 DAY END,
            {BOOK} FROM range({n}) t(i)""",
        f"""INSERT INTO refunds SELECT 're_' || i, 'pay_' || (i * 10 + 3),
            (hash(i * 10 + 3) % 100000)::BIGINT + 1
                + CASE WHEN i % 100000 = 0 THEN 1 ELSE 0 END,
            {CUR}[((i * 10 + 3) % 5) + 1], 'succeeded', TIMESTAMPTZ '2026-11-20',
            {BOOK} FROM range({n // 10}) t(i)""",
        f"""INSERT INTO refunds SELECT 're_f' || i, 'pay_' || (i * 4 + 1), 100,
            {CUR}[((i * 4 + 1) % 5) + 1], 'failed', TIMESTAMPTZ '2026-11-20',
            {BOOK} FROM range({n * 15 // 100}) t(i)""",
        f"""INSERT INTO invoices SELECT 'in_' || i, 'cus_' || (i % {max(n // 10, 1)}),
            'sub_' || i, CASE WHEN i % 10 = 0 THEN 'open' ELSE 'paid' END,
            (hash(i) % 10000)::BIGINT + 1, {CUR}[(i % 5) + 1],
            CASE WHEN i % 3 = 0 THEN NULL ELSE DATE '2026-11-20' - (i % 200)::INTEGER END,
            TIMESTAMPTZ '2026-11-01', {BOOK} FROM range({n * 3 // 10}) t(i)""",
        f"""INSERT INTO disputes SELECT 'dp_' || i, 'pay_' || (i * 7 + 1),
            (hash(i) % 10000)::BIGINT, {CUR}[((i * 7 + 1) % 5) + 1], 'needs_response',
            'fraudulent', TIMESTAMPTZ '2026-11-01', {BOOK} FROM range({n // 10}) t(i)""",
        f"""INSERT INTO subscriptions SELECT 'sub_' || i, 'cus_' || i, 'price_1',
            CASE WHEN i % 1000 = 0 THEN 'canceled' ELSE 'active' END,
            TIMESTAMPTZ '2026-11-01', {BOOK} FROM range({n // 10}) t(i)""",
        f"""INSERT INTO payment_intents SELECT 'pi_' || i,
            CASE WHEN i % 100 = 0 THEN 'processing' ELSE 'succeeded' END, 'automatic',
            (hash(i) % 10000)::BIGINT, {CUR}[(i % 5) + 1],
            TIMESTAMPTZ '2026-11-20' - to_hours((i % 1000)::INTEGER),
            {BOOK} FROM range({n // 2}) t(i)""",
        "INSERT INTO runs (run_id, started_at, status) "
        "VALUES ('r1', TIMESTAMPTZ '2026-11-20 02:00:00+00', 'complete')",
        "INSERT INTO resource_scans (run_id, resource, status) SELECT 'r1', unnest(["
        + ", ".join(f"'{r}'" for r in RESOURCES)
        + "]), 'complete'",
        "CHECKPOINT",
    ]
    for statement in statements:
        con.execute(statement)


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        con = duckdb.connect(str(Path(folder) / "bench.duckdb"))
        started = time.perf_counter()
        build(con, n)
        print(f"built {n:,} payments in {time.perf_counter() - started:.1f} s")
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        runs = run_checks(
            con,
            run_id="r1",
            as_of=datetime(2026, 11, 20, 2, tzinfo=UTC),
            params=CheckParams(),
        )
        wall = time.perf_counter() - started
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        for run in sorted(runs, key=lambda r: -(r.duration_ms or 0.0)):
            print(
                f"{run.check_name:36s} {run.status:14s} {run.finding_count:>9,d} "
                f"{run.duration_ms or 0.0:8.0f} ms"
            )
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        print(f"all checks: {wall:.2f} s wall, {cpu:.2f} s CPU")
        con.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
