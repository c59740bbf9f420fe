"""The generated data set of one seed and size: any size, generated lazily, anomalies planted.

Every record is a pure function of ``(seed, resource, index)``: nothing is generated until a
page (or the truth oracle) asks for it, so one million payments cost almost nothing to set
up. Index 0 is the newest record of each resource; ``createdAt`` falls strictly with the
index, so the serving order (newest first) is the index order.

:class:`Dataset` is the one face of ``recon.sandbox.records`` (ids and hashes in
``keyspace``, what is planted where in ``anomalies``, one module per resource).
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from recon.catalogue.resources import nightly_resources
from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.clock import default_anchor, iso_ms
from recon.sandbox.records.customers import Customers
from recon.sandbox.records.disputes import Disputes
from recon.sandbox.records.fixtures import Fixtures, make_fixtures
from recon.sandbox.records.intents import Intents
from recon.sandbox.records.invoices import Invoices
from recon.sandbox.records.keyspace import OLD_DAYS, Keyspace, Sizes
from recon.sandbox.records.payments import PaymentPlan, Payments
from recon.sandbox.records.planted import Planted, list_planted
from recon.sandbox.records.refunds import Refunds
from recon.sandbox.records.serialise import to_json
from recon.sandbox.records.vocabulary import DISPUTE_STATUSES, PAYMENT_STATUSES

__all__ = [
    "DISPUTE_STATUSES",
    "LIST_RESOURCES",
    "PAYMENT_STATUSES",
    "Dataset",
    "Fixtures",
    "PaymentPlan",
    "Planted",
    "default_anchor",
    "iso_ms",
]

#: Resources served as lists, in the order recon extracts them: the catalogue's nightly lists
#: (each needs a record maker below: `Dataset._records`, or payments' and refunds' own).
LIST_RESOURCES = tuple(r.name for r in nightly_resources())


class Dataset:
    """The generated data set of one seed and size, relative to ``anchor``."""

    def __init__(
        self,
        seed: int,
        payments: int,
        anchor: datetime | None = None,
        *,
        anomalies: bool = True,
        anomaly_rate: float | None = None,
    ) -> None:
        if payments < 0:
            raise ValueError("payments must be >= 0")
        ks = self._ks = Keyspace(seed, payments, anchor, anomaly_rate=anomaly_rate)
        self.seed = seed
        self.anchor = ks.anchor
        self.anchor_ms = ks.anchor_ms
        self.n = payments
        self.anomalies = anomalies
        self.sizes: Sizes = ks.sizes
        self.customers = ks.customers
        self.per_kind = ks.per_kind if anomalies else 0
        plan = self._plan = AnomalyPlan(ks, self.per_kind)
        self._customers = Customers(ks, plan)
        self._payments = Payments(ks, plan, self._customers)
        self._refunds = Refunds(ks, self._payments)
        self._disputes = Disputes(ks, plan, self._payments)
        self._invoices = Invoices(ks, plan, self._customers)
        self._intents = Intents(ks, plan)
        rng = random.Random(seed)  # noqa: S311 - test data, not secrets
        plan.plan_payments(rng)
        plan.plan_disputes(rng)
        plan.plan_subscriptions(rng)
        plan.plan_invoices(rng, self._customers.has_subs_none_active)
        plan.plan_intents(rng)
        plan.plan_case_and_flight(rng)
        # what is planted where (read by the drift fault and the tests)
        self.pay_kind = plan.pay_kind
        self.dup_partner = plan.dup_partner
        self.dup_of = plan.dup_of
        self.dispute_kind = plan.dispute_kind
        self.sub_kind = plan.sub_kind
        self.inv_kind = plan.inv_kind
        self.inv_customer_override = plan.inv_customer_override
        self.intent_kind = plan.intent_kind
        self.fixtures = make_fixtures(ks)
        self._records: dict[str, Callable[[int], dict[str, Any]]] = {
            "payments": self._payments.record,
            "disputes": self._disputes.record,
            "subscriptions": self._customers.subscription,
            "invoices": self._invoices.record,
            "payment_intents": self._intents.record,
        }

    # ------------------------------------------------------------------ ids and time
    def make_id(self, prefix: str, index: int) -> str:
        return self._ks.make_id(prefix, index)

    def index_of(self, prefix: str, ident: str, count: int) -> int | None:
        """The index of a generated id, or None when it is not one of ours."""
        return self._ks.index_of(prefix, ident, count)

    def created_ms(self, resource: str, index: int) -> int:
        return self._ks.created_ms(resource, index)

    def first_old(self, resource: str, days: int = OLD_DAYS) -> int:
        """The first index whose record is more than ``days`` days older than the anchor."""
        return self._ks.first_old(resource, days)

    def is_recent(self, resource: str, index: int) -> bool:
        """Younger than one day before the anchor (the only non-final records that are clean)."""
        return self._ks.is_recent(resource, index)

    # ------------------------------------------------------------------ payments and refunds
    def payment_id(self, i: int) -> str:
        return self._payments.payment_id(i)

    def payment_plan(self, i: int) -> PaymentPlan:
        return self._payments.plan_of(i)

    def payment_status(self, i: int) -> str:
        return self._payments.status(i)

    def payment(self, i: int) -> dict[str, Any]:
        """Payment i as a dict (parsed from exactly the bytes that are served)."""
        return self._payments.record(i)

    def payment_bytes(self, i: int) -> bytes:
        return self._payments.record_bytes(i)

    def refund_count_of(self, i: int) -> int:
        """len(payment_plan(i).refunds), computed without building the plan."""
        return self._payments.refund_count_of(i)

    def refund_prefix(self) -> array[int]:
        """``prefix[i]`` = number of refunds of payments 0..i-1 (built once, on first use)."""
        return self._refunds.prefix()

    @property
    def refund_count(self) -> int:
        return self._refunds.count

    def refund_locate(self, r: int) -> tuple[int, int]:
        """Refund index r → (payment index, position among that payment's refunds, oldest=0)."""
        return self._refunds.locate(r)

    def refund(self, r: int) -> dict[str, Any]:
        return self._refunds.refund(r)

    def refunds_of(self, i: int, plan: PaymentPlan | None = None) -> list[dict[str, Any]]:
        """The generated refunds of payment i, oldest first."""
        return self._refunds.of_payment(i, plan)

    # ------------------------------------------------------------------ the other resources
    def customer_id(self, c: int) -> str:
        return self._customers.customer_id(c)

    def sub_customer(self, s: int) -> int:
        return self._customers.sub_customer(s)

    def subs_of_customer(self, c: int) -> list[int]:
        return self._customers.subs_of_customer(c)

    def sub_status(self, s: int) -> str:
        return self._customers.sub_status(s)

    def subscription(self, s: int) -> dict[str, Any]:
        return self._customers.subscription(s)

    def payment_methods(self, c: int) -> list[dict[str, Any]]:
        return self._customers.payment_methods(c)

    def invoice(self, v: int) -> dict[str, Any]:
        return self._invoices.record(v)

    def invoice_aging(self, v: int) -> tuple[str, int | None]:
        """(planned bucket, days past due at the anchor date or None when no dueDate)."""
        return self._invoices.aging(v)

    def dispute(self, d: int) -> dict[str, Any]:
        return self._disputes.record(d)

    def intent(self, k: int) -> dict[str, Any]:
        return self._intents.record(k)

    # ------------------------------------------------------------------ generic access
    def count(self, resource: str) -> int:
        if resource == "refunds":
            return self.refund_count
        return int(getattr(self.sizes, resource))

    def record(self, resource: str, index: int) -> dict[str, Any]:
        if resource == "refunds":
            return self.refund(index)
        return self._generator(resource)(index)

    def _generator(self, resource: str) -> Callable[[int], dict[str, Any]]:
        if resource not in self._records:
            raise KeyError(resource)
        return self._records[resource]

    def records_bytes(self, resource: str, start: int, stop: int) -> list[bytes]:
        """Serialised records start..stop-1 (fast path for whole chunks)."""
        if resource == "refunds":
            return self._refunds.records_bytes(start, stop)
        if resource == "payments":
            pb = self._payments.record_bytes
            return [pb(k) for k in range(start, stop)]
        gen = self._generator(resource)
        return [to_json(gen(k)) for k in range(start, stop)]

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
        return list_planted(
            self._plan,
            payments=self._payments,
            refunds=self._refunds,
            disputes=self._disputes,
            invoices=self._invoices,
            intents=self._intents,
        )
