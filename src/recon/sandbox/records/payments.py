"""Payments: the plan of each payment (status, amount, its refunds) and its served bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.clock import iso_ms
from recon.sandbox.records.customers import Customers
from recon.sandbox.records.keyspace import Keyspace, b32, mix
from recon.sandbox.records.vocabulary import (
    CARD_BRANDS,
    CHANNELS,
    COUNTRIES,
    FAILED_REFUND,
    currency_of,
    other_currency,
)

__all__ = ["PaymentPlan", "Payments", "RefundSpec"]

# A refund plan entry: (status, amount JSON value, currency, payment id override or None).
RefundSpec = tuple[str, Any, str, str | None]


@dataclass(slots=True)
class PaymentPlan:
    """What payment i is: status, amount, currency, reference and its refunds (oldest first)."""

    status: str
    amount: Any
    currency: str
    reference: str
    refunds: tuple[RefundSpec, ...]  # oldest first


def _amount_of(h: int) -> tuple[int, str]:
    cur, lo, hi = currency_of(h)
    return lo + (h >> 8) % (hi - lo + 1), cur


class Payments:
    """Generates payment i (a pure function of the seed and i)."""

    def __init__(self, ks: Keyspace, plan: AnomalyPlan, customers: Customers) -> None:
        self.ks = ks
        self.plan = plan
        self.customers = customers

    def payment_id(self, i: int) -> str:
        return self.ks.make_id("pay", i)

    def _clean_status(self, i: int, h2: int) -> str:
        r = h2 % 100
        if self.ks.is_recent("payments", i):
            if r < 10:
                return "created"
            if r < 25:
                return "pending"
            if r < 80:
                return "confirmed"
            if r < 87:
                return "refunded"
            if r < 94:
                return "partially_refunded"
            return "cancelled"
        if r < 68:
            return "confirmed"
        if r < 78:
            return "refunded"
        if r < 87:
            return "partially_refunded"
        if r < 93:
            return "cancelled"
        return "expired"

    def status(self, i: int) -> str:
        if i in self.plan.pay_kind:
            return self.plan_of(i).status
        return self._clean_status(i, self.ks.h("pay", i, 1))

    def refund_count_of(self, i: int) -> int:
        """len(plan_of(i).refunds), computed without building the plan."""
        if i in self.plan.pay_kind:
            return len(self.plan_of(i).refunds)
        h2 = self.ks.h("pay", i, 1)
        status = self._clean_status(i, h2)
        r2 = (h2 >> 16) % 100
        if status == "confirmed":
            return 1 if r2 < 2 else 0
        if status == "refunded":
            return (1 if r2 < 5 else 0) + (2 if r2 % 10 < 3 else 1)
        if status == "partially_refunded":
            if r2 < 20:
                amount, _ = _amount_of(self.ks.h("pay", i))
                part = 1 + (h2 >> 32) % (amount - 1)
                return 2 if part >= 2 else 1
            return 1
        return 0

    def plan_of(self, i: int) -> PaymentPlan:
        ks = self.ks
        h = ks.h("pay", i)
        amount, cur = _amount_of(h)
        h2 = ks.h("pay", i, 1)
        reference = f"ORD-{b32(mix(i + ks.salt['ref'])).upper()}"
        kind = self.plan.pay_kind.get(i)
        if kind is not None:
            return self._planted(i, kind, amount, cur, reference, h2)
        status = self._clean_status(i, h2)
        recent = ks.is_recent("payments", i)
        ok = "pending" if recent and (h2 >> 8) % 3 == 0 else "succeeded"
        refunds: tuple[RefundSpec, ...] = ()
        r2 = (h2 >> 16) % 100
        failed = FAILED_REFUND[(h2 >> 24) % len(FAILED_REFUND)]
        part = 1 + (h2 >> 32) % (amount - 1)
        if status == "confirmed":
            if r2 < 2:
                refunds = ((failed, part, cur, None),)
        elif status == "refunded":
            extra: tuple[RefundSpec, ...] = ((failed, part, cur, None),) if r2 < 5 else ()
            if r2 % 10 < 3:
                refunds = (*extra, (ok, part, cur, None), (ok, amount - part, cur, None))
            else:
                refunds = (*extra, (ok, amount, cur, None))
        elif status == "partially_refunded":
            if r2 < 20 and part >= 2:
                half = part // 2
                refunds = ((ok, half, cur, None), (ok, part - half, cur, None))
            else:
                refunds = ((ok, part, cur, None),)
        return PaymentPlan(status, amount, cur, reference, refunds)

    def _planted(
        self, i: int, kind: str, amount: int, cur: str, reference: str, h2: int
    ) -> PaymentPlan:
        part = 1 + h2 % (amount - 1)
        delta = 1 + (h2 >> 20) % max(1, amount // 2)
        ok = "succeeded"
        status = "confirmed"
        refunds: tuple[RefundSpec, ...] = ()
        amt: Any = amount
        if kind == "refunded_short":
            status, refunds = "refunded", ((ok, amount - delta, cur, None),)
        elif kind == "refunded_over":
            status, refunds = "refunded", ((ok, amount, cur, None), (ok, delta, cur, None))
        elif kind == "partial_but_full":
            status = "partially_refunded"
            refunds = ((ok, part, cur, None), (ok, amount - part, cur, None))
        elif kind == "partial_without_refund":
            status, refunds = "partially_refunded", (("failed", part, cur, None),)
        elif kind == "partial_over":
            status = "partially_refunded"
            refunds = ((ok, amount, cur, None), (ok, delta, cur, None))
        elif kind == "confirmed_with_refunds":
            refunds = ((ok, part, cur, None),)
        elif kind == "refund_currency_mismatch":
            other = other_currency(cur, h2)
            status = "refunded"
            refunds = ((ok, amount, cur, None), (ok, part, other, None))
        elif kind == "refund_unknown_payment":
            refunds = ((ok, part, cur, self.plan.bogus_pay[i]),)
        elif kind == "refund_unrefundable_state":
            status = ("cancelled", "expired", "created", "pending")[h2 % 4]
            refunds = ((ok, part, cur, None),)
        elif kind == "duplicate_reference":
            partner = self.plan.dup_of.get(i, i)
            reference = f"ORD-{b32(mix(partner + self.ks.salt['ref'])).upper()}"
        elif kind == "payment_negative_amount":
            amt = -amount
            refunds = ((ok, part, cur, None),)
        elif kind == "payment_float_amount":
            amt = amount + 0.5
        elif kind == "payment_string_amount":
            amt = str(amount)
        elif kind == "payment_invalid_currency":
            cur = "XYZ" if h2 % 2 else "EURO"
        elif kind == "payment_unknown_status":
            status = "settled" if h2 % 2 else "on_hold"
        elif kind == "payment_stuck_created":
            status = "created"
        elif kind == "payment_stuck_pending":
            status = "pending"
        elif kind == "refund_negative_amount":
            refunds = ((ok, -part, cur, None),)
        elif kind == "refund_non_integer_amount":
            refunds = (("failed", str(part) if h2 % 2 else part + 0.5, cur, None),)
        elif kind == "refund_invalid_currency":
            refunds = (("failed", part, "XYZ" if h2 % 2 else "EURO", None),)
        elif kind == "refund_unknown_status":
            status = "refunded"
            refunds = ((ok, amount - part, cur, None), ("in_review", part, cur, None))
        elif kind == "refund_stuck_pending":
            status = "partially_refunded"
            refunds = (("pending", part, cur, None),)
        elif kind == "refunded_mixed_case":
            status, refunds = "Refunded", ((ok, amount - delta, cur, None),)
        elif kind == "currency_lower_case":
            status, refunds = "partially_refunded", ((ok, part, cur.capitalize(), None),)
            cur = cur.lower()
        elif kind == "young_pending_refund":  # a recent payment: its refund is hours old
            refunds = (("pending", part, cur, None),)
        return PaymentPlan(status, amt, cur, reference, refunds)

    def record(self, i: int) -> dict[str, Any]:
        """Payment i as a dict (parsed from exactly the bytes that are served)."""
        rec: dict[str, Any] = orjson.loads(self.record_bytes(i))
        return rec

    def record_bytes(self, i: int) -> bytes:
        """Payment i serialised (a template: every string in it is ours and needs no escaping)."""
        p = self.plan_of(i)
        h = self.ks.h("pay", i, 2)
        c = h % max(self.ks.customers, 1)
        ref = p.reference
        country = COUNTRIES[(h >> 33) % len(COUNTRIES)]
        last4 = (h >> 12) % 10000
        if h & 0x100:
            instrument = (
                f'"card":{{"brand":"{CARD_BRANDS[(h >> 9) % 4]}","last4":"{last4:04d}",'
                f'"expMonth":{1 + (h >> 26) % 12},"expYear":{2027 + (h >> 30) % 5},'
                f'"country":"{country}"}}'
            )
        else:
            instrument = (
                f'"bankAccount":{{"bankName":"Sandbox Bank","last4":"{last4:04d}",'
                f'"country":"{country}"}}'
            )
        score = (h >> 44) % 100
        amount = p.amount
        amount_json = str(amount) if type(amount) is int else orjson.dumps(amount).decode()
        return (
            f'{{"id":"{self.payment_id(i)}","amountMinor":{amount_json},'
            f'"currency":"{p.currency}","status":"{p.status}","reference":"{ref}",'
            f'"createdAt":"{iso_ms(self.ks.created_ms("payments", i))}",'
            f'"description":"Order {ref}",'
            f'"customer":{{"id":"{self.customers.customer_id(c)}",'
            f'"email":"customer{c}@example.test"}},'
            f'{instrument},"metadata":{{"orderId":"{ref}","channel":"{CHANNELS[(h >> 40) % 3]}"}},'
            f'"risk":{{"score":{score},"level":"{"normal" if score < 80 else "elevated"}"}}}}'
        ).encode()
