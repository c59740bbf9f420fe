"""Opening a warehouse file: in UTC, in a storage format DuckDB 1.x reads, one line when not.

The library's lowest door to DuckDB files: the night's steps (`recon.warehouse.working_copy`) open
their working copy through it, and every reader — reports, findings, exports — the
published file read-only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

from recon.errors import WarehouseError
from recon.warehouse.memory import configured_memory_limit, duckdb_config

__all__ = [
    "STORAGE_VERSION",
    "connect",
    "open_readonly",
    "open_when_free",
    "rollback",
    "spill_directory",
    "transaction",
]

# The oldest DuckDB storage format recon publishes in; DuckDB >= 1.1.0 opens the file
# (recon.warehouse.published).
STORAGE_VERSION = "v1.0.0"


def spill_directory(path: Path) -> Path:
    """Where DuckDB spills what does not fit its memory limit: `<db>.tmp` beside the file
    (DuckDB's own choice), or, when that folder is not writable (an analyst reading a
    warehouse published by another account), a folder of this user's under the system's
    temporary folder. DuckDB creates it on the first spill and removes it on close."""
    folder = path.parent if str(path.parent) else Path(".")
    if os.access(folder, os.W_OK):
        return path.with_name(f"{path.name}.tmp")
    return Path(tempfile.gettempdir()) / f"recon-duckdb-{os.getuid()}" / f"{path.name}.tmp"


def connect(
    path: Path, *, read_only: bool = False, memory_limit: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file at `path` in UTC; a file created read-write is written in
    STORAGE_VERSION. A WarehouseError (one line) when DuckDB cannot open it.

    Every connection, read-only ones too, gets a memory limit — `memory_limit`, else
    `RECON_DUCKDB_MEMORY_LIMIT`, else "auto" (recon.warehouse.memory) — and a folder to spill to
    (`spill_directory`): past its limit DuckDB writes to disk instead of failing (issue 38)."""
    # DuckDB sized from the machine ("auto", recon.warehouse.memory) unless a size is set; read-only
    # connections too (the report of a 1M-payment night peaked at 730 MB without it).
    config: dict[str, str | bool | int | float | list[str]] = dict(
        duckdb_config(memory_limit or configured_memory_limit(), read_only=read_only)
    )
    config["temp_directory"] = str(spill_directory(path))
    if not read_only:  # a file created now is one DuckDB 1.1+ reads (recon.warehouse.published)
        config["storage_compatibility_version"] = STORAGE_VERSION
    try:
        con = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open the warehouse {path}: {exc}") from None
    con.execute("SET TimeZone = 'UTC'")
    return con


def held_elsewhere(exc: Exception) -> bool:
    """Whether opening failed only because the file is held: by another process (its lock)
    or by this one with the other mode (a read-write and a read-only connection to one file
    cannot coexist in a process): worth waiting for, unlike a damaged file."""
    return "lock" in str(exc).lower() or _held_here(exc)


def _held_here(exc: Exception) -> bool:
    """Whether opening failed because this process holds the file in the other mode."""
    return "different configuration" in str(exc).lower()


def open_when_free(
    path: Path,
    *,
    read_only: bool,
    wait_s: float,
    poll_s: float,
    wait_for_this_process: bool,
    memory_limit: str | None = None,
) -> duckdb.DuckDBPyConnection | None:
    """`path` opened (`connect`) once no other connection holds it, trying every `poll_s`
    for up to `wait_s`; then the last WarehouseError, as it is for anything but a held file.
    None: no file at `path`, or — `wait_for_this_process` False — this process holds the
    file itself in the other mode (a wait that would never end for a single-threaded caller
    is given up at once)."""
    deadline = time.monotonic() + wait_s
    while True:
        if not path.exists():
            return None
        try:
            return connect(path, read_only=read_only, memory_limit=memory_limit)
        except WarehouseError as exc:
            if not wait_for_this_process and _held_here(exc):
                return None
            if not held_elsewhere(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(poll_s)


READER_WAIT_S = 10.0  # an action records its trail line in the published file: a moment


def open_readonly(
    path: Path, memory_limit: str | None = None, *, wait_s: float = READER_WAIT_S
) -> duckdb.DuckDBPyConnection:
    """Open the published warehouse read-only (what reports and exports use), within
    `memory_limit` (else `RECON_DUCKDB_MEMORY_LIMIT`, else "auto"). An action holds it
    read-write for the moment it takes to record its audit-trail line (recon.findings.acks):
    a conflicting lock is waited out for up to `wait_s`."""
    con = open_when_free(
        path,
        read_only=True,
        wait_s=wait_s,
        poll_s=0.1,
        wait_for_this_process=True,
        memory_limit=memory_limit,
    )
    if con is None:
        from recon.config.environment import no_warehouse

        raise WarehouseError(no_warehouse(path))
    return con


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
