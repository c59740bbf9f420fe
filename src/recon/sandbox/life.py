"""A sandbox that lives: night `day` of the demo moves on from night `day - 1`.

Day 0 is the generated data set as it always was. Each later day adds, deterministically
from the seed and the day (so that night 3 is the same whenever it is served):

- **new payments** at the head of the list (clean, confirmed, in the five currencies), with
  their orders in the books;
- **refunds** of older clean payments, in full: the day they come the payment still says
  `confirmed` (a `confirmed_with_refunds` finding, new tonight), the next day the provider
  has moved it to `refunded` (resolved tonight) and the books have the refund;
- **breaks fixed in the books**: orders whose planted amount mismatch the merchant corrects
  (resolved tonight); two days later one of them is keyed wrong again (reopened).

`apply_life` puts the API side into a running sandbox's lists; `live_books` the books side
into the books `make_books` wrote. Everything new is dated between the newest generated
record and the anchor, so the run's clock never sees the future.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from recon.sandbox.data import Dataset, iso_ms
from recon.sandbox.store import ListView

if TYPE_CHECKING:  # the books import the sandbox's data set: no cycle at run time
    from recon.sandbox.ledger.model import Books

__all__ = ["Life", "apply_life", "life_of", "live_books", "next_day"]

_CURRENCIES = ("EUR", "USD", "GBP", "JPY", "BHD")
_FIRST = 1 << 47  # index space of the ids made here (generated ids are far below)
_STEP_MS = 5  # between two records made the same day
_DAY_MS = 5_000  # between two days' first records


@dataclass
class Life:
    """What days 1..day changed, in order: the API's records and the books' rows."""

    day: int
    payments: list[dict[str, Any]] = field(default_factory=list)  # new, oldest first
    refunds: list[dict[str, Any]] = field(default_factory=list)  # new, oldest first
    refunded: dict[int, int] = field(default_factory=dict)  # payment index -> day refunded
    fixed: dict[str, int] = field(default_factory=dict)  # order reference -> day fixed
    rekeyed: set[str] = field(default_factory=set)  # fixed, then keyed wrong again


def _per_day(ds: Dataset) -> int:
    return max(4, min(60, ds.n // 400))


def _newest_ms(ds: Dataset) -> int:
    """The newest generated payment's or refund's time (epoch ms)."""
    newest = ds.created_ms("payments", 0)
    if ds.refund_count:
        at = datetime.fromisoformat(str(ds.refund(0)["createdAt"]).replace("Z", "+00:00"))
        newest = max(newest, int(at.timestamp() * 1000))
    return newest


def _when(ds: Dataset, newest: int, day: int, k: int) -> str:
    """A time after the newest generated payment and refund, and before the anchor."""
    ms = newest + 1 + (day - 1) * _DAY_MS + k * _STEP_MS
    return iso_ms(min(ms, ds.anchor_ms - 1))


def _refundable(ds: Dataset, i: int) -> bool:
    return (
        i not in ds.pay_kind
        and i not in ds.dup_partner
        and ds.payment_status(i) == "confirmed"
        and ds.refund_count_of(i) == 0
    )


def life_of(ds: Dataset, day: int, books: Books | None = None) -> Life:
    """Every change of days 1..`day` (none for day 0). With `books`, the planted amount
    mismatches among which the merchant fixes some."""
    life = Life(day)
    if ds.n == 0:
        return life
    mismatches = sorted(
        p.entity_id for p in (books.planted if books else []) if p.check == "ledger_amount_mismatch"
    )
    used: set[int] = set()
    per_day = _per_day(ds)
    newest = _newest_ms(ds)
    for d in range(1, day + 1):
        rng = random.Random(f"{ds.seed}:life:{d}")  # noqa: S311 - test data, not secrets
        for k in range(per_day):
            ident = ds.make_id("pay", _FIRST + d * 10_000 + k)
            currency = _CURRENCIES[rng.randrange(len(_CURRENCIES))]
            life.payments.append(
                {
                    "id": ident,
                    "amountMinor": rng.randint(500, 90_000),
                    "currency": currency,
                    "status": "confirmed",
                    "reference": f"LIFE-{d:03d}-{k:03d}",
                    "createdAt": _when(ds, newest, d, k),
                    "metadata": {"sandboxDay": d},
                }
            )
        for k in range(max(1, per_day // 10)):
            for _ in range(1000):
                i = rng.randrange(ds.n)
                if i not in used and _refundable(ds, i):
                    break
            else:
                continue
            used.add(i)
            payment = ds.payment(i)
            life.refunded[i] = d
            life.refunds.append(
                {
                    "id": ds.make_id("re", _FIRST + d * 10_000 + k),
                    "paymentId": payment["id"],
                    "amount": {
                        "amountMinor": payment["amountMinor"],
                        "currency": payment["currency"],
                    },
                    "status": "succeeded",
                    "reason": "requested_by_customer",
                    "createdAt": _when(ds, newest, d, per_day + k),
                    "metadata": {"sandboxDay": d},
                }
            )
        open_ = [m for m in mismatches if m not in life.fixed]
        for ref in open_[:2]:  # each day the merchant fixes two
            life.fixed[ref] = d
        # two days after a fix, one of that day's fixes is keyed wrong again
        again = sorted(r for r, fixed_on in life.fixed.items() if fixed_on == d - 2)
        if again:
            life.rekeyed.add(again[0])
    return life


def apply_life(
    ds: Dataset,
    lists: dict[str, ListView],
    day: int,
    extra_payments: dict[str, dict[str, Any]],
) -> Life:
    """Put days 1..`day` into the lists of a sandbox being started (or reset)."""
    life = life_of(ds, day)
    payments, refunds = lists["payments"], lists["refunds"]
    for rec in life.payments:
        extra_payments[rec["id"]] = rec
        payments.insert(orjson.dumps(rec), rec["id"], rec["status"])
    for rec in life.refunds:
        refunds.insert(orjson.dumps(rec), rec["id"], rec["status"])
    for i, refunded_on in life.refunded.items():
        if refunded_on < day:  # the provider moved it the day after the refund
            record = ds.payment(i)
            record["status"] = "refunded"
            payments.edit(i, orjson.dumps(record))
    return life


def live_books(
    ds: Dataset, day: int, books: Books, order_amount: Callable[[str], int | None]
) -> None:
    """The books of night `day`: the new payments' orders and refunds (a refund the day
    after it came), the merchant's fixes and re-keyings; `order_amount(reference)` is what
    the provider settled for an order (its fix)."""
    life = life_of(ds, day, books)
    for rec in life.payments:
        books.orders.append(
            {
                "reference": rec["reference"],
                "order_id": f"O-{rec['reference']}",
                "payment_reference": None,
                "amount_minor": rec["amountMinor"],
                "currency": rec["currency"],
                "status": "confirmed",
                "created_at": rec["createdAt"][:19] + "Z",
            }
        )
    for rec in life.refunds:
        i = next(k for k, d in life.refunded.items() if ds.payment_id(k) == rec["paymentId"])
        if life.refunded[i] < day:
            books.refunds.append(
                {
                    "refund_id": rec["id"],
                    "payment_id": rec["paymentId"],
                    "reference": None,
                    "amount_minor": rec["amount"]["amountMinor"],
                    "currency": rec["amount"]["currency"],
                    "created_at": rec["createdAt"][:19] + "Z",
                }
            )
    fixes = {ref for ref in life.fixed if ref not in life.rekeyed}
    for row in books.orders:
        ref = row.get("reference")
        if ref in fixes:
            amount = order_amount(ref)
            if amount is not None:
                row["amount_minor"] = amount


def next_day(folder: Path, seed: int, payments: int, *, still: bool) -> int:
    """The day of the next `recon nightly --sandbox` beside the warehouse in `folder`: one
    after the last night's (kept in `folder/sandbox-books/life.json`), or the same day when
    `still` (`--sandbox-faults none`); 0 for a first night or another seed or size."""
    path = folder / "sandbox-books" / "life.json"
    try:
        kept = orjson.loads(path.read_bytes())
        last = int(kept["day"]) if (kept["seed"], kept["payments"]) == (seed, payments) else None
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        last = None
    day = 0 if last is None else (last if still else last + 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".life.json.tmp")
    tmp.write_bytes(orjson.dumps({"seed": seed, "payments": payments, "day": day}))
    tmp.replace(path)
    return day
