"""The resource catalogue: everything recon knows about each list it reads, in one place.

The client pages a resource from its entry (path, or the setting that gives it; the paging
strategy; how to fetch one record by id), extraction walks the entries a nightly run reads,
in order, the warehouse makes each one's table, load SQL and dictionary words from its
declared columns (recon.warehouse.catalogue_tables), and a check file may require any name below.
Adding a list resource is adding one entry here and its model (recon.catalogue.models).

    payments = CATALOGUE["payments"]
    payments.api.paginator      # NextOffsetPaginator: follows hasMore / nextOffset
    payments.columns            # (Column('amount_minor', 'BIGINT', 'amountMinor', …), …)

Inputs that do not come from the API (the merchant's books) are entries without `api`:
their own loader fills their table, and checks may require them like any list.

An entry read from the API also says what per-resource SQL needs of its table (`records`):
the entity its findings name, its status values (final or not, and the changes allowed
between two nights), its money and date columns, where its amount is in the raw record and
the fields the spec does not show (`fields`, the defaults of `Settings.fields`). From these
`recon.warehouse.catalogue_views` generates the view `live_records` over every record of every such
resource, the `status_values` and `status_transitions` tables and the `<table>_major`
views; checks that apply to every resource read those instead of naming tables, and their
`per_resource` header can say `every resource with <trait>` (docs/checks.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from recon.catalogue.entry import (
    TRAITS,
    ApiList,
    Auth,
    Column,
    Records,
    Resource,
    Status,
    statuses,
)
from recon.catalogue.models import (
    Dispute,
    Invoice,
    Payment,
    PaymentIntent,
    PaymentMethod,
    Refund,
    Subscription,
)
from recon.errors import ConfigError
from recon.paging.paginators import NextOffsetPaginator, OffsetPaginator

__all__ = [
    "CATALOGUE",
    "TRAITS",
    "ApiList",
    "Auth",
    "Column",
    "Records",
    "Resource",
    "Status",
    "api_list",
    "api_resources",
    "nightly_resources",
    "personal_paths",
    "record_resources",
    "resource",
    "resources_with",
]

_ISO = "ISO 4217 code of the amount (upper case)."
_CREATED_WORDS = "When the provider created it (createdAt; NULL when the record has none)."
_CREATED_COLUMN = Column("created_at", "TIMESTAMPTZ", "{created_at}", _CREATED_WORDS, "timestamp")
_CUSTOMER = "The provider's customer id."


_PAYMENT = Records(
    "payment",
    statuses(
        Status(
            "created",
            final=False,
            to=("pending", "confirmed", "partially_refunded", "refunded", "cancelled", "expired"),
        ),
        Status(
            "pending",
            final=False,
            to=("confirmed", "partially_refunded", "refunded", "cancelled", "expired"),
        ),
        Status("confirmed", final=True, to=("partially_refunded", "refunded")),
        Status("partially_refunded", final=True, to=("refunded",)),
        Status("refunded", final=True),
        Status("cancelled", final=True),
        Status("expired", final=True),
    ),
)
_REFUND = Records(
    "refund",
    statuses(
        Status(
            "pending",
            final=False,
            to=("succeeded", "failed", "canceled", "cancelled", "rejected", "reversed"),
        ),
        Status("succeeded", final=True, to=("reversed",)),
        Status("failed", final=True),
        Status("canceled", final=True),
        Status("cancelled", final=True),
        Status("rejected", final=True),
        Status("reversed", final=True),
    ),
    amount_json="amount.amountMinor",
    currency_json="amount.currency",
)
_DISPUTE = Records(
    "dispute",
    statuses(
        Status(
            "warning_needs_response",
            to=(
                "warning_under_review",
                "warning_closed",
                "needs_response",
                "under_review",
                "won",
                "lost",
            ),
        ),
        Status(
            "warning_under_review",
            to=("warning_closed", "needs_response", "under_review", "won", "lost"),
        ),
        Status("warning_closed"),
        Status("needs_response", to=("under_review", "won", "lost")),
        Status("under_review", to=("won", "lost")),
        Status("won"),
        Status("lost"),
    ),
    amount_json="{amount}.amountMinor",
    currency_json="{amount}.currency",
)
_ENDED = ("canceled", "cancelled")  # both spellings: the spec shows neither
_SUBSCRIPTION = Records(
    "subscription",
    statuses(
        Status(
            "incomplete",
            to=("active", "trialing", "past_due", "incomplete_expired", *_ENDED),
        ),
        Status("trialing", to=("active", "past_due", "unpaid", "paused", *_ENDED)),
        Status("active", to=("past_due", "unpaid", "paused", *_ENDED)),
        Status("past_due", to=("active", "unpaid", "paused", *_ENDED)),
        Status("unpaid", to=("active", "past_due", "paused", *_ENDED)),
        Status("paused", to=("active", "trialing", "past_due", *_ENDED)),
        *_ENDED,
        "incomplete_expired",
    ),
    amount=None,
    currency=None,
    amount_json=None,
    currency_json=None,
)
_INVOICE = Records(
    "invoice",
    statuses(
        Status("draft", to=("open", "paid", "void", "uncollectible")),
        Status("open", to=("paid", "void", "uncollectible")),
        "paid",
        "void",
        Status("uncollectible", to=("paid", "void")),
    ),
    amount="amount_due_minor",
    amount_json="amountDue.amountMinor",
    currency_json="amountDue.currency",
)
_PAYMENT_INTENT = Records(
    "payment_intent",
    statuses(
        Status(
            "requires_payment_method",
            final=False,
            to=("requires_action", "requires_capture", "processing", "succeeded", "cancelled"),
        ),
        Status(
            "requires_action",
            final=False,
            to=(
                "requires_payment_method",
                "requires_capture",
                "processing",
                "succeeded",
                "cancelled",
            ),
        ),
        Status("requires_capture", final=False, to=("processing", "succeeded", "cancelled")),
        Status(
            "processing",
            final=False,
            to=(
                "requires_payment_method",
                "requires_action",
                "requires_capture",
                "succeeded",
                "cancelled",
            ),
        ),
        Status("succeeded", final=True),
        Status("cancelled", final=True),
    ),
    amount_json="{amount}",
    currency_json="{currency}",
)
_PAYMENT_METHOD = Records(
    "payment_method",
    status="type",  # shown where a check describes the record (vanished_records); not checked
    amount=None,
    currency=None,
    created_at=None,
    amount_json=None,
    currency_json=None,
)
_CREATED = {"created_at": "createdAt"}

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
            records=_PAYMENT,
            fields=_CREATED,
            words="Payments as the provider lists them now: one row per payment id, "
            "with every field in raw.",
            columns=(
                Column(
                    "amount_minor",
                    "BIGINT",
                    "amountMinor",
                    "Amount in minor units of currency (BIGINT, never a float).",
                    "minor",
                ),
                Column("currency", "VARCHAR", "currency", _ISO, "upper"),
                Column(
                    "status",
                    "VARCHAR",
                    "status",
                    "The provider's status: confirmed, refunded, partially_refunded, "
                    "pending, failed, …",
                    "lower",
                ),
                Column(
                    "reference",
                    "VARCHAR",
                    "reference",
                    "The merchant's reference the payment was made under "
                    "(matches the books' orders).",
                ),
                _CREATED_COLUMN,
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
            "refunds",
            ApiList("/refunds", OffsetPaginator, Refund, path_setting="refunds_path"),
            records=_REFUND,
            fields=_CREATED,
            words="Refunds as the provider lists them now: one row per refund id.",
            columns=(
                Column("payment_id", "VARCHAR", "paymentId", "The payment refunded."),
                Column(
                    "amount_minor",
                    "BIGINT",
                    "amount.amountMinor",
                    "Refunded amount in minor units of currency.",
                    "minor",
                ),
                Column("currency", "VARCHAR", "amount.currency", _ISO, "upper"),
                Column(
                    "status",
                    "VARCHAR",
                    "status",
                    "The provider's status: succeeded, pending, failed, … (failure statuses "
                    "do not count toward a payment's refunded total).",
                    "lower",
                ),
                _CREATED_COLUMN,
            ),
        ),
        Resource(
            "disputes",
            ApiList("/disputes", OffsetPaginator, Dispute),
            records=_DISPUTE,
            # `amount` is a Money object (`amountMinor`, `currency`): recon.warehouse.fields
            fields={
                "payment_id": "paymentId",
                "amount": "amount",
                "status": "status",
                "reason": "reason",
                "created_at": "createdAt",
            },
            words="Disputes (chargebacks) as the provider lists them now: one row per dispute id.",
            columns=(
                Column(
                    "payment_id",
                    "VARCHAR",
                    "{payment_id}",
                    "The disputed payment (undocumented paymentId; field name set by "
                    "RECON_FIELDS).",
                ),
                Column(
                    "amount_minor",
                    "BIGINT",
                    "{amount}.amountMinor",
                    "Disputed amount in minor units (undocumented amount.amountMinor).",
                    "minor",
                ),
                Column("currency", "VARCHAR", "{amount}.currency", _ISO, "upper"),
                Column(
                    "status", "VARCHAR", "{status}", "The provider's status (lower case).", "lower"
                ),
                Column("reason", "VARCHAR", "{reason}", "The dispute's reason as sent."),
                _CREATED_COLUMN,
            ),
        ),
        Resource(
            "subscriptions",
            ApiList("/subscriptions", OffsetPaginator, Subscription, by_id="/subscriptions/{id}"),
            records=_SUBSCRIPTION,
            fields=_CREATED,
            words="Subscriptions as the provider lists them now: one row per subscription id.",
            columns=(
                Column("customer_id", "VARCHAR", "customerId", _CUSTOMER),
                Column("price_id", "VARCHAR", "priceId", "The price subscribed to."),
                Column(
                    "status", "VARCHAR", "status", "The provider's status (lower case).", "lower"
                ),
                _CREATED_COLUMN,
            ),
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
            records=_INVOICE,
            fields={"subscription_id": "subscriptionId", "due_date": "dueDate", **_CREATED},
            words="Invoices as the provider lists (or serves one by one) now: "
            "one row per invoice id.",
            columns=(
                Column("customer_id", "VARCHAR", "customerId", _CUSTOMER),
                Column(
                    "subscription_id",
                    "VARCHAR",
                    "{subscription_id}",
                    "The subscription billed (undocumented subscriptionId).",
                ),
                Column(
                    "status",
                    "VARCHAR",
                    "status",
                    "The provider's status: open, paid, void, …",
                    "lower",
                ),
                Column(
                    "amount_due_minor",
                    "BIGINT",
                    "amountDue.amountMinor",
                    "Amount still due in minor units of currency.",
                    "minor",
                ),
                Column("currency", "VARCHAR", "amountDue.currency", _ISO, "upper"),
                Column(
                    "due_date",
                    "DATE",
                    "{due_date}",
                    "When it is due (undocumented dueDate; NULL when absent).",
                    "date",
                ),
                _CREATED_COLUMN,
            ),
        ),
        Resource(
            "payment_intents",
            ApiList("/payment-intents", OffsetPaginator, PaymentIntent),
            records=_PAYMENT_INTENT,
            # `amount`: the spec's unnamed integer field
            fields={
                "amount": "amount",
                "currency": "currency",
                "capture_method": "captureMethod",
                **_CREATED,
            },
            words="Payment intents as the provider lists them now: one row per intent id.",
            columns=(
                Column(
                    "status", "VARCHAR", "status", "The provider's status (lower case).", "lower"
                ),
                Column(
                    "capture_method",
                    "VARCHAR",
                    "{capture_method}",
                    "automatic or manual (captureMethod).",
                    "lower",
                ),
                Column(
                    "amount_minor",
                    "BIGINT",
                    "{amount}",
                    "The intent's amount in minor units (must be >= 0).",
                    "minor",
                ),
                Column("currency", "VARCHAR", "{currency}", _ISO, "upper"),
                _CREATED_COLUMN,
            ),
        ),
        Resource(
            "payment_methods",
            ApiList(
                "/customers/{customer_id}/payment-methods",
                OffsetPaginator,
                PaymentMethod,
                per_customer=True,
            ),
            nightly=False,
            records=_PAYMENT_METHOD,
            words="Customers' payment methods (only with --payment-methods): one row per id; "
            "card details are personal data in raw.",
            columns=(
                Column("customer_id", "VARCHAR", "@scope", _CUSTOMER, required=True),
                Column("type", "VARCHAR", "type", "card, sepa_debit, …"),
            ),
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
        # The bank's statements (recon.bank): read from files, not paged.
        Resource("bank_statements", None, nightly=False),
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


def record_resources() -> Iterator[Resource]:
    """The entries with records per-resource SQL reads (`live_records`), in catalogue order."""
    return (r for r in CATALOGUE.values() if r.records is not None)


def resources_with(trait: str | None = None) -> tuple[str, ...]:
    """The names of the record resources having `trait` (one of TRAITS; None: all of them),
    in catalogue order: what `per_resource: every resource [with <trait>]` selects."""
    if trait is not None and trait not in TRAITS:
        raise ConfigError("trait", f"unknown trait {trait!r}; expected one of {', '.join(TRAITS)}")
    return tuple(r.name for r in record_resources() if trait is None or r.has(trait))
