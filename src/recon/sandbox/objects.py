"""The operations on one object: get, create, update, expire, deactivate, delete.

(The lists are in ``lists``, op 8 in ``refunding``.) Creates go through
``state.creates`` (idempotency keys); changes live in memory until /_sandbox/reset.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from recon.sandbox.envelope import json_response, refusal
from recon.sandbox.params import json_body, number, str_field, str_list
from recon.sandbox.state import SandboxState

__all__ = [
    "create_checkout_setting",
    "create_coupon",
    "create_tax_rate",
    "deactivate_payment_link",
    "delete_webhook",
    "expire_session",
    "get_invoice",
    "get_payment",
    "get_payment_link",
    "get_subscription",
    "redirect_session",
    "update_checkout_setting",
    "update_coupon",
    "update_product",
    "update_subscription",
]


async def create_checkout_setting(request: Request, state: SandboxState) -> Response:
    """Op 1: all three fields required; the sandbox adds an ``id`` so that op 2 can use it."""
    body = await json_body(request)
    locale = str_field(body, "locale", required=True)
    origins = str_list(body, "allowedOrigins", required=True)
    methods = str_list(body, "paymentMethods", required=True)

    def make() -> tuple[int, dict[str, Any]]:
        ident = state.new_id("cset")
        rec = {"id": ident, "locale": locale, "allowedOrigins": origins, "paymentMethods": methods}
        state.settings[ident] = rec
        return 201, rec

    return state.creates.answer(request, "checkout_settings", body, make)


async def update_checkout_setting(request: Request, state: SandboxState) -> Response:
    """Op 2: any of the three fields."""
    body = await json_body(request)
    rec = state.settings.get(request.path_params["id"])
    if rec is None:
        raise refusal(404, "not_found", "no such checkout setting")
    locale = str_field(body, "locale", required=False)
    origins = str_list(body, "allowedOrigins", required=False)
    methods = str_list(body, "paymentMethods", required=False)
    with state.lock:
        if locale is not None:
            rec["locale"] = locale
        if origins is not None:
            rec["allowedOrigins"] = origins
        if methods is not None:
            rec["paymentMethods"] = methods
    return json_response(rec)


def _session(state: SandboxState, request: Request) -> dict[str, Any]:
    rec = state.sessions.get(request.path_params["id"])
    if rec is None:
        raise refusal(404, "not_found", "no such checkout session")
    return rec


async def redirect_session(request: Request, state: SandboxState) -> Response:
    """Op 3: the checkout URL of a pending session."""
    rec = _session(state, request)
    body = await json_body(request)
    str_field(body, "clientToken", required=True)
    if rec["status"] != "pending":
        raise refusal(409, "invalid_state", f"the checkout session is {rec['status']}")
    return json_response({"redirectUrl": rec["checkoutUrl"]})


async def expire_session(request: Request, state: SandboxState) -> Response:
    """Op 4: pending → expired; any other status is a 409."""
    rec = _session(state, request)
    with state.lock:
        if rec["status"] != "pending":
            raise refusal(
                409, "invalid_state", f"only a pending session expires; it is {rec['status']}"
            )
        rec["status"] = "expired"
    return json_response(rec)


async def get_payment(request: Request, state: SandboxState) -> Response:
    """Op 6 (bearer)."""
    rec = state.payment_record(request.path_params["id"])
    if rec is None:
        raise refusal(404, "not_found", "no such payment")
    return json_response(rec)


async def get_payment_link(request: Request, state: SandboxState) -> Response:
    """Op 10."""
    rec = state.links.get(request.path_params["id"])
    if rec is None:
        raise refusal(404, "not_found", "no such payment link")
    return json_response(rec)


async def deactivate_payment_link(request: Request, state: SandboxState) -> Response:
    """Op 11: ``active`` false (also when it already was)."""
    rec = state.links.get(request.path_params["id"])
    if rec is None:
        raise refusal(404, "not_found", "no such payment link")
    with state.lock:
        rec["active"] = False
    return json_response(rec)


def _sub_index(state: SandboxState, request: Request) -> int:
    ds = state.data
    s = ds.index_of("sub", request.path_params["id"], ds.sizes.subscriptions)
    if s is None:
        raise refusal(404, "not_found", "no such subscription")
    return s


async def get_subscription(request: Request, state: SandboxState) -> Response:
    """Op 14 (with the changes of op 15)."""
    s = _sub_index(state, request)
    rec = state.sub_edits.get(s) or state.data.subscription(s)
    return json_response(rec)


async def update_subscription(request: Request, state: SandboxState) -> Response:
    """Op 15: ``customerId`` and ``priceId``, visible in op 14 and in the list."""
    s = _sub_index(state, request)
    body = await json_body(request)
    customer = str_field(body, "customerId", required=False)
    price = str_field(body, "priceId", required=False)
    with state.lock:
        rec = dict(state.sub_edits.get(s) or state.data.subscription(s))
        if customer is not None:
            rec["customerId"] = customer
        if price is not None:
            rec["priceId"] = price
        state.sub_edits[s] = rec
        state.lists["subscriptions"].edit(s, orjson.dumps(rec))
    return json_response(rec)


async def get_invoice(request: Request, state: SandboxState) -> Response:
    """Op 16."""
    ds = state.data
    v = ds.index_of("in", request.path_params["id"], ds.sizes.invoices)
    if v is None:
        raise refusal(404, "not_found", "no such invoice")
    return json_response(ds.invoice(v))


async def _rename(
    request: Request, state: SandboxState, store: dict[str, dict[str, Any]], what: str
) -> Response:
    """PATCH {name} of a stored object (products, op 18; coupons, op 20)."""
    rec = store.get(request.path_params["id"])
    if rec is None:
        raise refusal(404, "not_found", f"no such {what}")
    body = await json_body(request)
    name = str_field(body, "name", required=True)
    with state.lock:
        rec["name"] = name
    return json_response(rec)


async def update_product(request: Request, state: SandboxState) -> Response:
    """Op 18."""
    return await _rename(request, state, state.products, "product")


async def create_coupon(request: Request, state: SandboxState) -> Response:
    """Op 19: ``name``; ``percentOff`` 0..100 (default 10); ``duration`` (default once)."""
    body = await json_body(request)
    name = str_field(body, "name", required=True)
    pct = number(body, "percentOff", required=False, lo=0, hi=100)
    duration = str_field(body, "duration", required=False)

    def make() -> tuple[int, dict[str, Any]]:
        ident = state.new_id("co")
        rec = {
            "id": ident,
            "name": name,
            "percentOff": 10 if pct is None else pct,
            "duration": duration or "once",
        }
        state.coupons[ident] = rec
        return 201, rec

    return state.creates.answer(request, "coupons", body, make)


async def update_coupon(request: Request, state: SandboxState) -> Response:
    """Op 20."""
    return await _rename(request, state, state.coupons, "coupon")


async def create_tax_rate(request: Request, state: SandboxState) -> Response:
    """Op 21: ``displayName``, ``percentage`` 0..100, ``inclusive`` (default false)."""
    body = await json_body(request)
    name = str_field(body, "displayName", required=True)
    pct = number(body, "percentage", required=True, lo=0, hi=100)
    inclusive = body.get("inclusive", False)
    if not isinstance(inclusive, bool):
        raise refusal(400, "invalid_request", "inclusive must be a boolean")

    def make() -> tuple[int, dict[str, Any]]:
        ident = state.new_id("txr")
        rec = {"id": ident, "displayName": name, "percentage": pct, "inclusive": inclusive}
        state.tax_rates[ident] = rec
        return 201, rec

    return state.creates.answer(request, "tax_rates", body, make)


async def delete_webhook(request: Request, state: SandboxState) -> Response:
    """Op 22: 204; a deleted endpoint is gone (a second delete is a 404)."""
    with state.lock:
        if state.webhooks.pop(request.path_params["id"], None) is None:
            raise refusal(404, "not_found", "no such webhook endpoint")
    return Response(status_code=204)
