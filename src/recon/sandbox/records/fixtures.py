"""The small resources (no list operation): checkout sessions, links, products, coupons,
tax rates, webhook endpoints and the checkout setting, generated once and kept as dicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recon.sandbox.records.clock import iso_ms
from recon.sandbox.records.keyspace import Keyspace
from recon.sandbox.records.vocabulary import currency_of

__all__ = ["Fixtures", "make_fixtures"]


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


def make_fixtures(ks: Keyspace) -> Fixtures:
    """The small resources of one seed."""
    fx = Fixtures()
    a = ks.anchor_ms
    sstat = ("pending", "pending", "pending", "confirmed", "failed", "cancelled", "expired")
    for k in range(ks.sizes.checkout_sessions):
        h = ks.h("cs", k)
        cur, lo, hi = currency_of(h)
        ident = ks.make_id("cs", k)
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
    for k in range(ks.sizes.payment_links):
        ident = ks.make_id("plink", k)
        fx.payment_links[ident] = {
            "id": ident,
            "url": f"https://pay.sandbox.example/l/{ident}",
            "active": k != 0,
        }
    for k in range(ks.sizes.products):
        ident = ks.make_id("prod", k)
        fx.products[ident] = {"id": ident, "name": f"Product {k + 1}", "active": k % 4 != 3}
    for k in range(ks.sizes.coupons):
        ident = ks.make_id("co", k)
        fx.coupons[ident] = {
            "id": ident,
            "name": f"Coupon {k + 1}",
            "percentOff": (5, 10, 12.5, 20, 25)[k % 5],
            "duration": ("once", "repeating", "forever")[k % 3],
        }
    for k in range(ks.sizes.tax_rates):
        ident = ks.make_id("txr", k)
        fx.tax_rates[ident] = {
            "id": ident,
            "displayName": ("VAT", "Sales tax", "GST", "Reduced VAT")[k % 4],
            "percentage": (19, 7.25, 10, 7)[k % 4],
            "inclusive": k % 2 == 0,
        }
    for k in range(ks.sizes.webhook_endpoints):
        ident = ks.make_id("we", k)
        fx.webhook_endpoints[ident] = {
            "id": ident,
            "url": f"https://merchant.example/hooks/{k}",
        }
    ident = ks.make_id("cset", 0)
    fx.checkout_settings[ident] = {
        "id": ident,
        "locale": "en-GB",
        "allowedOrigins": ["https://shop.example"],
        "paymentMethods": ["card", "bank"],
    }
    return fx
