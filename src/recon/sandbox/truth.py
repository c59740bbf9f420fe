"""The ground truth: a Python oracle of checks 2-17 and 21 of docs/architecture.md.

It reads the generated records exactly as they are served (JSON values, nothing from the
generator's internals) and applies the rules with SQL semantics: a value of the wrong JSON
type is NULL, and a comparison with NULL is never true. Like the loader, it upper-cases
currency codes and lower-cases status values first. ``as_of`` is the anchor + 12 h,
``stuck_days`` 7 and the refund grace 48 h, with the default failed refund statuses.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson
from iso4217 import Currency

from recon.sandbox.data import DISPUTE_STATUSES, LIST_RESOURCES, PAYMENT_STATUSES, Dataset
from recon.sandbox.ledger import make_books, truth_part

__all__ = [
    "DEFAULT_FAILED_STATUSES",
    "REFUND_GRACE_HOURS",
    "STUCK_DAYS",
    "compute_findings",
    "truth",
    "truth_json",
]

DEFAULT_FAILED_STATUSES = frozenset({"failed", "canceled", "cancelled", "rejected", "reversed"})
STUCK_DAYS = 7
REFUND_GRACE_HOURS = 48

_ISO_CODES = frozenset(c.code for c in Currency)

KNOWN_STATUS: dict[str, frozenset[str]] = {
    "payment": frozenset(PAYMENT_STATUSES),
    "refund": frozenset(
        {"pending", "succeeded", "failed", "canceled", "cancelled", "rejected", "reversed"}
    ),
    "payment_intent": frozenset(
        {
            "requires_payment_method",
            "requires_action",
            "requires_capture",
            "processing",
            "succeeded",
            "cancelled",
        }
    ),
    "subscription": frozenset(
        {
            "active",
            "trialing",
            "past_due",
            "unpaid",
            "paused",
            "canceled",
            "cancelled",
            "incomplete",
            "incomplete_expired",
        }
    ),
    "invoice": frozenset({"draft", "open", "paid", "void", "uncollectible"}),
    "dispute": frozenset(DISPUTE_STATUSES),
}
_INTENT_FINAL = frozenset({"succeeded", "cancelled"})

Finding = dict[str, str]


def _status(v: Any) -> Any:
    """What the loader makes of a status: lower case (a non-string is left as it is)."""
    return v.lower() if isinstance(v, str) else v


def _code(v: Any) -> Any:
    """What the loader makes of a currency code: upper case."""
    return v.upper() if isinstance(v, str) else v


def _int(v: Any) -> int | None:
    """A JSON integer, else None (what the loader does with a wrong JSON type)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _money(rec: dict[str, Any], key: str) -> tuple[Any, Any]:
    m = rec.get(key)
    if isinstance(m, dict):
        return m.get("amountMinor"), _code(m.get("currency"))
    return None, None


