"""Customers and subscriptions: who owns which subscription, and their payment methods.

Customer c owns subscription c; every tenth subscription (9, 19, …) is the second one of
the customer before it, so customers 9, 19, 29, … own none.
"""

from __future__ import annotations

from typing import Any

from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.clock import DAY_MS, iso_ms
from recon.sandbox.records.keyspace import Keyspace
from recon.sandbox.records.vocabulary import CARD_BRANDS, currency_of

__all__ = ["Customers"]


class Customers:
    """Generates customers' ids, subscriptions and payment methods."""

    def __init__(self, ks: Keyspace, plan: AnomalyPlan) -> None:
        self.ks = ks
        self.plan = plan
        self._ids: dict[int, str] = {}

    def customer_id(self, c: int) -> str:
        ident = self._ids.get(c)
        if ident is None:
            ident = self._ids[c] = self.ks.make_id("cus", c)
        return ident

    def sub_customer(self, s: int) -> int:
        """Customer index of subscription s: every tenth subscription is a second one."""
        return s - 1 if s % 10 == 9 else s

    def subs_of_customer(self, c: int) -> list[int]:
        if c % 10 == 9 or c >= self.ks.customers:
            return []
        subs = [c]
        if c + 1 < self.ks.sizes.subscriptions and (c + 1) % 10 == 9:
            subs.append(c + 1)
        return subs

    def sub_status(self, s: int) -> str:
        if self.plan.sub_kind.get(s) == "subscription_unknown_status":
            return "frozen"
        r = self.ks.h("sub", s) % 100
        if r < 70:
            return "active"
        if r < 78:
            return "trialing"
        if r < 83:
            return "past_due"
        if r < 93:
            return "canceled"
        if r < 96:
            return "paused"
        if r < 98:
            return "unpaid"
        return "incomplete"

    def has_subs_none_active(self, c: int) -> bool:
        subs = self.subs_of_customer(c)
        return bool(subs) and all(self.sub_status(s) != "active" for s in subs)

    def may_have_open(self, c: int) -> bool:
        """An open invoice is clean only for a customer with an active subscription, or none."""
        subs = self.subs_of_customer(c)
        return not subs or any(self.sub_status(s) == "active" for s in subs)

    def subscription(self, s: int) -> dict[str, Any]:
        ks = self.ks
        h = ks.h("sub", s, 1)
        cur, lo, hi = currency_of(h)
        created = ks.created_ms("subscriptions", s)
        return {
            "id": ks.make_id("sub", s),
            "customerId": self.customer_id(self.sub_customer(s)),
            "priceId": ks.make_id("price", (h >> 8) % 20),
            "status": self.sub_status(s),
            "createdAt": iso_ms(created),
            "currentPeriodEnd": iso_ms(ks.anchor_ms + ((h >> 16) % 30 + 1) * DAY_MS),
            "plan": {
                "interval": ("month", "year")[(h >> 24) % 2],
                "amount": {"amountMinor": lo + (h >> 28) % (hi - lo + 1), "currency": cur},
            },
            "metadata": {"source": "sandbox"},
        }

    def payment_methods(self, c: int) -> list[dict[str, Any]]:
        ks = self.ks
        h = ks.h("cus", c)
        count = 1 + h % 3
        out = []
        for j in range(count):
            hj = ks.h("pm", c * 4 + j)
            rec: dict[str, Any] = {
                "id": ks.make_id("pm", c * 4 + j),
                "type": "card" if hj % 3 else "bank",
                "createdAt": iso_ms(ks.anchor_ms - (c * 4 + j + 1) * 3_600_000),
                "isDefault": j == 0,
            }
            if rec["type"] == "card":
                rec["card"] = {
                    "brand": CARD_BRANDS[(hj >> 4) % 4],
                    "last4": f"{(hj >> 8) % 10000:04d}",
                    "expMonth": 1 + (hj >> 24) % 12,
                    "expYear": 2027 + (hj >> 28) % 5,
                }
            else:
                rec["bankAccount"] = {
                    "bankName": "Sandbox Bank",
                    "last4": f"{(hj >> 8) % 10000:04d}",
                }
            out.append(rec)
        return out
