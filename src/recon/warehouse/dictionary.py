"""The data dictionary's words, `sql/dictionary.sql` and the list resources' own (their
catalogue entries: recon.warehouse.catalogue_tables), put into a warehouse: `COMMENT ON`
every table, view, column and macro. The night applies them after new migrations and at
publish after the views (recreating a view drops its comments); `recon describe` and
docs/dictionary.md read them back (`recon.analyst.dictionary`)."""

from __future__ import annotations

import re

import duckdb

from recon.errors import WarehouseError
from recon.warehouse.catalogue_tables import dictionary_statements
from recon.warehouse.database import transaction
from recon.warehouse.sql import read_sql, sql_statements

__all__ = ["apply_dictionary"]


def apply_dictionary(con: duckdb.DuckDBPyConnection, *, strict: bool = False) -> list[str]:
    """Run `sql/dictionary.sql` on `con` in one transaction; returns the statements whose
    object does not exist (skipped, e.g. a view on a working copy not yet published), or
    raises a WarehouseError naming the first of them when `strict`. A statement whose object
    already carries its words is not run (the night applies the dictionary after migrations
    and again at publish: most objects say it already)."""
    said: dict[tuple[str, str, str | None], str | None] = {}  # what each object says now
    for kind, name, comment in con.execute(
        "SELECT 'TABLE', table_name, comment FROM duckdb_tables() WHERE database_name = "
        "current_database() AND schema_name = 'main' UNION ALL SELECT 'VIEW', view_name, "
        "comment FROM duckdb_views() WHERE database_name = current_database() AND schema_name "
        "= 'main' UNION ALL SELECT CASE function_type WHEN 'table_macro' THEN 'MACRO TABLE' "
        "ELSE 'MACRO' END, function_name, comment FROM duckdb_functions() WHERE database_name "
        "= current_database() AND schema_name = 'main' AND function_type LIKE '%macro'"
    ).fetchall():
        said[(kind, name, None)] = comment
    columns: set[tuple[str, str]] = set()
    for table, column, comment in con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main'"
    ).fetchall():
        columns.add((table, column))
        said[("COLUMN", table, column)] = comment
    run: list[str] = []
    skipped: list[str] = []
    for stmt in _with_major_columns(_statements(), columns):
        target = _TARGET.match(stmt)
        if target is None:
            raise WarehouseError(f"sql/dictionary.sql: not a COMMENT ON statement: {stmt[:60]}")
        kind, name, column = target.groups()
        key = (kind, name, column if kind == "COLUMN" else None)
        if key not in said:
            skipped.append(stmt)
        elif _literal(stmt[target.end() :]) != said[key] or said[key] is None:
            run.append(stmt)  # (an object that already says it is left alone)
    if strict and skipped:
        raise WarehouseError(f"sql/dictionary.sql: no such object: {skipped[0][:80]}")
    if not run:
        return skipped
    with transaction(con):
        for stmt in run:
            con.execute(stmt)
    return skipped


def _statements() -> list[str]:
    """The list resources' words (their catalogue entries, recon.warehouse.catalogue_tables), then
    `sql/dictionary.sql`'s."""
    return dictionary_statements() + sql_statements(read_sql("dictionary.sql"))


def _literal(text: str) -> str | None:
    """The text of the SQL string literal `text` ('it''s' -> it's); None when it is not one
    plain literal (then the statement is run whatever the object says)."""
    text = text.strip().removesuffix(";").rstrip()
    inner = text[1:-1]
    if len(text) < 2 or text[0] != "'" or text[-1] != "'" or "'" in inner.replace("''", ""):
        return None
    return inner.replace("''", "'")


_TARGET = re.compile(r"COMMENT ON (TABLE|VIEW|COLUMN|MACRO TABLE|MACRO) (\w+)(?:\.(\w+))? IS ")
_MAJOR = "_major"


def _with_major_columns(stmts: list[str], columns: set[tuple[str, str]]) -> list[str]:
    """The statements, and the words of `<table>_major`'s columns that sql/dictionary.sql
    does not give: a `_major` view is its table with amounts in major units beside the minor
    ones, so a column it shares with the table means what it means there (written once)."""
    said: dict[tuple[str, str], str] = {}
    for stmt in stmts:
        target = _TARGET.match(stmt)
        if target is not None and target.group(1) == "COLUMN":
            said[(target.group(2), target.group(3))] = stmt[target.end() :]
    inherited = [
        f"COMMENT ON COLUMN {view}.{column} IS {said[(view[: -len(_MAJOR)], column)]}"
        for view, column in sorted(columns)
        if view.endswith(_MAJOR)
        and (view, column) not in said
        and (view[: -len(_MAJOR)], column) in said
    ]
    return stmts + inherited
