"""Retry-After in seconds and as an HTTP date is waited for, never less; over the cap fails.

The client-level rules are pinned with a fake clock in tests/api/test_retry.py
(`test_retry_after_is_honoured_never_shorter`, `test_retry_after_above_the_cap_fails_saying_so`).
Here the same promises hold over a real socket with a real clock: the retry reaches the
server no earlier than the answer that asked for the wait plus the wait.
"""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest
from starlette.responses import JSONResponse

from recon.api import CallRecord
from recon.errors import RetryAfterTooLongError
from tests.api.sandbox_support import sandbox_client

from .conftest import scripted_server

pytestmark = pytest.mark.integration

OK = {"data": [{"id": "dp_1", "createdAt": "2026-11-20T00:00:00Z"}]}


def _limited(retry_after: str, status: int = 429) -> JSONResponse:
    return JSONResponse(
        {"error": "rate_limited", "message": "slow down", "requestId": "req_ra"},
        status,
        headers={"Retry-After": retry_after, "X-Request-Id": "req_ra"},
    )


def test_retry_after_seconds_is_waited_for_never_less() -> None:
    with scripted_server(lambda: _limited("1"), lambda: JSONResponse(OK)) as (url, script):
        records: list[CallRecord] = []
        with sandbox_client(url, records) as client:
            page = client.list_disputes()
    assert [d.id for d in page.data] == ["dp_1"]
    assert len(script.arrivals) == 2
    waited = script.arrivals[1].at - script.answered_at[0]
    assert waited >= 1.0, waited  # never less than asked
    assert waited < 10  # generous sanity bound
    assert [r.outcome for r in records] == ["retry", "ok"]


def test_retry_after_http_date_is_waited_for_never_less() -> None:
    target: list[float] = []

    def first() -> JSONResponse:
        when = int(time.time()) + 2  # HTTP dates have whole seconds
        target.append(when)
        return _limited(formatdate(when, usegmt=True), 503)

    with (
        scripted_server(first, lambda: JSONResponse(OK)) as (url, script),
        sandbox_client(url, []) as client,
    ):
        client.list_disputes()
    assert len(script.arrivals) == 2
    assert script.arrivals[1].at >= target[0], script.arrivals[1].at - target[0]
    assert script.arrivals[1].at - target[0] < 10


def test_retry_after_over_the_cap_fails_the_call_with_a_message_saying_so() -> None:
    with scripted_server(lambda: _limited("3600")) as (url, script):
        started = time.monotonic()
        with (
            sandbox_client(url, [], retry_after_cap_s=120) as client,
            pytest.raises(RetryAfterTooLongError) as info,
        ):
            client.list_disputes()
        elapsed = time.monotonic() - started
    assert len(script.arrivals) == 1  # no retry, no wait
    assert elapsed < 10
    message = str(info.value)
    assert "3600" in message
    assert "120" in message
    assert "RECON_RETRY_AFTER_CAP_S" in message
    assert info.value.request_id == "req_ra"
