"""The matching cases planted in the sandbox's books, each on its own clean payment: what
only a rule beyond the exact reference matches, and what only a proposal can pair.

    reference_case    the order's reference in lower case: rule normalised_reference
    reference_hash    the order's reference as `#REF`: matched only with the pattern
                      `[ledger.match] books_reference = "^#?(.*)$"`, else proposed
    within_tolerance  the order 2 minor units above its payment: rule amount_tolerance with
                      RECON_LEDGER_TOLERANCE_MINOR >= 2, else an amount mismatch
    beyond_tolerance  50 minor units above: an amount mismatch under a tolerance of 5
    cart              two or three orders paid by one payment (payment_reference): N:1
    no_reference      an order without a reference (order_id only) with exactly one
                      counterpart: a suggested match
    tie               two orders without a reference, both as good a match for one payment:
                      ambiguous, both listed, none proposed

`Books.cases` lists them (what `recon sandbox truth` shows under `ledger.cases`).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from recon.sandbox.ledger.model import Generator, Row, iso, parse_time

__all__ = ["plan_matching"]


def plan_matching(g: Generator) -> dict[str, Any]:
    """Choose the payments of the matching cases; what the books say for them."""
    pay = g.payments
    drop: set[str] = set()
    edits: dict[str, Row] = {}
    extra: list[Row] = []
    cases = g.books.cases
    # a payment whose (currency, amount) no other payment has: its proposal is unambiguous
    same = Counter((p.get("currency"), p.get("amountMinor")) for p in pay)

    def unique(i: int) -> bool:
        return same[(pay[i].get("currency"), pay[i].get("amountMinor"))] == 1

    def ref(i: int) -> str:
        return str(pay[i]["reference"])

    def at(i: int) -> str:
        created = parse_time(pay[i].get("createdAt")) or g.anchor
        return iso(created - timedelta(minutes=2))

    for i in g.pick("confirmed"):
        edits[ref(i)] = {"reference": ref(i).lower()}
        cases.append(_case("reference_case", "normalised_reference", ref(i).lower(), [pay[i]]))
    for i in g.pick("confirmed", where=unique):
        edits[ref(i)] = {"reference": "#" + ref(i)}
        cases.append(
            _case(
                "reference_hash",
                "normalised_reference",
                "#" + ref(i),
                [pay[i]],
                needs='[ledger.match] books_reference = "^#?(.*)$"; else suggested',
            )
        )
    for i in g.pick("confirmed"):
        edits[ref(i)] = {"amount_minor": int(pay[i]["amountMinor"]) + 2}
        cases.append(
            _case(
                "within_tolerance",
                "amount_tolerance",
                ref(i),
                [pay[i]],
                needs="RECON_LEDGER_TOLERANCE_MINOR >= 2; else an amount mismatch",
            )
        )
    for i in g.pick("confirmed"):
        edits[ref(i)] = {"amount_minor": int(pay[i]["amountMinor"]) + 50}
        cases.append(_case("beyond_tolerance", None, ref(i), [pay[i]]))
    for n, i in enumerate(g.pick("confirmed")):
        drop.add(ref(i))
        amount = int(pay[i]["amountMinor"])
        parts = [amount // 3, amount // 3] if n % 2 else [amount // 2]
        parts.append(amount - sum(parts))
        keys = []
        for part in parts:
            key = g.new_id("ORD-CART-")
            keys.append(key)
            extra.append(_order(g, key, part, pay[i], at(i), payment_reference=ref(i)))
        for key in keys:
            cases.append(_case("cart", "payment_reference", key, [pay[i]]))
    for i in g.pick("confirmed", where=unique):
        drop.add(ref(i))
        key = "SO-NOREF-" + g.new_id("")
        extra.append(_order(g, None, int(pay[i]["amountMinor"]), pay[i], at(i), order_id=key))
        cases.append(_case("no_reference", "suggested_match", key, [pay[i]]))
        g.books.plant("no_reference", "ledger_suggested_match", "order", key, "suggested")
    for i in g.pick("confirmed", where=unique):
        drop.add(ref(i))
        for _ in range(2):
            key = "SO-TIE-" + g.new_id("")
            extra.append(_order(g, None, int(pay[i]["amountMinor"]), pay[i], at(i), order_id=key))
            cases.append(_case("tie", None, key, [pay[i]]))
            g.books.plant("tie", "ledger_suggested_match", "order", key, "ambiguous")
    return {"drop_orders": drop, "order_edits": edits, "extra_orders": extra}


def _case(
    case: str, rule: str | None, order: str, payments: list[Row], needs: str | None = None
) -> dict[str, Any]:
    return {
        "case": case,
        "rule": rule,
        "order": order,
        "payments": [p["id"] for p in payments],
        **({"needs": needs} if needs else {}),
    }


def _order(
    g: Generator,
    reference: str | None,
    amount: int,
    payment: Row,
    created_at: str,
    *,
    order_id: str | None = None,
    payment_reference: str | None = None,
) -> Row:
    return {
        "reference": reference,
        "order_id": order_id or ("SO-" + str(reference).rsplit("-", 1)[-1]),
        "payment_reference": payment_reference,
        "amount_minor": amount,
        "currency": payment["currency"],
        "status": "confirmed",
        "created_at": created_at,
    }
