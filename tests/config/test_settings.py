"""Settings: defaults from docs/design.md, env and recon.toml, and one-line errors naming
the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.config.settings import load_settings
from recon.errors import ConfigError

CANARY = "canary-key-7f3a9c"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_defaults_are_the_documented_ones() -> None:
    s = load_settings()
    assert (s.page_size, s.page_size_param, s.skip_param, s.status_param) == (
        200,
        "max-records",
        "skip",
        "status",
    )
    assert (s.refunds_path, s.invoices_path, s.idempotency_header) == (
        "/refunds",
        "/invoices",
        "Idempotency-Key",
    )
    assert s.refund_failed_statuses == ("failed", "canceled", "cancelled", "rejected", "reversed")


@pytest.mark.parametrize(
    ("env", "value", "setting"),
    [
        ("RECON_PAGE_SIZE", "0", "RECON_PAGE_SIZE"),
        ("RECON_PAGE_SIZE", "201", "RECON_PAGE_SIZE"),
        ("RECON_PAGE_SIZE", "many", "RECON_PAGE_SIZE"),
        ("RECON_BASE_URL", "ftp://example.com", "RECON_BASE_URL"),
        ("RECON_BASE_URL", "not a url", "RECON_BASE_URL"),
        ("RECON_MAX_ATTEMPTS", "0", "RECON_MAX_ATTEMPTS"),
        ("RECON_REFUNDS_PATH", "refunds", "RECON_REFUNDS_PATH"),
        ("RECON_TIMEOUT_S", "-1", "RECON_TIMEOUT_S"),
    ],
)
def test_a_bad_value_names_the_setting(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, setting: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.setting == setting
    assert str(info.value).startswith(f"{setting}: ")
    assert "\n" not in str(info.value)


def test_a_base_url_ending_in_api_v1_is_the_same_base() -> None:
    assert load_settings(base_url="https://pay.example.com/api/v1/").base_url == (
        "https://pay.example.com"
    )
    assert load_settings(base_url="https://pay.example.com").api_root == (
        "https://pay.example.com/api/v1"
    )


def test_plain_http_to_a_remote_host_is_refused_unless_allowed() -> None:
    s = load_settings(base_url="http://pay.example.com", api_key="k")
    with pytest.raises(ConfigError, match="unencrypted"):
        s.require_remote_ready()
    load_settings(base_url="http://127.0.0.1:8000", api_key="k").require_remote_ready()
    load_settings(
        base_url="http://pay.example.com", api_key="k", allow_insecure_http=True
    ).require_remote_ready()


def test_missing_key_or_base_is_named() -> None:
    with pytest.raises(ConfigError, match="RECON_BASE_URL"):
        load_settings().require_remote_ready()
    with pytest.raises(ConfigError, match="RECON_API_KEY"):
        load_settings(base_url="https://x.example.com").require_remote_ready()


def test_recon_toml_is_read_and_env_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "recon.toml").write_text("page_size = 50\nstuck_after_days = 3\n")
    assert load_settings().page_size == 50
    monkeypatch.setenv("RECON_PAGE_SIZE", "20")
    s = load_settings()
    assert (s.page_size, s.stuck_after_days) == (20, 3)


def test_secrets_never_print(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_API_KEY", CANARY)
    monkeypatch.setenv("RECON_BEARER_TOKEN", CANARY + "-bearer")
    s = load_settings()
    assert CANARY not in repr(s)
    assert CANARY not in str(s.model_dump())
    assert s.api_key is not None
    assert s.api_key.get_secret_value() == CANARY


def test_an_error_never_echoes_the_offending_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_CONCURRENCY", CANARY)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert CANARY not in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"), [("auto", "auto"), ("AUTO", "auto"), ("", "auto"), ("4", 4), (" 1 ", 1)]
)
def test_concurrency_is_auto_or_a_number(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: object
) -> None:
    monkeypatch.setenv("RECON_CONCURRENCY", value)
    assert load_settings().concurrency == expected


@pytest.mark.parametrize("value", ["0", "65", "-2", "two", "1.5"])
def test_a_bad_concurrency_names_the_setting(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RECON_CONCURRENCY", value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "RECON_CONCURRENCY" in str(info.value)


def test_concurrency_defaults_to_auto_with_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RECON_CONCURRENCY", "RECON_MAX_IN_FLIGHT", "RECON_RATE_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    s = load_settings()
    assert (s.concurrency, s.max_in_flight, s.rate_limit) == ("auto", 16, None)


def test_a_key_of_recon_toml_that_is_no_setting_names_the_file_and_the_closest_key(
    tmp_path: Path,
) -> None:
    (tmp_path / "recon.toml").write_text("page_size = 100\npagesize = 50\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(info.value) == (
        f"{tmp_path / 'recon.toml'}: pagesize is not a recon setting; did you mean page_size?"
    )


def test_a_malformed_recon_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    (tmp_path / "recon.toml").write_text('base_url = "https://x"\n\n[ledger\n')
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.setting == f"{tmp_path / 'recon.toml'}, line 3"
    assert info.value.problem.startswith("is not valid TOML: ")


def test_a_recon_toml_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "recon.toml").write_bytes(b'base_url = "https://caf\xe9"\n')
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(info.value) == f"{tmp_path / 'recon.toml'}: is not UTF-8 text (save it as UTF-8)"
