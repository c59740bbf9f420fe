"""Land the merchant's books into the warehouse and match them against the provider.

    load_books(con, settings, run_id) -> BooksLoad

Runs in the run's working copy after the API's records are loaded (the nightly load step),
in one transaction: each configured input is read (`recon.ledger.sources`), converted by
`sql/ledger/stage_<input>.sql` (exact amounts; a refused row keeps its reason in
`ledger_rejects`), replaces its `ledger_<input>` snapshot, and gets a `resource_scans` row
(`ledger_orders` …), which is what lets a check `require` it. Then the matching rules
(`sql/matching/*.sql`, `recon.ledger.matching`) link orders to payments and
`sql/ledger/classify_*.sql` and `sql/ledger/matches.sql` build `ledger_matches`,
`ledger_refund_matches` and `ledger_payment_refunds`, which the `sql/checks/ledger_*.sql`
checks read.

An input that suddenly holds far less than before — no rows, or fewer than
`RECON_LEDGER_MIN_RATIO` of the rows the last night that read it loaded — is *suspect*: its
snapshot is kept as it was, its `resource_scans` row says `suspect` with the reason (so every
check that requires it is not evaluated and nothing it judged is resolved) and the run is
incomplete. `recon nightly --accept-books INPUT --note …` (an `accept_books` line of the
audit trail, written after the last run started) accepts it for the next night.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb

from recon.config.books import INPUTS
from recon.config.settings import Settings
from recon.errors import ConfigError
from recon.findings.acks import AckLog, acks_path
from recon.ledger.matching import apply_rules, drop_rule_tables
from recon.ledger.sources import (
    BooksSource,
    check_columns,
    read_source,
    resolve_sources,
    unread_sheets,
)
from recon.money.currency import create_currencies_table
from recon.warehouse.database import transaction
from recon.warehouse.sql import read_sql, sql_statements

__all__ = [
    "BooksLoad",
    "InputLoad",
    "accept_books",
    "check_accept",
    "load_books",
    "validate_books",
]

log = logging.getLogger("recon")


@dataclass(frozen=True)
class InputLoad:
    """What was read for one books input."""

    input: str
    source: str
    rows_read: int
    rows_loaded: int
    rejects: int
    suspect: str | None = None  # why the input is suspect (None: it is not)
    accepted: str | None = None  # who accepted it for the night, and why
    unread_sheets: tuple[str, ...] = ()


@dataclass(frozen=True)
class BooksLoad:
    """What `load_books` did (no inputs: the books are not configured)."""

    run_id: str
    inputs: list[InputLoad] = field(default_factory=list)

    @property
    def configured(self) -> bool:
        """True when at least one books input is set."""
        return bool(self.inputs)

    @property
    def suspect(self) -> list[InputLoad]:
        """The inputs held suspect (not accepted) tonight."""
        return [i for i in self.inputs if i.suspect and not i.accepted]


def validate_books(settings: Settings) -> list[BooksSource]:
    """The preflight: every configured source exists and has its columns (ConfigError)."""
    sources = resolve_sources(settings)
    for source in sources:
        check_columns(source)
    return sources


def accept_books(
    settings: Settings, inputs: list[str], note: str | None, *, account: str | None = None
) -> list[str]:
    """`recon nightly --accept-books INPUT [--account NAME] --note …`: accept a legitimately
    smaller books input for the next night, as an `accept_books` line of the audit trail (who,
    when, note) — with `[accounts]`, of account `account`'s trail, so no other account's books
    are accepted. A ConfigError for an unknown or unconfigured input or an empty note."""
    check_accept(settings, inputs, note, account=account)
    trail = AckLog(acks_path(settings.db))
    for name in inputs:
        trail.record("accept_books", {"input": name}, note=(note or "").strip())
    return [str(trail.path)]


def check_accept(
    settings: Settings, inputs: list[str], note: str | None, *, account: str | None = None
) -> None:
    """What `accept_books` refuses, checked without writing (several accounts are all
    checked before any is accepted)."""
    if not note or not note.strip():
        raise ConfigError("--note", "must say why the smaller books input is right")
    configured = {s.input for s in resolve_sources(settings)}
    for name in inputs:
        if name not in INPUTS:
            raise ConfigError("--accept-books", f"{name!r} is not one of {', '.join(INPUTS)}")
        if name not in configured:
            whose = f"account {account}'s" if account else "the"
            raise ConfigError("--accept-books", f"{whose} books' {name} are not configured")


def load_books(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    run_id: str,
    *,
    account: str | None = None,
) -> BooksLoad:
    """Land the configured books for `run_id` and match them, in one transaction.

    Needs the run in `runs` (its `started_at` is the "as of" of the grace). With no books
    configured, nothing is touched. A source that cannot be read is a ConfigError.
    `account` (one of `[accounts]`) goes into the command a suspect input's reason gives.
    """
    sources = resolve_sources(settings)
    configured = {s.input for s in sources}
    if not sources:
        _forget(con, INPUTS)
        return BooksLoad(run_id)
    row = con.execute("SELECT started_at FROM runs WHERE run_id = ?", [run_id]).fetchone()
    as_of: datetime = row[0] if row else datetime.now(UTC)
    loads: list[InputLoad] = []
    trail = AckLog(acks_path(settings.db))
    create_currencies_table(con)
    # Row order means nothing in these tables: let DuckDB insert in parallel.
    order = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()
    con.execute("SET preserve_insertion_order = false")
    try:
        with transaction(con):
            for stmt in sql_statements(read_sql("ledger/macros.sql")):
                con.execute(stmt)
            _forget(con, [name for name in INPUTS if name not in configured])
            for source in sources:
                loads.append(_land(con, source, run_id, settings, trail, account))
            manual = _manual_matches(con, trail, run_id)
            params = {
                "tolerance_minor": settings.ledger_tolerance_minor,
                "tolerance_bps": settings.ledger_tolerance_bps,
                "window_days": settings.ledger_date_window_days,
                "books_pattern": settings.ledger.match.books_reference or "",
                "provider_pattern": settings.ledger.match.provider_reference or "",
            }
            apply_rules(con, params, run_id, manual)
            _classify(
                con,
                {
                    "run_id": run_id,
                    "as_of": as_of,
                    "grace_hours": settings.ledger_grace_hours,
                    "window_days": settings.ledger_date_window_days,
                    "failed_statuses": [s.lower() for s in settings.refund_failed_statuses],
                },
            )
            now = datetime.now(UTC)
            con.execute("DELETE FROM ledger_loads WHERE run_id = ?", [run_id])
            for item in loads:
                con.execute(
                    "INSERT INTO ledger_loads BY NAME SELECT ? AS run_id, ? AS input, ? AS source, "
                    "? AS rows_read, ? AS rows_loaded, ? AS rejects, ? AS as_of, ? AS grace_hours, "
                    "? AS loaded_at, ? AS suspect, ? AS accepted, ? AS unread_sheets",
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
                        item.suspect,
                        item.accepted,
                        ", ".join(item.unread_sheets) or None,
                    ],
                )
            _mark_incomplete(con, run_id, [i for i in loads if i.suspect and not i.accepted])
    finally:
        for temp in ("ledger_input", "ledger_stage", "_manual"):
            con.execute(f"DROP TABLE IF EXISTS temp.{temp}")
        drop_rule_tables(con)
        con.execute(f"SET preserve_insertion_order = {bool(order and order[0])}")
    return BooksLoad(run_id, loads)


#: Orders (payments) classified at a time (sql/ledger/classify_orders.sql, _payments.sql): a
#: million in one statement needed more of the night's 192 MiB than DuckDB could spill
#: (issue 38).
CLASSIFY_ROWS = 250_000


def _classify(con: duckdb.DuckDBPyConnection, values: dict[str, Any]) -> None:
    """`ledger_matches`, `ledger_refund_matches` and `ledger_payment_refunds` from the links
    the rules made: what every range reads (sql/ledger/classify_setup.sql), the orders, then
    the payments no rule linked, a range of `CLASSIFY_ROWS` rowids at a time
    (sql/ledger/classify_orders.sql, _payments.sql: a row depends on its own links only),
    then the refunds (sql/ledger/matches.sql)."""
    for stmt in sql_statements(read_sql("ledger/classify_setup.sql")):
        con.execute(stmt)
    for name, table in (("orders", "ledger_orders"), ("payments", "payments")):
        row = con.execute(f"SELECT min(rowid), max(rowid) FROM {table}").fetchone()  # noqa: S608
        first, last = row if row else (None, None)
        sql = read_sql(f"ledger/classify_{name}.sql")
        if first is None or last is None:
            continue
        for lo in range(int(first), int(last) + 1, CLASSIFY_ROWS):
            con.execute(sql, _used(sql, {**values, "lo": lo, "hi": lo + CLASSIFY_ROWS - 1}))
    for stmt in sql_statements(read_sql("ledger/matches.sql")):
        con.execute(stmt, _used(stmt, values))


def _land(
    con: duckdb.DuckDBPyConnection,
    source: BooksSource,
    run_id: str,
    settings: Settings,
    trail: AckLog,
    account: str | None = None,
) -> InputLoad:
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
    read, loaded = _counts(con)
    rejects = read - loaded
    unread = tuple(unread_sheets(source))
    if unread:
        log.warning(
            'books %s: sheets not read: %s (set [ledger.%s] sheet, "*" for every sheet)',
            source.input,
            ", ".join(unread),
            source.input,
        )
    suspect = _suspect(con, source.input, run_id, loaded, settings.ledger_min_ratio)
    accepted = _accepted(con, trail, source.input, run_id) if suspect else None
    status, reason = "complete", f"read from {source.describe()}"
    if suspect and not accepted:
        status, reason = "suspect", f"{suspect}; not read (accept it for the night: recon "
        which = f" --account {account}" if account else ""
        reason += f"nightly --accept-books {source.input}{which} --note …)"
        log.warning("books %s suspect: %s", source.input, suspect)
    else:
        if accepted:
            reason += f"; {suspect}, accepted by {accepted}"
        for stmt in sql_statements(read_sql(f"ledger/land_{source.input}.sql")):
            con.execute(stmt, _used(stmt, {"run_id": run_id}))
    resource = source.table
    con.execute("DELETE FROM resource_scans WHERE run_id = ? AND resource = ?", [run_id, resource])
    con.execute(
        "INSERT INTO resource_scans (run_id, resource, status, reason, records, rejects) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [run_id, resource, status, reason, loaded, rejects],
    )
    return InputLoad(
        source.input, source.describe(), read, loaded, rejects, suspect, accepted, unread
    )


def _suspect(
    con: duckdb.DuckDBPyConnection, name: str, run_id: str, loaded: int, ratio: float
) -> str | None:
    """Why input `name` is suspect with `loaded` rows tonight (None: it is not). Compared
    with the last earlier night that read it (one held suspect and not accepted did not)."""
    row = con.execute(
        "SELECT rows_loaded FROM ledger_loads WHERE input = ? AND run_id <> ? "
        "AND (suspect IS NULL OR accepted IS NOT NULL) ORDER BY as_of DESC LIMIT 1",
        [name, run_id],
    ).fetchone()
    last = int(row[0]) if row else None
    if loaded == 0:
        before = f"last night {last:,}" if last is not None else "the first night of this input"
        return f"{name}: 0 rows, {before}"
    if last is not None and loaded < ratio * last:
        return (
            f"{name}: {loaded:,} rows, last night {last:,} "
            f"(fewer than RECON_LEDGER_MIN_RATIO {ratio:g} of them)"
        )
    return None


def _accepted(con: duckdb.DuckDBPyConnection, trail: AckLog, name: str, run_id: str) -> str | None:
    """Who accepted input `name` for this night, and why: an `accept_books` line written
    after the last earlier night read the books (None: not accepted)."""
    row = con.execute(
        "SELECT max(loaded_at) FROM ledger_loads WHERE run_id <> ?", [run_id]
    ).fetchone()
    since = row[0] if row else None
    for line in reversed(trail.records(["accept_books"])):
        if line.get("input") == name and (since is None or line["at"] > since):
            return f"{line.get('who')} at {line['at']:%Y-%m-%d %H:%M} UTC: {line.get('note')}"
    return None


def _mark_incomplete(con: duckdb.DuckDBPyConnection, run_id: str, suspect: list[InputLoad]) -> None:
    """A night with a suspect books input is incomplete; its reason says so first."""
    if not suspect:
        return
    why = "books suspect: " + "; ".join(str(i.suspect) for i in suspect)
    con.execute(
        "UPDATE runs SET status = CASE WHEN status = 'complete' THEN 'incomplete' ELSE status END, "
        "reason = concat_ws('; ', ?, reason) WHERE run_id = ?",
        [why, run_id],
    )


def _manual_matches(
    con: duckdb.DuckDBPyConnection, trail: AckLog, run_id: str
) -> list[tuple[str, str]]:
    """The people's matches of the audit trail (the latest `match`/`unmatch` line per order)
    that still hold: the order and every payment still there with the amounts they had when
    matched. All of them go to `ledger_manual_matches` with their state; the pairs that hold
    are returned for rule `manual`."""
    latest: dict[str, dict[str, Any]] = {}
    for line in trail.records(["match", "unmatch"]):
        latest[str(line.get("order"))] = line
    con.execute("DELETE FROM ledger_manual_matches")
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _manual (order_key VARCHAR, payment_id VARCHAR, "
        "order_amount BIGINT, currency VARCHAR, payment_amount BIGINT, who VARCHAR, "
        "matched_at TIMESTAMPTZ, note VARCHAR)"
    )
    rows = [
        [
            key,
            str(pid),
            line.get("order_amount_minor"),
            line.get("currency"),
            amount,
            line.get("who"),
            line["at"],
            line.get("note"),
        ]
        for key, line in latest.items()
        if line["action"] == "match"
        for pid, amount in (line.get("payments") or {}).items()
    ]
    if not rows:
        return []
    con.executemany("INSERT INTO _manual VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute(read_sql("ledger/manual_matches.sql"), {"run_id": run_id})
    applied = con.execute(
        "SELECT m.order_key, m.payment_id FROM _manual AS m "
        "SEMI JOIN ledger_manual_matches AS a ON a.order_key = m.order_key AND a.state = 'applied'"
    ).fetchall()
    con.execute("DROP TABLE IF EXISTS temp._manual")
    pairs: list[tuple[str, str]] = [(str(k), str(p)) for k, p in applied]
    return pairs


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
