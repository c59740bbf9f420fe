"""Everything a running sandbox knows and changes (one per app; reset with /_sandbox/reset)."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from itertools import count
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from recon.sandbox.config import SandboxConfig
from recon.sandbox.data import LIST_RESOURCES, Dataset, iso_ms
from recon.sandbox.drift import Drift
from recon.sandbox.envelope import RequestIds
from recon.sandbox.faults import FaultPlan, FaultProfile
from recon.sandbox.idempotency import Creates
from recon.sandbox.life import apply_life
from recon.sandbox.mutations import ID_PREFIX, is_harmless, new_record
from recon.sandbox.pacing import PACING_FIELDS, Pacing
from recon.sandbox.store import ListView
from recon.sandbox.switches import Poison, Shift
from recon.sandbox.truth import truth_json

__all__ = ["Handler", "SandboxState"]


class SandboxState:
    """Everything a running sandbox knows and changes (one per app; reset with /_sandbox/reset)."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.profile_spec = config.faults
        self.profile = FaultProfile.parse(config.faults)
        self.faults = FaultPlan(self.profile, config.seed, rate=config.fault_rate)
        self.data = Dataset(
            config.seed,
            config.payments,
            config.anchor,
            anomalies=config.anomalies,
            anomaly_rate=config.anomaly_rate,
        )
        self._truth: bytes | None = None
        self._truth_lock = threading.Lock()
        self.warm = False
        self._ids = RequestIds()
        self.lock = threading.RLock()
        self.switches = config.switches()
        self._apply_profile()
        self.pacing = Pacing.from_config(config)
        self.reset()

    def _apply_profile(self) -> None:
        """Put the fault profile in force (none at all while the faults are switched off)."""
        cfg = self.config
        on = self.switches.enabled
        self.profile = FaultProfile.parse(self.profile_spec) if on else FaultProfile()
        self.faults.profile = self.profile
        self.refunds_list = cfg.refunds_list and not self.profile.strict
        self.invoices_list = cfg.invoices_list and not self.profile.strict
        self.poisoned_skip = self.faults.poisoned_page(cfg.payments)

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
        self.poison_ids: dict[Poison, bytes | None] = {}
        self.drift = Drift(
            ds,
            self.lists,
            self.faults,
            new_id=self.new_id,
            now_iso=self.now_iso,
            extra_payments=self.extra_payments,
        )
        self.life = apply_life(ds, self.lists, self.config.day, self.extra_payments)
        self._new = count(1)
        self._last_ms = 0
        self.requests = 0
        self.shift_log: list[dict[str, Any]] = []
        self.faults.reset()
        with self.lock:
            self.switches = self.config.switches()
            self.profile_spec = self.config.faults
            self._apply_profile()

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
        for res in LIST_RESOURCES:
            if res in lists:
                continue
            lists[res] = ListView(
                res,
                (lambda r: lambda: ds.count(r))(res),
                (lambda r: lambda a, b: ds.records_bytes(r, a, b))(res),
                cache_records=cache,
            )
        return lists

    def prewarm(self) -> None:
        """Generate and serialise every list record now (up to the cache size)."""
        for res in LIST_RESOURCES:
            self.lists[res].warm()
        self.warm = True

    # ---------------------------------------------------------------- helpers
    def request_id(self) -> str:
        return self._ids.next()

    def truth(self) -> bytes:
        """The truth JSON of the generated data (computed once; thread-safe)."""
        with self._truth_lock:
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

    # ---------------------------------------------------------------- scripted faults
    def set_faults(self, **changes: Any) -> dict[str, Any]:
        """Switch faults and pacing of the running sandbox; returns :meth:`faults_json`.

        Keywords: ``enabled`` (False: no fault at all, the profile's too), ``profile``
        (e.g. "flaky,capped"), ``storm`` (the next N requests), ``cap_after``, ``cap_to``,
        ``shifts``, ``delays``, ``poison`` (objects or their text forms), and the pacing:
        ``latency_ms``, ``latency_jitter_ms``, ``rate``, ``burst``, ``max_in_flight``.
        """
        pacing = {k: changes.pop(k) for k in PACING_FIELDS if k in changes}
        profile = changes.pop("profile", None)
        with self.lock:
            # everything is checked before anything changes
            if profile is not None:
                FaultProfile.parse(profile)
            switches = self.switches.changed(**changes)
            if not 1 <= switches.cap_to <= 200:
                raise ValueError("cap_to must be from 1 to 200 records")
            if switches.storm < 0 or (switches.cap_after is not None and switches.cap_after < 0):
                raise ValueError("storm and cap_after must be >= 0")
            new_pacing = self.pacing.changed(**pacing) if pacing else self.pacing
            if "storm" in changes:
                switches.stormed = 0  # a storm of the next N requests
            if profile is not None:
                self.profile_spec = profile
            self.switches = switches
            self.pacing = new_pacing
            self._apply_profile()
        return self.faults_json()

    def faults_json(self) -> dict[str, Any]:
        """What is in force: profile, scripted faults and their counters, pacing."""
        return {
            "profile": self.profile.name,
            **self.switches.as_json(),
            "shifted": self.shift_log,
            "pacing": self.pacing.as_json(),
        }

    def poison_id(self, poison: Poison) -> bytes | None:
        """The JSON text ``"id":"<id>"`` of the poisoned record (None: no such record)."""
        if poison not in self.poison_ids:
            view = self.lists[poison.resource]
            found = None
            if poison.index < view.base_count:
                rec = orjson.loads(view.base_records(poison.index, poison.index + 1)[0])
                found = b'"id":' + orjson.dumps(rec["id"])
            self.poison_ids[poison] = found
        return self.poison_ids[poison]

    def after_list_page(self, resource: str) -> None:
        """Count an answered page of ``resource``; apply the shifts due now."""
        sw = self.switches
        with self.lock:
            n = sw.answered.get(resource, 0) + 1
            sw.answered[resource] = n
            if not sw.enabled:
                return
            for shift in sw.shifts:
                if shift.resource == resource and shift.after == n:
                    self.shift(shift)

    def shift(self, shift: Shift) -> dict[str, list[str]]:
        """Delete ``shift.delete`` harmless records just before offset ``shift.before``
        and insert ``shift.insert`` new ones at the head, now. Returns the ids."""
        ds = self.data
        view = self.lists[shift.resource]
        done: dict[str, list[str]] = {"inserted": [], "deleted": []}
        with self.lock:
            start = view.base_index_at(shift.before)
            index = min(start if start is not None else 0, view.base_count)
            while len(done["deleted"]) < shift.delete and index > 0:
                index -= 1
                if is_harmless(ds, view, index):
                    view.delete(index)
                    rid = orjson.loads(view.base_records(index, index + 1)[0])["id"]
                    done["deleted"].append(rid)
            for k in range(shift.insert):
                ident = self.new_id(ID_PREFIX[shift.resource])
                rec, status = new_record(ds, shift.resource, ident, k, self.now_iso())
                if shift.resource == "payments":
                    self.extra_payments[ident] = rec
                view.insert(orjson.dumps(rec), ident, status)
                done["inserted"].append(ident)
            self.shift_log.append({"shift": str(shift), **done})
        return done

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
