"""The commands on the published warehouse, for analysts: `query` (read-only SQL),
`describe` (the data dictionary) and `export` (a table, a view or a query to CSV, Parquet or
Excel)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from recon.cli.common import (
    AccountName,
    DbPath,
    app,
    fail,
    guard,
    out,
    say,
)
from recon.errors import ConfigError, UsageError


def _chosen(db: Path | None, account: str | None) -> Path:
    """The warehouse a command reads: `--db`, else `--account`'s own, else RECON_DB (with
    [accounts], the consolidated warehouse over every account)."""
    from recon.analyst.query import warehouse_path

    if account is not None and db is None:
        from recon.config.accounts import account_db

        return warehouse_path(account_db(account))
    return warehouse_path(db)


@app.command()
def query(
    sql: Annotated[
        str | None,
        typer.Argument(help="A SELECT to run on the published warehouse; - reads stdin."),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", "-f", help="Read the SQL from this file (- for stdin).", dir_okay=False
        ),
    ] = None,
    db: DbPath = None,
    account: AccountName = None,
    fmt: Annotated[
        Literal["table", "csv", "json"],
        typer.Option("--format", help="table (for people), csv or json (for tools)."),
    ] = "table",
    max_rows: Annotated[int, typer.Option(help="Rows to show (table format).", min=1)] = 100,
) -> None:
    """Run a read-only query on the published warehouse and print the result."""
    from recon.analyst.query import QueryError, read_query_text, run_query

    def go() -> int:
        text = read_query_text(sql, file)
        try:
            run_query(_chosen(db, account), text, fmt=fmt, max_rows=max_rows)
        except QueryError as exc:
            raise fail(2, f"query failed: {exc}") from None
        return 0

    raise typer.Exit(guard(go))


@app.command()
def describe(
    table: Annotated[
        str | None, typer.Argument(help="A table, view or macro (default: list them all).")
    ] = None,
    db: DbPath = None,
) -> None:
    """The data dictionary: every table and view with what it holds, or one table's columns,
    their types and what they mean (docs/dictionary.md has all of it)."""
    from recon.analyst.dictionary import describe as describe_text
    from recon.analyst.export import open_read_only
    from recon.analyst.query import warehouse_path

    def go() -> int:
        with open_read_only(warehouse_path(db)) as con:
            try:
                text = describe_text(con, table)
            except LookupError:
                raise UsageError(
                    "TABLE", f"no table, view or macro {table!r} (`recon describe` lists them)"
                ) from None
        out.print(text, end="", highlight=False, markup=False)
        return 0

    raise typer.Exit(guard(go))


@app.command()
def export(
    out_path: Annotated[
        Path, typer.Argument(metavar="OUT", help="Output file (.csv, .parquet or .xlsx).")
    ],
    table: Annotated[
        list[str] | None,
        typer.Option(help="A warehouse table or view (repeatable: one .xlsx sheet each)."),
    ] = None,
    view: Annotated[str | None, typer.Option(help="A warehouse view (same as --table).")] = None,
    query: Annotated[str | None, typer.Option(help="A SELECT; values via --param.")] = None,
    param: Annotated[
        list[str] | None, typer.Option(help="NAME=VALUE bound as $NAME (repeatable).")
    ] = None,
    fmt: Annotated[
        Literal["csv", "parquet", "xlsx"] | None,
        typer.Option("--format", help="Default: from OUT's suffix."),
    ] = None,
    include_raw: Annotated[
        bool,
        typer.Option(
            "--include-raw",
            help="Keep `raw` and personal fields (emails, names, card last4/expiry, …).",
        ),
    ] = False,
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            envvar="RECON_EXPORT_ROOT",
            help="Only write inside this folder (RECON_EXPORT_ROOT; default: anywhere).",
            file_okay=False,
        ),
    ] = None,
    csv_dialect: Annotated[
        Literal["excel", "excel-eu"],
        typer.Option(
            "--csv-dialect",
            envvar="RECON_CSV_DIALECT",
            help="excel (comma, decimal point) or excel-eu (semicolon, decimal comma); "
            "RECON_CSV_DIALECT.",
        ),
    ] = "excel",
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Export tables, views or a query to CSV (spreadsheet-safe), Parquet or Excel."""
    from recon.analyst.export import export as do_export

    def go() -> int:
        params: dict[str, object] = {}
        for item in param or []:
            name, sep, value = item.partition("=")
            if not sep or not name.isidentifier():
                raise ConfigError("--param", f"{item!r} is not NAME=VALUE")
            params[name] = value
        result = do_export(
            _chosen(db, account),
            table=table,
            view=view,
            query=query,
            params=params,
            out=out_path,
            fmt=fmt,
            base_dir=root,
            include_raw=include_raw,
            csv_dialect=csv_dialect,
        )
        out.print(f"wrote {result.rows:,} rows to {result.path}", highlight=False)
        if result.left_out:
            say(
                f"left out as personal data: {', '.join(result.left_out)} "
                "(--include-raw keeps them)"
            )
        return 0

    raise typer.Exit(guard(go))
