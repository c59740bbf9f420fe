"""Where each books table comes from, and reading it as text columns.

A source is a file or a glob of files (CSV, Parquet, .xlsx; a glob is one table) or a SQL
query against a PostgreSQL database. Every value is read as text (CSV and .xlsx with no
type inference, Parquet and query columns cast to text) so that the load SQL converts
amounts exactly and says why a value is refused; nothing is rounded on the way in.

`resolve_sources` and `check_columns` run in the preflight: a missing file, an empty glob
or a missing column stops the run before any request with one line naming it.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import duckdb
import polars as pl
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
from fastexcel import FastExcelError
from pydantic import SecretStr

from recon.config.books import INPUTS, BooksTable
from recon.config.settings import Settings
from recon.errors import ConfigError, redact_url

__all__ = [
    "SUFFIXES",
    "BooksSource",
    "book_ids",
    "check_columns",
    "read_source",
    "resolve_sources",
    "snapshot",
    "unread_sheets",
]

SUFFIXES = (".csv", ".parquet", ".xlsx")
_GLOB_CHARS = frozenset("*?[")
_URL_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class BooksSource:
    """One books table: its input name, where it is read from, and its column mapping."""

    input: str  # orders | refunds | invoices
    setting: str  # what to name in an error: RECON_LEDGER_ORDERS or [ledger.orders] query
    mapping: BooksTable
    files: tuple[Path, ...] = ()
    query: str | None = None
    url: SecretStr | None = None

    @property
    def table(self) -> str:
        """The warehouse table it lands in."""
        return f"ledger_{self.input}"

    def describe(self) -> str:
        """Where it comes from, for people (a database URL redacted)."""
        if self.query is not None:
            url = redact_url(self.url.get_secret_value()) if self.url else "?"
            return f"query on {url}"
        if len(self.files) == 1:
            return str(self.files[0])
        return f"{len(self.files)} files: " + ", ".join(str(p) for p in self.files)


def resolve_sources(settings: Settings) -> list[BooksSource]:
    """The books tables configured in `settings` (none: the books are not reconciled).

    `RECON_LEDGER_<INPUT>` names a file or glob and wins over `[ledger.<input>] path`;
    `[ledger.<input>] query` reads from `url` or `RECON_LEDGER_DATABASE_URL`.
    """
    out: list[BooksSource] = []
    for name in INPUTS:
        mapping = settings.ledger.table(name)
        env_path = getattr(settings, f"ledger_{name}")
        if env_path:
            out.append(_file_source(name, f"RECON_LEDGER_{name.upper()}", env_path, mapping))
        elif mapping.path:
            out.append(_file_source(name, f"[ledger.{name}] path", mapping.path, mapping))
        elif mapping.query:
            url = mapping.url or settings.ledger_database_url
            setting = f"[ledger.{name}] url"
            if url is None or not url.get_secret_value():
                raise ConfigError(
                    setting, "is not set (nor RECON_LEDGER_DATABASE_URL) for the query"
                )
            if not url.get_secret_value().startswith(_URL_SCHEMES):
                raise ConfigError(
                    setting,
                    "is set but is not a postgresql:// URL (its value is a secret: not shown)",
                )
            out.append(
                BooksSource(name, f"[ledger.{name}] query", mapping, query=mapping.query, url=url)
            )
    return out


def _file_source(name: str, setting: str, pattern: str, mapping: BooksTable) -> BooksSource:
    pattern = pattern.strip()
    if _GLOB_CHARS & set(pattern):
        files = [Path(p) for p in sorted(glob.glob(pattern, recursive=True))]
        files = [p for p in files if p.is_file()]
        if not files:
            raise ConfigError(setting, f"no file matches {pattern!r}")
    else:
        path = Path(pattern)
        if not path.is_file():
            raise ConfigError(setting, f"no such file: {pattern}")
        files = [path]
    for path in files:
        if path.suffix.lower() not in SUFFIXES:
            raise ConfigError(
                setting, f"{path} is not a {', '.join(SUFFIXES)} file (by its name's ending)"
            )
    return BooksSource(name, setting, mapping, files=tuple(files))


def check_columns(source: BooksSource) -> None:
    """Every required column is in every file (or the query's result); a ConfigError names
    the first one missing. Reads headers only (a query runs with LIMIT 0)."""
    if source.query is not None:
        _require(source, source.describe(), _query_columns(source))
        return
    for path in source.files:
        if path.suffix.lower() == ".xlsx" and source.mapping.sheet == "*":
            _sheets_with_header(source, path)  # at least one sheet has the columns
            continue
        _require(source, str(path), _file_columns(source, path))


def _require(source: BooksSource, where: str, columns: list[str]) -> None:
    mapping = source.mapping
    present = set(columns)
    for field, required in mapping.FIELDS.items():
        column = mapping.column_of(field)
        if required and column not in present:
            raise ConfigError(
                source.setting,
                f"{where} has no column {column!r} (the {source.input}' {field}); "
                f"columns: {', '.join(columns) or 'none'}{_hint(source, where, columns)}",
            )
    for name, needs in (
        ("refunds", ("payment_id", "reference")),
        ("orders", ("reference", "order_id")),
    ):
        if source.input != name:
            continue
        ids = [mapping.column_of(f) for f in needs]
        if not present & set(ids):
            raise ConfigError(
                source.setting,
                f"{where} has neither {ids[0]!r} nor {ids[1]!r} ({name} need one); "
                f"columns: {', '.join(columns) or 'none'}",
            )


#: What reading a books file may raise: a 0-byte or fake .xlsx is a calamine error.
_UNREADABLE = (OSError, pl.exceptions.PolarsError, ValueError, FastExcelError)


def _hint(source: BooksSource, where: str, columns: list[str]) -> str:
    """What may be wrong when a column is missing: a CSV read with the wrong delimiter, or a
    workbook whose first sheet is not the table."""
    section = f"[ledger.{source.input}]"
    if where.lower().endswith(".xlsx"):
        sheets = _sheet_names(Path(where))
        read = source.mapping.sheet or (sheets[0] if sheets else "the first")
        others = [s for s in sheets if s != read]
        listed = f"; its other sheets: {', '.join(others)}" if others else ""
        return f' (read sheet {read!r}{listed}; name one with sheet = "…" in {section})'
    if len(columns) == 1:
        for delimiter in (";", "\t", "|", ","):
            if delimiter != source.mapping.delimiter and delimiter in columns[0]:
                shown = "\\t" if delimiter == "\t" else delimiter
                return (
                    f' (the file looks {shown}-delimited: set delimiter = "{shown}" in {section})'
                )
    return ""


def _sheet_names(path: Path) -> list[str]:
    try:
        import fastexcel

        return list(fastexcel.read_excel(path).sheet_names)
    except Exception:  # naming the sheets is a courtesy: the error is reported anyway
        return []


def _file_columns(source: BooksSource, path: Path) -> list[str]:
    try:
        suffix = path.suffix.lower()
        if suffix == ".parquet":
            return list(pl.read_parquet_schema(path))
        if suffix == ".xlsx":
            return list(_read_xlsx(source, path, header_only=True).columns)
        return _csv_header(source, path)
    except _UNREADABLE as exc:
        raise ConfigError(source.setting, f"cannot read {path}: {_first_line(exc)}") from None


def _csv_header(source: BooksSource, path: Path) -> list[str]:
    """The CSV's header as the reader (DuckDB's read_csv) names it: quotes undone, `""`
    read as `"`; a column named twice refused, naming it (a reader would rename one).

    Only the header line is decoded: a mis-encoded line further down is the reader's to
    refuse (that row, with its reason), not a reason to refuse the file."""
    with path.open("rb") as raw:
        first = raw.readline()
    text = first.decode("utf-8-sig")  # a header that is not UTF-8 is refused: ValueError
    header = next(csv.reader(io.StringIO(text, newline=""), delimiter=source.mapping.delimiter), [])
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise ValueError(f"the column {name!r} appears twice in the header")
        seen.add(name)
    return header


def read_source(source: BooksSource) -> Iterator[tuple[str, pa.Table]]:
    """Each part of `source` as (where, Arrow table): the mapped fields as text columns named
    after the fields (missing optional ones NULL), plus `_row` (the row a spreadsheet shows:
    the header is row 1; for Parquet and queries, the record's number from 1)."""
    if source.query is not None:
        yield source.describe(), _shape(source, _query_frame(source), first_row=1)
        return
    for path in source.files:
        suffix = path.suffix.lower()
        try:
            if suffix == ".xlsx" and source.mapping.sheet == "*":
                for sheet in _sheets_with_header(source, path):
                    frame = _read_xlsx(source, path, sheet=sheet)
                    yield f"{path}[{sheet}]", _shape(source, frame, first_row=2)
                continue
            if suffix == ".parquet":
                frame, first = pl.read_parquet(path), 1
            elif suffix == ".xlsx":
                frame, first = _read_xlsx(source, path), 2
            else:
                with tempfile.TemporaryDirectory(prefix="recon-books-") as folder:
                    # a file the merchant's export is still writing: read a stable copy
                    copy = snapshot(path, Path(folder) / path.name)
                    _csv_header(source, copy)  # a column named twice is refused
                    yield from _read_csv_parts(source, copy, str(path))
                continue
        except (*_UNREADABLE, duckdb.Error) as exc:
            raise ConfigError(source.setting, f"cannot read {path}: {_first_line(exc)}") from None
        _require(source, str(path), list(frame.columns))
        yield str(path), _shape(source, frame, first_row=first)


def _copy_prefix(source: Path, target: Path, size: int) -> None:
    """The first `size` bytes of `source` into `target`."""
    with source.open("rb") as src, target.open("wb") as dst:
        remaining = size
        while remaining > 0:
            block = src.read(min(remaining, 1 << 20))
            if not block:
                break
            dst.write(block)
            remaining -= len(block)


def snapshot(path: Path, target: Path) -> Path:
    """A stable copy of the CSV at `path` in `target`, to read instead of the live file.

    The bytes there when the copy began are copied; when the file changed meanwhile (an
    export still appending), the copy ends at its last complete line, so that a line cut
    mid-way is never read as a short row. A file that is not growing is copied whole.
    """
    before = os.stat(path)
    _copy_prefix(path, target, before.st_size)
    after = os.stat(path)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        with target.open("rb+") as fh:
            data_end = target.stat().st_size
            keep = _last_newline(fh, data_end)
            fh.truncate(keep)
    else:
        shutil.copystat(path, target)
    return target


def _last_newline(fh: io.BufferedRandom, end: int) -> int:
    """The offset just past the last newline before `end` (0 when there is none)."""
    position = end
    while position > 0:
        start = max(0, position - (1 << 16))
        fh.seek(start)
        block = fh.read(position - start)
        at = block.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        position = start
    return 0


def book_ids(settings: Settings, name: str, field: str) -> list[str]:
    """The distinct values of `field` in books input `name`, in the books' order (none when
    that input is not configured), e.g. the invoice ids the merchant expects."""
    ids: dict[str, None] = {}
    for source in resolve_sources(settings):
        if source.input != name:
            continue
        for _, table in read_source(source):
            for value in table.column(field).to_pylist():
                if value is not None and value.strip():
                    ids[value.strip()] = None
    return list(ids)


#: Rows of a CSV books file read, shaped and landed at a time: a million-row file read
#: whole held ~0.5 GB beside the night's DuckDB (issue 38).
CSV_BATCH_ROWS = 100_000
_CSV = (
    "SELECT * FROM read_csv($path, header = true, all_varchar = true, delim = $delim, "
    "store_rejects = true)"
)


def _read_csv_parts(source: BooksSource, path: Path, where: str) -> Iterator[tuple[str, pa.Table]]:
    """Every row of a CSV file as text, `CSV_BATCH_ROWS` at a time, each on the line a
    spreadsheet shows; then the lines that are no row of the table (more or fewer fields
    than the header: an unquoted "12,50", a line cut short) with DuckDB's reason, as refused
    rows: one bad line loses nothing else. The file is read twice, each time a batch at a
    time within DuckDB's memory limit: first for those lines (the rows' line numbers skip
    them), then for the rows."""
    from recon.warehouse.memory import configured_memory_limit, duckdb_config

    config: dict[str, str | bool | int | float | list[str]] = dict(
        duckdb_config(configured_memory_limit(), read_only=True)  # a reader: 64 MiB on "auto"
    )
    con = duckdb.connect(config=config)
    params = {"path": str(path), "delim": source.mapping.delimiter}
    try:
        for _ in con.sql(_CSV, params=params).to_arrow_reader(CSV_BATCH_ROWS):
            pass  # DuckDB notes the lines that are no row (reject_errors)
        unread = {
            int(line): str(why)
            for line, why in con.execute(
                "SELECT line, min(CASE WHEN error_type = 'INVALID ENCODING' THEN "
                "'this line is not UTF-8 (the rest of the file is read; save the books as "
                "UTF-8)' ELSE error_message END) FROM reject_errors GROUP BY line"
            ).fetchall()
        }
        reader = con.sql(_CSV, params=params).to_arrow_reader(CSV_BATCH_ROWS)
        line, checked = 2, False  # the header is line 1
        for batch in reader:
            frame = pl.from_arrow(pa.Table.from_batches([batch], schema=reader.schema))
            assert isinstance(frame, pl.DataFrame)
            if not checked:
                _require(source, where, list(frame.columns))
                checked = True
            lines = []
            for _ in range(frame.height):
                while line in unread:
                    line += 1
                lines.append(line)
                line += 1
            yield where, _shape(source, frame, lines=lines)
        if not checked:  # no row at all: the header still has to name the columns
            _require(source, where, list(reader.schema.names))
            empty = pl.from_arrow(reader.schema.empty_table())
            assert isinstance(empty, pl.DataFrame)
            yield where, _shape(source, empty, first_row=2)
        if unread:
            yield where, _refused(source, unread)
    finally:
        con.close()


def unread_sheets(source: BooksSource) -> list[str]:
    """The sheets of `source`'s workbooks that were not read, as `file[sheet]`: with no
    `sheet` setting every sheet but the first; with `sheet = "*"` those without the input's
    columns. Named in the run's log, the report's inputs and summary.json."""
    out: list[str] = []
    for path in source.files:
        if path.suffix.lower() != ".xlsx" or source.mapping.sheet not in (None, "*"):
            continue
        names = _workbook_sheets(source, path)
        if source.mapping.sheet == "*":
            read = set(_sheets_with_header(source, path))
            out += [f"{path.name}[{n}]" for n in names if n not in read]
        else:
            out += [f"{path.name}[{n}]" for n in names[1:]]
    return out


def _workbook_sheets(source: BooksSource, path: Path) -> list[str]:
    import fastexcel

    try:
        return list(fastexcel.read_excel(path).sheet_names)
    except Exception as exc:  # fastexcel's errors have no common base
        raise ConfigError(source.setting, f"cannot read {path}: {_first_line(exc)}") from None


def _sheets_with_header(source: BooksSource, path: Path) -> list[str]:
    """`sheet = "*"`: the sheets whose header has the input's columns (at least one)."""
    found: list[str] = []
    first: ConfigError | None = None
    for name in _workbook_sheets(source, path):
        try:
            columns = list(_read_xlsx(source, path, header_only=True, sheet=name).columns)
            _require(source, f"{path}[{name}]", columns)
        except (ConfigError, pl.exceptions.PolarsError, ValueError) as exc:
            if first is None:
                first = (
                    exc
                    if isinstance(exc, ConfigError)
                    else ConfigError(source.setting, f"cannot read {path}[{name}]: {exc}")
                )
            continue
        found.append(name)
    if not found:
        raise first or ConfigError(source.setting, f"{path} has no sheet")
    return found


def _read_xlsx(
    source: BooksSource, path: Path, *, header_only: bool = False, sheet: str | None = None
) -> pl.DataFrame:
    options: dict[str, Any] = {"n_rows": 0} if header_only else {}
    sheet = sheet or (source.mapping.sheet if source.mapping.sheet != "*" else None)
    frame = pl.read_excel(
        path,
        engine="calamine",
        sheet_name=sheet,
        sheet_id=None if sheet else 1,
        infer_schema_length=0,  # as text: a number cell reads as its shortest decimal
        read_options=options,
    )
    assert isinstance(frame, pl.DataFrame)
    return frame


def _shape(
    source: BooksSource,
    frame: pl.DataFrame,
    *,
    first_row: int = 1,
    lines: list[int] | None = None,
) -> pa.Table:
    """The mapped fields as text, `_row` (the row a spreadsheet shows: `lines`, else from
    `first_row` on) and `_unread` (NULL: every row here was read)."""
    mapping = source.mapping
    columns = []
    for field in mapping.FIELDS:
        column = mapping.column_of(field)
        if column in frame.columns:
            columns.append(pl.col(column).cast(pl.String).alias(field))
        else:
            columns.append(pl.lit(None, dtype=pl.String).alias(field))
    if lines is not None:
        rows: pl.Series | pl.Expr = pl.Series("_row", lines, dtype=pl.Int64)
    else:
        rows = pl.int_range(first_row, first_row + frame.height, dtype=pl.Int64).alias("_row")
    shaped = frame.select(rows, *columns, pl.lit(None, dtype=pl.String).alias("_unread"))
    return shaped.to_arrow()


def _refused(source: BooksSource, unread: dict[int, str]) -> pa.Table:
    """The lines that could not be read as a row, refused with that reason (`_unread`)."""
    refused = pl.DataFrame(
        {
            "_row": pl.Series(sorted(unread), dtype=pl.Int64),
            **{f: pl.Series([None] * len(unread), dtype=pl.String) for f in source.mapping.FIELDS},
            "_unread": [f"line not read as a row: {unread[line]}" for line in sorted(unread)],
        }
    )
    return refused.to_arrow()


# -- PostgreSQL, through ADBC (libpq) -------------------------------------------------------


def _connect(source: BooksSource) -> Any:
    import adbc_driver_postgresql.dbapi as pg  # only when a query is set

    assert source.url is not None
    url = source.url.get_secret_value()
    try:
        return pg.connect(url)
    except Exception as exc:  # the driver's errors vary; none may leak the URL
        raise ConfigError(
            source.setting, f"cannot connect to {redact_url(url)}: {_scrub(exc, source)}"
        ) from None


def _fetch(source: BooksSource, sql: str) -> pa.Table:
    con = _connect(source)
    try:
        cur = con.cursor()
        try:
            cur.execute(sql)
            return _plain(cur.fetch_arrow_table())
        finally:
            cur.close()
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(source.setting, f"failed: {_scrub(exc, source)}") from None
    finally:
        con.close()


def _plain(table: pa.Table) -> pa.Table:
    """Extension columns (PostgreSQL's NUMERIC comes as an opaque type over its exact text)
    as their storage, which polars reads."""
    columns = []
    for column in table.columns:
        if isinstance(column.type, pa.ExtensionType) or hasattr(column.type, "storage_type"):
            column = pa.chunked_array([c.storage for c in column.chunks], column.type.storage_type)
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _query_columns(source: BooksSource) -> list[str]:
    assert source.query is not None
    # The query is the merchant's own (their config, like a check file); nothing is bound.
    wrapped = f"SELECT * FROM ({source.query.strip().rstrip(';')}) AS recon_books LIMIT 0"  # noqa: S608
    return list(_fetch(source, wrapped).column_names)


def _query_frame(source: BooksSource) -> pl.DataFrame:
    assert source.query is not None
    frame = pl.from_arrow(_fetch(source, source.query.strip().rstrip(";")))
    assert isinstance(frame, pl.DataFrame)
    _require(source, source.describe(), list(frame.columns))
    return frame


def _scrub(exc: BaseException, source: BooksSource) -> str:
    """The driver's message, first line, with the URL and its password masked."""
    text = _first_line(exc)
    if source.url is not None:
        url = source.url.get_secret_value()
        text = text.replace(url, redact_url(url))
        password = urlsplit(url).password
        if password:
            text = text.replace(password, "***")
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
