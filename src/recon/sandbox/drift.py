"""The ``drift`` fault: the list changes while it is paged.

After every page served of ``GET /payments`` or ``GET /refunds``, one new record is inserted
at the head (newest) and one generated record is deleted, chosen from the seed among those
whose removal changes no finding (clean ``confirmed`` payments without refunds, failed
refunds of clean payments). Offset paging then returns duplicates and misses the records
deleted ahead of the cursor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from recon.sandbox.data import Dataset
from recon.sandbox.faults import FaultPlan
from recon.sandbox.store import ListView
from recon.sandbox.truth import DEFAULT_FAILED_STATUSES

__all__ = ["DRIFTING", "Drift"]

#: The lists that drift.
DRIFTING = ("payments", "refunds")


class Drift:
    """Inserts and deletes records after each page of the drifting lists, and logs them."""

    def __init__(
        self,
        data: Dataset,
        lists: dict[str, ListView],
        faults: FaultPlan,
        *,
        new_id: Callable[[str], str],
        now_iso: Callable[[], str],
        extra_payments: dict[str, dict[str, Any]],
    ) -> None:
        self.data = data
        self.lists = lists
        self.faults = faults
        self._new_id = new_id
        self._now_iso = now_iso
        self._extra_payments = extra_payments
        self.counter: dict[str, int] = dict.fromkeys(DRIFTING, 0)
        self.log: dict[str, dict[str, list[str]]] = {
            res: {"inserted": [], "deleted": []} for res in DRIFTING
        }

    def after_page(self, resource: str) -> None:
        """One insert at the head and one delete, after a page of ``resource`` was served."""
        if resource not in self.counter:
            return
        ds = self.data
        view = self.lists[resource]
        k = self.counter[resource]
        self.counter[resource] = k + 1
        log = self.log[resource]
        if resource == "payments":
            ident = self._new_id("pay")
            rec = {
                "id": ident,
                "amountMinor": 1000 + k,
                "currency": "EUR",
                "status": "confirmed",
                "reference": f"DRIFT-{ident[4:].upper()}",
                "createdAt": self._now_iso(),
                "metadata": {"drift": True},
            }
            self._extra_payments[ident] = rec
            view.insert(orjson.dumps(rec), ident, "confirmed")
            log["inserted"].append(ident)
            victim = self._victim_payment(k)
            if victim is not None:
                view.delete(victim)
                log["deleted"].append(ds.payment_id(victim))
        else:
            ident = self._new_id("re")
            pid = ds.payment_id(0) if ds.n else "pay_none"
            cur = ds.payment_plan(0).currency if ds.n else "EUR"
            rec = {
                "id": ident,
                "paymentId": pid,
                "amount": {"amountMinor": 100, "currency": cur},
                "status": "failed",
                "createdAt": self._now_iso(),
                "failureReason": "drift",
            }
            view.insert(orjson.dumps(rec), ident, "failed")
            log["inserted"].append(ident)
            victim = self._victim_refund(k)
            if victim is not None:
                view.delete(victim)
                log["deleted"].append(orjson.loads(view.base_records(victim, victim + 1)[0])["id"])

    def _victim_payment(self, k: int) -> int | None:
        """A clean confirmed payment with no refunds: deleting it changes no finding."""
        ds = self.data
        n = ds.n
        if not n:
            return None
        start = self.faults.drift_pick("payments", k, n)
        for off in range(min(n, 10_000)):
            i = (start + off) % n
            if i in ds.pay_kind or i in ds.dup_partner or i in self.lists["payments"].deleted_set:
                continue
            if ds.payment_status(i) == "confirmed" and ds.refund_count_of(i) == 0:
                return i
        return None

    def _victim_refund(self, k: int) -> int | None:
        """A failed (not counted) refund of an unplanted payment."""
        ds = self.data
        total = ds.refund_count
        if not total:
            return None
        start = self.faults.drift_pick("refunds", k, total)
        for off in range(min(total, 10_000)):
            r = (start + off) % total
            if r in self.lists["refunds"].deleted_set:
                continue
            i, _ = ds.refund_locate(r)
            if i in ds.pay_kind:
                continue
            if ds.refund(r)["status"] in DEFAULT_FAILED_STATUSES:
                return r
        return None

    def state_json(self) -> dict[str, Any]:
        return {
            res: {
                "servedPages": self.counter[res],
                "inserted": log["inserted"],
                "deleted": log["deleted"],
            }
            for res, log in self.log.items()
        }
