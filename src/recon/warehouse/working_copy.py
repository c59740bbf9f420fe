"""The DuckDB warehouse: a run lock, a private working copy, publish by rename.

DuckDB lets one process open a file read-write, and a reader holding it read-only makes a
read-write open fail (docs/facts.md "DuckDB"). So a run never opens the published file for
writing: it copies it to a working file next to it, works there, checkpoints, and renames the
working
file over the published one. A reader keeps the snapshot it opened until it reconnects; a
run never fails because somebody is reading. A lock file keeps two runs apart.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import orjson

from recon.errors import WarehouseError, disk_full
from recon.pids import pid_alive
from recon.warehouse.catalogue_views import ensure_live_records
from recon.warehouse.database import connect, spill_directory
from recon.warehouse.dictionary import apply_dictionary
from recon.warehouse.load import (
    LoadResult,
    define_load_macros,
    load_resource,
    load_run,
    run_status,
)
from recon.warehouse.memory import configured_memory_limit, duckdb_config, release
from recon.warehouse.migrations import apply_migrations
from recon.warehouse.published import prepare_for_readers
from recon.warehouse.seen import mark_seen
from recon.warehouse.trail_file import acks_path, trail_locked

# The load (recon.warehouse.load) and the seen-marking (recon.warehouse.seen) lived here: their
# names are still importable from this module.
__all__ = [
    "LoadResult",
    "Warehouse",
    "check_readable",
    "define_load_macros",
    "disk_full",
    "load_resource",
    "load_run",
    "mark_seen",
    "run_status",
]


def check_readable(path: Path) -> None:
    """The published warehouse, if there is one, opens and answers (a preflight: a file
    damaged on disk stops the night before any request, not after the extraction)."""
    if not path.exists():
        return
    try:
        con = duckdb.connect(str(path), read_only=True, config=_readonly_config(path))
    except duckdb.Error as exc:
        raise _unusable(path, exc) from None
    try:
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            con.execute("SELECT count(*) FROM query_table(?)", [table]).fetchone()
    except duckdb.Error as exc:
        raise _unusable(path, exc) from None
    finally:
        con.close()


def _readonly_config(path: Path) -> dict[str, str | bool | int | float | list[str]]:
    """RECON_DUCKDB_MEMORY_LIMIT and a spill folder, as every connection
    (recon.warehouse.database)."""
    return {
        **duckdb_config(configured_memory_limit(), read_only=True),
        "temp_directory": str(spill_directory(path)),
    }


def _unusable(path: Path, exc: duckdb.Error) -> WarehouseError:
    if "lock" in str(exc).lower():  # held by a writer outside recon: not damage
        return WarehouseError(f"cannot open the warehouse {path}: {exc}")
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return WarehouseError(
        f"the warehouse {path} is damaged and cannot be read ({first}); nothing was "
        "fetched: restore it from a backup, or move it aside to start afresh"
    )


@dataclass(frozen=True)
class Warehouse:
    """The published file and its private working copy and lock beside it."""

    path: Path
    memory_limit: str | None = None  # DuckDB's, for loads and checks (RECON_DUCKDB_MEMORY_LIMIT)

    @property
    def work_path(self) -> Path:
        return self.path.with_name(f".{self.path.name}.work")

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(f".{self.path.name}.lock")

    # -- the lock -------------------------------------------------------------------
    def acquire(self, owner: str) -> None:
        """Take the run lock; a lock left by a dead process is taken over."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WarehouseError(f"cannot create {self.path.parent}: {exc.strerror}") from None
        if not os.access(self.path.parent, os.W_OK):
            raise WarehouseError(f"the warehouse folder {self.path.parent} is not writable")
        payload = orjson.dumps({"owner": owner, "pid": os.getpid()})
        for _ in range(2):
            try:
                fd = os.open(self.lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                holder = self._holder()
                if holder and holder.get("owner") == owner and holder.get("pid") == os.getpid():
                    return
                if holder and pid_alive(int(holder.get("pid", 0))):
                    raise WarehouseError(
                        f"another recon run ({holder.get('owner')}, pid {holder.get('pid')}) "
                        f"is writing {self.path}; try again when it ends"
                    ) from None
                self.lock_path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
            return
        raise WarehouseError(f"cannot take the lock {self.lock_path}")

    def held_by_another(self) -> bool:
        """True while another live process holds the run lock."""
        holder = self._holder()
        pid = int(holder.get("pid", 0)) if holder else 0
        return pid != os.getpid() and pid_alive(pid)

    def release(self) -> None:
        holder = self._holder()
        if holder and holder.get("pid") == os.getpid():
            self.lock_path.unlink(missing_ok=True)

    def _holder(self) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = orjson.loads(self.lock_path.read_bytes())
            return data
        except (OSError, orjson.JSONDecodeError):
            return None

    # -- the working copy --------------------------------------------------------------
    def open_work(self, *, fresh: bool) -> duckdb.DuckDBPyConnection:
        """Open the working copy (a fresh copy of the published file when `fresh`)."""
        wal = Path(f"{self.work_path}.wal")
        if fresh or not self.work_path.exists():
            self.work_path.unlink(missing_ok=True)
            wal.unlink(missing_ok=True)
            if self.path.exists():
                try:
                    # Actions record their trail lines in the published file under the
                    # trail's lock (recon.warehouse.trail_file): never copy it half-written.
                    with trail_locked(acks_path(self.path), create=False):
                        shutil.copyfile(self.path, self.work_path)
                except OSError as exc:
                    raise WarehouseError(f"cannot copy {self.path}: {exc.strerror}") from None
        con = connect(self.work_path, memory_limit=self.memory_limit)
        if apply_migrations(con):  # new tables or columns: their comments (views: at publish)
            apply_dictionary(con)
        ensure_live_records(con, temp=False)  # where the checks run (the rest: run_checks)
        return con

    def publish(self) -> None:
        """Rename the (closed, checkpointed) working copy over the published file, with the
        analysts' views in it and in a storage format DuckDB 1.x reads
        (recon.warehouse.published)."""
        if Path(f"{self.work_path}.wal").exists():
            # A WAL means the copy was not closed cleanly: fold it in before publishing.
            connect(self.work_path).close()
        prepare_for_readers(self.work_path)
        stale_wal = Path(f"{self.path}.wal")
        stale_wal.unlink(missing_ok=True)  # a leftover .wal would block the next open
        os.replace(self.work_path, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def discard(self) -> None:
        self.work_path.unlink(missing_ok=True)
        Path(f"{self.work_path}.wal").unlink(missing_ok=True)

    @contextlib.contextmanager
    def session(
        self,
        owner: str,
        *,
        fresh: bool,
        publish: bool,
        opened: duckdb.DuckDBPyConnection | None = None,
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """Lock, open the working copy, yield it; on success close (and publish).

        `opened`: the working copy is open already on this connection (a load begun while
        extracting, recon.night.early), under the lock taken for `owner` in this process."""
        self.acquire(owner)
        try:
            con = opened if opened is not None else self.open_work(fresh=fresh)
            try:
                yield con
                con.execute("CHECKPOINT")
            finally:
                con.close()
                release()  # DuckDB's buffers, freed by the close: back to the OS
            if publish:
                self.publish()
        except (duckdb.Error, OSError) as exc:
            if publish:
                self.discard()
            if not disk_full(exc):
                raise
            raise WarehouseError(
                f"no space left on the disk holding the warehouse ({self.path.parent}, its "
                f"working copy {self.work_path.name} and DuckDB's spill folder): free some "
                "and run again; the published warehouse is untouched"
            ) from None
        except BaseException:
            if publish:
                self.discard()
            raise
        finally:
            if publish:
                self.release()
