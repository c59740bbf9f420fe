"""The resource catalogue: everything recon knows about each list it reads, in one place.

The client pages a resource from its entry (path, or the setting that gives it; the paging
strategy; how to fetch one record by id), extraction walks the entries a nightly run reads,
in order, the warehouse loads each into its table with its SQL, and a check file may
require any name below. Adding a resource is adding one entry.

    payments = CATALOGUE["payments"]
    payments.api.paginator      # NextOffsetPaginator: follows hasMore / nextOffset
    payments.load_sql           # 'load/payments.sql'

Inputs that do not come from the API (the merchant's books) are entries without `api`:
their own loader fills their table, and checks may require them like any list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from recon.errors import ConfigError
from recon.models import (
    ApiModel,
    Dispute,
    Invoice,
    Payment,
    PaymentIntent,
    PaymentMethod,
    Refund,
    Subscription,
)
from recon.paging.paginators import BasePaginator, NextOffsetPaginator, OffsetPaginator

__all__ = [
    "CATALOGUE",
    "ApiList",
    "Auth",
    "Resource",
    "api_list",
    "api_resources",
    "nightly_resources",
    "personal_paths",
    "resource",
]

Auth = Literal["key", "bearer"]


@dataclass(frozen=True, slots=True)
class ApiList:
    """How the API offers a resource: where its list is, how it pages, how to get one."""

    path: str  # under /api/v1; `{customer_id}` for per-customer lists
    paginator: type[BasePaginator]
    model: type[ApiModel]
    # A client setting (`ClientConfig` field) whose value replaces `path`; empty there means
    # the provider does not offer the list (DESIGN.md §1: the assumed lists).
    path_setting: str | None = None
    by_id: str | None = None  # path of one record, `{id}` quoted in, e.g. "/invoices/{id}"
    by_id_auth: Auth = "key"
    per_customer: bool = False
    # The list's own filters: argument name -> the `ClientConfig` field naming its parameter.
    filters: tuple[tuple[str, str], ...] = ()
    # When the list is not offered, records are fetched one by one (`by_id`) for the ids in
    # the file this setting names and the ids these fields of other records reference.
    ids_file_setting: str | None = None
    referenced_by: tuple[str, ...] = ()
    # ... and the ids the merchant's books name: (books input, its id field), e.g. the
    # expected invoices' `invoice_id` (issue 11: the natural source, beside the ids file).
    ids_in_books: tuple[str, str] | None = None

    @property
    def fetched_one_by_one_when_unlisted(self) -> bool:
        """True if, the list not being offered, its records are fetched by id instead."""
        sources = self.ids_file_setting or self.referenced_by or self.ids_in_books
        return self.by_id is not None and bool(sources)


@dataclass(frozen=True, slots=True)
class Resource:
    """One kind of record recon lands, loads and checks."""

    name: str  # the resource's name everywhere: landing folder, warehouse table, `requires`
    api: ApiList | None  # None: not read from the API (the merchant's books)
    nightly: bool = True  # read by every nightly run (per-customer lists only on request)
    # The record_versions columns: expressions over the staged table for status, amount and
    # currency (what "when did this change" questions ask of history).
    version: tuple[str, str, str] = ("status", "amount_minor", "currency")
    # JSON paths in `raw` whose values are personal data (dots between keys): `recon export`
    # leaves out a column a query reads from one of them, or from an object holding one.
    personal: tuple[str, ...] = ()

    @property
    def table(self) -> str:
        """The warehouse table holding the current state of every record."""
        return self.name

    @property
    def load_sql(self) -> str:
        """The `sql/` file that turns landed records into the table's typed columns."""
        return f"load/{self.name}.sql"


_NO_AMOUNT = ("status", "NULL::BIGINT", "NULL::VARCHAR")

CATALOGUE: Mapping[str, Resource] = {
    r.name: r
    for r in (
        Resource(
            "payments",
            ApiList(
                "/payments",
                NextOffsetPaginator,
                Payment,
                by_id="/payments/{id}",
                by_id_auth="bearer",  # op 6: the one record fetched with the bearer token
                filters=(("status", "status_param"),),
            ),
            personal=(
                "customer.email",
                "customer.name",
                "customerDetails.email",
                "card.last4",
                "card.expMonth",
                "card.expYear",
                "bankAccount.last4",
                "billingDetails",
            ),
        ),
        Resource(
            "refunds", ApiList("/refunds", OffsetPaginator, Refund, path_setting="refunds_path")
        ),
        Resource("disputes", ApiList("/disputes", OffsetPaginator, Dispute)),
        Resource(
            "subscriptions",
            ApiList("/subscriptions", OffsetPaginator, Subscription, by_id="/subscriptions/{id}"),
            version=_NO_AMOUNT,
        ),
        Resource(
            "invoices",
            ApiList(
                "/invoices",
                OffsetPaginator,
                Invoice,
                path_setting="invoices_path",
                by_id="/invoices/{id}",
                ids_file_setting="invoice_ids_file",
                referenced_by=("invoiceId", "latestInvoiceId"),
                ids_in_books=("invoices", "invoice_id"),
            ),
            version=("status", "amount_due_minor", "currency"),
        ),
        Resource("payment_intents", ApiList("/payment-intents", OffsetPaginator, PaymentIntent)),
        Resource(
            "payment_methods",
            ApiList(
                "/customers/{customer_id}/payment-methods",
                OffsetPaginator,
                PaymentMethod,
                per_customer=True,
            ),
            nightly=False,
            version=("NULL::VARCHAR", "NULL::BIGINT", "NULL::VARCHAR"),
            personal=(
                "card.last4",
                "card.expMonth",
                "card.expYear",
                "bankAccount.last4",
                "billingDetails",
            ),
        ),
        # The merchant's books (recon.ledger): loaded from their files or database, not paged.
        Resource("ledger_orders", None, nightly=False),
        Resource("ledger_refunds", None, nightly=False),
        Resource("ledger_invoices", None, nightly=False),
    )
}


def personal_paths() -> frozenset[tuple[str, ...]]:
    """Every JSON path the catalogue marks personal, as lower-case key tuples."""
    return frozenset(
        tuple(key.lower() for key in path.split("."))
        for entry in CATALOGUE.values()
        for path in entry.personal
    )


def resource(name: str) -> Resource:
    """The catalogue entry called `name`; an unknown name is a `ConfigError` listing them."""
    try:
        return CATALOGUE[name]
    except KeyError:
        known = ", ".join(CATALOGUE)
        raise ConfigError(
            "resource", f"unknown resource {name!r}; expected one of {known}"
        ) from None


def api_list(name: str) -> ApiList:
    """How the API offers the resource `name`; a `ConfigError` if it is not read from it."""
    api = resource(name).api
    if api is None:
        raise ConfigError("resource", f"{name!r} is not read from the API")
    return api


def api_resources() -> Iterator[Resource]:
    """The entries read from the API, in extraction order."""
    return (r for r in CATALOGUE.values() if r.api is not None)


def nightly_resources() -> Iterator[Resource]:
    """The lists every nightly run pages, in extraction order (per-customer ones last)."""
    return (r for r in api_resources() if r.nightly)
