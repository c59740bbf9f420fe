"""The bank leg at scale: a year of daily statements for five currencies against 1M payments
(target: `load_bank` <= 10 s — read every statement, land it, work out the settlements,
chain the balances, match; docs/bank.md).

The warehouse is built with set-based SQL (`range()` and `hash()`): 1M payments over 365 days
in EUR, USD, GBP, JPY and BHD (settled, cancelled and refunded statuses mixed) and 100k
refunds. The statements are the settlements recon expects (worked out once, untimed) written
by the sandbox's writers in each currency's bank format (EUR CAMT.053, USD and BHD MT940,
GBP BAI2, JPY CSV) with other lines between them; one USD credit is made short so that the
timed run finds something. Only `load_bank` is timed.

    python -m benchmarks.bank_bench [--payments 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import date
from pathlib import Path

import duckdb

from recon.bank.loading import load_bank
from recon.config.settings import settings_from
from recon.sandbox.bank.plan import FORMAT_OF, PROVIDER_MATCH, DayStatement, PlannedLine
from recon.sandbox.bank.writers import EXTENSIONS, statement_text
from recon.warehouse.migrations import apply_migrations

RUN = "20261231T020000Z-bench1"
FEES = {
    "EUR": {"fee_bps": 140, "fee_fixed_minor": 25},
    "USD": {"fee_bps": 290, "fee_fixed_minor": 30},
    "GBP": {"fee_bps": 150, "fee_fixed_minor": 20},
    "JPY": {"fee_bps": 360, "fee_fixed_minor": 0},
    "BHD": {"fee_bps": 250, "fee_fixed_minor": 100},
}
BANK = {"fees": FEES, "calendar": "GB"}


def build(con: duckdb.DuckDBPyConnection, payments: int) -> None:
    """1M payments and 100k refunds over 2026, in SQL."""
    apply_migrations(con)
    con.execute(
        f"""
        INSERT INTO payments (id, amount_minor, currency, status, created_at, raw, content_hash,
                              first_seen_run, last_seen_run)
        SELECT 'pay_' || i,
               100 + hash(i) % 100000,
               ['EUR', 'USD', 'GBP', 'JPY', 'BHD'][1 + i % 5],
               CASE WHEN i % 20 = 0 THEN 'cancelled' WHEN i % 10 = 1 THEN 'refunded'
                    ELSE 'confirmed' END,
               TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(hash(i * 7) % (365 * 86400)),
               '{{}}', 'h', '{RUN}', '{RUN}'
        FROM range({payments}) AS t(i)
        """
    )
    con.execute(
        f"""
        INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, raw,
                             content_hash, first_seen_run, last_seen_run)
        SELECT 're_' || id, id, amount_minor // 2, currency, 'succeeded',
               created_at + INTERVAL 1 DAY, '{{}}', 'h', '{RUN}', '{RUN}'
        FROM payments WHERE status = 'refunded'
        """
    )


def write_statements(con: duckdb.DuckDBPyConnection, folder: Path) -> int:
    """The expected settlements of 2026 as each currency's bank would send them; returns how
    many statements were written."""
    rows = con.execute(
        "SELECT currency, pay_date, net_minor, business_day FROM bank_settlements "
        "WHERE net_minor > 0 AND pay_date <= DATE '2026-12-31' ORDER BY currency, pay_date"
    ).fetchall()
    days = [
        r[0]
        for r in con.execute(
            "SELECT day FROM bank_days WHERE business AND day BETWEEN DATE '2026-01-01' "
            "AND DATE '2026-12-31' ORDER BY day"
        ).fetchall()
    ]
    by: dict[tuple[str, date], list[tuple[int, date]]] = {}
    for currency, pay, net, bday in rows:
        by.setdefault((currency, pay), []).append((net, bday))
    count = 0
    for currency, kind in FORMAT_OF.items():
        balance, statements = 10**9, []
        for n, day in enumerate(days):
            st = DayStatement(currency, day, balance)
            for net, bday in by.get((currency, day), []):
                short = currency == "USD" and n == 100
                st.lines.append(
                    PlannedLine(
                        day,
                        net - 1 if short else net,
                        "SANDBOX PAYMENTS LTD",
                        f"SETTLEMENT {bday} {currency}",
                        f"PO{currency}{bday:%Y%m%d}",
                    )
                )
            for k in range(6):  # the rest of a business account's day
                st.lines.append(
                    PlannedLine(day, (-1) ** k * (1000 + k), "OTHER PARTY", "invoice", f"X{n}{k}")
                )
            balance = st.closing
            statements.append(st)
        text, _ = statement_text(kind, currency, statements)
        (folder / f"bank-{currency.lower()}.{EXTENSIONS[kind]}").write_text(text)
        count += len(statements)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        con = duckdb.connect(str(folder / "bench.duckdb"))
        con.execute("SET TimeZone = 'UTC'")
        started = time.perf_counter()
        build(con, args.payments)
        (folder / "seed.csv").write_text(
            "booking_date,value_date,amount,currency,counterparty,remittance\n"
            "2026-12-31,2026-12-31,1,EUR,x,y\n"
        )
        seed = settings_from(
            bank_statements=str(folder / "seed.csv"), bank_provider_match="sandbox", bank=BANK
        )
        load_bank(con, seed, RUN)  # the settlements the statements will carry (untimed)
        (folder / "seed.csv").unlink()
        statements = write_statements(con, folder)
        built = time.perf_counter() - started
        settings = settings_from(
            bank_statements=str(folder / "bank-*"), bank_provider_match=PROVIDER_MATCH, bank=BANK
        )
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            loaded = load_bank(con, settings, RUN)
            times.append(time.perf_counter() - started)
        states = dict(
            con.execute("SELECT state, count(*) FROM bank_settlements GROUP BY ALL").fetchall()
        )
        size = sum(p.stat().st_size for p in folder.glob("bank-*"))
        print(
            json.dumps(
                {
                    "payments": args.payments,
                    "statements": statements,
                    "lines": loaded.lines,
                    "statement_bytes": size,
                    "setup_s": round(built, 1),
                    "load_bank_s": [round(t, 2) for t in times],
                    "settlement_states": states,
                },
                indent=2,
                default=str,
            )
        )
        con.close()


if __name__ == "__main__":
    main()
