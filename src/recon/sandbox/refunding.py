"""Op 8, create a refund: what is left of a payment, and the refusals when nothing is.

"What is left" = the payment's amount - its counted refunds (not failed, canceled,
cancelled, rejected or reversed; same currency), including refunds created through op 8.
Refunds are created ``pending`` and stay so; the payment's status is not changed.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from recon.sandbox.envelope import refusal
from recon.sandbox.params import json_body, str_field
from recon.sandbox.state import SandboxState
from recon.sandbox.truth import DEFAULT_FAILED_STATUSES

__all__ = ["create_refund", "refundable"]


def refundable(state: SandboxState, pid: str) -> tuple[dict[str, Any], int]:
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
            raise refusal(404, "not_found", "no such payment")
        pay, total = extra, 0
    total += sum(a for a, cur in state.created_refunds.get(pid, []) if cur == pay["currency"])
    amount = pay["amountMinor"]
    if pay["status"] not in ("confirmed", "partially_refunded", "refunded"):
        raise refusal(409, "invalid_state", f"a {pay['status']} payment cannot be refunded")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise refusal(409, "invalid_state", "this payment's amount cannot be refunded")
    return pay, amount - total


def _wanted(body: dict[str, Any]) -> tuple[int | None, str | None]:
    """(amountMinor, currency) asked for; (None, None) = what is left."""
    money = body.get("amount")
    if money is None:
        return None, None
    if not isinstance(money, dict):
        raise refusal(400, "invalid_request", "amount must be a Money object")
    a = money.get("amountMinor")
    if isinstance(a, bool) or not isinstance(a, int) or a < 1:
        raise refusal(400, "invalid_request", "amount.amountMinor must be an integer >= 1")
    c = money.get("currency")
    if c is not None and not isinstance(c, str):
        raise refusal(400, "invalid_request", "amount.currency must be a string")
    return a, c


async def create_refund(request: Request, state: SandboxState) -> Response:
    body = await json_body(request)
    pid = str_field(body, "paymentId", required=True)
    assert pid is not None
    want, want_cur = _wanted(body)
    reason = str_field(body, "reason", required=False)

    def make() -> tuple[int, dict[str, Any]]:
        pay, left = refundable(state, pid)
        if want_cur is not None and want_cur != pay["currency"]:
            raise refusal(422, "currency_mismatch", "a refund is in the payment's currency")
        amount = left if want is None else want
        if left <= 0:
            raise refusal(422, "amount_exceeds_refundable", "nothing is left to refund")
        if amount > left:
            raise refusal(
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

    return state.creates.answer(request, "refunds", body, make)
