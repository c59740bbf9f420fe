"""Pydantic models of the API's records: documented fields typed, everything else kept.

Every model allows extra fields (the API sends more than the spec shows) and keeps the JSON
object it was built from in `.raw`. Money is an integer of minor units plus a currency code,
never a float: a non-integer `amountMinor` fails validation instead of being rounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictBool, StrictInt

__all__ = [
    "ApiModel",
    "CallRecord",
    "CheckoutSession",
    "CheckoutSetting",
    "Coupon",
    "Dispute",
    "Invoice",
    "ListPage",
    "Money",
    "Payment",
    "PaymentIntent",
    "PaymentLink",
    "PaymentList",
    "PaymentMethod",
    "Product",
    "Refund",
    "Subscription",
    "TaxRate",
]


class ApiModel(BaseModel):
    """Base of every API record: extra fields allowed, the raw JSON kept in `.raw`."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def raw(self) -> dict[str, Any]:
        """The JSON object as the API sent it."""
        return self._raw

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        """Validate `obj` and keep it as `.raw`."""
        model = cls.model_validate(obj)
        model._raw = obj
        return model


class Money(BaseModel):
    """An amount in minor units (an integer) and its currency code."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    amount_minor: StrictInt = Field(alias="amountMinor")
    currency: str


class _Identified(ApiModel):
    id: str


class CheckoutSetting(ApiModel):
    """Checkout settings (ops 1, 2); whether an id comes back is not shown."""

    id: str | None = None
    locale: str | None = None
    allowed_origins: list[str] | None = Field(default=None, alias="allowedOrigins")
    payment_methods: list[str] | None = Field(default=None, alias="paymentMethods")


class CheckoutSession(_Identified):
    """A checkout session (op 4)."""

    amount_minor: StrictInt | None = Field(default=None, alias="amountMinor")
    currency: str | None = None
    status: str | None = None
    checkout_url: str | None = Field(default=None, alias="checkoutUrl")
    expires_at: datetime | None = Field(default=None, alias="expiresAt")

    @property
    def amount(self) -> Money | None:
        """The session's amount as `Money`, when both parts are present."""
        return _money(self.amount_minor, self.currency)


class Payment(_Identified):
    """A payment (ops 5, 6): flat `amountMinor` + `currency`."""

    amount_minor: StrictInt | None = Field(default=None, alias="amountMinor")
    currency: str | None = None
    status: str | None = None
    reference: str | None = None

    @property
    def amount(self) -> Money | None:
        """The payment's amount as `Money`, when both parts are present."""
        return _money(self.amount_minor, self.currency)


class PaymentIntent(ApiModel):
    """A payment intent (op 7); only its status is documented by name."""

    id: str | None = None
    status: str | None = None
    capture_method: str | None = Field(default=None, alias="captureMethod")
    amount: StrictInt | None = None
    currency: str | None = None


class Refund(_Identified):
    """A refund (op 8, and the assumed refunds list)."""

    payment_id: str | None = Field(default=None, alias="paymentId")
    amount: Money | None = None
    status: str | None = None


class Dispute(ApiModel):
    """A dispute (op 9); fields beyond the envelope are not shown in the spec."""

    id: str | None = None
    payment_id: str | None = Field(default=None, alias="paymentId")
    amount: Money | None = None
    status: str | None = None


class PaymentLink(_Identified):
    """A payment link (ops 10, 11)."""

    url: str | None = None
    active: StrictBool | None = None


class PaymentMethod(ApiModel):
    """A customer's reusable payment method (op 12)."""

    id: str | None = None
    type: str | None = None


class Subscription(_Identified):
    """A subscription (ops 13-15)."""

    customer_id: str | None = Field(default=None, alias="customerId")
    price_id: str | None = Field(default=None, alias="priceId")
    status: str | None = None


class Invoice(_Identified):
    """An invoice (op 16, and the assumed invoices list)."""

    customer_id: str | None = Field(default=None, alias="customerId")
    status: str | None = None
    amount_due: Money | None = Field(default=None, alias="amountDue")


class Product(_Identified):
    """A product (op 18)."""

    name: str | None = None
    active: StrictBool | None = None


class Coupon(_Identified):
    """A coupon (ops 19, 20); `percentOff` is a percentage, not money."""

    name: str | None = None
    percent_off: float | None = Field(default=None, alias="percentOff")
    duration: str | None = None


class TaxRate(_Identified):
    """A tax rate (op 21); `percentage` is a rate, not money."""

    display_name: str | None = Field(default=None, alias="displayName")
    percentage: float | None = None
    inclusive: StrictBool | None = None


T = TypeVar("T", bound=ApiModel)


class ListPage(BaseModel, Generic[T]):
    """One page of a list operation: `data`, plus whatever else the envelope carried."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    data: list[T]
    request_id: str | None = None


class PaymentList(ListPage[Payment]):
    """One page of the payments list (op 5), with its paging fields."""

    has_more: StrictBool | None = Field(default=None, alias="hasMore")
    next_offset: StrictInt | None = Field(default=None, alias="nextOffset")


def _money(amount: int | None, currency: str | None) -> Money | None:
    if amount is None or currency is None:
        return None
    return Money.model_validate({"amountMinor": amount, "currency": currency})


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One HTTP attempt, as the call log stores it; never a header or a secret."""

    call_id: str
    resource: str
    method: str
    path: str
    query: str
    attempt: int
    http_status: int | None
    error: str | None
    message: str | None
    request_id: str | None
    latency_ms: float
    outcome: Literal["ok", "retry", "failed"]
    at: datetime
    waited_ms: float = 0.0  # held back before it was sent: backoff, Retry-After, rate limit
