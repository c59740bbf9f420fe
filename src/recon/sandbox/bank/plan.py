"""What the sandbox's bank statements hold: the settlements the provider pays for the data
set (worked out here in Python, independently of recon's SQL), a few other lines, and the
plants. The ground truth is the finding each plant must produce, by check and entity id."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from recon.sandbox.data import Dataset

__all__ = [
    "FORMAT_OF",
    "PROVIDER_MATCH",
    "SANDBOX_BANK",
    "BankPlan",
    "DayStatement",
    "PlannedLine",
    "Settlement",
    "expected_settlements",
    "plan_statements",
]

# How the sandbox provider settles: recon.toml's [bank] for the demo (docs/bank.md).
SANDBOX_BANK: dict[str, Any] = {
    "settlement_days": 2,
    "grace_days": 2,
    "fees": {
        "EUR": {"fee_bps": 140, "fee_fixed_minor": 25},
        "USD": {"fee_bps": 290, "fee_fixed_minor": 30},
        "GBP": {"fee_bps": 150, "fee_fixed_minor": 20},
        "JPY": {"fee_bps": 360, "fee_fixed_minor": 0},
        "BHD": {"fee_bps": 250, "fee_fixed_minor": 100},
    },
}
PROVIDER = "SANDBOX PAYMENTS LTD"
PROVIDER_MATCH = r"sandbox payments"
# One account per currency, each in the format its bank sends.
FORMAT_OF = {"EUR": "camt053", "USD": "mt940", "GBP": "bai2", "JPY": "csv", "BHD": "mt940"}
SETTLED = ("confirmed", "partially_refunded", "refunded")
FAILED = ("failed", "canceled", "cancelled", "rejected", "reversed")


@dataclass(frozen=True)
class Settlement:
    """One expected settlement (the provider's side, as the contract says)."""

    currency: str
    business_day: date
    gross: int
    refunds: int
    fees: int
    pay_date: date

    @property
    def net(self) -> int:
        return self.gross - self.refunds - self.fees

    @property
    def key(self) -> str:
        return f"{self.currency}:{self.business_day.isoformat()}"


@dataclass
class PlannedLine:
    """One line of a day's statement."""

    day: date
    amount: int
    counterparty: str
    remittance: str
    reference: str


@dataclass
class DayStatement:
    """One account's statement of one business day."""

    currency: str
    day: date
    opening: int
    lines: list[PlannedLine] = field(default_factory=list)

    @property
    def closing(self) -> int:
        return self.opening + sum(ln.amount for ln in self.lines)


@dataclass
class BankPlan:
    """The statements to write, and the findings their plants must produce."""

    days: dict[str, list[DayStatement]]
    settlements: list[Settlement]
    missing: str  # settlement keys
    short: str
    unexpected: list[tuple[str, str]]  # (currency, reference of the planted line)
    gap: tuple[str, date]  # (currency, the business day left out)
    gap_settlement: str = ""  # the settlement paid that day (missing where no balances tell)


def _business(day: date) -> bool:
    return day.weekday() < 5


def _next_business(day: date) -> date:
    while not _business(day):
        day += timedelta(days=1)
    return day


def _add_business(day: date, n: int) -> date:
    while n > 0:
        day += timedelta(days=1)
        if _business(day):
            n -= 1
    return day


def _half_even(n: int, d: int) -> int:
    q, r = divmod(abs(n), d)
    if 2 * r > d or (2 * r == d and q % 2 == 1):
        q += 1
    return q if n >= 0 else -q


def _day_of(text: Any) -> date | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).astimezone(UTC).date()
    except ValueError:
        return None


