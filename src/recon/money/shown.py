"""Money shown to people: always through `recon.money.currency.format_minor`.

Amounts stay integers in minor units everywhere; this module only turns one amount in one
currency into text (``EUR 12.50``, ``JPY 900``, ``BHD 12.345``). A code that is not ISO 4217
(planted bad data such as ``XYZ``) cannot be scaled: `format_minor` shows it in minor units
and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal

import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.money.currency import currency_exponent, format_minor, is_iso4217

__all__ = [
    "format_amount",
    "format_amounts",
    "is_iso_currency",
    "major_scale",
    "with_major_amount",
]


def major_scale(codes: Iterable[str | None]) -> int:
    """The DECIMAL scale that holds an amount of every currency of `codes` exactly: the
    largest ISO 4217 exponent among them (2 when none is known)."""
    exponents = [currency_exponent(c) for c in set(codes) if c and is_iso4217(c)]
    return max([e for e in exponents if e is not None], default=2)


def with_major_amount(
    table: pa.Table,
    *,
    minor: str = "amount_minor",
    currency: str = "currency",
    name: str = "amount",
    scale: int | None = None,
) -> pa.Table:
    """`table` with `name` right after `minor`: the amount in currency units, exact, as a
    DECIMAL whose scale is `scale`, else the largest exponent among the table's currencies
    (EUR 12.34 is 12.34, and 12.340 beside a BHD amount); NULL where the currency cannot be
    scaled. A table written in batches passes the run's `scale` (`major_scale`), so that
    every batch has the same type."""
    codes = table.column(currency).to_pylist()
    exponents = {c: currency_exponent(c) if c and is_iso4217(c) else None for c in set(codes)}
    if scale is None:
        scale = major_scale(codes)
    values = [
        None if m is None or exponents.get(c) is None else Decimal(m).scaleb(-(exponents[c] or 0))
        for m, c in zip(table.column(minor).to_pylist(), codes, strict=True)
    ]
    column = pa.array(values, type=pa.decimal128(38, scale))
    return table.add_column(table.column_names.index(minor) + 1, name, column)


def is_iso_currency(code: str | None) -> bool:
    """True when `code` is an active ISO 4217 code."""
    return bool(code) and is_iso4217(code or "")


def format_amount(amount_minor: int | None, currency: str | None) -> str:
    """`amount_minor` in `currency` for people; never guesses a scale it does not know."""
    if amount_minor is None:
        return "—"
    if not currency:
        return f"{amount_minor:,} (minor units, no currency)"
    return format_minor(amount_minor, currency)


def format_amounts(amounts: Sequence[int | None], currency: str | None) -> list[str]:
    """`format_amount` of each amount in one currency (None: ""), without a call per amount:
    the report's explorer formats 100,000 amounts. Same text, exactly (tested)."""
    exponent = currency_exponent(currency) if currency and is_iso_currency(currency) else None
    if exponent is None:  # not ISO 4217, no minor units, or no currency: the general path
        return ["" if a is None else format_amount(a, currency) for a in amounts]
    unit = 10**exponent
    out: list[str] = []
    append = out.append
    for a in amounts:
        if a is None:
            append("")
        elif exponent == 0:
            append(f"{currency} {a:,}")
        else:
            major, minor = divmod(-a if a < 0 else a, unit)
            append(f"{currency} {'-' if a < 0 else ''}{major:,}.{minor:0{exponent}d}")
    return out
