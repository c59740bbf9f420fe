"""With `[accounts]`, each account reconciles its own bank statements, never the shared ones
(the provider's [bank] terms and RECON_BANK_PROVIDER_MATCH are shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.config.accounts import account_settings
from tests.accounts.conftest import _env, entry, set_keys, write_toml  # noqa: F401 - autouse


def test_statements_are_per_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_keys(monkeypatch, "eu", "us")
    write_toml(
        tmp_path / "recon.toml",
        {
            "eu": entry("eu", "https://eu.example.com", bank_statements="bank/eu/*.xml"),
            "us": entry("us", "https://us.example.com"),
        },
        top="bank_statements = 'bank/shared/*'\nbank_provider_match = 'payments ltd'",
    )
    eu, us = account_settings("eu"), account_settings("us")
    assert (eu.bank_statements, us.bank_statements) == ("bank/eu/*.xml", None)
    assert eu.bank_provider_match == us.bank_provider_match == "payments ltd"
