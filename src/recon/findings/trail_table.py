"""The audit trail's record in the warehouse, `finding_acks`.

Every line is inserted into the published warehouse by the action that writes it
(`record_events`, under the trail's lock, recon.findings.acks), so `findings_current` shows
it at once and `recon findings verify` has a copy of every line made outside the file. A
night copies the trail into its working copy at load and once more just before publish
(`load_acks`, `refresh_acks`), after checking that the file agrees with the published record
(recon.findings.verify): a night never copies a trail that disagrees.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.findings.acks import AckLog
from recon.findings.record import insert_events
from recon.warehouse.database import transaction
from recon.warehouse.sql import read_sql

__all__ = [
    "copy_checked",
    "load_acks",
    "refresh_acks",
    "trail_head",
]


def load_acks(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Replace `finding_acks` with the log's events (in one statement); the count."""
    events = AckLog(path).read()
    with transaction(con):
        con.execute("DELETE FROM finding_acks")
        if events:
            insert_events(con, events)
        con.execute(read_sql("trail/record.sql"))
        if con.execute("SELECT count(*) FROM trail_record").fetchall()[0][0] == 0:
            # From the next line on, every line is recorded as it is written.
            con.execute(
                "INSERT INTO trail_record VALUES (?, ?)", [len(events) + 1, datetime.now(UTC)]
            )
    return len(events)


def trail_head(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The trail's head as the warehouse on `con` records it: {"lines", "head"} (the SHA-256
    of its last line), or None for an empty trail."""
    try:
        row = con.execute(read_sql("trail/head.sql")).fetchone()
    except duckdb.Error:
        return None
    if row is None or row[0] is None:
        return None
    return {"lines": int(row[0]), "head": str(row[1])}


def copy_checked(
    con: duckdb.DuckDBPyConnection, db: Path, trail: Path, reports: Path | None
) -> int:
    """What a night's load does: under the trail's lock, check the trail against its record
    (recon.findings.verify: a TrailDisagrees, nothing copied, when they differ), then copy
    it into the working copy on `con`."""
    from recon.findings.verify import check_before_copy

    with AckLog(trail).locked(create=False):
        check_before_copy(db, trail, reports)
        return load_acks(con, trail)


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
