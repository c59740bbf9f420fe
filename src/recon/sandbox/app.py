"""The sandbox Merchant Payments API as a Starlette (ASGI) app.

``create_app(SandboxConfig(...))`` builds it; every assumption where the spec is silent is
written down in docs/sandbox.md.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hmac
import re
import secrets
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from itertools import count
from typing import Any, Literal

import orjson
import yaml
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from recon.sandbox.data import PAYMENT_STATUSES, Dataset, iso_ms
from recon.sandbox.faults import Fault, FaultPlan, FaultProfile
from recon.sandbox.store import ListView
from recon.sandbox.truth import DEFAULT_FAILED_STATUSES, truth_json

__all__ = [
    "DEMO_API_KEY",
    "DEMO_BEARER_TOKEN",
    "PAYMENT_STATUSES",
    "SandboxConfig",
    "SandboxState",
    "create_app",
]

DEMO_API_KEY = "sandbox-demo-key"
DEMO_BEARER_TOKEN = "sandbox-demo-token"  # noqa: S105 - the documented demo token
MAX_PAGE = 200
DEFAULT_PAGE = 50
CAP = 100
_INT_RE = re.compile(r"[0-9]{1,18}")
_JSON = "application/json"
_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]


@dataclass
class SandboxConfig:
    """How one sandbox behaves. Secrets are kept out of ``repr``."""

    seed: int = 7
    payments: int = 1000
    faults: str = "none"
    api_key: str = field(default=DEMO_API_KEY, repr=False)
    bearer_token: str = field(default=DEMO_BEARER_TOKEN, repr=False)
    anchor: datetime | None = None
    refunds_list: bool = True
    invoices_list: bool = True
    idempotency_header: str = "Idempotency-Key"
    retry_after_s: int = 1
    slow_s: float = 0.5
    fault_rate: float = 0.15
    cache_records: int = 300_000
    anomalies: bool = True
    #: serialise every list record up front: "off" (on first touch), "sync" (before the app is
    #: returned) or "background" (in a daemon thread; /_sandbox/state says when it is done)
    prewarm: Literal["off", "sync", "background"] = "off"

    def __post_init__(self) -> None:
        FaultProfile.parse(self.faults)  # fail early on a bad profile name
        if self.prewarm not in ("off", "sync", "background"):
            raise ValueError("prewarm must be off, sync or background")
        if self.payments < 0:
            raise ValueError("payments must be >= 0")


class ApiError(Exception):
    """An error answer (turned into the envelope)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _envelope(status: int, code: str, message: str, rid: str, **headers: str) -> Response:
    body = orjson.dumps({"error": code, "message": message, "requestId": rid})
    return Response(body, status, headers={"X-Request-Id": rid, **headers}, media_type=_JSON)


def _json(obj: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(obj), status, media_type=_JSON)


@dataclass
class _Stored:
    fingerprint: bytes
    status: int
    body: bytes
    hits: int = 1


