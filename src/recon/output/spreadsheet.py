"""Spreadsheet-safe tabular files, written atomically.

Shared by the reports (`recon.report`) and `recon export`.

Formula injection: a spreadsheet treats a cell that begins with ``=``, ``+``, ``-``, ``@``,
tab, CR or LF as a formula (or strips the control character and then does), also after
leading spaces (`` =1+1``) and in the fullwidth forms (U+FF1D, U+FF0B, U+FF0D, U+FF20).
Every *text* cell that starts with one of those is prefixed with ``'`` and written quoted.
Numeric
columns are never touched: a refund of -12.50 stays the number -12.50.

Timestamps: written in UTC as ``2026-11-21 02:00:00`` (ISO 8601 date and time, the
RFC 3339 space separator, to the second: Parquet keeps the fraction), which Excel and
LibreOffice open as date-times; a zone offset such as ``+0000`` makes them text.

Dialects: ``excel`` (comma-separated, decimal point) and ``excel-eu`` (semicolon-separated,
decimal comma: what Excel expects in most of Europe), `RECON_CSV_DIALECT` /
``--csv-dialect``. A CSV *file* of either dialect begins with a UTF-8 byte-order mark: without
it Excel opens a double-clicked file as the local code page and garbles ``Müller €5``. A CSV
sent to a pipe (`recon query`) has none.

Money: a file's every ``<x>_minor`` column with a currency column beside it
(`money_columns`) gets ``<x>`` in currency units right after it, with that row's
currency's own decimals (``552.33``, JPY ``59631``, BHD ``1.234``; decimal comma in
``excel-eu``), exactly, from the integer; a ``<x>`` the source already has (the
``*_major`` views' DECIMAL(38,4) ``552.3300``) is written the same way. A currency that
cannot be scaled (not ISO 4217, no minor unit) leaves the cell empty: its minor units stand
beside it.

Atomic writes: `recon.output.atomic` (one helper for every writer), re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import IO, Literal

import orjson
import polars as pl
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

from recon.money.currency import currency_exponent, is_iso4217
from recon.output.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from recon.output.visible import visible_array

__all__ = [
    "BOM",
    "CSV_DATETIME_FORMAT",
    "CSV_DIALECTS",
    "FORMULA_PREFIXES",
    "CsvDialect",
    "as_text",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "csv_native",
    "major_text",
    "money_columns",
    "neutralise",
    "neutralise_table",
    "unique_names",
    "unique_reader",
    "write_csv",
    "write_csv_batches",
    "write_csv_stream",
    "write_parquet",
    "write_parquet_batches",
]

# The characters that make a spreadsheet cell a formula (docs/facts.md, "Security and retries"),
# also after leading blanks (` =1+1`: spreadsheets trim them) and in their fullwidth forms
# (U+FF1D FULLWIDTH EQUALS SIGN: some spreadsheets fold it to `=`).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n")
_FULLWIDTH = "\uff1d\uff0b\uff0d\uff20"  # fullwidth = + - @
_FORMULA_PYTHON = re.compile(f"^(?:[\t\r\n]|[ \u00a0\u3000]*[=+\\-@{_FULLWIDTH}])")
_FORMULA_REGEX = r"^(?:[\t\r\n]|[ \x{a0}\x{3000}]*[=+\-@\x{ff1d}\x{ff0b}\x{ff0d}\x{ff20}])"
BOM = b"\xef\xbb\xbf"
CSV_DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
CsvDialect = Literal["excel", "excel-eu"]
#: dialect -> (field separator, decimal comma)
CSV_DIALECTS: dict[str, tuple[str, bool]] = {"excel": (",", False), "excel-eu": (";", True)}


def money_columns(names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """`<x>_minor` column -> (`<x>`, its currency column), for the columns in `names`.

    The currency column is `<prefix>_currency` (`books_amount_minor` -> `books_currency`)
    when there is one, else `currency`.
    """
    found: dict[str, tuple[str, str]] = {}
    present = set(names)
    for name in names:
        if not name.endswith("_minor") or name == "_minor":
            continue
        parts = name.removesuffix("_minor").split("_")
        candidates = [f"{'_'.join(parts[:i])}_currency" for i in range(len(parts) - 1, 0, -1)]
        currency = next((c for c in [*candidates, "currency"] if c in present), None)
        if currency is not None:
            found[name] = (name.removesuffix("_minor"), currency)
    return found


def major_text(minor: object, currency: object, *, decimal_comma: bool = False) -> str | None:
    """`minor` in `currency`'s units as plain text with its own decimals, exactly.

    >>> major_text(55233, "EUR"), major_text(59631, "JPY"), major_text(-1234, "BHD")
    ('552.33', '59631', '-1.234')

    None when it cannot be scaled (no amount, a currency that is not ISO 4217 or has no
    minor unit).
    """
    if minor is None or isinstance(minor, bool) or not isinstance(currency, str):
        return None
    if not is_iso4217(currency):
        return None
    exponent = currency_exponent(currency)
    if exponent is None:
        return None
    value = int(minor)  # type: ignore[call-overload]
    sign = "-" if value < 0 else ""
    whole, cents = divmod(abs(value), 10**exponent)
    if exponent == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}{',' if decimal_comma else '.'}{cents:0{exponent}d}"


def _with_major_units(table: pa.Table, *, decimal_comma: bool) -> tuple[pa.Table, set[str]]:
    """`table` with `<x>` in currency units as text beside every money column `<x>_minor`
    (replacing a `<x>` it has); the names of those columns."""
    money = money_columns(table.column_names)
    if not money:
        return table, set()
    names = list(table.column_names)
    columns: dict[str, pa.Array | pa.ChunkedArray] = dict(zip(names, table.columns, strict=True))
    written: set[str] = set()
    for minor, (major, currency) in money.items():
        if not pa.types.is_integer(table.schema.field(minor).type):
            continue
        if major in columns and not pa.types.is_decimal(table.schema.field(major).type):
            continue  # a column of another kind that merely shares the name: left alone
        values = [
            major_text(m, c, decimal_comma=decimal_comma)
            for m, c in zip(columns[minor].to_pylist(), columns[currency].to_pylist(), strict=True)
        ]
        columns[major] = pa.array(values, type=pa.string())
        if major not in names:
            names.insert(names.index(minor) + 1, major)
        written.add(major)
    return pa.Table.from_arrays([columns[n] for n in names], names=names), written


def unique_names(names: list[str]) -> list[str]:
    """`names` with a name that comes again renamed `<name>_2`, `<name>_3`… (never one the
    list already has): CSV, JSON and every frame library need each column named once.

    >>> unique_names(["id", "id", "x", "id_2", "x"])
    ['id', 'id_3', 'x', 'id_2', 'x_2']
    """
    taken = set(names)
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append(name)
            continue
        n = 2
        while f"{name}_{n}" in taken:
            n += 1
        renamed = f"{name}_{n}"
        taken.add(renamed)
        seen.add(renamed)
        out.append(renamed)
    return out


def unique_reader(reader: pa.RecordBatchReader) -> pa.RecordBatchReader:
    """`reader` with its columns named once each (`unique_names`)."""
    names = list(reader.schema.names)
    renamed = unique_names(names)
    if renamed == names:
        return reader
    schema = pa.schema([f.with_name(n) for f, n in zip(reader.schema, renamed, strict=True)])
    return pa.RecordBatchReader.from_batches(
        schema, (pa.RecordBatch.from_arrays(b.columns, schema=schema) for b in reader)
    )


def neutralise(value: str) -> str:
    """Return `value` prefixed with ``'`` when a spreadsheet would read it as a formula."""
    if _FORMULA_PYTHON.match(value):
        return "'" + value
    return value


