"""Writing the sandbox's books as CSV, Parquet and .xlsx files (default column names)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from recon.sandbox.data import Dataset
from recon.sandbox.ledger.books import make_books
from recon.sandbox.ledger.model import (
    INVOICE_COLUMNS,
    ORDER_COLUMNS,
    REFUND_COLUMNS,
    SETTLED,
    Books,
    Row,
)
from recon.sandbox.life import live_books

__all__ = ["FORMATS", "describe_books", "sandbox_books", "sandbox_ledger", "write_books"]

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


def sandbox_books(
    dataset: Dataset, folder: Path, fmt: str = "csv", *, day: int = 0
) -> dict[str, str]:
    """Write the books of `dataset` (on sandbox `day`: recon.sandbox.life) under `folder` as
    `fmt`; the `ledger_*` settings that point recon at them (what `recon nightly --sandbox`
    adds to its overrides)."""
    books = make_books(dataset)
    if day:
        live_books(dataset, day, books, _settled_by_reference(dataset))
    written = write_books(books, folder, formats=(fmt,))
    return {f"ledger_{name}": str(paths[0]) for name, paths in written.items()}


def describe_books(
    seed: int,
    payments: int,
    anchor: datetime | None,
    out: Path,
    formats: list[str],
    *,
    day: int = 0,
) -> list[str]:
    """`recon sandbox ledger`: write the books (of sandbox `day`) and say what was written
    and planted."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or not formats:
        raise ValueError(f"unknown format(s) {', '.join(unknown)}; use {', '.join(FORMATS)}")
    dataset = Dataset(seed, payments, anchor)
    books = make_books(dataset)
    if day:
        live_books(dataset, day, books, _settled_by_reference(dataset))
    written = write_books(books, out, formats)
    lines = [
        f"{name}: {len(getattr(books, name)):,} rows -> {', '.join(str(p) for p in paths)}"
        for name, paths in written.items()
    ]
    kinds = Counter(p.kind for p in books.planted)
    lines.append("planted findings: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    cases = Counter(c["case"] for c in books.cases)
    lines.append(
        "matching cases (ledger.cases of the truth): "
        + ", ".join(f"{k} {n}" for k, n in sorted(cases.items()))
    )
    lines.append(
        f"malformed rows (to be refused): orders {books.rejects['orders']}, "
        f"refunds {books.rejects['refunds']}; the full truth: "
        f"recon sandbox truth --seed {seed} --payments {payments}"
    )
    return lines


def _settled_by_reference(dataset: Dataset) -> Callable[[str], int | None]:
    """reference -> what the provider settled for it (the amount a fixed order carries)."""
    sums: dict[str, int] | None = None

    def amount(reference: str) -> int | None:
        nonlocal sums
        if sums is None:
            sums = {}
            for i in range(dataset.n):
                p = dataset.payment(i)
                value = p.get("amountMinor")
                ref = p.get("reference")
                if p.get("status") in SETTLED and isinstance(value, int) and isinstance(ref, str):
                    sums[ref] = sums.get(ref, 0) + value
        found = sums.get(reference)
        return found if found is not None and found > 0 else None

    return amount


def sandbox_ledger(seed: int, payments: int, folder: Path, day: int = 0) -> dict[str, Any]:
    """The demo's books: write the books of the sandbox `recon nightly --sandbox` starts
    (same seed and size, today's anchor, its `day`) under `folder/sandbox-books`; the
    overrides that point the run at them (default layout: a recon.toml mapping does not
    apply)."""
    paths = sandbox_books(Dataset(seed, payments), folder / "sandbox-books", day=day)
    return {**paths, "ledger": {}}
