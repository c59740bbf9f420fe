"""The call log: one record per attempt, the right outcome, redacted, no secrets."""

from __future__ import annotations

from datetime import UTC

import httpx
import pytest

from recon.errors import ApiError, PagingError, RetryAfterTooLongError
from recon.paging.paginators import OffsetPaginator

from .conftest import EPOCH, Harness, envelope


def test_records_carry_every_field(harness: Harness) -> None:
    answers = iter(
        [
            envelope(503, code="unavailable", message="busy", rid="req_a"),
            httpx.Response(200, json={"data": []}, headers={"Request-Id": "req_b"}),
        ]
    )
    with harness.client(lambda r: next(answers)) as client:
        client.list_subscriptions(max_records=10, skip=20)
    first, second = harness.records
    assert first.call_id == second.call_id
    assert (first.resource, first.method, first.path) == (
        "subscriptions",
        "GET",
        "/api/v1/subscriptions",
    )
    assert first.query == "max-records=10&skip=20"
    assert (first.attempt, first.http_status, first.error, first.message) == (
        1,
        503,
        "unavailable",
        "busy",
    )
    assert (first.request_id, first.outcome) == ("req_a", "retry")
    assert (second.attempt, second.http_status, second.error, second.request_id) == (
        2,
        200,
        None,
        "req_b",
    )
    assert second.outcome == "ok"
    assert first.at.tzinfo is UTC
    assert first.at == EPOCH
    assert first.latency_ms >= 0


def test_each_logical_call_has_its_own_call_id(harness: Harness) -> None:
    with harness.client(lambda r: httpx.Response(200, json={"data": []})) as client:
        client.list_disputes()
        client.list_disputes()
    assert len({r.call_id for r in harness.records}) == 2


def test_retry_after_too_long_is_logged_as_failed_with_the_reason(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return envelope(503, rid="req_x", headers={"Retry-After": "3600"})

    with harness.client(handler) as client, pytest.raises(RetryAfterTooLongError):
        client.list_disputes()
    (record,) = harness.records
    assert record.outcome == "failed"
    assert record.request_id == "req_x"
    assert "above the cap" in (record.message or "")


def test_a_429_without_retry_after_pauses_everyone_for_the_backoff(harness: Harness) -> None:
    answers = iter([envelope(429, code="rate_limited"), httpx.Response(200, json={"data": []})])
    with harness.client(lambda r: next(answers)) as client:
        client.list_disputes()
        assert client.limiter.pauses == 1
    assert harness.clock.sleeps == [0.25]


def test_a_503_with_retry_after_pauses_everyone(harness: Harness) -> None:
    answers = iter(
        [envelope(503, headers={"Retry-After": "2"}), httpx.Response(200, json={"data": []})]
    )
    with harness.client(lambda r: next(answers)) as client:
        client.list_disputes()
        assert client.limiter.pauses == 1
    assert harness.clock.sleeps == [2.0]


def test_a_503_without_retry_after_waits_alone(harness: Harness) -> None:
    answers = iter([envelope(503), httpx.Response(200, json={"data": []})])
    with harness.client(lambda r: next(answers)) as client:
        client.list_disputes()
        assert client.limiter.pauses == 0
    assert harness.clock.sleeps == [0.25]


def test_each_attempt_gets_at_most_the_rest_of_the_budget(harness: Harness) -> None:
    timeouts: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"]["read"])
        harness.clock.now += 25  # the attempt took 25 s
        return envelope(503, headers={"Retry-After": "10"})

    with (
        harness.client(handler, timeout_s=30, call_budget_s=60, max_attempts=10) as client,
        pytest.raises(ApiError),
    ):
        client.list_disputes()
    assert timeouts == [30, 25]  # second attempt: 60 - (25 + 10) s left


def test_payments_with_has_more_but_no_next_offset_fail_the_page(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [{"id": "p"}], "hasMore": True})

    with harness.client(handler) as client:
        scan = client.scan("payments")
        pages = list(scan)
    assert scan.report.status == "incomplete"
    assert "nextOffset None" in scan.report.failed_pages[0].error
    assert pages[0].records == [{"id": "p"}]


def test_payments_without_has_more_fall_back_to_offset_rules(harness: Harness) -> None:
    ids = [f"p{i}" for i in range(7)]

    def handler(request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        return httpx.Response(200, json={"data": [{"id": i} for i in ids[skip : skip + 3]]})

    with harness.client(handler, page_size=3) as client:
        scan = client.scan("payments")
        got = [r["id"] for p in scan for r in p.records]
    assert got == ids
    assert scan.report.status == "complete"


def test_a_list_that_keeps_shrinking_fails_instead_of_looping() -> None:
    pag = OffsetPaginator(page_size=10)
    pag.max_rewinds = 5
    page = [{"id": f"a{i}"} for i in range(10)]
    for _ in range(5):  # forward, then the page after starts on an unknown record
        pag.update_state(1000, page, {}, first_known=True)
        pag.update_state(pag.offset, page, {}, first_known=False)
    assert pag.rewinds == 5
    pag.update_state(1000, page, {}, first_known=True)
    with pytest.raises(PagingError, match="kept shrinking"):
        pag.update_state(pag.offset, page, {}, first_known=False)
