"""An attempt once its answer is in: the error a refused answer makes (a failed status, a
body read no further) and the call log's line for every attempt (`CallRecord`).

The sending itself — the retry loop, the gate, the limiter, reading the body — is
`recon.api.sender`; a usable answer and one that never came are classified in
`recon.api.classify`. Secrets are masked from every message built here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import httpx

from recon.api.classify import Attempt
from recon.api.retry import Decision, Outcome, Verdict, is_retryable_status, parse_retry_after
from recon.api.wire import Prepared
from recon.catalogue.models import CallRecord
from recon.errors import ApiError

__all__ = ["call_record", "failed_status", "refused"]


def failed_status(
    response: httpx.Response, scheme: str, secrets: Sequence[str], now: datetime
) -> Attempt:
    """A non-2xx answer (`response`, its body read whole) as a failed attempt: its error
    (`ApiError.from_response`, retryable as its status is) and the Retry-After it asks for,
    read against the wall clock `now`."""
    status = response.status_code
    retry_after = parse_retry_after(response.headers.get("retry-after"), now)
    error = ApiError.from_response(
        response,
        retryable=is_retryable_status(status),
        scheme=scheme,
        secrets=secrets,
    )
    return Attempt(
        Outcome.STATUS,
        status=status,
        request_id=error.request_id,
        error_code=error.code,
        message=error.message,
        retry_after_s=retry_after,
        error=error,
    )


def refused(
    streamed: httpx.Response,
    request: httpx.Request,
    request_id: str | None,
    code: str,
    message: str,
    secrets: Sequence[str],
) -> Attempt:
    """An answer whose body is refused — over RECON_MAX_BODY_MB (`body_too_large`), or
    encoded in layers (`bad_encoding`): a failed call (never retried: it would be the
    same again), with its request id. A page too large narrows like a 500
    (recon.paging.narrow); one encoded in layers fails whole (every answer would be)."""
    error = ApiError.from_response(
        httpx.Response(
            streamed.status_code,
            headers={"x-request-id": request_id} if request_id else None,
            request=request,
        ),
        retryable=False,
        code=code,
        message=message,
        secrets=secrets,
    )
    return Attempt(
        Outcome.FATAL,
        status=streamed.status_code,
        request_id=error.request_id or request_id,
        error_code=code,
        message=error.message,
        error=error,
    )


def call_record(
    *,
    call_id: str,
    resource: str,
    method: str,
    prepared: Prepared,
    attempt: int,
    result: Attempt,
    decision: Decision,
    latency_ms: float,
    waited_s: float,
    at: datetime,
) -> CallRecord:
    """The call log's line for one attempt of a call (`call_id`): what was asked, what came
    back and what the retry policy decided of it (`outcome`), how long it took and how long
    it was held back before it went out."""
    outcome: Literal["ok", "retry", "failed"] = (
        "ok"
        if decision.verdict is Verdict.DONE
        else "retry"
        if decision.verdict is Verdict.RETRY
        else "failed"
    )
    message = result.message
    if decision.verdict is Verdict.WAIT_TOO_LONG:
        message = f"{message} (Retry-After {decision.requested_s:g}s above the cap)"
    return CallRecord(
        call_id=call_id,
        resource=resource,
        method=method,
        path=prepared.path,
        query=prepared.query,
        attempt=attempt,
        http_status=result.status,
        error=result.error_code,
        message=message,
        request_id=result.request_id,
        latency_ms=round(latency_ms, 3),
        waited_ms=round(waited_s * 1000.0, 3),
        outcome=outcome,
        at=at,
    )