class SandboxState:
    """Everything a running sandbox knows and changes (one per app; reset with /_sandbox/reset)."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.profile = FaultProfile.parse(config.faults)
        self.faults = FaultPlan(self.profile, config.seed, rate=config.fault_rate)
        self.data = Dataset(config.seed, config.payments, config.anchor, anomalies=config.anomalies)
        self._truth: bytes | None = None
        self.warm = False
        self.refunds_list = config.refunds_list and not self.profile.strict
        self.invoices_list = config.invoices_list and not self.profile.strict
        self.poisoned_skip = self.faults.poisoned_page(config.payments)
        self._rid = count(1)
        self._rid_prefix = secrets.token_hex(3)
        self.lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        ds = self.data
        cache = self.config.cache_records
        self.lists: dict[str, ListView] = {
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
        for res in ("disputes", "subscriptions", "invoices", "payment_intents"):
            self.lists[res] = ListView(
                res,
                (lambda r: lambda: ds.count(r))(res),
                (lambda r: lambda a, b: ds.records_bytes(r, a, b))(res),
                cache_records=min(cache, 100_000),
            )
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
        self.idem: dict[tuple[str, str], _Stored] = {}
        self.created: dict[str, int] = {}
        self.drift_counter: dict[str, int] = {"payments": 0, "refunds": 0}
        self.drift_log: dict[str, dict[str, list[str]]] = {
            "payments": {"inserted": [], "deleted": []},
            "refunds": {"inserted": [], "deleted": []},
        }
        self._new = count(1)
        self._last_ms = 0
        self.requests = 0
        self.faults.reset()

    def prewarm(self) -> None:
        """Generate and serialise every list record now (up to the cache size)."""
        for res in (
            "payments",
            "refunds",
            "disputes",
            "subscriptions",
            "invoices",
            "payment_intents",
        ):
            self.lists[res].warm()

    # ---------------------------------------------------------------- helpers
    def request_id(self) -> str:
        return f"req_{self._rid_prefix}{next(self._rid):08x}"

    def truth(self) -> bytes:
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

    # ---------------------------------------------------------------- drift
    def drift_after_page(self, resource: str) -> None:
        if not self.profile.drift or resource not in self.drift_counter:
            return
        ds = self.data
        view = self.lists[resource]
        k = self.drift_counter[resource]
        self.drift_counter[resource] = k + 1
        log = self.drift_log[resource]
        if resource == "payments":
            ident = self.new_id("pay")
            rec = {
                "id": ident,
                "amountMinor": 1000 + k,
                "currency": "EUR",
                "status": "confirmed",
                "reference": f"DRIFT-{ident[4:].upper()}",
                "createdAt": self.now_iso(),
                "metadata": {"drift": True},
            }
            self.extra_payments[ident] = rec
            view.insert(orjson.dumps(rec), ident, "confirmed")
            log["inserted"].append(ident)
            victim = self._drift_victim_payment(k)
            if victim is not None:
                view.delete(victim)
                log["deleted"].append(ds.payment_id(victim))
        else:
            ident = self.new_id("re")
            pid = ds.payment_id(0) if ds.n else "pay_none"
            cur = ds.payment_plan(0).currency if ds.n else "EUR"
            rec = {
                "id": ident,
                "paymentId": pid,
                "amount": {"amountMinor": 100, "currency": cur},
                "status": "failed",
                "createdAt": self.now_iso(),
                "failureReason": "drift",
            }
            view.insert(orjson.dumps(rec), ident, "failed")
            log["inserted"].append(ident)
            victim = self._drift_victim_refund(k)
            if victim is not None:
                view.delete(victim)
                log["deleted"].append(orjson.loads(view.base_records(victim, victim + 1)[0])["id"])

    def _drift_victim_payment(self, k: int) -> int | None:
        """A clean confirmed payment with no refunds: deleting it changes no finding."""
        ds = self.data
        n = ds.n
        if not n:
            return None
        start = self.faults.drift_pick("payments", k, n)
        for off in range(min(n, 10_000)):
            i = (start + off) % n
            if i in ds.pay_kind or i in ds.dup_partner or i in self.lists["payments"].deleted_set:
                continue
            if ds.payment_status(i) == "confirmed" and ds.refund_count_of(i) == 0:
                return i
        return None

    def _drift_victim_refund(self, k: int) -> int | None:
        """A failed (not counted) refund of an unplanted payment."""
        ds = self.data
        total = ds.refund_count
        if not total:
            return None
        start = self.faults.drift_pick("refunds", k, total)
        for off in range(min(total, 10_000)):
            r = (start + off) % total
            if r in self.lists["refunds"].deleted_set:
                continue
            i, _ = ds.refund_locate(r)
            if i in ds.pay_kind:
                continue
            if ds.refund(r)["status"] in DEFAULT_FAILED_STATUSES:
                return r
        return None

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
            "created": dict(self.created),
            "idempotency": {
                f"{op}:{key}": {"status": s.status, "hits": s.hits}
                for (op, key), s in self.idem.items()
            },
            "drift": {
                res: {
                    "servedPages": self.drift_counter[res],
                    "inserted": log["inserted"],
                    "deleted": log["deleted"],
                }
                for res, log in self.drift_log.items()
            },
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
    out: dict[str, str] = {}
    for i in range(min(ds.n, 5000)):
        if i in ds.pay_kind or i in ds.dup_partner:
            continue
        st = ds.payment_status(i)
        if st not in out:
            out[st] = ds.payment_id(i)
    return out


# ---------------------------------------------------------------------------- parsing
def _list_params(request: Request) -> tuple[int, int]:
    q = request.query_params
    raw_limit = q.get("max-records")
    raw_skip = q.get("skip")
    limit = DEFAULT_PAGE
    skip = 0
    if raw_limit is not None:
        if not _INT_RE.fullmatch(raw_limit) or not 1 <= int(raw_limit) <= MAX_PAGE:
            raise ApiError(400, "invalid_request", "max-records must be an integer from 1 to 200")
        limit = int(raw_limit)
    if raw_skip is not None:
        if not _INT_RE.fullmatch(raw_skip):
            raise ApiError(400, "invalid_request", "skip must be an integer of 0 or more")
        skip = int(raw_skip)
    return limit, skip


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        raise ApiError(400, "invalid_request", "a JSON object body is required")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ApiError(400, "invalid_request", "the body is not valid JSON") from None
    if not isinstance(obj, dict):
        raise ApiError(400, "invalid_request", "the body must be a JSON object")
    return obj


def _str(body: dict[str, Any], key: str, *, required: bool) -> str | None:
    if key not in body:
        if required:
            raise ApiError(400, "invalid_request", f"{key} is required")
        return None
    v = body[key]
    if not isinstance(v, str):
        raise ApiError(400, "invalid_request", f"{key} must be a string")
    return v


def _str_list(body: dict[str, Any], key: str, *, required: bool) -> list[str] | None:
    if key not in body:
        if required:
            raise ApiError(400, "invalid_request", f"{key} is required")
        return None
    v = body[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ApiError(400, "invalid_request", f"{key} must be an array of strings")
    return list(v)


def _number(body: dict[str, Any], key: str, *, required: bool, lo: float, hi: float) -> Any:
    if key not in body:
        if required:
            raise ApiError(400, "invalid_request", f"{key} is required")
        return None
    v = body[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
        raise ApiError(400, "invalid_request", f"{key} must be a number from {lo:g} to {hi:g}")
    return v


# ---------------------------------------------------------------------------- the app
Handler = Callable[[Request, SandboxState], Awaitable[Response]]


@dataclass(frozen=True)
class _Op:
    number: int
    name: str
    auth: str  # "K" or "B"
    handler: Handler
    create: bool = False
    list_resource: str | None = None


def create_app(config: SandboxConfig | None = None) -> Starlette:
    """The sandbox as an ASGI app (state on ``app.state.sandbox``)."""
    cfg = config if config is not None else SandboxConfig()
    state = SandboxState(cfg)

    def wrap(op: _Op) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            rid = state.request_id()
            state.requests += 1
            refused = _check_auth(request, op, cfg)
            if refused is not None:
                hdr = {"WWW-Authenticate": "Bearer"} if op.auth == "B" else {}
                return _envelope(401, "unauthorized", refused, rid, **hdr)
            method = request.method
            path = request.url.path
            query = str(request.url.query)
            attempt = state.faults.attempt(method, path, query)
            fault = state.faults.decide(method, path, query, attempt)
            if (
                op.list_resource == "payments"
                and state.poisoned_skip is not None
                and request.query_params.get("skip") == str(state.poisoned_skip)
            ):
                return _envelope(503, "unavailable", "this page is unavailable (chaos)", rid)
            committed = False
            if fault in (Fault.SERVER_ERROR, Fault.BAD_GATEWAY, Fault.UNAVAILABLE):
                if op.create and state.faults.after_commit(method, path, query, attempt):
                    committed = True  # the create goes through, then the answer is lost
                else:
                    return _fault_response(fault, rid)
            if fault is Fault.RATE_LIMITED:
                return _envelope(
                    429,
                    "rate_limited",
                    "too many requests",
                    rid,
                    **{"Retry-After": str(cfg.retry_after_s)},
                )
            if fault is Fault.SLOW:
                await asyncio.sleep(cfg.slow_s)
            try:
                response = await op.handler(request, state)
            except ApiError as err:
                return _envelope(err.status, err.code, err.message, rid)
            if committed and fault is not None:
                return _fault_response(fault, rid)
            if fault is Fault.TRUNCATED and response.status_code == 200:
                cut = response.body[: max(1, len(response.body) // 2)]
                response = Response(cut, 200, media_type=_JSON)
            response.headers["X-Request-Id"] = rid
            if op.list_resource is not None and response.status_code == 200:
                state.drift_after_page(op.list_resource)
            return response

        endpoint.__name__ = f"op{op.number}_{op.name}"
        return endpoint

    by_path: dict[str, dict[str, Callable[[Request], Awaitable[Response]]]] = {}
    for method, path, op in _operations(cfg):
        by_path.setdefault(path, {})[method] = wrap(op)
    routes = [
        Route(path, _dispatch(state, methods), methods=_ALL_METHODS)
        for path, methods in by_path.items()
    ]

    async def truth_ep(request: Request) -> Response:
        return Response(state.truth(), media_type=_JSON, headers=_rid_header(state))

    async def state_ep(request: Request) -> Response:
        return Response(
            orjson.dumps(state.state_json()), media_type=_JSON, headers=_rid_header(state)
        )

    async def fixtures_ep(request: Request) -> Response:
        return Response(
            orjson.dumps(state.fixtures_json()), media_type=_JSON, headers=_rid_header(state)
        )

    async def present_ep(request: Request) -> Response:
        """Ids of a list resource present from start to end (generated and never deleted)."""
        resource = request.query_params.get("resource", "payments")
        view = state.lists.get(resource)
        if view is None:
            return _envelope(404, "not_found", "no such list resource", state.request_id())
        with state.lock:
            deleted = set(view.deleted_set)
            ids = [
                orjson.loads(rec)["id"]
                for k, rec in enumerate(view.base_records(0, view.base_count))
                if k not in deleted
            ]
        return Response(
            orjson.dumps({"resource": resource, "ids": ids}),
            media_type=_JSON,
            headers=_rid_header(state),
        )

    async def reset_ep(request: Request) -> Response:
        state.reset()
        return Response(b'{"reset":true}', media_type=_JSON, headers=_rid_header(state))

    async def health_ep(request: Request) -> Response:
        return Response(b'{"ok":true}', media_type=_JSON, headers=_rid_header(state))

    spec_text = openapi_text()

    async def openapi_yaml(request: Request) -> Response:
        return Response(spec_text, media_type="application/yaml", headers=_rid_header(state))

    spec_json = orjson.dumps(_openapi_dict())

    async def openapi_json(request: Request) -> Response:
        return Response(spec_json, media_type=_JSON, headers=_rid_header(state))

    routes += [
        Route("/_sandbox/truth", truth_ep, methods=["GET"]),
        Route("/_sandbox/state", state_ep, methods=["GET"]),
        Route("/_sandbox/fixtures", fixtures_ep, methods=["GET"]),
        Route("/_sandbox/present", present_ep, methods=["GET"]),
        Route("/_sandbox/reset", reset_ep, methods=["POST"]),
        Route("/_sandbox/health", health_ep, methods=["GET"]),
        Route("/openapi.yaml", openapi_yaml, methods=["GET"]),
        Route("/api/v1/openapi.json", openapi_json, methods=["GET"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        rid = state.request_id()
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        if code == 405:
            allow = (getattr(exc, "headers", None) or {}).get("Allow", "")
            return _envelope(
                405, "method_not_allowed", "method not allowed on this path", rid, Allow=allow
            )
        if code == 404:
            return _envelope(404, "not_found", "no such operation", rid)
        return _envelope(code, "error", "request failed", rid)

    async def server_error(request: Request, exc: Exception) -> Response:
        return _envelope(500, "internal_error", "internal error", state.request_id())

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.state.sandbox = state
    if cfg.prewarm == "sync":
        state.prewarm()
    elif cfg.prewarm == "background":
        threading.Thread(target=state.prewarm, name="recon-sandbox-prewarm", daemon=True).start()
    return app


def _dispatch(
    state: SandboxState, methods: dict[str, Callable[[Request], Awaitable[Response]]]
) -> Callable[[Request], Awaitable[Response]]:
    """One endpoint per path: route by method; 405 (with ``Allow``) for any other method."""
    allow = ", ".join(sorted(methods))

    async def endpoint(request: Request) -> Response:
        handler = methods.get(request.method)
        if handler is None:
            return _envelope(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed here",
                state.request_id(),
                Allow=allow,
            )
        return await handler(request)

    return endpoint


def _rid_header(state: SandboxState) -> dict[str, str]:
    return {"X-Request-Id": state.request_id()}


def _fault_response(fault: Fault, rid: str) -> Response:
    status = int(fault.value)
    code = {500: "internal_error", 502: "bad_gateway", 503: "unavailable"}[status]
    return _envelope(status, code, f"transient failure ({status})", rid)


def _check_auth(request: Request, op: _Op, cfg: SandboxConfig) -> str | None:
    """None when the request carries the operation's credential; else why it is refused."""
    key = request.headers.get("x-api-key")
    authz = request.headers.get("authorization")
    if op.auth == "K":
        if key is None:
            if authz is not None:
                return "this operation takes the x-api-key header, not Authorization"
            return "missing x-api-key header"
        if not hmac.compare_digest(key.encode(), cfg.api_key.encode()):
            return "invalid API key"
        return None
    if key is not None:
        # the server-side key must never travel with a browser-facing operation
        return "this operation takes Authorization: Bearer; the x-api-key must not be sent"
    if authz is None:
        return "missing Authorization: Bearer header"
    scheme, _, token = authz.partition(" ")
    if scheme.lower() != "bearer" or not token:
        return "Authorization must be 'Bearer <token>'"
    if not hmac.compare_digest(token.strip().encode(), cfg.bearer_token.encode()):
        return "invalid bearer token"
    return None


