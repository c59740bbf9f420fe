"""The audit trail's copy in the warehouse, `finding_acks`: the events of the trail
(recon.findings.acks), loaded at every load and once more just before publish, so that
acknowledgements made while a run ran are in the file it publishes. `recon.findings.verify`
compares the trail with this copy's `line_hash` to find lines cut off the trail's end."""

from __future__ import annotations

from pathlib import Path

import duckdb
import orjson
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.database import transaction
from recon.findings.acks import AckLog

__all__ = ["load_acks", "refresh_acks"]


def load_acks(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Replace `finding_acks` with the log's events (in one statement); the count."""
    events = AckLog(path).read()
    columns = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'finding_acks'"
        ).fetchall()
    }
    rows = [
        {
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
        for e in events
    ]
    names = [n for n in _TYPES if n in columns]
    table = pa.table({n: pa.array([row[n] for row in rows], type=_TYPES[n]) for n in names})
    casts = ", ".join(f"{n}::JSON AS {n}" if n == "details" else n for n in names)
    with transaction(con):
        con.execute("DELETE FROM finding_acks")
        if rows:
            con.register("_trail_rows", table)
            try:
                insert = f"INSERT INTO finding_acks BY NAME SELECT {casts} FROM _trail_rows"  # noqa: S608
                con.execute(insert)  # the names are _TYPES', fixed
            finally:
                con.unregister("_trail_rows")
    return len(rows)


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


def refresh_acks(work_path: Path, path: Path) -> int:
    """Load the log into the (closed) working copy at `work_path`, just before it is
    published, so that acknowledgements made while the run ran are in the new file."""
    if not work_path.exists():
        return 0
    con = duckdb.connect(str(work_path))
    try:
        con.execute("SET TimeZone = 'UTC'")
        count = load_acks(con, path)
        con.execute("CHECKPOINT")
        return count
    finally:
        con.close()
