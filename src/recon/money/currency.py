"""ISO 4217 currencies: the warehouse's `currencies` table and exact money formatting.

The table comes from the `iso4217` package (the ISO list of active codes, docs/facts.md
"Currencies"), not from CLDR. Amounts are integers in minor units; formatting uses integer
arithmetic only, so
`format_minor(1234, "BHD") == "BHD 1.234"` exactly, never via a float.
"""

from __future__ import annotations

from functools import cache

import duckdb
import iso4217

__all__ = [
    "CURRENCIES_TABLE",
    "create_currencies_table",
    "currency_exponent",
    "currency_rows",
    "format_minor",
    "is_iso4217",
]

CURRENCIES_TABLE = "currencies"


@cache
def _exponents() -> dict[str, int | None]:
    # `exponent` is None for codes without minor units (XAU, XDR, XXX, …).
    return {c.code: c.exponent for c in iso4217.Currency}


@cache
def _names() -> dict[str, str]:
    return {c.code: c.currency_name for c in iso4217.Currency}


def is_iso4217(code: str) -> bool:
    """True when `code` is an active ISO 4217 alphabetic code (case-sensitive: `EUR`)."""
    return code in _exponents()


def currency_exponent(code: str) -> int | None:
    """The ISO 4217 minor-unit exponent of `code` (EUR 2, JPY 0, BHD 3).

    None for an ISO code without minor units (e.g. XAU); `KeyError` for an unknown code.
    """
    return _exponents()[code]


def format_minor(amount_minor: int, currency: str) -> str:
    """Format an amount in minor units for people, exactly.

    >>> format_minor(123456, "JPY"), format_minor(1234, "EUR"), format_minor(-1234, "BHD")
    ('JPY 123,456', 'EUR 12.34', 'BHD -1.234')

    A code that is not ISO 4217 (or has no minor units) cannot be scaled: the amount is shown
    in minor units and says so, e.g. `XYZ 1,234 (minor units)`.
    """
    if isinstance(amount_minor, bool) or not isinstance(amount_minor, int):
        raise TypeError(f"amount_minor must be an int, got {type(amount_minor).__name__}")
    exponent = _exponents().get(currency)
    if exponent is None:
        return f"{currency} {amount_minor:,} (minor units)"
    sign = "-" if amount_minor < 0 else ""
    major, minor = divmod(abs(amount_minor), 10**exponent)
    if exponent == 0:
        return f"{currency} {sign}{major:,}"
    return f"{currency} {sign}{major:,}.{minor:0{exponent}d}"


def currency_rows() -> list[tuple[str, int | None, str]]:
    """`currencies`' rows: (code, exponent, name) of every ISO 4217 code, in code order."""
    return [(c, _exponents()[c], _names()[c]) for c in sorted(_exponents())]


def create_currencies_table(con: duckdb.DuckDBPyConnection) -> int:
    """Create or refresh `currencies(code, exponent, name)` in `con`; return the row count.

    Idempotent: the table is replaced with the package's current list. Run it outside an
    open transaction or inside one; it issues no statement that can fail on good input.
    """
    codes = sorted(_exponents())
    con.execute(
        "CREATE TABLE IF NOT EXISTS currencies "
        "(code VARCHAR PRIMARY KEY, exponent INTEGER, name VARCHAR NOT NULL)"
    )
    con.execute("DELETE FROM currencies")
    con.execute(
        "INSERT INTO currencies SELECT unnest($codes), unnest($exponents), unnest($names)",
        {
            "codes": codes,
            "exponents": [_exponents()[c] for c in codes],
            "names": [_names()[c] for c in codes],
        },
    )
    return len(codes)