# ---------------------------------------------------------------------------- operations
def _operations(cfg: SandboxConfig) -> list[tuple[str, str, _Op]]:
    p = "/api/v1"
    return [
        ("POST", f"{p}/checkout-settings", _Op(1, "create_checkout_setting", "K", _op1, True)),
        ("PATCH", f"{p}/checkout-settings/{{id}}", _Op(2, "update_checkout_setting", "K", _op2)),
        ("POST", f"{p}/checkout-sessions/{{id}}/redirect", _Op(3, "redirect", "B", _op3)),
        ("POST", f"{p}/checkout-sessions/{{id}}/expire", _Op(4, "expire", "K", _op4)),
        ("GET", f"{p}/payments", _Op(5, "list_payments", "K", _op5, list_resource="payments")),
        ("GET", f"{p}/payments/{{id}}", _Op(6, "get_payment", "B", _op6)),
        (
            "GET",
            f"{p}/payment-intents",
            _Op(
                7,
                "list_payment_intents",
                "K",
                _list_op("payment_intents"),
                False,
                "payment_intents",
            ),
        ),
        ("POST", f"{p}/refunds", _Op(8, "create_refund", "K", _op8, True)),
        ("GET", f"{p}/refunds", _Op(0, "list_refunds", "K", _op_refunds, False, "refunds")),
        (
            "GET",
            f"{p}/disputes",
            _Op(9, "list_disputes", "K", _list_op("disputes"), False, "disputes"),
        ),
        ("GET", f"{p}/payment-links/{{id}}", _Op(10, "get_payment_link", "K", _op10)),
        ("POST", f"{p}/payment-links/{{id}}/deactivate", _Op(11, "deactivate", "K", _op11)),
        ("GET", f"{p}/customers/{{id}}/payment-methods", _Op(12, "payment_methods", "K", _op12)),
        (
            "GET",
            f"{p}/subscriptions",
            _Op(13, "list_subscriptions", "K", _list_op("subscriptions"), False, "subscriptions"),
        ),
        ("GET", f"{p}/subscriptions/{{id}}", _Op(14, "get_subscription", "K", _op14)),
        ("PATCH", f"{p}/subscriptions/{{id}}", _Op(15, "update_subscription", "K", _op15)),
        ("GET", f"{p}/invoices/{{id}}", _Op(16, "get_invoice", "K", _op16)),
        ("GET", f"{p}/invoices", _Op(0, "list_invoices", "K", _op_invoices, False, "invoices")),
        ("PATCH", f"{p}/products/{{id}}", _Op(18, "update_product", "K", _op18)),
        ("POST", f"{p}/coupons", _Op(19, "create_coupon", "K", _op19, True)),
        ("PATCH", f"{p}/coupons/{{id}}", _Op(20, "update_coupon", "K", _op20)),
        ("POST", f"{p}/tax-rates", _Op(21, "create_tax_rate", "K", _op21, True)),
        ("DELETE", f"{p}/webhook-endpoints/{{id}}", _Op(22, "delete_webhook", "K", _op22)),
    ]


