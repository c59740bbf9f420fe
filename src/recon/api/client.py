"""`ApiClient`: the 21 operations of the Merchant Payments API, retried, logged, paged.

The send path is split one job per method: `_call` runs the retry loop (decisions come
from the sans-IO `RetryPolicy`), `_attempt` sends once and classifies what came back, and
`_error_for` / `ApiError.from_response` turn a failed attempt into an exception. Every
attempt is reported to `on_attempt` as a `CallRecord`. Secrets live only in the per-request
headers: never in the client's default headers, a log line, an exception or a record.
"""

from __future__ import annotations

import random as _random
import ssl
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx
import orjson
from pydantic import ValidationError

from recon.api.config import (
    ClientConfig,
    check_id,
    check_page_size,
    check_payment_status,
    check_skip,
)
from recon.api.models import (
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
from recon.api.pagination import RESOURCES, FetchedPage, IdScan, Scan
from recon.api.ratelimit import SharedRateLimiter
from recon.api.retry import (
    Decision,
    Outcome,
    RetryPolicy,
    Verdict,
    is_retryable_status,
    parse_retry_after,
)
from recon.errors import (
    ApiError,
    ConfigError,
    ReconError,
    RetryAfterTooLongError,
    TransportError,
    redact_url,
)

__all__ = ["ApiClient"]

Auth = Literal["key", "bearer"]
Expect = Literal["object", "list", "any", "none"]
M = TypeVar("M", bound=ApiModel)

_USER_AGENT = "recon/0.1 (+https://github.com/recon)"


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _Op:
    """One logical call: what to send, which credential, what shape the answer must have."""

    resource: str
    method: str
    path: str
    auth: Auth = "key"
    expect: Expect = "object"
    params: Mapping[str, str | int] = field(default_factory=dict)
    body: Any = None
    idempotency_key: str | None = None


@dataclass(slots=True)
class _Answer:
    body: Any
    request_id: str | None
    status: int


@dataclass(slots=True)
class _Attempt:
    """What one attempt came to (internal)."""

    outcome: Outcome
    status: int | None = None
    body: Any = None
    request_id: str | None = None
    error_code: str | None = None
    message: str | None = None
    retry_after_s: float | None = None
    error: ReconError | None = None


class ApiClient:
    """Sync client for the Merchant Payments API; thread-safe; use it as a context manager."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        on_attempt: Callable[[CallRecord], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
        wall_clock: Callable[[], datetime] = _utcnow,
        limiter: SharedRateLimiter | None = None,
    ) -> None:
        self.config = config
        self._on_attempt = on_attempt
        self._clock = clock
        self._sleep = sleep
        self._random = random
        self._wall_clock = wall_clock
        self._secrets = config.secret_values()
        self.policy = RetryPolicy(
            max_attempts=config.max_attempts,
            call_budget_s=config.call_budget_s,
            retry_after_cap_s=config.retry_after_cap_s,
            backoff_initial_s=config.backoff_initial_s,
            backoff_max_s=config.backoff_max_s,
        )
        self.limiter = limiter or SharedRateLimiter(clock=clock, sleep=sleep)
        # TLS verification is always on: no setting turns it off.
        self._http = httpx.Client(
            transport=transport,
            timeout=config.timeout_s,
            verify=True,
            follow_redirects=False,
            headers={"Accept": "application/json", "User-Agent": _USER_AGENT},
        )

    def __repr__(self) -> str:
        return f"ApiClient(api_root={self.config.api_root!r})"

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # ------------------------------------------------------------------ the send path

    def _headers(self, op: _Op) -> dict[str, str]:
        headers: dict[str, str] = {}
        if op.auth == "bearer":
            token = self.config.bearer_token
            if token is None or not token.get_secret_value():
                raise ConfigError(
                    "RECON_BEARER_TOKEN",
                    f"is not set; {op.method} {op.path} authenticates with a bearer token",
                )
            headers["Authorization"] = f"Bearer {token.get_secret_value()}"
        else:
            key = self.config.api_key
            if key is None or not key.get_secret_value():
                raise ConfigError("RECON_API_KEY", "is not set")
            headers["x-api-key"] = key.get_secret_value()
        if op.idempotency_key is not None:
            headers[self.config.idempotency_header] = op.idempotency_key
        if op.body is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def _call(self, op: _Op, request_ids: list[str] | None = None) -> _Answer:
        """Run `op` with retries; return its answer or raise the last attempt's error.

        The request id of every attempt that got one is appended to `request_ids`.
        """
        headers = self._headers(op)  # built once: the idempotency key is the same every retry
        content = orjson.dumps(op.body) if op.body is not None else None
        url = self.config.api_root + op.path
        call_id = uuid.uuid4().hex
        start = self._clock()
        attempt = 0
        while True:
            attempt += 1
            self.limiter.wait()
            remaining = self.config.call_budget_s - (self._clock() - start)
            timeout = max(0.001, min(self.config.timeout_s, remaining))
            request = self._http.build_request(
                op.method,
                url,
                params=dict(op.params) if op.params else None,
                content=content,
                headers=headers,
                timeout=timeout,
            )
            t0 = self._clock()
            result = self._attempt(request, op, deadline=t0 + timeout)
            latency_ms = (self._clock() - t0) * 1000.0
            decision = self.policy.decide(
                result.outcome,
                attempt=attempt,
                elapsed_s=self._clock() - start,
                status=result.status,
                retry_after_s=result.retry_after_s,
                rand=self._random(),
            )
            self._record(call_id, op, request, attempt, result, decision, latency_ms)
            if request_ids is not None and result.request_id:
                request_ids.append(result.request_id)
            if decision.verdict is Verdict.DONE:
                return _Answer(result.body, result.request_id, result.status or 0)
            if decision.verdict is Verdict.RETRY:
                if decision.shared:
                    self.limiter.pause(decision.wait_s)
                else:
                    self._sleep(decision.wait_s)
                continue
            if decision.verdict is Verdict.WAIT_TOO_LONG:
                raise RetryAfterTooLongError(
                    requested_s=decision.requested_s or 0.0,
                    cap_s=self.policy.retry_after_cap_s,
                    request_id=result.request_id,
                    what=f"{op.method} {request.url.path}",
                )
            error = result.error
            assert error is not None
            if isinstance(error, ApiError):
                error.attempts = attempt
            raise error

    def _attempt(
        self, request: httpx.Request, op: _Op, *, deadline: float | None = None
    ) -> _Attempt:
        """Send `request` once and classify the result; never raises for HTTP trouble.

        The body is read chunk by chunk against `deadline` (the attempt's time on the
        client's clock): httpx's timeouts are per socket read, so an answer trickling in a
        byte at a time would otherwise never end. A connection that breaks after the
        headers arrived keeps the request id they carried.
        """
        try:
            streamed = self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            return self._transport_failure(exc, request)
        request_id = streamed.headers.get("x-request-id") or streamed.headers.get("request-id")
        try:
            chunks: list[bytes] = []
            for chunk in streamed.iter_bytes():
                chunks.append(chunk)
                if deadline is not None and self._clock() > deadline:
                    raise httpx.ReadTimeout(
                        "the answer did not arrive in full within the attempt's time",
                        request=request,
                    )
        except httpx.HTTPError as exc:
            return self._transport_failure(exc, request, request_id=request_id)
        finally:
            streamed.close()
        # The decoded body as a plain response (headers kept, minus the transfer ones).
        response = httpx.Response(
            streamed.status_code,
            headers=[
                (k, v)
                for k, v in streamed.headers.multi_items()
                if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
            ],
            content=b"".join(chunks),
            request=request,
        )
        status = response.status_code
        if 200 <= status < 300:
            return self._classify_success(response, op, request_id)
        retry_after = parse_retry_after(response.headers.get("retry-after"), self._wall_clock())
        error = ApiError.from_response(
            response,
            retryable=is_retryable_status(status),
            scheme="bearer" if op.auth == "bearer" else "api_key",
            secrets=self._secrets,
        )
        return _Attempt(
            Outcome.STATUS,
            status=status,
            request_id=error.request_id,
            error_code=error.code,
            message=error.message,
            retry_after_s=retry_after,
            error=error,
        )

    def _classify_success(
        self, response: httpx.Response, op: _Op, request_id: str | None
    ) -> _Attempt:
        status = response.status_code
        if op.expect == "none":
            return _Attempt(Outcome.OK, status=status, request_id=request_id)
        content = response.content
        if op.expect == "any" and not content.strip():
            return _Attempt(Outcome.OK, status=status, body=None, request_id=request_id)
        try:
            body = orjson.loads(content)
        except orjson.JSONDecodeError:
            problem = "empty body" if not content.strip() else "body is not JSON"
            return self._bad_body(response, problem, request_id)
        if op.expect == "object" and not isinstance(body, dict):
            return self._bad_body(response, "body is not a JSON object", request_id)
        if op.expect == "list":
            if not isinstance(body, dict) or "data" not in body:
                return self._bad_body(response, "list body has no `data` array", request_id)
            if not isinstance(body["data"], list):
                return self._bad_body(response, "list body's `data` is not an array", request_id)
        return _Attempt(Outcome.OK, status=status, body=body, request_id=request_id)

    def _bad_body(self, response: httpx.Response, problem: str, request_id: str | None) -> _Attempt:
        error = ApiError.from_response(
            response,
            retryable=True,
            code="invalid_body",
            message=f"unusable {response.status_code} answer: {problem}",
            secrets=self._secrets,
        )
        return _Attempt(
            Outcome.BAD_BODY,
            status=response.status_code,
            request_id=error.request_id or request_id,
            error_code="invalid_body",
            message=error.message,
            error=error,
        )

    def _transport_failure(
        self, exc: httpx.HTTPError, request: httpx.Request, *, request_id: str | None = None
    ) -> _Attempt:
        if _is_tls_failure(exc):
            kind, outcome = "tls", Outcome.TLS
        elif isinstance(exc, httpx.TimeoutException):
            kind, outcome = "timeout", Outcome.TRANSPORT
        elif isinstance(exc, httpx.ConnectError):
            kind, outcome = "connect_error", Outcome.TRANSPORT
        elif isinstance(exc, httpx.RemoteProtocolError):
            kind, outcome = "truncated_or_protocol_error", Outcome.TRANSPORT
        elif isinstance(exc, httpx.TransportError):
            kind, outcome = "read_error", Outcome.TRANSPORT
        else:  # e.g. a malformed URL: not a transport failure, not retried
            kind, outcome = "request_error", Outcome.FATAL
        detail = _scrub(f"{type(exc).__name__}: {exc}"[:300], self._secrets)
        error = TransportError(
            kind=kind,
            detail=detail,
            method=request.method,
            url=str(request.url),
            retryable=outcome is Outcome.TRANSPORT,
        )
        return _Attempt(
            outcome, error_code=kind, message=detail, error=error, request_id=request_id
        )

    def _record(
        self,
        call_id: str,
        op: _Op,
        request: httpx.Request,
        attempt: int,
        result: _Attempt,
        decision: Decision,
        latency_ms: float,
    ) -> None:
        if self._on_attempt is None:
            return
        outcome: Literal["ok", "retry", "failed"] = (
            "ok"
            if decision.verdict is Verdict.DONE
            else "retry"
            if decision.verdict is Verdict.RETRY
            else "failed"
        )
        query = request.url.query.decode("ascii", "replace")
        if query:
            query = redact_url("http://h/?" + query).split("?", 1)[1]
        message = result.message
        if decision.verdict is Verdict.WAIT_TOO_LONG:
            message = f"{message} (Retry-After {decision.requested_s:g}s above the cap)"
        self._on_attempt(
            CallRecord(
                call_id=call_id,
                resource=op.resource,
                method=op.method,
                path=request.url.path,
                query=query,
                attempt=attempt,
                http_status=result.status,
                error=result.error_code,
                message=message,
                request_id=result.request_id,
                latency_ms=round(latency_ms, 3),
                outcome=outcome,
                at=self._wall_clock(),
            )
        )

    # ------------------------------------------------------------------ helpers

    def _model(self, cls: type[M], answer: _Answer, op: _Op) -> M:
        try:
            return cls.from_json(answer.body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise ApiError(
                status=answer.status,
                code="unexpected_shape",
                message=f"{cls.__name__}: {where}: {first['msg']}",
                request_id=answer.request_id,
                method=op.method,
                url=self.config.api_root + op.path,
                retryable=False,
            ) from None

    def _list_params(self, max_records: int | None, skip: int) -> dict[str, str | int]:
        size = self.config.page_size if max_records is None else max_records
        check_page_size(size, "max_records")
        check_skip(skip, "skip")
        return {self.config.page_size_param: size, self.config.skip_param: skip}

    def _list(
        self,
        cls: type[M],
        resource: str,
        path: str,
        max_records: int | None,
        skip: int,
    ) -> ListPage[M]:
        op = _Op(resource, "GET", path, expect="list", params=self._list_params(max_records, skip))
        answer = self._call(op)
        body = answer.body
        items = [
            self._model(cls, _Answer(item, answer.request_id, answer.status), op)
            for item in body["data"]
        ]
        extra = {k: v for k, v in body.items() if k not in ("data", "request_id")}
        return ListPage[cls](data=items, request_id=answer.request_id, **extra)  # type: ignore[valid-type]

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
        op = _Op(
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
        return self._model(CheckoutSetting, self._call(op), op)

    def update_checkout_settings(
        self,
        setting_id: str,
        *,
        locale: str,
        allowed_origins: Sequence[str],
        payment_methods: Sequence[str],
    ) -> CheckoutSetting:
        """Op 2: PATCH /checkout-settings/{id}."""
        op = _Op(
            "checkout_settings",
            "PATCH",
            f"/checkout-settings/{_seg(setting_id, 'setting_id')}",
            body={
                "locale": locale,
                "allowedOrigins": list(allowed_origins),
                "paymentMethods": list(payment_methods),
            },
        )
        return self._model(CheckoutSetting, self._call(op), op)

    def redirect_checkout_session(self, session_id: str, *, client_token: str) -> dict[str, Any]:
        """Op 3: POST /checkout-sessions/{id}/redirect (Bearer). The answer's shape is not
        documented: its JSON object is returned as is ({} for an empty body)."""
        if not client_token:
            raise ConfigError("client_token", "must be a non-empty string")
        op = _Op(
            "checkout_sessions",
            "POST",
            f"/checkout-sessions/{_seg(session_id, 'session_id')}/redirect",
            auth="bearer",
            expect="any",
            body={"clientToken": client_token},
        )
        body = self._call(op).body
        return body if isinstance(body, dict) else {} if body is None else {"value": body}

    def expire_checkout_session(self, session_id: str) -> CheckoutSession:
        """Op 4: POST /checkout-sessions/{id}/expire (no body)."""
        op = _Op(
            "checkout_sessions",
            "POST",
            f"/checkout-sessions/{_seg(session_id, 'session_id')}/expire",
        )
        return self._model(CheckoutSession, self._call(op), op)

    def list_payments(
        self, *, max_records: int | None = None, skip: int = 0, status: str | None = None
    ) -> PaymentList:
        """Op 5: GET /payments, one page (`data`, `hasMore`, `nextOffset`)."""
        params = self._list_params(max_records, skip)
        if check_payment_status(status) is not None:
            params[self.config.status_param] = str(status)
        op = _Op("payments", "GET", "/payments", expect="list", params=params)
        answer = self._call(op)
        try:
            page = PaymentList.model_validate(answer.body)
        except ValidationError as exc:
            raise ApiError(
                status=answer.status,
                code="unexpected_shape",
                message=f"PaymentList: {exc.errors()[0]['msg']}",
                request_id=answer.request_id,
                method="GET",
                url=self.config.api_root + "/payments",
                retryable=False,
            ) from None
        items = [
            self._model(Payment, _Answer(i, answer.request_id, 200), op)
            for i in answer.body["data"]
        ]
        return page.model_copy(update={"data": items, "request_id": answer.request_id})

    def get_payment(self, payment_id: str) -> Payment:
        """Op 6: GET /payments/{id} (Bearer token, never the API key)."""
        op = _Op("payments", "GET", f"/payments/{_seg(payment_id, 'payment_id')}", auth="bearer")
        return self._model(Payment, self._call(op), op)

    def list_payment_intents(
        self, *, max_records: int | None = None, skip: int = 0
    ) -> ListPage[PaymentIntent]:
        """Op 7: GET /payment-intents, one page."""
        return self._list(PaymentIntent, "payment_intents", "/payment-intents", max_records, skip)

    def create_refund(self, payment_id: str, *, idempotency_key: str | None = None) -> Refund:
        """Op 8: POST /refunds (one idempotency key for every retry)."""
        op = _Op(
            "refunds",
            "POST",
            "/refunds",
            body={"paymentId": check_id(payment_id, "payment_id")},
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._model(Refund, self._call(op), op)

    def list_disputes(self, *, max_records: int | None = None, skip: int = 0) -> ListPage[Dispute]:
        """Op 9: GET /disputes, one page."""
        return self._list(Dispute, "disputes", "/disputes", max_records, skip)

    def get_payment_link(self, link_id: str) -> PaymentLink:
        """Op 10: GET /payment-links/{id}."""
        op = _Op("payment_links", "GET", f"/payment-links/{_seg(link_id, 'link_id')}")
        return self._model(PaymentLink, self._call(op), op)

    def deactivate_payment_link(self, link_id: str) -> PaymentLink:
        """Op 11: POST /payment-links/{id}/deactivate (no body)."""
        op = _Op("payment_links", "POST", f"/payment-links/{_seg(link_id, 'link_id')}/deactivate")
        return self._model(PaymentLink, self._call(op), op)

    def list_payment_methods(
        self, customer_id: str, *, max_records: int | None = None, skip: int = 0
    ) -> ListPage[PaymentMethod]:
        """Op 12: GET /customers/{id}/payment-methods, one page."""
        path = f"/customers/{_seg(customer_id, 'customer_id')}/payment-methods"
        return self._list(PaymentMethod, "payment_methods", path, max_records, skip)

    def list_subscriptions(
        self, *, max_records: int | None = None, skip: int = 0
    ) -> ListPage[Subscription]:
        """Op 13: GET /subscriptions, one page."""
        return self._list(Subscription, "subscriptions", "/subscriptions", max_records, skip)

    def get_subscription(self, subscription_id: str) -> Subscription:
        """Op 14: GET /subscriptions/{id}."""
        op = _Op(
            "subscriptions", "GET", f"/subscriptions/{_seg(subscription_id, 'subscription_id')}"
        )
        return self._model(Subscription, self._call(op), op)

    def update_subscription(
        self, subscription_id: str, *, customer_id: str, price_id: str
    ) -> Subscription:
        """Op 15: PATCH /subscriptions/{id}."""
        op = _Op(
            "subscriptions",
            "PATCH",
            f"/subscriptions/{_seg(subscription_id, 'subscription_id')}",
            body={
                "customerId": check_id(customer_id, "customer_id"),
                "priceId": check_id(price_id, "price_id"),
            },
        )
        return self._model(Subscription, self._call(op), op)

    def get_invoice(self, invoice_id: str) -> Invoice:
        """Op 16: GET /invoices/{id}."""
        op = _Op("invoices", "GET", f"/invoices/{_seg(invoice_id, 'invoice_id')}")
        return self._model(Invoice, self._call(op), op)

    def update_product(self, product_id: str, *, name: str) -> Product:
        """Op 18: PATCH /products/{id}."""
        op = _Op(
            "products",
            "PATCH",
            f"/products/{_seg(product_id, 'product_id')}",
            body={"name": name},
        )
        return self._model(Product, self._call(op), op)

    def create_coupon(self, *, name: str, idempotency_key: str | None = None) -> Coupon:
        """Op 19: POST /coupons (one idempotency key for every retry)."""
        op = _Op(
            "coupons",
            "POST",
            "/coupons",
            body={"name": name},
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._model(Coupon, self._call(op), op)

    def update_coupon(self, coupon_id: str, *, name: str) -> Coupon:
        """Op 20: PATCH /coupons/{id}."""
        op = _Op(
            "coupons", "PATCH", f"/coupons/{_seg(coupon_id, 'coupon_id')}", body={"name": name}
        )
        return self._model(Coupon, self._call(op), op)

    def create_tax_rate(
        self, *, display_name: str, percentage: float, idempotency_key: str | None = None
    ) -> TaxRate:
        """Op 21: POST /tax-rates (one idempotency key for every retry)."""
        op = _Op(
            "tax_rates",
            "POST",
            "/tax-rates",
            body={"displayName": display_name, "percentage": percentage},
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
        return self._model(TaxRate, self._call(op), op)

    def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        """Op 22: DELETE /webhook-endpoints/{id}; the success body is not documented."""
        op = _Op(
            "webhook_endpoints",
            "DELETE",
            f"/webhook-endpoints/{_seg(endpoint_id, 'endpoint_id')}",
            expect="none",
        )
        self._call(op)

    # Assumed lists (DESIGN.md §1): refunds and invoices, at configurable paths.

    def list_refunds(self, *, max_records: int | None = None, skip: int = 0) -> ListPage[Refund]:
        """Assumed: GET RECON_REFUNDS_PATH (default /refunds), one page."""
        path = self._assumed_path("refunds")
        return self._list(Refund, "refunds", path, max_records, skip)

    def list_invoices(self, *, max_records: int | None = None, skip: int = 0) -> ListPage[Invoice]:
        """Assumed: GET RECON_INVOICES_PATH (default /invoices), one page."""
        path = self._assumed_path("invoices")
        return self._list(Invoice, "invoices", path, max_records, skip)

    def _assumed_path(self, resource: str) -> str:
        path = self.config.refunds_path if resource == "refunds" else self.config.invoices_path
        if not path:
            raise ConfigError(
                f"RECON_{resource.upper()}_PATH", f"is empty: no {resource} list is offered"
            )
        return path

    # ------------------------------------------------------------------ scanning

    def list_path(self, resource: str, *, customer_id: str | None = None) -> str | None:
        """The list path of `resource`; None when the list is switched off (empty path)."""
        if resource not in RESOURCES:
            known = ", ".join(sorted(RESOURCES))
            raise ConfigError("resource", f"unknown resource {resource!r}; expected one of {known}")
        if resource == "payment_methods":
            if customer_id is None:
                raise ConfigError("customer_id", "is required to list payment methods")
            return f"/customers/{_seg(customer_id, 'customer_id')}/payment-methods"
        if customer_id is not None:
            raise ConfigError("customer_id", f"applies only to payment_methods, not {resource}")
        if resource in ("refunds", "invoices"):
            return self.config.refunds_path if resource == "refunds" else self.config.invoices_path
        return RESOURCES[resource]

    def scan(
        self,
        resource: str,
        *,
        start_offset: int = 0,
        seen_ids: Iterable[str] = frozenset(),
        status_filter: str | None = None,
        customer_id: str | None = None,
    ) -> Scan:
        """Page through `resource` losing nothing; iterate the `Scan`, then read `.report`."""
        check_skip(start_offset, "start_offset")
        path = self.list_path(resource, customer_id=customer_id)
        if status_filter is not None and resource != "payments":
            raise ConfigError("status_filter", "applies only to payments")
        check_payment_status(status_filter, "status_filter")
        extra: dict[str, str | int] = {}
        if status_filter is not None:
            extra[self.config.status_param] = status_filter
        page_size = self.config.page_size

        def fetch(offset: int, request_ids: list[str]) -> FetchedPage:
            assert path is not None
            params: dict[str, str | int] = {
                self.config.page_size_param: page_size,
                self.config.skip_param: offset,
                **extra,
            }
            op = _Op(resource, "GET", path, expect="list", params=params)
            answer = self._call(op, request_ids)
            return FetchedPage(answer.body, answer.request_id)

        unavailable = None
        if path is None or path == "":
            unavailable = f"RECON_{resource.upper()}_PATH is empty: no {resource} list offered"
        return Scan(
            resource,
            fetch,
            page_size=page_size,
            follow_next_offset=resource == "payments",
            start_offset=start_offset,
            seen_ids=seen_ids,
            customer_id=customer_id,
            unavailable_reason=unavailable,
            max_consecutive_failures=self.config.max_consecutive_failed_pages,
        )

    def scan_by_ids(
        self,
        resource: Literal["invoices", "subscriptions", "payments"],
        ids: Iterable[str],
        *,
        seen_ids: Iterable[str] = frozenset(),
        batch_size: int = 200,
    ) -> IdScan:
        """Fetch `resource` records one by one (ops 16, 14, 6) as pages of raw dicts.

        DESIGN.md §1: when the invoices list is not offered, invoices come one by one from
        `GET /invoices/{id}` for ids found elsewhere. Ids in `seen_ids` are skipped.
        """
        templates: dict[str, tuple[str, Auth]] = {
            "invoices": ("/invoices/{}", "key"),
            "subscriptions": ("/subscriptions/{}", "key"),
            "payments": ("/payments/{}", "bearer"),
        }
        if resource not in templates:
            raise ConfigError("resource", f"cannot fetch {resource!r} by id")
        template, auth = templates[resource]
        checked = [check_id(i, "ids") for i in ids]

        def fetch_one(ident: str, request_ids: list[str]) -> FetchedPage:
            op = _Op(resource, "GET", template.format(quote(ident, safe="")), auth=auth)
            answer = self._call(op, request_ids)
            return FetchedPage(answer.body, answer.request_id)

        return IdScan(resource, checked, fetch_one, batch_size=batch_size, seen_ids=seen_ids)

    def scan_payment_methods(self, customer_ids: Iterable[str]) -> list[Scan]:
        """One `Scan` of payment methods per customer id (each deduplicated on its own)."""
        ids = list(dict.fromkeys(customer_ids))
        for cid in ids:
            check_id(cid, "customer_ids")
        return [self.scan("payment_methods", customer_id=cid) for cid in ids]


def _seg(value: str, name: str) -> str:
    """`value` checked and quoted as one path segment."""
    return quote(check_id(value, name), safe="")


def _scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _is_tls_failure(exc: BaseException) -> bool:
    """True if `exc` (or what caused it) is an SSL/certificate failure."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError | ssl.CertificateError):
            return True
        text = str(current)
        if "CERTIFICATE_VERIFY_FAILED" in text or "[SSL" in text:
            return True
        current = current.__cause__ or current.__context__
    return False
