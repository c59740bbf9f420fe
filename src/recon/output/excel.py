"""Excel workbooks for finance: typed cells, money in major units, never a formula.

polars' `write_excel` (xlsxwriter) writes each frame as a worksheet table: typed cells
(numbers, dates, date-times, booleans), the header row frozen, an autofilter on every
column. recon adds what finance needs on top:

- **Money in major units.** Every `<x>_minor` column with a currency column beside it
  (`<prefix>_currency` for `books_amount_minor` / `provider_amount_minor`, else `currency`)
  is written as `<x>` in major units: minor units scaled by the ISO 4217 exponent of that
  row's currency (`recon.money.currency`), exactly, as a `Decimal` (never float arithmetic); the
  cell holds that number and the currency's own number format (`#,##0.00 "EUR"`,
  `#,##0 "JPY"`, `#,##0.000 "BHD"`). A currency without an exponent keeps minor units,
  formatted `#,##0 "XYZ (minor units)"`. When the source already has `<x>` (the `*_major`
  views), both are kept and `<x>` is formatted the same way.
- **Text is text.** The workbook is opened with `strings_to_formulas`, `strings_to_urls`
  and `strings_to_numbers` off, so a cell starting with `= + - @` is stored as a string
  cell and never evaluated: no `'` prefix is needed (unlike CSV).
- Time zones: Excel has none; zoned timestamps are written as UTC wall time.
- Control characters (NUL, ESC, a right-to-left override) in text are written as escapes
  (`recon.output.visible`), as in the CSV files and the reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import xlsxwriter  # type: ignore[import-untyped,unused-ignore]

from recon.money.currency import currency_exponent, is_iso4217
from recon.output.atomic import atomic_path
from recon.output.spreadsheet import as_text, csv_native, money_columns
from recon.output.visible import visible_array

__all__ = [
    "MAX_ROWS",
    "WORKBOOK_OPTIONS",
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


@dataclass(frozen=True)
class Sheet:
    """One worksheet: its name and its rows."""

    name: str
    table: pa.Table
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


def _frame(table: pa.Table) -> tuple[pl.DataFrame, dict[str, str]]:
    """The sheet's frame (money in major units) and money column -> its currency column."""
    frame = pl.from_arrow(_plain(table))
    assert isinstance(frame, pl.DataFrame)
    money = money_columns(frame.columns)
    formatted: dict[str, str] = {}
    for minor, (major, currency) in money.items():
        if major not in frame.columns:
            values = [
                _major(m, c)
                for m, c in zip(frame[minor].to_list(), frame[currency].to_list(), strict=True)
            ]
            scaled = pl.Series(major, values, dtype=pl.Decimal(38, 4))
            frame = frame.with_columns(scaled.alias(minor)).rename({minor: major})
        formatted[major] = currency
    zoned = [
        n for n, t in frame.schema.items() if isinstance(t, pl.Datetime) and t.time_zone is not None
    ]
    if zoned:
        frame = frame.with_columns(
            pl.col(zoned).dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        )
    return frame, formatted


def _plain(table: pa.Table) -> pa.Table:
    """Columns Excel cannot hold (lists, structs, maps, binary, intervals…) as text."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        t = field.type
        keep = pa.types.is_string(t) or pa.types.is_large_string(t) or csv_native(t)
        if pa.types.is_duration(t):
            keep = False
        col = column if keep else as_text(column)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = visible_array(col)  # a NUL, ESC or RLO shown as an escape, not obeyed
        columns.append(col)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _write_money(
    workbook: Any, worksheet: Any, frame: pl.DataFrame, formatted: dict[str, str]
) -> None:
    """Each money cell again, with its own currency's number format (per row)."""
    formats: dict[str, Any] = {}
    for major, currency_col in formatted.items():
        col = frame.columns.index(major)
        for row, (value, currency) in enumerate(
            zip(frame[major].to_list(), frame[currency_col].to_list(), strict=True), start=1
        ):
            if value is None:
                continue
            key = str(currency)
            if key not in formats:
                formats[key] = workbook.add_format({"num_format": _number_format(currency)})
            # The one conversion to binary floating point: the cell itself (xlsx numbers
            # are IEEE doubles), from the exact Decimal.
            worksheet.write_number(row, col, float(value), formats[key])


def write_xlsx(sheets: Sequence[Sheet], target: Path) -> dict[str, int]:
    """Write `sheets` to an .xlsx workbook at `target` (atomically); rows per sheet name."""
    rows: dict[str, int] = {}
    used: set[str] = set()
    with atomic_path(target) as tmp:
        workbook = xlsxwriter.Workbook(str(tmp), _WORKBOOK_OPTIONS)
        try:
            for sheet in sheets:
                if sheet.table.num_rows > MAX_ROWS:
                    raise ValueError(
                        f"{sheet.name} has {sheet.table.num_rows:,} rows; an Excel sheet holds "
                        f"{MAX_ROWS:,}: filter it, or export Parquet"
                    )
                name = _sheet_name(sheet.name, used)
                frame, formatted = _frame(sheet.table)
                formats: dict[Any, Any] = dict(sheet.formats or {})
                frame.write_excel(
                    workbook,
                    worksheet=name,
                    autofilter=True,
                    autofit=frame.height <= 10_000,
                    freeze_panes=(1, 0),
                    float_precision=3,
                    column_formats=formats,
                    dtype_formats={
                        pl.Datetime: "yyyy-mm-dd hh:mm:ss",
                        pl.Date: "yyyy-mm-dd",
                    },
                )
                _write_money(workbook, workbook.get_worksheet_by_name(name), frame, formatted)
                rows[name] = frame.height
        finally:
            workbook.close()
    return rows


def major_units(minor: int | None, currency: str | None) -> Decimal | None:
    """Minor units in the currency's major units, exactly (minor units if it cannot scale)."""
    return _major(minor, currency)


def number_format(currency: str | None) -> str:
    """The Excel number format of an amount in `currency` (`#,##0.00 "EUR"`)."""
    return _number_format(currency)
