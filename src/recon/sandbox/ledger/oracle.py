"""The ground truth of the ledger checks: a Python oracle of `sql/ledger/classify_*.sql`,
`sql/ledger/matches.sql` and `sql/checks/ledger_*.sql` over the sandbox's records (as
served) and its books.

SQL semantics as the loader types a record: an amount that is not a JSON integer is NULL,
a comparison with NULL is never true. A books row the loader refuses is not in the books.
`lists` says which assumed lists the provider offers: without the refunds list the by-id
refund checks are not evaluated (and the pending refunds not shown); without the invoices
list the invoice check is not. What stays — `ledger_refund_status` in particular — must
give the same verdicts either way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from iso4217 import Currency

from recon.sandbox.data import Dataset
from recon.sandbox.ledger.model import (
    FAILED_REFUNDS,
    INVOICE_STATUSES,
    PAYMENT_STATUSES,
    SETTLED,
    Books,
    Row,
    as_loaded,
    json_int,
    json_str,
    parse_time,
)
from recon.sandbox.ledger.rules import Matching, MatchParams, match_orders

__all__ = ["GRACE_HOURS", "LIST_CHECKS", "MatchParams", "ledger_links", "ledger_truth"]

GRACE_HOURS = 48
# The checks that need an assumed list besides payments (what `lists` switches off).
LIST_CHECKS = {
    "refunds": (
        "ledger_refund_missing_at_provider",
        "ledger_refund_mismatch",
        "ledger_refund_missing_from_books",
    ),
    "invoices": ("ledger_invoice_mismatch",),
}
_EXPONENT = {c.code: c.exponent for c in Currency}

Finding = dict[str, str]


def _amount(rec: Row, key: str) -> tuple[int | None, str | None]:
    m = rec.get(key)
    if isinstance(m, dict):
        return json_int(m.get("amountMinor")), json_str(m.get("currency"))
    return None, None


def _books_int(v: Any) -> int | None:
    """A books amount in minor units as the loader converts it (text: '1250', '1250.0')."""
    if v is None:
        return None
    text = str(v).strip()
    whole, _, frac = text.partition(".")
    digits = whole.lstrip("+-")
    if not digits.isdigit() or (frac and not frac.isdigit()) or frac.rstrip("0"):
        return None
    value = int(digits) * (-1 if whole.startswith("-") else 1)
    return None if value < 0 else value


def _books_currency(v: Any) -> str | None:
    code = str(v).strip().upper() if v is not None else ""
    return code if _EXPONENT.get(code) is not None else None


def _loaded_orders(rows: Iterable[Row]) -> dict[str, Row]:
    """The orders as loaded, by key: the reference, else the order_id."""
    out: dict[str, Row] = {}
    for r in rows:
        reference = (r.get("reference") or "").strip()
        ref = reference or (r.get("order_id") or "").strip()
        ok = (
            ref
            and _books_int(r.get("amount_minor")) is not None
            and _books_currency(r.get("currency"))
            and (r.get("status") or "").strip().lower() in PAYMENT_STATUSES
            and parse_time(r.get("created_at")) is not None
        )
        if ok and ref not in out:
            out[ref] = {
                "reference": reference or None,
                "payment_reference": (r.get("payment_reference") or "").strip() or None,
                "amount": _books_int(r["amount_minor"]),
                "currency": _books_currency(r["currency"]),
                "status": r["status"].strip().lower(),
                "created_at": parse_time(r["created_at"]),
            }
    return out


def _loaded_refunds(rows: Iterable[Row], source: str) -> list[Row]:
    out: list[Row] = []
    seen: set[str] = set()
    for n, r in enumerate(rows):
        rid = (r.get("refund_id") or "").strip() or None
        pid = (r.get("payment_id") or "").strip() or None
        ref = (r.get("reference") or "").strip() or None
        ok = (
            (pid or ref)
            and _books_int(r.get("amount_minor")) is not None
            and _books_currency(r.get("currency"))
            and parse_time(r.get("created_at")) is not None
        )
        if not ok or (rid is not None and rid in seen):
            continue
        if rid is not None:
            seen.add(rid)
        out.append(
            {
                "key": rid or f"{source}#{n + 2}",
                "refund_id": rid,
                "payment_id": pid,
                "reference": ref,
                "amount": _books_int(r["amount_minor"]),
                "currency": _books_currency(r["currency"]),
                "created_at": parse_time(r["created_at"]),
            }
        )
    return out


def ledger_truth(
    dataset: Dataset,
    books: Books,
    *,
    as_of: datetime,
    grace_hours: int = GRACE_HOURS,
    lists: Iterable[str] = ("refunds", "invoices"),
    refunds_source: str = "refunds.csv",
    params: MatchParams | None = None,
) -> list[Finding]:
    """Every finding the ledger checks must produce (sorted), given the lists offered and
    the matching settings."""
    params = params or MatchParams()
    offered = set(lists)
    young_after = as_of - timedelta(hours=grace_hours)
    out: list[Finding] = []

    def add(check: str, entity: str, entity_id: str, issue: str) -> None:
        out.append({"check": check, "entity": entity, "entity_id": entity_id, "issue_type": issue})

    def young(ts: datetime | None) -> bool:
        return ts is not None and ts > young_after

    payments = [as_loaded(p) for p in dataset.iter_records("payments")]
    by_id = {p["id"]: p for p in payments}
    by_ref: dict[str, list[Row]] = defaultdict(list)
    for p in payments:
        ref = json_str(p.get("reference"))
        if ref:
            by_ref[ref].append(p)
    orders = _loaded_orders(books.orders)
    refunds = _loaded_refunds(books.refunds, refunds_source)

    # -- orders and payments (sql/matching, sql/ledger/classify_*.sql) ----------------------
    m = match_orders(orders, payments, params)
    linked_ids = {p["id"] for _, ps in m.links.values() for p in ps}
    for key, o in orders.items():
        rule, ps = m.links.get(key, (None, []))
        settled = [p for p in ps if p.get("status") in SETTLED]
        kind = _order_kind(o, ps, settled, young(o["created_at"]), rule)
        checks = {
            "amount_mismatch": "ledger_amount_mismatch",
            "currency_mismatch": "ledger_currency_mismatch",
            "duplicate_charge": "ledger_duplicate_charge",
            "order_missing_at_provider": "ledger_order_missing_at_provider",
        }
        if kind in checks:
            add(checks[kind], "order", key, _order_issue(kind, o, ps, settled))
        elif kind == "awaiting_payment":
            add("ledger_pending", "order", key, "awaiting_payment")
        elif kind in ("matched", "split") and rule in ("amount_tolerance", "manual"):
            total = sum(json_int(p.get("amountMinor")) or 0 for p in settled)
            if total != o["amount"]:
                add("ledger_matched_within_tolerance", "order", key, rule)
        if settled:
            statuses = {p.get("status") for p in settled}
            agg = (
                statuses.pop()
                if len(statuses) == 1
                and statuses
                <= {
                    "confirmed",
                    "refunded",
                }
                else "partially_refunded"
            )
            if o["status"] != agg:
                add("ledger_status_mismatch", "order", key, f"books_{o['status']}_provider_{agg}")
    _carts(add, m, orders)
    for key, tops in m.proposals.items():
        unique = len(tops) == 1 and tops[0][2] == 1
        add("ledger_suggested_match", "order", key, "suggested" if unique else "ambiguous")
    for p in payments:
        if p.get("status") not in SETTLED or p["id"] in linked_ids:
            continue
        created = parse_time(p.get("createdAt"))
        if young(created):
            add("ledger_pending", "payment", p["id"], "awaiting_books")
        else:
            ref = json_str(p.get("reference"))
            add(
                "ledger_payment_missing_from_books",
                "payment",
                p["id"],
                "not_in_books" if ref else "no_reference",
            )

    # -- refunds (ledger_refund_matches, ledger_payment_refunds) ------------------------
    provider = {r["id"]: as_loaded(r, "amount") for r in dataset.iter_records("refunds")}
    resolved = [(r, *_resolve(r, by_id, by_ref)) for r in refunds]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # n, total, settled
    for r, pid, how in resolved:
        pay = by_id.get(pid) if pid else None
        if how in ("unknown_payment", "ambiguous_reference"):
            add("ledger_refund_unmatched", "refund", r["key"], how)
        elif pay is None or r["currency"] != json_str(pay.get("currency")):
            add("ledger_refund_unmatched", "refund", r["key"], "currency_mismatch")
        if pid is not None:
            t = totals[pid]
            t[0] += 1
            if pay is not None and r["currency"] == json_str(pay.get("currency")):
                t[1] += r["amount"]
                t[2] += 0 if young(r["created_at"]) else r["amount"]
    for p in payments:
        amount = json_int(p.get("amountMinor"))
        status = p.get("status")
        if status not in SETTLED or amount is None:
            continue
        if p["id"] not in totals and p["id"] not in linked_ids:
            continue
        _, total, settled_total = totals.get(p["id"], [0, 0, 0])
        expected = _expected(total, amount)
        if expected == status:
            continue
        if settled_total != total and _expected(settled_total, amount) == status:
            add("ledger_pending", "payment", p["id"], "refund_in_flight")
        elif expected == "over_refunded":
            add("ledger_refund_status", "payment", p["id"], "books_over_refunded")
        else:
            add("ledger_refund_status", "payment", p["id"], f"books_{expected}_provider_{status}")

    if "refunds" in offered:
        _refunds_by_id(add, resolved, provider, by_id, linked_ids, refunds, young)
    if "invoices" in offered:
        _invoices(add, dataset, books)
    out.sort(key=lambda f: (f["check"], f["entity"], f["entity_id"], f["issue_type"]))
    return out


def _order_kind(
    o: Row, ps: list[Row], settled: list[Row], is_young: bool, rule: str | None = None
) -> str:
    if o["status"] not in SETTLED:
        return "unexpected_payment" if settled else "not_payable"
    if not settled:
        return "awaiting_payment" if is_young else "order_missing_at_provider"
    currencies = {json_str(p.get("currency")) or "" for p in settled}
    if len(currencies) > 1 or json_str(settled[0].get("currency")) != o["currency"]:
        return "currency_mismatch"
    if rule == "payment_reference":
        return "cart"
    amounts = [json_int(p.get("amountMinor")) for p in settled]
    total = None if None in amounts else sum(a for a in amounts if a is not None)
    if total == o["amount"] or (rule in ("amount_tolerance", "manual") and total is not None):
        return "split" if len(settled) > 1 else "matched"
    smallest = min((a for a in amounts if a is not None), default=None)
    if (
        len(settled) > 1
        and total is not None
        and smallest is not None
        and total - smallest >= o["amount"]
    ):
        return "duplicate_charge"
    return "amount_mismatch"


def _carts(add: Any, m: Matching, orders: dict[str, Row]) -> None:
    """A cart whose orders add up to its payment only within the tolerance: the difference
    is shown on its last order (by key)."""
    carts: dict[str, list[str]] = defaultdict(list)
    for key, (rule, ps) in m.links.items():
        if rule == "payment_reference":
            carts[ps[0]["id"]].append(key)
    for keys in carts.values():
        rule, ps = m.links[keys[0]]
        amount = json_int(ps[0].get("amountMinor"))
        total = sum(orders[k]["amount"] for k in keys)
        if (
            amount is not None
            and amount != total
            and ps[0].get("currency") == orders[keys[0]]["currency"]
        ):
            add("ledger_matched_within_tolerance", "order", max(keys), "payment_reference")


def ledger_links(
    dataset: Dataset, books: Books, params: MatchParams | None = None
) -> set[tuple[str, str, str]]:
    """Every (order key, payment id, rule) the matching rules must link."""
    payments = [as_loaded(p) for p in dataset.iter_records("payments")]
    m = match_orders(_loaded_orders(books.orders), payments, params or MatchParams())
    return {(key, p["id"], rule) for key, (rule, ps) in m.links.items() for p in ps}


def _order_issue(kind: str, o: Row, ps: list[Row], settled: list[Row]) -> str:
    if kind == "amount_mismatch":
        amounts = [json_int(p.get("amountMinor")) for p in settled]
        if None in amounts:
            return "provider_amount_unknown"
        total = sum(a for a in amounts if a is not None)
        return "provider_short" if total < o["amount"] else "provider_over"
    if kind == "order_missing_at_provider":
        return "no_payment" if not ps else "not_settled"
    return kind


def _resolve(r: Row, by_id: dict[str, Row], by_ref: dict[str, list[Row]]) -> tuple[str | None, str]:
    if r["payment_id"] is not None:
        return (
            (r["payment_id"], "payment_id")
            if r["payment_id"] in by_id
            else (None, "unknown_payment")
        )
    ps = by_ref.get(r["reference"] or "", [])
    settled = [p for p in ps if p.get("status") in SETTLED]
    if not ps:
        return None, "unknown_payment"
    if len(settled) == 1:
        return settled[0]["id"], "reference"
    if not settled and len(ps) == 1:
        return ps[0]["id"], "reference"
    return None, "ambiguous_reference"


def _expected(total: int, amount: int) -> str:
    if total == 0:
        return "confirmed"
    if total < amount:
        return "partially_refunded"
    return "refunded" if total == amount else "over_refunded"


def _refunds_by_id(
    add: Any,
    resolved: list[tuple[Row, str | None, str]],
    provider: dict[str, Row],
    by_id: dict[str, Row],
    linked_ids: set[str],
    refunds: list[Row],
    young: Any,
) -> None:
    for r, pid, _ in resolved:
        rid = r["refund_id"]
        if rid is None:
            continue
        pr = provider.get(rid)
        if pr is None:
            if young(r["created_at"]):
                add("ledger_pending", "refund", r["key"], "awaiting_provider")
            else:
                add("ledger_refund_missing_at_provider", "refund", r["key"], "not_at_provider")
            continue
        amount, cur = _amount(pr, "amount")
        if str(pr.get("status") or "").lower() in FAILED_REFUNDS:
            add("ledger_refund_mismatch", "refund", r["key"], "failed_at_provider")
        if cur == r["currency"] and amount != r["amount"]:
            add("ledger_refund_mismatch", "refund", r["key"], "amount_mismatch")
        if cur != r["currency"]:
            add("ledger_refund_mismatch", "refund", r["key"], "currency_mismatch")
        books_payment = pid if pid is not None else r["payment_id"]
        if books_payment is not None and books_payment != json_str(pr.get("paymentId")):
            add("ledger_refund_mismatch", "refund", r["key"], "payment_mismatch")
    if not any(r["refund_id"] for r in refunds):
        return  # evaluable_when: the books carry no refund ids
    books_ids = {r["refund_id"] for r in refunds if r["refund_id"]}
    for rid, pr in provider.items():
        if str(pr.get("status") or "").lower() in FAILED_REFUNDS or rid in books_ids:
            continue
        pay = by_id.get(json_str(pr.get("paymentId")) or "")
        if pay is None or pay["id"] not in linked_ids:
            continue
        if young(parse_time(pr.get("createdAt"))):
            add("ledger_pending", "refund", rid, "awaiting_books")
        else:
            add("ledger_refund_missing_from_books", "refund", rid, "not_in_books")


def _invoices(add: Any, dataset: Dataset, books: Books) -> None:
    provider = {v["id"]: as_loaded(v, "amountDue") for v in dataset.iter_records("invoices")}
    seen: set[str] = set()
    for b in books.invoices:
        iid = (b.get("invoice_id") or "").strip()
        amount = _books_int(b.get("amount_minor"))
        cur = _books_currency(b.get("currency"))
        status = (b.get("status") or "").strip().lower()
        if not iid or amount is None or not cur or status not in INVOICE_STATUSES or iid in seen:
            continue
        seen.add(iid)
        v = provider.get(iid)
        if v is None:
            add("ledger_invoice_mismatch", "invoice", iid, "not_at_provider")
            continue
        p_amount, p_cur = _amount(v, "amountDue")
        if p_cur == cur and p_amount != amount:
            add("ledger_invoice_mismatch", "invoice", iid, "amount_mismatch")
        if p_cur != cur:
            add("ledger_invoice_mismatch", "invoice", iid, "currency_mismatch")
        if json_str(v.get("status")) != status:
            add("ledger_invoice_mismatch", "invoice", iid, "status_mismatch")
        customer = (b.get("customer_id") or "").strip() or None
        if customer is not None and json_str(v.get("customerId")) != customer:
            add("ledger_invoice_mismatch", "invoice", iid, "customer_mismatch")


def truth_part(dataset: Dataset, books: Books, as_of: datetime) -> dict[str, Any]:
    """The `ledger` part of `recon sandbox truth`: what the books plant and what the ledger
    checks must find, with every list offered (`findings`) and with only the lists the spec
    shows (`findings_spec_only`, the sandbox's `strict` profile)."""
    return {
        "grace_hours": GRACE_HOURS,
        "counts": {
            "orders": len(books.orders),
            "refunds": len(books.refunds),
            "invoices": len(books.invoices),
        },
        "rejects": dict(books.rejects),
        "splits": list(books.splits),
        "list_checks": {k: list(v) for k, v in LIST_CHECKS.items()},
        "cases": list(books.cases),
        "links": sorted(ledger_links(dataset, books)),
        "findings": ledger_truth(dataset, books, as_of=as_of),
        "findings_spec_only": ledger_truth(dataset, books, as_of=as_of, lists=()),
        "planted": [p.as_dict() for p in books.planted],
    }
