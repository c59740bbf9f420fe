"""Excel workbooks for finance: typed cells, money in major units, never a formula.

Each sheet is written a row at a time (xlsxwriter's constant memory mode): the header row
in bold and frozen, an autofilter on every column, typed cells (numbers, dates, date-times,
booleans), from Arrow record batches, so that a sheet of a million rows never sits in memory
(the close pack of a 130k-finding night held 1.4 GB in xlsxwriter's cells, issue 38). A
sheet longer than Excel's 1,048,575 rows goes on in `<name> (2)`, `<name> (3)`, … recon adds
what finance needs on top:

- **Money in major units.** Every `<x>_minor` column with a currency column beside it
  (`<prefix>_currency` for `books_amount_minor` / `provider_amount_minor`, else `currency`)
  is written as `<x>` in major units: minor units scaled by the ISO 4217 exponent of that
  row's currency (`recon.money.currency`), exactly, as a `Decimal` (never float arithmetic); the
  cell holds that number and the currency's own number format (`#,##0.00 "EUR"`,
  `#,##0 "JPY"`, `#,##0.000 "BHD"`). A currency without an exponent keeps minor units,
  formatted `#,##0 "XYZ (minor units)"`. When the source already has `<x>` (the `*_major`
  views), both are kept and `<x>` is formatted the same way.
- **Text is text.** The workbook is opened with `strings_to_formulas`, `strings_to_urls`
  and `strings_to_numbers` off, and text is written as string cells, so a cell starting
  with `= + - @` is stored as a string and never evaluated: no `'` prefix is needed (unlike
  CSV).
- Time zones: Excel has none; zoned timestamps are written as UTC wall time.
- Control characters (NUL, ESC, a right-to-left override) in text are written as escapes
  (`recon.output.visible`), as in the CSV files and the reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]
import xlsxwriter  # type: ignore[import-untyped,unused-ignore]

from recon.money.currency import currency_exponent, is_iso4217
from recon.output.atomic import atomic_path
from recon.output.spreadsheet import as_text, csv_native, money_columns
from recon.output.visible import visible_array

__all__ = [
    "MAX_ROWS",
    "WORKBOOK_OPTIONS",
    "Rows",
    "Sheet",
    "major_units",
    "money_columns",
    "number_format",
    "write_xlsx",
]

# Excel's limit is 1,048,576 rows, the header included.
MAX_ROWS = 1_048_575
WORKBOOK_OPTIONS = {
    "strings_to_formulas": False,
    "strings_to_urls": False,
    "strings_to_numbers": False,
    "nan_inf_to_errors": True,
}
_WORKBOOK_OPTIONS = WORKBOOK_OPTIONS
_BAD_SHEET_CHARS = str.maketrans(dict.fromkeys("[]:*?/\\", "_"))


class Rows(Protocol):
    """What a sheet is written from: an Arrow table, or anything that gives its schema and
    its record batches (recon.close.period's spooled tables)."""

    @property
    def schema(self) -> pa.Schema: ...

    def to_batches(self, max_chunksize: int | None = None) -> Iterable[pa.RecordBatch]: ...


@dataclass(frozen=True)
class Sheet:
    """One worksheet: its name and its rows."""

    name: str
    table: pa.Table | Rows
    formats: Mapping[str, str] | None = None  # column -> Excel number format (e.g. "0.0%")


def _exponent(currency: Any) -> int | None:
    if not isinstance(currency, str) or not is_iso4217(currency):
        return None
    return currency_exponent(currency)


def _major(minor: Any, currency: Any) -> Decimal | None:
    """Minor units in major units, exactly; still minor units when the currency cannot
    scale them (its number format then says so)."""
    if minor is None:
        return None
    exponent = _exponent(currency)
    return Decimal(int(minor)).scaleb(-exponent) if exponent is not None else Decimal(minor)


def _number_format(currency: Any) -> str:
    """`#,##0.00 "EUR"`; minor units (`#,##0 "XYZ (minor units)"`) when it cannot scale."""
    code = str(currency or "").replace('"', "")
    exponent = _exponent(currency)
    if exponent is None:
        return f'#,##0 "{code} (minor units)"' if code else "#,##0"
    digits = "." + "0" * exponent if exponent else ""
    return f'#,##0{digits} "{code}"'


def _sheet_name(name: str, used: set[str]) -> str:
    base = (name.translate(_BAD_SHEET_CHARS).strip("'") or "sheet")[:31]
    chosen, n = base, 2
    while chosen.lower() in used:
        suffix = f" ({n})"
        chosen, n = base[: 31 - len(suffix)] + suffix, n + 1
    used.add(chosen.lower())
    return chosen


def _plain(table: pa.Table) -> pa.Table:
    """Columns Excel cannot hold (lists, structs, maps, binary, intervals…) as text; zoned
    timestamps as UTC wall time; control characters in text made visible."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        t = field.type
        keep = pa.types.is_string(t) or pa.types.is_large_string(t) or csv_native(t)
        if pa.types.is_duration(t) or pa.types.is_time(t):
            keep = False
        col = column if keep else as_text(column)
        if pa.types.is_timestamp(col.type) and col.type.tz is not None:
            col = pc.cast(col, pa.timestamp(col.type.unit))  # stored as UTC: its wall time
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = visible_array(col)  # a NUL, ESC or RLO shown as an escape, not obeyed
        columns.append(col)
    return pa.Table.from_arrays(columns, names=table.column_names)


_INTEGER = "#,##0"
_FLOAT = "#,##0.000"
_DATETIME = "yyyy-mm-dd hh:mm:ss"
_DATE = "yyyy-mm-dd"
#: Rows converted to Python at a time: memory holds one batch of cells, not the sheet.
BATCH_ROWS = 10_000
_WIDEST = 60


@dataclass(frozen=True)
class _Column:
    """How one column of a sheet is written."""

    name: str  # as shown (`amount` for `amount_minor`)
    source: str  # the column read
    kind: str  # text | number | bool | datetime | money
    num_format: str | None = None
    currency: str | None = None  # money: the column with each row's currency


def _layout(schema: pa.Schema, formats: Mapping[str, str]) -> list[_Column]:
    """The columns as written: money in major units in place of `<x>_minor`."""
    names = list(schema.names)
    money = money_columns(names)
    major_of = {minor: major for minor, (major, _) in money.items() if major not in names}
    currency_of = {major: currency for _, (major, currency) in money.items()}
    out: list[_Column] = []
    for field in schema:
        name = major_of.get(field.name, field.name)
        t = field.type
        if name in currency_of:
            kind, fmt = "money", None
        elif pa.types.is_boolean(t):
            kind, fmt = "bool", None
        elif pa.types.is_integer(t):
            kind, fmt = "number", _INTEGER
        elif pa.types.is_floating(t) or pa.types.is_decimal(t):
            kind, fmt = "number", _FLOAT
        elif pa.types.is_timestamp(t):
            kind, fmt = "datetime", _DATETIME
        elif pa.types.is_date(t):
            kind, fmt = "datetime", _DATE
        else:
            kind, fmt = "text", None
        fmt = formats.get(name, fmt)
        out.append(_Column(name, field.name, kind, fmt, currency_of.get(name)))
    return out


class _SheetWriter:
    """One sheet (and its continuations past Excel's rows), written a row at a time."""

    def __init__(self, workbook: Any, sheet: Sheet, used: set[str], rows: dict[str, int]):
        self.workbook = workbook
        self.sheet = sheet
        self.used = used
        self.rows = rows
        self.part = 0
        self.header = workbook.add_format({"bold": True})
        self.formats: dict[str | None, Any] = {}
        self.money: dict[str, Any] = {}
        self.columns: list[_Column] = []
        self.ws: Any = None
        self.row = 0
        self.widths: list[int] = []

    def _format(self, num_format: str | None) -> Any:
        if num_format is None:
            return None
        if num_format not in self.formats:
            self.formats[num_format] = self.workbook.add_format({"num_format": num_format})
        return self.formats[num_format]

    def _money_format(self, currency: Any) -> Any:
        key = str(currency)
        if key not in self.money:
            self.money[key] = self.workbook.add_format({"num_format": _number_format(currency)})
        return self.money[key]

    def _open(self) -> None:
        self.part += 1
        base = self.sheet.name if self.part == 1 else f"{self.sheet.name[:25]} ({self.part})"
        self.name = _sheet_name(base, self.used)
        self.ws = self.workbook.add_worksheet(self.name)
        for col, column in enumerate(self.columns):
            self.ws.write_string(0, col, column.name, self.header)
        self.ws.freeze_panes(1, 0)
        self.row = 0

    def _end(self) -> None:
        last = max(self.row, 1)
        if self.columns:
            self.ws.autofilter(0, 0, last, len(self.columns) - 1)
        for col, width in enumerate(self.widths):
            self.ws.set_column(col, col, min(max(width, 6) + 2, _WIDEST))
        self.rows[self.name] = self.row

    def write(self, source: Rows) -> None:
        formats = dict(self.sheet.formats or {})
        self.columns = _layout(_plain(source.schema.empty_table()).schema, formats)
        self.widths = [len(c.name) for c in self.columns]
        self._open()
        sized = False
        for batch in source.to_batches(max_chunksize=BATCH_ROWS):
            if batch.num_rows:
                self._batch(_plain(pa.Table.from_batches([batch])), measure=not sized)
                sized = True
        self._end()

    def _batch(self, table: pa.Table, *, measure: bool) -> None:
        values = [table.column(c.source).to_pylist() for c in self.columns]
        currencies = {
            c.currency: table.column(c.currency).to_pylist()
            for c in self.columns
            if c.kind == "money" and c.currency
        }
        if measure:  # the first batch sizes the columns (autofit needs the whole sheet)
            for col, column in enumerate(values):
                longest = max((len(str(v)) for v in column[:1000] if v is not None), default=0)
                self.widths[col] = max(self.widths[col], longest)
        cells = [self._format(c.num_format) for c in self.columns]
        ws = self.ws
        for i in range(table.num_rows):
            if self.row >= MAX_ROWS:
                self._end()
                self._open()
                ws = self.ws
            self.row += 1
            row = self.row
            for col, column in enumerate(self.columns):
                value = values[col][i]
                if value is None:
                    continue
                kind = column.kind
                if kind == "text":
                    ws.write_string(row, col, value, cells[col])
                elif kind == "number":
                    ws.write_number(row, col, float(value), cells[col])
                elif kind == "money":
                    currency = currencies[column.currency][i] if column.currency else None
                    # minor units scaled exactly (a Decimal), unless the source is in major
                    # units already; the one conversion to binary floating point is the cell
                    # itself (xlsx numbers are IEEE doubles)
                    amount = _major(value, currency) if column.source != column.name else value
                    if amount is not None:
                        ws.write_number(row, col, float(amount), self._money_format(currency))
                elif kind == "datetime":
                    ws.write_datetime(row, col, value, cells[col])
                else:
                    ws.write_boolean(row, col, value, cells[col])


def write_xlsx(sheets: Sequence[Sheet], target: Path) -> dict[str, int]:
    """Write `sheets` to an .xlsx workbook at `target` (atomically), each a row at a time
    from its record batches; rows per sheet name (a sheet past Excel's rows continues on
    `<name> (2)`, counted apart)."""
    rows: dict[str, int] = {}
    used: set[str] = set()
    with atomic_path(target) as tmp:
        workbook = xlsxwriter.Workbook(str(tmp), {**_WORKBOOK_OPTIONS, "constant_memory": True})
        try:
            for sheet in sheets:
                _SheetWriter(workbook, sheet, used, rows).write(sheet.table)
        finally:
            workbook.close()
    return rows


def major_units(minor: int | None, currency: str | None) -> Decimal | None:
    """Minor units in the currency's major units, exactly (minor units if it cannot scale)."""
    return _major(minor, currency)


def number_format(currency: str | None) -> str:
    """The Excel number format of an amount in `currency` (`#,##0.00 "EUR"`)."""
    return _number_format(currency)