def _page_body(records: list[bytes]) -> bytes:
    return b'{"data":[' + b",".join(records) + b"]}"


def _limit_for(state: SandboxState, resource: str, limit: int) -> int:
    prof = state.profile
    if prof.capped and (resource == "payments" or not prof.capped_payments_only):
        return min(limit, CAP)
    return limit


def _list_op(resource: str) -> Handler:
    async def handler(request: Request, state: SandboxState) -> Response:
        limit, skip = _list_params(request)
        view = state.lists[resource]
        with state.lock:
            recs = view.page(skip, _limit_for(state, resource, limit))
        return Response(_page_body(recs), media_type=_JSON)

    return handler


async def _op_refunds(request: Request, state: SandboxState) -> Response:
    if not state.refunds_list:
        raise ApiError(404, "not_found", "listing refunds is not offered")
    return await _list_op("refunds")(request, state)


async def _op_invoices(request: Request, state: SandboxState) -> Response:
    if not state.invoices_list:
        raise ApiError(404, "not_found", "listing invoices is not offered")
    return await _list_op("invoices")(request, state)


async def _op5(request: Request, state: SandboxState) -> Response:
    limit, skip = _list_params(request)
    status = request.query_params.get("status")
    if status is not None and status not in PAYMENT_STATUSES:
        raise ApiError(
            400, "invalid_request", f"status must be one of {', '.join(PAYMENT_STATUSES)}"
        )
    view = state.lists["payments"]
    with state.lock:
        recs = view.page(skip, _limit_for(state, "payments", limit), status)
        total = view.total(status)
    end = skip + len(recs)
    more = end < total
    tail = b'],"hasMore":' + (b"true" if more else b"false") + b',"nextOffset":'
    tail += str(end).encode() if more else b"null"
    return Response(b'{"data":[' + b",".join(recs) + tail + b"}", media_type=_JSON)


