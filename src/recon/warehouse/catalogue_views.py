"""What the resource catalogue generates in the warehouse, so per-resource SQL names no table.

From the entries of `recon.catalogue.resources` that carry `records`:

- the view `live_records(resource, entity, id, status, amount_minor, currency, created_at,
  first_seen_run, last_seen_run, gone_in_run, raw)`: every record of every such resource
  (`sql/catalogue/live_records.sql`, one branch per resource);
- the tables `status_values`, `status_transitions` (the catalogue's `Status` entries) and
  `money_paths` (where amounts are in the raw record);
- the analysts' `<table>_major` views of the resources with money.

`create_catalogue_objects` makes them all; the warehouse calls it when it opens the working
copy and when it publishes, the check runner before the checks. The SQL is in `sql/catalogue/`;
only identifiers from the catalogue are formatted in (checked against `_IDENTIFIER`), values
are bound.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import duckdb

from recon.catalogue.resources import Records, Resource, record_resources
from recon.warehouse.fields import json_path
from recon.warehouse.sql import read_sql, sql_statements

__all__ = [
    "create_catalogue_objects",
    "ensure_live_records",
    "live_records_sql",
    "money_path_rows",
    "status_rows",
]

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_EACH = "-- each resource\n"
_MAPPED = re.compile(r"^\{([a-z_]+)\}(.*)$")


def _ident(value: str) -> str:
    if not _IDENTIFIER.match(value):
        raise ValueError(f"{value!r} is not a plain identifier")
    return value


def _column(value: str | None, cast: str) -> str:
    return _ident(value) if value else f"CAST(NULL AS {cast})"


def _entries(resources: Iterable[Resource] | None) -> list[tuple[Resource, Records]]:
    chosen = record_resources() if resources is None else resources
    return [(r, r.records) for r in chosen if r.records is not None]


def live_records_sql(resources: Iterable[Resource] | None = None, *, temp: bool = False) -> str:
    """`CREATE OR REPLACE VIEW live_records AS …` over `resources` (default: the catalogue's);
    a TEMP view when `temp` (what a read-only connection may create)."""
    template = read_sql("catalogue/live_records.sql")
    head, _, branch = template.partition(_EACH)
    branches = [
        branch.format(
            resource=_ident(r.name),
            entity=_ident(rec.entity),
            table=_ident(r.table),
            status=_column(rec.status, "VARCHAR"),
            amount_minor=_column(rec.amount, "BIGINT"),
            currency=_column(rec.currency, "VARCHAR"),
            created_at=_column(rec.created_at, "TIMESTAMPTZ"),
        ).strip()
        for r, rec in _entries(resources)
    ]
    if temp:
        head = head.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW", 1)
    return head + "\nUNION ALL\n".join(branches)


def ensure_live_records(con: duckdb.DuckDBPyConnection, *, temp: bool = True) -> None:
    """Make sure `live_records` can be read on `con`: created when missing, as a TEMP view
    when `temp` (what a read-only connection, e.g. on a warehouse published before the view
    existed, may create)."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = 'live_records'"
    ).fetchall()
    if not found[0][0]:
        con.execute(live_records_sql(temp=temp))


def status_rows(resources: Iterable[Resource] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows of `status_values` and `status_transitions`, by table name."""
    values: list[dict[str, Any]] = []
    transitions: list[dict[str, Any]] = []
    for r, rec in _entries(resources):
        for s in rec.statuses:
            values.append({"entity": r.table, "status": s.value, "is_final": s.final})
            transitions += [
                {"entity": r.table, "from_status": s.value, "to_status": to} for to in s.to
            ]
    return {"status_values": values, "status_transitions": transitions}


def money_path_rows(resources: Iterable[Resource] | None = None) -> list[dict[str, Any]]:
    """The rows of `money_paths`: for each resource with money, where its amount and currency
    are in the raw record (a mapped field's default path and the part reached inside it)."""
    rows: list[dict[str, Any]] = []
    for r, rec in _entries(resources):
        for column, name in (("amount_minor", rec.amount_json), ("currency", rec.currency_json)):
            if name is None:
                continue
            mapped = _MAPPED.match(name)
            if mapped:
                field, rest = mapped.group(1), mapped.group(2).removeprefix(".")
                default = json_path(r.fields[field])
                suffix = json_path(rest)[1:] if rest else ""
            else:
                field, default, suffix = None, json_path(name), ""
            rows.append(
                {
                    "resource": r.name,
                    "column_name": column,
                    "field": field,
                    "default_path": default,
                    "suffix": suffix,
                }
            )
    return rows


def _money_views(resources: Iterable[Resource] | None) -> list[str]:
    template = read_sql("catalogue/money_view.sql")
    return [
        template.format(
            table=_ident(r.table),
            amount_minor=_ident(rec.amount),
            currency=_ident(rec.currency),
            amount=_ident(rec.amount.removesuffix("_minor")),
        )
        for r, rec in _entries(resources)
        if rec.amount and rec.currency
    ]


def create_catalogue_objects(con: duckdb.DuckDBPyConnection) -> None:
    """Create or replace `live_records`, `status_values`, `status_transitions`, `money_paths`
    and the resources' `<table>_major` views (these need `money()`: sql/reference/money.sql,
    when it is there). Needs the warehouse schema in place; idempotent."""
    con.execute(live_records_sql())
    for table, rows in status_rows().items():
        for stmt in sql_statements(read_sql(f"catalogue/{table}.sql")):
            con.execute(stmt, {"rows": rows} if "$rows" in stmt else None)
    for stmt in sql_statements(read_sql("catalogue/money_paths.sql")):
        con.execute(stmt, {"rows": money_path_rows()} if "$rows" in stmt else None)
    has_money = con.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'money'"
    ).fetchall()
    if has_money[0][0]:
        for stmt in _money_views(None):
            con.execute(stmt)
