"""A canary key and token must never show up in logs, exceptions, reprs or the call log."""

from __future__ import annotations

import logging
import pickle
import traceback

import httpx
import pytest
from pydantic import SecretStr

from recon.api import ClientConfig
from recon.errors import ReconError, redact_url

from .conftest import CANARY_KEY, CANARY_TOKEN, ROOT, Harness

SECRETS = (CANARY_KEY, CANARY_TOKEN)


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_canary_never_leaks(harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    answers = iter(
        [
            # a server that echoes the credentials back in its error
            httpx.Response(
                400,
                json={
                    "error": "invalid_request",
                    "message": f"bad key {CANARY_KEY}",
                    "requestId": f"req_{CANARY_TOKEN}",
                },
            ),
            httpx.Response(401, json={"error": "unauthorized", "message": CANARY_TOKEN}),
            httpx.Response(200, content=f"<html>{CANARY_KEY}</html>".encode()),
            httpx.Response(503, text=CANARY_KEY),
        ]
    )

    def handler(request: httpx.Request) -> httpx.Response:
        try:
            return next(answers)
        except StopIteration:
            raise httpx.ConnectError(f"refused {request.headers}") from None

    errors: list[BaseException] = []
    with harness.client(handler, max_attempts=1) as client:
        _assert_clean(repr(client))
        _assert_clean(repr(client.config))
        _assert_clean(str(client.config))
        for call in (
            lambda: client.list_disputes(),
            lambda: client.get_payment("p"),
            lambda: client.list_refunds(),
            lambda: client.create_coupon(name="c"),
            lambda: client.list_payments(),
        ):
            with pytest.raises(ReconError) as info:
                call()
            errors.append(info.value)
    assert len(harness.records) == 5
    for err in errors:
        _assert_clean(str(err))
        _assert_clean(repr(err))
        _assert_clean("".join(traceback.format_exception(err)))
        _assert_clean(repr(vars(err)))
        _assert_clean(str(pickle.loads(pickle.dumps(err))))
    for record in harness.records:
        _assert_clean(repr(record))
    _assert_clean(caplog.text)


def test_config_repr_hides_secrets() -> None:
    config = ClientConfig.for_base_url(
        ROOT, api_key=SecretStr(CANARY_KEY), bearer_token=SecretStr(CANARY_TOKEN)
    )
    _assert_clean(repr(config))
    assert config.api_key is not None
    assert config.api_key.get_secret_value() == CANARY_KEY


def test_redact_url_masks_userinfo_and_secret_query() -> None:
    url = f"https://user:{CANARY_KEY}@h/api/v1/x?api_key={CANARY_KEY}&token={CANARY_TOKEN}&skip=4"
    redacted = redact_url(url)
    _assert_clean(redacted)
    assert "skip=4" in redacted
