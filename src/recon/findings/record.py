"""The published warehouse's record of the audit trail (`finding_acks`, `trail_record`):
every line recorded by the action that writes it (recon.findings.acks), in the transaction
committed after the line is in the file."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.errors import WarehouseError
from recon.findings.events import AckEvent
from recon.warehouse.database import open_when_free
from recon.warehouse.sql import read_sql

__all__ = ["RECORD_WAIT_S", "insert_events", "open_record", "record_events"]

_TYPES: dict[str, pa.DataType] = {
    "seq": pa.int64(),
    "action": pa.string(),
    "finding_key": pa.string(),
    "who": pa.string(),
    "acted_at": pa.timestamp("us", tz="UTC"),
    "note": pa.string(),
    "until": pa.date32(),
    "currency": pa.string(),
    "amount_minor": pa.int64(),
    "sides": pa.string(),
    "owner": pa.string(),
    "reason": pa.string(),
    "details": pa.string(),
    "line_hash": pa.string(),
    "prev_hash": pa.string(),
}

RECORD_WAIT_S = 20.0  # how long an action waits for a reader to let go of the warehouse


def open_record(db: Path, *, wait_s: float = RECORD_WAIT_S) -> duckdb.DuckDBPyConnection | None:
    """The published warehouse `db` opened read-write to record trail lines (None: no
    warehouse yet, nothing to record in). A reader holding the file (DuckDB: one writer,
    no reader meanwhile) is waited for up to `wait_s`; then a WarehouseError, nothing
    written. When this process holds the file open itself (a load writing it in place), its
    own load copies the trail: None, nothing to record through a second connection."""
    try:
        return open_when_free(
            db, read_only=False, wait_s=wait_s, poll_s=0.2, wait_for_this_process=False
        )
    except WarehouseError as exc:
        if "lock" in str(exc).lower():
            raise WarehouseError(
                f"the warehouse {db} is open in another program, so this action cannot be "
                "recorded in it; nothing was written: try again when it is closed"
            ) from None
        raise


def record_events(con: duckdb.DuckDBPyConnection, events: Sequence[AckEvent]) -> None:
    """Insert `events` (lines just written) into `finding_acks` on `con` (in the caller's
    transaction), and note from which line on the warehouse records lines as written."""
    if not events:
        return
    con.execute(read_sql("trail/record.sql"))
    insert_events(con, events)
    if con.execute("SELECT count(*) FROM trail_record").fetchall()[0][0] == 0:
        con.execute("INSERT INTO trail_record VALUES (?, ?)", [events[0].seq, datetime.now(UTC)])


def _columns(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'finding_acks'"
        ).fetchall()
    }


def _row(e: AckEvent) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "action": e.action,
        "finding_key": e.finding_key,
        "who": e.who,
        "acted_at": e.at,
        "note": e.note,
        "until": e.until,
        "currency": e.amounts.currency if e.amounts else None,
        "amount_minor": e.amounts.amount_minor if e.amounts else None,
        "sides": e.amounts.sides if e.amounts else None,
        "owner": e.owner,
        "reason": e.reason,
        "details": orjson.dumps(dict(e.fields)).decode() if e.fields else None,
        "line_hash": e.line_hash,
        "prev_hash": e.prev,
    }


def insert_events(con: duckdb.DuckDBPyConnection, events: Sequence[AckEvent]) -> None:
    rows = [_row(e) for e in events]
    columns = _columns(con)
    names = [n for n in _TYPES if n in columns]
    table = pa.table({n: pa.array([row[n] for row in rows], type=_TYPES[n]) for n in names})
    casts = ", ".join(f"{n}::JSON AS {n}" if n == "details" else n for n in names)
    con.register("_trail_rows", table)
    try:
        insert = f"INSERT INTO finding_acks BY NAME SELECT {casts} FROM _trail_rows"  # noqa: S608
        con.execute(insert)  # the names are _TYPES', fixed
    finally:
        con.unregister("_trail_rows")
