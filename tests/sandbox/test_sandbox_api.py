"""Every operation of the sandbox: success and error paths, auth, lists, idempotent creates."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .conftest import ClientFactory
from .sandbox_support import BEARER, KEY

P = "/api/v1"
OTHER = "pay_aaaaaaaaaaaaa"

# (method, path template, auth scheme, json body) for every operation; {x} is a real id.
OPERATIONS: list[tuple[str, str, str, dict[str, Any] | None]] = [
    (
        "POST",
        "/checkout-settings",
        "K",
        {"locale": "de-DE", "allowedOrigins": [], "paymentMethods": ["card"]},
    ),
    ("PATCH", "/checkout-settings/{setting}", "K", {"locale": "fr-FR"}),
    ("POST", "/checkout-sessions/{session}/redirect", "B", {"clientToken": "ct_1"}),
    ("POST", "/checkout-sessions/{session}/expire", "K", None),
    ("GET", "/payments", "K", None),
    ("GET", "/payments/{payment}", "B", None),
    ("GET", "/payment-intents", "K", None),
    ("POST", "/refunds", "K", {"paymentId": "{confirmed}", "amount": {"amountMinor": 1}}),
    ("GET", "/disputes", "K", None),
    ("GET", "/payment-links/{link}", "K", None),
    ("POST", "/payment-links/{link}/deactivate", "K", None),
    ("GET", "/customers/{customer}/payment-methods", "K", None),
    ("GET", "/subscriptions", "K", None),
    ("GET", "/subscriptions/{subscription}", "K", None),
    ("PATCH", "/subscriptions/{subscription}", "K", {"priceId": "price_x"}),
    ("GET", "/invoices/{invoice}", "K", None),
    ("PATCH", "/products/{product}", "K", {"name": "Renamed"}),
    ("POST", "/coupons", "K", {"name": "Spring"}),
    ("PATCH", "/coupons/{coupon}", "K", {"name": "Summer"}),
    ("POST", "/tax-rates", "K", {"displayName": "VAT", "percentage": 19}),
    ("DELETE", "/webhook-endpoints/{webhook}", "K", None),
    ("GET", "/refunds", "K", None),
    ("GET", "/invoices", "K", None),
]


def _ids(fx: dict[str, Any]) -> dict[str, str]:
    pending = next(s["id"] for s in fx["checkoutSessions"] if s["status"] == "pending")
    return {
        "setting": fx["checkoutSettings"][0],
        "session": pending,
        "payment": fx["payments"][0],
        "confirmed": fx["paymentsByStatus"]["confirmed"],
        "link": fx["paymentLinks"][1]["id"],
        "customer": fx["customers"][0],
        "subscription": fx["subscriptions"][0],
        "invoice": fx["invoices"][0],
        "product": fx["products"][0],
        "coupon": fx["coupons"][0],
        "webhook": fx["webhookEndpoints"][0],
    }


def _fill(obj: Any, ids: dict[str, str]) -> Any:
    if isinstance(obj, str):
        return obj.format(**ids)
    if isinstance(obj, dict):
        return {k: _fill(v, ids) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_fill(v, ids) for v in obj]
    return obj


def _call(
    client: httpx.Client, fx: dict[str, Any], op: tuple[str, str, str, Any], headers: dict[str, str]
) -> httpx.Response:
    method, path, _, body = op
    ids = _ids(fx)
    return client.request(method, P + path.format(**ids), json=_fill(body, ids), headers=headers)


def test_there_are_21_spec_operations_plus_two_lists() -> None:
    assert len(OPERATIONS) == 23


@pytest.mark.parametrize("op", OPERATIONS, ids=[f"{m} {p}" for m, p, _, _ in OPERATIONS])
def test_operation_succeeds_with_its_scheme(
    client: httpx.Client, fixtures: dict[str, Any], op: tuple[str, str, str, Any]
) -> None:
    r = _call(client, fixtures, op, KEY if op[2] == "K" else BEARER)
    assert r.status_code in (200, 201, 204), r.text
    assert r.headers["X-Request-Id"].startswith("req_")
    if r.status_code != 204:
        assert isinstance(r.json(), dict)


@pytest.mark.parametrize("op", OPERATIONS, ids=[f"{m} {p}" for m, p, _, _ in OPERATIONS])
def test_operation_refuses_wrong_missing_and_invalid_credentials(
    client: httpx.Client, fixtures: dict[str, Any], op: tuple[str, str, str, Any]
) -> None:
    wrong = BEARER if op[2] == "K" else KEY
    bad = {"x-api-key": "nope"} if op[2] == "K" else {"Authorization": "Bearer nope"}
    for headers in (wrong, {}, bad):
        r = _call(client, fixtures, op, headers)
        assert r.status_code == 401, (headers, r.text)
        body = r.json()
        assert body["error"] == "unauthorized"
        assert body["requestId"] == r.headers["X-Request-Id"]
        assert set(body) == {"error", "message", "requestId"}


def test_bearer_operations_refuse_a_request_that_carries_the_api_key(
    client: httpx.Client, fixtures: dict[str, Any]
) -> None:
    both = {**KEY, **BEARER}
    pay = fixtures["payments"][0]
    r = client.get(f"{P}/payments/{pay}", headers=both)
    assert r.status_code == 401
    assert "x-api-key" in r.json()["message"]
    # an api-key operation ignores an extra Authorization header
    assert client.get(f"{P}/payments", headers=both).status_code == 200


def test_request_ids_are_unique_per_attempt(client: httpx.Client) -> None:
    seen = {client.get(f"{P}/payments", headers=KEY).headers["X-Request-Id"] for _ in range(20)}
    seen |= {client.get(f"{P}/payments", headers={}).json()["requestId"] for _ in range(5)}
    assert len(seen) == 25


@pytest.mark.parametrize(
    "query",
    [
        "max-records=0",
        "max-records=201",
        "max-records=-1",
        "max-records=abc",
        "max-records=1.5",
        "max-records=",
        "skip=-1",
        "skip=x",
        "skip=2.0",
    ],
)
@pytest.mark.parametrize(
    "path",
    ["/payments", "/payment-intents", "/disputes", "/subscriptions", "/refunds", "/invoices"],
)
def test_list_parameters_are_validated(client: httpx.Client, path: str, query: str) -> None:
    r = client.get(f"{P}{path}?{query}", headers=KEY)
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_request"


def test_payment_methods_list_is_validated(client: httpx.Client, fixtures: dict[str, Any]) -> None:
    cus = fixtures["customers"][0]
    assert (
        client.get(f"{P}/customers/{cus}/payment-methods?skip=-3", headers=KEY).status_code == 400
    )
    r = client.get(f"{P}/customers/cus_unknown/payment-methods", headers=KEY)
    assert r.status_code == 404
    methods = client.get(f"{P}/customers/{cus}/payment-methods", headers=KEY).json()["data"]
    assert methods
    assert all(m["type"] in ("card", "bank") for m in methods)


def test_payments_paging_walks_the_whole_list_newest_first(client: httpx.Client) -> None:
    got: list[dict[str, Any]] = []
    skip: int | None = 0
    while skip is not None:
        body = client.get(
            f"{P}/payments", params={"max-records": 200, "skip": skip}, headers=KEY
        ).json()
        assert set(body) == {"data", "hasMore", "nextOffset"}
        got += body["data"]
        assert body["hasMore"] == (body["nextOffset"] is not None)
        skip = body["nextOffset"]
    assert len(got) == 300
    assert len({p["id"] for p in got}) == 300
    keys = [(p["createdAt"], p["id"]) for p in got]
    assert keys == sorted(keys, reverse=True)
    end = client.get(f"{P}/payments?skip=300", headers=KEY).json()
    assert end == {"data": [], "hasMore": False, "nextOffset": None}


def test_other_lists_return_only_data_and_end_with_a_short_page(client: httpx.Client) -> None:
    for path in ("/payment-intents", "/disputes", "/subscriptions", "/refunds", "/invoices"):
        records: list[dict[str, Any]] = []
        skip = 0
        while True:
            body = client.get(
                f"{P}{path}", params={"max-records": 37, "skip": skip}, headers=KEY
            ).json()
            assert set(body) == {"data"}
            records += body["data"]
            if len(body["data"]) < 37:
                break
            skip += 37
        assert len({r["id"] for r in records}) == len(records) > 0
        created = [r["createdAt"] for r in records]
        assert created == sorted(created, reverse=True), path


def test_default_page_size_is_50(client: httpx.Client) -> None:
    assert len(client.get(f"{P}/payments", headers=KEY).json()["data"]) == 50


def test_status_filter(client: httpx.Client) -> None:
    for status in ("refunded", "confirmed", "pending"):
        body = client.get(
            f"{P}/payments", params={"status": status, "max-records": 200}, headers=KEY
        ).json()
        assert body["data"]
        assert {p["status"] for p in body["data"]} == {status}
    r = client.get(f"{P}/payments?status=settled", headers=KEY)
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_request"
    # paging a filter adds up to the filtered count
    seen = 0
    skip: int | None = 0
    while skip is not None:
        body = client.get(
            f"{P}/payments",
            params={"status": "confirmed", "max-records": 20, "skip": skip},
            headers=KEY,
        ).json()
        seen += len(body["data"])
        skip = body["nextOffset"]
    all_ = client.get(f"{P}/payments?max-records=200", headers=KEY).json()["data"]
    all_ += client.get(f"{P}/payments?max-records=200&skip=200", headers=KEY).json()["data"]
    assert seen == sum(1 for p in all_ if p["status"] == "confirmed")


def test_single_gets_and_404s(client: httpx.Client, fixtures: dict[str, Any]) -> None:
    ids = _ids(fixtures)
    assert (
        client.get(f"{P}/payments/{ids['payment']}", headers=BEARER).json()["id"] == ids["payment"]
    )
    for path, headers in (
        ("/payments/pay_aaaaaaaaaaaaa", BEARER),
        ("/payments/nope", BEARER),
        ("/subscriptions/sub_zz", KEY),
        ("/invoices/in_zz", KEY),
        ("/payment-links/plink_zz", KEY),
    ):
        r = client.get(P + path, headers=headers)
        assert r.status_code == 404
        assert r.json()["error"] == "not_found"
        assert r.json()["requestId"] == r.headers["X-Request-Id"]
    for method, path in (
        ("PATCH", "/products/prod_zz"),
        ("PATCH", "/coupons/co_zz"),
        ("PATCH", "/checkout-settings/cset_zz"),
        ("PATCH", "/subscriptions/sub_zz"),
    ):
        assert client.request(method, P + path, json={"name": "x"}, headers=KEY).status_code == 404
    assert client.post(f"{P}/checkout-sessions/cs_zz/expire", headers=KEY).status_code == 404
    r = client.post(
        f"{P}/checkout-sessions/cs_zz/redirect", json={"clientToken": "t"}, headers=BEARER
    )
    assert r.status_code == 404
    assert client.delete(f"{P}/webhook-endpoints/we_zz", headers=KEY).status_code == 404
    assert client.get(f"{P}/no-such-thing", headers=KEY).json()["error"] == "not_found"


def test_expire_moves_pending_to_expired_and_refuses_other_states(
    client: httpx.Client, fixtures: dict[str, Any]
) -> None:
    sessions = fixtures["checkoutSessions"]
    pending = next(s["id"] for s in sessions if s["status"] == "pending")
    r = client.post(f"{P}/checkout-sessions/{pending}/expire", headers=KEY)
    assert r.json()["status"] == "expired"
    again = client.post(f"{P}/checkout-sessions/{pending}/expire", headers=KEY)
    assert again.status_code == 409
    assert again.json()["error"] == "invalid_state"
    for s in sessions:
        if s["status"] != "pending":
            assert (
                client.post(f"{P}/checkout-sessions/{s['id']}/expire", headers=KEY).status_code
                == 409
            )


def test_redirect(client: httpx.Client, fixtures: dict[str, Any]) -> None:
    sessions = fixtures["checkoutSessions"]
    pending = next(s["id"] for s in sessions if s["status"] == "pending")
    done = next(s["id"] for s in sessions if s["status"] == "confirmed")
    url = f"{P}/checkout-sessions/{pending}/redirect"
    r = client.post(url, json={"clientToken": "ct"}, headers=BEARER)
    assert r.status_code == 200
    assert r.json()["redirectUrl"].startswith("https://")
    assert client.post(url, json={}, headers=BEARER).status_code == 400
    assert client.post(url, json={"clientToken": 5}, headers=BEARER).status_code == 400
    assert client.post(url, content=b"{not json", headers=BEARER).status_code == 400
    done_url = f"{P}/checkout-sessions/{done}/redirect"
    assert client.post(done_url, json={"clientToken": "ct"}, headers=BEARER).status_code == 409


def test_deactivate_sets_active_false(client: httpx.Client, fixtures: dict[str, Any]) -> None:
    link = fixtures["paymentLinks"][1]["id"]
    assert client.get(f"{P}/payment-links/{link}", headers=KEY).json()["active"] is True
    assert (
        client.post(f"{P}/payment-links/{link}/deactivate", headers=KEY).json()["active"] is False
    )
    assert client.get(f"{P}/payment-links/{link}", headers=KEY).json()["active"] is False


def test_checkout_settings_create_returns_an_id_and_patch_updates(client: httpx.Client) -> None:
    body = {"locale": "nl-NL", "allowedOrigins": ["https://a.example"], "paymentMethods": ["bank"]}
    r = client.post(f"{P}/checkout-settings", json=body, headers=KEY)
    assert r.status_code == 201
    created = r.json()
    assert set(created) == {"id", "locale", "allowedOrigins", "paymentMethods"}
    r = client.patch(
        f"{P}/checkout-settings/{created['id']}", json={"paymentMethods": ["card"]}, headers=KEY
    )
    assert r.json() == {**created, "paymentMethods": ["card"]}
    for bad in (
        {"locale": "x"},
        {**body, "locale": 3},
        {**body, "allowedOrigins": "x"},
        {**body, "paymentMethods": [1]},
    ):
        assert client.post(f"{P}/checkout-settings", json=bad, headers=KEY).status_code == 400
    assert (
        client.patch(
            f"{P}/checkout-settings/{created['id']}", json={"locale": 1}, headers=KEY
        ).status_code
        == 400
    )


def test_subscription_product_coupon_tax_rate_updates(
    client: httpx.Client, fixtures: dict[str, Any]
) -> None:
    sub = fixtures["subscriptions"][0]
    r = client.patch(
        f"{P}/subscriptions/{sub}",
        json={"customerId": "cus_new", "priceId": "price_new"},
        headers=KEY,
    )
    assert (r.json()["customerId"], r.json()["priceId"]) == ("cus_new", "price_new")
    assert client.get(f"{P}/subscriptions/{sub}", headers=KEY).json()["priceId"] == "price_new"
    listed = client.get(f"{P}/subscriptions?max-records=200", headers=KEY).json()["data"]
    assert next(s for s in listed if s["id"] == sub)["priceId"] == "price_new"
    assert (
        client.patch(f"{P}/subscriptions/{sub}", json={"priceId": 7}, headers=KEY).status_code
        == 400
    )
    prod = fixtures["products"][0]
    assert (
        client.patch(f"{P}/products/{prod}", json={"name": "New"}, headers=KEY).json()["name"]
        == "New"
    )
    assert client.patch(f"{P}/products/{prod}", json={}, headers=KEY).status_code == 400
    coupon = client.post(f"{P}/coupons", json={"name": "C", "percentOff": 15}, headers=KEY).json()
    assert coupon["percentOff"] == 15
    assert (
        client.patch(f"{P}/coupons/{coupon['id']}", json={"name": "D"}, headers=KEY).json()["name"]
        == "D"
    )
    assert (
        client.post(f"{P}/coupons", json={"name": "C", "percentOff": 150}, headers=KEY).status_code
        == 400
    )
    assert client.post(f"{P}/coupons", json={}, headers=KEY).status_code == 400
    rate = client.post(
        f"{P}/tax-rates", json={"displayName": "GST", "percentage": 7.5}, headers=KEY
    )
    assert rate.status_code == 201
    assert rate.json()["inclusive"] is False
    assert (
        client.post(f"{P}/tax-rates", json={"displayName": "GST"}, headers=KEY).status_code == 400
    )
    assert (
        client.post(
            f"{P}/tax-rates", json={"displayName": "G", "percentage": True}, headers=KEY
        ).status_code
        == 400
    )


def test_delete_webhook_endpoint(client: httpx.Client, fixtures: dict[str, Any]) -> None:
    we = fixtures["webhookEndpoints"][0]
    r = client.delete(f"{P}/webhook-endpoints/{we}", headers=KEY)
    assert r.status_code == 204
    assert r.content == b""
    assert r.headers["X-Request-Id"]
    assert client.delete(f"{P}/webhook-endpoints/{we}", headers=KEY).status_code == 404


@pytest.mark.parametrize(
    ("path", "body", "changed"),
    [
        (
            "/checkout-settings",
            {"locale": "en", "allowedOrigins": [], "paymentMethods": []},
            {"locale": "de"},
        ),
        (
            "/refunds",
            {"paymentId": "{confirmed}", "amount": {"amountMinor": 2}},
            {"amount": {"amountMinor": 3}},
        ),
        ("/coupons", {"name": "A"}, {"name": "B"}),
        ("/tax-rates", {"displayName": "VAT", "percentage": 20}, {"percentage": 21}),
    ],
)
def test_creates_are_idempotent(
    client: httpx.Client,
    fixtures: dict[str, Any],
    path: str,
    body: dict[str, Any],
    changed: dict[str, Any],
) -> None:
    body = _fill(body, _ids(fixtures))
    url = P + path
    first = client.post(url, json=body, headers={**KEY, "Idempotency-Key": "k-1"})
    again = client.post(url, json=body, headers={**KEY, "Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert first.headers["X-Request-Id"] != again.headers["X-Request-Id"]
    conflict = client.post(url, json={**body, **changed}, headers={**KEY, "Idempotency-Key": "k-1"})
    assert conflict.status_code == 409
    assert conflict.json()["error"] == "idempotency_conflict"
    other = client.post(url, json=body, headers={**KEY, "Idempotency-Key": "k-2"})
    assert other.json()["id"] != first.json()["id"]
    a = client.post(url, json=body, headers=KEY).json()
    b = client.post(url, json=body, headers=KEY).json()
    assert a["id"] != b["id"]
    state = client.get("/_sandbox/state").json()
    assert any(k.endswith(":k-1") and v["hits"] == 2 for k, v in state["idempotency"].items())


def test_idempotency_header_name_is_configurable(make_client: ClientFactory) -> None:
    c = make_client(idempotency_header="X-Retry-Key")
    body = {"name": "A"}
    a = c.post(f"{P}/coupons", json=body, headers={**KEY, "X-Retry-Key": "z"}).json()
    b = c.post(f"{P}/coupons", json=body, headers={**KEY, "X-Retry-Key": "z"}).json()
    assert a == b


def test_refunds_are_pending_and_limited_to_what_is_left(
    client: httpx.Client, fixtures: dict[str, Any]
) -> None:
    pid = fixtures["paymentsByStatus"]["confirmed"]
    pay = client.get(f"{P}/payments/{pid}", headers=BEARER).json()
    amount = pay["amountMinor"]
    r = client.post(
        f"{P}/refunds", json={"paymentId": pid, "amount": {"amountMinor": amount + 1}}, headers=KEY
    )
    assert r.status_code == 422
    assert r.json()["error"] == "amount_exceeds_refundable"
    first = client.post(
        f"{P}/refunds", json={"paymentId": pid, "amount": {"amountMinor": amount - 10}}, headers=KEY
    )
    assert first.status_code == 201
    refund = first.json()
    assert refund["status"] == "pending"
    assert refund["amount"] == {"amountMinor": amount - 10, "currency": pay["currency"]}
    rest = client.post(f"{P}/refunds", json={"paymentId": pid}, headers=KEY).json()
    assert rest["amount"]["amountMinor"] == 10
    assert client.post(f"{P}/refunds", json={"paymentId": pid}, headers=KEY).status_code == 422
    listed = client.get(f"{P}/refunds?max-records=2", headers=KEY).json()["data"]
    assert [x["id"] for x in listed] == [rest["id"], refund["id"]]


def test_refund_error_paths(make_client: ClientFactory) -> None:
    client = make_client(payments=3000)
    by = client.get("/_sandbox/fixtures").json()["paymentsByStatus"]
    assert set(by) == {
        "created",
        "pending",
        "confirmed",
        "partially_refunded",
        "refunded",
        "cancelled",
        "expired",
    }
    url = f"{P}/refunds"
    assert client.post(url, json={"paymentId": OTHER}, headers=KEY).status_code == 404
    for status in ("created", "pending", "cancelled", "expired"):
        r = client.post(url, json={"paymentId": by[status]}, headers=KEY)
        assert r.status_code == 409, status
        assert r.json()["error"] == "invalid_state"
    conf = by["confirmed"]
    assert client.post(url, json={}, headers=KEY).status_code == 400
    assert client.post(url, json={"paymentId": 3}, headers=KEY).status_code == 400
    assert client.post(url, json={"paymentId": conf, "amount": 5}, headers=KEY).status_code == 400
    assert (
        client.post(
            url, json={"paymentId": conf, "amount": {"amountMinor": 0}}, headers=KEY
        ).status_code
        == 400
    )
    assert (
        client.post(
            url, json={"paymentId": conf, "amount": {"amountMinor": 1.5}}, headers=KEY
        ).status_code
        == 400
    )
    r = client.post(
        url, json={"paymentId": conf, "amount": {"amountMinor": 1, "currency": "XXX"}}, headers=KEY
    )
    assert r.status_code == 422
    assert client.post(url, content=b"[]", headers=KEY).status_code == 400
    # an already fully refunded payment has nothing left
    assert client.post(url, json={"paymentId": by["refunded"]}, headers=KEY).status_code == 422


def test_assumed_lists_can_be_switched_off(make_client: ClientFactory) -> None:
    c = make_client(refunds_list=False, invoices_list=False)
    for path in ("/refunds", "/invoices"):
        r = c.get(P + path, headers=KEY)
        assert r.status_code == 404
        assert r.json()["error"] == "not_found"
    assert c.get(f"{P}/payments", headers=KEY).status_code == 200


def test_openapi_is_served(client: httpx.Client) -> None:
    assert client.get("/openapi.yaml").text.startswith("openapi: 3.0")
    spec = client.get(f"{P}/openapi.json").json()
    assert len([op for path in spec["paths"].values() for op in path]) == 23


def test_sandbox_helpers(client: httpx.Client) -> None:
    truth = client.get("/_sandbox/truth").json()
    assert truth["payments"] == 300
    assert truth["findings"]
    client.post(f"{P}/coupons", json={"name": "A"}, headers=KEY)
    assert client.get("/_sandbox/state").json()["created"] == {"coupons": 1}
    assert client.post("/_sandbox/reset").status_code == 200
    assert client.get("/_sandbox/state").json()["created"] == {}
