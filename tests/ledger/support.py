"""Helpers for the ledger tests: a warehouse holding a sandbox data set, loaded the way the
loader types records (its own staging SQL), and scoring of findings against the truth."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from recon.checks import CheckParams, run_checks
from recon.fields import load_parameters
from recon.sandbox.data import Dataset

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "sql" / "schema.sql"
RESOURCES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")

Key = tuple[str, str, str, str]


def warehouse(path: Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB file with the real schema, in UTC."""
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    con.execute(SCHEMA.read_text(encoding="utf-8"))
    return con


def load_records(
    con: duckdb.DuckDBPyConnection, folder: Path, resource: str, records: Sequence[Any]
) -> None:
    """Type `records` with sql/load/<resource>.sql and insert them as run r1's."""
    page = folder / f"{resource}.parquet"
    table = pa.table(
        {
            "id": pa.array([r["id"] for r in records], pa.string()),
            "raw": pa.array([orjson.dumps(r).decode() for r in records], pa.string()),
            "page_offset": pa.array(range(len(records)), pa.int64()),
            "request_id": pa.array([None] * len(records), pa.string()),
        }
    )
    pq.write_table(table, page)
    stage = (REPO / "sql" / "load" / f"{resource}.sql").read_text(encoding="utf-8")
    # The load SQL reads the fields the spec does not show through bound paths (recon.fields).
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE staged AS {stage}",
        {"files": [str(page)], **load_parameters(resource)},
    )
    staged = {d[0] for d in con.execute("SELECT * FROM staged LIMIT 0").description or []}
    columns = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "ORDER BY ordinal_position",
            [resource],
        ).fetchall()
        if r[0] in staged
    ]
    names = ", ".join(columns)
    con.execute(
        f"INSERT INTO {resource} ({names}, first_seen_run, last_seen_run) "
        f"SELECT {names}, 'r1', 'r1' FROM staged"
    )


def load_dataset(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    dataset: Dataset,
    as_of: datetime,
    *,
    resources: Iterable[str] = RESOURCES,
    run_id: str = "r1",
) -> None:
    """Every record of `dataset` in the warehouse and run `run_id` (started `as_of`) with
    each of `resources` complete (the others unavailable)."""
    complete = set(resources)
    for resource in RESOURCES:
        if resource in complete:
            load_records(con, folder, resource, list(dataset.iter_records(resource)))
    con.execute(
        "INSERT INTO runs (run_id, started_at, status) VALUES (?, ?, 'complete')", [run_id, as_of]
    )
    for resource in RESOURCES:
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status) VALUES (?, ?, ?)",
            [run_id, resource, "complete" if resource in complete else "unavailable"],
        )


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
        "WHERE run_id = ? AND state IN ('new', 'open') AND starts_with(check_name, 'ledger_')",
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
