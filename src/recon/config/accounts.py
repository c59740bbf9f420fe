"""Several merchant accounts in one `recon.toml`: `[accounts.<name>]`.

    [accounts.eu]
    base_url = "https://eu.payments.example.com"
    api_key_env = "RECON_EU_API_KEY"          # the NAME of the variable holding the key
    bearer_token_env = "RECON_EU_BEARER_TOKEN"
    rate_limit = 100                          # any non-secret setting, for this account only
    [accounts.eu.ledger.orders]
    path = "books/eu/orders-*.csv"

Each account is the single-account night of today with its own settings: those of the
environment and `recon.toml` (the top level is what every account shares), then the
account's own table, then its key and token read from the variables it names. Its files are
its own, derived from the top-level paths unless the entry names them:

    <db's folder>/accounts/<name>/recon.duckdb   its warehouse (one writer: its own night)
    <landing>/<name>/<run_id>/…                  its landing
    <reports>/<name>/<run_id>/…                  its reports

and the top-level `db` becomes the consolidated file (`recon.warehouse.consolidated`). A run reaches
an account through the non-secret override `account: <name>` (`recon.night.nightly.settings_for`),
so a secret never travels as an argument. Without `[accounts]` nothing here is used.

A bad entry is a `ConfigError` naming the account and the setting, e.g.
`[accounts.eu] page_size: Input should be less than or equal to 200`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from recon.config.books import LedgerMapping
from recon.config.settings import Settings, load_settings, settings_exactly
from recon.errors import ConfigError, remember_secret

__all__ = [
    "ACCOUNT_NAME",
    "account_db",
    "account_names",
    "account_paths",
    "account_settings",
    "group_settings",
    "in_account",
]

# An account's name is a folder name and a SQL identifier: lower case, digits, underscore.
ACCOUNT_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Secrets never go in recon.toml: an account names the variables that hold them.
_SECRETS = {
    "api_key": "api_key_env",
    "bearer_token": "bearer_token_env",
    "ledger_database_url": "ledger_database_url_env",
    "notify_url": None,
}
# Settings of the night as a whole, not of an account.
_GROUP_ONLY = {
    "accounts",
    "schedule_cron",
    "timezone",
    "log_level",
    "log_format",
    "log_file",
    "notify_budget_s",
    "notify_on",
}
_OWN_KEYS = {"api_key_env", "bearer_token_env", "ledger_database_url_env"}
_BOOKS = ("ledger_orders", "ledger_refunds", "ledger_invoices")


def _plain(overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    values = dict(overrides or {})
    values.pop("account", None)
    values.pop("credentials", None)
    values.pop("offline", None)
    return values


def group_settings(overrides: Mapping[str, Any] | None = None) -> Settings:
    """The top-level settings (what every account shares), `[accounts]` checked by name."""
    settings = load_settings(**_plain(overrides))
    for name in settings.accounts:
        if not ACCOUNT_NAME.fullmatch(name):
            raise ConfigError(
                f"[accounts.{name}]",
                "an account's name is lower-case letters, digits and _ (at most 32), "
                "starting with a letter: it names its folders",
            )
        if not isinstance(settings.accounts[name], dict):
            raise ConfigError(f"[accounts.{name}]", "must be a table")
    return settings


def account_names(overrides: Mapping[str, Any] | None = None) -> list[str]:
    """The configured accounts, sorted; empty without `[accounts]` (one account, as before)."""
    return sorted(group_settings(overrides).accounts)


def account_paths(top: Settings, name: str) -> dict[str, Path]:
    """Where account `name`'s warehouse, landing and reports go by default."""
    return {
        "db": top.db.parent / "accounts" / name / top.db.name,
        "landing": top.landing / name,
        "reports": top.reports / name,
    }


def in_account(name: str, exc: ConfigError) -> ConfigError:
    """`exc` (a single-account setting's error) as account `name`'s: `RECON_PAGE_SIZE` ->
    `[accounts.eu] page_size`, `[ledger.orders] path` -> `[accounts.eu.ledger.orders] path`."""
    setting = exc.setting
    if setting.startswith("[accounts."):
        return exc
    if setting.startswith("[ledger."):
        setting = f"[accounts.{name}.{setting[1:]}"
    elif setting.startswith("RECON_"):
        setting = f"[accounts.{name}] {setting.removeprefix('RECON_').lower()}"
    else:
        setting = f"[accounts.{name}] {setting}"
    return ConfigError(setting, exc.problem)


