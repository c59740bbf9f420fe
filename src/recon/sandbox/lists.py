"""The list operations: a page is a slice of pre-serialised records joined with ``b","``.

Payments answer ``{"data","hasMore","nextOffset"}`` and take a ``status`` filter; the other
lists answer ``{"data"}`` only. Under the ``capped`` fault a page holds at most ``CAP``
records whatever is asked; from the list request after ``cap_after`` on, at most ``cap_to``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from recon.sandbox.data import PAYMENT_STATUSES
from recon.sandbox.envelope import JSON, json_response, refusal
from recon.sandbox.params import list_params
from recon.sandbox.state import Handler, SandboxState

__all__ = [
    "CAP",
    "list_customer_payment_methods",
    "list_invoices",
    "list_of",
    "list_payments",
    "list_refunds",
]

CAP = 100


def _page_body(records: list[bytes]) -> bytes:
    return b'{"data":[' + b",".join(records) + b"]}"


def _limit_for(state: SandboxState, resource: str, limit: int) -> int:
    cap = state.switches.cap_now()  # a cap switched on mid-scan (--cap-after)
    if cap is not None:
        limit = min(limit, cap)
    prof = state.profile
    if prof.capped and (resource == "payments" or not prof.capped_payments_only):
        return min(limit, CAP)
    return limit


def list_of(resource: str) -> Handler:
    """The handler of a list that answers ``{"data"}``."""

    async def handler(request: Request, state: SandboxState) -> Response:
        limit, skip = list_params(request)
        view = state.lists[resource]
        with state.lock:
            recs = view.page(skip, _limit_for(state, resource, limit))
        return Response(_page_body(recs), media_type=JSON)

    return handler


async def list_refunds(request: Request, state: SandboxState) -> Response:
    if not state.refunds_list:
        raise refusal(404, "not_found", "listing refunds is not offered")
    return await list_of("refunds")(request, state)


async def list_invoices(request: Request, state: SandboxState) -> Response:
    if not state.invoices_list:
        raise refusal(404, "not_found", "listing invoices is not offered")
    return await list_of("invoices")(request, state)


async def list_payments(request: Request, state: SandboxState) -> Response:
    """Op 5: ``hasMore`` while records remain; ``nextOffset`` = skip + returned, or null."""
    limit, skip = list_params(request)
    status = request.query_params.get("status")
    if status is not None and status not in PAYMENT_STATUSES:
        raise refusal(
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
    return Response(b'{"data":[' + b",".join(recs) + tail + b"}", media_type=JSON)


async def list_customer_payment_methods(request: Request, state: SandboxState) -> Response:
    """Op 12: a customer's payment methods (1-3) in the list envelope."""
    limit, skip = list_params(request)
    ds = state.data
    c = ds.index_of("cus", request.path_params["id"], ds.customers)
    if c is None:
        raise refusal(404, "not_found", "no such customer")
    recs = ds.payment_methods(c)[skip : skip + _limit_for(state, "payment_methods", limit)]
    return json_response({"data": recs})
