"""`recon export`: a warehouse table, view or SQL query to CSV or Parquet, safely.

- The DuckDB file is opened read-only with external access disabled and the configuration
  locked (FACTS.md): a query cannot read other files (`read_text`, `read_csv`, `ATTACH`,
  …), cannot write any, and cannot switch the protection off again. DuckDB itself never
  writes the output: the rows are streamed out as Arrow batches and written by Python.
- Table and view names cannot be bound as parameters, so they are checked against the
  tables and views that exist in the warehouse and then quoted. Values are only ever bound
  (`$name` placeholders with `params`), never formatted into SQL.
- The output path must resolve to a place inside `base_dir` (default: the current
  directory); it is written to a temporary file in the same folder and renamed.
- CSV text cells that a spreadsheet would run as a formula are neutralised
  (`recon.spreadsheet`); numeric columns are untouched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb
import polars as pl
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.errors import ConfigError, WarehouseError
from recon.spreadsheet import write_csv_batches, write_parquet_batches

__all__ = ["ExportFormat", "ExportResult", "export", "list_relations"]

ExportFormat = Literal["csv", "parquet"]
_SUFFIXES: dict[str, ExportFormat] = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
_BATCH_ROWS = 65_536


@dataclass(frozen=True)
class ExportResult:
    """The file written and how many data rows it holds."""

    path: Path
    rows: int


@contextlib.contextmanager
def _open_read_only(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    if not db_path.is_file():
        raise WarehouseError(f"warehouse file {db_path} does not exist")
    try:
        con = duckdb.connect(
            str(db_path),
            read_only=True,
            config={
                "enable_external_access": False,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "lock_configuration": True,
            },
        )
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open {db_path} read-only: {exc}") from exc
    try:
        yield con
    finally:
        con.close()


def list_relations(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Tables and views of the warehouse's main schema: name -> 'table' | 'view'."""
    rows = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "WHERE table_catalog = current_database() AND table_schema = 'main'"
    ).fetchall()
    return {name: ("view" if kind == "VIEW" else "table") for name, kind in rows}


def _quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _check_output(out: Path, base_dir: Path | None, fmt: ExportFormat | None) -> tuple[Path, str]:
    base = (base_dir if base_dir is not None else Path.cwd()).resolve()
    if not base.is_dir():
        raise ConfigError("base_dir", f"{base} is not an existing folder")
    # A relative `out` is taken relative to base; an absolute one must still be inside it.
    target = (base / out).resolve()
    if target == base or not target.is_relative_to(base):
        raise ConfigError("out", f"{out} is outside the folder exports may write to ({base})")
    if target.is_dir():
        raise ConfigError("out", f"{target} is a folder; give a file name")
    if not target.parent.is_dir():
        raise ConfigError("out", f"folder {target.parent} does not exist")
    chosen = fmt if fmt is not None else _SUFFIXES.get(target.suffix.lower())
    if chosen not in ("csv", "parquet"):
        raise ConfigError(
            "fmt", f"cannot tell the format from {target.name!r}; use a .csv or .parquet name"
        )
    return target, chosen


def _statement(
    con: duckdb.DuckDBPyConnection,
    table: str | None,
    view: str | None,
    query: str | None,
    params: Mapping[str, object] | None,
) -> str:
    given = [x for x in (table, view, query) if x is not None]
    if len(given) != 1:
        raise ConfigError("export", "give exactly one of a table, a view or a query")
    if query is not None:
        if not query.strip():
            raise ConfigError("query", "is empty")
        return query
    if params:
        raise ConfigError("params", "only a query has placeholders to bind values to")
    relations = list_relations(con)
    kind: str = "table" if table is not None else "view"
    name = table if table is not None else view
    assert name is not None
    if relations.get(name) != kind:
        known = ", ".join(sorted(n for n, k in relations.items() if k == kind)) or "none"
        raise ConfigError(kind, f"no {kind} named {name!r} in the warehouse (known: {known})")
    return f"SELECT * FROM {_quote_identifier(name)}"  # noqa: S608 - allow-listed identifier


def export(
    db_path: Path,
    *,
    table: str | None = None,
    view: str | None = None,
    query: str | None = None,
    params: Mapping[str, object] | None = None,
    out: Path,
    fmt: ExportFormat | None = None,
    base_dir: Path | None = None,
) -> ExportResult:
    """Export one table, view or query of the warehouse at `db_path` to `out`.

    `params` are bound to `$name` placeholders of `query`. `fmt` defaults to the suffix of
    `out`. Raises ConfigError for a bad argument (unknown table, path outside `base_dir`,
    a query DuckDB refuses or cannot run) and WarehouseError when the file cannot be opened.
    """
    target, chosen = _check_output(out, base_dir, fmt)
    with _open_read_only(db_path) as con:
        sql = _statement(con, table, view, query, params)
        try:
            rel = con.sql(sql, params=dict(params) if params else None)
            if rel is None:
                raise ConfigError("query", "is not a statement that returns rows")
            reader: pa.RecordBatchReader = rel.to_arrow_reader(_BATCH_ROWS)
            if chosen == "csv":
                rows = write_csv_batches(reader, target)
            else:
                rows = write_parquet_batches(reader, target)
        except duckdb.Error as exc:
            raise ConfigError("query", f"DuckDB refused it: {exc}") from exc
        except (pa.ArrowException, pl.exceptions.PolarsError) as exc:
            raise ConfigError(
                "export", f"cannot write these columns as {chosen}: {exc}; cast them in a query"
            ) from exc
    return ExportResult(path=target, rows=rows)
