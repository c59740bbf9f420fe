"""Part 7: the merchant's books against the provider at scale (issue 11's target).

1M books orders (CSV, default columns) against 1M payments already in the warehouse, plus
250k books refunds against 250k provider refunds: the timed part is what a nightly run adds
for the books — read and convert the files (`load_books`: polars, exact amounts, rejects),
match them (`sql/ledger/matches.sql`), run the 13 ledger checks, and build the report's
"Books vs provider" section with its exports. Target: ≤ 10 s.

The warehouse and the books are generated with set-based DuckDB SQL (not timed). About
1 in 1,000 orders carries a break (amount, currency, missing at the provider, missing in
the books), so the checks find something and the exports are not empty.

    python -m benchmarks.ledger_bench [--orders 1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._books import books_pass, books_refunds, provider_side, summary_line

TARGET_S = 10.0


def _generate(con: duckdb.DuckDBPyConnection, folder: Path, n: int) -> dict[str, Path]:
    """Payments and refunds in the warehouse; the books as CSV files (default columns).

    1 in 1,000 settled payments is missing from the books, 1 in 1,000 orders is missing at
    the provider; 1 in 1,000 orders is a minor unit off, 1 in 1,000 in another currency.
    """
    provider_side(con, n)
    paths = {"orders": folder / "orders.csv", "refunds": folder / "refunds.csv"}
    con.execute(
        f"""
        COPY (
            SELECT reference,
                   'SO-' || id AS order_id,
                   amount_minor + CASE WHEN hash(id) % 1000 = 1 THEN 1 ELSE 0 END AS amount_minor,
                   CASE WHEN hash(id) % 1000 = 2 THEN 'CHF' ELSE currency END AS currency,
                   status,
                   strftime(created_at - INTERVAL 2 MINUTE, '%Y-%m-%dT%H:%M:%SZ') AS created_at
            FROM payments WHERE hash(id) % 1000 <> 3
            UNION ALL
            SELECT 'ORD-BOOKS-' || i, 'SO-B' || i, 5000, 'EUR', 'confirmed', '2026-11-01T10:00:00Z'
            FROM range($extra) AS t(i)
        ) TO '{paths["orders"]}' (HEADER, DELIMITER ',')
        """,
        {"extra": max(1, n // 1000)},
    )
    books_refunds(con, paths["refunds"])
    return paths


def bench(n: int) -> dict[str, Any]:
    from recon.config.settings import settings_from

    with tempfile.TemporaryDirectory(prefix="recon-ledger-bench-") as tmp:
        folder = Path(tmp)
        con = duckdb.connect(str(folder / "recon.duckdb"), config={"memory_limit": "2GB"})
        con.execute("SET TimeZone = 'UTC'")
        started = time.perf_counter()
        paths = _generate(con, folder, n)
        con.execute("CHECKPOINT")  # as after the night's API load, which commits before
        generated = time.perf_counter() - started
        settings = settings_from(
            ledger_orders=str(paths["orders"]), ledger_refunds=str(paths["refunds"])
        )
        done = books_pass(con, settings, folder)
        kinds = dict(
            con.execute("SELECT kind, count(*) FROM ledger_matches GROUP BY kind").fetchall()
        )
        con.close()
    slowest = sorted(done.runs, key=lambda r: -(r.duration_ms or 0))[:5]
    return {
        "orders": n,
        "payments": n,
        "books_rows": {i.input: i.rows_loaded for i in done.loaded.inputs},
        "generate_s": round(generated, 2),
        **done.figures(TARGET_S),
        "slowest_checks_ms": {r.check_name: round(r.duration_ms or 0) for r in slowest},
        "kinds": kinds,
        "exported_rows": done.section.files,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--orders", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    result = bench(args.orders)
    what = f"books vs provider, {args.orders:,} orders against {args.orders:,} payments"
    print(f"{summary_line(what, result)}; {result['findings']:,} findings", file=sys.stderr)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
