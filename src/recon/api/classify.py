"""What one attempt came to: a usable answer, an unusable body, or no answer at all.

The sans-IO half of the send path (`recon.api.sender`): classifying an httpx response or
exception into an `Attempt` that `RetryPolicy` decides on. Secrets are masked from every
message built here.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import orjson

from recon.api.retry import Outcome
from recon.errors import ApiError, ReconError, TransportError
from recon.paging.records import loads_json, read_list

__all__ = [
    "Attempt",
    "Expect",
    "bad_body",
    "classify_success",
    "is_tls_failure",
    "scrub",
    "transport_failure",
]

Expect = Literal["object", "list", "any", "none"]


@dataclass(slots=True)
class Attempt:
    """What one attempt came to."""

    outcome: Outcome
    status: int | None = None
    body: Any = None
    request_id: str | None = None
    error_code: str | None = None
    message: str | None = None
    retry_after_s: float | None = None
    error: ReconError | None = None
    content: bytes = b""  # the body as received (a successful JSON answer's)
    # When the answer's headers came (on the sender's clock; None: no answer came)
    answered_at: float | None = None


def classify_success(
    status: int,
    content: bytes,
    expect: Expect,
    request_id: str | None,
    secrets: Sequence[str],
    response: Callable[[], httpx.Response],
) -> Attempt:
    """A 2xx answer (`status`, its body's bytes): its JSON body if it has the shape
    `expect`, else an unusable body. `response` makes the whole answer, for an error only."""
    if expect == "none":
        return Attempt(Outcome.OK, status=status, request_id=request_id)
    if expect == "any" and not content.strip():
        return Attempt(Outcome.OK, status=status, body=None, request_id=request_id)
    if expect == "list":  # the usual answer: its records are read without being built
        body = read_list(content)
        if body is not None:
            return Attempt(
                Outcome.OK, status=status, body=body, request_id=request_id, content=content
            )
    try:
        body = loads_json(content)
    except (orjson.JSONDecodeError, ValueError, RecursionError):
        problem = "empty body" if not content.strip() else "body is not JSON"
        return bad_body(response(), problem, request_id, secrets)
    if expect == "object" and not isinstance(body, dict):
        return bad_body(response(), "body is not a JSON object", request_id, secrets)
    if expect == "list":
        if not isinstance(body, dict) or "data" not in body:
            return bad_body(response(), "list body has no `data` array", request_id, secrets)
        if not isinstance(body["data"], list):
            return bad_body(response(), "list body's `data` is not an array", request_id, secrets)
    return Attempt(Outcome.OK, status=status, body=body, request_id=request_id, content=content)


def bad_body(
    response: httpx.Response, problem: str, request_id: str | None, secrets: Sequence[str]
) -> Attempt:
    error = ApiError.from_response(
        response,
        retryable=True,
        code="invalid_body",
        message=f"unusable {response.status_code} answer: {problem}",
        secrets=secrets,
    )
    return Attempt(
        Outcome.BAD_BODY,
        status=response.status_code,
        request_id=error.request_id or request_id,
        error_code="invalid_body",
        message=error.message,
        error=error,
    )


def transport_failure(
    exc: httpx.HTTPError,
    request: httpx.Request,
    secrets: Sequence[str],
    *,
    request_id: str | None = None,
) -> Attempt:
    """A request that got no usable answer, classified (TLS, timeout, connect, …)."""
    if is_tls_failure(exc):
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
    detail = scrub(f"{type(exc).__name__}: {exc}"[:300], secrets)
    error = TransportError(
        kind=kind,
        detail=detail,
        method=request.method,
        url=str(request.url),
        retryable=outcome is Outcome.TRANSPORT,
    )
    return Attempt(outcome, error_code=kind, message=detail, error=error, request_id=request_id)


def scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def is_tls_failure(exc: BaseException) -> bool:
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
