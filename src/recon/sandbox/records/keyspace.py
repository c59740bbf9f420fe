"""Ids, hashes and the time axis of one seed and size.

Every record is a pure function of ``(seed, resource, index)``: its hash is a splitmix64
mix of the index and a per-prefix salt. Identifiers are ``<prefix>_<base32>`` of a
bijective 64-bit mix of the index, so an id can be turned back into its index without any
lookup table (used by the single-record GETs). Index 0 is the newest record of each
resource; ``createdAt`` falls strictly with the index.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import UTC, datetime

from recon.sandbox.records.clock import DAY_MS, default_anchor

__all__ = ["OLD_DAYS", "Keyspace", "Sizes", "b32", "mix"]

_M = (1 << 64) - 1
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB
_C1_INV = pow(_C1, -1, 1 << 64)
_C2_INV = pow(_C2, -1, 1 << 64)

# Spans of createdAt (index 0 is 1 step before the anchor, the last index `span` before it).
_SPAN_DAYS = {
    "payments": 90,
    "disputes": 90,
    "subscriptions": 720,
    "invoices": 365,
    "payment_intents": 30,
}
OLD_DAYS = 10  # planted "old" records are at least this old (stuck_days is 7)

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


def mix(x: int) -> int:
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


def b32(n: int) -> str:
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
    return n if b32(n) == s else None


#: Records planted per unit of `per_kind`, counted on the oracle's list (`Dataset.planted()`:
#: some kinds plant two or three records, a duplicate reference takes a partner): ~52.
PLANTED_PER_KIND = 52
#: Open invoices every data set has besides (the `open_invoices` check lists each one):
#: ~2.5% of the number of payments.
OPEN_INVOICE_SHARE = 0.025


def per_kind_for_rate(payments: int, rate: float) -> int:
    """`per_kind` such that about `rate * payments` records carry a planted anomaly or are
    an open invoice (0.13: a provider's first night as recon meets it; issue 38)."""
    if not 0 <= rate <= 0.5:
        raise ValueError("the anomaly rate must be between 0 and 0.5")
    return max(1, round(payments * max(rate - OPEN_INVOICE_SHARE, 0) / PLANTED_PER_KIND))


@dataclass
class Sizes:
    """How many records of each resource a data set holds."""

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


class Keyspace:
    """The seed's hashes and ids, the resources' sizes, and ``createdAt`` by index."""

    def __init__(
        self,
        seed: int,
        payments: int,
        anchor: datetime | None,
        *,
        anomaly_rate: float | None = None,
    ) -> None:
        self.seed = seed
        self.anchor = anchor if anchor is not None else default_anchor()
        if self.anchor.tzinfo is None:
            self.anchor = self.anchor.replace(tzinfo=UTC)
        self.anchor_ms = int(self.anchor.timestamp() * 1000)
        self.n = payments
        base = mix(seed * 0x2545F4914F6CDD1D + 0x1234567)
        self.salt = {k: mix(base + v * 0x9E3779B97F4A7C15) for k, v in _SALTS.items()}
        n = payments
        #: anomalies planted of each kind (the minimum sizes leave room for them)
        self.per_kind = max(2, min(n // 2000, 500)) if n >= 40 else 1
        if anomaly_rate is not None and n >= 40:  # as many as a real first night (issue 38)
            self.per_kind = per_kind_for_rate(n, anomaly_rate)
        pk = self.per_kind
        self.sizes = Sizes(
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
        self.customers = self.sizes.subscriptions  # customer c owns subscription c
        self.step: dict[str, int] = {}
        for res, days in _SPAN_DAYS.items():
            count = getattr(self.sizes, res)
            self.step[res] = max(4, days * DAY_MS // max(count, 1))

    def make_id(self, prefix: str, index: int) -> str:
        """The id of record ``index`` of the resource with id ``prefix``."""
        return f"{prefix}_{b32(mix(index + self.salt[prefix]))}"

    def index_of(self, prefix: str, ident: str, count: int) -> int | None:
        """The index of a generated id, or None when it is not one of ours."""
        head, sep, tail = ident.partition("_")
        if not sep or head != prefix:
            return None
        num = _unb32(tail)
        if num is None:
            return None
        idx = (_unmix(num) - self.salt[prefix]) & _M
        return idx if idx < count else None

    def h(self, prefix: str, index: int, k: int = 0) -> int:
        """The ``k``-th 64-bit hash of record ``index`` of ``prefix``."""
        return mix((index + self.salt[prefix]) ^ (k * 0x9E3779B97F4A7C15 + 0x51ED27))

    def created_ms(self, resource: str, index: int) -> int:
        """``createdAt`` (epoch ms) of record ``index``: one step per index before the anchor."""
        return self.anchor_ms - (index + 1) * self.step[resource]

    def first_old(self, resource: str, days: int = OLD_DAYS) -> int:
        """The first index whose record is more than ``days`` days older than the anchor."""
        return -(-(days * DAY_MS) // self.step[resource])

    def is_recent(self, resource: str, index: int) -> bool:
        """Younger than one day before the anchor (the only non-final records that are clean)."""
        return (index + 1) * self.step[resource] < DAY_MS
