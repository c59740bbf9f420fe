"""Land the merchant's books into the warehouse and match them against the provider.

    load_books(con, settings, run_id) -> BooksLoad

Runs in the run's working copy after the API's records are loaded (the nightly load step),
in one transaction: each configured input is read (`recon.ledger.sources`), converted by
`sql/ledger/stage_<input>.sql` (exact amounts; a refused row keeps its reason in
`ledger_rejects`), replaces its `ledger_<input>` snapshot, and gets a `resource_scans` row
(`ledger_orders` …), which is what lets a check `require` it. Then `sql/ledger/matches.sql`
builds `ledger_matches`, `ledger_refund_matches` and `ledger_payment_refunds`, which the
`sql/checks/ledger_*.sql` checks read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb

from recon.books import INPUTS
from recon.currency import create_currencies_table
from recon.ledger.sources import BooksSource, check_columns, read_source, resolve_sources
from recon.settings import Settings
from recon.sql import read_sql, sql_statements

__all__ = ["BooksLoad", "InputLoad", "load_books", "validate_books"]


@dataclass(frozen=True)
class InputLoad:
    """What was read for one books input."""

    input: str
    source: str
    rows_read: int
    rows_loaded: int
    rejects: int


@dataclass(frozen=True)
class BooksLoad:
    """What `load_books` did (no inputs: the books are not configured)."""

    run_id: str
    inputs: list[InputLoad] = field(default_factory=list)

    @property
    def configured(self) -> bool:
        """True when at least one books input is set."""
        return bool(self.inputs)


def validate_books(settings: Settings) -> list[BooksSource]:
    """The preflight: every configured source exists and has its columns (ConfigError)."""
    sources = resolve_sources(settings)
    for source in sources:
        check_columns(source)
    return sources


def load_books(con: duckdb.DuckDBPyConnection, settings: Settings, run_id: str) -> BooksLoad:
    """Land the configured books for `run_id` and match them, in one transaction.

    Needs the run in `runs` (its `started_at` is the "as of" of the grace). With no books
    configured, nothing is touched. A source that cannot be read is a ConfigError.
    """
    sources = resolve_sources(settings)
    configured = {s.input for s in sources}
    if not sources:
        _forget(con, INPUTS)
        return BooksLoad(run_id)
    row = con.execute("SELECT started_at FROM runs WHERE run_id = ?", [run_id]).fetchone()
    as_of: datetime = row[0] if row else datetime.now(UTC)
    loads: list[InputLoad] = []
    create_currencies_table(con)
    # Row order means nothing in these tables: let DuckDB insert in parallel.
    order = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()
    con.execute("SET preserve_insertion_order = false")
    con.execute("BEGIN TRANSACTION")
    try:
        for stmt in sql_statements(read_sql("ledger/macros.sql")):
            con.execute(stmt)
        _forget(con, [name for name in INPUTS if name not in configured])
        for source in sources:
            loads.append(_land(con, source, run_id))
        for stmt in sql_statements(read_sql("ledger/matches.sql")):
            con.execute(
                stmt,
                _used(
                    stmt,
                    {
                        "run_id": run_id,
                        "as_of": as_of,
                        "grace_hours": settings.ledger_grace_hours,
                        "failed_statuses": [s.lower() for s in settings.refund_failed_statuses],
                    },
                ),
            )
        now = datetime.now(UTC)
        con.execute("DELETE FROM ledger_loads WHERE run_id = ?", [run_id])
        for item in loads:
            con.execute(
                "INSERT INTO ledger_loads VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    item.input,
                    item.source,
                    item.rows_read,
                    item.rows_loaded,
                    item.rejects,
                    as_of,
                    settings.ledger_grace_hours,
                    now,
                ],
            )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        for temp in ("ledger_input", "ledger_stage"):
            con.execute(f"DROP TABLE IF EXISTS temp.{temp}")
        con.execute(f"SET preserve_insertion_order = {bool(order and order[0])}")
    return BooksLoad(run_id, loads)


def _land(con: duckdb.DuckDBPyConnection, source: BooksSource, run_id: str) -> InputLoad:
    fields = list(source.mapping.FIELDS)
    columns = ", ".join(f"{f} VARCHAR" for f in fields)  # names from the class, not input
    con.execute(
        "CREATE OR REPLACE TEMP TABLE ledger_input "
        f"(_part INTEGER, _source VARCHAR, _row BIGINT, _unread VARCHAR, {columns})"
    )
    select = ", ".join(fields)
    for part, (where, table) in enumerate(read_source(source)):
        con.register("ledger_part", table)
        try:
            con.execute(
                f"INSERT INTO ledger_input SELECT ?, ?, _row, _unread, {select} FROM ledger_part",  # noqa: S608
                [part, where],
            )
        finally:
            con.unregister("ledger_part")
    mapping = source.mapping
    values: dict[str, Any] = {
        "amounts": mapping.amounts,
        "decimal": mapping.decimal,
        "map_from": list(mapping.status_map),
        "map_to": list(mapping.status_map.values()),
        "statuses": list(mapping.STATUSES),
    }
    con.execute(read_sql(f"ledger/stage_{source.input}.sql"), _used_in(source.input, values))
    for stmt in sql_statements(read_sql(f"ledger/land_{source.input}.sql")):
        con.execute(stmt, _used(stmt, {"run_id": run_id}))
    read, loaded = _counts(con)
    rejects = read - loaded
    resource = source.table
    con.execute("DELETE FROM resource_scans WHERE run_id = ? AND resource = ?", [run_id, resource])
    con.execute(
        "INSERT INTO resource_scans (run_id, resource, status, reason, records, rejects) "
        "VALUES (?, ?, 'complete', ?, ?, ?)",
        [run_id, resource, f"read from {source.describe()}", loaded, rejects],
    )
    return InputLoad(source.input, source.describe(), read, loaded, rejects)


def _forget(con: duckdb.DuckDBPyConnection, inputs: list[str] | tuple[str, ...]) -> None:
    """Empty the snapshots of inputs no longer configured, so that nothing stale is matched."""
    for name in inputs:
        if name in INPUTS:  # an allow-list: the table name is built from it
            con.execute(f"DELETE FROM ledger_{name}")  # noqa: S608


def _counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    row = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE reason IS NULL) FROM ledger_stage"
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def _used_in(input_name: str, values: dict[str, Any]) -> dict[str, Any]:
    return _used(read_sql(f"ledger/stage_{input_name}.sql"), values)


def _used(sql: str, values: dict[str, Any]) -> dict[str, Any]:
    # DuckDB refuses named parameters a statement does not use.
    from recon.checks.definition import used_parameters

    used = used_parameters(sql)
    return {k: v for k, v in values.items() if k in used}
