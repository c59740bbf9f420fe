"""What the sender prepares once per call (`recon.api.wire`): the same request httpx's
`build_request` makes, the same query in the call log as `redact_url` gives."""

from __future__ import annotations

import httpx
import pytest

from recon.api.wire import Prepared, logged_query
from recon.errors import redact_url

URL = "https://api.example.test/api/v1/payments"


@pytest.mark.parametrize(
    "query",
    [
        "",
        "max-records=200&skip=4000",
        "max-records=200&skip=0&status=refunded",
        "a=&b=1",
        "api_key=s3cret&skip=0",
        "API-KEY=s3cret",
        "Token=t&x=1",
        "q=a+b&r=%2F%20x",
        "flag",
        "=5",
        "x=1&&y=2",
        "password=p%40ss",
    ],
)
def test_the_logged_query_is_the_redacted_one(query: str) -> None:
    url = httpx.URL(f"{URL}?{query}" if query else URL)
    raw = url.query.decode("ascii")
    expected = redact_url("http://h/?" + raw).split("?", 1)[1] if raw else ""
    assert logged_query(url) == expected
    assert "s3cret" not in logged_query(url)


@pytest.mark.parametrize(
    ("method", "headers", "content"),
    [
        ("GET", {"x-api-key": "k"}, None),
        ("GET", {"Authorization": "Bearer t"}, None),
        (
            "POST",
            {"x-api-key": "k", "Idempotency-Key": "i-1", "Content-Type": "application/json"},
            b'{"amountMinor":5}',
        ),
        ("DELETE", {"x-api-key": "k"}, None),
    ],
)
def test_the_request_is_the_one_build_request_makes(
    method: str, headers: dict[str, str], content: bytes | None
) -> None:
    client = httpx.Client(headers={"Accept": "application/json", "User-Agent": "recon-test"})
    merged: dict[tuple[tuple[str, str], ...], httpx.Headers] = {}
    url = f"{URL}?max-records=200&skip=400"
    for _ in range(2):  # the second time from the merged headers kept
        prepared = Prepared.of(client, method, url, headers, content, merged=merged)
        got = prepared.request(client, 12.5)
        expected = client.build_request(method, url, content=content, headers=headers, timeout=12.5)
        assert (got.method, got.url, got.headers.raw, got.read()) == (
            expected.method,
            expected.url,
            expected.headers.raw,
            expected.read(),
        )
        assert got.extensions == expected.extensions
    assert len(merged) == 1
