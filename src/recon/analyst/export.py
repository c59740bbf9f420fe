"""`recon export`: warehouse tables, views or a SQL query to CSV, Parquet or Excel, safely.

- The DuckDB file is opened read-only with external access disabled and the configuration
  locked (docs/facts.md "DuckDB"): a query cannot read other files (`read_text`,
  `read_csv`, `ATTACH`, …), cannot write any, and cannot switch the protection off again. DuckDB
  itself never
  writes the output: the rows are streamed out as Arrow batches and written by Python.
- Table and view names cannot be bound as parameters, so they are checked against the
  tables and views that exist in the warehouse and then quoted (a view is accepted wherever
  a table is). Values are only ever bound (`$name` placeholders with `params`), never
  formatted into SQL.
- The output goes to any writable path the user names; only when an allowed root is
  configured (`base_dir`, `RECON_EXPORT_ROOT`) must it resolve to a place inside it. It is
  written to a temporary file in the same folder and renamed (`recon.output.atomic`).
- Personal data stays out unless asked for (`include_raw`): `raw` and every column named
  like a personal field (`recon.report.privacy.PERSONAL_KEYS`: email, name, last4, expiry,
  …) are left out, and emails, card numbers and `key=value` pairs of personal keys inside
  the remaining text are removed, as in the reports.
- Integer sums (DuckDB's HUGEINT) are cast to BIGINT, so Parquet and Excel get a plain
  64-bit integer, not a 128-bit decimal; a sum too large for BIGINT is refused.
- CSV: text cells a spreadsheet would run as a formula are neutralised and timestamps are
  written as UTC `2026-11-21 02:00:00` (`recon.output.spreadsheet`); .xlsx: typed cells, money in
  major units with the currency's number format, one sheet per table (`recon.output.excel`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb
import orjson
import polars as pl
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.catalogue.resources import personal_paths
from recon.errors import ConfigError, WarehouseError
from recon.output.excel import Sheet, write_xlsx
from recon.output.spreadsheet import (
    CsvDialect,
    unique_reader,
    write_csv_batches,
    write_parquet_batches,
)
from recon.report.privacy import PERSONAL_KEYS, scrub_column
from recon.warehouse.consolidated import attach_accounts
from recon.warehouse.database import spill_directory
from recon.warehouse.memory import configured_memory_limit, duckdb_config

__all__ = [
    "ExportFormat",
    "ExportResult",
    "export",
    "is_personal_column",
    "list_relations",
    "open_read_only",
    "output_path",
    "personal_from_raw",
]

ExportFormat = Literal["csv", "parquet", "xlsx"]
_SUFFIXES: dict[str, ExportFormat] = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xlsx": "xlsx",
}
_BATCH_ROWS = 65_536
_PERSONAL = {re.sub(r"[_\-]", "", k) for k in (*PERSONAL_KEYS, "raw")}
# Reference tables whose columns merely share a personal field's name (a currency's `name`).
_REFERENCE_TABLES = {"currencies", "status_values", "status_transitions"}


@dataclass(frozen=True)
class ExportResult:
    """The file written, how many data rows it holds, and the columns left out."""

    path: Path
    rows: int
    left_out: tuple[str, ...] = field(default=())


def is_personal_column(name: str) -> bool:
    """True for `raw` and a column named like a personal field (`email`, `cardLast4`…)."""
    squashed = re.sub(r"[_\-\s]", "", name).lower()
    return squashed in _PERSONAL or any(squashed.endswith(k) and len(k) >= 5 for k in _PERSONAL)


@contextlib.contextmanager
def open_read_only(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse read-only, with external access off and the configuration locked."""
    if not db_path.is_file():
        from recon.config.environment import no_warehouse

        raise WarehouseError(no_warehouse(db_path))
    try:
        con = duckdb.connect(
            str(db_path),
            read_only=True,
            config={
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                # RECON_DUCKDB_MEMORY_LIMIT and a folder to spill to, as every connection;
                # "auto" gives an analyst's own SQL the night's budget (192 MiB at most), not
                # the reports' 64 MiB: a consolidated query over attached accounts needs it
                **duckdb_config(configured_memory_limit(), read_only=False),
                "temp_directory": str(spill_directory(db_path)),
            },
        )
        # A consolidated warehouse (several accounts) reads the accounts' files: attached
        # read-only first, then external access goes off (it cannot be switched on again).
        try:
            attach_accounts(con, db_path)
        except WarehouseError:
            con.close()
            raise
        con.execute("SET enable_external_access = false")
        # Timestamps read in UTC; then nothing a query says can change the configuration.
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET lock_configuration = true")
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


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _check_output(out: Path, base_dir: Path | None, fmt: ExportFormat | None) -> tuple[Path, str]:
    if base_dir is not None:
        base = base_dir.resolve()
        if not base.is_dir():
            raise ConfigError("RECON_EXPORT_ROOT", f"{base} is not an existing folder")
        # A relative `out` is taken relative to the root; an absolute one must be inside it.
        target = (base / out).resolve()
        if target == base or not target.is_relative_to(base):
            raise ConfigError("out", f"{out} is outside the folder exports may write to ({base})")
    else:
        target = out.expanduser().resolve()
    if target.is_dir():
        raise ConfigError("out", f"{target} is a folder; give a file name")
    if not target.parent.is_dir():
        raise ConfigError("out", f"folder {target.parent} does not exist")
    if not os.access(target.parent, os.W_OK):
        raise ConfigError("out", f"folder {target.parent} is not writable")
    chosen = fmt if fmt is not None else _SUFFIXES.get(target.suffix.lower())
    if chosen not in ("csv", "parquet", "xlsx"):
        raise ConfigError(
            "format",
            f"cannot tell the format from {target.name!r}; use a .csv, .parquet or .xlsx name",
        )
    return target, chosen


