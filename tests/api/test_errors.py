"""Errors: built from a response in one place, readable, picklable, never holding a secret."""

from __future__ import annotations

import pickle
import ssl

import httpx
import pytest

from recon.errors import (
    ApiError,
    AuthError,
    ConfigError,
    RetryAfterTooLongError,
    TransportError,
)

from .conftest import ROOT, Harness, envelope


def _response(
    status: int,
    *,
    json: object = None,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
) -> httpx.Response:
    request = httpx.Request("GET", f"{ROOT}/api/v1/payments?max-records=200&skip=400")
    if json is not None:
        return httpx.Response(status, json=json, headers=headers, request=request)
    return httpx.Response(status, content=content or b"", headers=headers, request=request)


def test_str_reads_like_the_issue_says() -> None:
    err = ApiError.from_response(
        _response(
            503, json={"error": "unavailable", "message": "try again", "requestId": "req_abc"}
        ),
        retryable=True,
    )
    assert str(err) == (
        "503 unavailable: try again (request_id=req_abc) "
        "GET /api/v1/payments?max-records=200&skip=400"
    )
    assert (err.status, err.code, err.message, err.request_id, err.method) == (
        503,
        "unavailable",
        "try again",
        "req_abc",
        "GET",
    )
    assert err.retryable


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        ({"X-Request-Id": "req_hdr"}, {"error": "x", "message": "m"}, "req_hdr"),
        ({"Request-Id": "req_plain"}, {"error": "x"}, "req_plain"),
        ({"X-Request-Id": "req_hdr"}, {"requestId": "req_env"}, "req_env"),
        ({}, {"error": "x"}, None),
    ],
)
def test_request_id_from_envelope_then_headers(
    headers: dict[str, str], body: dict[str, str], expected: str | None
) -> None:
    err = ApiError.from_response(_response(500, json=body, headers=headers), retryable=True)
    assert err.request_id == expected
    if expected is None:
        assert "request_id=none given" in str(err)


def test_non_json_error_body_still_makes_an_error() -> None:
    err = ApiError.from_response(
        _response(502, content=b"<html>Bad gateway</html>"), retryable=True
    )
    assert err.code is None
    assert err.message == "Bad Gateway"
    assert str(err).startswith("502: Bad Gateway (request_id=none given) GET")


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_are_auth_errors_with_a_message_about_the_key(status: int) -> None:
    err = ApiError.from_response(_response(status, json={"error": "unauthorized"}), retryable=True)
    assert isinstance(err, AuthError)
    assert not err.retryable
    assert "API key (RECON_API_KEY) was refused" in str(err)
    bearer = ApiError.from_response(_response(status, json={}), retryable=False, scheme="bearer")
    assert "RECON_BEARER_TOKEN" in str(bearer)


