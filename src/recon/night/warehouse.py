"""The DuckDB warehouse: a private working copy, one load transaction, publish by rename.

DuckDB lets one process open a file read-write, and a reader holding it read-only makes a
read-write open fail (docs/facts.md "DuckDB"). So a run never opens the published file for
writing: it copies it to a working file next to it, works there, checkpoints, and renames the
working
file over the published one. A reader keeps the snapshot it opened until it reconnects; a
run never fails because somebody is reading. A lock file keeps two runs apart.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson

from recon.catalogue_views import ensure_live_records
from recon.database import connect
from recon.dictionary import apply_dictionary
from recon.errors import WarehouseError, disk_full
from recon.fields import FieldMap, load_parameters, presence_parameters
from recon.memory import parse_size, release
from recon.night.landing import RunLanding, unreadable
from recon.night.migrations import apply_migrations
from recon.night.published import prepare_for_readers
from recon.pids import pid_alive
from recon.resources import CATALOGUE, Resource
from recon.sql import read_sql, sql_statements

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

log = logging.getLogger("recon")

#: Records per insert slice; 0: from DuckDB's memory limit (`_slice_records`).
_SLICE_RECORDS = 0

_BOOKKEEPING = {"id", "raw", "content_hash", "first_seen_run", "last_seen_run", "gone_in_run"}


def check_readable(path: Path) -> None:
    """The published warehouse, if there is one, opens and answers (a preflight: a file
    damaged on disk stops the night before any request, not after the extraction)."""
    if not path.exists():
        return
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise _unusable(path, exc) from None
    try:
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            con.execute("SELECT count(*) FROM query_table(?)", [table]).fetchone()
    except duckdb.Error as exc:
        raise _unusable(path, exc) from None
    finally:
        con.close()


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
        analysts' views in it and in a storage format DuckDB 1.x reads (recon.night.published)."""
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
        self, owner: str, *, fresh: bool, publish: bool
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """Lock, open the working copy, yield it; on success close (and publish)."""
        self.acquire(owner)
        try:
            con = self.open_work(fresh=fresh)
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


@dataclass(frozen=True)
class LoadResult:
    """What one load did, per resource."""

    run_id: str
    status: str
    skipped: bool
    resources: Mapping[str, Mapping[str, Any]]


def define_load_macros(con: duckdb.DuckDBPyConnection) -> None:
    """The TEMP macros the `sql/load` stage files share (`sql/load/macros.sql`); idempotent."""
    for stmt in sql_statements(read_sql("load/macros.sql")):
        con.execute(stmt)


def run_status(states: Mapping[str, Any]) -> tuple[str, str | None]:
    """complete / incomplete / failed (an auth refusal or unfinished scan fails the run)."""
    bad = {r: s for r, s in states.items() if s.status not in ("complete", "skipped")}
    if not states:
        return "failed", "nothing was extracted"
    if not bad:
        return "complete", None
    parts = [f"{r} {s.status}" + (f" ({s.reason})" if s.reason else "") for r, s in bad.items()]
    fatal = any(s.status in ("failed", "running") for s in bad.values())
    return ("failed" if fatal else "incomplete"), "; ".join(sorted(parts))


def load_run(
    con: duckdb.DuckDBPyConnection, landing: RunLanding, *, fields: FieldMap | None = None
) -> LoadResult:
    """Load one run's landing folder into the warehouse: one transaction, then the rows it
    listed unchanged marked seen (`mark_seen`), then the run recorded as loaded.

    `fields` is the field mapping (`Settings.fields`; default `recon.settings.DEFAULT_FIELDS`).
    Loading the same run twice is a no-op (the run is recorded as loaded); a load stopped
    after its transaction committed (killed while marking what was seen) finishes marking.
    """
    run_id = landing.run_id
    row = con.execute(
        "SELECT loaded_at IS NOT NULL, status <> 'running' FROM runs WHERE run_id = ?", [run_id]
    ).fetchone()
    if row and row[0]:
        return LoadResult(run_id=run_id, status="already_loaded", skipped=True, resources={})
    meta = landing.meta()
    states = landing.states()
    status, reason = run_status(states)
    define_load_macros(con)
    # The inserts need no order (ids are keys): without it DuckDB streams them in less
    # memory, and a 1M-payment load fits the "auto" limit (recon.memory) without running out.
    con.execute("SET preserve_insertion_order = false")
    if row and row[1]:  # merged and committed by an attempt that stopped before the end
        per_resource = _merged(con, run_id)
    else:
        per_resource = _load_with_retry(con, landing, meta, states, status, reason, fields)
    mark_seen(con, landing, states)
    con.execute(read_sql("load/run_loaded.sql"), {"loaded_at": datetime.now(UTC), "run_id": run_id})
    return LoadResult(run_id=run_id, status=status, skipped=False, resources=per_resource)