async def _op6(request: Request, state: SandboxState) -> Response:
    rec = state.payment_record(request.path_params["id"])
    if rec is None:
        raise ApiError(404, "not_found", "no such payment")
    return _json(rec)


async def _idempotent(
    request: Request,
    state: SandboxState,
    op: str,
    body: dict[str, Any],
    make: Callable[[], tuple[int, dict[str, Any]]],
) -> Response:
    key = request.headers.get(state.config.idempotency_header)
    if key is not None and not 1 <= len(key) <= 255:
        raise ApiError(400, "invalid_request", "the idempotency key must be 1 to 255 characters")
    fingerprint = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    with state.lock:
        if key is not None:
            stored = state.idem.get((op, key))
            if stored is not None:
                if stored.fingerprint != fingerprint:
                    raise ApiError(
                        409,
                        "idempotency_conflict",
                        "this idempotency key was used with a different request body",
                    )
                stored.hits += 1
                return Response(stored.body, stored.status, media_type=_JSON)
        status, obj = make()
        raw = orjson.dumps(obj)
        state.created[op] = state.created.get(op, 0) + 1
        if key is not None:
            state.idem[(op, key)] = _Stored(fingerprint, status, raw)
    return Response(raw, status, media_type=_JSON)


async def _op1(request: Request, state: SandboxState) -> Response:
    body = await _body(request)
    locale = _str(body, "locale", required=True)
    origins = _str_list(body, "allowedOrigins", required=True)
    methods = _str_list(body, "paymentMethods", required=True)

    def make() -> tuple[int, dict[str, Any]]:
        ident = state.new_id("cset")
        rec = {"id": ident, "locale": locale, "allowedOrigins": origins, "paymentMethods": methods}
        state.settings[ident] = rec
        return 201, rec

    return await _idempotent(request, state, "checkout_settings", body, make)