def account_db(name: str, overrides: Mapping[str, Any] | None = None) -> Path:
    """Account `name`'s published warehouse, without reading its secrets (analysts' commands)."""
    top = group_settings(overrides)
    if name not in top.accounts:
        known = ", ".join(sorted(top.accounts)) or "none"
        raise ConfigError("--account", f"no account {name!r} in [accounts] (known: {known})")
    own = top.accounts[name].get("db")
    return Path(own) if own else account_paths(top, name)["db"]


def _secret(
    name: str, entry: Mapping[str, Any], key: str, *, required: bool, read: bool = True
) -> SecretStr | None:
    var = entry.get(key)
    setting = f"[accounts.{name}] {key}"
    if var is None:
        if required:
            raise ConfigError(setting, "is required: the name of the variable holding it")
        return None
    if not isinstance(var, str) or not _ENV_NAME.fullmatch(var):
        raise ConfigError(
            setting, "must be the name of an environment variable, e.g. RECON_EU_API_KEY"
        )
    if not read:  # a command that sends no request: the variable need not be set here
        return None
    value = os.environ.get(var, "")
    if not value:
        raise ConfigError(setting, f"{var} is not set in the environment")
    remember_secret(value)  # never echoed, whatever message it might reach (recon.errors.scrub)
    return SecretStr(value)


def account_settings(
    name: str,
    overrides: Mapping[str, Any] | None = None,
    *,
    secrets: bool = True,
    api: bool = True,
) -> Settings:
    """Account `name`'s settings: shared ones, its own table, its secrets from the environment.

    `overrides` are the run's non-secret overrides (paths, …); a `base_url` among them is
    refused: every account names its own. `api=False` (a step that sends no request but
    reads the books, `recon load`) leaves the key and token unread; `secrets=False`
    (commands that read only the warehouse, e.g. `recon check`, `recon close`) leaves every
    secret unread. The variables' names are checked all the same.
    """
    values = _plain(overrides)
    if values.get("base_url"):
        raise ConfigError("--base-url", "not with [accounts]: each account names its base_url")
    top = group_settings(values)
    if name not in top.accounts:
        known = ", ".join(sorted(top.accounts)) or "none"
        raise ConfigError("--account", f"no account {name!r} in [accounts] (known: {known})")
    entry = top.accounts[name]
    where = f"[accounts.{name}]"
    for key in entry:
        if key in _SECRETS:
            instead = _SECRETS[key]
            hint = f"name its environment variable with {instead}" if instead else "group-wide"
            raise ConfigError(f"{where} {key}", f"a secret never goes in recon.toml: {hint}")
        if key in _GROUP_ONLY:
            raise ConfigError(f"{where} {key}", "is a setting of the whole night, not an account")
        if key not in Settings.model_fields and key not in _OWN_KEYS:
            raise ConfigError(f"{where} {key}", "unknown setting")
    if not entry.get("base_url"):
        raise ConfigError(f"{where} base_url", "is required")
    own = {k: v for k, v in entry.items() if k not in _OWN_KEYS and k != "ledger"}
    chosen: dict[str, Any] = {**values, **own}
    for key, default in account_paths(top, name).items():
        chosen[key] = own.get(key, default)
    send = secrets and api
    chosen["api_key"] = _secret(name, entry, "api_key_env", required=True, read=send)
    chosen["bearer_token"] = _secret(name, entry, "bearer_token_env", required=False, read=send)
    chosen["ledger_database_url"] = _secret(
        name, entry, "ledger_database_url_env", required=False, read=secrets
    )
    chosen["notify_url"] = None  # the night sends one alert for every account (recon.accounts)
    for key in (*_BOOKS, "bank_statements"):  # books, statements: per account, never shared
        chosen[key] = own.get(key)
    try:  # a model, not a dict: pydantic-settings would merge a dict with [ledger.*]
        chosen["ledger"] = LedgerMapping.model_validate(entry.get("ledger") or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(map(str, first["loc"]))
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"[accounts.{name}.ledger] {loc}", message) from None
    try:
        return settings_exactly(**chosen)
    except ConfigError as exc:
        raise in_account(name, exc) from None
