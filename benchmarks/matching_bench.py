"""The matching rules at scale (issue 20's target): 1M books orders against 1M payments with
every rule on — manual matches, exact and normalised reference (with a books pattern), amount
tolerance, carts paid by one payment (payment_reference) and proposals — plus 250k books
refunds. Timed: what a nightly run adds for the books (`load_books`: read and convert the
CSV, every rule of sql/matching/, the classification), the ledger checks, and the report's
books section with its exports. Target: ≤ 15 s.

Of the payments (by hash): 1% have their order's reference in lower case, 0.5% as `#REF`,
0.5% an order 2 minor units above (tolerance 5), 0.5% two orders paid together (a cart),
0.2% an order without a reference (proposed; 100 of them matched by hand in the audit
trail), 0.1% no order at all; the rest match exactly.

    python -m benchmarks.matching_bench [--orders 1000000]
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

from benchmarks._books import (
    books_orders,
    books_pass,
    books_refunds,
    provider_side,
    summary_line,
)

TARGET_S = 15.0
MANUAL = 100


def _generate(con: duckdb.DuckDBPyConnection, folder: Path, n: int) -> dict[str, Path]:
    """Payments and refunds in the warehouse; the books as CSV files; manual matches."""
    provider_side(con, n)
    paths = {"orders": folder / "orders.csv", "refunds": folder / "refunds.csv"}
    books_orders(con, paths["orders"])
    books_refunds(con, paths["refunds"])
    from recon.findings.acks import AckLog, acks_path

    trail = AckLog(acks_path(folder / "recon.duckdb"))
    rows = con.execute(
        "SELECT id, amount_minor, currency FROM payments "
        "WHERE hash(id, 'case') % 1000 IN (25, 26) ORDER BY id LIMIT ?",
        [MANUAL],
    ).fetchall()
    for pid, amount, currency in rows:
        fields = {
            "order": f"SO-{pid}",
            "order_amount_minor": amount,
            "currency": currency,
            "payments": {pid: amount},
        }
        trail.record("match", fields, note="confirmed with the customer", who="bench")
    return paths


def bench(n: int) -> dict[str, Any]:
    from recon.config.settings import settings_from

    with tempfile.TemporaryDirectory(prefix="recon-matching-bench-") as tmp:
        folder = Path(tmp)
        db = folder / "recon.duckdb"
        con = duckdb.connect(str(db), config={"memory_limit": "2GB"})
        con.execute("SET TimeZone = 'UTC'")
        started = time.perf_counter()
        paths = _generate(con, folder, n)
        con.execute("CHECKPOINT")  # as after the night's API load, which commits before
        generated = time.perf_counter() - started
        settings = settings_from(
            db=str(db),
            ledger_orders=str(paths["orders"]),
            ledger_refunds=str(paths["refunds"]),
            ledger_tolerance_minor=5,
            ledger={"match": {"books_reference": "^#?(.*)$"}},
        )
        done = books_pass(con, settings, folder)
        rules = dict(
            con.execute(
                "SELECT rule, count(DISTINCT order_key) FROM ledger_links GROUP BY rule"
            ).fetchall()
        )
        proposals = con.execute("SELECT count(DISTINCT order_key) FROM ledger_suggestions")
        rules["suggested_match"] = int((proposals.fetchone() or (0,))[0])
        con.close()
    return {
        "orders": done.loaded.inputs[0].rows_loaded,
        "payments": n,
        "generate_s": round(generated, 2),
        **done.figures(TARGET_S),
        "orders_per_rule": rules,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--orders", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    result = bench(args.orders)
    what = (
        f"matching, {result['orders']:,} books orders against {args.orders:,} payments, "
        "every rule on"
    )
    print(
        f"{summary_line(what, result)}; orders per rule {result['orders_per_rule']}",
        file=sys.stderr,
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
