"""Invoices: customer, subscription, status, amount due, and a due date in a safe aging band."""

from __future__ import annotations

from typing import Any

from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.clock import DAY_MS, iso_date, iso_ms
from recon.sandbox.records.customers import Customers
from recon.sandbox.records.keyspace import Keyspace
from recon.sandbox.records.vocabulary import currency_of

__all__ = ["AGING_BANDS", "Invoices"]

# Safe aging bands for open invoices: days past due at the anchor's date, far from the bucket
# edges so that a run within a day or two of the anchor gets the same bucket.
AGING_BANDS: tuple[tuple[str, int, int], ...] = (
    ("not yet due", -20, -2),
    ("0-30", 2, 27),
    ("31-60", 34, 57),
    ("61-90", 64, 87),
    ("90+", 94, 200),
)


class Invoices:
    """Generates invoice v."""

    def __init__(self, ks: Keyspace, plan: AnomalyPlan, customers: Customers) -> None:
        self.ks = ks
        self.plan = plan
        self.customers = customers

    def parts(self, v: int) -> tuple[int, int | None, str]:
        """(customer, subscription or None, status) of invoice v."""
        h = self.ks.h("in", v)
        kind = self.plan.inv_kind.get(v)
        cust = self.customers
        if v in self.plan.inv_customer_override:
            c = self.plan.inv_customer_override[v]
        else:
            c = h % max(self.ks.customers, 1)
        subs = cust.subs_of_customer(c)
        sub = subs[(h >> 8) % len(subs)] if subs else None
        r = (h >> 16) % 100
        may_open = cust.may_have_open(c)
        if kind == "invoice_inactive_subscription":
            status = "open"
        elif kind in ("invoice_zero_amount", "invoice_negative_amount"):
            status = "open"
            if not may_open:  # keep the planted finding alone
                subs, sub, c = [], None, self._one_off_customer(h)
        elif kind == "invoice_unknown_status":
            status = "pending_review"
        elif kind in ("invoice_non_integer_amount", "invoice_invalid_currency") or r < 80:
            status = "paid"
        elif r < 92 and may_open:
            status = "open"
        elif r < 96:
            status = "void"
        elif r < 98:
            status = "uncollectible"
        else:
            status = "draft"
        return c, sub, status

    def _one_off_customer(self, h: int) -> int:
        # customers 9, 19, 29, … own no subscription
        customers = self.ks.customers
        tens = max(customers // 10, 1)
        return min(((h >> 24) % tens) * 10 + 9, max(customers - 1, 0))

    def aging(self, v: int) -> tuple[str, int | None]:
        """(planned bucket, days past due at the anchor date or None when no dueDate)."""
        h = self.ks.h("in", v, 1)
        if h % 10 == 0:
            return "0-30", None
        bucket, lo, hi = AGING_BANDS[(h >> 4) % len(AGING_BANDS)]
        return bucket, lo + (h >> 8) % (hi - lo + 1)

    def record(self, v: int) -> dict[str, Any]:
        ks = self.ks
        c, sub, status = self.parts(v)
        h = ks.h("in", v, 2)
        cur, lo, hi = currency_of(h)
        amount: Any = lo + (h >> 8) % (hi - lo + 1)
        kind = self.plan.inv_kind.get(v)
        if kind == "invoice_zero_amount":
            amount = 0
        elif kind == "invoice_negative_amount":
            amount = -amount
        elif kind == "invoice_non_integer_amount":
            amount = str(amount) if h % 2 else amount + 0.5
        elif kind == "invoice_invalid_currency":
            cur = "XYZ"
        created = ks.created_ms("invoices", v)
        rec: dict[str, Any] = {
            "id": ks.make_id("in", v),
            "customerId": self.customers.customer_id(c),
            "subscriptionId": ks.make_id("sub", sub) if sub is not None else None,
            "status": status,
            "amountDue": {"amountMinor": amount, "currency": cur},
            "createdAt": iso_ms(created),
        }
        if status == "open":
            _, days = self.aging(v)
            if days is not None:
                rec["dueDate"] = iso_date(ks.anchor_ms - days * DAY_MS)
        elif h & 0x10:
            rec["dueDate"] = iso_date(created + 30 * DAY_MS)
        rec["lines"] = {"count": 1 + (h >> 40) % 3}
        rec["metadata"] = {"source": "sandbox"}
        return rec
