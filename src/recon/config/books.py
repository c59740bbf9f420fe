"""How the merchant's books are laid out: the `[ledger.orders|refunds|invoices]` tables of
`recon.toml`.

Every key is optional. With none, a books file has exactly the default column names
(docs/design.md, "The merchant's books") and `amount_minor` as an integer::

    [ledger.orders]
    path = "books/orders-*.xlsx"   # a file or a glob (CSV, Parquet, .xlsx); or `query` + `url`
    amounts = "major"              # decimal major units (12.50), converted exactly
    reference = "Order ref"        # <field> = "<their column>"
    amount = "Total"
    status_map = { paid = "confirmed", refunded = "refunded" }

This module only describes; `recon.ledger.sources` reads. It must not import
`recon.config.settings` (which imports it).
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

__all__ = [
    "INPUTS",
    "INVOICE_STATUSES",
    "PAYMENT_STATUSES",
    "BooksTable",
    "InvoicesTable",
    "LedgerMapping",
    "MatchSettings",
    "OrdersTable",
    "RefundsTable",
]

INPUTS = ("orders", "refunds", "invoices")
# The vocabularies a books status is mapped to (docs/architecture.md, known statuses).
PAYMENT_STATUSES = (
    "created",
    "pending",
    "confirmed",
    "partially_refunded",
    "refunded",
    "cancelled",
    "expired",
)
INVOICE_STATUSES = ("draft", "open", "paid", "void", "uncollectible")


class BooksTable(BaseModel):
    """Where one books table comes from and how its columns are named."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # field -> required?  (subclasses list their fields; `amount` is always there)
    FIELDS: ClassVar[dict[str, bool]] = {}
    STATUSES: ClassVar[tuple[str, ...]] = ()

    path: str | None = Field(default=None, description="A file or glob: .csv, .parquet, .xlsx")
    query: str | None = Field(default=None, description="A SELECT run against `url`")
    url: SecretStr | None = Field(
        default=None, description="Database URL of `query` (secret); else RECON_LEDGER_DATABASE_URL"
    )
    amounts: Literal["minor", "major"] = "minor"
    sheet: str | None = Field(
        default=None,
        description='Worksheet of an .xlsx (default: the first; "*": every sheet, as one table)',
    )
    delimiter: str = Field(default=",", min_length=1, max_length=1)
    decimal: Literal[".", ","] = "."
    status_map: dict[str, str] = Field(default_factory=dict)
    amount: str | None = None  # default: amount_minor ("minor") or amount ("major")
    currency: str = "currency"

    @field_validator("status_map")
    @classmethod
    def _check_map(cls, value: dict[str, str]) -> dict[str, str]:
        bad = sorted(v for v in value.values() if v not in cls.STATUSES)
        if bad:
            raise ValueError(
                f"status_map maps to {', '.join(map(repr, bad))}; "
                f"the statuses are {', '.join(cls.STATUSES)}"
            )
        return {k.strip().lower(): v for k, v in value.items()}

    @model_validator(mode="after")
    def _one_source(self) -> BooksTable:
        if self.path and self.query:
            raise ValueError("give either path or query, not both")
        return self

    @property
    def amount_column(self) -> str:
        """The books' column holding the amount."""
        if self.amount:
            return self.amount
        return "amount_minor" if self.amounts == "minor" else "amount"

    def column_of(self, field: str) -> str:
        """The books' column name of a logical field (`reference`, `amount`, …)."""
        if field == "amount":
            return self.amount_column
        value = getattr(self, field)
        return str(value)


class OrdersTable(BooksTable):
    """`[ledger.orders]`: one row per order."""

    # reference or order_id: at least one (an order without a reference is known by its id)
    FIELDS: ClassVar[dict[str, bool]] = {
        "reference": False,
        "order_id": False,
        "payment_reference": False,
        "amount": True,
        "currency": True,
        "status": True,
        "created_at": True,
    }
    STATUSES: ClassVar[tuple[str, ...]] = PAYMENT_STATUSES

    reference: str = "reference"
    order_id: str = "order_id"
    payment_reference: str = "payment_reference"  # the reference a cart was paid under
    status: str = "status"
    created_at: str = "created_at"


class RefundsTable(BooksTable):
    """`[ledger.refunds]`: one row per refund the merchant issued."""

    FIELDS: ClassVar[dict[str, bool]] = {
        "refund_id": False,
        "payment_id": False,
        "reference": False,
        "amount": True,
        "currency": True,
        "created_at": True,
    }

    refund_id: str = "refund_id"
    payment_id: str = "payment_id"
    reference: str = "reference"
    created_at: str = "created_at"


class InvoicesTable(BooksTable):
    """`[ledger.invoices]`: one row per invoice the merchant expects."""

    FIELDS: ClassVar[dict[str, bool]] = {
        "invoice_id": True,
        "customer_id": False,
        "amount": True,
        "currency": True,
        "status": True,
    }
    STATUSES: ClassVar[tuple[str, ...]] = INVOICE_STATUSES

    invoice_id: str = "invoice_id"
    customer_id: str = "customer_id"
    status: str = "status"


class MatchSettings(BaseModel):
    """`[ledger.match]`: how references are compared by rule `normalised_reference`.

    Both sides are trimmed and compared case-insensitively; a pattern per side keeps only
    its first group (`books_reference = "^#?(.*)$"`: `#ORD-1` is `ORD-1`). A reference the
    pattern does not match is compared whole.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    books_reference: str | None = None
    provider_reference: str | None = None

    @field_validator("books_reference", "provider_reference")
    @classmethod
    def _check_pattern(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
        if compiled.groups < 1:
            raise ValueError(f"{value!r} has no group: say which part is the reference, (...)")
        return value


class LedgerMapping(BaseModel):
    """The `[ledger]` table of recon.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: MatchSettings = Field(default_factory=MatchSettings)
    orders: OrdersTable = Field(default_factory=OrdersTable)
    refunds: RefundsTable = Field(default_factory=RefundsTable)
    invoices: InvoicesTable = Field(default_factory=InvoicesTable)

    def table(self, name: str) -> BooksTable:
        """The mapping of input `name` (orders, refunds, invoices)."""
        table: BooksTable = getattr(self, name)
        return table
