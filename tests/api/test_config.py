"""ClientConfig: validated before any request, built from Settings."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from recon.api import ClientConfig
from recon.config.settings import Settings
from recon.errors import ConfigError


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ("https://payments.example.com", "https://payments.example.com/api/v1"),
        ("https://payments.example.com/", "https://payments.example.com/api/v1"),
        ("https://payments.example.com/api/v1", "https://payments.example.com/api/v1"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123/api/v1"),
        ("http://localhost:8123/api/v1/", "http://localhost:8123/api/v1"),
        ("http://[::1]:80", "http://[::1]:80/api/v1"),
    ],
)
def test_api_root_is_normalised(root: str, expected: str) -> None:
    assert ClientConfig.for_base_url(root).api_root == expected


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"base_url": "ftp://h"}, "RECON_BASE_URL"),
        ({"base_url": "payments.example.com"}, "RECON_BASE_URL"),
        ({"base_url": "http://payments.example.com"}, "RECON_BASE_URL"),
        ({"base_url": "https://u:p@h"}, "RECON_BASE_URL"),
        ({"page_size": 0}, "RECON_PAGE_SIZE"),
        ({"page_size": 201}, "RECON_PAGE_SIZE"),
        ({"max_attempts": 0}, "RECON_MAX_ATTEMPTS"),
        ({"timeout_s": 0}, "RECON_TIMEOUT_S"),
        ({"call_budget_s": -1}, "RECON_CALL_BUDGET_S"),
        ({"retry_after_cap_s": -1}, "RECON_RETRY_AFTER_CAP_S"),
        ({"skip_param": ""}, "RECON_SKIP_PARAM"),
        ({"skip_param": "   "}, "RECON_SKIP_PARAM"),
        ({"refunds_path": "refunds"}, "RECON_REFUNDS_PATH"),
    ],
)
def test_bad_config_names_the_setting(kwargs: dict[str, object], setting: str) -> None:
    args: dict[str, object] = {"base_url": "https://h", **kwargs}
    base_url = str(args.pop("base_url"))
    with pytest.raises(ConfigError) as info:
        ClientConfig.for_base_url(base_url, **args)
    assert info.value.setting == setting


def test_plain_http_to_a_remote_host_needs_the_explicit_setting() -> None:
    config = ClientConfig.for_base_url("http://payments.internal", allow_insecure_http=True)
    assert config.api_root == "http://payments.internal/api/v1"


def test_for_base_url_ignores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A library caller's explicit values are the whole story: RECON_* variables of the
    # process (here a page size that would be refused) are not read.
    monkeypatch.setenv("RECON_PAGE_SIZE", "500")
    monkeypatch.setenv("RECON_SKIP_PARAM", "offset")
    config = ClientConfig.for_base_url("https://h")
    assert (config.page_size, config.skip_param) == (200, "skip")


def test_defaults_are_the_settings_defaults() -> None:
    # One place holds the defaults (Settings): the client's config repeats none of them.
    config = ClientConfig.for_base_url("https://h")
    defaults = Settings.model_fields
    for name in ("page_size", "max_attempts", "timeout_s", "call_budget_s", "refunds_path"):
        assert getattr(config, name) == defaults[name].default


def test_from_settings_carries_every_knob() -> None:
    settings = Settings(
        base_url="https://pay.example.com/api/v1",
        api_key=SecretStr("k"),
        bearer_token=SecretStr("t"),
        page_size=50,
        page_size_param="limit",
        skip_param="offset",
        status_param="state",
        refunds_path="",
        invoices_path="/billing/invoices",
        idempotency_header="X-Idem",
        max_attempts=7,
        timeout_s=5,
        call_budget_s=60,
        retry_after_cap_s=30,
        backoff_initial_s=0.1,
        backoff_max_s=2,
    )
    config = ClientConfig.from_settings(settings)
    assert config.api_root == "https://pay.example.com/api/v1"
    assert config.api_key == SecretStr("k")
    assert config.bearer_token == SecretStr("t")
    assert (config.page_size, config.page_size_param, config.skip_param) == (50, "limit", "offset")
    assert config.status_param == "state"
    assert (config.refunds_path, config.invoices_path) == ("", "/billing/invoices")
    assert config.idempotency_header == "X-Idem"
    assert (config.max_attempts, config.timeout_s, config.call_budget_s) == (7, 5, 60)
    assert (config.retry_after_cap_s, config.backoff_initial_s, config.backoff_max_s) == (
        30,
        0.1,
        2,
    )


def test_from_settings_without_base_url_names_it() -> None:
    with pytest.raises(ConfigError) as info:
        ClientConfig.from_settings(Settings(base_url=None))
    assert info.value.setting == "RECON_BASE_URL"


def test_tls_verification_is_always_on() -> None:
    import dataclasses
    import ssl

    from recon.api import ApiClient
    from recon.api.transport import Transport

    names = {f.name for f in dataclasses.fields(ClientConfig)}
    assert not any("verify" in n or "insecure_tls" in n for n in names)
    with ApiClient(ClientConfig.for_base_url("https://h")) as client:
        transport = client.sender.http._transport
        assert isinstance(transport, Transport)
        context = transport.ssl_context()
        assert context.verify_mode == ssl.CERT_REQUIRED
        assert context.check_hostname


def test_config_pickles_for_worker_processes() -> None:
    import pickle

    config = ClientConfig.for_base_url("https://h", api_key=SecretStr("k"), page_size=50)
    back = pickle.loads(pickle.dumps(config))
    assert back == config
    assert back.api_key is not None
    assert back.api_key.get_secret_value() == "k"
