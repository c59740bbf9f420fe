"""Land the bank statements and reconcile the provider's settlements against them.

    validate_bank(settings) -> list[Path]          the preflight: files there, match set
    load_bank(con, settings, run_id) -> BankLoad   the load step, after the books

In the run's working copy, in one transaction: every file `RECON_BANK_STATEMENTS` names is
read (`recon.bank.statements`), its statements and lines replace `bank_statements` and
`bank_lines` (a statement read twice, from two files, is kept once), the provider's credits
are marked by `RECON_BANK_PROVIDER_MATCH`, then `sql/bank/expected.sql`, `gaps.sql` and
`match.sql` build `bank_settlements` and `bank_gaps`, which the `sql/checks/bank_*.sql`
checks read. A `resource_scans` row `bank_statements` lets a check require them. With no
statements configured the tables are emptied and nothing else happens.
"""

from __future__ import annotations

import functools
import glob
import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from recon.bank.calendar import business_days
from recon.bank.reading import read_statement_file
from recon.bank.statements import Statement, StatementError
from recon.config.bank import compile_provider_match
from recon.config.settings import Settings
from recon.errors import ConfigError
from recon.warehouse.database import transaction
from recon.warehouse.sql import read_sql, sql_statements

__all__ = ["BankLoad", "load_bank", "read_statements", "statement_files", "validate_bank"]

log = logging.getLogger("recon")

TABLES = ("bank_statements", "bank_lines", "bank_gaps", "bank_settlements", "bank_days")


@dataclass(frozen=True)
class BankLoad:
    """What `load_bank` read (files 0: the bank leg is not configured)."""

    files: int = 0
    statements: int = 0
    lines: int = 0
    provider_lines: int = 0
    duplicates: int = 0


def statement_files(pattern: str) -> list[Path]:
    """The files `pattern` (a file or a glob) names, sorted."""
    path = Path(pattern).expanduser()
    if path.is_file():
        return [path]
    return sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())


def validate_bank(settings: Settings) -> list[Path]:
    """The preflight: the statements exist and the provider can be told apart (ConfigError)."""
    if not settings.bank_statements:
        return []
    files = statement_files(settings.bank_statements)
    if not files:
        raise ConfigError("RECON_BANK_STATEMENTS", f"{settings.bank_statements} names no file")
    if not settings.bank_provider_match:
        raise ConfigError(
            "RECON_BANK_PROVIDER_MATCH",
            "is not set: a regular expression on counterparty and remittance that tells the "
            "provider's settlements apart (e.g. 'payments ltd|settlement')",
        )
    read_statements(files)  # a file that cannot be read stops the night before extracting
    return files


def read_statements(files: list[Path]) -> tuple[list[Statement], int]:
    """Every statement of `files`, a statement read twice kept once; and how many were
    dropped as duplicates. A file that cannot be read is a ConfigError naming it."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Statement] = []
    duplicates = 0
    for path in files:
        try:
            statements = _read(path)
        except StatementError as exc:
            raise ConfigError("RECON_BANK_STATEMENTS", str(exc)) from None
        for st in statements:
            if st.statement_date is not None:
                key = (
                    st.account,
                    st.currency,
                    st.statement_date,
                    st.opening_minor,
                    st.closing_minor,
                    tuple((ln.value_date, ln.amount_minor, ln.reference) for ln in st.lines),
                )
                if key in seen:
                    duplicates += 1
                    continue
                seen.add(key)
            out.append(st)
    return out, duplicates


def _read(path: Path) -> list[Statement]:
    """`read_statement_file`, read once per process for a file unchanged since (the
    preflight reads them to fail early; the load step then reads them again for free)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise StatementError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return _read_once(path.resolve(), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _read_once(path: Path, mtime_ns: int, size: int) -> list[Statement]:
    del mtime_ns, size  # the cache key: a changed file is read again
    return read_statement_file(path)


def load_bank(con: duckdb.DuckDBPyConnection, settings: Settings, run_id: str) -> BankLoad:
    """Land the statements for `run_id` and reconcile the settlements, in one transaction."""
    files = validate_bank(settings)
    if not files:
        with transaction(con):
            for table in TABLES:  # an allow-list: the names are this module's
                con.execute(f"DELETE FROM {table}")  # noqa: S608
        return BankLoad()
    assert settings.bank_provider_match is not None  # validate_bank
    provider = compile_provider_match(settings.bank_provider_match)
    statements, duplicates = read_statements(files)
    if duplicates:
        log.warning("bank: %d statement(s) read twice, kept once", duplicates)
    stmt_rows, line_rows = _rows(statements, provider)
    bank = settings.bank
    with transaction(con):
        for table in TABLES:
            con.execute(f"DELETE FROM {table}")  # noqa: S608
        _insert(con, "bank_statements", stmt_rows, run_id)
        _insert(con, "bank_lines", line_rows, run_id)
        first, last = _span(con)
        con.register("bank_days_rows", business_days(first, last, bank.calendar))
        try:
            con.execute("INSERT INTO bank_days BY NAME SELECT * FROM bank_days_rows")
        finally:
            con.unregister("bank_days_rows")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE bank_fees "
            "(currency VARCHAR, fee_bps BIGINT, fee_fixed_minor BIGINT)"
        )
        if bank.fee_rows():
            con.executemany("INSERT INTO temp.bank_fees VALUES (?, ?, ?)", bank.fee_rows())
        values = {
            "settled_statuses": list(bank.settled_statuses),
            "failed_statuses": [s.lower() for s in settings.refund_failed_statuses],
            "settlement_days": bank.settlement_days,
            "grace_days": bank.grace_days,
            "fees_known": bank.fees_known,
            "tolerance_minor": bank.tolerance_minor,
            "tolerance_bps": bank.tolerance_bps,
            "run_id": run_id,
        }
        for name in ("bank/expected.sql", "bank/gaps.sql", "bank/match.sql"):
            for stmt in sql_statements(read_sql(name)):
                con.execute(stmt, _used(stmt, values))
        provider_lines = sum(1 for r in line_rows if r["is_provider"])
        dates = [d for s in statements for d in (s.first_date, s.last_date) if d is not None]
        con.execute(
            "INSERT INTO bank_loads BY NAME SELECT ? AS run_id, ? AS source, ? AS files, "
            "? AS statements, ? AS lines, ? AS provider_lines, ? AS duplicates, "
            "? AS first_date, ? AS last_date, ? AS calendar, ? AS loaded_at",
            [
                run_id,
                settings.bank_statements,
                len(files),
                len(statements),
                len(line_rows),
                provider_lines,
                duplicates,
                min(dates, default=None),
                max(dates, default=None),
                bank.calendar,
                datetime.now(UTC),
            ],
        )
        con.execute(
            "DELETE FROM resource_scans WHERE run_id = ? AND resource = 'bank_statements'",
            [run_id],
        )
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status, reason, records) "
            "VALUES (?, 'bank_statements', 'complete', ?, ?)",
            [run_id, f"read from {settings.bank_statements} ({len(files)} files)", len(line_rows)],
        )
        for temp in ("bank_fees", "bank_expected", "bank_credits", "bank_due", "bank_cand"):
            con.execute(f"DROP TABLE IF EXISTS temp.{temp}")
        for temp in ("bank_pairs", "bank_cand2", "bank_ties"):
            con.execute(f"DROP TABLE IF EXISTS temp.{temp}")
    return BankLoad(len(files), len(statements), len(line_rows), provider_lines, duplicates)


