"""Bank statements read into one shape, whatever the format (docs/bank.md).

    read_statement_file(path) -> list[Statement]     (recon.bank.reading: the format
                                                      recognised from the content)

A `Statement` is one account's day (CAMT.053 `Stmt`, MT940 `:20:`…`:62F:`, BAI2 `03`…`49`),
dated by its closing balance; a CSV file has no balances and is one undated span per
currency. Every `Line` keeps its number in the file — the physical line for MT940, BAI2 and
CSV, the entry's ordinal for CAMT.053 — so a finding names `<file name>:<number>`. Amounts
are integers in minor units, signed (credits positive), converted exactly from the
statement's decimals by the currency's ISO 4217 exponent; an amount with more decimals than
the currency has is refused, never rounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from recon.money.currency import currency_exponent

__all__ = [
    "FORMATS",
    "Line",
    "Statement",
    "StatementError",
    "to_minor",
]

FORMATS = ("camt053", "mt940", "bai2", "csv")


class StatementError(ValueError):
    """A statement file that cannot be read; the message names the file and the place."""


@dataclass(frozen=True)
class Line:
    """One booked entry of a statement."""

    number: int  # line in the file (MT940 `:61:`, BAI2 `16`, CSV row), or CAMT entry ordinal
    booking_date: date
    value_date: date
    amount_minor: int  # signed: credits > 0, debits < 0
    currency: str
    counterparty: str = ""
    remittance: str = ""
    reference: str = ""


@dataclass
class Statement:
    """One account's statement (or a CSV file's lines of one currency)."""

    source: Path
    format: str
    account: str
    currency: str
    statement_date: date | None  # the closing balance's date; None: a CSV without balances
    opening_minor: int | None = None
    closing_minor: int | None = None
    number: int = 0  # where it starts in the file (line, or statement ordinal for CAMT)
    lines: list[Line] = field(default_factory=list)

    @property
    def first_date(self) -> date | None:
        """The first day the statement covers: its date, else its earliest booking."""
        if self.statement_date is not None:
            return self.statement_date
        return min((ln.booking_date for ln in self.lines), default=None)

    @property
    def last_date(self) -> date | None:
        """The last day the statement covers: its date, else its latest booking."""
        if self.statement_date is not None:
            return self.statement_date
        return max((ln.booking_date for ln in self.lines), default=None)


def to_minor(text: str, currency: str, *, where: str, decimal_comma: bool = False) -> int:
    """`text` (major units, e.g. `1500.00` or `1500,00`) in minor units of `currency`, exactly."""
    raw = text.strip().replace(" ", "")
    if decimal_comma:
        raw = raw.replace(".", "").replace(",", ".")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise StatementError(f"{where}: {text!r} is not an amount") from None
    try:
        exponent = currency_exponent(currency)
    except KeyError:
        raise StatementError(f"{where}: {currency!r} is not an ISO 4217 currency") from None
    scaled = value.scaleb(exponent or 0)
    if scaled != scaled.to_integral_value() or not value.is_finite():
        raise StatementError(
            f"{where}: {text!r} has more decimals than {currency} has ({exponent or 0})"
        )
    return int(scaled)
