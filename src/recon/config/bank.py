"""The `[bank]` table of recon.toml: how the provider settles (docs/bank.md).

    [bank]
    settlement_days = 2            # business days after the payments' business day
    grace_days = 2                 # business days late before a settlement is missing
    calendar = "DE"                # holidays of this country (the `holidays` package)
    settled_statuses = ["confirmed", "partially_refunded", "refunded"]
    tolerance_minor = 0            # a credit this far from the expected amount still matches
    tolerance_bps = 0              # with fees = "unknown": within this share of the gross
    [bank.fees.EUR]
    fee_bps = 140                  # per payment: round-half-even(amount x 140 / 10,000)
    fee_fixed_minor = 25           # + 25 minor units

`fees = "unknown"` (instead of `[bank.fees.*]`) matches each credit within `tolerance_bps`
of the gross less refunds. This module only describes; it must not import `recon.config.settings`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["DEFAULT_SETTLED_STATUSES", "BankMapping", "CurrencyFees", "compile_provider_match"]

DEFAULT_SETTLED_STATUSES = ("confirmed", "partially_refunded", "refunded")
_CODE = re.compile(r"[A-Z]{3}")


class CurrencyFees(BaseModel):
    """`[bank.fees.<CUR>]`: the provider's fee on each settled payment in that currency."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fee_bps: int = Field(default=0, ge=0, le=10_000, description="Basis points of the amount")
    fee_fixed_minor: int = Field(default=0, ge=0, description="Fixed fee, minor units")


class BankMapping(BaseModel):
    """The `[bank]` table of recon.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    settlement_days: int = Field(default=2, ge=0, le=30)
    grace_days: int = Field(default=2, ge=0, le=30)
    calendar: str | None = Field(default=None, description="Country code for holidays")
    settled_statuses: tuple[str, ...] = DEFAULT_SETTLED_STATUSES
    fees: dict[str, CurrencyFees] | Literal["unknown"] = Field(default_factory=dict)
    tolerance_minor: int = Field(default=0, ge=0)
    tolerance_bps: int = Field(default=0, ge=0, le=10_000)

    @field_validator("settled_statuses", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, (list, tuple)):
            return tuple(str(s).strip().lower() for s in value if str(s).strip())
        return value

    @field_validator("fees", mode="before")
    @classmethod
    def _check_fees(cls, value: object) -> object:
        if isinstance(value, dict):
            bad = [k for k in value if not _CODE.fullmatch(str(k))]
            if bad:
                raise ValueError(f"[bank.fees.*] names {', '.join(bad)}: not currency codes")
        return value

    @field_validator("calendar")
    @classmethod
    def _check_calendar(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        import holidays

        code = value.strip().upper()
        if code not in holidays.list_supported_countries():
            raise ValueError(f"{value!r} is not a country the holidays package knows")
        return code

    @property
    def fees_known(self) -> bool:
        """False when `fees = "unknown"`: credits match within `tolerance_bps` instead."""
        return self.fees != "unknown"

    def fee_rows(self) -> list[tuple[str, int, int]]:
        """(currency, fee_bps, fee_fixed_minor) of each currency with fees."""
        if not isinstance(self.fees, dict):
            return []
        return [(c, f.fee_bps, f.fee_fixed_minor) for c, f in sorted(self.fees.items())]


def compile_provider_match(pattern: str) -> re.Pattern[str]:
    """`RECON_BANK_PROVIDER_MATCH` compiled case-insensitively (ValueError when it is not a
    regular expression)."""
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"is not a regular expression: {exc}") from None
