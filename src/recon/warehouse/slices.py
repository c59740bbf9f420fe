"""The load's statements in slices of landed batch files, each within DuckDB's memory limit,
and what a failed load transaction says (shared by the merge, `recon.warehouse.load`, and the
seen-marking, `recon.warehouse.seen`)."""

from __future__ import annotations

import duckdb

from recon.errors import WarehouseError
from recon.warehouse.landing import RunLanding, unreadable
from recon.warehouse.memory import parse_size

__all__ = ["SLICE_RECORDS", "load_failure", "slice_records", "slices"]

#: Records per slice; 0: from DuckDB's memory limit (`slice_records`).
SLICE_RECORDS = 0

#: Memory an insert takes per landed record it reads. The records read by one insert
#: statement are bounded by DuckDB's memory limit, never by the merchant's size. 2,000 (a
#: 100k-record slice under the "auto" 192 MiB) left a few MiB: a 1M or 2M first night ran
#: out now and then in `INSERT INTO payments` (an allocation of ~336 bytes a record of the
#: slice, 32.4 MiB at 100k, with ~170 MiB of the limit in use) and was retried under twice
#: the limit (~690 MB). At 5,000 (40k records under 192 MiB) the 1M load passes even
#: under 160 MiB (docs/performance.md).
BYTES_PER_RECORD = 5_000
MIN_SLICE_RECORDS = 20_000


def slice_records(con: duckdb.DuckDBPyConnection) -> int:
    """Records per insert slice under the connection's memory limit."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    limit = parse_size(str(row[0] if row else ""))
    if limit is None:
        return MIN_SLICE_RECORDS
    return max(MIN_SLICE_RECORDS, int(limit / BYTES_PER_RECORD))


def slices(
    con: duckdb.DuckDBPyConnection, batches: list[str], *, scale: int = 1
) -> list[tuple[int, list[str]]]:
    """The batch files in consecutive slices of about `slice_records` records each (`scale`
    times as many for a statement taking less memory a record); none holding only empty files."""
    per_slice = scale * (SLICE_RECORDS or slice_records(con))
    rows = dict(
        con.execute(
            "SELECT file_name, num_rows FROM parquet_file_metadata($files)", {"files": batches}
        ).fetchall()
    )
    out: list[tuple[int, list[str]]] = []
    first, size = 0, 0
    for i, path in enumerate(batches):
        size += int(rows.get(path, 0))
        if size >= per_slice or i == len(batches) - 1:
            if size:  # a slice of empty batch files (a list's last flush) reads nothing
                out.append((first, batches[first : i + 1]))
            first, size = i + 1, 0
    return out


def load_failure(exc: duckdb.Error, landing: RunLanding) -> WarehouseError:
    """One line for a load that failed: a landed batch damaged on disk (named, with the way
    out), or DuckDB's first line."""
    text = str(exc)
    for batch in sorted(landing.folder.glob("*/batch-*.parquet")):
        why = unreadable(batch)
        if why is not None:
            return WarehouseError(
                f"landed batch {batch} cannot be read ({why}); "
                f"`recon nightly --resume {landing.run_id}` fetches its pages again"
            )
    first = (text.strip().splitlines() or [type(exc).__name__])[0]
    return WarehouseError(f"loading run {landing.run_id} failed: {first}")
