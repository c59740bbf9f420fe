"""The retry decision, pinned: every status 100-599, Retry-After forms, the cap, the budget."""

from __future__ import annotations

from datetime import timedelta
from email.utils import format_datetime

import httpx
import pytest

from recon.api.retry import (
    RETRYABLE_STATUSES,
    Outcome,
    RetryPolicy,
    Verdict,
    parse_retry_after,
)
from recon.errors import ApiError, AuthError, RetryAfterTooLongError

from .conftest import EPOCH, Harness, envelope

EXPECTED_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


def _expected(status: int) -> str:
    if 200 <= status < 300:
        return "ok"
    if status in (401, 403):
        return "auth"
    if status in EXPECTED_RETRYABLE:
        return "retry"
    return "fail"


@pytest.mark.parametrize("status", range(100, 600))
def test_status_table_pins_the_retry_decision(harness: Harness, status: int) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if 200 <= status < 300:
            return httpx.Response(status, json={"data": []})
        return envelope(status, rid=f"req_{status}")

    expected = _expected(status)
    with harness.client(handler, max_attempts=3) as client:
        if expected == "ok":
            assert client.list_disputes().data == []
            assert [r.outcome for r in harness.records] == ["ok"]
            return
        with pytest.raises(ApiError) as info:
            client.list_disputes()
    err = info.value
    assert err.status == status
    assert err.request_id == f"req_{status}"
    outcomes = [r.outcome for r in harness.records]
    if expected == "retry":
        assert err.retryable
        assert err.attempts == 3
        assert outcomes == ["retry", "retry", "failed"]
    else:
        assert not err.retryable
        assert err.attempts == 1
        assert outcomes == ["failed"]
        assert isinstance(err, AuthError) == (expected == "auth")


def test_retryable_statuses_are_exactly_design_section_1() -> None:
    assert RETRYABLE_STATUSES == EXPECTED_RETRYABLE


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0.0),
        ("7", 7.0),
        (" 12 ", 12.0),
        ("1.5", 1.5),
        (format_datetime(EPOCH + timedelta(seconds=30), usegmt=True), 30.0),
        ("Sat, 21 Nov 2026 02:00:45 GMT", 45.0),
        (format_datetime(EPOCH - timedelta(seconds=30), usegmt=True), 0.0),  # past: no wait
        ("soon", None),
        ("", None),
        ("-5", None),
        ("nan", None),
        ("inf", None),
        ("Sat, 99 Foo 2026", None),
        (None, None),
    ],
)
def test_parse_retry_after_forms(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, EPOCH) == expected


@pytest.mark.parametrize("form", ["seconds", "date"])
def test_retry_after_is_honoured_never_shorter(harness: Harness, form: str) -> None:
    calls = []
    header = "42" if form == "seconds" else "Sat, 21 Nov 2026 02:00:42 GMT"

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) == 1:
            return envelope(503, headers={"Retry-After": header})
        return httpx.Response(200, json={"data": []})

    with harness.client(handler) as client:
        client.list_disputes()
    assert len(calls) == 2
    assert sum(harness.clock.sleeps) >= 42.0
    assert harness.clock.sleeps == [42.0]


def test_garbage_retry_after_falls_back_to_backoff(harness: Harness) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) == 1:
            return envelope(503, headers={"Retry-After": "whenever"})
        return httpx.Response(200, json={"data": []})

    with harness.client(handler) as client:
        client.list_disputes()
    # full jitter with random() = 0.5 on attempt 1: 0.5 * min(8, 0.5 * 2**0)
    assert harness.clock.sleeps == [0.25]


def test_retry_after_above_the_cap_fails_saying_so(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return envelope(429, code="rate_limited", rid="req_slow", headers={"Retry-After": "600"})

    with (
        harness.client(handler, retry_after_cap_s=120) as client,
        pytest.raises(RetryAfterTooLongError) as info,
    ):
        client.list_disputes()
    err = info.value
    assert err.requested_s == 600
    assert err.request_id == "req_slow"
    assert "600s" in str(err)
    assert "120s" in str(err)
    assert "RECON_RETRY_AFTER_CAP_S" in str(err)
    assert harness.clock.sleeps == []
    assert [r.outcome for r in harness.records] == ["failed"]


def test_retry_after_on_a_non_retryable_status_is_ignored(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return envelope(400, code="invalid_request", headers={"Retry-After": "1"})

    with harness.client(handler) as client, pytest.raises(ApiError) as info:
        client.list_disputes()
    assert info.value.code == "invalid_request"
    assert harness.clock.sleeps == []


def test_call_budget_bounds_the_total_time(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return envelope(503, headers={"Retry-After": "50"})

    with (
        harness.client(handler, max_attempts=50, call_budget_s=120) as client,
        pytest.raises(ApiError) as info,
    ):
        client.list_disputes()
    assert info.value.attempts == 3  # waits 50 + 50; a third wait would pass 120 s
    assert sum(harness.clock.sleeps) == 100.0


def test_backoff_is_exponential_with_full_jitter_and_capped() -> None:
    policy = RetryPolicy(backoff_initial_s=0.5, backoff_max_s=4.0)
    assert [policy.backoff_s(n, 0.999999) for n in range(1, 7)] == pytest.approx(
        [0.5, 1.0, 2.0, 4.0, 4.0, 4.0], rel=1e-4
    )
    assert policy.backoff_s(3, 0.0) == 0.0


def test_policy_never_retries_tls_or_fatal_even_with_attempts_left() -> None:
    policy = RetryPolicy(max_attempts=10)
    for outcome in (Outcome.TLS, Outcome.FATAL):
        assert policy.decide(outcome, attempt=1, elapsed_s=0).verdict is Verdict.FAIL
    for outcome in (Outcome.TRANSPORT, Outcome.BAD_BODY):
        assert policy.decide(outcome, attempt=1, elapsed_s=0).verdict is Verdict.RETRY
    assert policy.decide(Outcome.TRANSPORT, attempt=10, elapsed_s=0).verdict is Verdict.FAIL
