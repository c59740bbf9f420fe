"""What a list resource's declared columns make: its table, its load SQL, its dictionary words.

Each API entry of `recon.catalogue.resources` declares its table's typed columns (`Column`: name,
type,
where it sits in the record, how it is read, its words). From them:

- `load_select(entry)`: the SELECT that stages its landed records (`sql/load/resource.sql`),
  merged by `sql/load/merge.sql`;
- `table_sql(entry)`: `CREATE TABLE IF NOT EXISTS` (`sql/catalogue/resource_table.sql`), run
  after the numbered migrations (recon.warehouse.migrations) — a resource added to the catalogue
  needs no migration; the released tables stay as `0001_initial.sql` made them, and a test
  holds them to their declarations;
- `dictionary_statements()`: the `COMMENT ON` words of every such table and column
  (`sql/catalogue/resource_words.sql`) and of its `<table>_major` view
  (`resource_major_words.sql`), applied with `sql/dictionary.sql`.

Only identifiers from the catalogue (checked) and the reads below are formatted in; JSON
paths of mapped fields are bound (`$path_<field>`, recon.warehouse.fields), never formatted in.
"""

from __future__ import annotations

import re

import duckdb
import orjson

from recon.catalogue.resources import Column, Resource, api_resources
from recon.warehouse.sql import read_sql, sql_statements

__all__ = ["create_resource_tables", "dictionary_statements", "load_select", "table_sql"]

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TYPES = frozenset({"VARCHAR", "BIGINT", "DATE", "TIMESTAMPTZ", "BOOLEAN", "INTEGER"})
_MAPPED = re.compile(r"^\{([a-z_]+)\}(\.amountMinor|\.currency)?$")
# How a value becomes its column (Column.read); `{}` is the value where it sits.
_READS = {
    "text": "{}",
    "minor": "json_minor_units({})",
    "upper": "upper({})",
    "lower": "lower({})",
    "date": "TRY_CAST({} AS DATE)",
    "timestamp": "TRY_CAST({} AS TIMESTAMPTZ)",
}


def _ident(value: str) -> str:
    if not _IDENTIFIER.match(value):
        raise ValueError(f"{value!r} is not a plain identifier")
    return value


def _documented(at: str) -> list[str]:
    keys = at.split(".")
    if not all(_KEY.match(k) for k in keys):
        raise ValueError(f"{at!r} is not a path of plain keys")
    return keys


def _parameter(column: Column) -> str | None:
    """The bound path a mapped column reads (`{amount}.amountMinor` -> `path_amount_minor`,
    as recon.warehouse.fields.load_parameters names them), None for a documented or scope column."""
    mapped = _MAPPED.match(column.at)
    if mapped is None:
        return None
    field, member = mapped.groups()
    if member == ".amountMinor":
        return f"path_{field}_minor"
    if member == ".currency":
        return "path_currency"
    return f"path_{field}"


def _value(column: Column, structure: dict[str, object]) -> str:
    minor = column.read == "minor"
    if column.at == "@scope":
        return "scope"
    parameter = _parameter(column)
    if parameter is not None:
        return f"json_extract{'' if minor else '_string'}(raw, ${parameter})"
    keys = _documented(column.at)
    node = structure
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ValueError(f"{column.at!r} reaches into a value declared as a leaf")
        node = child
    node[keys[-1]] = "JSON" if minor else "VARCHAR"
    return "j." + ".".join(f'"{k}"' for k in keys)


def load_select(entry: Resource) -> str:
    """The SELECT staging `entry`'s landed records into its declared columns."""
    if not entry.columns:
        raise ValueError(f"{entry.name} declares no columns")
    structure: dict[str, object] = {}
    lines = [
        f"    {_READS[c.read].format(_value(c, structure))} AS {_ident(c.name)}"
        for c in entry.columns
    ]
    documented = ""
    if structure:
        shape = orjson.dumps(structure).decode().replace("'", "''")
        documented = f",\n        json_transform(raw, '{shape}') AS j"
    scope = "scope, " if any(c.at == "@scope" for c in entry.columns) else ""
    text = read_sql("load/resource.sql").format(
        columns=",\n".join(lines), scope=scope, documented=documented
    )
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def table_sql(entry: Resource) -> str:
    """`CREATE TABLE IF NOT EXISTS` for `entry`'s table as its columns declare it."""
    columns = []
    for c in entry.columns:
        if c.type not in _TYPES:
            raise ValueError(f"{entry.name}.{c.name}: type {c.type!r} is not one of {_TYPES}")
        columns.append(f"    {_ident(c.name)} {c.type}{' NOT NULL' if c.required else ''},")
    return read_sql("catalogue/resource_table.sql").format(
        table=_ident(entry.table), columns="\n".join(columns)
    )


def create_resource_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Make the table of every API resource that no migration made; returns their names."""
    have = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = 'main'"
        ).fetchall()
    }
    made = []
    for entry in api_resources():
        if entry.table not in have:
            con.execute(table_sql(entry))
            made.append(entry.table)
    return made


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def dictionary_statements() -> list[str]:
    """The `COMMENT ON` statements of every API resource's table and columns."""
    template = read_sql("catalogue/resource_words.sql")
    major = read_sql("catalogue/resource_major_words.sql")
    out: list[str] = []
    for entry in api_resources():
        table = _ident(entry.table)
        columns = "\n".join(
            f"COMMENT ON COLUMN {table}.{_ident(c.name)} IS {_literal(c.words)};"
            for c in entry.columns
        )
        rendered = template.format(table=table, words=_literal(entry.words), columns=columns)
        out.extend(sql_statements(rendered))
        records = entry.records
        amount = records.amount if records is not None else None
        if records is not None and amount is not None:  # its `<table>_major` view
            out.extend(
                sql_statements(
                    major.format(
                        table=table,
                        amount=_ident(amount.removesuffix("_minor")),
                        amount_minor=_ident(amount),
                        currency=_ident(records.currency or "currency"),
                    )
                )
            )
    return out
