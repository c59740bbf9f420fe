"""Loading a landed run into the warehouse's working copy: one transaction merges every
resource (`sql/load/`), then the rows it listed are marked seen (`recon.warehouse.seen`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from recon.catalogue.resources import CATALOGUE, Resource
from recon.errors import WarehouseError, disk_full
from recon.warehouse import seen
from recon.warehouse.catalogue_tables import load_select
from recon.warehouse.database import transaction
from recon.warehouse.fields import FieldMap, load_parameters, presence_parameters
from recon.warehouse.landing import RunLanding
from recon.warehouse.memory import parse_size
from recon.warehouse.slices import load_failure, slices
from recon.warehouse.sql import read_sql, sql_statements

__all__ = [
    "LoadResult",
    "define_load_macros",
    "load_resource",
    "load_run",
    "run_status",
]

log = logging.getLogger("recon")

_BOOKKEEPING = {"id", "raw", "content_hash", "first_seen_run", "last_seen_run", "gone_in_run"}


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
    con: duckdb.DuckDBPyConnection,
    landing: RunLanding,
    *,
    fields: FieldMap | None = None,
    begun: Mapping[str, dict[str, Any]] | None = None,
) -> LoadResult:
    """Load one run's landing folder into the warehouse: one transaction, then the rows it
    listed unchanged marked seen (`recon.warehouse.seen`), then the run recorded as loaded.

    `fields` is the field mapping (`Settings.fields`; default
    `recon.config.settings.DEFAULT_FIELDS`).
    Loading the same run twice is a no-op (the run is recorded as loaded); a load stopped
    after its transaction committed (killed while marking what was seen) finishes marking.

    `begun`: the run's row and these resources are loaded and committed already on `con`
    (`recon.night.early`, loading while extracting, each in a transaction of its own: the
    working copy is private until it is published, and a night that fails drops it); the
    rest follow in one transaction, which a retry under more memory runs again.
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
    # memory, and a 1M-payment load fits the "auto" limit (recon.warehouse.memory) without running
    # out.
    con.execute("SET preserve_insertion_order = false")
    if row and row[1]:  # merged and committed by an attempt that stopped before the end
        per_resource = _merged(con, run_id)
    else:
        per_resource = _with_retry(
            con,
            landing,
            lambda: _load_transaction(con, landing, meta, states, status, reason, fields, begun),
        )
    seen.mark_seen(con, landing, states)
    con.execute(read_sql("load/run_loaded.sql"), {"loaded_at": datetime.now(UTC), "run_id": run_id})
    return LoadResult(run_id=run_id, status=status, skipped=False, resources=per_resource)


