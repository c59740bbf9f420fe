"""Payment intents: recent ones in every status, older ones succeeded or cancelled."""

from __future__ import annotations

from typing import Any

from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.clock import iso_ms
from recon.sandbox.records.keyspace import Keyspace
from recon.sandbox.records.vocabulary import INTENT_NONFINAL, currency_of

__all__ = ["Intents"]


class Intents:
    """Generates payment intent k."""

    def __init__(self, ks: Keyspace, plan: AnomalyPlan) -> None:
        self.ks = ks
        self.plan = plan

    def record(self, k: int) -> dict[str, Any]:
        ks = self.ks
        h = ks.h("pi", k)
        cur, lo, hi = currency_of(h)
        amount: Any = lo + (h >> 8) % (hi - lo + 1)
        if (h >> 30) % 50 == 0:
            amount = 0
        kind = self.plan.intent_kind.get(k)
        r = (h >> 40) % 100
        if ks.is_recent("payment_intents", k):
            allst = (*INTENT_NONFINAL, "succeeded", "cancelled")
            status = allst[r % len(allst)]
        else:
            status = "succeeded" if r < 85 else "cancelled"
        if kind == "intent_negative_amount":
            amount = -amount - 1
        elif kind == "intent_non_integer_amount":
            amount = amount + 0.5
        elif kind == "intent_invalid_currency":
            cur = "EURO"
        elif kind == "intent_stuck":
            status = INTENT_NONFINAL[r % 4]
        elif kind == "intent_unknown_status":
            status = "on_hold"
        created = ks.created_ms("payment_intents", k)
        return {
            "id": ks.make_id("pi", k),
            "status": status,
            "captureMethod": "manual" if (h >> 50) % 5 == 0 else "automatic",
            "amount": amount,
            "currency": cur,
            "createdAt": iso_ms(created),
            "paymentMethodTypes": ["card"] if h & 1 else ["card", "bank"],
            "nextAction": ({"type": "redirect_to_url"} if status == "requires_action" else None),
            "metadata": {"cart": f"cart_{(h >> 20) % 100000}"},
        }
