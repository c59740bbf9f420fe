"""Everything a running sandbox knows and changes (one per app; reset with /_sandbox/reset)."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from itertools import count
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from recon.sandbox.config import SandboxConfig
from recon.sandbox.data import LIST_RESOURCES, Dataset, iso_ms
from recon.sandbox.drift import Drift
from recon.sandbox.envelope import RequestIds
from recon.sandbox.faults import FaultPlan, FaultProfile
from recon.sandbox.idempotency import Creates
from recon.sandbox.store import ListView
from recon.sandbox.truth import truth_json

__all__ = ["Handler", "SandboxState"]


class SandboxState:
    """Everything a running sandbox knows and changes (one per app; reset with /_sandbox/reset)."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.profile = FaultProfile.parse(config.faults)
        self.faults = FaultPlan(self.profile, config.seed, rate=config.fault_rate)
        self.data = Dataset(config.seed, config.payments, config.anchor, anomalies=config.anomalies)
        self._truth: bytes | None = None
        self.warm = False
        self.refunds_list = config.refunds_list and not self.profile.strict
        self.invoices_list = config.invoices_list and not self.profile.strict
        self.poisoned_skip = self.faults.poisoned_page(config.payments)
        self._ids = RequestIds()
        self.lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        """Forget every change made through the API (and the faults' attempt counts)."""
        ds = self.data
        self.lists = self._make_lists()
        fx = ds.fixtures
        self.sessions = {k: dict(v) for k, v in fx.checkout_sessions.items()}
        self.links = {k: dict(v) for k, v in fx.payment_links.items()}
        self.products = {k: dict(v) for k, v in fx.products.items()}
        self.coupons = {k: dict(v) for k, v in fx.coupons.items()}
        self.tax_rates = {k: dict(v) for k, v in fx.tax_rates.items()}
        self.webhooks = {k: dict(v) for k, v in fx.webhook_endpoints.items()}
        self.settings = {k: dict(v) for k, v in fx.checkout_settings.items()}
        self.sub_edits: dict[int, dict[str, Any]] = {}
        self.extra_payments: dict[str, dict[str, Any]] = {}
        self.created_refunds: dict[str, list[tuple[int, str]]] = {}
        self.creates = Creates(self.config.idempotency_header, self.lock)
        self.drift = Drift(
            ds,
            self.lists,
            self.faults,
            new_id=self.new_id,
            now_iso=self.now_iso,
            extra_payments=self.extra_payments,
        )
        self._new = count(1)
        self._last_ms = 0
        self.requests = 0
        self.faults.reset()

    def _make_lists(self) -> dict[str, ListView]:
        ds = self.data
        cache = self.config.cache_records
        lists = {
            "payments": ListView(
                "payments",
                lambda: ds.n,
                lambda a, b: ds.records_bytes("payments", a, b),
                cache_records=cache,
                status_of=ds.payment_status,
            ),
            "refunds": ListView(
                "refunds",
                lambda: ds.refund_count,
                lambda a, b: ds.records_bytes("refunds", a, b),
                cache_records=cache,
            ),
        }
        for res in ("disputes", "subscriptions", "invoices", "payment_intents"):
            lists[res] = ListView(
                res,
                (lambda r: lambda: ds.count(r))(res),
                (lambda r: lambda a, b: ds.records_bytes(r, a, b))(res),
                cache_records=min(cache, 100_000),
            )
        return lists

    def prewarm(self) -> None:
        """Generate and serialise every list record now (up to the cache size)."""
        for res in LIST_RESOURCES:
            self.lists[res].warm()

    # ---------------------------------------------------------------- helpers
    def request_id(self) -> str:
        return self._ids.next()

    def truth(self) -> bytes:
        if self._truth is None:
            self._truth = truth_json(self.data)
        return self._truth

    def now_iso(self) -> str:
        """The createdAt of a record made now: never before the anchor (so it sorts first)."""
        ms = max(int(datetime.now(UTC).timestamp() * 1000), self.data.anchor_ms + 1000)
        ms = max(ms, self._last_ms + 1)  # strictly increasing: the insertion order is the order
        self._last_ms = ms
        return iso_ms(ms)

    def new_id(self, prefix: str) -> str:
        return self.data.make_id(prefix, (1 << 48) + next(self._new))

    def drift_after_page(self, resource: str) -> None:
        if self.profile.drift:
            self.drift.after_page(resource)

    # ---------------------------------------------------------------- lookups
    def payment_record(self, ident: str) -> dict[str, Any] | None:
        ds = self.data
        i = ds.index_of("pay", ident, ds.n)
        if i is not None and i not in self.lists["payments"].deleted_set:
            return ds.payment(i)
        return self.extra_payments.get(ident)

    def state_json(self) -> dict[str, Any]:
        ds = self.data
        return {
            "seed": self.config.seed,
            "payments": ds.n,
            "anchor": ds.anchor.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "faults": self.profile.name,
            "warm": self.warm,
            "poisonedPaymentsSkip": self.poisoned_skip,
            "refundsList": self.refunds_list,
            "invoicesList": self.invoices_list,
            "idempotencyHeader": self.config.idempotency_header,
            "requests": self.requests,
            "created": dict(self.creates.counts),
            "idempotency": self.creates.keys_json(),
            "drift": self.drift.state_json(),
            "counts": {res: view.total() for res, view in self.lists.items()},
        }

    def fixtures_json(self) -> dict[str, Any]:
        ds = self.data
        n = ds.n
        sample = [ds.payment_id(i) for i in range(min(n, 5))]
        return {
            "checkoutSessions": [
                {"id": k, "status": v["status"]} for k, v in self.sessions.items()
            ],
            "paymentLinks": [{"id": k, "active": v["active"]} for k, v in self.links.items()],
            "products": list(self.products),
            "coupons": list(self.coupons),
            "taxRates": list(self.tax_rates),
            "webhookEndpoints": list(self.webhooks),
            "checkoutSettings": list(self.settings),
            "customers": [ds.customer_id(c) for c in range(min(ds.customers, 5))],
            "payments": sample,
            "paymentsByStatus": _first_by_status(ds),
            "subscriptions": [ds.make_id("sub", s) for s in range(min(ds.sizes.subscriptions, 5))],
            "invoices": [ds.make_id("in", v) for v in range(min(ds.sizes.invoices, 5))],
        }


def _first_by_status(ds: Dataset) -> dict[str, str]:
    """One clean payment of each status (the first found among the first 5000)."""
    out: dict[str, str] = {}
    for i in range(min(ds.n, 5000)):
        if i in ds.pay_kind or i in ds.dup_partner:
            continue
        st = ds.payment_status(i)
        if st not in out:
            out[st] = ds.payment_id(i)
    return out


#: An operation's handler: it refuses by raising recon.errors.ApiError (envelope.refusal).
Handler = Callable[[Request, SandboxState], Awaitable[Response]]