def _neutralise_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    if arr.type == pa.large_string():
        arr = pc.cast(arr, pa.string())
    hit = pc.match_substring_regex(arr, _FORMULA_REGEX)
    prefixed = pc.binary_join_element_wise(pa.scalar("'"), arr, "")
    return pc.if_else(hit, prefixed, arr)


def _cell_text(value: object) -> str:
    """One nested or binary value as text for a CSV cell."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, pa.MonthDayNano):  # an interval, as ISO 8601: P1M2DT3.5S
        months, days, nanos = value
        return f"P{months}M{days}DT{Decimal(nanos).scaleb(-9).normalize():f}S"
    if isinstance(value, list) and all(
        isinstance(v, str | int | float | bool) or v is None for v in value
    ):
        # request ids and similar lists read best as words separated by spaces
        return " ".join("" if v is None else str(v) for v in value)
    if isinstance(value, list | dict | tuple):
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    return str(value)


def as_text(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column polars cannot write to CSV (lists, structs, maps, binary, intervals…) as text."""
    return pa.array(
        [None if v is None else _cell_text(v) for v in arr.to_pylist()], type=pa.string()
    )


def csv_native(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_decimal(t)
        or pa.types.is_timestamp(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_duration(t)
        or pa.types.is_null(t)
    )


def neutralise_table(
    table: pa.Table, *, numbers: frozenset[str] | set[str] = frozenset()
) -> pa.Table:
    """Neutralise every text column of `table`.

    Nested, binary and other columns a CSV cannot hold are turned into text first (lists of
    scalars as space-separated words, structs and maps as JSON, bytes as hex) and then
    neutralised too. Numeric, boolean and temporal columns are returned unchanged, and so
    are `numbers`: text columns recon wrote itself as numbers (`-12.50` stays a number).
    """
    columns: list[pa.Array | pa.ChunkedArray] = []
    for field, column in zip(table.schema, table.columns, strict=True):
        col: pa.Array | pa.ChunkedArray = column
        t = field.type
        if field.name in numbers:
            columns.append(col)
            continue
        if pa.types.is_dictionary(t):
            col = pc.cast(col, pa.string())
        elif not (pa.types.is_string(t) or pa.types.is_large_string(t) or csv_native(t)):
            col = as_text(col)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = _neutralise_array(visible_array(col))  # a NUL, BEL or RLO shown, not obeyed
        columns.append(col)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _csv_frame(table: pa.Table) -> pl.DataFrame:
    """`table` (already neutralised) as a polars frame whose zoned timestamps are UTC wall
    times, so that they are written without an offset (Excel reads them as date-times)."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    zoned = [
        name
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None
    ]
    if zoned:
        frame = frame.with_columns(
            pl.col(zoned).dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        )
    return frame


def _write_frame(
    frame: pl.DataFrame, fh: IO[bytes], *, header: bool, dialect: CsvDialect = "excel"
) -> None:
    separator, decimal_comma = CSV_DIALECTS[dialect]
    frame.write_csv(
        fh,
        include_header=header,
        quote_style="non_numeric",
        datetime_format=CSV_DATETIME_FORMAT,
        separator=separator,
        decimal_comma=decimal_comma,
    )


def _safe(table: pa.Table, dialect: CsvDialect, major_units: bool) -> pa.Table:
    numbers: set[str] = set()
    if major_units:
        table, numbers = _with_major_units(table, decimal_comma=CSV_DIALECTS[dialect][1])
    return neutralise_table(table, numbers=numbers)


def write_csv(
    table: pa.Table, target: Path, *, dialect: CsvDialect = "excel", major_units: bool = True
) -> int:
    """Write `table` as spreadsheet-safe CSV (UTF-8 with a BOM, header row) to `target`;
    return rows.

    Text cells that would start a formula get a ``'`` prefix; every text cell is quoted,
    numbers are not; NULL is an empty unquoted cell. With `major_units`, every money column
    `<x>_minor` has `<x>` in currency units beside it (module docstring).
    """
    safe = _safe(table, dialect, major_units)
    frame = _csv_frame(safe)
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        fh.write(BOM)
        _write_frame(frame, fh, header=True, dialect=dialect)
    return int(safe.num_rows)


def write_csv_stream(
    reader: pa.RecordBatchReader,
    fh: IO[bytes],
    *,
    dialect: CsvDialect = "excel",
    major_units: bool = False,
) -> int:
    """Stream `reader` as spreadsheet-safe CSV into the open binary `fh`; return rows.

    Same cell rules as `write_csv` (no BOM: `fh` may be a pipe); memory stays bounded by
    one batch.
    """
    rows = 0
    header = True
    for batch in reader:
        safe = _safe(pa.Table.from_batches([batch]), dialect, major_units)
        _write_frame(_csv_frame(safe), fh, header=header, dialect=dialect)
        header = False
        rows += int(safe.num_rows)
    if header:  # no batch at all: still write the header row
        empty = _csv_frame(_safe(reader.schema.empty_table(), dialect, major_units))
        _write_frame(empty, fh, header=True, dialect=dialect)
    return rows


def write_csv_batches(
    reader: pa.RecordBatchReader,
    target: Path,
    *,
    dialect: CsvDialect = "excel",
    major_units: bool = True,
) -> int:
    """Stream `reader` into a spreadsheet-safe CSV at `target` (atomically, UTF-8 with a
    BOM); return rows."""
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        fh.write(BOM)
        return write_csv_stream(reader, fh, dialect=dialect, major_units=major_units)


def _parquet_safe(table: pa.Table) -> pa.Table:
    """Intervals have no Parquet type in pyarrow: they are written as text."""
    columns = [
        as_text(col) if pa.types.is_interval(field.type) else col
        for field, col in zip(table.schema, table.columns, strict=True)
    ]
    return pa.Table.from_arrays(columns, names=table.column_names)


def write_parquet_batches(reader: pa.RecordBatchReader, target: Path) -> int:
    """Stream `reader` into a Parquet file (zstd) at `target` (atomically); return rows."""
    rows = 0
    schema = _parquet_safe(reader.schema.empty_table()).schema
    with (
        atomic_path(target) as tmp,
        pq.ParquetWriter(tmp, schema, compression="zstd") as writer,
    ):
        for batch in reader:
            writer.write_table(_parquet_safe(pa.Table.from_batches([batch])))
            rows += int(batch.num_rows)
    return rows


def write_parquet(table: pa.Table, target: Path) -> int:
    """Write `table` as Parquet (zstd) to `target` atomically; return rows."""
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return int(table.num_rows)
