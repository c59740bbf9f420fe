"""A digest of everything a sandbox serves, to prove a refactoring changed no byte of it.

For one seed and size it pages every list (page sizes 200 and 37, each payment status),
reads the truth, fixtures and state, makes one request of every operation (successes and
errors, idempotent replays and conflicts), and pages under each fault profile. Every status,
header that matters and body goes into one SHA-256; request ids (random per process) and
the `createdAt` of objects made at run time (wall clock) are masked.

    .venv/bin/python -m tests.sandbox.sandbox_snapshot     # prints the digests
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from recon.sandbox.app import DEMO_API_KEY, DEMO_BEARER_TOKEN, SandboxConfig, create_app
from recon.sandbox.data import LIST_RESOURCES, Dataset
from recon.sandbox.server import InProcessTransport

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
KEY = {"x-api-key": DEMO_API_KEY}
BEARER = {"Authorization": f"Bearer {DEMO_BEARER_TOKEN}"}
P = "/api/v1"
LISTS = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment-intents")
STATUSES = (
    "created",
    "pending",
    "confirmed",
    "partially_refunded",
    "refunded",
    "cancelled",
    "expired",
)
#: The cases the split was checked against (seed, payments).
CASES = ((3, 300), (7, 300), (11, 300), (3, 2000), (7, 2000), (11, 2000))

_RID = re.compile(rb"req_[0-9a-f]{14}")
_CREATED = re.compile(rb'"createdAt":"([^"]*)"')
_ANCHOR_ISO = b"2026-11-20"


def _mask(raw: bytes) -> bytes:
    # records made at run time are stamped with the wall clock, never before the anchor
    masked = _RID.sub(b"req_X", raw)
    return _CREATED.sub(
        lambda m: m.group(0) if m.group(1) < _ANCHOR_ISO else b'"createdAt":"NOW"', masked
    )


class _Recorder:
    def __init__(self, **config: Any) -> None:
        config.setdefault("anchor", ANCHOR)
        config.setdefault("retry_after_s", 0)
        config.setdefault("slow_s", 0.0)
        self.transport = InProcessTransport(create_app(SandboxConfig(**config)))
        self.client = httpx.Client(transport=self.transport, base_url="http://sandbox")
        self.hash = hashlib.sha256()

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.transport.close()

    def call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        r = self.client.request(method, url, **kwargs)
        h = self.hash
        h.update(f"\n{method} {url} {r.status_code}\n".encode())
        for name in ("content-type", "retry-after", "allow", "www-authenticate"):
            if name in r.headers:
                h.update(f"{name}: {r.headers[name]}\n".encode())
        h.update(_mask(r.content))
        return r

    def page(self, path: str, size: int, extra: str = "") -> None:
        """Page a list to its end; a failing offset is tried 3 times, then passed over."""
        skip = 0
        failures = 0
        while skip < 1_000_000:
            r = self.call("GET", f"{P}/{path}?max-records={size}&skip={skip}{extra}", headers=KEY)
            try:
                body = r.json() if r.status_code == 200 else None
            except ValueError:  # a truncated body
                body = None
            if body is None:
                if r.status_code == 404:
                    return
                failures += 1
                if failures == 3:
                    skip, failures = skip + size, 0
                continue
            failures = 0
            n = len(body["data"])
            if n == 0 or body.get("hasMore") is False:
                return
            skip += n


def _operations(rec: _Recorder) -> None:
    fx = rec.client.get("/_sandbox/fixtures").json()
    c = rec.call
    pay = fx["paymentsByStatus"]
    for pid in fx["payments"]:
        c("GET", f"{P}/payments/{pid}", headers=BEARER)
    c("GET", f"{P}/payments/pay_nothing", headers=BEARER)
    c("GET", f"{P}/payments/{fx['payments'][0]}", headers=KEY)
    c("GET", f"{P}/payments", headers={"x-api-key": "wrong"})
    c("GET", f"{P}/payments")
    c("GET", f"{P}/payments?max-records=0", headers=KEY)
    c("GET", f"{P}/payments?skip=-1", headers=KEY)
    c("GET", f"{P}/payments?status=settled", headers=KEY)
    c("PUT", f"{P}/payments", headers=KEY)
    c("GET", f"{P}/nowhere", headers=KEY)
    for sid in fx["subscriptions"]:
        c("GET", f"{P}/subscriptions/{sid}", headers=KEY)
    for vid in fx["invoices"]:
        c("GET", f"{P}/invoices/{vid}", headers=KEY)
    c("GET", f"{P}/invoices/in_nothing", headers=KEY)
    for cus in fx["customers"]:
        c("GET", f"{P}/customers/{cus}/payment-methods", headers=KEY)
    for link in fx["paymentLinks"]:
        c("GET", f"{P}/payment-links/{link['id']}", headers=KEY)
        c("POST", f"{P}/payment-links/{link['id']}/deactivate", headers=KEY)
    for sess in fx["checkoutSessions"]:
        c(
            "POST",
            f"{P}/checkout-sessions/{sess['id']}/redirect",
            headers=BEARER,
            json={"clientToken": "t"},
        )
        c("POST", f"{P}/checkout-sessions/{sess['id']}/expire", headers=KEY)
    body = {"locale": "de-DE", "allowedOrigins": ["https://a.example"], "paymentMethods": ["card"]}
    made = c("POST", f"{P}/checkout-settings", headers=KEY, json=body).json()
    c("PATCH", f"{P}/checkout-settings/{made['id']}", headers=KEY, json={"locale": "fr-FR"})
    c(
        "PATCH",
        f"{P}/checkout-settings/{fx['checkoutSettings'][0]}",
        headers=KEY,
        json={"allowedOrigins": 3},
    )
    c("POST", f"{P}/checkout-settings", headers=KEY, content=b"not json")
    idem = {"Idempotency-Key": "k-1", **KEY}
    for _status, pid in sorted(pay.items()):
        c(
            "POST",
            f"{P}/refunds",
            headers=KEY,
            json={"paymentId": pid, "amount": {"amountMinor": 1}},
        )
    if "confirmed" in pay:
        refund = {"paymentId": pay["confirmed"], "amount": {"amountMinor": 2}}
        c("POST", f"{P}/refunds", headers=idem, json=refund)
        c("POST", f"{P}/refunds", headers=idem, json=refund)
        c("POST", f"{P}/refunds", headers=idem, json={**refund, "reason": "duplicate"})
        c("POST", f"{P}/refunds", headers=KEY, json={"paymentId": pay["confirmed"]})
        c("POST", f"{P}/refunds", headers=KEY, json={"paymentId": pay["confirmed"]})
        c(
            "POST",
            f"{P}/refunds",
            headers=KEY,
            json={"paymentId": pay["confirmed"], "amount": {"amountMinor": 1, "currency": "XXX"}},
        )
    c("POST", f"{P}/refunds", headers=KEY, json={"paymentId": "pay_nothing"})
    c(
        "POST",
        f"{P}/refunds",
        headers={"Idempotency-Key": "x" * 256, **KEY},
        json={"paymentId": "p"},
    )
    for sid in fx["subscriptions"][:2]:
        c("PATCH", f"{P}/subscriptions/{sid}", headers=KEY, json={"priceId": "price_x"})
    for prod in fx["products"][:2]:
        c("PATCH", f"{P}/products/{prod}", headers=KEY, json={"name": "Renamed"})
    c("PATCH", f"{P}/products/prod_nothing", headers=KEY, json={"name": "x"})
    coupon = c("POST", f"{P}/coupons", headers=KEY, json={"name": "Ten", "percentOff": 10}).json()
    c("PATCH", f"{P}/coupons/{coupon['id']}", headers=KEY, json={"name": "Eleven"})
    c("POST", f"{P}/coupons", headers=KEY, json={"name": "Bad", "percentOff": 101})
    c("POST", f"{P}/tax-rates", headers=KEY, json={"displayName": "VAT", "percentage": 19})
    c(
        "POST",
        f"{P}/tax-rates",
        headers=KEY,
        json={"displayName": "VAT", "percentage": 19, "inclusive": "yes"},
    )
    for we in fx["webhookEndpoints"][:2]:
        c("DELETE", f"{P}/webhook-endpoints/{we}", headers=KEY)
        c("DELETE", f"{P}/webhook-endpoints/{we}", headers=KEY)
    c("GET", f"{P}/refunds?max-records=10", headers=KEY)
    c("GET", f"{P}/subscriptions?max-records=10", headers=KEY)
    c("GET", "/_sandbox/state")
    c("POST", "/_sandbox/reset")
    c("GET", "/_sandbox/state")


def digest(seed: int, payments: int) -> str:
    """The SHA-256 (hex) of everything served for this seed and size."""
    top = hashlib.sha256()
    data = Dataset(seed, payments, ANCHOR)
    for resource in LIST_RESOURCES:
        top.update(f"{resource} {data.count(resource)}".encode())
        for record in data.iter_records(resource):
            top.update(orjson.dumps(record))
    top.update(orjson.dumps([p.as_dict() for p in data.planted()]))
    with _Recorder(seed=seed, payments=payments) as rec:
        for path in LISTS:
            rec.page(path, 200)
        rec.page("payments", 37)
        rec.page("refunds", 37)
        for status in STATUSES:
            rec.page("payments", 50, f"&status={status}")
        rec.call("GET", "/_sandbox/truth")
        rec.call("GET", "/_sandbox/fixtures")
        rec.call("GET", "/_sandbox/present?resource=refunds")
        rec.call("GET", "/_sandbox/state")
        _operations(rec)
        top.update(rec.hash.digest())
    for faults in ("flaky", "chaos", "drift", "strict", "capped", "capped-payments"):
        with _Recorder(seed=seed, payments=payments, faults=faults) as rec:
            for path in LISTS:
                rec.page(path, 200)
            rec.call("GET", "/_sandbox/state")
            rec.call("GET", "/_sandbox/present?resource=payments")
            if faults == "flaky":
                _operations(rec)
            top.update(faults.encode() + rec.hash.digest())
    return top.hexdigest()


def main() -> None:
    for seed, payments in CASES:
        print(f"seed {seed:>2} payments {payments:>5}: {digest(seed, payments)}")


if __name__ == "__main__":
    main()