def output_path(out: Path, base_dir: Path | None, fmt: ExportFormat | None = None) -> Path:
    """Where an export named `out` is written: inside `base_dir` (RECON_EXPORT_ROOT) when
    one is set, in a writable existing folder; ConfigError otherwise. Shared by
    `recon export` and `recon findings export`."""
    return _check_output(out, base_dir, fmt)[0]


def _sources(
    con: duckdb.DuckDBPyConnection,
    names: Sequence[str],
    query: str | None,
    params: Mapping[str, object] | None,
) -> list[tuple[str, str]]:
    """(sheet name, SQL) per table/view named, or the query."""
    if bool(names) == (query is not None):
        raise ConfigError("export", "give exactly one of tables/views or a query")
    if query is not None:
        if not query.strip():
            raise ConfigError("query", "is empty")
        return [("query", query)]
    if params:
        raise ConfigError("params", "only a query has placeholders to bind values to")
    relations = list_relations(con)
    for name in names:
        if name not in relations:
            known = ", ".join(sorted(relations)) or "none"
            raise ConfigError(
                "table", f"no table or view named {name!r} in the warehouse (known: {known})"
            )
    return [(n, f"SELECT * FROM {_quote(n)}") for n in names]  # noqa: S608 - allow-listed


_JSON_READERS = frozenset(
    {
        "->",
        "->>",
        "json_extract",
        "json_extract_string",
        "json_extract_path",
        "json_extract_path_text",
        "json_value",
    }
)


def _json_path(text: str) -> tuple[str, ...]:
    """`$.card.last4`, `card.last4`, `$."card"."last4"`, `/card/last4` as ('card', 'last4')."""
    text = text.strip()
    if text.startswith("/"):
        keys = text.split("/")
    else:
        keys = re.split(r"\.(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", text.removeprefix("$"))
    return tuple(re.sub(r"\[\d*\]$", "", k).strip('"').lower() for k in keys if k.strip('"'))


def _personal_path(path: tuple[str, ...]) -> bool:
    """A path the catalogue marks personal, an object holding one, or a key named like a
    personal field (`…email`, `…last4`)."""
    if not path:
        return True  # the whole record
    marked = personal_paths()
    if any(path == p[: len(path)] or p == path[: len(p)] for p in marked):
        return True
    return is_personal_column(path[-1])


