"""Deterministic sandbox data: any size, generated lazily, with planted anomalies.

Every record is a pure function of ``(seed, resource, index)``: nothing is generated until a
page (or the truth oracle) asks for it, so one million payments cost almost nothing to set
up. Index 0 is the newest record of each resource; ``createdAt`` falls strictly with the
index, so the serving order (newest first) is the index order.

Identifiers are ``<prefix>_<base32>`` of a bijective 64-bit mix of the index, so an id can
be turned back into its index without any lookup table (used by the single-record GETs).

What is planted on purpose is decided once, up front, with ``random.Random(seed)``; the
rest of a record comes from a 64-bit hash of ``(seed, resource, index)``.
"""

from __future__ import annotations

import base64
import binascii
import random
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson

__all__ = [
    "LIST_RESOURCES",
    "Dataset",
    "Planted",
    "default_anchor",
    "iso_ms",
]

_M = (1 << 64) - 1
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB
_C1_INV = pow(_C1, -1, 1 << 64)
_C2_INV = pow(_C2, -1, 1 << 64)

DAY_MS = 86_400_000
#: Resources served as lists, in the order recon extracts them.
LIST_RESOURCES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")

# Currency → (weight, lowest, highest amount in minor units).
_CURRENCIES: tuple[tuple[str, int, int, int], ...] = (
    ("EUR", 40, 100, 99_999),
    ("USD", 25, 100, 99_999),
    ("GBP", 15, 100, 99_999),
    ("JPY", 12, 100, 99_999),
    ("BHD", 8, 1_000, 99_999),
)
_CUR_TABLE: tuple[int, ...] = tuple(
    i for i, (_, weight, _, _) in enumerate(_CURRENCIES) for _ in range(weight)
)
_CARD_BRANDS = ("visa", "mastercard", "amex", "discover")
_CHANNELS = ("web", "app", "pos")
_COUNTRIES = ("DE", "FR", "NL", "GB", "US", "JP", "BH", "ES", "IT")
_REFUND_REASONS = ("requested_by_customer", "duplicate", "fraudulent")
_FAILED_REFUND = ("failed", "canceled", "rejected", "reversed", "cancelled")
_DISPUTE_REASONS = (
    "fraudulent",
    "duplicate",
    "product_not_received",
    "subscription_canceled",
    "unrecognized",
    "credit_not_processed",
)
PAYMENT_STATUSES = (
    "created",
    "pending",
    "confirmed",
    "partially_refunded",
    "refunded",
    "cancelled",
    "expired",
)
DISPUTE_STATUSES = (
    "needs_response",
    "under_review",
    "won",
    "lost",
    "warning_needs_response",
    "warning_under_review",
    "warning_closed",
)
_INTENT_NONFINAL = ("requires_payment_method", "requires_action", "requires_capture", "processing")

# Spans of createdAt (index 0 is 1 step before the anchor, the last index `span` before it).
_SPAN_DAYS = {
    "payments": 90,
    "disputes": 90,
    "subscriptions": 720,
    "invoices": 365,
    "payment_intents": 30,
}
_OLD_DAYS = 10  # planted "old" records are at least this old (stuck_days is 7)

# Salts per id prefix (kept apart so ids of different resources never depend on each other).
_SALTS = {
    "pay": 1,
    "re": 2,
    "dp": 3,
    "sub": 4,
    "in": 5,
    "pi": 6,
    "cus": 7,
    "pm": 8,
    "cs": 9,
    "plink": 10,
    "prod": 11,
    "co": 12,
    "txr": 13,
    "we": 14,
    "price": 15,
    "ref": 16,
    "ghost": 17,
    "cset": 18,
}


def _mix(x: int) -> int:
    """A bijection on 64-bit integers (the splitmix64 finaliser)."""
    x &= _M
    x ^= x >> 30
    x = (x * _C1) & _M
    x ^= x >> 27
    x = (x * _C2) & _M
    return x ^ (x >> 31)


def _unxorshift(x: int, shift: int) -> int:
    y = x
    s = shift
    while s < 64:
        y = x ^ (y >> shift)
        s += shift
    return y & _M


def _unmix(x: int) -> int:
    x = _unxorshift(x, 31)
    x = (x * _C2_INV) & _M
    x = _unxorshift(x, 27)
    x = (x * _C1_INV) & _M
    return _unxorshift(x, 30)


_B32 = "abcdefghijklmnopqrstuvwxyz234567"
_B32_2 = tuple(a + b for a in _B32 for b in _B32)  # 10 bits -> 2 characters


def _b32(n: int) -> str:
    """RFC 4648 base32 of 8 big-endian bytes, lower case, without padding (13 characters)."""
    t = _B32_2
    return (
        t[n >> 54]
        + t[(n >> 44) & 1023]
        + t[(n >> 34) & 1023]
        + t[(n >> 24) & 1023]
        + t[(n >> 14) & 1023]
        + t[(n >> 4) & 1023]
        + _B32[(n & 15) << 1]
    )


def _unb32(s: str) -> int | None:
    if len(s) != 13:
        return None
    try:
        raw = base64.b32decode(s.upper() + "===")
    except (binascii.Error, ValueError):
        return None
    n = int.from_bytes(raw, "big")
    return n if _b32(n) == s else None


def default_anchor() -> datetime:
    """Today 00:00 UTC."""
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)


_DATE_CACHE: dict[int, str] = {}


