"""The breaks planted in the sandbox's books, each on its own clean payment, and the finding
each must produce (`Books.planted`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from recon.sandbox.ledger.model import (
    CURRENCIES,
    DAY,
    FAILED_REFUNDS,
    Generator,
    Row,
    iso,
)

__all__ = ["plan_breaks"]


def plan_breaks(g: Generator) -> dict[str, Any]:
    """Choose the payments each planted break goes on, and what the books say instead."""
    books = g.books
    drop_orders: set[str] = set()
    order_edits: dict[str, Row] = {}
    drop_refunds_of: set[int] = set()
    refund_edits: dict[str, Row] = {}
    extra_orders: list[Row] = []
    extra_refunds: list[Row] = []
    pay = g.payments

    def ref(i: int) -> str:
        return str(pay[i]["reference"])

    for i in g.pick("confirmed"):
        order_edits[ref(i)] = {"amount_minor": pay[i]["amountMinor"] + 1 + i % 97}
        books.plant("amount_mismatch", "ledger_amount_mismatch", "order", ref(i), "provider_short")
    for i in g.pick("confirmed"):
        other = [c for c in CURRENCIES if c != pay[i]["currency"]]
        order_edits[ref(i)] = {"currency": other[i % len(other)]}
        books.plant(
            "currency_mismatch", "ledger_currency_mismatch", "order", ref(i), "currency_mismatch"
        )
    for _ in range(g.k):
        new_ref = g.new_id("ORD-BOOKS-")
        extra_orders.append(_extra_order(g, new_ref, g.anchor - (6 + g.rng.randrange(20)) * DAY))
        books.plant(
            "order_missing_at_provider",
            "ledger_order_missing_at_provider",
            "order",
            new_ref,
            "no_payment",
        )
    for i in g.pick("confirmed"):
        drop_orders.add(ref(i))
        books.plant(
            "payment_missing_from_books",
            "ledger_payment_missing_from_books",
            "payment",
            pay[i]["id"],
            "not_in_books",
        )
    for _ in range(g.k):
        new_ref = g.new_id("ORD-NEW-")
        extra_orders.append(_extra_order(g, new_ref, g.anchor - timedelta(hours=3)))
        books.plant("awaiting_payment", "ledger_pending", "order", new_ref, "awaiting_payment")
    for i in g.pick("confirmed", young=True):
        drop_orders.add(ref(i))
        books.plant("awaiting_books", "ledger_pending", "payment", pay[i]["id"], "awaiting_books")
    for i in g.pick("confirmed"):
        order_edits[ref(i)] = {"status": "refunded"}
        books.plant(
            "books_refunded_provider_confirmed",
            "ledger_status_mismatch",
            "order",
            ref(i),
            "books_refunded_provider_confirmed",
        )
    for i in g.pick("confirmed"):  # a refund the books issued that never happened
        rid = g.new_id("re_books_")
        extra_refunds.append(_extra_refund(g, rid, pay[i], g.anchor - 5 * DAY))
        books.plant(
            "refund_not_executed",
            "ledger_refund_status",
            "payment",
            pay[i]["id"],
            "books_partially_refunded_provider_confirmed",
        )
        books.plant(
            "refund_not_executed",
            "ledger_refund_missing_at_provider",
            "refund",
            rid,
            "not_at_provider",
        )
    for i in g.pick("refunded", refunds="succeeded"):  # a refund the books never recorded
        drop_refunds_of.add(i)
        books.plant(
            "refund_not_recorded",
            "ledger_refund_status",
            "payment",
            pay[i]["id"],
            "books_confirmed_provider_refunded",
        )
        for r in g.refunds[i]:
            if r["status"] in FAILED_REFUNDS:
                continue
            books.plant(
                "refund_not_recorded",
                "ledger_refund_missing_from_books",
                "refund",
                r["id"],
                "not_in_books",
            )
    for i in g.pick("refunded", refunds="succeeded"):
        order_edits[ref(i)] = {"status": "confirmed"}
        books.plant(
            "books_confirmed_provider_refunded",
            "ledger_status_mismatch",
            "order",
            ref(i),
            "books_confirmed_provider_refunded",
        )
    for i in g.pick("partially_refunded", refunds="one-succeeded"):
        r = g.refunds[i][0]
        part = int(r["amount"]["amountMinor"])
        if part + 1 >= int(pay[i]["amountMinor"]):
            continue
        refund_edits[r["id"]] = {"amount_minor": part + 1}
        books.plant(
            "refund_amount_mismatch", "ledger_refund_mismatch", "refund", r["id"], "amount_mismatch"
        )
    for _ in range(g.k):
        rid = g.new_id("re_books_")
        ghost = {"id": g.new_id("pay_books_"), "currency": "EUR", "amountMinor": 5000}
        extra_refunds.append(_extra_refund(g, rid, ghost, g.anchor - 7 * DAY))
        books.plant(
            "refund_unknown_payment", "ledger_refund_unmatched", "refund", rid, "unknown_payment"
        )
        books.plant(
            "refund_unknown_payment",
            "ledger_refund_missing_at_provider",
            "refund",
            rid,
            "not_at_provider",
        )
    for i in g.pick("confirmed"):  # issued three hours ago: in flight, not a break
        rid = g.new_id("re_books_")
        extra_refunds.append(_extra_refund(g, rid, pay[i], g.anchor - timedelta(hours=3)))
        books.plant(
            "refund_in_flight", "ledger_pending", "payment", pay[i]["id"], "refund_in_flight"
        )
        books.plant("refund_in_flight", "ledger_pending", "refund", rid, "awaiting_provider")
    return {
        "drop_orders": drop_orders,
        "order_edits": order_edits,
        "drop_refunds_of": drop_refunds_of,
        "refund_edits": refund_edits,
        "extra_orders": extra_orders,
        "extra_refunds": extra_refunds,
    }


def _extra_order(g: Generator, ref: str, at: datetime) -> Row:
    return {
        "reference": ref,
        "order_id": "SO-" + ref.rsplit("-", 1)[-1],
        "amount_minor": 500 + g.rng.randrange(50_000),
        "currency": "EUR",
        "status": "confirmed",
        "created_at": iso(at),
    }


def _extra_refund(g: Generator, rid: str, payment: Row, at: datetime) -> Row:
    amount = int(payment["amountMinor"])
    return {
        "refund_id": rid,
        "payment_id": payment["id"],
        "reference": None,
        "amount_minor": 1 + g.rng.randrange(max(1, amount // 2)),
        "currency": payment["currency"],
        "created_at": iso(at),
    }
