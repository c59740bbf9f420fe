"""Harmless changes to a list while it is paged: what can be inserted or deleted.

Used by the ``drift`` profile and by scripted shifts. A record is *harmless* to delete when
its removal changes no finding of the truth (so the truth of the generated data stays valid
for every record present from start to end); an inserted record is new (newer than every
generated record, so it comes first) and is clean.
"""

from __future__ import annotations

from typing import Any

from recon.sandbox.data import Dataset
from recon.sandbox.store import ListView
from recon.sandbox.truth import DEFAULT_FAILED_STATUSES

__all__ = ["ID_PREFIX", "is_harmless", "new_record"]

#: The id prefix of each list resource.
ID_PREFIX = {
    "payments": "pay",
    "refunds": "re",
    "disputes": "dp",
    "subscriptions": "sub",
    "invoices": "in",
    "payment_intents": "pi",
}


def is_harmless(ds: Dataset, view: ListView, index: int) -> bool:
    """Can generated record ``index`` of ``view`` be deleted without changing a finding?"""
    if index in view.deleted_set:
        return False
    name = view.name
    if name == "payments":
        return (
            index not in ds.pay_kind
            and index not in ds.dup_partner
            and ds.payment_status(index) == "confirmed"
            and ds.refund_count_of(index) == 0
        )
    if name == "refunds":
        i, _ = ds.refund_locate(index)
        return i not in ds.pay_kind and ds.refund(index)["status"] in DEFAULT_FAILED_STATUSES
    if name == "disputes":
        return index not in ds.dispute_kind
    if name == "payment_intents":
        return index not in ds.intent_kind
    if name == "invoices":
        return index not in ds.inv_kind and ds.invoice(index)["status"] != "open"
    if name == "subscriptions":
        return _harmless_subscription(ds, view, index)
    return False


def _harmless_subscription(ds: Dataset, view: ListView, s: int) -> bool:
    # check 10 flags a customer's open invoices when the customer has subscriptions and
    # none is active: the deletion must not change that answer for the customer
    if s in ds.sub_kind:
        return False
    c = ds.sub_customer(s)
    if c in ds.inv_customer_override.values():
        return False
    before = [x for x in ds.subs_of_customer(c) if x not in view.deleted_set]
    after = [x for x in before if x != s]

    def flagged(subs: list[int]) -> bool:
        return bool(subs) and all(ds.sub_status(x) != "active" for x in subs)

    return flagged(before) == flagged(after)


def new_record(
    ds: Dataset, resource: str, ident: str, k: int, created_at: str
) -> tuple[dict[str, Any], str | None]:
    """A clean record to insert at the head of ``resource`` (k-th insert), and its status."""
    if resource == "payments":
        rec: dict[str, Any] = {
            "id": ident,
            "amountMinor": 1000 + k,
            "currency": "EUR",
            "status": "confirmed",
            "reference": f"DRIFT-{ident[4:].upper()}",
            "createdAt": created_at,
            "metadata": {"drift": True},
        }
        return rec, "confirmed"
    if resource == "refunds":
        pid = ds.payment_id(0) if ds.n else "pay_none"
        cur = ds.payment_plan(0).currency if ds.n else "EUR"
        rec = {
            "id": ident,
            "paymentId": pid,
            "amount": {"amountMinor": 100, "currency": cur},
            "status": "failed",
            "createdAt": created_at,
            "failureReason": "drift",
        }
        return rec, "failed"
    money = {"amountMinor": 1000 + k, "currency": "EUR"}
    if resource == "disputes":
        rec = {"id": ident, "amount": money, "status": "won", "reason": "duplicate"}
    elif resource == "subscriptions":
        # a customer of its own, with no invoices: no open invoice changes its finding
        rec = {"id": ident, "customerId": f"cus_{ident[4:]}", "priceId": None, "status": "active"}
    elif resource == "invoices":
        rec = {
            "id": ident,
            "customerId": f"cus_{ident[3:]}",
            "subscriptionId": None,
            "status": "paid",
            "amountDue": money,
        }
    elif resource == "payment_intents":
        rec = {
            "id": ident,
            "status": "succeeded",
            "captureMethod": "automatic",
            "amount": 1000 + k,
            "currency": "EUR",
        }
    else:
        raise KeyError(resource)
    rec["createdAt"] = created_at
    rec["metadata"] = {"inserted": True}
    return rec, None
