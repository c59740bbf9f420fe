"""The oracle of sql/matching's rules over the sandbox's books and records: which orders the
rules link to which payments, by which rule, and what the proposals offer the rest (the
ground truth `recon.sandbox.ledger.oracle` classifies).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from recon.sandbox.ledger.model import SETTLED, Row, json_int, json_str, parse_time

__all__ = ["MatchParams", "Matching", "match_orders"]


@dataclass(frozen=True)
class MatchParams:
    """The matching settings the truth is computed under (recon's defaults)."""

    tolerance_minor: int = 0
    tolerance_bps: int = 0
    window_days: int = 3
    books_pattern: str | None = None
    provider_pattern: str | None = None

    def tolerance(self, amount: int) -> int:
        return max(self.tolerance_minor, (abs(amount) * self.tolerance_bps) // 10000)


@dataclass
class Matching:
    links: dict[str, tuple[str, list[Row]]]  # order key -> (rule, live payments)
    proposals: dict[str, list[tuple[str, int, int]]]  # order key -> (payment id, score, rivals)


def _reference_key(reference: str, pattern: str | None) -> str:
    """sql/matching: trim, the pattern's first group when it matches, lower case."""
    text = reference.strip()
    if pattern:
        found = re.search(pattern, text)
        if found:
            text = found.group(1) or ""
    return text.strip().lower()


def match_orders(orders: dict[str, Row], payments: list[Row], params: MatchParams) -> Matching:
    """The rules of sql/matching in priority order (no manual matches in the sandbox)."""
    links: dict[str, tuple[str, list[Row]]] = {}
    taken: set[str] = set()

    def link(key: str, rule: str, ps: list[Row]) -> None:
        links[key] = (rule, ps)
        taken.update(p["id"] for p in ps)

    by_ref: dict[str, list[Row]] = defaultdict(list)
    for p in payments:
        ref = json_str(p.get("reference"))
        if ref:
            by_ref[ref].append(p)
    for key, o in orders.items():  # exact_reference
        if o["reference"] and by_ref.get(o["reference"]):
            link(key, "exact_reference", by_ref[o["reference"]])
    books: dict[str, list[str]] = defaultdict(list)  # normalised_reference
    for key, o in orders.items():
        if key not in links and o["reference"]:
            books[_reference_key(o["reference"], params.books_pattern)].append(key)
    found: dict[str, list[Row]] = defaultdict(list)
    for p in payments:
        ref = json_str(p.get("reference"))
        if p["id"] in taken or not ref or not ref.strip():
            continue
        k = _reference_key(ref, params.provider_pattern)
        if k and len(books.get(k, [])) == 1:
            found[books[k][0]].append(p)
    for key, ps in found.items():
        link(key, "normalised_reference", ps)
    for key, (_, ps) in list(links.items()):  # amount_tolerance
        o = orders[key]
        settled = [p for p in ps if p.get("status") in SETTLED]
        amounts = [json_int(p.get("amountMinor")) for p in settled]
        if o["status"] not in SETTLED or not settled or None in amounts:
            continue
        if any(json_str(p.get("currency")) != o["currency"] for p in settled):
            continue
        paid = sum(a for a in amounts if a is not None)
        smallest = min(a for a in amounts if a is not None)
        if paid == o["amount"] or (len(settled) > 1 and paid - smallest >= o["amount"]):
            continue
        if abs(paid - o["amount"]) <= params.tolerance(o["amount"]):
            links[key] = ("amount_tolerance", ps)
    carts: dict[str, list[str]] = defaultdict(list)  # payment_reference
    for key, o in orders.items():
        if key not in links and o["payment_reference"] and o["status"] in SETTLED:
            carts[o["payment_reference"].strip().lower()].append(key)
    paying: dict[str, list[Row]] = defaultdict(list)
    for p in payments:
        ref = json_str(p.get("reference"))
        free = p["id"] not in taken and p.get("status") in SETTLED
        if free and ref is not None and ref.strip().lower() in carts:
            paying[ref.strip().lower()].append(p)
    for k, keys in carts.items():
        ps = paying.get(k, [])
        currencies = {orders[key]["currency"] for key in keys}
        if (
            len(ps) != 1
            or len(currencies) != 1
            or json_str(ps[0].get("currency")) not in currencies
        ):
            continue
        amount = json_int(ps[0].get("amountMinor"))
        total = sum(orders[key]["amount"] for key in keys)
        if amount is not None and abs(amount - total) <= params.tolerance(total):
            for key in keys:
                link(key, "payment_reference", ps)
    return Matching(links, _propose(orders, payments, links, taken, params))


def _propose(
    orders: dict[str, Row],
    payments: list[Row],
    links: dict[str, tuple[str, list[Row]]],
    taken: set[str],
    params: MatchParams,
) -> dict[str, list[tuple[str, int, int]]]:
    """sql/matching/suggested_match.sql: each unmatched order's best candidates."""
    free = [
        p
        for p in payments
        if p["id"] not in taken
        and p.get("status") in SETTLED
        and json_int(p.get("amountMinor")) is not None
    ]
    by_currency: dict[str | None, list[Row]] = defaultdict(list)
    for p in free:
        by_currency[json_str(p.get("currency"))].append(p)
    window = timedelta(days=params.window_days)
    tops: dict[str, list[tuple[str, int]]] = {}
    for key, o in orders.items():
        if key in links or o["status"] not in SETTLED:
            continue
        scored = []
        for p in by_currency.get(o["currency"], []):
            amount = json_int(p.get("amountMinor"))
            created = parse_time(p.get("createdAt"))
            if amount is None or created is None:
                continue
            diff = o["amount"] - amount
            if abs(diff) > params.tolerance(o["amount"]):
                continue
            if not (o["created_at"] - window <= created <= o["created_at"] + window):
                continue
            days = int(abs((created - o["created_at"]).total_seconds())) // 86400
            scored.append((p["id"], 100 - (0 if diff == 0 else 20) - 10 * days))
        if scored:
            best = max(score for _, score in scored)
            tops[key] = [(pid, score) for pid, score in scored if score == best]
    rivals: dict[str, int] = defaultdict(int)
    for candidates in tops.values():
        for pid, _ in candidates:
            rivals[pid] += 1
    return {
        key: [(pid, score, rivals[pid]) for pid, score in candidates]
        for key, candidates in tops.items()
    }
