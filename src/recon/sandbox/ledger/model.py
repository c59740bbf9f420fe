"""The state the sandbox's books are built in: the data set's records, the books' rows,
what is planted, and which clean payments a planted break may take."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from recon.sandbox.data import Dataset, Planted

__all__ = [
    "CURRENCIES",
    "DAY",
    "FAILED_REFUNDS",
    "INVOICE_COLUMNS",
    "INVOICE_STATUSES",
    "ORDER_COLUMNS",
    "PAYMENT_STATUSES",
    "REFUND_COLUMNS",
    "SETTLED",
    "Books",
    "Generator",
    "Row",
    "as_loaded",
    "currency_or",
    "iso",
    "json_int",
    "json_str",
    "parse_time",
    "whole",
]

SETTLED = ("confirmed", "partially_refunded", "refunded")
FAILED_REFUNDS = frozenset({"failed", "canceled", "cancelled", "rejected", "reversed"})
PAYMENT_STATUSES = frozenset(
    {"created", "pending", "confirmed", "partially_refunded", "refunded", "cancelled", "expired"}
)
INVOICE_STATUSES = frozenset({"draft", "open", "paid", "void", "uncollectible"})
CURRENCIES = ("EUR", "USD", "GBP", "JPY", "BHD")
DAY = timedelta(days=1)

ORDER_COLUMNS = (
    "reference",
    "order_id",
    "payment_reference",
    "amount_minor",
    "currency",
    "status",
    "created_at",
)
REFUND_COLUMNS = ("refund_id", "payment_id", "reference", "amount_minor", "currency", "created_at")
INVOICE_COLUMNS = ("invoice_id", "customer_id", "amount_minor", "currency", "status")

Row = dict[str, Any]


@dataclass
class Books:
    """The books of one data set: rows per table (default columns), what was planted."""

    orders: list[Row] = field(default_factory=list)
    refunds: list[Row] = field(default_factory=list)
    invoices: list[Row] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)
    rejects: dict[str, int] = field(default_factory=dict)  # malformed rows per table
    splits: list[str] = field(default_factory=list)  # orders paid in several payments (matched)
    cases: list[dict[str, Any]] = field(default_factory=list)  # matching cases (ledger.matching)

    def plant(self, kind: str, check: str, entity: str, entity_id: str, issue: str) -> None:
        self.planted.append(Planted(kind, check, entity, entity_id, issue))


def iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def json_int(v: Any) -> int | None:
    """A JSON integer as the loader types it; anything else (a bool, a string) is NULL."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def json_str(v: Any) -> str | None:
    """A JSON string as the loader types it; anything else is NULL."""
    return v if isinstance(v, str) else None


def whole(value: Any) -> int | None:
    """An amount as the shop would have written it: the integer the provider meant."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return abs(value)
    if isinstance(value, float):
        return abs(int(value))
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return abs(int(value))
    return None


def as_loaded(rec: Row, money: str | None = None) -> Row:
    """A provider record as the loader normalises it: status lower case, currency upper
    case (issue 15: `Refunded` is refunded, `eur` is EUR)."""
    out = dict(rec)
    if isinstance(out.get("status"), str):
        out["status"] = out["status"].lower()
    holder = out.get(money) if money else out
    if isinstance(holder, dict) and isinstance(holder.get("currency"), str):
        holder = dict(holder)
        holder["currency"] = holder["currency"].upper()
        if money:
            out[money] = holder
        else:
            out = holder
    return out


def currency_or(value: Any, fallback: str = "EUR") -> str:
    return value if value in CURRENCIES else fallback


class Generator:
    """The books being built for one data set (deterministic from its seed)."""

    def __init__(self, dataset: Dataset) -> None:
        self.ds = dataset
        self.rng = random.Random(f"recon-ledger-{dataset.seed}")  # noqa: S311 - test data
        self.anchor = dataset.anchor
        self.books = Books()
        # The provider's records as recon loads them (status lower case, currency upper
        # case): the merchant's books say `refunded` and `USD` whatever case the API sends.
        self.payments = [as_loaded(dataset.payment(i)) for i in range(dataset.n)]
        self.refunds = [
            [as_loaded(r, "amount") for r in dataset.refunds_of(i)] for i in range(dataset.n)
        ]
        by_ref: dict[str, list[int]] = {}
        for i, p in enumerate(self.payments):
            ref = p.get("reference")
            if isinstance(ref, str) and ref:
                by_ref.setdefault(ref, []).append(i)
        self.by_ref = by_ref
        # what the sandbox planted (an open invoice is "planted" as one to list, not a flaw)
        self.sandbox_planted = {
            p.entity_id for p in dataset.planted() if p.check != "open_invoices"
        }
        self.twice = 0  # references paid twice seen so far: alternately split and duplicated
        self.used: set[int] = set()
        self.k = max(1, min(dataset.n // 1000, 20))
        self.serial = 0

    # -- choosing clean payments --------------------------------------------------------
    def _clean(self, i: int) -> bool:
        p = self.payments[i]
        refs = self.by_ref.get(p.get("reference") or "", [])
        return (
            i not in self.used
            and p["id"] not in self.sandbox_planted
            and len(refs) == 1
            and isinstance(p.get("amountMinor"), int)
            and not isinstance(p.get("amountMinor"), bool)
            and p["amountMinor"] >= 200
            and p.get("currency") in CURRENCIES
            and not any(r["id"] in self.sandbox_planted for r in self.refunds[i])
        )

    def _age(self, i: int) -> timedelta:
        created = parse_time(self.payments[i].get("createdAt"))
        return self.anchor - created if created else timedelta(0)

    def pick(
        self,
        status: str,
        *,
        young: bool = False,
        refunds: str = "none",
        where: Callable[[int], bool] | None = None,
    ) -> list[int]:
        """Up to k clean payments with `status`, old (> 5 days) or young (< 20 h), that
        satisfy `where` if given."""

        def fits(i: int) -> bool:
            if not self._clean(i) or self.payments[i].get("status") != status:
                return False
            if where is not None and not where(i):
                return False
            age = self._age(i)
            if young != (timedelta(0) < age < timedelta(hours=20)):
                return False
            if not young and age < 5 * DAY:
                return False
            counted = [r for r in self.refunds[i] if r["status"] not in FAILED_REFUNDS]
            if refunds == "none":
                return not self.refunds[i]
            if refunds == "one-succeeded":
                return len(counted) == 1 == len(self.refunds[i]) and counted[0]["status"] == (
                    "succeeded"
                )
            return bool(counted) and all(r["status"] == "succeeded" for r in counted)

        pool = [i for i in range(len(self.payments)) if fits(i)]
        chosen = self.rng.sample(pool, min(self.k, len(pool)))
        self.used.update(chosen)
        return sorted(chosen)

    def new_id(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.ds.seed}{self.serial:05d}"
