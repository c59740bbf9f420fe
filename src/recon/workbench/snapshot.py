"""The queue's snapshot: the published warehouse's latest unresolved findings copied, in the
queue's order (check_name, finding_key), into a DuckDB file of the workbench's own beside it
(`data/recon.workbench.duckdb`).

Why: sorted, the first page of a million findings reads a few row groups (measured on the
shared 2-core machine: 0.16-0.24 s instead of 0.9-1.3 s). The snapshot is rebuilt in a
background thread when the published file changes (a publish renames a new file over it:
another inode, size or mtime); until it is ready the queue reads the published warehouse
directly. Each is opened read-only per request and closed before the answer; the snapshot is
written to a temporary name and renamed, so readers never see half of it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path

import duckdb

from recon.warehouse.database import connect, open_readonly
from recon.warehouse.sql import read_sql
from recon.workbench.holding import HOLDING

__all__ = ["OPENING", "QueueSnapshot", "open_file", "snapshot_path"]

log = logging.getLogger("recon.workbench")
Stamp = tuple[int, int, int]
# DuckDB files are opened one at a time in this process: two instances created at once on
# two threads left one without its Python table functions ("Table Function with name
# python_arrow_scan does not exist", seen with DuckDB 2.0 when a snapshot was built while a
# request read the warehouse).
OPENING = threading.Lock()


def open_file(path: Path, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """`path` opened (read-only unless told), one opening at a time."""
    with OPENING:
        return open_readonly(path) if read_only else connect(path)


def snapshot_path(db: Path) -> Path:
    """The snapshot of the warehouse `db`: `data/recon.duckdb` -> `data/recon.workbench.duckdb`."""
    return db.with_name(f"{db.stem}.workbench.duckdb")


def _stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class QueueSnapshot:
    """The snapshot of one warehouse, kept fresh."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.path = snapshot_path(db)
        self._lock = threading.Lock()
        self._ready: Stamp | None = None  # the published file's stamp the snapshot holds
        self._building: Stamp | None = None

    def current(self) -> Path | None:
        """The snapshot's path if it holds the published file as it is now; else None (and a
        rebuild started, unless one is running)."""
        stamp = _stamp(self.db)
        if stamp is None:
            return None
        with self._lock:
            if self._ready == stamp and self.path.exists():
                return self.path
            if self._building is None:
                self._building = stamp
                threading.Thread(target=self._build, args=(stamp,), daemon=True).start()
        return None

    def wait(self, timeout: float = 600.0) -> Path | None:
        """Build (or wait for) the snapshot of the file as it is now; for tests and benches."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.current()
            if found is not None:
                return found
            time.sleep(0.05)
        return None

    def _build(self, stamp: Stamp) -> None:
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
                leftover.unlink(missing_ok=True)
            with HOLDING.read:  # requests read the published file meanwhile; actions wait
                source = open_file(self.db)
                target = open_file(tmp, read_only=False)
                try:
                    runs = source.sql(
                        "SELECT run_id, started_at, loaded_at FROM runs"
                    ).to_arrow_table()
                    target.register("runs_in", runs)
                    target.execute("CREATE TABLE runs AS SELECT * FROM runs_in")
                    target.unregister("runs_in")
                    reader = source.sql(read_sql("workbench/snapshot_source.sql")).to_arrow_reader(
                        100_000
                    )
                    target.register("staged_in", reader)
                    target.execute("CREATE TABLE staged AS SELECT * FROM staged_in")
                    target.unregister("staged_in")
                    target.execute(read_sql("workbench/snapshot_sort.sql"))
                    target.execute("DROP TABLE staged")
                    target.execute("CHECKPOINT")
                finally:
                    target.close()
                    source.close()
            if _stamp(self.db) != stamp:  # published again meanwhile: build anew next time
                tmp.unlink(missing_ok=True)
                return
            os.replace(tmp, self.path)
            with self._lock:
                self._ready = stamp
        except (duckdb.Error, OSError) as exc:
            log.warning("workbench: queue snapshot not built (%s)", str(exc).splitlines()[0])
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        finally:
            with self._lock:
                self._building = None
