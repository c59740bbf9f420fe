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
from recon.sandbox.mutations import ID_PREFIX, is_harmless, new_record
from recon.sandbox.store import ListView

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
        ident = self._new_id(ID_PREFIX[resource])
        rec, status = new_record(ds, resource, ident, k, self._now_iso())
        if resource == "payments":
            self._extra_payments[ident] = rec
        view.insert(orjson.dumps(rec), ident, status)
        log["inserted"].append(ident)
        victim = self._victim(view, k)
        if victim is not None:
            view.delete(victim)
            log["deleted"].append(orjson.loads(view.base_records(victim, victim + 1)[0])["id"])

    def _victim(self, view: ListView, k: int) -> int | None:
        """A record whose deletion changes no finding, from a place drawn from the seed."""
        total = view.base_count
        if not total:
            return None
        start = self.faults.drift_pick(view.name, k, total)
        for off in range(min(total, 10_000)):
            index = (start + off) % total
            if is_harmless(self.data, view, index):
                return index
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
