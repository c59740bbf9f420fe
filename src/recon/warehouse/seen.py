"""`last_seen_run`: the rows a run listed unchanged, marked after its load's transaction."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from recon.catalogue.resources import CATALOGUE
from recon.errors import disk_full
from recon.warehouse import slices as _slicing
from recon.warehouse.database import transaction
from recon.warehouse.landing import RunLanding
from recon.warehouse.slices import load_failure
from recon.warehouse.sql import read_sql

__all__ = ["mark_seen"]

#: A slice of the marking lists `SEEN_SCALE` times the records of an insert slice: updating
#: `last_seen_run` holds far less a record until its commit than an insert reads, and each
#: slice scans the whole table once (a 1M second night: 17 slices 0.70 CPU-s, 6 slices
#: 0.38-0.40, 2 slices 0.53; the load's peak RSS 386 MB either way).
SEEN_SCALE = 4


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
        for _first, files in _slicing.slices(con, batches, scale=SEEN_SCALE):
            try:
                with transaction(con):
                    con.execute(sql, {"run_id": landing.run_id, "files": files})
            except duckdb.Error as exc:
                if disk_full(exc):
                    raise
                raise load_failure(exc, landing) from None