async def _op2(request: Request, state: SandboxState) -> Response:
    body = await _body(request)
    rec = state.settings.get(request.path_params["id"])
    if rec is None:
        raise ApiError(404, "not_found", "no such checkout setting")
    locale = _str(body, "locale", required=False)
    origins = _str_list(body, "allowedOrigins", required=False)
    methods = _str_list(body, "paymentMethods", required=False)
    with state.lock:
        if locale is not None:
            rec["locale"] = locale
        if origins is not None:
            rec["allowedOrigins"] = origins
        if methods is not None:
            rec["paymentMethods"] = methods
    return _json(rec)


def _session(state: SandboxState, request: Request) -> dict[str, Any]:
    rec = state.sessions.get(request.path_params["id"])
    if rec is None:
        raise ApiError(404, "not_found", "no such checkout session")
    return rec


async def _op3(request: Request, state: SandboxState) -> Response:
    rec = _session(state, request)
    body = await _body(request)
    _str(body, "clientToken", required=True)
    if rec["status"] != "pending":
        raise ApiError(409, "invalid_state", f"the checkout session is {rec['status']}")
    return _json({"redirectUrl": rec["checkoutUrl"]})


async def _op4(request: Request, state: SandboxState) -> Response:
    rec = _session(state, request)
    with state.lock:
        if rec["status"] != "pending":
            raise ApiError(
                409, "invalid_state", f"only a pending session expires; it is {rec['status']}"
            )
        rec["status"] = "expired"
    return _json(rec)


