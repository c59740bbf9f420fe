"""One operation as a Starlette endpoint: the way every API request goes through the sandbox.

request id → authentication → storm / rate limit (429) → in-flight limit (503) → attempt
counted → latency (and scripted delays) → profile faults → handler → poisoned record (500)
→ envelope → drift and shifts. Authentication comes first, so a wrong key never meets a
fault; faults apply to ``/api/v1`` operations only. What the storm, the rate limit and the
in-flight limit turn away is not an attempt, so the profile's faults are the same whatever
the pacing.
"""

from __future__ import annotations

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
        turned_away = _turn_away(state, rid)
        if turned_away is not None:
            return turned_away
        pacing = state.pacing
        in_flight = pacing.in_flight
        if in_flight is not None and not in_flight.enter():
            pacing.overloaded += 1
            msg = f"too many requests in flight (at most {in_flight.limit})"
            return envelope(503, "unavailable", msg, rid)
        try:
            return await _answer(op, state, request, rid)
        finally:
            if in_flight is not None:
                in_flight.leave()

    call.__name__ = f"op{op.number}_{op.name}"
    return call


def _turn_away(state: SandboxState, rid: str) -> Response | None:
    """A 429 of the storm or of the rate limit, before the request counts as an attempt."""
    sw = state.switches
    if sw.enabled and sw.stormed < sw.storm:
        with state.lock:
            storming = sw.stormed < sw.storm
            if storming:
                sw.stormed += 1
        if storming:
            after = str(state.config.retry_after_s)
            return envelope(
                429, "rate_limited", "too many requests (storm)", rid, **{"Retry-After": after}
            )
    wait = state.pacing.admit()
    if wait is not None:
        msg = f"rate limit of {state.pacing.settings()['rate']:g} requests a second exceeded"
        return envelope(429, "rate_limited", msg, rid, **{"Retry-After": str(wait)})
    return None


async def _answer(op: Operation, state: SandboxState, request: Request, rid: str) -> Response:
    """Latency, faults, the handler, the envelope; then what follows a page (drift, shifts)."""
    cfg = state.config
    method = request.method
    path = request.url.path
    query = str(request.url.query)
    attempt = state.faults.attempt(method, path, query)
    fault = state.faults.decide(method, path, query, attempt)
    resource = op.list_resource
    if resource is not None:
        with state.lock:
            state.switches.list_requests += 1
    pacing = state.pacing
    delay = pacing.latency.seconds(method, path, query, attempt)
    if resource is not None:
        skip = request.query_params.get("skip", "0")
        if skip.isdigit():
            delay += state.switches.delay_ms(resource, int(skip)) / 1000
    if delay > 0:
        await pacing.sleep(delay)
    if resource == "payments" and _in_poisoned_window(state, request):
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
        await pacing.sleep(cfg.slow_s)
    try:
        response = await op.handler(request, state)
    except ApiError as err:
        return error_envelope(err, rid)
    if committed and fault is not None:
        return _fault_response(fault, rid)
    if (
        resource is not None
        and response.status_code == 200
        and _holds_poison(state, resource, bytes(response.body))
    ):
        return envelope(500, "internal_error", "a record of this page cannot be read", rid)
    if fault is Fault.TRUNCATED and response.status_code == 200:
        cut = response.body[: max(1, len(response.body) // 2)]
        response = Response(cut, 200, media_type=JSON)
    response.headers["X-Request-Id"] = rid
    if resource is not None and response.status_code == 200:
        state.drift_after_page(resource)
        state.after_list_page(resource)
    return response


def _in_poisoned_window(state: SandboxState, request: Request) -> bool:
    """Under ``chaos``: does the request's window (skip .. skip+max-records-1) hold the
    payment at ``poisoned_skip``? Sequential paging meets it as the page at that skip;
    paging that overlaps pages by one record meets it in whichever window holds it."""
    poisoned = state.poisoned_skip
    if poisoned is None:
        return False
    skip, limit = request.query_params.get("skip", "0"), request.query_params.get("max-records")
    if not skip.isdigit() or (limit is not None and not limit.isdigit()):
        return False
    start = int(skip)
    return start <= poisoned < start + (int(limit) if limit else 200)


def _holds_poison(state: SandboxState, resource: str, body: bytes) -> bool:
    """Does this page hold a poisoned record of ``resource``?"""
    for poison in state.switches.poisoned(resource):
        needle = state.poison_id(poison)
        if needle is not None and needle in body:
            return True
    return False


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
