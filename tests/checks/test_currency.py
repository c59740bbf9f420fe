"""ISO 4217 table and exact money formatting (Python and the SQL macro agree)."""

from __future__ import annotations

import duckdb
import pytest

from recon.checks import ensure_reference_tables
from recon.money.currency import (
    create_currencies_table,
    currency_exponent,
    format_minor,
    is_iso4217,
)
from recon.warehouse.migrations import apply_migrations


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (123456, "JPY", "JPY 123,456"),
        (1234, "EUR", "EUR 12.34"),
        (1234, "BHD", "BHD 1.234"),
        (5, "EUR", "EUR 0.05"),
        (-5, "EUR", "EUR -0.05"),
        (-123456789, "USD", "USD -1,234,567.89"),
        (0, "GBP", "GBP 0.00"),
        (9_007_199_254_740_993, "EUR", "EUR 90,071,992,547,409.93"),  # beyond float precision
        (1234, "XYZ", "XYZ 1,234 (minor units)"),
        (1234, "XAU", "XAU 1,234 (minor units)"),
    ],
)
def test_format_minor_is_exact(amount: int, currency: str, shown: str) -> None:
    assert format_minor(amount, currency) == shown


def test_format_minor_refuses_floats() -> None:
    with pytest.raises(TypeError):
        format_minor(12.5, "EUR")  # type: ignore[arg-type]


def test_iso_table() -> None:
    assert (currency_exponent("JPY"), currency_exponent("EUR"), currency_exponent("BHD")) == (
        0,
        2,
        3,
    )
    assert is_iso4217("EUR")
    assert not is_iso4217("XYZ")
    assert not is_iso4217("EURO")
    con = duckdb.connect()
    count = create_currencies_table(con)
    assert create_currencies_table(con) == count > 150
    assert con.execute("SELECT count(*) FROM currencies").fetchone() == (count,)
    assert con.execute("SELECT exponent, name FROM currencies WHERE code = 'BHD'").fetchone() == (
        3,
        "Bahraini Dinar",
    )


def test_sql_macro_agrees_with_format_minor() -> None:
    con = duckdb.connect()
    apply_migrations(con)
    ensure_reference_tables(con)
    ensure_reference_tables(con)  # idempotent
    cases = [
        (a, c)
        for c in ("EUR", "JPY", "BHD", "USD", "GBP", "XYZ", "CLF")
        for a in (0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, 1001, 123456, -987654321, 10**15 + 7)
    ]
    got = con.execute(
        "SELECT recon_money(a, c) FROM (SELECT unnest($amounts) AS a, unnest($currencies) AS c, "
        "generate_subscripts($amounts, 1) AS i) ORDER BY i",
        {"amounts": [a for a, _ in cases], "currencies": [c for _, c in cases]},
    ).fetchall()
    assert [g[0] for g in got] == [format_minor(a, c) for a, c in cases]


def test_the_checks_money_macro_says_what_the_reference_one_says() -> None:
    """`recon_money` as the checks define it (sql/checks_macros/money_text.sql, the currencies
    written in) against the reference macro, for every currency, none and codes that are not."""
    from recon.checks.runner import _define_money_text

    con = duckdb.connect()
    apply_migrations(con)
    ensure_reference_tables(con)
    codes = [r[0] for r in con.execute("SELECT code FROM currencies ORDER BY 1").fetchall()]
    cases = [
        (a, c)
        for c in [*codes, None, "XYZ", "EU", "EURO", "", ",EU", "eur"]
        for a in (None, 0, 7, -1234, 10**15 + 7, -(2**63))
    ]
    query = (
        "SELECT recon_money(a, c) FROM (SELECT unnest($amounts) AS a, unnest($currencies) AS c, "
        "generate_subscripts($amounts, 1) AS i) ORDER BY i"
    )
    values = {"amounts": [a for a, _ in cases], "currencies": [c for _, c in cases]}
    reference = con.execute(query, values).fetchall()
    _define_money_text(con)
    temp = con.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'recon_money' "
        "AND database_name = 'temp'"
    ).fetchone()
    assert temp == (1,)
    assert con.execute(query, values).fetchall() == reference
