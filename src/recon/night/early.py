"""Loading while extracting (issues 23 and 24): the night's load begins during extraction,
and each resource is loaded as soon as its landing is final.

When the extract step runs in this process (`extract_step(load_early=True)`: `recon nightly`'s
local steps and its flow's one extract task), an `EarlyLoad` thread takes the warehouse lock,
opens a fresh working copy, writes the run's row (`sql/load/run_start.sql`) and loads each
resource with `recon.warehouse.load.load_resource` in the order their extraction ends, each in a
transaction of its own, so that DuckDB writes and checkpoints those rows while the other
lists are still fetched; once a list is loaded and none waits, it makes the readers' objects
the checks read if the copy has none (a first night). The working copy is private until it
is published, and a night that fails drops it: readers still see a night whole or not at
all. The load step then adopts the connection (`adopt`), loads what is left in one
transaction, and goes on as it always did (`recon.warehouse.load.load_run(begun=...)`): the
warehouse ends as a sequential load leaves it, row for row.

Anything unusual is today's load: a resumed run (the landing held states before the
extraction), an extraction that raised or was refused (fatal), a distributed extraction
(no loader), and any error in the early part — a DuckDB error, running out of memory, the
lock held by another — which rolls back, closes and drops the working copy and lets the
load step open a fresh one. `RECON_EARLY_LOAD=0` turns it off (A/B measurements).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.warehouse.database import rollback, transaction
from recon.warehouse.fields import FieldMap
from recon.warehouse.landing import ResourceLanding, RunLanding
from recon.warehouse.load import define_load_macros, load_resource
from recon.warehouse.memory import parse_size, release
from recon.warehouse.published import refresh_reader_objects
from recon.warehouse.sql import read_sql, sql_statements

__all__ = ["EarlyLoad", "abandon", "adopt", "enabled", "start"]

log = logging.getLogger("recon")

#: The loaders running in this process, by warehouse file and run id.
_loaders: dict[tuple[Path, str], EarlyLoad] = {}
_guard = threading.Lock()


#: DuckDB's memory limit while the lists are still extracted, as a share of the night's
#: (RECON_DUCKDB_MEMORY_LIMIT, "auto" 192 MiB: 128 MiB): extraction holds ~330-360 MB of
#: its own at 1M payments, and the two together must stay under ~500 MB. The last list
#: (and anything after the extraction) loads under the whole limit.
EARLY_MEMORY_SHARE = 2 / 3


def enabled() -> bool:
    """Loading while extracting is on unless RECON_EARLY_LOAD is 0 (the only place it is read)."""
    return os.environ.get("RECON_EARLY_LOAD", "1").strip().lower() not in ("0", "false", "no")


class EarlyLoad:
    """One run's load, begun during its extraction on a thread of its own."""

    def __init__(
        self,
        warehouse: Any,  # recon.warehouse.working_copy.Warehouse (imported there: no import cycle)
        landing: RunLanding,
        fields: FieldMap | None,
        expected: int = 0,
    ) -> None:
        self.warehouse = warehouse
        self.landing = landing
        self.fields = fields
        self.expected = expected  # resources extracted: the last one loads under the whole limit
        self._limit: str | None = None  # the night's memory limit, while a share of it is set
        self._signalled = 0
        self._reader_objects_made = False  # the readers' objects, made while nothing is queued
        self.loaded: dict[str, dict[str, Any]] = {}  # per resource, as load_resource returns
        self.order: list[str] = []  # the resources in the order they were loaded
        self.con: duckdb.DuckDBPyConnection | None = None
        self.failed: str | None = None  # why the early part gave up (the load step goes on)
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="recon-early-load", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def extracted(self, resource: str) -> None:
        """`resource`'s landing is final: load it (called from the extraction's threads)."""
        self._queue.put(resource)

    def extraction_ended(self) -> None:
        """Nothing more is extracted: what is left loads under the whole memory limit."""
        self._queue.put("")

    def _run(self) -> None:
        try:
            self._open()
            while not self._stop.is_set():
                if self.order and not self._reader_objects_made and self._queue.empty():
                    self._make_reader_objects()
                resource = self._queue.get()
                if resource is None or self._stop.is_set():
                    break
                if resource:
                    self._signalled += 1
                if not resource or self._signalled >= self.expected:
                    self._whole_limit()
                if resource:
                    self._load(resource)
        except BaseException as exc:  # any failure: today's load, on a fresh working copy
            if not self._stop.is_set():  # else `abandon` interrupted it: abandoned, below
                self.failed = f"{type(exc).__name__}: {exc}"
                self._drop()
        if self._stop.is_set() and self.failed is None:
            self.failed = "abandoned"
            self._drop()

    def _open(self) -> None:
        run_id = self.landing.run_id
        self.warehouse.acquire(run_id)
        con = self.con = self.warehouse.open_work(fresh=True)
        row = con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is not None:  # loaded (or begun) before: load_run knows what to do with it
            raise RuntimeError(f"run {run_id} is in the warehouse already")
        define_load_macros(con)
        con.execute("SET preserve_insertion_order = false")  # as load_run
        row = con.execute("SELECT current_setting('memory_limit')").fetchone()
        limit = parse_size(str(row[0] if row else ""))
        if limit is not None and self.expected > 1:
            self._limit = str(row[0] if row else "")
            con.execute(f"SET memory_limit = '{int(limit * EARLY_MEMORY_SHARE) // 2**20}MiB'")
        meta = self.landing.meta()
        start = {
            "run_id": run_id,
            "started_at": meta["started_at"],
            "base_url": meta.get("base_url"),
            "trigger": meta.get("trigger"),
        }
        with transaction(con):
            for stmt in sql_statements(read_sql("load/run_start.sql")):
                con.execute(stmt, {k: v for k, v in start.items() if f"${k}" in stmt})

    def _make_reader_objects(self) -> None:
        """The readers' objects the checks read (`live_records`, `refund_payments`, …), made
        when a list is loaded and nothing else is queued: a first night has none, and made
        here they take a core left idle while the provider paces the lists, not ~0.16 CPU-s
        of the checks after the last call (a later night's working copy carries them,
        current: only their fingerprint is checked). Never before the first list's load, nor
        while a list waits: with a provider that answers at once the lists end together, and
        the checks make them as before."""
        assert self.con is not None
        refresh_reader_objects(self.con)
        self._reader_objects_made = True

    def _whole_limit(self) -> None:
        if self._limit is not None and self.con is not None:
            self.con.execute(f"SET memory_limit = '{self._limit}'")
            self._limit = None

    def _load(self, resource: str) -> None:
        assert self.con is not None
        state = ResourceLanding(self.landing.folder / resource, resource).state
        if not state.done:  # not final after all: the load step loads it
            return
        # Committed on its own: DuckDB writes and checkpoints the resource's rows now, while
        # the other lists are still fetched, not all at the load step's commit (0.9 of the
        # ~2 s a paced 100k night spent loading after its last call). The working copy is
        # private until published: a night that fails drops it, committed resources and all.
        with transaction(self.con):
            loaded = load_resource(self.con, self.landing, resource, state, self.fields)
        self.loaded[resource] = loaded
        self.order.append(resource)
        log.debug("%s loaded while extracting (%s)", resource, datetime.now(UTC).isoformat())

    def _drop(self) -> None:
        """Roll back, close and drop the working copy, release the lock (a fresh load follows)."""
        con, self.con = self.con, None
        self.loaded.clear()
        if con is not None:
            try:
                rollback(con)
            finally:
                con.close()
                release()
        if not self.warehouse.held_by_another():
            self.warehouse.discard()
        self.warehouse.release()

    def finish(self) -> bool:
        """Wait for the resources queued so far; True when the connection is ready to adopt."""
        self._queue.put("")  # the whole limit again, for the load step
        self._queue.put(None)
        self._thread.join()
        if self.failed is not None:
            log.warning(
                "loading while extracting gave up (%s): the run is loaded after it", self.failed
            )
            return False
        return self.con is not None

    def abandon(self) -> None:
        """Stop at once (the extraction failed): roll back and drop what was begun."""
        self._stop.set()
        self._queue.put(None)
        con = self.con
        if con is not None:
            with contextlib.suppress(duckdb.Error):
                con.interrupt()  # a resource being loaded stops here
        self._thread.join()


