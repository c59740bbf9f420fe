"""What the published warehouse offers every reader: analysts' views, DuckDB 1.x storage.

`Warehouse.publish` calls `prepare_for_readers` on the closed working copy just before the
rename, so the file analysts open

- carries the reference tables and macros (`currencies`, `money()`, `aging_bucket()`, …,
  `sql/reference/`), what the catalogue generates (`live_records`, `status_values`, the
  resources' `*_major` views: recon.warehouse.catalogue_views) and the analysts' views
  (`sql/views/`:
  the other `*_major`, `open_invoices`, `findings_current`, `night_over_night`), made
  again on every publish (`make_reader_objects`), with the fingerprint of what makes them
  and of the catalog they stand on in `reader_objects`, so that a working copy makes them
  only when it changed (`refresh_reader_objects`: the early load once a list is loaded and
  none waits, recon.night.early, else the checks);
- is written in DuckDB's v1.0.0 storage format (`STORAGE_VERSION`), which every DuckDB
  from 1.1.0 on reads (tests/analyst/test_published.py), e.g. DBeaver's driver or an older
  notebook; 1.0.0 reads the format but not a newer DuckDB's catalog entries. DuckDB's own
  default for a new file is its newest format ("version number 999" to a 1.x reader).

A file keeps the storage version it was created with. recon creates its working copies in
STORAGE_VERSION (`recon.warehouse.working_copy`), so only a warehouse published before that is
still in
the newest format: it is copied once into a v1.0.0 file (`COPY FROM DATABASE`); later nights
start from the compatible published copy and pay nothing for it.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson

from recon.errors import WarehouseError
from recon.money import currency
from recon.money.currency import create_currencies_table
from recon.warehouse import catalogue_views, dictionary
from recon.warehouse.catalogue_views import create_catalogue_objects
from recon.warehouse.database import STORAGE_VERSION, transaction
from recon.warehouse.sql import read_sql, sql_dir, sql_statements

__all__ = [
    "create_views",
    "keep_fingerprint",
    "make_reader_objects",
    "prepare_for_readers",
    "reader_objects_current",
    "reader_objects_fingerprint",
    "refresh_reader_objects",
    "statements_digest",
    "storage_version",
    "stored_fingerprint",
]


def storage_version(con: duckdb.DuckDBPyConnection, database: str) -> str | None:
    """The storage version DuckDB reports for the attached `database` (e.g. 'v1.0.0+')."""
    row = con.execute(
        "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = ?",
        [database],
    ).fetchone()
    return str(row[0]) if row and row[0] is not None else None


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """The table `reader_objects`, the reference tables and macros, the analysts' views,
    then the data dictionary's comments (recreating a view drops its comments: they are
    applied after it)."""
    from recon.warehouse.dictionary import apply_dictionary

    for stmt in sql_statements(read_sql("published/reader_objects.sql")):
        con.execute(stmt)  # its words too (its fingerprint: refresh_reader_objects)
    create_currencies_table(con)
    for path in sorted((sql_dir() / "reference").glob("*.sql")):
        for stmt in sql_statements(path.read_text(encoding="utf-8")):
            con.execute(stmt)
    create_catalogue_objects(con)  # live_records, status values, the resources' *_major
    for path in sorted((sql_dir() / "views").glob("*.sql")):
        for stmt in sql_statements(path.read_text(encoding="utf-8")):
            con.execute(stmt)
    apply_dictionary(con)


def statements_digest() -> bytes:
    """What `create_views` runs, as bytes: DuckDB's version and the storage version, the SQL
    files it reads (`sql/reference`, `sql/catalogue`, `sql/views`, `sql/dictionary.sql`),
    what the catalogue and the currency list generate from them, and the source of the
    modules that write the statements (a change of how they are made changes the digest)."""
    h = hashlib.sha256()
    h.update(f"duckdb {duckdb.__version__} storage {STORAGE_VERSION}\n".encode())
    root = sql_dir()
    folders = ("reference", "catalogue", "views")
    files = [
        *(p for folder in folders for p in (root / folder).glob("*.sql")),
        root / "dictionary.sql",
        root / "published" / "catalog_state.sql",
    ]
    for path in sorted(files):
        h.update(f"{path.relative_to(root)}\n".encode())
        h.update(path.read_bytes())
    for module in (catalogue_views, currency, dictionary):
        h.update(Path(str(module.__file__)).read_bytes())
    h.update(Path(__file__).read_bytes())
    h.update(catalogue_views.live_records_sql().encode())
    generated = {
        "status": catalogue_views.status_rows(),
        "money_paths": catalogue_views.money_path_rows(),
        "currencies": currency.currency_rows(),
    }
    h.update(orjson.dumps(generated, option=orjson.OPT_SORT_KEYS))
    return h.digest()


def reader_objects_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """The fingerprint of the readers' objects on `con`: what makes them (`statements_digest`)
    and the catalog of the database as it is now (`sql/published/catalog_state.sql`: every
    table, view, macro and column of schema main, with its comment and definition)."""
    h = hashlib.sha256(statements_digest())
    h.update(orjson.dumps(con.execute(read_sql("published/catalog_state.sql")).fetchall()))
    return h.hexdigest()


def stored_fingerprint(con: duckdb.DuckDBPyConnection, database: str | None = None) -> str | None:
    """The fingerprint `reader_objects` holds in `database` (an attached one; default: the
    database `con` opened); None when it holds none."""
    if database is None:
        row = con.execute("SELECT current_database()").fetchone()
        database = str(row[0]) if row else ""
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? "
        "AND schema_name = 'main' AND table_name = 'reader_objects'",
        [database],
    ).fetchall()
    if not found[0][0]:
        return None
    quoted = '"' + database.replace('"', '""') + '"'
    row = con.execute(f"SELECT max(fingerprint) FROM {quoted}.main.reader_objects").fetchone()  # noqa: S608 - quoted
    return str(row[0]) if row and row[0] is not None else None


def reader_objects_current(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the readers' objects on `con` are what `create_views` would make: the
    fingerprint the last `refresh_reader_objects` stored matches the one computed now."""
    stored = stored_fingerprint(con)
    return stored is not None and stored == reader_objects_fingerprint(con)