def _load_with_retry(
    con: duckdb.DuckDBPyConnection,
    landing: RunLanding,
    meta: Mapping[str, Any],
    states: Mapping[str, Any],
    status: str,
    reason: str | None,
    fields: FieldMap | None,
) -> dict[str, dict[str, Any]]:
    for attempt in range(_OOM_RETRIES + 1):
        try:
            return _load_transaction(con, landing, meta, states, status, reason, fields)
        except duckdb.OutOfMemoryException as exc:
            # Rolled back whole: nothing half-loaded. A limit too small for one statement
            # (DuckDB cannot spill everything) is doubled, once, rather than failing the night.
            if attempt == _OOM_RETRIES:
                raise _load_failure(exc, landing) from None
            limit = _double_memory_limit(con)
            log.warning(
                "load of %s ran out of DuckDB memory: again under %s", landing.run_id, limit
            )
    raise AssertionError("unreachable")  # pragma: no cover


def _merged(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, dict[str, Any]]:
    """What an earlier attempt's committed transaction loaded, per resource (resource_scans)."""
    rows = con.execute(
        "SELECT resource, status, records, new_records, changed_records, gone_records "
        "FROM resource_scans WHERE run_id = ?",
        [run_id],
    ).fetchall()
    return {
        str(r[0]): {
            "status": r[1],
            "records": r[2],
            "new": r[3],
            "changed": r[4],
            "returned": 0,
            "gone": r[5],
        }
        for r in rows
    }


def mark_seen(
    con: duckdb.DuckDBPyConnection, landing: RunLanding, resources: Iterable[str]
) -> None:
    """This run as `last_seen_run` of every current row its landed batches list.

    After the load's (or a retry's reload's) transaction has committed, one transaction per
    slice of batch files (`sql/load/seen.sql`): DuckDB keeps what a transaction updated in
    memory it cannot spill until the commit, and every row listed tonight is updated (at 1M
    payments, 2.2M rows ran out of the "auto" 192 MiB in one transaction). The working copy
    is private until published, and a load always starts from a fresh copy of the published
    file, so nobody reads the rows between two slices; `load_run` on a copy whose transaction
    committed finishes the marking. Idempotent.
    """
    for resource in resources:
        entry = CATALOGUE.get(resource)
        batches = [str(p) for p in landing.files(resource, "batch")]
        if entry is None or not batches:
            continue
        sql = read_sql("load/seen.sql").format(table=entry.table)
        for _first, files in _slices(con, batches):
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(sql, {"run_id": landing.run_id, "files": files})
                con.execute("COMMIT")
            except duckdb.Error as exc:
                _rollback(con)
                if disk_full(exc):
                    raise
                raise _load_failure(exc, landing) from None
            except BaseException:
                _rollback(con)
                raise


_OOM_RETRIES = 1


def _double_memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    limit = parse_size(str(row[0] if row else "")) or 2**30
    value = f"{2 * limit // 2**20}MiB"
    con.execute(f"SET memory_limit = '{value}'")
    return value


def _load_transaction(
    con: duckdb.DuckDBPyConnection,
    landing: RunLanding,
    meta: Mapping[str, Any],
    states: Mapping[str, Any],
    status: str,
    reason: str | None,
    fields: FieldMap | None,
) -> dict[str, dict[str, Any]]:
    """Every resource of the run, in one transaction (rolled back whole on any failure)."""
    run_id = landing.run_id
    per_resource: dict[str, dict[str, Any]] = {}
    con.execute("BEGIN TRANSACTION")
    try:
        start = {
            "run_id": run_id,
            "started_at": meta["started_at"],
            "base_url": meta.get("base_url"),
            "trigger": meta.get("trigger"),
        }
        for stmt in sql_statements(read_sql("load/run_start.sql")):
            con.execute(stmt, {k: v for k, v in start.items() if f"${k}" in stmt})
        for resource, state in states.items():
            per_resource[resource] = load_resource(con, landing, resource, state, fields)
        con.execute(
            read_sql("load/run_merged.sql"), {"status": status, "reason": reason, "run_id": run_id}
        )
        con.execute("COMMIT")
    except duckdb.OutOfMemoryException:
        _rollback(con)
        raise  # load_run tries once more under twice the limit (then says it in one line)
    except duckdb.Error as exc:
        _rollback(con)
        if disk_full(exc):
            raise  # Warehouse.session names the disk that filled up
        raise _load_failure(exc, landing) from None
    except BaseException:
        _rollback(con)
        raise
    return per_resource


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open (a failed COMMIT or a full disk may have
    ended it already: "no transaction is active" must not hide why)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def _load_failure(exc: duckdb.Error, landing: RunLanding) -> WarehouseError:
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


