"""The orders `recon findings list` offers. Minor units of different currencies are never
compared: by default the most severe and oldest come first; `amount` is within a currency
(currency, then largest first); only `converted` compares across currencies, with the rates
the user gave (recon.money.fx), every converted figure labelled as such."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from recon.errors import ConfigError
from recon.findings.listing import Finding
from recon.money.fx import Rates

__all__ = ["SORTS", "sort_findings"]

SORTS = ("severity", "amount", "converted")
_SEVERITY = {"error": 0, "warn": 1, "info": 2}
_NEVER = datetime.max.replace(tzinfo=UTC)


def sort_findings(
    found: Sequence[Finding], by: str = "severity", rates: Rates | None = None
) -> list[Finding]:
    """`found` in the order `by`: severity (then oldest first), amount (per currency,
    largest first) or converted (largest first across currencies; needs `rates`)."""
    if by == "severity":
        return sorted(
            found,
            key=lambda f: (_SEVERITY.get(f.severity, 9), f.first_seen_at or _NEVER, f.finding_key),
        )
    if by == "amount":
        return sorted(
            found,
            key=lambda f: (
                f.currency is None,
                f.currency or "",
                f.amount_minor is None,
                -(f.amount_minor or 0),
                f.finding_key,
            ),
        )
    if by == "converted":
        if rates is None:
            raise ConfigError(
                "--sort",
                "converted needs exchange rates: RECON_FX_RATES=rates.csv (currency,rate,date)",
            )

        def key(f: Finding) -> tuple[bool, int, str]:
            converted = rates.convert_minor(f.amount_minor, f.currency)
            return (converted is None, -(converted or 0), f.finding_key)

        return sorted(found, key=key)
    raise ConfigError("--sort", f"must be one of {', '.join(SORTS)}, not {by!r}")