def _refundable(state: SandboxState, pid: str) -> tuple[dict[str, Any], int]:
    """The payment and the amount left to refund (counted refunds, same currency)."""
    ds = state.data
    i = ds.index_of("pay", pid, ds.n)
    if i is not None and i not in state.lists["payments"].deleted_set:
        plan = ds.payment_plan(i)
        pay = {"status": plan.status, "amountMinor": plan.amount, "currency": plan.currency}
        total = sum(
            a
            for st, a, cur, other in plan.refunds
            if other is None
            and cur == plan.currency
            and isinstance(a, int)
            and st.lower() not in DEFAULT_FAILED_STATUSES
        )
    else:
        extra = state.extra_payments.get(pid)
        if extra is None:
            raise ApiError(404, "not_found", "no such payment")
        pay, total = extra, 0
    total += sum(a for a, cur in state.created_refunds.get(pid, []) if cur == pay["currency"])
    amount = pay["amountMinor"]
    if pay["status"] not in ("confirmed", "partially_refunded", "refunded"):
        raise ApiError(409, "invalid_state", f"a {pay['status']} payment cannot be refunded")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ApiError(409, "invalid_state", "this payment's amount cannot be refunded")
    return pay, amount - total


async def _op8(request: Request, state: SandboxState) -> Response:
    body = await _body(request)
    pid = _str(body, "paymentId", required=True)
    assert pid is not None
    money = body.get("amount")
    want: int | None = None
    want_cur: str | None = None
    if money is not None:
        if not isinstance(money, dict):
            raise ApiError(400, "invalid_request", "amount must be a Money object")
        a = money.get("amountMinor")
        if isinstance(a, bool) or not isinstance(a, int) or a < 1:
            raise ApiError(400, "invalid_request", "amount.amountMinor must be an integer >= 1")
        c = money.get("currency")
        if c is not None and not isinstance(c, str):
            raise ApiError(400, "invalid_request", "amount.currency must be a string")
        want, want_cur = a, c
    reason = _str(body, "reason", required=False)

    def make() -> tuple[int, dict[str, Any]]:
        pay, left = _refundable(state, pid)
        if want_cur is not None and want_cur != pay["currency"]:
            raise ApiError(422, "currency_mismatch", "a refund is in the payment's currency")
        amount = left if want is None else want
        if left <= 0:
            raise ApiError(422, "amount_exceeds_refundable", "nothing is left to refund")
        if amount > left:
            raise ApiError(
                422,
                "amount_exceeds_refundable",
                f"at most {left} (minor units) is left to refund",
            )
        ident = state.new_id("re")
        rec = {
            "id": ident,
            "paymentId": pid,
            "amount": {"amountMinor": amount, "currency": pay["currency"]},
            "status": "pending",
            "reason": reason or "requested_by_customer",
            "createdAt": state.now_iso(),
        }
        state.created_refunds.setdefault(pid, []).append((amount, pay["currency"]))
        state.lists["refunds"].insert(orjson.dumps(rec), ident, "pending")
        return 201, rec

    return await _idempotent(request, state, "refunds", body, make)


async def _op10(request: Request, state: SandboxState) -> Response:
    rec = state.links.get(request.path_params["id"])
    if rec is None:
        raise ApiError(404, "not_found", "no such payment link")
    return _json(rec)


async def _op11(request: Request, state: SandboxState) -> Response:
    rec = state.links.get(request.path_params["id"])
    if rec is None:
        raise ApiError(404, "not_found", "no such payment link")
    with state.lock:
        rec["active"] = False
    return _json(rec)