def load_resource(
    con: duckdb.DuckDBPyConnection,
    landing: RunLanding,
    resource: str,
    state: Any,
    fields: FieldMap | None = None,
) -> dict[str, Any]:
    entry = CATALOGUE.get(resource)
    if entry is None or entry.api is None:
        raise WarehouseError(f"unknown resource in landing: {resource!r}")
    run_id = landing.run_id
    batches = [str(p) for p in landing.files(resource, "batch")]
    counts = {"new": 0, "changed": 0, "returned": 0, "gone": 0}
    duplicates = state.duplicates
    if batches:  # a finished resource always has one (possibly empty) batch
        _stage(con, batches)
        presence = presence_parameters(resource, fields)
        if presence["fields"]:  # per-run presence of the mapped fields (checks' requires_fields)
            con.execute(
                read_sql("load/field_presence.sql"),
                {"run_id": run_id, "resource": resource, "files": batches, **presence},
            )
        # Ids landed twice (a duplicate older than the scan's memory, or across a resume's
        # kill point) were collapsed by the stage; count them with those the scan saw.
        duplicates += _count(con, "SELECT count(*) FROM read_parquet($files)", {"files": batches})
        duplicates -= _count(con, "SELECT count(*) FROM stage")
        complete = state.status == "complete"
        con.execute(
            "CREATE OR REPLACE TEMP TABLE load_ctx AS SELECT ? AS run_id, ? AS complete",
            [run_id, complete],
        )
        _merge(con, entry, batches, fields)
        for change, n in con.execute(
            "SELECT change, count(*) FROM changes GROUP BY change"
        ).fetchall():
            counts[change] = n
        counts["gone"] = _count(con, "SELECT count(*) FROM gone")
    rejects = [str(p) for p in landing.files(resource, "rejects")]
    if rejects:
        con.execute(
            read_sql("load/rejects.sql"), {"run_id": run_id, "resource": resource, "files": rejects}
        )
    calls = [str(p) for p in landing.files(resource, "calls")]
    if calls:
        con.execute(read_sql("load/api_calls.sql"), {"run_id": run_id, "files": calls})
    con.execute(
        read_sql("load/resource_scan.sql"),
        {
            "run_id": run_id,
            "resource": resource,
            "status": state.status,
            "reason": state.reason,
            "pages": state.pages,
            "records": state.records,
            "duplicates": duplicates,
            "failed_pages": len(state.failed_pages),
            "rejects": state.rejects,
            "new_records": counts["new"],
            "changed_records": counts["changed"] + counts["returned"],
            "gone_records": counts["gone"],
        },
    )
    return {"status": state.status, "records": state.records, **counts}


def _count(
    con: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, Any] | None = None
) -> int:
    row = con.execute(sql, params).fetchone() if params else con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _stage(con: duckdb.DuckDBPyConnection, batches: list[str]) -> None:
    """Each landed id once (the first landing), narrow: its hash and its row's place."""
    for stmt in sql_statements(read_sql("load/stage.sql")):
        con.execute(stmt, {"files": batches} if "$files" in stmt else None)


def _merge(
    con: duckdb.DuckDBPyConnection,
    entry: Resource,
    batches: list[str],
    fields: FieldMap | None = None,
) -> None:
    """Merge the staged resource; the insert reads the landed records it keeps (merge.sql)."""
    cols = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            [entry.table],
        ).fetchall()
        if r[0] not in _BOOKKEEPING
    ]
    v_status, v_amount, v_currency = entry.version
    rendered = read_sql("load/merge.sql").format(
        table=entry.table,
        lcols=", ".join(f"l.{c}" for c in ["id", *cols]),
        select=_without_comments(read_sql(entry.load_sql)),
        v_status=v_status,
        v_amount=v_amount,
        v_currency=v_currency,
    )
    paths = load_parameters(entry.name, fields)
    for stmt in sql_statements(rendered):
        if "$files" not in stmt:
            con.execute(stmt)
            continue
        for first, files in _slices(con, batches):
            con.execute(stmt, {"files": files, "first_file": first, **paths})


#: Memory an insert takes per landed record it reads. The records read by one insert
#: statement are bounded by DuckDB's memory limit, never by the merchant's size. 2,000 (a
#: 100k-record slice under the "auto" 192 MiB) left a few MiB: a 1M or 2M first night ran
#: out now and then in `INSERT INTO payments` (an allocation of ~336 bytes a record of the
#: slice, 32.4 MiB at 100k, with ~170 MiB of the limit in use) and was retried under twice
#: the limit (~690 MB). At 5,000 (40k records under 192 MiB) the 1M load passes even
#: under 160 MiB (docs/performance.md).
_BYTES_PER_RECORD = 5_000
_MIN_SLICE_RECORDS = 20_000


def _slice_records(con: duckdb.DuckDBPyConnection) -> int:
    """Records per insert slice under the connection's memory limit."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    limit = parse_size(str(row[0] if row else ""))
    if limit is None:
        return _MIN_SLICE_RECORDS
    return max(_MIN_SLICE_RECORDS, int(limit / _BYTES_PER_RECORD))


def _slices(con: duckdb.DuckDBPyConnection, batches: list[str]) -> list[tuple[int, list[str]]]:
    """The batch files in consecutive slices of about `_slice_records` records each."""
    per_slice = _SLICE_RECORDS or _slice_records(con)
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
            out.append((first, batches[first : i + 1]))
            first, size = i + 1, 0
    return out


def _without_comments(sql: str) -> str:
    """A SELECT file without its comment lines (it is embedded in a `;`-split script)."""
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
