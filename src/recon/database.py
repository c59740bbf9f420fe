"""Opening a warehouse file: in UTC, in a storage format DuckDB 1.x reads, one line when not.

The library's lowest door to DuckDB files: the night's steps (`recon.night.warehouse`) open
their working copy through it, and every reader — reports, findings, exports — the
published file read-only.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

from recon.errors import WarehouseError
from recon.memory import duckdb_config

__all__ = ["STORAGE_VERSION", "connect", "open_readonly", "rollback", "transaction"]

# The oldest DuckDB storage format recon publishes in; DuckDB >= 1.1.0 opens the file
# (recon.night.published).
STORAGE_VERSION = "v1.0.0"


def connect(
    path: Path, *, read_only: bool = False, memory_limit: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file at `path` in UTC; a file created read-write is written in
    STORAGE_VERSION. A WarehouseError (one line) when DuckDB cannot open it."""
    # DuckDB sized from the machine ("auto", recon.memory) unless a size is set; read-only
    # connections too (the report of a 1M-payment night peaked at 730 MB without it).
    config: dict[str, str | bool | int | float | list[str]] = dict(
        duckdb_config(memory_limit, read_only=read_only)
    )
    if not read_only:  # a file created now is one DuckDB 1.1+ reads (recon.night.published)
        config["storage_compatibility_version"] = STORAGE_VERSION
    try:
        con = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open the warehouse {path}: {exc}") from None
    con.execute("SET TimeZone = 'UTC'")
    return con


READER_WAIT_S = 10.0  # an action records its trail line in the published file: a moment


def open_readonly(path: Path, *, wait_s: float = READER_WAIT_S) -> duckdb.DuckDBPyConnection:
    """Open the published warehouse read-only (what reports and exports use). An action
    holds it read-write for the moment it takes to record its audit-trail line
    (recon.findings.acks): a conflicting lock is waited out for up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        if not path.exists():
            raise WarehouseError(f"no warehouse at {path}: run `recon nightly` first")
        try:
            return connect(path, read_only=True)
        except WarehouseError as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
        time.sleep(0.1)


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """A transaction of its own on `con`, committed when the block ends, rolled back if the
    block or its COMMIT raises (`rollback`)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open (a failed COMMIT or a full disk may have
    ended it already: "no transaction is active" must not hide why)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")
