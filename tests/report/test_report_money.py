"""The explorer's bulk formatter says exactly what `format_amount` says, amount by amount."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recon.money.shown import format_amount, format_amounts

CODES = ["EUR", "JPY", "BHD", "CLF", "XAU", "XYZ", "eur", None]


@given(
    st.lists(st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1))),
    st.sampled_from(CODES),
)
def test_format_amounts_matches_format_amount(amounts: list[int | None], code: str | None) -> None:
    expected = ["" if a is None else format_amount(a, code) for a in amounts]
    assert format_amounts(amounts, code) == expected


def test_format_amounts_examples() -> None:
    assert format_amounts([101250, -1250, None, 5], "EUR") == [
        "EUR 1,012.50",
        "EUR -12.50",
        "",
        "EUR 0.05",
    ]
    assert format_amounts([900, -900], "JPY") == ["JPY 900", "JPY -900"]
    assert format_amounts([12345], "BHD") == ["BHD 12.345"]
    assert format_amounts([5000], "XYZ") == ["XYZ 5,000 (minor units)"]