def refresh_reader_objects(con: duckdb.DuckDBPyConnection) -> bool:
    """`create_views` on `con` unless the objects are current (`reader_objects_current`);
    then store the fingerprint of the result. True when they were made again."""
    if reader_objects_current(con):
        return False
    make_reader_objects(con)
    return True


def make_reader_objects(con: duckdb.DuckDBPyConnection) -> None:
    """`create_views` on `con`, then store the fingerprint of the result."""
    create_views(con)
    keep_fingerprint(con, reader_objects_fingerprint(con))  # of the catalog they left


def keep_fingerprint(con: duckdb.DuckDBPyConnection, fingerprint: str | None) -> None:
    """The table `reader_objects` (`sql/published/reader_objects.sql`) on `con`, holding
    `fingerprint` alone (nothing for None: made again next time)."""
    for stmt in sql_statements(read_sql("published/reader_objects.sql")):
        con.execute(stmt)
    with transaction(con):
        con.execute("DELETE FROM reader_objects")
        if fingerprint is not None:
            con.execute(
                "INSERT INTO reader_objects BY NAME SELECT ? AS fingerprint, ? AS made_at",
                [fingerprint, datetime.now(UTC)],
            )


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
            # Made again on every publish, fingerprint or not: a file whose last checkpoint
            # was not this one's catalog changes could not be read by DuckDB 1.1 ("Failed to
            # load metadata pointer", tests/analyst/test_published.py, now and then); the
            # fingerprint lets the checks skip them on the working copy.
            make_reader_objects(con)
            con.execute("CHECKPOINT")
            row = con.execute("SELECT current_database()").fetchone()
            current = storage_version(con, str(row[0])) if row else None
        finally:
            con.close()
        if current != f"{STORAGE_VERSION}+":
            _rewrite_compatible(path)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot prepare {path} for readers: {exc}") from None
