"""Refunds, derived from the payments' plans: refund r is located through a prefix sum.

Refunds are numbered newest first across payments (payment 0's refunds first), and newest
first within a payment.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any

from recon.sandbox.records.clock import iso_ms
from recon.sandbox.records.keyspace import Keyspace
from recon.sandbox.records.payments import PaymentPlan, Payments
from recon.sandbox.records.serialise import to_json
from recon.sandbox.records.vocabulary import FAILED_REFUND, REFUND_REASONS

__all__ = ["Refunds"]


class Refunds:
    """Generates the refunds of every payment."""

    def __init__(self, ks: Keyspace, payments: Payments) -> None:
        self.ks = ks
        self.payments = payments
        self._prefix: array[int] | None = None

    def prefix(self) -> array[int]:
        """``prefix[i]`` = number of refunds of payments 0..i-1 (built once, on first use)."""
        if self._prefix is None:
            pre = array("q", [0])
            total = 0
            count_of = self.payments.refund_count_of
            for i in range(self.ks.n):
                total += count_of(i)
                pre.append(total)
            self._prefix = pre
        return self._prefix

    @property
    def count(self) -> int:
        return self.prefix()[-1]

    def locate(self, r: int) -> tuple[int, int]:
        """Refund index r → (payment index, position among that payment's refunds, oldest=0)."""
        pre = self.prefix()
        i = bisect_right(pre, r) - 1
        k = pre[i + 1] - pre[i]
        # within a payment the newest refund comes first
        return i, k - 1 - (r - pre[i])

    def refund(self, r: int) -> dict[str, Any]:
        i, j = self.locate(r)
        return self.of_payment(i)[j]

    def of_payment(self, i: int, plan: PaymentPlan | None = None) -> list[dict[str, Any]]:
        """The generated refunds of payment i, oldest first."""
        ks = self.ks
        pre = self.prefix()
        if plan is None and pre[i + 1] == pre[i]:
            return []  # most payments have no refund: no need to build the plan
        p = plan if plan is not None else self.payments.plan_of(i)
        if not p.refunds:
            return []
        first = pre[i]
        pay_ms = ks.created_ms("payments", i)
        quarter = ks.step["payments"] // 4
        pid = self.payments.payment_id(i)
        out = []
        k = len(p.refunds)
        for j, (status, amount, cur, override) in enumerate(p.refunds):
            h = ks.h("re", i * 4 + j)
            rec: dict[str, Any] = {
                "id": ks.make_id("re", first + (k - 1 - j)),
                "paymentId": override if override is not None else pid,
                "amount": {"amountMinor": amount, "currency": cur},
                "status": status,
                "reason": REFUND_REASONS[h % 3],
                "createdAt": iso_ms(pay_ms + (j + 1) * quarter),
                "metadata": {"ticket": f"T-{(h >> 8) % 100000:05d}"},
            }
            if status in FAILED_REFUND:
                rec["failureReason"] = "insufficient_funds" if h & 1 else "expired_card"
            out.append(rec)
        return out

    def records_bytes(self, start: int, stop: int) -> list[bytes]:
        """Serialised refunds start..stop-1."""
        out: list[bytes] = []
        if start >= stop:
            return out
        pre = self.prefix()
        i, _ = self.locate(start)
        pos = start - pre[i]  # position among payment i's refunds, newest first
        while len(out) < stop - start and i < self.ks.n:
            recs = self.of_payment(i)
            recs.reverse()
            out.extend(to_json(rec) for rec in recs[pos:])
            pos = 0
            i += 1
        return out[: stop - start]
