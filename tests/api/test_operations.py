"""The 21 operations: method, path, auth scheme, body, idempotency key, typed result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from pydantic import SecretStr

from recon.api import ApiClient, Money, Payment, Refund
from recon.errors import ApiError, ConfigError

from .conftest import CANARY_KEY, CANARY_TOKEN, Harness, envelope

Call = Callable[[ApiClient], Any]

RECORD = {
    "id": "x_1",
    "amountMinor": 1250,
    "currency": "EUR",
    "status": "pending",
    "undocumented": {"nested": True},
}

# (op number, method, path, call, auth)
OPERATIONS: list[tuple[int, str, str, Call, str]] = [
    (
        1,
        "POST",
        "/api/v1/checkout-settings",
        lambda c: c.create_checkout_settings(
            locale="en", allowed_origins=["https://a"], payment_methods=["card"]
        ),
        "key",
    ),
    (
        2,
        "PATCH",
        "/api/v1/checkout-settings/cs_1",
        lambda c: c.update_checkout_settings(
            "cs_1", locale="en", allowed_origins=[], payment_methods=["bank"]
        ),
        "key",
    ),
    (
        3,
        "POST",
        "/api/v1/checkout-sessions/sess_1/redirect",
        lambda c: c.redirect_checkout_session("sess_1", client_token="ct_1"),
        "bearer",
    ),
    (
        4,
        "POST",
        "/api/v1/checkout-sessions/sess_1/expire",
        lambda c: c.expire_checkout_session("sess_1"),
        "key",
    ),
    (5, "GET", "/api/v1/payments", lambda c: c.list_payments(), "key"),
    (6, "GET", "/api/v1/payments/pay_1", lambda c: c.get_payment("pay_1"), "bearer"),
    (7, "GET", "/api/v1/payment-intents", lambda c: c.list_payment_intents(), "key"),
    (8, "POST", "/api/v1/refunds", lambda c: c.create_refund("pay_1"), "key"),
    (9, "GET", "/api/v1/disputes", lambda c: c.list_disputes(), "key"),
    (10, "GET", "/api/v1/payment-links/pl_1", lambda c: c.get_payment_link("pl_1"), "key"),
    (
        11,
        "POST",
        "/api/v1/payment-links/pl_1/deactivate",
        lambda c: c.deactivate_payment_link("pl_1"),
        "key",
    ),
    (
        12,
        "GET",
        "/api/v1/customers/cus_1/payment-methods",
        lambda c: c.list_payment_methods("cus_1"),
        "key",
    ),
    (13, "GET", "/api/v1/subscriptions", lambda c: c.list_subscriptions(), "key"),
    (14, "GET", "/api/v1/subscriptions/sub_1", lambda c: c.get_subscription("sub_1"), "key"),
    (
        15,
        "PATCH",
        "/api/v1/subscriptions/sub_1",
        lambda c: c.update_subscription("sub_1", customer_id="cus_1", price_id="price_1"),
        "key",
    ),
    (16, "GET", "/api/v1/invoices/in_1", lambda c: c.get_invoice("in_1"), "key"),
    (18, "PATCH", "/api/v1/products/prod_1", lambda c: c.update_product("prod_1", name="N"), "key"),
    (19, "POST", "/api/v1/coupons", lambda c: c.create_coupon(name="C"), "key"),
    (20, "PATCH", "/api/v1/coupons/co_1", lambda c: c.update_coupon("co_1", name="C"), "key"),
    (
        21,
        "POST",
        "/api/v1/tax-rates",
        lambda c: c.create_tax_rate(display_name="VAT", percentage=19.0),
        "key",
    ),
    (
        22,
        "DELETE",
        "/api/v1/webhook-endpoints/we_1",
        lambda c: c.delete_webhook_endpoint("we_1"),
        "key",
    ),
]
CREATES = {1, 8, 19, 21}
LISTS = {5, 7, 9, 12, 13}


def _answer(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if request.method == "GET" and not path.rsplit("/", 1)[1].endswith("_1"):
        return httpx.Response(
            200,
            json={"data": [RECORD], "hasMore": False, "nextOffset": None},
            headers={"X-Request-Id": "req_list"},
        )
    if request.method == "DELETE":
        return httpx.Response(204)
    return httpx.Response(200, json=RECORD)


def test_there_are_21_operations() -> None:
    assert len(OPERATIONS) == 21
    assert sorted(n for n, *_ in OPERATIONS) == [*range(1, 17), *range(18, 23)]


@pytest.mark.parametrize(
    ("op", "method", "path", "call", "auth"), OPERATIONS, ids=[f"op{o[0]}" for o in OPERATIONS]
)
def test_operation_sends_the_right_request(
    harness: Harness, op: int, method: str, path: str, call: Call, auth: str
) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _answer(request)

    with harness.client(handler) as client:
        result = call(client)
    (request,) = seen
    assert request.method == method
    assert request.url.path == path
    headers = request.headers
    if auth == "bearer":
        assert headers["authorization"] == f"Bearer {CANARY_TOKEN}"
        assert "x-api-key" not in headers
    else:
        assert headers["x-api-key"] == CANARY_KEY
        assert "authorization" not in headers
    assert CANARY_KEY not in headers.get("authorization", "")
    assert ("idempotency-key" in headers) == (op in CREATES)
    if op in LISTS:
        assert request.url.params["max-records"] == "200"
        assert request.url.params["skip"] == "0"
    if request.content:
        assert headers["content-type"] == "application/json"
        assert isinstance(orjson.loads(request.content), dict)
    if op == 22:
        assert result is None
    elif op in LISTS:
        assert len(result.data) == 1
        assert result.data[0].raw == RECORD
        assert result.request_id == "req_list"
    elif op == 3:
        assert result == RECORD
    else:
        assert result.raw == RECORD


def test_bodies_use_the_spec_field_names(harness: Harness) -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(orjson.loads(request.content))
        return httpx.Response(200, json=RECORD)

    with harness.client(handler) as client:
        client.create_checkout_settings(
            locale="de", allowed_origins=["https://shop"], payment_methods=["card", "bank"]
        )
        client.redirect_checkout_session("s", client_token="ct")
        client.create_refund("pay_9")
        client.update_subscription("sub", customer_id="cus", price_id="pr")
        client.create_tax_rate(display_name="VAT", percentage=7.5)
    assert bodies == [
        {"locale": "de", "allowedOrigins": ["https://shop"], "paymentMethods": ["card", "bank"]},
        {"clientToken": "ct"},
        {"paymentId": "pay_9"},
        {"customerId": "cus", "priceId": "pr"},
        {"displayName": "VAT", "percentage": 7.5},
    ]


@pytest.mark.parametrize("op", sorted(CREATES))
def test_creates_reuse_one_idempotency_key_across_retries(harness: Harness, op: int) -> None:
    keys: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers["idempotency-key"])
        if len(keys) < 3:
            return envelope(503)
        return httpx.Response(200, json=RECORD)

    call = next(c for n, _, _, c, _ in OPERATIONS if n == op)
    with harness.client(handler) as client:
        call(client)
        call(client)  # a second logical create: a new key
    assert len(keys) == 4
    assert keys[0] == keys[1] == keys[2]
    assert keys[3] != keys[0]


def test_idempotency_header_name_is_a_setting(harness: Harness) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=RECORD)

    with harness.client(handler, idempotency_header="X-Retry-Key") as client:
        client.create_coupon(name="C", idempotency_key="fixed-key")
    assert seen[0].headers["x-retry-key"] == "fixed-key"


@pytest.mark.parametrize("op", [3, 6])
def test_bearer_operations_without_a_token_name_the_setting(harness: Harness, op: int) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    call = next(c for n, _, _, c, _ in OPERATIONS if n == op)
    with harness.client(handler, bearer_token=None) as client, pytest.raises(ConfigError) as info:
        call(client)
    assert info.value.setting == "RECON_BEARER_TOKEN"


def test_key_operations_without_a_key_name_the_setting(harness: Harness) -> None:
    with (
        harness.client(_answer, api_key=SecretStr("")) as client,
        pytest.raises(ConfigError) as info,
    ):
        client.list_disputes()
    assert info.value.setting == "RECON_API_KEY"


def test_models_keep_extra_fields_and_money_is_integer(harness: Harness) -> None:
    refund = {
        "id": "re_1",
        "paymentId": "pay_1",
        "amount": {"amountMinor": 500, "currency": "JPY"},
        "status": "pending",
        "extra": [1, 2],
    }

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/refunds"):
            return httpx.Response(200, json=refund)
        return httpx.Response(200, json=RECORD)

    with harness.client(handler) as client:
        got = client.create_refund("pay_1")
        payment = client.get_payment("pay_1")
    assert isinstance(got, Refund)
    assert got.amount == Money(amountMinor=500, currency="JPY")
    assert got.model_extra == {"extra": [1, 2]}
    assert got.raw == refund
    assert isinstance(payment, Payment)
    assert payment.amount == Money(amountMinor=1250, currency="EUR")
    assert isinstance(payment.amount_minor, int)


def test_a_float_amount_is_refused_not_rounded(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={**RECORD, "amountMinor": 12.5})

    with harness.client(handler) as client, pytest.raises(ApiError) as info:
        client.get_payment("pay_1")
    assert info.value.code == "unexpected_shape"
    assert not info.value.retryable


def test_payment_list_keeps_paging_fields(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.params["status"] == "refunded"
        assert request.url.params["max-records"] == "50"
        assert request.url.params["skip"] == "100"
        return httpx.Response(200, json={"data": [RECORD], "hasMore": True, "nextOffset": 150})

    with harness.client(handler) as client:
        page = client.list_payments(max_records=50, skip=100, status="refunded")
    assert page.has_more is True
    assert page.next_offset == 150
    assert page.data[0].id == "x_1"


@pytest.mark.parametrize(
    ("call", "setting"),
    [
        (lambda c: c.list_payments(max_records=0), "max_records"),
        (lambda c: c.list_payments(max_records=201), "max_records"),
        (lambda c: c.list_disputes(skip=-1), "skip"),
        (lambda c: c.list_payments(status="bogus"), "status"),
        (lambda c: c.get_payment(""), "payment_id"),
        (lambda c: c.get_invoice("  "), "invoice_id"),
        (lambda c: c.get_subscription("a/b"), "subscription_id"),
        (lambda c: c.list_payment_methods(""), "customer_id"),
        (lambda c: c.redirect_checkout_session("s", client_token=""), "client_token"),
        (lambda c: c.scan("nope"), "resource"),
        (lambda c: c.scan("payments", start_offset=-1), "start_offset"),
        (lambda c: c.scan("payments", status="lost"), "status"),
        (lambda c: c.scan("disputes", status="pending"), "status"),
        (lambda c: c.scan("payment_methods"), "customer_id"),
    ],
)
def test_bad_arguments_fail_before_any_request(harness: Harness, call: Call, setting: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    with harness.client(handler) as client, pytest.raises(ConfigError) as info:
        call(client)
    assert info.value.setting == setting
    assert isinstance(info.value, ValueError)