def _rows(
    statements: list[Statement], provider: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    stmt_rows: list[dict[str, Any]] = []
    line_rows: list[dict[str, Any]] = []
    for st in statements:
        common = {
            "file_name": st.source.name,
            "source_file": str(st.source),
            "format": st.format,
            "bank_account": st.account or None,
            "currency": st.currency,
            "statement_date": st.statement_date,
        }
        stmt_rows.append(
            {
                **common,
                "statement_no": st.number,
                "first_date": st.first_date,
                "last_date": st.last_date,
                "opening_minor": st.opening_minor,
                "closing_minor": st.closing_minor,
                "line_count": len(st.lines),
                "lines_minor": sum(ln.amount_minor for ln in st.lines),
            }
        )
        for ln in st.lines:
            text = f"{ln.counterparty} {ln.remittance}"
            line_rows.append(
                {
                    **common,
                    "currency": ln.currency or st.currency,
                    "line_no": ln.number,
                    "booking_date": ln.booking_date,
                    "value_date": ln.value_date,
                    "amount_minor": ln.amount_minor,
                    "counterparty": ln.counterparty or None,
                    "remittance": ln.remittance or None,
                    "reference": ln.reference or None,
                    "is_provider": provider.search(text) is not None,
                }
            )
    return stmt_rows, line_rows


def _insert(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]], run_id: str
) -> None:
    if not rows:
        return
    data = pa.Table.from_pylist([{**r, "run_id": run_id} for r in rows])
    con.register("bank_rows", data)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM bank_rows")  # noqa: S608
    finally:
        con.unregister("bank_rows")


def _span(con: duckdb.DuckDBPyConnection) -> tuple[date, date]:
    """The days `bank_days` must hold: every payment, refund and statement day, with room
    on either side for the settlement window."""
    row = con.execute(
        "SELECT min(d), max(d) FROM ("
        "SELECT CAST(timezone('UTC', created_at) AS DATE) AS d FROM payments "
        "UNION ALL SELECT CAST(timezone('UTC', created_at) AS DATE) FROM refunds "
        "UNION ALL SELECT booking_date FROM bank_lines UNION ALL SELECT value_date FROM bank_lines "
        "UNION ALL SELECT first_date FROM bank_statements "
        "UNION ALL SELECT last_date FROM bank_statements)"
    ).fetchall()[0]
    today = datetime.now(UTC).date()
    first = row[0] if row and row[0] else today
    last = row[1] if row and row[1] else today
    return first - timedelta(days=120), max(last, today) + timedelta(days=120)


def _used(sql: str, values: dict[str, Any]) -> dict[str, Any]:
    from recon.checks.definition import used_parameters

    used = used_parameters(sql)
    return {k: v for k, v in values.items() if k in used}
