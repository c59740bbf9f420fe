"""Money shown to people: always through `recon.currency.format_minor`.

Amounts stay integers in minor units everywhere; this module only turns one amount in one
currency into text (``EUR 12.50``, ``JPY 900``, ``BHD 12.345``). A code that is not ISO 4217
(planted bad data such as ``XYZ``) cannot be scaled: `format_minor` shows it in minor units
and says so.
"""

from __future__ import annotations

from recon.currency import format_minor, is_iso4217

__all__ = ["format_amount", "is_iso_currency"]


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