async def _op12(request: Request, state: SandboxState) -> Response:
    limit, skip = _list_params(request)
    ds = state.data
    c = ds.index_of("cus", request.path_params["id"], ds.customers)
    if c is None:
        raise ApiError(404, "not_found", "no such customer")
    recs = ds.payment_methods(c)[skip : skip + _limit_for(state, "payment_methods", limit)]
    return _json({"data": recs})


def _sub_index(state: SandboxState, request: Request) -> int:
    ds = state.data
    s = ds.index_of("sub", request.path_params["id"], ds.sizes.subscriptions)
    if s is None:
        raise ApiError(404, "not_found", "no such subscription")
    return s


async def _op14(request: Request, state: SandboxState) -> Response:
    s = _sub_index(state, request)
    rec = state.sub_edits.get(s) or state.data.subscription(s)
    return _json(rec)


async def _op15(request: Request, state: SandboxState) -> Response:
    s = _sub_index(state, request)
    body = await _body(request)
    customer = _str(body, "customerId", required=False)
    price = _str(body, "priceId", required=False)
    with state.lock:
        rec = dict(state.sub_edits.get(s) or state.data.subscription(s))
        if customer is not None:
            rec["customerId"] = customer
        if price is not None:
            rec["priceId"] = price
        state.sub_edits[s] = rec
        state.lists["subscriptions"].edit(s, orjson.dumps(rec))
    return _json(rec)


async def _op16(request: Request, state: SandboxState) -> Response:
    ds = state.data
    v = ds.index_of("in", request.path_params["id"], ds.sizes.invoices)
    if v is None:
        raise ApiError(404, "not_found", "no such invoice")
    return _json(ds.invoice(v))


async def _rename(
    request: Request, state: SandboxState, store: dict[str, dict[str, Any]], what: str
) -> Response:
    """PATCH {name} of a stored object (products, op 18; coupons, op 20)."""
    rec = store.get(request.path_params["id"])
    if rec is None:
        raise ApiError(404, "not_found", f"no such {what}")
    body = await _body(request)
    name = _str(body, "name", required=True)
    with state.lock:
        rec["name"] = name
    return _json(rec)


async def _op18(request: Request, state: SandboxState) -> Response:
    return await _rename(request, state, state.products, "product")


async def _op19(request: Request, state: SandboxState) -> Response:
    body = await _body(request)
    name = _str(body, "name", required=True)
    pct = _number(body, "percentOff", required=False, lo=0, hi=100)
    duration = _str(body, "duration", required=False)

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

    return await _idempotent(request, state, "coupons", body, make)


async def _op20(request: Request, state: SandboxState) -> Response:
    return await _rename(request, state, state.coupons, "coupon")


async def _op21(request: Request, state: SandboxState) -> Response:
    body = await _body(request)
    name = _str(body, "displayName", required=True)
    pct = _number(body, "percentage", required=True, lo=0, hi=100)
    inclusive = body.get("inclusive", False)
    if not isinstance(inclusive, bool):
        raise ApiError(400, "invalid_request", "inclusive must be a boolean")

    def make() -> tuple[int, dict[str, Any]]:
        ident = state.new_id("txr")
        rec = {"id": ident, "displayName": name, "percentage": pct, "inclusive": inclusive}
        state.tax_rates[ident] = rec
        return 201, rec

    return await _idempotent(request, state, "tax_rates", body, make)


async def _op22(request: Request, state: SandboxState) -> Response:
    with state.lock:
        if state.webhooks.pop(request.path_params["id"], None) is None:
            raise ApiError(404, "not_found", "no such webhook endpoint")
    return Response(status_code=204)


# ---------------------------------------------------------------------------- openapi
@functools.cache
def openapi_text() -> str:
    """The sandbox's OpenAPI document (YAML text, kept next to this module)."""
    return resources.files("recon.sandbox").joinpath("openapi.yaml").read_text(encoding="utf-8")


def openapi_dict() -> dict[str, Any]:
    """The OpenAPI document as a (fresh) dict."""
    return copy.deepcopy(_openapi_dict())


@functools.cache
def _openapi_dict() -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded = yaml.load(openapi_text(), Loader=loader)  # noqa: S506 - a safe loader
    assert isinstance(loaded, dict)
    return loaded
