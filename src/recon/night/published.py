"""What the published warehouse offers every reader: analysts' views, DuckDB 1.x storage.

`Warehouse.publish` calls `prepare_for_readers` on the closed working copy just before the
rename, so the file analysts open

- carries the reference tables and macros (`currencies`, `money()`, `aging_bucket()`, …,
  `sql/reference/`), what the catalogue generates (`live_records`, `status_values`, the
  resources' `*_major` views: recon.catalogue_views) and the analysts' views (`sql/views/`:
  the other `*_major`, `open_invoices`, `findings_current`, `night_over_night`), refreshed
  on every publish;
- is written in DuckDB's v1.0.0 storage format (`STORAGE_VERSION`), which every DuckDB
  from 1.1.0 on reads (tests/analyst/test_published.py), e.g. DBeaver's driver or an older
  notebook; 1.0.0 reads the format but not a newer DuckDB's catalog entries. DuckDB's own
  default for a new file is its newest format ("version number 999" to a 1.x reader).

A file keeps the storage version it was created with. recon creates its working copies in
STORAGE_VERSION (`recon.night.warehouse`), so only a warehouse published before that is still in
the newest format: it is copied once into a v1.0.0 file (`COPY FROM DATABASE`); later nights
start from the compatible published copy and pay nothing for it.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from recon.catalogue_views import create_catalogue_objects
from recon.currency import create_currencies_table
from recon.database import STORAGE_VERSION
from recon.errors import WarehouseError
from recon.sql import sql_dir, sql_statements

__all__ = ["create_views", "prepare_for_readers", "storage_version"]


def storage_version(con: duckdb.DuckDBPyConnection, database: str) -> str | None:
    """The storage version DuckDB reports for the attached `database` (e.g. 'v1.0.0+')."""
    row = con.execute(
        "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = ?",
        [database],
    ).fetchone()
    return str(row[0]) if row and row[0] is not None else None


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """The reference tables and macros, the analysts' views, then the data dictionary's
    comments (recreating a view drops its comments: they are applied after it)."""
    from recon.dictionary import apply_dictionary

    create_currencies_table(con)
    for path in sorted((sql_dir() / "reference").glob("*.sql")):
        for stmt in sql_statements(path.read_text(encoding="utf-8")):
            con.execute(stmt)
    create_catalogue_objects(con)  # live_records, status values, the resources' *_major
    for path in sorted((sql_dir() / "views").glob("*.sql")):
        for stmt in sql_statements(path.read_text(encoding="utf-8")):
            con.execute(stmt)
    apply_dictionary(con)


def _rewrite_compatible(path: Path) -> None:
    """Copy the database at `path` into a new file in STORAGE_VERSION and put it in place."""
    compat = path.with_name(f"{path.name}.compat")
    compat.unlink(missing_ok=True)
    con = duckdb.connect()
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(path)])
        con.execute(f"ATTACH ? AS dst (STORAGE_VERSION '{STORAGE_VERSION}')", [str(compat)])
        con.execute("COPY FROM DATABASE src TO dst")
        con.execute("DETACH dst")
        con.execute("DETACH src")
    except BaseException:
        con.close()
        compat.unlink(missing_ok=True)
        Path(f"{compat}.wal").unlink(missing_ok=True)
        raise
    con.close()
    os.replace(compat, path)


def prepare_for_readers(path: Path) -> None:
    """Create the analysts' views in the (closed) database at `path` and make sure it is in
    STORAGE_VERSION; raises WarehouseError when it cannot."""
    try:
        con = duckdb.connect(str(path))
        try:
            con.execute("SET TimeZone = 'UTC'")
            create_views(con)
            con.execute("CHECKPOINT")
            row = con.execute("SELECT current_database()").fetchone()
            current = storage_version(con, str(row[0])) if row else None
        finally:
            con.close()
        if current != f"{STORAGE_VERSION}+":
            _rewrite_compatible(path)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot prepare {path} for readers: {exc}") from None
