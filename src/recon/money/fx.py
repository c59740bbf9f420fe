"""Exchange rates the user gives (`RECON_FX_RATES`), for ordering people's lists only.

recon never converts money on its own: every check, total and export stays in the currency
the amount is in. With a rates file, lists may offer "largest first" across currencies, and
every converted figure says it is converted, at which rate file and date. The file is CSV:

    currency,rate,date
    EUR,1,2026-11-20          <- the base: the one currency at rate 1
    USD,0.92,2026-11-20       <- one USD is 0.92 EUR
    JPY,0.0061,2026-11-20

Rates are exact decimals (never a float); a converted amount is rounded half-even to the base
currency's digits, for display.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from recon.errors import ConfigError
from recon.money.currency import currency_exponent, format_minor, is_iso4217

__all__ = ["Rates", "load_rates"]

_SETTING = "RECON_FX_RATES"


@dataclass(frozen=True)
class Rates:
    """Rates to one base currency, each with the day it is of."""

    base: str
    rates: dict[str, tuple[Decimal, date]]
    source: Path

    def convert_minor(self, amount_minor: int | None, currency: str | None) -> int | None:
        """`amount_minor` of `currency` in minor units of the base (None: no rate for it)."""
        if amount_minor is None or currency is None or currency not in self.rates:
            return None
        exponent, base_exponent = currency_exponent(currency), currency_exponent(self.base)
        if exponent is None or base_exponent is None:
            return None
        major = Decimal(amount_minor).scaleb(-exponent) * self.rates[currency][0]
        return int(major.scaleb(base_exponent).to_integral_value())

    def label(self, amount_minor: int | None, currency: str | None) -> str | None:
        """'≈ EUR 12.34 converted (rate of 2026-11-20)'; None without a rate, or for an
        amount already in the base currency."""
        converted = self.convert_minor(amount_minor, currency)
        if converted is None or currency is None or currency == self.base:
            return None
        day = self.rates[currency][1].isoformat()
        return f"≈ {format_minor(converted, self.base)} converted (rate of {day})"


def load_rates(path: Path) -> Rates:
    """Read a rates file; anything wrong with it is a ConfigError naming the line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(_SETTING, f"cannot read {path}: {exc.strerror}") from None
    rows = list(csv.DictReader(text.splitlines()))
    if not rows or not {"currency", "rate", "date"} <= set(rows[0]):
        raise ConfigError(_SETTING, f"{path} needs the columns currency,rate,date")
    rates: dict[str, tuple[Decimal, date]] = {}
    for line, row in enumerate(rows, start=2):
        code = (row["currency"] or "").strip().upper()
        try:
            rate = Decimal((row["rate"] or "").strip())
            day = date.fromisoformat((row["date"] or "").strip())
        except (InvalidOperation, ValueError):
            raise ConfigError(_SETTING, f"{path} line {line}: rate or date is not valid") from None
        if not is_iso4217(code) or not rate.is_finite() or rate <= 0:
            raise ConfigError(
                _SETTING, f"{path} line {line}: needs an ISO 4217 code and a positive rate"
            )
        rates[code] = (rate, day)
    bases = [c for c, (r, _) in rates.items() if r == 1]
    if len(bases) != 1:
        raise ConfigError(_SETTING, f"{path}: name the base currency once, with rate 1")
    return Rates(bases[0], rates, path)
