"""`recon query`: one read-only query on the published warehouse, printed for people or tools.

- The warehouse path is all a query needs from the settings: it is read alone (`--db`,
  `RECON_DB`, `recon.toml`'s `db`, else `data/recon.duckdb`), so an unrelated bad setting
  (`RECON_PAGE_SIZE=500`) does not stop a query. The path is shown resolved when missing.
- The SQL comes as an argument, from a file, or from standard input (`-`).
- A SQL error is DuckDB's own message, whole (its "Did you mean …?" hint included), raised
  as `QueryError`: not a bad setting.
- `table` prints DuckDB's box rendering; `csv` is spreadsheet-safe CSV
  (`recon.spreadsheet`);
  `json` is an array of objects (polars), DECIMAL amounts as exact strings.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
from pathlib import Path
from typing import IO, Literal

import duckdb
import polars as pl
from pydantic_settings import (
    SettingsConfigDict,
)

from recon.analyst.export import open_read_only
from recon.errors import ConfigError, ReconError
from recon.settings import ReconSources, Settings
from recon.spreadsheet import write_csv_stream

__all__ = ["OutputFormat", "QueryError", "read_query_text", "run_query", "warehouse_path"]

OutputFormat = Literal["table", "csv", "json"]


class QueryError(ReconError):
    """DuckDB refused or could not run the query; the message is DuckDB's."""


class _WarehouseOnly(ReconSources):
    """The one setting a query needs, read from where `Settings` reads it."""

    model_config = SettingsConfigDict(env_prefix="RECON_", extra="ignore")
    db: Path = Settings.model_fields["db"].default


def warehouse_path(db: Path | None = None) -> Path:
    """The published warehouse's absolute path: `db`, else RECON_DB / recon.toml / default."""
    chosen = db if db is not None else _WarehouseOnly().db
    return chosen.expanduser().resolve()


def read_query_text(sql: str | None, file: Path | None, stdin: IO[str] | None = None) -> str:
    """The SQL from the argument, or `file`; `-` (either way) reads standard input."""
    if (sql is None) == (file is None):
        raise ConfigError("SQL", "give the SQL as an argument or with --file (not both)")
    if sql == "-" or file == Path("-"):
        text = (stdin or sys.stdin).read()
    elif file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError("--file", f"cannot read {file}: {exc.strerror}") from None
    else:
        text = sql or ""
    if not text.strip():
        raise ConfigError("SQL", "is empty")
    return text


def run_query(
    db_path: Path,
    sql: str,
    *,
    fmt: OutputFormat = "table",
    max_rows: int = 100,
    out: IO[bytes] | None = None,
) -> int:
    """Run `sql` read-only on the warehouse at `db_path`; print it to `out`; return rows."""
    stream = out if out is not None else sys.stdout.buffer
    with open_read_only(db_path) as con:
        try:
            rel = con.sql(sql)
            if rel is None:
                raise QueryError("the SQL is not a query that returns rows")
            if fmt == "table":
                head = rel.limit(max_rows + 1).to_arrow_table()
                stream.write((_box(rel, max_rows) if head.num_rows else _empty(rel)).encode())
                if head.num_rows > max_rows:
                    stream.write(f"(first {max_rows} rows; --max-rows to see more)\n".encode())
                stream.flush()
                return int(min(head.num_rows, max_rows))
            reader = rel.to_arrow_reader(65_536)
            if fmt == "csv":
                rows = write_csv_stream(reader, stream)
            else:
                frame = pl.from_arrow(reader.read_all())
                assert isinstance(frame, pl.DataFrame)
                stream.write(frame.write_json().encode() + b"\n")
                rows = frame.height
            stream.flush()
            return rows
        except duckdb.Error as exc:
            raise QueryError(str(exc).strip()) from None


def _box(rel: duckdb.DuckDBPyRelation, max_rows: int) -> str:
    """DuckDB's own table rendering of up to `max_rows` rows, every one shown (printing a
    relation would elide all but 20 with dots)."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):  # show() prints through Python's sys.stdout
        rel.limit(max_rows).show(max_rows=max_rows, max_width=shutil.get_terminal_size().columns)
    return text.getvalue().rstrip("\n") + "\n"


def _empty(rel: duckdb.DuckDBPyRelation) -> str:
    return f"(no rows; columns: {', '.join(rel.columns)})\n"
