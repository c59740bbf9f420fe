"""The merchant's books for a sandbox data set, with planted breaks (`recon sandbox ledger`).

The books agree with the sandbox's records, as a shop's would: one order per payment
reference (amount, currency and status as the provider has them), every refund the
provider counts recorded with its id (one in four by the order's reference instead of the
payment id), every invoice expected. Then breaks of every kind the ledger checks look for
are planted, each on its own clean payment (`planted`). A few malformed rows are added
that the loader must refuse (`rejects`), on references of their own.

Built only on `Dataset`'s public face (`payment`, `refunds_of`, `record`, `count`,
`planted`), deterministic from the data set's seed. Everything is relative to the anchor:
planted breaks are at least five days old, planted pending items a few hours old, so a run
at any time during the anchor's day sees the same verdicts (grace 48 h).
"""

from __future__ import annotations

from datetime import timedelta

from recon.sandbox.data import Dataset
from recon.sandbox.ledger.matching import plan_matching
from recon.sandbox.ledger.model import (
    CURRENCIES,
    DAY,
    FAILED_REFUNDS,
    INVOICE_STATUSES,
    PAYMENT_STATUSES,
    SETTLED,
    Books,
    Generator,
    Row,
    currency_or,
    iso,
    parse_time,
    whole,
)
from recon.sandbox.ledger.planting import plan_breaks

__all__ = ["make_books"]


def make_books(dataset: Dataset) -> Books:
    """The books of `dataset` with breaks of every kind planted (deterministic)."""
    g = Generator(dataset)
    books = g.books
    plans = plan_breaks(g)
    matching = plan_matching(g)
    drop_orders: set[str] = plans["drop_orders"] | matching["drop_orders"]
    order_edits: dict[str, Row] = {**plans["order_edits"], **matching["order_edits"]}
    drop_refunds_of: set[int] = plans["drop_refunds_of"]
    refund_edits: dict[str, Row] = plans["refund_edits"]
    for ref, indexes in g.by_ref.items():
        if ref in drop_orders:
            continue
        books.orders.append({**_order(g, ref, indexes), **order_edits.get(ref, {})})
    for i, p in enumerate(g.payments):
        if i in drop_refunds_of:
            continue
        single = len(g.by_ref.get(p.get("reference") or "", [])) == 1
        for n, r in enumerate(g.refunds[i]):
            if r["status"] in FAILED_REFUNDS:
                continue
            amount, cur = r.get("amount") or {}, None
            value = whole(amount.get("amountMinor")) if isinstance(amount, dict) else None
            cur = amount.get("currency") if isinstance(amount, dict) else None
            by_reference = single and n % 4 == 3
            row = {
                "refund_id": r["id"],
                "payment_id": None if by_reference else p["id"],
                "reference": p.get("reference") if by_reference else None,
                "amount_minor": value if value is not None else 0,
                "currency": currency_or(cur, currency_or(p.get("currency"))),
                "created_at": r["createdAt"],
            }
            books.refunds.append({**row, **refund_edits.get(r["id"], {})})
    books.refunds.extend(plans["extra_refunds"])
    books.orders.extend(plans["extra_orders"])
    books.orders.extend(matching["extra_orders"])
    _invoices(g)
    _malformed(g)
    return books


