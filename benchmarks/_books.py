"""What the books benchmarks share (`ledger_bench`, `matching_bench`): the provider's side
generated in the warehouse with set-based SQL, the books' refunds file, and the timed part
of a night that the books add (load and match, the ledger checks, the report's section).
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from benchmarks._common import ROOT
from recon.warehouse.migrations import apply_migrations

if TYPE_CHECKING:
    from recon.checks import CheckRun
    from recon.config.settings import Settings
    from recon.ledger.loading import BooksLoad
    from recon.report.ledger import LedgerSection

ANCHOR = datetime(2026, 11, 20, 2, tzinfo=UTC)
CURRENCIES = "['EUR', 'EUR', 'EUR', 'USD', 'USD', 'GBP', 'JPY', 'BHD']"
RESOURCES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")


def provider_side(con: duckdb.DuckDBPyConnection, n: int) -> None:
    """`n` payments in run r1 (complete scans of every list); every 4th payment refunded in
    part by one refund of half its amount."""
    apply_migrations(con)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES ('r1', ?, 'complete', ?)",
        [ANCHOR, ANCHOR],
    )
    for name in RESOURCES:
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status) VALUES ('r1', ?, 'complete')",
            [name],
        )
    con.execute(
        f"""
        INSERT INTO payments (id, amount_minor, currency, status, reference, created_at, raw,
                              content_hash, first_seen_run, last_seen_run)
        SELECT 'pay_' || i, CAST(100 + hash(i) % 99900 AS BIGINT),
               {CURRENCIES}[CAST(1 + hash(i * 7) % 8 AS BIGINT)],
               CASE WHEN i % 4 = 0 THEN 'partially_refunded' ELSE 'confirmed' END,
               'ORD-' || i, $anchor - to_minutes(CAST(i % 129600 AS BIGINT)) - INTERVAL 3 DAY,
               '{{}}', 'h', 'r1', 'r1'
        FROM range($n) AS t(i)
        """,
        {"n": n, "anchor": ANCHOR},
    )
    con.execute(
        """
        INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, raw,
                             content_hash, first_seen_run, last_seen_run)
        SELECT 're_' || id, id, amount_minor // 2, currency, 'succeeded',
               created_at + INTERVAL 1 HOUR, '{}', 'h', 'r1', 'r1'
        FROM payments WHERE status = 'partially_refunded'
        """
    )


def books_orders(con: duckdb.DuckDBPyConnection, path: Path, *, where: str = "TRUE") -> Path:
    """The books' orders file for the payments in the warehouse (`where` picks them): 1%
    lower-case reference, 0.5% `#REF`, 0.5% two minor units above, 0.5% carts of two
    orders, 0.2% no reference, 0.1% no order; each order placed two minutes before its
    payment."""
    con.execute(
        f"""
        COPY (
            WITH p AS (
                SELECT *, hash(id, 'case') % 1000 AS h,
                       strftime(created_at - INTERVAL 2 MINUTE, '%Y-%m-%dT%H:%M:%SZ') AS placed
                FROM payments WHERE {where}
            )
            SELECT CASE WHEN h < 10 THEN lower(reference)
                        WHEN h < 15 THEN '#' || reference
                        WHEN h >= 25 AND h < 27 THEN NULL
                        ELSE reference END AS reference,
                   'SO-' || id AS order_id, NULL AS payment_reference,
                   amount_minor + CASE WHEN h >= 15 AND h < 20 THEN 2 ELSE 0 END AS amount_minor,
                   currency, status, placed AS created_at
            FROM p WHERE h < 20 OR h >= 25 AND h <> 27
            UNION ALL
            SELECT reference || part, 'SO-' || id || part, reference,
                   CASE WHEN part = '-A' THEN amount_minor // 2
                        ELSE amount_minor - amount_minor // 2 END,
                   currency, status, placed
            FROM p, (VALUES ('-A'), ('-B')) AS parts(part)
            WHERE h >= 20 AND h < 25
        ) TO '{path}' (HEADER, DELIMITER ',')
        """
    )
    return path


def books_refunds(con: duckdb.DuckDBPyConnection, path: Path) -> Path:
    """The books' refunds file: every provider refund, as the books record it."""
    con.execute(
        f"""
        COPY (
            SELECT id AS refund_id, payment_id, NULL AS reference, amount_minor, currency,
                   strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at
            FROM refunds
        ) TO '{path}' (HEADER, DELIMITER ',')
        """
    )
    return path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class BooksPass:
    """What one timed books pass did, and how long each part took."""

    loaded: BooksLoad
    runs: list[CheckRun]
    section: LedgerSection
    load_and_match_s: float
    checks_s: float
    report_section_s: float
    cpu_s: float

    @property
    def total_s(self) -> float:
        return self.load_and_match_s + self.checks_s + self.report_section_s

    @property
    def errored(self) -> list[str]:
        return [r.check_name for r in self.runs if r.status == "errored"]

    def figures(self, target_s: float) -> dict[str, Any]:
        """The figures both benchmarks print, rounded."""
        return {
            "load_and_match_s": round(self.load_and_match_s, 2),
            "checks_s": round(self.checks_s, 2),
            "report_section_s": round(self.report_section_s, 2),
            "total_s": round(self.total_s, 2),
            # CPU seconds of this process (DuckDB's threads included): on a machine shared
            # with other jobs the wall time says more about them than about recon
            "cpu_s": round(self.cpu_s, 2),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "target_s": target_s,
            "pass": self.total_s <= target_s and not self.errored,
            "errored": self.errored,
            "findings": sum(r.finding_count for r in self.runs),
            "open_breaks": self.section.open_breaks,
        }


def books_pass(con: duckdb.DuckDBPyConnection, settings: Settings, folder: Path) -> BooksPass:
    """What a nightly run adds for the books, timed: `load_books` (read, convert, match),
    the ledger checks, and the report's books section with its exports (in `folder`/report)."""
    from recon.checks import CheckParams, run_checks
    from recon.ledger.loading import load_books
    from recon.report.ledger import build_ledger_section

    only = sorted(p.stem for p in (ROOT / "sql" / "checks").glob("ledger_*.sql"))
    cpu0 = _cpu()
    t0 = time.perf_counter()
    loaded = load_books(con, settings, "r1")
    t1 = time.perf_counter()
    runs = run_checks(con, run_id="r1", as_of=ANCHOR, params=CheckParams(), only=only)
    t2 = time.perf_counter()
    (folder / "report").mkdir()
    section = build_ledger_section(con, "r1", folder / "report")
    t3 = time.perf_counter()
    return BooksPass(loaded, runs, section, t1 - t0, t2 - t1, t3 - t2, _cpu() - cpu0)


def summary_line(what: str, figures: dict[str, Any]) -> str:
    """The line both benchmarks print on stderr before their JSON."""
    return (
        f"{what}: load + match {figures['load_and_match_s']} s, checks {figures['checks_s']} s, "
        f"report section {figures['report_section_s']} s = {figures['total_s']} s "
        f"({figures['cpu_s']} s CPU, load average {figures['loadavg'][0]}) "
        f"(target {figures['target_s']:g} s: {'pass' if figures['pass'] else 'MISS'})"
    )