def iso_ms(epoch_ms: int) -> str:
    """ISO 8601 UTC with milliseconds, e.g. ``2026-11-19T23:59:52.123Z`` (fast)."""
    days, ms = divmod(epoch_ms, DAY_MS)
    d = _DATE_CACHE.get(days)
    if d is None:
        d = (date(1970, 1, 1) + timedelta(days=days)).isoformat()
        _DATE_CACHE[days] = d
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{d}T{h:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def _iso_date(epoch_ms: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=epoch_ms // DAY_MS)).isoformat()


@dataclass(frozen=True, slots=True)
class Planted:
    """One anomaly planted on purpose, and the finding the oracle must produce for it."""

    kind: str
    check: str
    entity: str
    entity_id: str
    issue_type: str

    def as_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "check": self.check,
            "entity": self.entity,
            "entity_id": self.entity_id,
            "issue_type": self.issue_type,
        }


# A refund plan entry: (status, amount JSON value, currency, payment id override or None).
RefundSpec = tuple[str, Any, str, str | None]


@dataclass(slots=True)
class PaymentPlan:
    status: str
    amount: Any
    currency: str
    reference: str
    refunds: tuple[RefundSpec, ...]  # oldest first


# Planted kinds that take one payment slot each.
PAYMENT_KINDS = (
    "refunded_short",
    "refunded_over",
    "partial_but_full",
    "partial_without_refund",
    "partial_over",
    "confirmed_with_refunds",
    "refund_currency_mismatch",
    "refund_unknown_payment",
    "refund_unrefundable_state",
    "duplicate_reference",
    "payment_negative_amount",
    "payment_float_amount",
    "payment_string_amount",
    "payment_invalid_currency",
    "payment_unknown_status",
    "payment_stuck_created",
    "payment_stuck_pending",
    "refund_negative_amount",
    "refund_non_integer_amount",
    "refund_invalid_currency",
    "refund_unknown_status",
    "refund_stuck_pending",
)
DISPUTE_KINDS = (
    "dispute_on_refunded",
    "dispute_on_partially_refunded",
    "dispute_negative_amount",
    "dispute_invalid_currency",
    "dispute_unknown_status",
)
INVOICE_KINDS = (
    "invoice_inactive_subscription",
    "invoice_zero_amount",
    "invoice_negative_amount",
    "invoice_non_integer_amount",
    "invoice_invalid_currency",
    "invoice_unknown_status",
)
SUBSCRIPTION_KINDS = ("subscription_unknown_status",)
INTENT_KINDS = (
    "intent_negative_amount",
    "intent_non_integer_amount",
    "intent_invalid_currency",
    "intent_stuck",
)
INTENT_RECENT_KINDS = ("intent_unknown_status",)

# Safe aging bands for open invoices: days past due at the anchor's date, far from the bucket
# edges so that a run within a day or two of the anchor gets the same bucket.
_AGING_BANDS: tuple[tuple[str, int, int], ...] = (
    ("0-30", -20, -2),
    ("0-30", 2, 27),
    ("31-60", 34, 57),
    ("61-90", 64, 87),
    ("90+", 94, 200),
)


@dataclass
class _Sizes:
    payments: int
    disputes: int
    subscriptions: int
    invoices: int
    payment_intents: int
    checkout_sessions: int
    payment_links: int
    products: int
    coupons: int
    tax_rates: int
    webhook_endpoints: int


@dataclass
class Fixtures:
    """The small resources (no list operation): generated once, kept as dicts."""

    checkout_sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    payment_links: dict[str, dict[str, Any]] = field(default_factory=dict)
    products: dict[str, dict[str, Any]] = field(default_factory=dict)
    coupons: dict[str, dict[str, Any]] = field(default_factory=dict)
    tax_rates: dict[str, dict[str, Any]] = field(default_factory=dict)
    webhook_endpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    checkout_settings: dict[str, dict[str, Any]] = field(default_factory=dict)


class Dataset:
    """The generated data set of one seed and size, relative to ``anchor``."""

    def __init__(
        self,
        seed: int,
        payments: int,
        anchor: datetime | None = None,
        *,
        anomalies: bool = True,
    ) -> None:
        if payments < 0:
            raise ValueError("payments must be >= 0")
        self.seed = seed
        self.anchor = anchor if anchor is not None else default_anchor()
        if self.anchor.tzinfo is None:
            self.anchor = self.anchor.replace(tzinfo=UTC)
        self.anchor_ms = int(self.anchor.timestamp() * 1000)
        self.n = payments
        base = _mix(seed * 0x2545F4914F6CDD1D + 0x1234567)
        self._salt = {k: _mix(base + v * 0x9E3779B97F4A7C15) for k, v in _SALTS.items()}
        self._customer_ids: dict[int, str] = {}
        rng = random.Random(seed)  # noqa: S311 - test data, not secrets
        n = payments
        self.per_kind = max(2, min(n // 2000, 500)) if n >= 40 else 1
        pk = self.per_kind
        self.anomalies = anomalies
        self.sizes = _Sizes(
            payments=n,
            disputes=max(n // 50, 5 * pk + 5) if n else 0,
            subscriptions=max(n // 10, 10) if n else 0,
            invoices=max(n * 3 // 10, 7 * pk + 10) if n else 0,
            payment_intents=max(n // 2, 5 * pk + 10) if n else 0,
            checkout_sessions=10,
            payment_links=6,
            products=8,
            coupons=5,
            tax_rates=4,
            webhook_endpoints=5,
        )
        self.customers = self.sizes.subscriptions  # customer c owns subscription c (see below)
        self._step: dict[str, int] = {}
        for res, days in _SPAN_DAYS.items():
            count = getattr(self.sizes, res)
            self._step[res] = max(4, days * DAY_MS // max(count, 1))
        if not anomalies:
            self.per_kind = 0
        self._plan_payments(rng)
        self._plan_disputes(rng)
        self._plan_subscriptions(rng)
        self._plan_invoices(rng)
        self._plan_intents(rng)
        self._refund_prefix: array[int] | None = None
        self._status_index: dict[str, array[int]] | None = None
        self.fixtures = self._make_fixtures()

    # ------------------------------------------------------------------ ids and hashing
    def make_id(self, prefix: str, index: int) -> str:
        return f"{prefix}_{_b32(_mix(index + self._salt[prefix]))}"

    def index_of(self, prefix: str, ident: str, count: int) -> int | None:
        """The index of a generated id, or None when it is not one of ours."""
        head, sep, tail = ident.partition("_")
        if not sep or head != prefix:
            return None
        num = _unb32(tail)
        if num is None:
            return None
        idx = (_unmix(num) - self._salt[prefix]) & _M
        return idx if idx < count else None

    def _h(self, prefix: str, index: int, k: int = 0) -> int:
        return _mix((index + self._salt[prefix]) ^ (k * 0x9E3779B97F4A7C15 + 0x51ED27))

    def created_ms(self, resource: str, index: int) -> int:
        return self.anchor_ms - (index + 1) * self._step[resource]

    def first_old(self, resource: str, days: int = _OLD_DAYS) -> int:
        """The first index whose record is more than ``days`` days older than the anchor."""
        return -(-(days * DAY_MS) // self._step[resource])

    def is_recent(self, resource: str, index: int) -> bool:
        """Younger than one day before the anchor (the only non-final records that are clean)."""
        return (index + 1) * self._step[resource] < DAY_MS

    # ------------------------------------------------------------------ planting
    def _pick(self, rng: random.Random, lo: int, hi: int, k: int) -> list[int]:
        if hi <= lo or k <= 0:
            return []
        return rng.sample(range(lo, hi), min(k, hi - lo))

    def _plan_payments(self, rng: random.Random) -> None:
        n = self.n
        self.pay_kind: dict[int, str] = {}
        self.dup_partner: dict[int, int] = {}  # partner -> planted payment
        self.dup_of: dict[int, int] = {}  # planted payment -> partner
        lo = self.first_old("payments") if n else 0
        want = len(PAYMENT_KINDS) * self.per_kind
        # leave room for duplicate-reference partners
        slots = self._pick(rng, lo, n, want + self.per_kind)
        kinds = [k for k in PAYMENT_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.pay_kind[idx] = kind
        for idx, kind in sorted(self.pay_kind.items()):
            if kind != "duplicate_reference":
                continue
            partner = idx + 1
            while partner < n and (partner in self.pay_kind or partner in self.dup_partner):
                partner += 1
            if partner >= n:
                partner = idx - 1
                while partner >= 0 and (partner in self.pay_kind or partner in self.dup_partner):
                    partner -= 1
            if partner >= 0:
                self.dup_partner[partner] = idx
                self.dup_of[idx] = partner
        # a currency other than the payment's, per payment, for currency mismatches
        self._bogus_pay: dict[int, str] = {
            i: f"pay_{_b32(self._h('ghost', i))}"
            for i, k in self.pay_kind.items()
            if k == "refund_unknown_payment"
        }

    def _plan_disputes(self, rng: random.Random) -> None:
        d = self.sizes.disputes
        self.dispute_kind: dict[int, str] = {}
        slots = self._pick(rng, 0, d, len(DISPUTE_KINDS) * self.per_kind)
        kinds = [k for k in DISPUTE_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.dispute_kind[idx] = kind

    def _plan_subscriptions(self, rng: random.Random) -> None:
        s = self.sizes.subscriptions
        self.sub_kind: dict[int, str] = {}
        slots = self._pick(rng, 0, s, len(SUBSCRIPTION_KINDS) * self.per_kind)
        for idx in slots:
            self.sub_kind[idx] = "subscription_unknown_status"

    def _plan_invoices(self, rng: random.Random) -> None:
        v = self.sizes.invoices
        self.inv_kind: dict[int, str] = {}
        slots = self._pick(rng, 0, v, len(INVOICE_KINDS) * self.per_kind)
        kinds = [k for k in INVOICE_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.inv_kind[idx] = kind
        # an inactive-subscription invoice needs a customer with subscriptions, none active
        self.inv_customer_override: dict[int, int] = {}
        inactive = [c for c in range(self.customers) if self._customer_has_subs_none_active(c)]
        for idx, kind in self.inv_kind.items():
            if kind == "invoice_inactive_subscription" and inactive:
                self.inv_customer_override[idx] = inactive[rng.randrange(len(inactive))]

    def _plan_intents(self, rng: random.Random) -> None:
        count = self.sizes.payment_intents
        self.intent_kind: dict[int, str] = {}
        if not count:
            return
        lo = self.first_old("payment_intents")
        slots = self._pick(rng, lo, count, len(INTENT_KINDS) * self.per_kind)
        kinds = [k for k in INTENT_KINDS for _ in range(self.per_kind)]
        for idx, kind in zip(slots, kinds, strict=False):
            self.intent_kind[idx] = kind
        recent = [i for i in range(min(count, 10_000)) if self.is_recent("payment_intents", i)]
        for idx in self._pick(rng, 0, len(recent), self.per_kind):
            self.intent_kind[recent[idx]] = "intent_unknown_status"

    # ------------------------------------------------------------------ payments
    def _currency(self, h: int) -> tuple[str, int, int]:
        cur, _, lo, hi = _CURRENCIES[_CUR_TABLE[h % 100]]
        return cur, lo, hi

    def _clean_status(self, i: int, h2: int) -> str:
        r = h2 % 100
        if self.is_recent("payments", i):
            if r < 10:
                return "created"
            if r < 25:
                return "pending"
            if r < 80:
                return "confirmed"
            if r < 87:
                return "refunded"
            if r < 94:
                return "partially_refunded"
            return "cancelled"
        if r < 68:
            return "confirmed"
        if r < 78:
            return "refunded"
        if r < 87:
            return "partially_refunded"
        if r < 93:
            return "cancelled"
        return "expired"

    def _amount_of(self, h: int) -> tuple[int, str]:
        cur, lo, hi = self._currency(h)
        return lo + (h >> 8) % (hi - lo + 1), cur

    def payment_status(self, i: int) -> str:
        if i in self.pay_kind:
            return self.payment_plan(i).status
        return self._clean_status(i, self._h("pay", i, 1))

    def refund_count_of(self, i: int) -> int:
        """len(payment_plan(i).refunds), computed without building the plan."""
        if i in self.pay_kind:
            return len(self.payment_plan(i).refunds)
        h2 = self._h("pay", i, 1)
        status = self._clean_status(i, h2)
        r2 = (h2 >> 16) % 100
        if status == "confirmed":
            return 1 if r2 < 2 else 0
        if status == "refunded":
            return (1 if r2 < 5 else 0) + (2 if r2 % 10 < 3 else 1)
        if status == "partially_refunded":
            if r2 < 20:
                amount, _ = self._amount_of(self._h("pay", i))
                part = 1 + (h2 >> 32) % (amount - 1)
                return 2 if part >= 2 else 1
            return 1
        return 0

    def payment_plan(self, i: int) -> PaymentPlan:
        h = self._h("pay", i)
        amount, cur = self._amount_of(h)
        h2 = self._h("pay", i, 1)
        reference = f"ORD-{_b32(_mix(i + self._salt['ref'])).upper()}"
        kind = self.pay_kind.get(i)
        if kind is not None:
            return self._planted_payment(i, kind, amount, cur, reference, h2)
        status = self._clean_status(i, h2)
        recent = self.is_recent("payments", i)
        ok = "pending" if recent and (h2 >> 8) % 3 == 0 else "succeeded"
        refunds: tuple[RefundSpec, ...] = ()
        r2 = (h2 >> 16) % 100
        failed = _FAILED_REFUND[(h2 >> 24) % len(_FAILED_REFUND)]
        part = 1 + (h2 >> 32) % (amount - 1)
        if status == "confirmed":
            if r2 < 2:
                refunds = ((failed, part, cur, None),)
        elif status == "refunded":
            extra: tuple[RefundSpec, ...] = ((failed, part, cur, None),) if r2 < 5 else ()
            if r2 % 10 < 3:
                refunds = (*extra, (ok, part, cur, None), (ok, amount - part, cur, None))
            else:
                refunds = (*extra, (ok, amount, cur, None))
        elif status == "partially_refunded":
            if r2 < 20 and part >= 2:
                half = part // 2
                refunds = ((ok, half, cur, None), (ok, part - half, cur, None))
            else:
                refunds = ((ok, part, cur, None),)
        return PaymentPlan(status, amount, cur, reference, refunds)

    def _other_currency(self, cur: str, h: int) -> str:
        others = [c for c, *_ in _CURRENCIES if c != cur]
        return others[h % len(others)]

    def _planted_payment(
        self, i: int, kind: str, amount: int, cur: str, reference: str, h2: int
    ) -> PaymentPlan:
        part = 1 + h2 % (amount - 1)
        delta = 1 + (h2 >> 20) % max(1, amount // 2)
        ok = "succeeded"
        status = "confirmed"
        refunds: tuple[RefundSpec, ...] = ()
        amt: Any = amount
        if kind == "refunded_short":
            status, refunds = "refunded", ((ok, amount - delta, cur, None),)
        elif kind == "refunded_over":
            status, refunds = "refunded", ((ok, amount, cur, None), (ok, delta, cur, None))
        elif kind == "partial_but_full":
            status = "partially_refunded"
            refunds = ((ok, part, cur, None), (ok, amount - part, cur, None))
        elif kind == "partial_without_refund":
            status, refunds = "partially_refunded", (("failed", part, cur, None),)
        elif kind == "partial_over":
            status = "partially_refunded"
            refunds = ((ok, amount, cur, None), (ok, delta, cur, None))
        elif kind == "confirmed_with_refunds":
            refunds = ((ok, part, cur, None),)
        elif kind == "refund_currency_mismatch":
            other = self._other_currency(cur, h2)
            status = "refunded"
            refunds = ((ok, amount, cur, None), (ok, part, other, None))
        elif kind == "refund_unknown_payment":
            refunds = ((ok, part, cur, self._bogus_pay[i]),)
        elif kind == "refund_unrefundable_state":
            status = ("cancelled", "expired", "created", "pending")[h2 % 4]
            refunds = ((ok, part, cur, None),)
        elif kind == "duplicate_reference":
            partner = self.dup_of.get(i, i)
            reference = f"ORD-{_b32(_mix(partner + self._salt['ref'])).upper()}"
        elif kind == "payment_negative_amount":
            amt = -amount
            refunds = ((ok, part, cur, None),)
        elif kind == "payment_float_amount":
            amt = amount + 0.5
        elif kind == "payment_string_amount":
            amt = str(amount)
        elif kind == "payment_invalid_currency":
            cur = "XYZ" if h2 % 2 else "EURO"
        elif kind == "payment_unknown_status":
            status = "settled" if h2 % 2 else "on_hold"
        elif kind == "payment_stuck_created":
            status = "created"
        elif kind == "payment_stuck_pending":
            status = "pending"
        elif kind == "refund_negative_amount":
            refunds = ((ok, -part, cur, None),)
        elif kind == "refund_non_integer_amount":
            refunds = (("failed", str(part) if h2 % 2 else part + 0.5, cur, None),)
        elif kind == "refund_invalid_currency":
            refunds = (("failed", part, "XYZ" if h2 % 2 else "EURO", None),)
        elif kind == "refund_unknown_status":
            status = "refunded"
            refunds = ((ok, amount - part, cur, None), ("in_review", part, cur, None))
        elif kind == "refund_stuck_pending":
            status = "partially_refunded"
            refunds = (("pending", part, cur, None),)
        return PaymentPlan(status, amt, cur, reference, refunds)

    def payment_id(self, i: int) -> str:
        return self.make_id("pay", i)

    def customer_id(self, c: int) -> str:
        ident = self._customer_ids.get(c)
        if ident is None:
            ident = self._customer_ids[c] = self.make_id("cus", c)
        return ident

    def payment(self, i: int) -> dict[str, Any]:
        """Payment i as a dict (parsed from exactly the bytes that are served)."""
        rec: dict[str, Any] = orjson.loads(self.payment_bytes(i))
        return rec

    def payment_bytes(self, i: int) -> bytes:
        """Payment i serialised (a template: every string in it is ours and needs no escaping)."""
        p = self.payment_plan(i)
        h = self._h("pay", i, 2)
        c = h % max(self.customers, 1)
        ref = p.reference
        country = _COUNTRIES[(h >> 33) % len(_COUNTRIES)]
        last4 = (h >> 12) % 10000
        if h & 0x100:
            instrument = (
                f'"card":{{"brand":"{_CARD_BRANDS[(h >> 9) % 4]}","last4":"{last4:04d}",'
                f'"expMonth":{1 + (h >> 26) % 12},"expYear":{2027 + (h >> 30) % 5},'
                f'"country":"{country}"}}'
            )
        else:
            instrument = (
                f'"bankAccount":{{"bankName":"Sandbox Bank","last4":"{last4:04d}",'
                f'"country":"{country}"}}'
            )
        score = (h >> 44) % 100
        amount = p.amount
        amount_json = str(amount) if type(amount) is int else orjson.dumps(amount).decode()
        return (
            f'{{"id":"{self.payment_id(i)}","amountMinor":{amount_json},'
            f'"currency":"{p.currency}","status":"{p.status}","reference":"{ref}",'
            f'"createdAt":"{iso_ms(self.created_ms("payments", i))}",'
            f'"description":"Order {ref}",'
            f'"customer":{{"id":"{self.customer_id(c)}","email":"customer{c}@example.test"}},'
            f'{instrument},"metadata":{{"orderId":"{ref}","channel":"{_CHANNELS[(h >> 40) % 3]}"}},'
            f'"risk":{{"score":{score},"level":"{"normal" if score < 80 else "elevated"}"}}}}'
        ).encode()

    # ------------------------------------------------------------------ refunds
    def refund_prefix(self) -> array[int]:
        """``prefix[i]`` = number of refunds of payments 0..i-1 (built once, on first use)."""
        if self._refund_prefix is None:
            pre = array("q", [0])
            total = 0
            count_of = self.refund_count_of
            for i in range(self.n):
                total += count_of(i)
                pre.append(total)
            self._refund_prefix = pre
        return self._refund_prefix

    @property
    def refund_count(self) -> int:
        return self.refund_prefix()[-1]

    def refund_locate(self, r: int) -> tuple[int, int]:
        """Refund index r → (payment index, position among that payment's refunds, oldest=0)."""
        pre = self.refund_prefix()
        i = bisect_right(pre, r) - 1
        k = pre[i + 1] - pre[i]
        # within a payment the newest refund comes first
        return i, k - 1 - (r - pre[i])

    def refund(self, r: int) -> dict[str, Any]:
        i, j = self.refund_locate(r)
        return self.refunds_of(i)[j]

    def refunds_of(self, i: int, plan: PaymentPlan | None = None) -> list[dict[str, Any]]:
        """The generated refunds of payment i, oldest first."""
        p = plan if plan is not None else self.payment_plan(i)
        if not p.refunds:
            return []
        first = self.refund_prefix()[i]
        pay_ms = self.created_ms("payments", i)
        quarter = self._step["payments"] // 4
        pid = self.payment_id(i)
        out = []
        k = len(p.refunds)
        for j, (status, amount, cur, override) in enumerate(p.refunds):
            h = self._h("re", i * 4 + j)
            rec: dict[str, Any] = {
                "id": self.make_id("re", first + (k - 1 - j)),
                "paymentId": override if override is not None else pid,
                "amount": {"amountMinor": amount, "currency": cur},
                "status": status,
                "reason": _REFUND_REASONS[h % 3],
                "createdAt": iso_ms(pay_ms + (j + 1) * quarter),
                "metadata": {"ticket": f"T-{(h >> 8) % 100000:05d}"},
            }
            if status in _FAILED_REFUND:
                rec["failureReason"] = "insufficient_funds" if h & 1 else "expired_card"
            out.append(rec)
        return out

    # ------------------------------------------------------------------ customers / subscriptions
    def sub_customer(self, s: int) -> int:
        """Customer index of subscription s: every tenth subscription is a second one."""
        return s - 1 if s % 10 == 9 else s

    def subs_of_customer(self, c: int) -> list[int]:
        if c % 10 == 9 or c >= self.customers:
            return []
        subs = [c]
        if c + 1 < self.sizes.subscriptions and (c + 1) % 10 == 9:
            subs.append(c + 1)
        return subs

    def sub_status(self, s: int) -> str:
        if self.sub_kind.get(s) == "subscription_unknown_status":
            return "frozen"
        r = self._h("sub", s) % 100
        if r < 70:
            return "active"
        if r < 78:
            return "trialing"
        if r < 83:
            return "past_due"
        if r < 93:
            return "canceled"
        if r < 96:
            return "paused"
        if r < 98:
            return "unpaid"
        return "incomplete"

    def _customer_has_subs_none_active(self, c: int) -> bool:
        subs = self.subs_of_customer(c)
        return bool(subs) and all(self.sub_status(s) != "active" for s in subs)

    def _customer_may_have_open(self, c: int) -> bool:
        subs = self.subs_of_customer(c)
        return not subs or any(self.sub_status(s) == "active" for s in subs)

    def subscription(self, s: int) -> dict[str, Any]:
        h = self._h("sub", s, 1)
        cur, lo, hi = self._currency(h)
        created = self.created_ms("subscriptions", s)
        return {
            "id": self.make_id("sub", s),
            "customerId": self.customer_id(self.sub_customer(s)),
            "priceId": self.make_id("price", (h >> 8) % 20),
            "status": self.sub_status(s),
            "createdAt": iso_ms(created),
            "currentPeriodEnd": iso_ms(self.anchor_ms + ((h >> 16) % 30 + 1) * DAY_MS),
            "plan": {
                "interval": ("month", "year")[(h >> 24) % 2],
                "amount": {"amountMinor": lo + (h >> 28) % (hi - lo + 1), "currency": cur},
            },
            "metadata": {"source": "sandbox"},
        }

    # ------------------------------------------------------------------ invoices
    def _invoice_parts(self, v: int) -> tuple[int, int | None, str]:
        """(customer, subscription or None, status) of invoice v."""
        h = self._h("in", v)
        kind = self.inv_kind.get(v)
        if v in self.inv_customer_override:
            c = self.inv_customer_override[v]
        else:
            c = h % max(self.customers, 1)
        subs = self.subs_of_customer(c)
        sub = subs[(h >> 8) % len(subs)] if subs else None
        r = (h >> 16) % 100
        may_open = self._customer_may_have_open(c)
        if kind == "invoice_inactive_subscription":
            status = "open"
        elif kind in ("invoice_zero_amount", "invoice_negative_amount"):
            status = "open"
            if not may_open:  # keep the planted finding alone
                subs, sub, c = [], None, self._one_off_customer(h)
        elif kind == "invoice_unknown_status":
            status = "pending_review"
        elif kind in ("invoice_non_integer_amount", "invoice_invalid_currency") or r < 80:
            status = "paid"
        elif r < 92 and may_open:
            status = "open"
        elif r < 96:
            status = "void"
        elif r < 98:
            status = "uncollectible"
        else:
            status = "draft"
        return c, sub, status

    def _one_off_customer(self, h: int) -> int:
        # customers 9, 19, 29, … own no subscription
        tens = max(self.customers // 10, 1)
        return min(((h >> 24) % tens) * 10 + 9, max(self.customers - 1, 0))

    def invoice_aging(self, v: int) -> tuple[str, int | None]:
        """(planned bucket, days past due at the anchor date or None when no dueDate)."""
        h = self._h("in", v, 1)
        if h % 10 == 0:
            return "0-30", None
        bucket, lo, hi = _AGING_BANDS[(h >> 4) % len(_AGING_BANDS)]
        return bucket, lo + (h >> 8) % (hi - lo + 1)

    def invoice(self, v: int) -> dict[str, Any]:
        c, sub, status = self._invoice_parts(v)
        h = self._h("in", v, 2)
        cur, lo, hi = self._currency(h)
        amount: Any = lo + (h >> 8) % (hi - lo + 1)
        kind = self.inv_kind.get(v)
        if kind == "invoice_zero_amount":
            amount = 0
        elif kind == "invoice_negative_amount":
            amount = -amount
        elif kind == "invoice_non_integer_amount":
            amount = str(amount) if h % 2 else amount + 0.5
        elif kind == "invoice_invalid_currency":
            cur = "XYZ"
        created = self.created_ms("invoices", v)
        rec: dict[str, Any] = {
            "id": self.make_id("in", v),
            "customerId": self.customer_id(c),
            "subscriptionId": self.make_id("sub", sub) if sub is not None else None,
            "status": status,
            "amountDue": {"amountMinor": amount, "currency": cur},
            "createdAt": iso_ms(created),
        }
        if status == "open":
            _, days = self.invoice_aging(v)
            if days is not None:
                rec["dueDate"] = _iso_date(self.anchor_ms - days * DAY_MS)
        elif h & 0x10:
            rec["dueDate"] = _iso_date(created + 30 * DAY_MS)
        rec["lines"] = {"count": 1 + (h >> 40) % 3}
        rec["metadata"] = {"source": "sandbox"}
        return rec

    # ------------------------------------------------------------------ disputes
    def _dispute_payment(self, d: int) -> int | None:
        kind = self.dispute_kind.get(d)
        h = self._h("dp", d)
        if kind is None and h % 10 == 0:
            return None  # about one dispute in ten carries no payment reference
        n = self.n
        if not n:
            return None
        start = min(n - 1, (d * n) // max(self.sizes.disputes, 1) + 1 + (h >> 8) % 3)
        want = {
            "dispute_on_refunded": ("refunded",),
            "dispute_on_partially_refunded": ("partially_refunded",),
        }.get(kind or "", ("confirmed",))
        for i in range(start, min(n, start + 5000)):
            if i in self.pay_kind or i in self.dup_partner:
                continue
            if self.payment_plan(i).status in want:
                return i
        return None

    def dispute(self, d: int) -> dict[str, Any]:
        h = self._h("dp", d, 1)
        kind = self.dispute_kind.get(d)
        p = self._dispute_payment(d)
        if p is not None:
            plan = self.payment_plan(p)
            amount: Any = plan.amount
            cur = plan.currency
        else:
            cur, lo, hi = self._currency(h)
            amount = lo + (h >> 8) % (hi - lo + 1)
        status = DISPUTE_STATUSES[(h >> 20) % len(DISPUTE_STATUSES)]
        if kind == "dispute_negative_amount":
            amount = -abs(amount)
        elif kind == "dispute_invalid_currency":
            cur = "XYZ"
        elif kind == "dispute_unknown_status":
            status = "escalated"
        created = self.created_ms("disputes", d)
        rec: dict[str, Any] = {"id": self.make_id("dp", d)}
        if p is not None:
            rec["paymentId"] = self.payment_id(p)
        rec.update(
            {
                "amount": {"amountMinor": amount, "currency": cur},
                "status": status,
                "reason": _DISPUTE_REASONS[(h >> 24) % len(_DISPUTE_REASONS)],
                "createdAt": iso_ms(created),
                "evidenceDueBy": iso_ms(created + 14 * DAY_MS),
                "evidence": {"submitted": bool(h & 1), "documents": (h >> 1) % 4},
            }
        )
        return rec

    # ------------------------------------------------------------------ payment intents
    def intent(self, k: int) -> dict[str, Any]:
        h = self._h("pi", k)
        cur, lo, hi = self._currency(h)
        amount: Any = lo + (h >> 8) % (hi - lo + 1)
        if (h >> 30) % 50 == 0:
            amount = 0
        kind = self.intent_kind.get(k)
        r = (h >> 40) % 100
        if self.is_recent("payment_intents", k):
            allst = (*_INTENT_NONFINAL, "succeeded", "cancelled")
            status = allst[r % len(allst)]
        else:
            status = "succeeded" if r < 85 else "cancelled"
        if kind == "intent_negative_amount":
            amount = -amount - 1
        elif kind == "intent_non_integer_amount":
            amount = amount + 0.5
        elif kind == "intent_invalid_currency":
            cur = "EURO"
        elif kind == "intent_stuck":
            status = _INTENT_NONFINAL[r % 4]
        elif kind == "intent_unknown_status":
            status = "on_hold"
        created = self.created_ms("payment_intents", k)
        return {
            "id": self.make_id("pi", k),
            "status": status,
            "captureMethod": "manual" if (h >> 50) % 5 == 0 else "automatic",
            "amount": amount,
            "currency": cur,
            "createdAt": iso_ms(created),
            "paymentMethodTypes": ["card"] if h & 1 else ["card", "bank"],
            "nextAction": ({"type": "redirect_to_url"} if status == "requires_action" else None),
            "metadata": {"cart": f"cart_{(h >> 20) % 100000}"},
        }

    # ------------------------------------------------------------------ payment methods
    def payment_methods(self, c: int) -> list[dict[str, Any]]:
        h = self._h("cus", c)
        count = 1 + h % 3
        out = []
        for j in range(count):
            hj = self._h("pm", c * 4 + j)
            rec: dict[str, Any] = {
                "id": self.make_id("pm", c * 4 + j),
                "type": "card" if hj % 3 else "bank",
                "createdAt": iso_ms(self.anchor_ms - (c * 4 + j + 1) * 3_600_000),
                "isDefault": j == 0,
            }
            if rec["type"] == "card":
                rec["card"] = {
                    "brand": _CARD_BRANDS[(hj >> 4) % 4],
                    "last4": f"{(hj >> 8) % 10000:04d}",
                    "expMonth": 1 + (hj >> 24) % 12,
                    "expYear": 2027 + (hj >> 28) % 5,
                }
            else:
                rec["bankAccount"] = {
                    "bankName": "Sandbox Bank",
                    "last4": f"{(hj >> 8) % 10000:04d}",
                }
            out.append(rec)
        return out

    # ------------------------------------------------------------------ the small resources
    def _make_fixtures(self) -> Fixtures:
        fx = Fixtures()
        a = self.anchor_ms
        sstat = ("pending", "pending", "pending", "confirmed", "failed", "cancelled", "expired")
        for k in range(self.sizes.checkout_sessions):
            h = self._h("cs", k)
            cur, lo, hi = self._currency(h)
            ident = self.make_id("cs", k)
            fx.checkout_sessions[ident] = {
                "id": ident,
                "amountMinor": lo + (h >> 8) % (hi - lo + 1),
                "currency": cur,
                "status": sstat[k % len(sstat)],
                "checkoutUrl": f"https://checkout.sandbox.example/pay/{ident}",
                "expiresAt": iso_ms(a + (k + 1) * 3_600_000),
                "uiMode": "hosted" if k % 2 == 0 else "embedded",
                "paymentMethodType": ("bank", "card", "apple_pay", "google_pay")[k % 4],
                "customerDetails": {"email": f"buyer{k}@example.test"},
                "lineItems": {"count": 1 + k % 3},
            }
        for k in range(self.sizes.payment_links):
            ident = self.make_id("plink", k)
            fx.payment_links[ident] = {
                "id": ident,
                "url": f"https://pay.sandbox.example/l/{ident}",
                "active": k != 0,
            }
        for k in range(self.sizes.products):
            ident = self.make_id("prod", k)
            fx.products[ident] = {"id": ident, "name": f"Product {k + 1}", "active": k % 4 != 3}
        for k in range(self.sizes.coupons):
            ident = self.make_id("co", k)
            fx.coupons[ident] = {
                "id": ident,
                "name": f"Coupon {k + 1}",
                "percentOff": (5, 10, 12.5, 20, 25)[k % 5],
                "duration": ("once", "repeating", "forever")[k % 3],
            }
        for k in range(self.sizes.tax_rates):
            ident = self.make_id("txr", k)
            fx.tax_rates[ident] = {
                "id": ident,
                "displayName": ("VAT", "Sales tax", "GST", "Reduced VAT")[k % 4],
                "percentage": (19, 7.25, 10, 7)[k % 4],
                "inclusive": k % 2 == 0,
            }
        for k in range(self.sizes.webhook_endpoints):
            ident = self.make_id("we", k)
            fx.webhook_endpoints[ident] = {
                "id": ident,
                "url": f"https://merchant.example/hooks/{k}",
            }
        ident = self.make_id("cset", 0)
        fx.checkout_settings[ident] = {
            "id": ident,
            "locale": "en-GB",
            "allowedOrigins": ["https://shop.example"],
            "paymentMethods": ["card", "bank"],
        }
        return fx

    # ------------------------------------------------------------------ generic access
    def count(self, resource: str) -> int:
        if resource == "refunds":
            return self.refund_count
        return int(getattr(self.sizes, resource))

    def record(self, resource: str, index: int) -> dict[str, Any]:
        if resource == "payments":
            return self.payment(index)
        if resource == "refunds":
            return self.refund(index)
        if resource == "disputes":
            return self.dispute(index)
        if resource == "subscriptions":
            return self.subscription(index)
        if resource == "invoices":
            return self.invoice(index)
        if resource == "payment_intents":
            return self.intent(index)
        raise KeyError(resource)

    def records_bytes(self, resource: str, start: int, stop: int) -> list[bytes]:
        """Serialised records start..stop-1 (fast path for whole chunks)."""
        dumps = orjson.dumps
        if resource == "refunds":
            out: list[bytes] = []
            if start >= stop:
                return out
            pre = self.refund_prefix()
            i, _ = self.refund_locate(start)
            pos = start - pre[i]  # position among payment i's refunds, newest first
            while len(out) < stop - start and i < self.n:
                recs = self.refunds_of(i)
                recs.reverse()
                out.extend(dumps(rec) for rec in recs[pos:])
                pos = 0
                i += 1
            return out[: stop - start]
        if resource == "payments":
            pb = self.payment_bytes
            return [pb(k) for k in range(start, stop)]
        gen = {
            "disputes": self.dispute,
            "subscriptions": self.subscription,
            "invoices": self.invoice,
            "payment_intents": self.intent,
        }[resource]
        return [dumps(gen(k)) for k in range(start, stop)]

    def iter_records(self, resource: str) -> Iterator[dict[str, Any]]:
        """Every generated record of a list resource, newest first."""
        if resource == "refunds":
            for i in range(self.n):
                yield from reversed(self.refunds_of(i))
            return
        for k in range(self.count(resource)):
            yield self.record(resource, k)

    def planted(self) -> list[Planted]:
        """What was planted on purpose, with the finding each must produce."""
        out: list[Planted] = []
        pay_checks: dict[str, list[tuple[str, str]]] = {
            "refunded_short": [("refunded_amount_mismatch", "refunded_short")],
            "refunded_over": [
                ("refunded_amount_mismatch", "refunded_over"),
                ("over_refunded", "over_refunded"),
            ],
            "partial_but_full": [("partially_refunded_out_of_range", "partial_but_full")],
            "partial_without_refund": [
                ("partially_refunded_out_of_range", "partial_without_refund")
            ],
            "partial_over": [
                ("partially_refunded_out_of_range", "partial_over"),
                ("over_refunded", "over_refunded"),
            ],
            "confirmed_with_refunds": [("confirmed_with_refunds", "confirmed_with_refunds")],
            "duplicate_reference": [("duplicate_payment_reference", "duplicate_reference")],
            "payment_negative_amount": [
                ("impossible_amounts", "negative_amount"),
                ("confirmed_with_refunds", "confirmed_with_refunds"),
                ("over_refunded", "over_refunded"),
            ],
            "payment_float_amount": [("impossible_amounts", "non_integer_amount")],
            "payment_string_amount": [("impossible_amounts", "non_integer_amount")],
            "payment_invalid_currency": [("impossible_amounts", "invalid_currency")],
            "payment_unknown_status": [("unknown_status", "unknown_status")],
            "payment_stuck_created": [("stuck_non_final", "stuck_created")],
            "payment_stuck_pending": [("stuck_non_final", "stuck_pending")],
        }
        refund_checks: dict[str, tuple[str, str]] = {
            "refund_currency_mismatch": ("refund_currency_mismatch", "currency_mismatch"),
            "refund_unknown_payment": ("refund_unknown_payment", "unknown_payment"),
            "refund_unrefundable_state": (
                "refund_on_unrefundable_payment",
                "unrefundable_payment_state",
            ),
            "refund_negative_amount": ("impossible_amounts", "negative_amount"),
            "refund_non_integer_amount": ("impossible_amounts", "non_integer_amount"),
            "refund_invalid_currency": ("impossible_amounts", "invalid_currency"),
            "refund_unknown_status": ("unknown_status", "unknown_status"),
            "refund_stuck_pending": ("stuck_non_final", "stuck_pending"),
        }
        for i, kind in sorted(self.pay_kind.items()):
            pid = self.payment_id(i)
            for check, issue in pay_checks.get(kind, []):
                out.append(Planted(kind, check, "payment", pid, issue))
            if kind == "duplicate_reference":
                partner = self.dup_of.get(i)
                if partner is not None:
                    out.append(
                        Planted(
                            kind,
                            "duplicate_payment_reference",
                            "payment",
                            self.payment_id(partner),
                            "duplicate_reference",
                        )
                    )
            if kind == "refund_unrefundable_state":
                status = self.payment_plan(i).status
                if status in ("created", "pending"):  # old, so it is stuck as well
                    out.append(Planted(kind, "stuck_non_final", "payment", pid, f"stuck_{status}"))
            if kind in refund_checks:
                check, issue = refund_checks[kind]
                # the planted refund is the last (newest) one of the payment
                rec = self.refunds_of(i)[-1]
                out.append(Planted(kind, check, "refund", rec["id"], issue))
        for d, kind in sorted(self.dispute_kind.items()):
            did = self.make_id("dp", d)
            if kind in ("dispute_on_refunded", "dispute_on_partially_refunded"):
                if self._dispute_payment(d) is not None:
                    out.append(
                        Planted(
                            kind,
                            "dispute_on_refunded_payment",
                            "dispute",
                            did,
                            "dispute_on_refunded_payment",
                        )
                    )
            elif kind == "dispute_negative_amount":
                out.append(Planted(kind, "impossible_amounts", "dispute", did, "negative_amount"))
            elif kind == "dispute_invalid_currency":
                out.append(Planted(kind, "impossible_amounts", "dispute", did, "invalid_currency"))
            elif kind == "dispute_unknown_status":
                out.append(Planted(kind, "unknown_status", "dispute", did, "unknown_status"))
        for s, kind in sorted(self.sub_kind.items()):
            out.append(
                Planted(
                    kind, "unknown_status", "subscription", self.make_id("sub", s), "unknown_status"
                )
            )
        for v in range(self.sizes.invoices):
            ikind = self.inv_kind.get(v)
            _, _, status = self._invoice_parts(v)
            vid = self.make_id("in", v)
            if status == "open":
                bucket, _ = self.invoice_aging(v)
                out.append(
                    Planted(ikind or "open_invoice", "open_invoices", "invoice", vid, bucket)
                )
            if ikind == "invoice_inactive_subscription" and v in self.inv_customer_override:
                out.append(
                    Planted(
                        ikind,
                        "open_invoice_inactive_subscription",
                        "invoice",
                        vid,
                        "inactive_subscription",
                    )
                )
            elif ikind in ("invoice_zero_amount", "invoice_negative_amount"):
                out.append(
                    Planted(
                        ikind,
                        "open_invoice_nonpositive_amount",
                        "invoice",
                        vid,
                        "nonpositive_amount_due",
                    )
                )
                if ikind == "invoice_negative_amount":
                    out.append(
                        Planted(ikind, "impossible_amounts", "invoice", vid, "negative_amount")
                    )
            elif ikind == "invoice_non_integer_amount":
                out.append(
                    Planted(ikind, "impossible_amounts", "invoice", vid, "non_integer_amount")
                )
            elif ikind == "invoice_invalid_currency":
                out.append(Planted(ikind, "impossible_amounts", "invoice", vid, "invalid_currency"))
            elif ikind == "invoice_unknown_status":
                out.append(Planted(ikind, "unknown_status", "invoice", vid, "unknown_status"))
        for k, kind in sorted(self.intent_kind.items()):
            kid = self.make_id("pi", k)
            rec = self.intent(k)
            if kind == "intent_negative_amount":
                out.append(
                    Planted(kind, "impossible_amounts", "payment_intent", kid, "negative_amount")
                )
                out.append(
                    Planted(
                        kind, "intent_negative_amount", "payment_intent", kid, "negative_amount"
                    )
                )
            elif kind == "intent_non_integer_amount":
                out.append(
                    Planted(kind, "impossible_amounts", "payment_intent", kid, "non_integer_amount")
                )
            elif kind == "intent_invalid_currency":
                out.append(
                    Planted(kind, "impossible_amounts", "payment_intent", kid, "invalid_currency")
                )
            elif kind == "intent_stuck":
                out.append(
                    Planted(
                        kind, "stuck_non_final", "payment_intent", kid, f"stuck_{rec['status']}"
                    )
                )
            elif kind == "intent_unknown_status":
                out.append(Planted(kind, "unknown_status", "payment_intent", kid, "unknown_status"))
        return out