def _with_retry(
    con: duckdb.DuckDBPyConnection,
    landing: RunLanding,
    load: Callable[[], dict[str, dict[str, Any]]],
) -> dict[str, dict[str, Any]]:
    """`load` (the load's transaction), again under twice the memory limit if it runs out."""
    for attempt in range(_OOM_RETRIES + 1):
        try:
            return load()
        except duckdb.OutOfMemoryException as exc:
            # Rolled back whole: nothing half-loaded. A limit too small for one statement
            # (DuckDB cannot spill everything) is doubled, once, rather than failing the night.
            if attempt == _OOM_RETRIES:
                raise load_failure(exc, landing) from None
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
    begun: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every resource of the run, in one transaction (rolled back whole on any failure).

    With `begun`, the run's row and these resources were committed already, each in a
    transaction of its own while the lists were extracted (`recon.night.early`): the
    transaction holds the rest, and a retry loads only the rest again."""
    run_id = landing.run_id
    per_resource: dict[str, dict[str, Any]] = dict(begun or {})
    try:
        with transaction(con):
            if begun is None:
                start = {
                    "run_id": run_id,
                    "started_at": meta["started_at"],
                    "base_url": meta.get("base_url"),
                    "trigger": meta.get("trigger"),
                }
                for stmt in sql_statements(read_sql("load/run_start.sql")):
                    con.execute(stmt, {k: v for k, v in start.items() if f"${k}" in stmt})
            for resource, state in states.items():
                if resource not in per_resource:
                    per_resource[resource] = load_resource(con, landing, resource, state, fields)
            per_resource = {r: per_resource[r] for r in states if r in per_resource}  # as listed
            con.execute(
                read_sql("load/run_merged.sql"),
                {"status": status, "reason": reason, "run_id": run_id},
            )
    except duckdb.OutOfMemoryException:
        raise  # load_run tries once more under twice the limit (then says it in one line)
    except duckdb.Error as exc:
        if disk_full(exc):
            raise  # Warehouse.session names the disk that filled up
        raise load_failure(exc, landing) from None
    return per_resource


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
        landed = _count(
            con,
            "SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata($files)",
            {"files": batches},
        )
        presence = presence_parameters(resource, fields)
        if presence["fields"]:  # per-run presence of the mapped fields (checks' requires_fields)
            con.execute(
                read_sql("load/field_presence.sql"),
                {"run_id": run_id, "resource": resource, "files": batches, **presence},
            )
        complete = state.status == "complete"
        con.execute(
            "CREATE OR REPLACE TEMP TABLE load_ctx AS SELECT ? AS run_id, ? AS complete",
            [run_id, complete],
        )
        if landed:
            _stage(con, batches)
            # Ids landed twice (a duplicate older than the scan's memory, or across a resume's
            # kill point) were collapsed by the stage; count them with those the scan saw.
            duplicates += landed - _count(con, "SELECT count(*) FROM stage")
            counts["gone"] = _merge(con, entry, batches, fields)
            for change, n in con.execute(
                "SELECT change, count(*) FROM changes GROUP BY change"
            ).fetchall():
                counts[change] = n
        elif complete:  # an empty complete list: nothing to merge, every current row is gone
            counts["gone"] = _gone_only(con, entry)
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
) -> int:
    """Merge the staged resource; the insert reads the landed records it keeps (merge.sql).
    Then what a complete scan no longer lists is gone (gone.sql); returns how many."""
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
        select=load_select(entry),
        v_status=v_status,
        v_amount=v_amount,
        v_currency=v_currency,
    )
    paths = load_parameters(entry.name, fields)
    for stmt in sql_statements(rendered):
        if "$files" not in stmt:
            con.execute(stmt)
            continue
        # Only the slices holding a changed record are read (a night that lists its records
        # unchanged reads none): `changes` exists by now (the script's first statement).
        changed = {
            int(r[0])
            for r in con.execute("SELECT DISTINCT landed_row >> 32 FROM changes").fetchall()
        }
        for first, files in slices(con, batches):
            if changed.isdisjoint(range(first, first + len(files))):
                continue
            con.execute(stmt, {"files": files, "first_file": first, **paths})
    return _gone(con, entry)


def _gone_only(con: duckdb.DuckDBPyConnection, entry: Resource) -> int:
    """A complete list that landed no record: its current rows are gone (gone.sql over an
    empty stage), without staging or merging; how many. A table with no current row (an
    empty list night after night) costs one count."""
    live = "SELECT count(*) FROM query_table($table) WHERE gone_in_run IS NULL"
    if not _count(con, live, {"table": entry.table}):
        return 0
    con.execute("CREATE OR REPLACE TEMP TABLE stage (id VARCHAR)")
    return _gone(con, entry)


def _gone(con: duckdb.DuckDBPyConnection, entry: Resource) -> int:
    """The records gone tonight (gone.sql: its first statement finds them, the rest record
    them, run only when there are any); how many."""
    first, *rest = sql_statements(read_sql("load/gone.sql").format(table=entry.table))
    con.execute(first)
    gone = _count(con, "SELECT count(*) FROM gone")
    if gone:
        for stmt in rest:
            con.execute(stmt)
    return gone
