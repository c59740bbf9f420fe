"""One operation as a Starlette endpoint: the way every API request goes through the sandbox.

request id → authentication → fault → handler → envelope → drift. Authentication comes
first, so a wrong key never meets a fault; faults apply to ``/api/v1`` operations only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from recon.errors import ApiError
from recon.sandbox.auth import check_auth
from recon.sandbox.envelope import JSON, envelope, error_envelope
from recon.sandbox.faults import Fault
from recon.sandbox.operations import Operation
from recon.sandbox.state import SandboxState

__all__ = ["Endpoint", "dispatch", "endpoint"]

Endpoint = Callable[[Request], Awaitable[Response]]


def endpoint(op: Operation, state: SandboxState) -> Endpoint:
    """The endpoint of ``op``."""
    cfg = state.config

    async def call(request: Request) -> Response:
        rid = state.request_id()
        state.requests += 1
        refused = check_auth(request, op.auth, cfg)
        if refused is not None:
            hdr = {"WWW-Authenticate": "Bearer"} if op.auth == "B" else {}
            return envelope(401, "unauthorized", refused, rid, **hdr)
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
            return envelope(503, "unavailable", "this page is unavailable (chaos)", rid)
        committed = False
        if fault in (Fault.SERVER_ERROR, Fault.BAD_GATEWAY, Fault.UNAVAILABLE):
            if op.create and state.faults.after_commit(method, path, query, attempt):
                committed = True  # the create goes through, then the answer is lost
            else:
                return _fault_response(fault, rid)
        if fault is Fault.RATE_LIMITED:
            return envelope(
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
            return error_envelope(err, rid)
        if committed and fault is not None:
            return _fault_response(fault, rid)
        if fault is Fault.TRUNCATED and response.status_code == 200:
            cut = response.body[: max(1, len(response.body) // 2)]
            response = Response(cut, 200, media_type=JSON)
        response.headers["X-Request-Id"] = rid
        if op.list_resource is not None and response.status_code == 200:
            state.drift_after_page(op.list_resource)
        return response

    call.__name__ = f"op{op.number}_{op.name}"
    return call


def dispatch(state: SandboxState, methods: dict[str, Endpoint]) -> Endpoint:
    """One endpoint per path: route by method; 405 (with ``Allow``) for any other method."""
    allow = ", ".join(sorted(methods))

    async def route(request: Request) -> Response:
        handler = methods.get(request.method)
        if handler is None:
            return envelope(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed here",
                state.request_id(),
                Allow=allow,
            )
        return await handler(request)

    return route


def _fault_response(fault: Fault, rid: str) -> Response:
    status = int(fault.value)
    code = {500: "internal_error", 502: "bad_gateway", 503: "unavailable"}[status]
    return envelope(status, code, f"transient failure ({status})", rid)