def _ts(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        return datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None


def _bucket(days: int) -> str:
    if days < 0:
        return "not yet due"
    if days <= 30:
        return "0-30"
    if days <= 60:
        return "31-60"
    if days <= 90:
        return "61-90"
    return "90+"


def compute_findings(
    records: dict[str, list[dict[str, Any]]],
    *,
    as_of: datetime,
    stuck_days: int = STUCK_DAYS,
    failed_statuses: frozenset[str] = DEFAULT_FAILED_STATUSES,
    refund_grace_hours: int = REFUND_GRACE_HOURS,
) -> list[Finding]:
    """Checks 2-17 and 21 over the live records of each resource (JSON objects each)."""
    out: list[Finding] = []

    def add(check: str, entity: str, entity_id: str, issue: str) -> None:
        out.append({"check": check, "entity": entity, "entity_id": entity_id, "issue_type": issue})

    payments = records.get("payments", [])
    refunds = records.get("refunds", [])
    pay_by_id = {p["id"]: p for p in payments}
    counted = [r for r in refunds if str(r.get("status", "")).lower() not in failed_statuses]

    # Counted totals in the payment's currency; `young`: pending refunds younger than the
    # grace, whose verdict waits (a status that fits the total without them is no error).
    young_after = as_of - timedelta(hours=refund_grace_hours)
    totals: dict[str, int] = defaultdict(int)
    young: dict[str, int] = defaultdict(int)
    young_count: dict[str, int] = defaultdict(int)
    for r in counted:
        amount, cur = _money(r, "amount")
        p = pay_by_id.get(r.get("paymentId"))
        if p is None or cur != _code(p.get("currency")):
            continue
        # Only a pending refund has an age that matters (parsing every date is slow).
        is_young = False
        if _status(r.get("status")) == "pending":
            created = _ts(r.get("createdAt"))
            is_young = created is not None and created > young_after
        young_count[p["id"]] += is_young
        a = _int(amount)
        if a is not None:
            totals[p["id"]] += a
            young[p["id"]] += a if is_young else 0

    for p in payments:
        pid = p["id"]
        amount = _int(p.get("amountMinor"))
        total = totals.get(pid, 0)
        settled = total - young.get(pid, 0)
        status = _status(p.get("status"))
        if young_count.get(pid):
            add("refund_in_flight", "payment", pid, "refund_in_flight")
        if amount is None:
            if status == "confirmed" and total > 0 and settled > 0:
                add("confirmed_with_refunds", "payment", pid, "confirmed_with_refunds")
            continue
        if status == "refunded" and amount not in (total, settled):
            kind = "refunded_short" if total < amount else "refunded_over"
            add("refunded_amount_mismatch", "payment", pid, kind)
        if status == "partially_refunded" and not (0 < total < amount or 0 < settled < amount):
            if total <= 0:
                kind = "partial_without_refund"
            elif total == amount:
                kind = "partial_but_full"
            else:
                kind = "partial_over"
            add("partially_refunded_out_of_range", "payment", pid, kind)
        if status == "confirmed" and total > 0 and settled > 0:
            add("confirmed_with_refunds", "payment", pid, "confirmed_with_refunds")
        if total > amount and settled > amount:
            add("over_refunded", "payment", pid, "over_refunded")

    for r in counted:
        pay = pay_by_id.get(r.get("paymentId"))
        _, cur = _money(r, "amount")
        if pay is None:
            add("refund_unknown_payment", "refund", r["id"], "unknown_payment")
            continue
        if cur != _code(pay.get("currency")):
            add("refund_currency_mismatch", "refund", r["id"], "currency_mismatch")
        if _status(pay.get("status")) in ("created", "pending", "cancelled", "expired"):
            add("refund_on_unrefundable_payment", "refund", r["id"], "unrefundable_payment_state")

    # invoices
    invoices = records.get("invoices", [])
    subs_by_customer: dict[Any, list[Any]] = defaultdict(list)
    for s in records.get("subscriptions", []):
        subs_by_customer[s.get("customerId")].append(_status(s.get("status")))
    as_of_date = as_of.astimezone(UTC).date()
    have_subs = "subscriptions" in records
    for v in invoices:
        if _status(v.get("status")) != "open":
            continue
        vid = v["id"]
        due = v.get("dueDate")
        days = 0
        if isinstance(due, str):
            try:
                days = (as_of_date - date.fromisoformat(due)).days
            except ValueError:
                days = 0
        add("open_invoices", "invoice", vid, _bucket(days))
        subs = subs_by_customer.get(v.get("customerId"), [])
        if have_subs and subs and "active" not in subs:
            add("open_invoice_inactive_subscription", "invoice", vid, "inactive_subscription")
        amount, _ = _money(v, "amountDue")
        a = _int(amount)
        if a is not None and a <= 0:
            add("open_invoice_nonpositive_amount", "invoice", vid, "nonpositive_amount_due")

    # disputes on refunded payments
    for d in records.get("disputes", []):
        pay = pay_by_id.get(d.get("paymentId"))
        if pay is not None and _status(pay.get("status")) in ("refunded", "partially_refunded"):
            add("dispute_on_refunded_payment", "dispute", d["id"], "dispute_on_refunded_payment")

    # duplicate references
    refs: dict[str, int] = defaultdict(int)
    for p in payments:
        ref = p.get("reference")
        if isinstance(ref, str) and ref:
            refs[ref] += 1
    for p in payments:
        ref = p.get("reference")
        if isinstance(ref, str) and ref and refs[ref] > 1:
            add("duplicate_payment_reference", "payment", p["id"], "duplicate_reference")

    # impossible amounts and unknown statuses
    amount_of: dict[str, tuple[str, Callable[[dict[str, Any]], tuple[Any, Any]]]] = {
        "payment": ("payments", lambda r: (r.get("amountMinor"), _code(r.get("currency")))),
        "refund": ("refunds", lambda r: _money(r, "amount")),
        "invoice": ("invoices", lambda r: _money(r, "amountDue")),
        "dispute": ("disputes", lambda r: _money(r, "amount")),
        "payment_intent": (
            "payment_intents",
            lambda r: (r.get("amount"), _code(r.get("currency"))),
        ),
    }
    for entity, (res, get) in amount_of.items():
        for rec in records.get(res, []):
            amount, cur = get(rec)
            a = _int(amount)
            if a is None:
                add("impossible_amounts", entity, rec["id"], "non_integer_amount")
            elif a < 0:
                add("impossible_amounts", entity, rec["id"], "negative_amount")
            if not (isinstance(cur, str) and cur in _ISO_CODES):
                add("impossible_amounts", entity, rec["id"], "invalid_currency")
    status_res = {
        "payment": "payments",
        "refund": "refunds",
        "payment_intent": "payment_intents",
        "subscription": "subscriptions",
        "invoice": "invoices",
        "dispute": "disputes",
    }
    for entity, res in status_res.items():
        known = KNOWN_STATUS[entity] | (failed_statuses if entity == "refund" else frozenset())
        for rec in records.get(res, []):
            if _status(rec.get("status")) not in known:
                add("unknown_status", entity, rec["id"], "unknown_status")

    # stuck non-final records
    cutoff = as_of - timedelta(days=stuck_days)
    stuck_sets = (
        ("payment", "payments", lambda s: s in ("created", "pending")),
        ("refund", "refunds", lambda s: s == "pending"),
        (
            "payment_intent",
            "payment_intents",
            lambda s: s in KNOWN_STATUS["payment_intent"] and s not in _INTENT_FINAL,
        ),
    )
    for entity, res, is_open in stuck_sets:
        for rec in records.get(res, []):
            status = _status(rec.get("status"))
            if not is_open(status):
                continue
            created = _ts(rec.get("createdAt"))
            if created is not None and created < cutoff:
                add("stuck_non_final", entity, rec["id"], f"stuck_{status}")

    for rec in records.get("payment_intents", []):
        a = _int(rec.get("amount"))
        if a is not None and a < 0:
            add("intent_negative_amount", "payment_intent", rec["id"], "negative_amount")

    out.sort(key=lambda f: (f["check"], f["entity"], f["entity_id"], f["issue_type"]))
    return out


def truth(dataset: Dataset) -> dict[str, Any]:
    """The ground truth of a generated data set (as ``recon sandbox truth`` prints it)."""
    records = {res: list(dataset.iter_records(res)) for res in _RESOURCES}
    as_of = dataset.anchor + timedelta(hours=12)
    findings = compute_findings(records, as_of=as_of)
    counts = {res: len(recs) for res, recs in records.items()}
    return {
        "seed": dataset.seed,
        "payments": dataset.n,
        "anchor": dataset.anchor.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "as_of": as_of.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "stuck_days": STUCK_DAYS,
        "refund_grace_hours": REFUND_GRACE_HOURS,
        "counts": counts,
        "findings": findings,
        "planted": [p.as_dict() for p in dataset.planted()],
        "ledger": truth_part(
            dataset, make_books(dataset), as_of
        ),  # the books (recon.sandbox.ledger)
    }


_RESOURCES = LIST_RESOURCES


def truth_json(dataset: Dataset) -> bytes:
    """The truth as canonical JSON bytes (sorted keys, newline-terminated)."""
    return orjson.dumps(truth(dataset), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