def _minor(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def expected_settlements(data: Dataset, bank: dict[str, Any] | None = None) -> list[Settlement]:
    """Every settlement of `data`'s payments and refunds under `bank` (SANDBOX_BANK)."""
    bank = bank or SANDBOX_BANK
    fees = bank.get("fees", {})
    days = int(bank.get("settlement_days", 2))
    totals: dict[tuple[str, date], list[int]] = {}
    for i in range(data.n):
        p = data.payment(i)
        amount, day = _minor(p.get("amountMinor")), _day_of(p.get("createdAt"))
        currency = str(p.get("currency") or "").upper()
        settled = str(p.get("status") or "").lower() in SETTLED
        if amount is not None and day is not None and currency and settled:
            fee = fees.get(currency, {})
            row = totals.setdefault((currency, _next_business(day)), [0, 0, 0])
            row[0] += amount
            row[2] += _half_even(amount * int(fee.get("fee_bps", 0)), 10_000) + int(
                fee.get("fee_fixed_minor", 0)
            )
        for r in data.refunds_of(i):
            money = r.get("amount") or {}
            r_amount, r_day = _minor(money.get("amountMinor")), _day_of(r.get("createdAt"))
            r_currency = str(money.get("currency") or "").upper()
            if r_amount is None or r_day is None or not r_currency:
                continue
            if str(r.get("status") or "").lower() in FAILED:
                continue
            totals.setdefault((r_currency, _next_business(r_day)), [0, 0, 0])[1] += r_amount
    return sorted(
        (
            Settlement(c, d, g, rf, fe, _add_business(d, days))
            for (c, d), (g, rf, fe) in totals.items()
        ),
        key=lambda s: (s.currency, s.business_day),
    )


def plan_statements(data: Dataset, formats: dict[str, str] | None = None) -> BankPlan:
    """The statements of the sandbox's five accounts, from the first pay date to the last
    business day before the anchor, with one plant of each kind (see BankPlan)."""
    formats = formats or FORMAT_OF
    settlements = [s for s in expected_settlements(data) if s.currency in formats]
    last = data.anchor.date() - timedelta(days=1)
    while not _business(last):
        last -= timedelta(days=1)
    grace = int(SANDBOX_BANK["grace_days"])
    due = {s.key: s for s in settlements if s.net > 0}

    def middle(currency: str, shift: int) -> Settlement:
        # a settlement well inside the statements: its deadline long before they end
        mine = [s for s in due.values() if s.currency == currency]
        mine = [s for s in mine if _add_business(s.pay_date, grace + 3) <= last]
        return mine[len(mine) // 2 + shift]

    missing, short = middle("EUR", 0), middle("USD", 1)
    gap_settlement = middle("BHD", -3)
    gap_day = gap_settlement.pay_date
    days: dict[str, list[DayStatement]] = {}
    unexpected: list[tuple[str, str]] = []
    for currency in formats:
        mine = [s for s in due.values() if s.currency == currency]
        if not mine:
            continue
        day = min(s.pay_date for s in mine)
        balance = 5_000_000 * (10 if currency == "JPY" else 1)
        statements: list[DayStatement] = []
        n = 0
        unexpected_day = sorted({s.pay_date for s in mine})[len(mine) // 4]
        while day <= last:
            st = DayStatement(currency, day, balance)
            for s in mine:
                if s.pay_date != day or s.key == missing.key:
                    continue
                amount = s.net - max(1, s.net // 10) if s.key == short.key else s.net
                st.lines.append(
                    PlannedLine(
                        day,
                        amount,
                        PROVIDER,
                        f"SETTLEMENT {s.business_day.isoformat()} {currency}",
                        f"PO-{currency}-{s.business_day:%Y%m%d}",
                    )
                )
            n += 1
            if n % 5 == 0:  # a debit that is not the provider's
                st.lines.append(
                    PlannedLine(day, -12_345, "ACME PROPERTIES", f"Rent {day:%m/%Y}", f"RENT{n}")
                )
            if n % 7 == 3:  # a credit that is not the provider's either
                st.lines.append(PlannedLine(day, 4_200 + n, "JANE DOE", "Invoice 1001", f"CUST{n}"))
            if day == unexpected_day and currency in ("GBP", "JPY"):
                ref = f"PLANT-UNEXPECTED-{currency}"
                st.lines.append(
                    PlannedLine(day, 777_777, PROVIDER, f"PAYOUT ADJUSTMENT {currency}", ref)
                )
                unexpected.append((currency, ref))
            balance = st.closing
            if not (currency == "BHD" and day == gap_day):
                statements.append(st)
            day = _add_business(day, 1)
        days[currency] = statements
    return BankPlan(
        days, settlements, missing.key, short.key, unexpected, ("BHD", gap_day), gap_settlement.key
    )
