"""`recon query`: one read-only query on the published warehouse, printed for people or tools.

- The warehouse path is all a query needs from the settings: it is read alone (`--db`,
  `RECON_DB`, `recon.toml`'s `db`, else `data/recon.duckdb`), so an unrelated bad setting
  (`RECON_PAGE_SIZE=500`) does not stop a query. The path is shown resolved when missing.
- The SQL comes as an argument, from a file, or from standard input (`-`).
- A SQL error is DuckDB's own message, whole (its "Did you mean …?" hint included), raised
  as `QueryError`: not a bad setting.
- `table` prints a box table when every column fits the terminal, else one line per field
  (psql's expanded display): no column is ever hidden. A DECIMAL amount beside a currency
  column shows that currency's digits (JPY 725161, EUR 12.34, BHD 1.234); `csv` is
  spreadsheet-safe CSV (`recon.output.spreadsheet`); `json` is an array of objects (polars),
  DECIMAL amounts as exact strings.
"""

from __future__ import annotations

import shutil
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, Literal

import duckdb
import polars as pl
from pydantic_settings import (
    SettingsConfigDict,
)

from recon.analyst.export import open_read_only
from recon.config.settings import ReconSources, Settings
from recon.errors import ConfigError, ReconError
from recon.money.currency import currency_exponent, is_iso4217
from recon.output.spreadsheet import unique_reader, write_csv_stream
from recon.output.visible import visible

__all__ = [
    "OutputFormat",
    "QueryError",
    "read_query_text",
    "run_query",
    "warehouse_path",
]

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
            reader = unique_reader(rel.to_arrow_reader(65_536))
            if fmt == "csv":
                rows = write_csv_stream(reader, stream)
            else:
                rows = _write_json_stream(reader, stream)
            stream.flush()
            return rows
        except duckdb.Error as exc:
            raise QueryError(str(exc).strip()) from None


def _write_json_stream(reader: Any, stream: IO[bytes]) -> int:
    """`reader` as one JSON array of objects (polars' JSON, DECIMALs as exact strings),
    written a batch at a time: a million rows never sit in memory at once (issue 38)."""
    rows = 0
    stream.write(b"[")
    for batch in reader:
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        if not frame.height:
            continue
        body = frame.write_json().encode()[1:-1]  # the batch's objects, without its [ ]
        stream.write((b"," if rows else b"") + body)
        rows += frame.height
    stream.write(b"]\n")
    return rows


def _box(rel: duckdb.DuckDBPyRelation, max_rows: int) -> str:
    """Up to `max_rows` rows, every column shown: a box table when it fits the terminal,
    else one line per field (nothing is ever elided); amounts with their currency's digits."""
    columns = list(rel.columns)
    types = [str(t) for t in rel.types]
    rows = rel.limit(max_rows).fetchall()
    cells = [[_text(v) for v in row] for row in _with_currency_digits(columns, types, rows)]
    width = shutil.get_terminal_size().columns
    widths = [
        max([len(c), len(t)] + [len(r[i]) for r in cells])
        for i, (c, t) in enumerate(zip(columns, types, strict=True))
    ]
    multiline = any("\n" in v for r in cells for v in r)
    if not multiline and sum(widths) + 3 * len(widths) + 1 <= width:
        return _grid(columns, [t.lower() for t in types], cells, widths)
    return _records(columns, cells, width, multiline)


def _grid(columns: list[str], types: list[str], cells: list[list[str]], widths: list[int]) -> str:
    def line(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    def row(values: list[str], numeric: list[bool] | None = None) -> str:
        parts = []
        for i, (v, w) in enumerate(zip(values, widths, strict=True)):
            right = numeric is not None and numeric[i]
            parts.append(f" {v:>{w}} " if right else f" {v:<{w}} ")
        return "│" + "│".join(parts) + "│"

    numeric = [t.upper().startswith(_NUMERIC) for t in types]
    out = [line("┌", "┬", "┐"), row([c.center(w) for c, w in zip(columns, widths, strict=True)])]
    out.append(row([t.center(w) for t, w in zip(types, widths, strict=True)]))
    out.append(line("├", "┼", "┤"))
    for r in cells:
        out.append(row(r, numeric))
    out.append(line("└", "┴", "┘"))
    return "\n".join(out) + "\n"


def _records(columns: list[str], cells: list[list[str]], width: int, multiline: bool) -> str:
    """One line per field, a header per row (psql's expanded display)."""
    name_width = max(len(c) for c in columns)
    out = []
    for n, r in enumerate(cells, start=1):
        out.append(f"-[ row {n} ]".ljust(min(width, name_width + 30), "-"))
        for c, v in zip(columns, r, strict=True):
            lines = v.splitlines() or [""]
            out.append(f"{c:<{name_width}} │ {lines[0]}")
            out += [f"{'':<{name_width}} │ {extra}" for extra in lines[1:]]
    why = (
        "a value spans several lines"
        if multiline
        else f"{len(columns)} columns do not fit {width} characters side by side"
    )
    out.append(
        f"({why}: one line per field; --format csv or json gives every column of a row on one line)"
    )
    return "\n".join(out) + "\n"


_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "DECIMAL", "DOUBLE", "FLOAT")


def _with_currency_digits(
    columns: list[str], types: list[str], rows: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """Each DECIMAL amount beside a currency column (`books_amount` beside `books_currency`,
    else `currency`) shown with that currency's ISO 4217 digits: JPY 725161, EUR 12.34."""
    pairs: dict[int, int] = {}
    for i, (name, kind) in enumerate(zip(columns, types, strict=True)):
        if not kind.startswith("DECIMAL"):
            continue
        prefix = name[: name.index("amount")] if "amount" in name else ""
        for candidate in (f"{prefix}currency", "currency"):
            if candidate in columns:
                pairs[i] = columns.index(candidate)
                break
    if not pairs:
        return rows
    shown = []
    for row in rows:
        values = list(row)
        for i, at in pairs.items():
            code = values[at]
            if isinstance(values[i], Decimal) and isinstance(code, str) and is_iso4217(code):
                exponent = currency_exponent(code)
                if exponent is not None:
                    values[i] = values[i].quantize(Decimal(1).scaleb(-exponent))
        shown.append(tuple(values))
    return shown


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    # a NUL, BEL or RLO in a value is shown as an escape, not obeyed by the terminal
    return visible(str(value), keep_breaks=True)


def _empty(rel: duckdb.DuckDBPyRelation) -> str:
    return f"(no rows; columns: {', '.join(rel.columns)})\n"
