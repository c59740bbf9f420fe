"""Not retried: 400, 404 and 422 are tried once; the error carries status, code, message, id.

Over a real socket against a scripted server (every status), and against the sandbox for its
real 404 (unknown payment) and 422 (refund above what is left), counting the requests the
sandbox received. The status table is pinned client-side in tests/api/test_retry.py
(`test_status_table_pins_the_retry_decision`).
"""

from __future__ import annotations

import httpx
import pytest
from starlette.responses import JSONResponse

from recon.api import CallRecord
from recon.errors import ApiError
from tests.api.sandbox_support import sandbox_client

from .conftest import KEY, TOKEN, sandbox, sandbox_state, scripted_server

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "invalid_request"), (404, "not_found"), (422, "amount_exceeds_refundable")],
)
def test_not_retried_statuses_are_tried_once(status: int, code: str) -> None:
    def answer() -> JSONResponse:
        return JSONResponse(
            {"error": code, "message": f"nope {status}", "requestId": f"req_{status}"},
            status,
            headers={"X-Request-Id": f"req_{status}"},
        )

    records: list[CallRecord] = []
    with (
        scripted_server(answer) as (url, script),
        sandbox_client(url, records) as client,
        pytest.raises(ApiError) as info,
    ):
        client.list_disputes()
    assert len(script.arrivals) == 1
    err = info.value
    assert (err.status, err.code, err.message, err.request_id) == (
        status,
        code,
        f"nope {status}",
        f"req_{status}",
    )
    assert f"req_{status}" in str(err)
    assert [r.outcome for r in records] == ["failed"]


def test_not_retried_against_the_sandbox_404_and_422() -> None:
    with sandbox(seed=3, payments=300) as url:
        fixtures = httpx.get(f"{url}/_sandbox/fixtures", timeout=30).json()
        with sandbox_client(url, [], api_key=KEY, bearer_token=TOKEN) as client:
            before = sandbox_state(url)["requests"]
            with pytest.raises(ApiError) as missing:
                client.get_payment("pay_doesnotexist0")
            assert sandbox_state(url)["requests"] == before + 1
            refunded = fixtures["paymentsByStatus"]["refunded"]
            before = sandbox_state(url)["requests"]
            with pytest.raises(ApiError) as exceeded:
                client.create_refund(refunded)  # nothing left to refund
            assert sandbox_state(url)["requests"] == before + 1
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert missing.value.request_id
    assert missing.value.message
    assert (exceeded.value.status, exceeded.value.code) == (422, "amount_exceeds_refundable")
    assert exceeded.value.request_id
    assert exceeded.value.message
