"""Disputes: each on a confirmed payment (about one in ten without a payment reference)."""

from __future__ import annotations

from typing import Any

from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.clock import DAY_MS, iso_ms
from recon.sandbox.records.keyspace import Keyspace
from recon.sandbox.records.payments import Payments
from recon.sandbox.records.vocabulary import DISPUTE_REASONS, DISPUTE_STATUSES, currency_of

__all__ = ["Disputes"]


class Disputes:
    """Generates dispute d."""

    def __init__(self, ks: Keyspace, plan: AnomalyPlan, payments: Payments) -> None:
        self.ks = ks
        self.plan = plan
        self.payments = payments

    def payment_of(self, d: int) -> int | None:
        """The index of the payment dispute d is about, or None."""
        plan = self.plan
        kind = plan.dispute_kind.get(d)
        h = self.ks.h("dp", d)
        if kind is None and h % 10 == 0:
            return None  # about one dispute in ten carries no payment reference
        n = self.ks.n
        if not n:
            return None
        start = min(n - 1, (d * n) // max(self.ks.sizes.disputes, 1) + 1 + (h >> 8) % 3)
        want = {
            "dispute_on_refunded": ("refunded",),
            "dispute_on_partially_refunded": ("partially_refunded",),
        }.get(kind or "", ("confirmed",))
        for i in range(start, min(n, start + 5000)):
            if i in plan.pay_kind or i in plan.dup_partner:
                continue
            if self.payments.plan_of(i).status in want:
                return i
        return None

    def record(self, d: int) -> dict[str, Any]:
        ks = self.ks
        h = ks.h("dp", d, 1)
        kind = self.plan.dispute_kind.get(d)
        p = self.payment_of(d)
        if p is not None:
            plan = self.payments.plan_of(p)
            amount: Any = plan.amount
            cur = plan.currency
        else:
            cur, lo, hi = currency_of(h)
            amount = lo + (h >> 8) % (hi - lo + 1)
        status = DISPUTE_STATUSES[(h >> 20) % len(DISPUTE_STATUSES)]
        if kind == "dispute_negative_amount":
            amount = -abs(amount)
        elif kind == "dispute_invalid_currency":
            cur = "XYZ"
        elif kind == "dispute_unknown_status":
            status = "escalated"
        created = ks.created_ms("disputes", d)
        rec: dict[str, Any] = {"id": ks.make_id("dp", d)}
        if p is not None:
            rec["paymentId"] = self.payments.payment_id(p)
        rec.update(
            {
                "amount": {"amountMinor": amount, "currency": cur},
                "status": status,
                "reason": DISPUTE_REASONS[(h >> 24) % len(DISPUTE_REASONS)],
                "createdAt": iso_ms(created),
                "evidenceDueBy": iso_ms(created + 14 * DAY_MS),
                "evidence": {"submitted": bool(h & 1), "documents": (h >> 1) % 4},
            }
        )
        return rec
