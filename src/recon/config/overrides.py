"""A night's settings from its overrides: light to import (the CLI checks settings with it
before anything else is imported or started; `recon.night.nightly` re-exports it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recon.config.settings import Settings, load_settings
from recon.errors import ConfigError
from recon.plugins import CREDENTIALS_GROUP, load_plugin


def settings_for(overrides: Mapping[str, Any] | None) -> Settings:
    """Settings from env + recon.toml + these non-secret overrides.

    `credentials: "sandbox"` (set by `recon nightly --sandbox`) takes the key and token the
    bundled sandbox accepts from the provider it registers (`recon.plugins`), read in this
    process: never a secret in the overrides, which an orchestrator stores. `account: <name>`
    reads that account's settings (recon.config.accounts); `offline: "books"` (a step that
    sends no request) leaves its API key and token unread, `offline: "warehouse"` (a step
    that reads only the warehouse) every secret of it: their variables need not be set.
    """
    values = dict(overrides or {})
    offline = values.pop("offline", None)
    if offline not in (None, "books", "warehouse"):
        raise ConfigError("offline", f"is books or warehouse, not {offline!r}")
    if "account" in values:  # one of several accounts: its own settings
        from recon.config.accounts import account_settings

        return account_settings(
            str(values.pop("account")),
            values,
            secrets=offline != "warehouse",
            api=offline is None,
        )
    provider = values.pop("credentials", None)
    if provider:  # a named provider (entry point group recon.credentials), e.g. the sandbox's
        key, token = load_plugin(CREDENTIALS_GROUP, str(provider), setting="credentials")()
        values.update(api_key=key, bearer_token=token)
    return load_settings(**values)
