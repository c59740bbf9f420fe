"""The data dictionary: what every table, view, column and macro of the warehouse means.

The words live in one file, `sql/dictionary.sql` (`COMMENT ON …`, one statement a line,
grouped by table), applied by `recon.warehouse.dictionary` after the migrations on the working copy
and after the views at publish: recreating a view drops its comments. DuckDB keeps them in
its catalog, so any client sees them (`duckdb_columns().comment`); `recon describe [TABLE]`
prints them and `docs/dictionary.md` is generated from them
(`python -m recon.analyst.dictionary`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import duckdb

from recon.warehouse.dictionary import apply_dictionary
from recon.warehouse.sql import read_sql, sql_statements

__all__ = [
    "Column",
    "Entry",
    "describe",
    "dictionary_markdown",
    "entries",
    "reference_warehouse",
]


@dataclass(frozen=True)
class Column:
    """One column of a table or view."""

    name: str
    type: str
    comment: str | None


@dataclass(frozen=True)
class Entry:
    """One table, view or macro with its comment (and columns or parameters)."""

    name: str
    kind: str  # table | view | macro | table macro
    comment: str | None
    columns: tuple[Column, ...] = ()


def entries(con: duckdb.DuckDBPyConnection) -> list[Entry]:
    """Every table, view and macro of the database's main schema, by kind then name."""
    rows = con.execute(
        """
        SELECT t.name, t.kind, t.comment,
               list((c.column_name, c.data_type, c.comment) ORDER BY c.column_index)
        FROM (
            SELECT table_name AS name, 'table' AS kind, comment FROM duckdb_tables()
            WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary
            UNION ALL
            SELECT view_name, 'view', comment FROM duckdb_views()
            WHERE database_name = current_database() AND schema_name = 'main'
              AND NOT internal AND NOT temporary
        ) AS t
        JOIN duckdb_columns() AS c
          ON c.database_name = current_database() AND c.schema_name = 'main'
         AND c.table_name = t.name
        GROUP BY ALL ORDER BY t.kind, t.name
        """
    ).fetchall()
    found = [
        Entry(name, kind, comment, tuple(Column(*c) for c in columns))
        for name, kind, comment, columns in rows
    ]
    macros = con.execute(
        """
        SELECT DISTINCT function_name,
               CASE function_type WHEN 'table_macro' THEN 'table macro' ELSE 'macro' END,
               comment, parameters
        FROM duckdb_functions()
        WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
          AND function_type IN ('macro', 'table_macro')
        ORDER BY 1
        """
    ).fetchall()
    found += [
        Entry(name, kind, comment, tuple(Column(p, "", None) for p in params))
        for name, kind, comment, params in macros
    ]
    return found


def describe(con: duckdb.DuckDBPyConnection, name: str | None = None) -> str:
    """The dictionary as text for a terminal: every table and view with its comment, or one
    of them (`name`) with every column, its type and its comment."""
    found = entries(con)
    if name is None:
        width = max(len(e.name) for e in found)
        lines = [f"{e.name:<{width}}  {e.kind:<11}  {e.comment or '(no comment)'}" for e in found]
        lines.append("")
        lines.append("recon describe TABLE: its columns; docs/dictionary.md: all of it")
        return "\n".join(lines) + "\n"
    match = [e for e in found if e.name == name.lower()]
    if not match:
        raise LookupError(name)
    entry = match[0]
    lines = [f"{entry.name} ({entry.kind}): {entry.comment or '(no comment)'}", ""]
    if entry.kind.endswith("macro"):
        lines.append(f"parameters: {', '.join(c.name for c in entry.columns) or 'none'}")
        return "\n".join(lines) + "\n"
    width = max(len(c.name) for c in entry.columns)
    type_width = max(len(c.type) for c in entry.columns)
    for c in entry.columns:
        lines.append(f"  {c.name:<{width}}  {c.type:<{type_width}}  {c.comment or '(no comment)'}")
    return "\n".join(lines) + "\n"


def reference_warehouse() -> duckdb.DuckDBPyConnection:
    """An empty warehouse in memory as recon publishes one: migrations, reference tables
    and macros, the books' macros, the analysts' views, the dictionary."""
    from recon.warehouse.migrations import apply_migrations
    from recon.warehouse.published import create_views

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    apply_migrations(con)
    for stmt in sql_statements(read_sql("ledger/macros.sql")):
        con.execute(stmt)
    create_views(con)
    apply_dictionary(con, strict=True)
    return con


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def dictionary_markdown(con: duckdb.DuckDBPyConnection) -> str:
    """docs/dictionary.md: every table, view, column and macro with its comment."""
    found = entries(con)
    out = [
        "# Data dictionary",
        "",
        "Every table, view, column and macro of the published warehouse, with the comment",
        "DuckDB keeps in its catalog (`COMMENT ON`, from `sql/dictionary.sql`). Generated by",
        "`python -m recon.analyst.dictionary > docs/dictionary.md`; do not edit by hand. In a",
        "terminal: `recon describe` (the list) and `recon describe TABLE` (its columns). Money",
        "is BIGINT minor units beside a currency code; never sum across currencies.",
        "",
    ]
    for kind, title in (("table", "Tables"), ("view", "Views"), ("macro", "Macros")):
        of_kind = [e for e in found if e.kind == kind or (kind == "macro" and "macro" in e.kind)]
        out += [f"## {title}", ""]
        out += [f"- [`{e.name}`](#{e.name}): {_cell(e.comment)}" for e in of_kind]
        out.append("")
    for e in found:
        out += [f"### {e.name}", "", f"*{e.kind}* — {_cell(e.comment)}", ""]
        if "macro" in e.kind:
            out += [f"Parameters: {', '.join(f'`{c.name}`' for c in e.columns) or 'none'}.", ""]
            continue
        out += ["| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{c.name}` | {c.type} | {_cell(c.comment)} |" for c in e.columns]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print docs/dictionary.md (`python -m recon.analyst.dictionary > docs/dictionary.md`)."""
    del argv
    con = reference_warehouse()
    try:
        sys.stdout.write(dictionary_markdown(con))
    finally:
        con.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