@pytest.mark.parametrize(
    "err",
    [
        ApiError(
            status=503,
            code="unavailable",
            message="m",
            request_id="req_1",
            method="GET",
            url=f"{ROOT}/api/v1/payments?skip=400",
            retryable=True,
            attempts=5,
        ),
        AuthError(
            scheme="bearer",
            status=401,
            code="unauthorized",
            message="no",
            request_id=None,
            method="GET",
            url=f"{ROOT}/api/v1/payments/p",
            retryable=False,
        ),
        TransportError(
            kind="timeout",
            detail="ReadTimeout",
            method="GET",
            url=f"{ROOT}/api/v1/disputes",
            retryable=True,
        ),
        RetryAfterTooLongError(requested_s=600, cap_s=120, request_id="req_2", what="GET /x"),
        ConfigError("RECON_PAGE_SIZE", "must be 1..200"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_pickle_and_unpickle(err: Exception) -> None:
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert str(back) == str(err)
    assert vars(back) == vars(err)


def test_errors_from_the_client_pickle(harness: Harness) -> None:
    with (
        harness.client(lambda r: envelope(409, code="conflict"), max_attempts=2) as client,
        pytest.raises(ApiError) as info,
    ):
        client.list_disputes()
    back = pickle.loads(pickle.dumps(info.value))
    assert (back.status, back.code, back.attempts) == (409, "conflict", 2)


def test_auth_error_stops_at_once(harness: Harness) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return envelope(401, code="unauthorized", message="bad key", rid="req_auth")

    with harness.client(handler) as client, pytest.raises(AuthError) as info:
        client.list_payments()
    assert len(calls) == 1
    assert info.value.request_id == "req_auth"
    assert info.value.scheme == "api_key"
    with harness.client(handler) as client, pytest.raises(AuthError) as info:
        client.get_payment("p")
    assert info.value.scheme == "bearer"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (httpx.ConnectError("refused"), "connect_error"),
        (httpx.ReadTimeout("slow"), "timeout"),
        (httpx.ConnectTimeout("slow"), "timeout"),
        (httpx.ReadError("reset"), "read_error"),
        (
            httpx.RemoteProtocolError("peer closed connection without sending complete message"),
            "truncated_or_protocol_error",
        ),
    ],
)
def test_transport_failures_are_retried_then_raised(
    harness: Harness, exc: Exception, kind: str
) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise exc

    with harness.client(handler, max_attempts=4) as client, pytest.raises(TransportError) as info:
        client.list_disputes()
    assert len(calls) == 4
    assert info.value.kind == kind
    assert info.value.retryable
    assert [r.http_status for r in harness.records] == [None] * 4
    assert [r.error for r in harness.records] == [kind] * 4
    assert harness.records[-1].outcome == "failed"


def test_transport_failure_then_success(harness: Harness) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) < 3:
            raise httpx.ReadTimeout("slow")
        return httpx.Response(200, json={"data": [{"id": "d1"}]})

    with harness.client(handler) as client:
        assert len(client.list_disputes().data) == 1
    assert [r.outcome for r in harness.records] == ["retry", "retry", "ok"]
    assert len({r.call_id for r in harness.records}) == 1
    assert [r.attempt for r in harness.records] == [1, 2, 3]


def test_tls_failures_are_never_retried(harness: Harness) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        try:
            raise ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] bad cert")
        except ssl.SSLError as cause:
            raise httpx.ConnectError("handshake failed") from cause

    with harness.client(handler) as client, pytest.raises(TransportError) as info:
        client.list_disputes()
    assert len(calls) == 1
    assert info.value.kind == "tls"
    assert not info.value.retryable


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"<html><body>Maintenance</body></html>", "not JSON"),
        (b"", "empty body"),
        (b'{"data": [{"id": "a"}, {"id": "b"', "not JSON"),  # truncated
        (b'{"items": []}', "no `data`"),
        (b'{"data": {"id": "a"}}', "not an array"),
        (b'{"data": null}', "not an array"),
        (b"[]", "no `data`"),
    ],
)
def test_garbage_2xx_is_retried_then_fails_never_empty(
    harness: Harness, content: bytes, problem: str
) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, content=content, headers={"X-Request-Id": f"req_{len(calls)}"})

    with harness.client(handler, max_attempts=3) as client, pytest.raises(ApiError) as info:
        client.list_disputes()
    assert len(calls) == 3
    err = info.value
    assert err.code == "invalid_body"
    assert problem in err.message
    assert err.request_id == "req_3"
    assert [r.request_id for r in harness.records] == ["req_1", "req_2", "req_3"]
    assert [r.error for r in harness.records] == ["invalid_body"] * 3


def test_garbage_then_good_body_returns_the_good_one(harness: Harness) -> None:
    bodies = iter([b"<html>", b'{"data": [{"id": "a"}]}'])
    with harness.client(lambda r: httpx.Response(200, content=next(bodies))) as client:
        assert [d.id for d in client.list_disputes().data] == ["a"]
