"""Writing the sandbox's books as CSV, Parquet and .xlsx files (default column names)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from recon.sandbox.data import Dataset
from recon.sandbox.ledger.books import make_books
from recon.sandbox.ledger.model import INVOICE_COLUMNS, ORDER_COLUMNS, REFUND_COLUMNS, Books, Row

__all__ = ["FORMATS", "sandbox_books", "write_books"]

FORMATS = ("csv", "parquet", "xlsx")


def _frame(rows: Iterable[Row], columns: tuple[str, ...]) -> pl.DataFrame:
    data = {c: [None if r.get(c) is None else str(r[c]) for r in rows] for c in columns}
    return pl.DataFrame(data, schema=dict.fromkeys(columns, pl.String))


def write_books(books: Books, out: Path, formats: Iterable[str] = FORMATS) -> dict[str, list[Path]]:
    """Write orders/refunds/invoices.<format> under `out`; the paths per table."""
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        "orders": _frame(books.orders, ORDER_COLUMNS),
        "refunds": _frame(books.refunds, REFUND_COLUMNS),
        "invoices": _frame(books.invoices, INVOICE_COLUMNS),
    }
    written: dict[str, list[Path]] = {name: [] for name in tables}
    for name, frame in tables.items():
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            tmp = path.with_name(f".{path.name}.tmp")
            if fmt == "csv":
                frame.write_csv(tmp)
            elif fmt == "parquet":
                frame.write_parquet(tmp)
            elif fmt == "xlsx":  # amounts as number cells, as a spreadsheet holds them
                numbers = frame.with_columns(pl.col("amount_minor").cast(pl.Float64, strict=False))
                numbers.write_excel(tmp, worksheet=name, autofit=False)
            else:
                raise ValueError(f"unknown books format {fmt!r}; use {', '.join(FORMATS)}")
            tmp.replace(path)
            written[name].append(path)
    return written


def sandbox_books(dataset: Dataset, folder: Path, fmt: str = "csv") -> dict[str, str]:
    """Write the books of `dataset` under `folder` as `fmt`; the `ledger_*` settings that
    point recon at them (what `recon nightly --sandbox` adds to its overrides)."""
    written = write_books(make_books(dataset), folder, formats=(fmt,))
    return {f"ledger_{name}": str(paths[0]) for name, paths in written.items()}
