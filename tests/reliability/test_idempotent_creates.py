"""Idempotent creates: every create (ops 1, 8, 19, 21) meets a connection reset *after* the
sandbox made the object (the answer is lost), then a reset before the request is forwarded,
then gets through. Pass: exactly one object per logical create at the sandbox
(`/_sandbox/state` → created), and the stored answer was replayed to the retry with the same
key (idempotency hits = 2 each). The 5xx-after-commit variant (sandbox `flaky`) is
tests/api/test_sandbox_contract.py::test_creates_retried_through_faults_are_created_once.
"""

from __future__ import annotations

from collections import Counter

import httpx
import pytest

from recon.api import CallRecord
from tests.api.sandbox_support import sandbox_client

from .conftest import KEY, TOKEN, fault_proxy, sandbox, sandbox_state

pytestmark = pytest.mark.integration


def _decide(method: str, target: str, attempt: int) -> str | None:
    if method != "POST":
        return None
    return {0: "lost", 1: "reset"}.get(attempt)


def test_idempotent_creates_after_reset_connections_make_one_object_each() -> None:
    records: list[CallRecord] = []
    with sandbox(seed=4, payments=400) as url, fault_proxy(url, _decide) as proxy:
        fixtures = httpx.get(f"{url}/_sandbox/fixtures", timeout=30).json()
        by_status = fixtures["paymentsByStatus"]
        with sandbox_client(proxy.url, records, api_key=KEY, bearer_token=TOKEN) as client:
            made = [
                client.create_coupon(name="ten off").id,
                client.create_coupon(name="ten off").id,  # same body, a new logical create
                client.create_coupon(name="twenty off").id,
                client.create_tax_rate(display_name="VAT", percentage=20).id,
                client.create_tax_rate(display_name="VAT", percentage=20).id,
                client.create_checkout_settings(
                    locale="en", allowed_origins=["https://shop.test"], payment_methods=["card"]
                ).id,
                client.create_refund(by_status["confirmed"]).id,
                client.create_refund(by_status["partially_refunded"]).id,
            ]
        state = sandbox_state(url)
    lost = proxy.faults("lost")
    assert len(lost) == len(made)  # every create's first answer was lost after the commit
    assert len(set(made)) == len(made)
    created = {op: n for op, n in state["created"].items() if n}
    assert sum(created.values()) == len(made), created
    hits = [v["hits"] for v in state["idempotency"].values()]
    assert sorted(hits) == [2] * len(made), state["idempotency"]
    attempts = Counter(r.call_id for r in records if r.method == "POST")
    assert set(attempts.values()) == {3}  # lost, reset, through
