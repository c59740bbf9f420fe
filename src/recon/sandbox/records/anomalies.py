"""The plan of what is planted where: which record of each resource carries which anomaly.

Chosen once, up front, with ``random.Random(seed)`` (the order of the draws is part of the
data: payments, disputes, subscriptions, invoices, intents). ``per_kind`` anomalies of each
kind; 0 for a clean data set.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from recon.sandbox.records.keyspace import (
    OPEN_INVOICE_SHARE,
    PLANTED_PER_KIND,
    Keyspace,
    b32,
    per_kind_for_rate,
)

__all__ = [
    "CASE_KINDS",
    "DISPUTE_KINDS",
    "INTENT_KINDS",
    "INTENT_RECENT_KINDS",
    "INVOICE_KINDS",
    "OPEN_INVOICE_SHARE",
    "PAYMENT_KINDS",
    "PLANTED_PER_KIND",
    "RECENT_PAYMENT_KINDS",
    "SUBSCRIPTION_KINDS",
    "AnomalyPlan",
    "per_kind_for_rate",
]

# Planted kinds that take one payment slot each.
PAYMENT_KINDS = (
    "refunded_short",
    "refunded_over",
    "partial_but_full",
    "partial_without_refund",
    "partial_over",
    "confirmed_with_refunds",
    "refund_currency_mismatch",
    "refund_unknown_payment",
    "refund_unrefundable_state",
    "duplicate_reference",
    "payment_negative_amount",
    "payment_float_amount",
    "payment_string_amount",
    "payment_invalid_currency",
    "payment_unknown_status",
    "payment_stuck_created",
    "payment_stuck_pending",
    "refund_negative_amount",
    "refund_non_integer_amount",
    "refund_invalid_currency",
    "refund_unknown_status",
    "refund_stuck_pending",
)
DISPUTE_KINDS = (
    "dispute_on_refunded",
    "dispute_on_partially_refunded",
    "dispute_negative_amount",
    "dispute_invalid_currency",
    "dispute_unknown_status",
)
INVOICE_KINDS = (
    "invoice_inactive_subscription",
    "invoice_zero_amount",
    "invoice_negative_amount",
    "invoice_non_integer_amount",
    "invoice_invalid_currency",
    "invoice_unknown_status",
)
SUBSCRIPTION_KINDS = ("subscription_unknown_status",)
INTENT_KINDS = (
    "intent_negative_amount",
    "intent_non_integer_amount",
    "intent_invalid_currency",
    "intent_stuck",
)
INTENT_RECENT_KINDS = ("intent_unknown_status",)
# Issue 15: values sent in another case than recon's (read as the loader normalises them:
# `Refunded` is refunded, `eur` is EUR), and refunds just created (pending, in flight).
CASE_KINDS = (
    "refunded_mixed_case",  # status `Refunded`, refunded short: still refunded_short
    "currency_lower_case",  # `eur` on the payment, `Eur` on its refund: no finding at all
)
RECENT_PAYMENT_KINDS = ("young_pending_refund",)  # confirmed, refund pending for hours


def _pick(rng: random.Random, lo: int, hi: int, k: int) -> list[int]:
    if hi <= lo or k <= 0:
        return []
    return rng.sample(range(lo, hi), min(k, hi - lo))


class AnomalyPlan:
    """Index → planted kind, per resource (plus the partners a kind needs)."""

    def __init__(self, ks: Keyspace, per_kind: int) -> None:
        self.ks = ks
        self.per_kind = per_kind
        self.pay_kind: dict[int, str] = {}
        self.dup_partner: dict[int, int] = {}  # partner -> planted payment
        self.dup_of: dict[int, int] = {}  # planted payment -> partner
        self.bogus_pay: dict[int, str] = {}  # payment -> the unknown payment id of its refund
        self.dispute_kind: dict[int, str] = {}
        self.sub_kind: dict[int, str] = {}
        self.inv_kind: dict[int, str] = {}
        self.inv_customer_override: dict[int, int] = {}
        self.intent_kind: dict[int, str] = {}

    def plan_payments(self, rng: random.Random) -> None:
        ks = self.ks
        n = ks.n
        lo = ks.first_old("payments") if n else 0
        want = len(PAYMENT_KINDS) * self.per_kind
        # leave room for duplicate-reference partners
        slots = _pick(rng, lo, n, want + self.per_kind)
        kinds = [k for k in PAYMENT_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.pay_kind[idx] = kind
        for idx, kind in sorted(self.pay_kind.items()):
            if kind != "duplicate_reference":
                continue
            partner = idx + 1
            while partner < n and (partner in self.pay_kind or partner in self.dup_partner):
                partner += 1
            if partner >= n:
                partner = idx - 1
                while partner >= 0 and (partner in self.pay_kind or partner in self.dup_partner):
                    partner -= 1
            if partner >= 0:
                self.dup_partner[partner] = idx
                self.dup_of[idx] = partner
        self.bogus_pay = {
            i: f"pay_{b32(ks.h('ghost', i))}"
            for i, k in self.pay_kind.items()
            if k == "refund_unknown_payment"
        }

    def plan_disputes(self, rng: random.Random) -> None:
        slots = _pick(rng, 0, self.ks.sizes.disputes, len(DISPUTE_KINDS) * self.per_kind)
        kinds = [k for k in DISPUTE_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.dispute_kind[idx] = kind

    def plan_subscriptions(self, rng: random.Random) -> None:
        slots = _pick(rng, 0, self.ks.sizes.subscriptions, len(SUBSCRIPTION_KINDS) * self.per_kind)
        for idx in slots:
            self.sub_kind[idx] = "subscription_unknown_status"

    def plan_invoices(self, rng: random.Random, inactive: Callable[[int], bool]) -> None:
        """``inactive(c)``: customer c has subscriptions and none is active."""
        v = self.ks.sizes.invoices
        slots = _pick(rng, 0, v, len(INVOICE_KINDS) * self.per_kind)
        kinds = [k for k in INVOICE_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.inv_kind[idx] = kind
        # an inactive-subscription invoice needs a customer with subscriptions, none active
        customers = [c for c in range(self.ks.customers) if inactive(c)]
        for idx, kind in self.inv_kind.items():
            if kind == "invoice_inactive_subscription" and customers:
                self.inv_customer_override[idx] = customers[rng.randrange(len(customers))]

    def plan_intents(self, rng: random.Random) -> None:
        ks = self.ks
        count = ks.sizes.payment_intents
        if not count:
            return
        lo = ks.first_old("payment_intents")
        slots = _pick(rng, lo, count, len(INTENT_KINDS) * self.per_kind)
        kinds = [k for k in INTENT_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.intent_kind[idx] = kind
        recent = [i for i in range(min(count, 10_000)) if ks.is_recent("payment_intents", i)]
        for idx in _pick(rng, 0, len(recent), self.per_kind):
            self.intent_kind[recent[idx]] = "intent_unknown_status"

    def plan_case_and_flight(self, rng: random.Random) -> None:
        """Issue 15's payments, drawn last so that every earlier draw stays as it was: old
        payments not yet planted get the case kinds, recent ones an in-flight refund."""
        ks = self.ks
        taken = self.pay_kind.keys() | self.dup_partner.keys()
        old = [i for i in range(ks.first_old("payments") if ks.n else 0, ks.n) if i not in taken]
        want = len(CASE_KINDS) * self.per_kind
        kinds = [k for k in CASE_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(_pick(rng, 0, len(old), want), kinds, strict=False):
            self.pay_kind[old[idx]] = kind
        recent = [
            i for i in range(min(ks.n, 10_000)) if ks.is_recent("payments", i) and i not in taken
        ]
        for idx in _pick(rng, 0, len(recent), self.per_kind):
            self.pay_kind[recent[idx]] = "young_pending_refund"
