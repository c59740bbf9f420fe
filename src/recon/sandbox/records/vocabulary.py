"""The values generated records are made of: currencies, statuses, brands, reasons."""

from __future__ import annotations

__all__ = [
    "CARD_BRANDS",
    "CHANNELS",
    "COUNTRIES",
    "CURRENCIES",
    "DISPUTE_REASONS",
    "DISPUTE_STATUSES",
    "FAILED_REFUND",
    "INTENT_NONFINAL",
    "PAYMENT_STATUSES",
    "REFUND_REASONS",
    "currency_of",
    "other_currency",
]

# Currency → (weight, lowest, highest amount in minor units).
CURRENCIES: tuple[tuple[str, int, int, int], ...] = (
    ("EUR", 40, 100, 99_999),
    ("USD", 25, 100, 99_999),
    ("GBP", 15, 100, 99_999),
    ("JPY", 12, 100, 99_999),
    ("BHD", 8, 1_000, 99_999),
)
_CUR_TABLE: tuple[int, ...] = tuple(
    i for i, (_, weight, _, _) in enumerate(CURRENCIES) for _ in range(weight)
)
CARD_BRANDS = ("visa", "mastercard", "amex", "discover")
CHANNELS = ("web", "app", "pos")
COUNTRIES = ("DE", "FR", "NL", "GB", "US", "JP", "BH", "ES", "IT")
REFUND_REASONS = ("requested_by_customer", "duplicate", "fraudulent")
FAILED_REFUND = ("failed", "canceled", "rejected", "reversed", "cancelled")
DISPUTE_REASONS = (
    "fraudulent",
    "duplicate",
    "product_not_received",
    "subscription_canceled",
    "unrecognized",
    "credit_not_processed",
)
PAYMENT_STATUSES = (
    "created",
    "pending",
    "confirmed",
    "partially_refunded",
    "refunded",
    "cancelled",
    "expired",
)
DISPUTE_STATUSES = (
    "needs_response",
    "under_review",
    "won",
    "lost",
    "warning_needs_response",
    "warning_under_review",
    "warning_closed",
)
INTENT_NONFINAL = ("requires_payment_method", "requires_action", "requires_capture", "processing")


def currency_of(h: int) -> tuple[str, int, int]:
    """(currency, lowest, highest amount) drawn by weight from the hash ``h``."""
    cur, _, lo, hi = CURRENCIES[_CUR_TABLE[h % 100]]
    return cur, lo, hi


def other_currency(cur: str, h: int) -> str:
    """A generated currency other than ``cur``, drawn from ``h``."""
    others = [c for c, *_ in CURRENCIES if c != cur]
    return others[h % len(others)]