def start(
    warehouse: Any, landing: RunLanding, fields: FieldMap | None, expected: int = 0
) -> EarlyLoad:
    """Begin `landing`'s load on a thread; registered for the load step to adopt.
    `expected`: how many resources are extracted (0: unknown)."""
    loader = EarlyLoad(warehouse, landing, fields, expected)
    key = (Path(warehouse.path).absolute(), landing.run_id)
    with _guard:
        previous = _loaders.pop(key, None)
        _loaders[key] = loader
    if previous is not None:
        previous.abandon()
    loader.start()
    return loader


def _take(db: Path, run_id: str | None) -> list[EarlyLoad]:
    db = Path(db).absolute()
    with _guard:
        keys = [k for k in _loaders if k[0] == db and (run_id is None or k[1] == run_id)]
        return [_loaders.pop(k) for k in keys]


def adopt(db: Path, run_id: str) -> EarlyLoad | None:
    """The run's early load, finished with what was queued (each resource committed); None
    when there is none or it gave up (the load step then loads the run as it always did)."""
    for loader in _take(db, run_id):
        if loader.finish():
            log.info("run %s: loaded while extracting: %s", run_id, ", ".join(loader.order))
            return loader
    return None


def abandon(db: Path, run_id: str | None = None) -> None:
    """Drop any early load of the warehouse `db` (of `run_id` only, when given)."""
    for loader in _take(db, run_id):
        loader.abandon()