def _reads_personal_raw(node: Any) -> str | None:
    """The personal JSON path an expression tree reads from a `raw` column, if any."""
    if isinstance(node, dict):
        args: list[Any] = []
        if node.get("class") == "FUNCTION" and node.get("function_name") in _JSON_READERS:
            args = [a.get("expression", a) for a in node.get("arguments") or []]
        elif node.get("class") == "LAMBDA" and node.get("syntax_type") == "SINGLE_ARROW":
            args = [node.get("lhs") or {}, node.get("expr") or {}]  # `raw -> 'card'` parses so
        if (
            len(args) >= 2
            and args[0].get("class") == "COLUMN_REF"
            and args[0].get("column_names", [""])[-1].lower() == "raw"
            and args[1].get("class") == "CONSTANT"
        ):
            text = str((args[1].get("literal") or {}).get("text", ""))
            if _personal_path(_json_path(text)):
                return text
        for value in node.values():
            found = _reads_personal_raw(value)
            if found:
                return found
    elif isinstance(node, list):
        for value in node:
            found = _reads_personal_raw(value)
            if found:
                return found
    return None


def _selects(node: Any) -> Iterator[dict[str, Any]]:
    """Every SELECT node of a serialized query tree (CTEs and subqueries included)."""
    if isinstance(node, dict):
        if "select_list" in node:
            yield node
        for value in node.values():
            yield from _selects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _selects(value)


def _names_inner(node: Any, inner: Mapping[str, str]) -> str | None:
    """The personal path behind a column reference to one of `inner`'s names, if any."""
    if isinstance(node, dict):
        if node.get("class") == "COLUMN_REF":
            return inner.get(str(node.get("column_names", [""])[-1]).lower())
        for value in node.values():
            if found := _names_inner(value, inner):
                return found
    elif isinstance(node, list):
        for value in node:
            if found := _names_inner(value, inner):
                return found
    return None


def personal_from_raw(
    con: duckdb.DuckDBPyConnection, sql: str, columns: list[str]
) -> dict[str, str]:
    """The result columns of `sql` whose values come from a personal JSON path of `raw`
    (`raw->>'$.card.last4' AS l4`): column -> path. Recognised by where a value comes
    from, not by the name the query gives it."""
    try:
        # a cursor of its own: `con` may hold the query's pending result
        row = con.cursor().execute("SELECT json_serialize_sql(?)", [sql]).fetchone()
        tree = orjson.loads(row[0]) if row else {}
    except (duckdb.Error, orjson.JSONDecodeError):
        return {}
    statements = tree.get("statements") or []
    if tree.get("error") or len(statements) != 1:
        return {}
    node = statements[0].get("node", {})
    # names given, in a CTE or subquery, to values read from a personal path: a column of
    # the result that only names one of them carries it too
    inner = {
        alias.lower(): path
        for select in _selects(node)
        if select is not node
        for e in select.get("select_list") or []
        if (alias := e.get("alias")) and (path := _reads_personal_raw(e))
    }
    select_list = node.get("select_list") or []
    starred = any(e.get("class") == "STAR" for e in select_list)
    found: dict[str, str] = {}
    for position, expression in enumerate(select_list):
        path = _reads_personal_raw(expression) or _names_inner(expression, inner)
        if path is None:
            continue
        alias = expression.get("alias")
        if alias and alias in columns:
            found[alias] = path
        elif not starred and position < len(columns):
            found[columns[position]] = path
    return found