def _order(g: Generator, ref: str, indexes: list[int]) -> Row:
    """The order behind the payments with reference `ref` (the oldest one's, normally)."""
    ps = [g.payments[i] for i in indexes]
    first = ps[-1]  # the oldest (index order is newest first)
    amount = whole(first.get("amountMinor")) or 0
    status = first.get("status") if first.get("status") in PAYMENT_STATUSES else "confirmed"
    created = parse_time(first.get("createdAt")) or g.anchor
    if len(ps) > 1:
        settled = [p for p in ps if p.get("status") in SETTLED]
        amounts = [whole(p.get("amountMinor")) for p in settled]
        same = len({p.get("currency") for p in settled}) == 1
        if len(settled) == len(ps) and same and None not in amounts:
            parts = [a for a in amounts if a is not None]
            split = g.twice % 2 == 1  # the order paid in parts, or charged twice
            g.twice += 1
            amount = sum(parts) if split else max(parts)
            kind = "split_payment" if split else "duplicate_charge"
            statuses = {p.get("status") for p in settled}
            status = statuses.pop() if len(statuses) == 1 else "partially_refunded"
            if split:
                g.books.splits.append(ref)
            else:
                g.books.plant(kind, "ledger_duplicate_charge", "order", ref, "duplicate_charge")
    return {
        "reference": ref,
        "order_id": "SO-" + ref.rsplit("-", 1)[-1],
        "amount_minor": amount,
        "currency": currency_or(first.get("currency")),
        "status": status,
        "created_at": iso(created - timedelta(minutes=2)),
    }


def _invoices(g: Generator) -> None:
    books, ds = g.books, g.ds
    clean: list[int] = []
    for v in range(ds.count("invoices")):
        inv = ds.record("invoices", v)
        raw_due = inv.get("amountDue")
        due: Row = raw_due if isinstance(raw_due, dict) else {}
        amount = whole(due.get("amountMinor"))
        row = {
            "invoice_id": inv["id"],
            "customer_id": inv.get("customerId"),
            "amount_minor": amount if amount is not None else 0,
            "currency": currency_or(due.get("currency")),
            "status": inv.get("status") if inv.get("status") in INVOICE_STATUSES else "open",
        }
        books.invoices.append(row)
        if (
            inv["id"] not in g.sandbox_planted
            and isinstance(due.get("amountMinor"), int)
            and due.get("currency") in CURRENCIES
            and inv.get("status") in ("open", "paid")
        ):
            clean.append(len(books.invoices) - 1)
    chosen = g.rng.sample(clean, min(2 * g.k, len(clean)))
    for n, at in enumerate(chosen):
        row = books.invoices[at]
        if n % 2 == 0:
            row["amount_minor"] = int(row["amount_minor"]) + 100
            issue = "amount_mismatch"
        else:
            row["status"] = "void"
            issue = "status_mismatch"
        books.plant(
            f"invoice_{issue}", "ledger_invoice_mismatch", "invoice", row["invoice_id"], issue
        )
    for _ in range(g.k):
        iid = g.new_id("in_books_")
        books.invoices.append(
            {
                "invoice_id": iid,
                "customer_id": None,
                "amount_minor": 2500,
                "currency": "EUR",
                "status": "open",
            }
        )
        books.plant(
            "invoice_not_at_provider", "ledger_invoice_mismatch", "invoice", iid, "not_at_provider"
        )


def _malformed(g: Generator) -> None:
    """Rows the loader must refuse (with their reason), on references nobody else uses."""
    old = iso(g.anchor - 9 * DAY)
    bad_orders: list[Row] = [
        {
            "reference": "",
            "order_id": "",  # neither: the order cannot be known
            "amount_minor": 100,
            "currency": "EUR",
            "status": "confirmed",
            "created_at": old,
        },
        {
            "reference": g.new_id("ORD-BAD-"),
            "order_id": "SO-BAD2",
            "amount_minor": "12.5",
            "currency": "EUR",
            "status": "confirmed",
            "created_at": old,
        },
        {
            "reference": g.new_id("ORD-BAD-"),
            "order_id": "SO-BAD3",
            "amount_minor": 100,
            "currency": "EURO",
            "status": "confirmed",
            "created_at": old,
        },
    ]
    g.books.orders.extend(bad_orders)
    g.books.refunds.append(
        {
            "refund_id": g.new_id("re_bad_"),
            "payment_id": None,
            "reference": None,
            "amount_minor": 100,
            "currency": "EUR",
            "created_at": old,
        }
    )
    g.books.rejects.update(orders=len(bad_orders), refunds=1, invoices=0)
