"""Helpers for the ledger tests: a warehouse holding a sandbox data set, landed and loaded by
recon's own loader, and scoring of findings against the truth."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.checks import CheckParams, run_checks
from recon.sandbox.data import Dataset
from recon.warehouse.landing import RunLanding
from recon.warehouse.migrations import apply_migrations
from recon.warehouse.working_copy import load_run

REPO = Path(__file__).resolve().parents[2]
RUN = "20261120T120000Z-000001"  # the run the helpers load
RESOURCES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")

Key = tuple[str, str, str, str]


def warehouse(path: Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB file with the real schema, in UTC."""
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    apply_migrations(con)
    return con


def land_and_load(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    run_id: str,
    started_at: datetime,
    records: Mapping[str, Sequence[Any]],
) -> None:
    """Land `records` (resource -> records; those given complete, the rest of RESOURCES not
    offered) as run `run_id` started `started_at`, and load them with recon's own loader."""
    landing = RunLanding(folder / "landing", run_id)
    landing.create({"started_at": started_at.isoformat()})
    for resource in RESOURCES:
        rl = landing.resource(resource)
        if resource in records:
            rl.add_page(offset=0, next_offset=None, records=records[resource], request_id=None)
            rl.finish(status="complete", reason=None, calls=())
        else:
            rl.finish(status="unavailable", reason="not offered (test)", calls=())
    load_run(con, landing)


def load_dataset(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    dataset: Dataset,
    as_of: datetime,
    *,
    resources: Iterable[str] = RESOURCES,
    run_id: str = RUN,
) -> None:
    """Every record of `dataset` in the warehouse and run `run_id` (started `as_of`) with
    each of `resources` complete (the others unavailable)."""
    records = {r: list(dataset.iter_records(r)) for r in RESOURCES if r in set(resources)}
    land_and_load(con, folder, run_id, as_of, records)


def ledger_findings(
    con: duckdb.DuckDBPyConnection, run_id: str, as_of: datetime
) -> tuple[set[Key], dict[str, str]]:
    """Run every check for `run_id`; the ledger findings (new/open) and each ledger check's
    status."""
    runs = run_checks(con, run_id=run_id, as_of=as_of, params=CheckParams())
    statuses = {r.check_name: r.status for r in runs if r.check_name.startswith("ledger_")}
    for run in runs:
        assert run.status != "errored", (run.check_name, run.reason)
    rows = con.execute(
        "SELECT check_name, entity, entity_id, issue_type FROM findings "
        "WHERE run_id = ? AND state IN ('new', 'open', 'reopened') "
        "AND starts_with(check_name, 'ledger_')",
        [run_id],
    ).fetchall()
    return {(r[0], r[1], r[2], r[3]) for r in rows}, statuses


def keys(findings: Iterable[dict[str, str]]) -> set[Key]:
    return {(f["check"], f["entity"], f["entity_id"], f["issue_type"]) for f in findings}


def score(got: set[Key], expected: set[Key]) -> None:
    """Precision and recall 100%, with the first differences shown."""
    missed = sorted(expected - got)
    extra = sorted(got - expected)
    assert not missed, f"recall < 100%: {len(missed)} missed, e.g. {missed[:5]}"
    assert not extra, f"precision < 100%: {len(extra)} extra, e.g. {extra[:5]}"