def _shape(
    rel: duckdb.DuckDBPyRelation,
    source: str,
    include_raw: bool,
    from_raw: Mapping[str, str] | None = None,
) -> tuple[duckdb.DuckDBPyRelation, list[str]]:
    """`rel` without personal columns (unless `include_raw`): named like a personal field, or
    read from a personal JSON path of `raw` (`from_raw`); HUGEINTs cast to BIGINT."""
    exprs: list[str] = []
    left_out: list[str] = []
    for name, dtype in zip(rel.columns, rel.types, strict=True):
        if not include_raw and source not in _REFERENCE_TABLES and is_personal_column(name):
            left_out.append(name)
            continue
        if not include_raw and from_raw and name in from_raw:
            left_out.append(f"{name} (raw {from_raw[name]})")
            continue
        quoted = _quote(name)
        if str(dtype) in ("HUGEINT", "UHUGEINT"):
            exprs.append(f"CAST({quoted} AS BIGINT) AS {quoted}")
        else:
            exprs.append(quoted)
    if not exprs:
        raise ConfigError("export", f"every column of {source} is personal data; --include-raw")
    return rel.project(", ".join(exprs)), left_out


def _scrubbed(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    for batch in reader:
        columns = [
            scrub_column(col)
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
            else col
            for col in batch.columns
        ]
        yield pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _reader(rel: duckdb.DuckDBPyRelation, include_raw: bool) -> pa.RecordBatchReader:
    # a column named twice (`SELECT id, id`) is written as id, id_2
    reader: pa.RecordBatchReader = unique_reader(rel.to_arrow_reader(_BATCH_ROWS))
    if include_raw:
        return reader
    schema = pa.schema(
        [f.with_type(pa.string()) if pa.types.is_large_string(f.type) else f for f in reader.schema]
    )
    return pa.RecordBatchReader.from_batches(
        schema, (b.cast(schema) if b.schema != schema else b for b in _scrubbed(reader))
    )


def export(
    db_path: Path,
    *,
    table: str | Sequence[str] | None = None,
    view: str | None = None,
    query: str | None = None,
    params: Mapping[str, object] | None = None,
    out: Path,
    fmt: ExportFormat | None = None,
    base_dir: Path | None = None,
    include_raw: bool = False,
    csv_dialect: CsvDialect = "excel",
) -> ExportResult:
    """Export tables or views (`table`, `view`: names of either) or a query to `out`.

    `params` are bound to `$name` placeholders of `query`. `fmt` defaults to the suffix of
    `out`; several tables need .xlsx (one sheet each). `base_dir`, when given, is the only
    folder exports may write in. Raises ConfigError for a bad argument (unknown table, path
    outside `base_dir`, a query DuckDB refuses) and WarehouseError when the file cannot be
    opened.
    """
    names = [table] if isinstance(table, str) else list(table or [])
    if view is not None:
        names.append(view)
    target, chosen = _check_output(out, base_dir, fmt)
    if len(names) > 1 and chosen != "xlsx":
        raise ConfigError("table", f"several tables go to one .xlsx (a sheet each), not {chosen}")
    left_out: list[str] = []
    with open_read_only(db_path) as con:
        sources = _sources(con, names, query, params)
        try:
            shaped = []
            for source, sql in sources:
                rel = con.sql(sql, params=dict(params) if params else None)
                if rel is None:
                    raise ConfigError("query", "is not a statement that returns rows")
                from_raw = personal_from_raw(con, sql, list(rel.columns)) if query else None
                rel, dropped = _shape(rel, source, include_raw, from_raw)
                left_out += [d for d in dropped if d not in left_out]
                shaped.append((source, rel))
            if chosen == "xlsx":
                sheets = [Sheet(s, _reader(r, include_raw).read_all()) for s, r in shaped]
                rows = sum(write_xlsx(sheets, target).values())
            elif chosen == "csv":
                reader = _reader(shaped[0][1], include_raw)
                rows = write_csv_batches(reader, target, dialect=csv_dialect)
            else:
                rows = write_parquet_batches(_reader(shaped[0][1], include_raw), target)
        except duckdb.Error as exc:
            raise ConfigError("query", f"DuckDB refused it: {exc}") from exc
        except (pa.ArrowException, pl.exceptions.PolarsError, ValueError) as exc:
            raise ConfigError(
                "export", f"cannot write these columns as {chosen}: {exc}; cast them in a query"
            ) from exc
    return ExportResult(path=target, rows=rows, left_out=tuple(left_out))
