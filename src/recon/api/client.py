"""`ApiClient`: the 21 operations of the Merchant Payments API, and lists paged whole.

Each method builds an `Op` (what to send, which credential, what shape the answer must
have) and hands it to the `Sender` (`recon.api.sender`: retries, the shared rate limiter,
the concurrency gate, the call log). Paging (`scan`, `rescan`, `scan_by_ids`) is in
`recon.api.scanning`, mixed in.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from recon.api import sender as _sender
from recon.api.concurrency import AdaptiveLimit
from recon.api.config import (
    ClientConfig,
    check_id,
    check_page_size,
    check_payment_status,
    check_skip,
)
from recon.api.ratelimit import SharedRateLimiter
from recon.api.scanning import Scanning, _Ahead
from recon.api.sender import Answer, Op, Sender
from recon.catalogue.models import (
    ApiModel,
    CallRecord,
    CheckoutSession,
    CheckoutSetting,
    Coupon,
    Dispute,
    Invoice,
    ListPage,
    Payment,
    PaymentIntent,
    PaymentLink,
    PaymentList,
    PaymentMethod,
    Product,
    Refund,
    Subscription,
    TaxRate,
)
from recon.catalogue.resources import api_list
from recon.errors import ApiError, ConfigError

__all__ = ["ApiClient"]

M = TypeVar("M", bound=ApiModel)


class ApiClient(Scanning):
    """Sync client for the Merchant Payments API; thread-safe; use it as a context manager."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        on_attempt: Callable[[CallRecord], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] | None = None,
        wall_clock: Callable[[], datetime] | None = None,
        limiter: SharedRateLimiter | None = None,
    ) -> None:
        self.config = config
        self._send = Sender(
            config,
            transport=transport,
            on_attempt=on_attempt,
            clock=clock,
            sleep=sleep,
            random=random or _sender.default_random,
            wall_clock=wall_clock or _sender.utcnow,
            limiter=limiter,
        )
        self._ahead = _Ahead(self._send)

    @property
    def sender(self) -> Sender:
        """The send path (retry policy, rate limiter, call log hook) of this client."""
        return self._send

    @property
    def gate(self) -> AdaptiveLimit:
        """The concurrency gate every attempt of this client passes (shared by all lists)."""
        return self._send.gate

    @property
    def limiter(self) -> SharedRateLimiter:
        """The rate limiter every request of this client waits on."""
        return self._send.limiter

    def __repr__(self) -> str:
        return f"ApiClient(api_root={self.config.api_root!r})"

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop fetching ahead, close the connection pool."""
        self._ahead.close()
        self._send.close()

    # ------------------------------------------------------------------ helpers

    def _list_params(self, max_records: int | None, skip: int) -> dict[str, str | int]:
        size = self.config.page_size if max_records is None else max_records
        check_page_size(size, "max_records")
        check_skip(skip, "skip")
        return {self.config.page_size_param: size, self.config.skip_param: skip}

    def _list(
        self,
        cls: type[M],
        resource_name: str,
        max_records: int | None,
        skip: int,
        *,
        customer_id: str | None = None,
        params: dict[str, str | int] | None = None,
    ) -> tuple[ListPage[M], Answer]:
        """One page of a catalogue list as `cls` models (and the answer it came in)."""
        query = {**self._list_params(max_records, skip), **(params or {})}
        path = self.list_path(resource_name, customer_id=customer_id)
        if path is None:
            setting = api_list(resource_name).path_setting or "path"
            raise ConfigError(
                f"RECON_{setting.upper()}", f"is empty: no {resource_name} list is offered"
            )
        op = Op(resource_name, "GET", path, expect="list", params=query)
        answer = self._send.call(op)
        body = answer.body
        items = [
            self._send.model(cls, Answer(item, answer.request_id, answer.status), op)
            for item in body["data"]
        ]
        extra = {k: v for k, v in body.items() if k not in ("data", "request_id")}
        page = ListPage[cls](data=items, request_id=answer.request_id, **extra)  # type: ignore[valid-type]
        return page, answer

    # ------------------------------------------------------------------ the 21 operations

    def create_checkout_settings(
        self,
        *,
        locale: str,
        allowed_origins: Sequence[str],
        payment_methods: Sequence[str],
        idempotency_key: str | None = None,
    ) -> CheckoutSetting:
        """Op 1: POST /checkout-settings (x-api-key; one idempotency key for every retry)."""
        op = Op(
            "checkout_settings",
            "POST",
            "/checkout-settings",
            body={
                "locale": locale,
                "allowedOrigins": list(allowed_origins),
                "paymentMethods": list(payment_methods),
            },
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._send.model(CheckoutSetting, self._send.call(op), op)

    def update_checkout_settings(
        self,
        setting_id: str,
        *,
        locale: str,
        allowed_origins: Sequence[str],
        payment_methods: Sequence[str],
    ) -> CheckoutSetting:
        """Op 2: PATCH /checkout-settings/{id}."""
        op = Op(
            "checkout_settings",
            "PATCH",
            f"/checkout-settings/{_seg(setting_id, 'setting_id')}",
            body={
                "locale": locale,
                "allowedOrigins": list(allowed_origins),
                "paymentMethods": list(payment_methods),
            },
        )
        return self._send.model(CheckoutSetting, self._send.call(op), op)

    def redirect_checkout_session(self, session_id: str, *, client_token: str) -> dict[str, Any]:
        """Op 3: POST /checkout-sessions/{id}/redirect (Bearer). The answer's shape is not
        documented: its JSON object is returned as is ({} for an empty body)."""
        if not client_token:
            raise ConfigError("client_token", "must be a non-empty string")
        op = Op(
            "checkout_sessions",
            "POST",
            f"/checkout-sessions/{_seg(session_id, 'session_id')}/redirect",
            auth="bearer",
            expect="any",
            body={"clientToken": client_token},
        )
        body = self._send.call(op).body
        return body if isinstance(body, dict) else {} if body is None else {"value": body}

    def expire_checkout_session(self, session_id: str) -> CheckoutSession:
        """Op 4: POST /checkout-sessions/{id}/expire (no body)."""
        op = Op(
            "checkout_sessions",
            "POST",
            f"/checkout-sessions/{_seg(session_id, 'session_id')}/expire",
        )
        return self._send.model(CheckoutSession, self._send.call(op), op)

    def list_payments(
        self, *, max_records: int | None = None, skip: int = 0, status: str | None = None
    ) -> PaymentList:
        """Op 5: GET /payments, one page (`data`, `hasMore`, `nextOffset`)."""
        params: dict[str, str | int] = {}
        if check_payment_status(status) is not None:
            params[self.config.status_param] = str(status)
        page, answer = self._list(Payment, "payments", max_records, skip, params=params)
        try:
            body = {**answer.body, "data": page.data, "request_id": answer.request_id}
            return PaymentList.model_validate(body)
        except ValidationError as exc:
            raise ApiError.unexpected_shape(
                status=answer.status,
                what="PaymentList",
                problem=exc.errors()[0]["msg"],
                request_id=answer.request_id,
                method="GET",
                url=self.config.api_root + "/payments",
            ) from None

    def get_payment(self, payment_id: str) -> Payment:
        """Op 6: GET /payments/{id} (Bearer token, never the API key)."""
        op = Op("payments", "GET", f"/payments/{_seg(payment_id, 'payment_id')}", auth="bearer")
        return self._send.model(Payment, self._send.call(op), op)

    def list_payment_intents(
        self, *, max_records: int | None = None, skip: int = 0
    ) -> ListPage[PaymentIntent]:
        """Op 7: GET /payment-intents, one page."""
        return self._list(PaymentIntent, "payment_intents", max_records, skip)[0]

    def create_refund(self, payment_id: str, *, idempotency_key: str | None = None) -> Refund:
        """Op 8: POST /refunds (one idempotency key for every retry)."""
        op = Op(
            "refunds",
            "POST",
            "/refunds",
            body={"paymentId": check_id(payment_id, "payment_id")},
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._send.model(Refund, self._send.call(op), op)

    def list_disputes(self, *, max_records: int | None = None, skip: int = 0) -> ListPage[Dispute]:
        """Op 9: GET /disputes, one page."""
        return self._list(Dispute, "disputes", max_records, skip)[0]

    def get_payment_link(self, link_id: str) -> PaymentLink:
        """Op 10: GET /payment-links/{id}."""
        op = Op("payment_links", "GET", f"/payment-links/{_seg(link_id, 'link_id')}")
        return self._send.model(PaymentLink, self._send.call(op), op)

    def deactivate_payment_link(self, link_id: str) -> PaymentLink:
        """Op 11: POST /payment-links/{id}/deactivate (no body)."""
        op = Op("payment_links", "POST", f"/payment-links/{_seg(link_id, 'link_id')}/deactivate")
        return self._send.model(PaymentLink, self._send.call(op), op)

    def list_payment_methods(
        self, customer_id: str, *, max_records: int | None = None, skip: int = 0
    ) -> ListPage[PaymentMethod]:
        """Op 12: GET /customers/{id}/payment-methods, one page."""
        return self._list(
            PaymentMethod, "payment_methods", max_records, skip, customer_id=customer_id
        )[0]

    def list_subscriptions(
        self, *, max_records: int | None = None, skip: int = 0
    ) -> ListPage[Subscription]:
        """Op 13: GET /subscriptions, one page."""
        return self._list(Subscription, "subscriptions", max_records, skip)[0]

    def get_subscription(self, subscription_id: str) -> Subscription:
        """Op 14: GET /subscriptions/{id}."""
        op = Op(
            "subscriptions", "GET", f"/subscriptions/{_seg(subscription_id, 'subscription_id')}"
        )
        return self._send.model(Subscription, self._send.call(op), op)

    def update_subscription(
        self, subscription_id: str, *, customer_id: str, price_id: str
    ) -> Subscription:
        """Op 15: PATCH /subscriptions/{id}."""
        op = Op(
            "subscriptions",
            "PATCH",
            f"/subscriptions/{_seg(subscription_id, 'subscription_id')}",
            body={
                "customerId": check_id(customer_id, "customer_id"),
                "priceId": check_id(price_id, "price_id"),
            },
        )
        return self._send.model(Subscription, self._send.call(op), op)

    def get_invoice(self, invoice_id: str) -> Invoice:
        """Op 16: GET /invoices/{id}."""
        op = Op("invoices", "GET", f"/invoices/{_seg(invoice_id, 'invoice_id')}")
        return self._send.model(Invoice, self._send.call(op), op)

    def update_product(self, product_id: str, *, name: str) -> Product:
        """Op 18: PATCH /products/{id}."""
        op = Op(
            "products",
            "PATCH",
            f"/products/{_seg(product_id, 'product_id')}",
            body={"name": name},
        )
        return self._send.model(Product, self._send.call(op), op)

    def create_coupon(self, *, name: str, idempotency_key: str | None = None) -> Coupon:
        """Op 19: POST /coupons (one idempotency key for every retry)."""
        op = Op(
            "coupons",
            "POST",
            "/coupons",
            body={"name": name},
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._send.model(Coupon, self._send.call(op), op)

    def update_coupon(self, coupon_id: str, *, name: str) -> Coupon:
        """Op 20: PATCH /coupons/{id}."""
        op = Op("coupons", "PATCH", f"/coupons/{_seg(coupon_id, 'coupon_id')}", body={"name": name})
        return self._send.model(Coupon, self._send.call(op), op)

    def create_tax_rate(
        self, *, display_name: str, percentage: float, idempotency_key: str | None = None
    ) -> TaxRate:
        """Op 21: POST /tax-rates (one idempotency key for every retry)."""
        op = Op(
            "tax_rates",
            "POST",
            "/tax-rates",
            body={"displayName": display_name, "percentage": percentage},
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._send.model(TaxRate, self._send.call(op), op)

    def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        """Op 22: DELETE /webhook-endpoints/{id}; the success body is not documented."""
        op = Op(
            "webhook_endpoints",
            "DELETE",
            f"/webhook-endpoints/{_seg(endpoint_id, 'endpoint_id')}",
            expect="none",
        )
        self._send.call(op)

    # Assumed lists (docs/design.md: the API's open points): refunds and invoices, at
    # configurable paths.

    def list_refunds(self, *, max_records: int | None = None, skip: int = 0) -> ListPage[Refund]:
        """Assumed: GET RECON_REFUNDS_PATH (default /refunds), one page."""
        return self._list(Refund, "refunds", max_records, skip)[0]

    def list_invoices(self, *, max_records: int | None = None, skip: int = 0) -> ListPage[Invoice]:
        """Assumed: GET RECON_INVOICES_PATH (default /invoices), one page."""
        return self._list(Invoice, "invoices", max_records, skip)[0]


def _seg(value: str, name: str) -> str:
    """`value` checked and quoted as one path segment."""
    return quote(check_id(value, name), safe="")
