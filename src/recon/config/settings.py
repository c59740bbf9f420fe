"""recon's settings: environment (`RECON_*`), an optional `recon.toml`, then CLI flags.

Every open point of the API spec has a documented default here (docs/design.md, "The
API's open points"). Secrets are `SecretStr`: they print as `**********` and are read with
`.get_secret_value()` only
where a request header is built.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from recon.catalogue.resources import CATALOGUE
from recon.config.bank import BankMapping, compile_provider_match
from recon.config.books import LedgerMapping
from recon.errors import ConfigError, redact_url, remember_secret

__all__ = [
    "DEFAULT_FIELDS",
    "DEFAULT_REFUND_FAILED_STATUSES",
    "NotifySettings",
    "Settings",
    "checked_notify_url",
    "config_path",
    "is_loopback",
    "load_settings",
    "notify_settings",
    "setting_name",
    "settings_exactly",
    "settings_from",
    "toml_problem",
]

DEFAULT_REFUND_FAILED_STATUSES = ("failed", "canceled", "cancelled", "rejected", "reversed")
API_PREFIX = "/api/v1"

# The names recon reads for fields the spec does not show (docs/design.md: never guess
# silently): resource -> recon's field -> the field's name in a record (dots reach into
# nested objects), from the catalogue (recon.catalogue.resources: each entry's `fields`). Overridden
# per field in recon.toml (`[fields.disputes] amount = "disputedAmount"`) or RECON_FIELDS
# (JSON); see docs/checks.md.
DEFAULT_FIELDS: dict[str, dict[str, str]] = {
    r.name: dict(r.fields) for r in CATALOGUE.values() if r.fields
}
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")


def is_loopback(host: str) -> bool:
    """True for localhost and the 127.0.0.0/8 and ::1 addresses."""
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def config_path() -> Path:
    """The settings file: the one `RECON_CONFIG` names, else `recon.toml` here."""
    return Path(os.environ.get("RECON_CONFIG", "recon.toml"))


def setting_name(field: str, given: Mapping[str, Any] | None = None) -> str:
    """How the user wrote setting `field`: a value passed in (a flag) or a `RECON_*` variable
    is `RECON_FIELD`; a key of the settings file is `recon.toml's field`."""
    env = f"RECON_{field.upper()}"
    if (given and field in given) or any(k.upper() == env for k in os.environ):
        return env
    path = config_path()
    try:
        with path.open("rb") as fh:
            in_file = field in tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        in_file = False
    return f"{path.name}'s {field}" if in_file else env


_TOML_WHERE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def toml_problem(
    path: Path, exc: tomllib.TOMLDecodeError | UnicodeDecodeError | OSError
) -> ConfigError:
    """A settings file recon cannot read, in one line naming the file (absolute: a command run
    from another folder reads another recon.toml) and the line."""
    path = path.expanduser().absolute()
    if isinstance(exc, UnicodeDecodeError):
        return ConfigError(str(path), "is not UTF-8 text (save it as UTF-8)")
    if isinstance(exc, OSError):
        return ConfigError(str(path), f"cannot be read: {exc.strerror or type(exc).__name__}")
    text = str(exc)
    where = _TOML_WHERE.search(text)
    what = _TOML_WHERE.sub("", text).strip() or "invalid TOML"
    what = what[0].lower() + what[1:]
    if where is None:
        return ConfigError(str(path), f"is not valid TOML: {what}")
    line, column = where.groups()
    return ConfigError(f"{path}, line {line}", f"is not valid TOML: {what} (column {column})")


class _TomlFile(TomlConfigSettingsSource):
    """recon.toml, whose syntax errors are a `ConfigError` naming the file and the line."""

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        try:
            with file_path.open(mode="rb") as fh:
                return tomllib.load(fh)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise toml_problem(Path(file_path), exc) from None


def checked_notify_url(value: SecretStr | None) -> SecretStr | None:
    """RECON_NOTIFY_URL stripped, None when blank; not an http(s) URL with a host: ValueError
    (never echoing it: a webhook's URL is its credential)."""
    if value is None or not value.get_secret_value().strip():
        return None
    parts = urlsplit(value.get_secret_value().strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http(s) URL with a host")
    return SecretStr(value.get_secret_value().strip())


class ReconSources(BaseSettings):
    """Where recon's settings come from, first wins: arguments, `RECON_*` variables, then
    `recon.toml` (or the file `RECON_CONFIG` names). Every settings class of recon is one."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = _TomlFile(settings_cls, toml_file=config_path())
        return (init_settings, env_settings, toml)


class Settings(ReconSources):
    """Every knob of recon, with the defaults docs/design.md settles."""

    model_config = SettingsConfigDict(
        env_prefix="RECON_",
        extra="forbid",
        validate_default=True,
    )

    # The API
    base_url: str | None = Field(
        default=None, description="Service base address; recon appends /api/v1/…"
    )
    api_key: SecretStr | None = Field(default=None, description="x-api-key (secret)")
    bearer_token: SecretStr | None = Field(
        default=None, description="Bearer token for ops 3 and 6 (secret)"
    )
    allow_insecure_http: bool = Field(
        default=False, description="Allow plain http:// to a host other than loopback"
    )

    # Alerts (recon.night.notify)
    notify_url: SecretStr | None = Field(
        default=None,
        description="Webhook that gets one message per run (Slack-compatible; secret)",
    )
    notify_budget_s: float = Field(
        default=20.0, gt=0, le=300, description="Most time an alert may take, retries included"
    )
    notify_on: Literal["failure", "findings", "always"] = Field(
        default="always",
        description="When to alert: failure (a night not complete), findings (that, or new "
        "findings), always (every night)",
    )

    # The audit trail (recon.findings.acks; read from the environment where a line is written)
    user: str | None = Field(
        default=None, description="Who acts on the command line (else the OS user as os:<name>)"
    )
    trail_key: SecretStr | None = Field(
        default=None,
        description="Seals every audit-trail line (HMAC-SHA256); kept from analysts (secret)",
    )
    page_size: int = Field(default=200, ge=1, le=200, description="Records per list request")
    page_size_param: str = Field(default="max-records", min_length=1)
    skip_param: str = Field(default="skip", min_length=1)
    status_param: str = Field(default="status", min_length=1)
    refunds_path: str = Field(default="/refunds", description="Empty: no refunds list offered")
    invoices_path: str = Field(default="/invoices", description="Empty: no invoices list offered")
    invoice_ids_file: Path | None = Field(
        default=None, description="Invoice ids to fetch one by one when no list is offered"
    )
    idempotency_header: str = Field(default="Idempotency-Key", min_length=1)

    # Retries
    max_attempts: int = Field(default=5, ge=1, le=50, description="Attempts per call")
    timeout_s: float = Field(default=30.0, gt=0, le=600, description="Per-attempt timeout")
    call_budget_s: float = Field(
        default=300.0, gt=0, description="Total time one call may take, retries included"
    )
    retry_after_cap_s: float = Field(
        default=120.0, ge=0, description="Longest Retry-After recon will wait"
    )
    backoff_initial_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    # "auto": the number of requests in flight is found while paging (AIMD on latency and
    # 429s, docs/client.md#concurrency); a number fixes it (1 = strictly sequential paging).
    concurrency: int | Literal["auto"] = Field(
        default="auto", description="Requests in flight: auto (adaptive) or a fixed number"
    )
    max_in_flight: int = Field(
        default=16, ge=1, le=64, description="Cap on requests in flight (all resources)"
    )
    rate_limit: float | None = Field(
        default=None, gt=0, le=10_000, description="Requests a second the provider allows"
    )
    narrow_max_requests: int = Field(
        default=32, ge=0, le=1000, description="Extra requests to narrow one failed page"
    )
    max_pages_per_list: int = Field(
        default=250_000,
        ge=1,
        description="Pages one list may take in a night (250,000 x 200 = 50M records); a list "
        "still going then grows as fast as it is read, or never ends: incomplete",
    )
    max_body_mb: float = Field(
        default=8.0,
        gt=0,
        le=4096,
        description="An answer larger than this (MB) is read no further: a failed call",
    )

    # Reconciliation
    refund_failed_statuses: tuple[str, ...] = Field(default=DEFAULT_REFUND_FAILED_STATUSES)
    stuck_after_days: int = Field(default=7, ge=1, description="Non-final state older than this")
    volume_anomaly_ratio: float = Field(
        default=0.5, gt=0, description="Flag a night whose volume moves more than this share"
    )
    fail_on: Literal["error", "warn", "info"] | None = None
    csv_dialect: Literal["excel", "excel-eu"] = Field(
        default="excel",
        description="Report and export CSV: excel (comma, decimal point) or excel-eu (;, comma)",
    )
    fx_rates: Path | None = Field(
        default=None,
        description="CSV currency,rate,date: orders lists across currencies (never a check)",
    )
    refund_grace_hours: int = Field(
        default=48, ge=0, description="Pending refunds younger than this are in flight, not errors"
    )
    fields: dict[str, dict[str, str]] = Field(
        default_factory=lambda: {r: dict(f) for r, f in DEFAULT_FIELDS.items()},
        description="JSON names of the fields the spec does not show, per resource",
    )
    customer_ids: tuple[str, ...] = Field(
        default=(), description="Customers whose payment methods to list"
    )

    # The merchant's books (docs/ledger.md): a file or glob each, mapped in [ledger.*]
    ledger_orders: str | None = Field(
        default=None, description="Books orders: a CSV, Parquet or .xlsx file or glob"
    )
    ledger_refunds: str | None = Field(default=None, description="Books refunds issued")
    ledger_invoices: str | None = Field(default=None, description="Books invoices expected")
    ledger_grace_hours: int = Field(
        default=48, ge=0, le=24 * 365, description="Younger with no counterpart: pending"
    )
    ledger_min_ratio: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="A books input with fewer rows than this share of last night's is suspect",
    )
    ledger_tolerance_minor: int = Field(
        default=0, ge=0, description="Amounts within this many minor units match (absolute)"
    )
    ledger_tolerance_bps: int = Field(
        default=0, ge=0, le=10_000, description="Amounts within this many basis points match"
    )
    ledger_date_window_days: int = Field(
        default=3, ge=0, le=366, description="Proposed matches: dates at most this far apart"
    )
    ledger_database_url: SecretStr | None = Field(
        default=None, description="Database URL of [ledger.*] queries (secret)"
    )
    ledger: LedgerMapping = Field(default_factory=LedgerMapping)

    # The bank leg (docs/bank.md): statements, the provider's credits, the [bank] table
    bank_statements: str | None = Field(default=None, description="Bank statements: file or glob")
    bank_provider_match: str | None = Field(
        default=None, description="Regex (any case) on counterparty + remittance: provider credits"
    )
    bank: BankMapping = Field(default_factory=BankMapping)

    # Several merchant accounts (recon.config.accounts): `[accounts.<name>]` tables of recon.toml,
    # validated per account when a night starts; empty = one account from these settings.
    accounts: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="[accounts.<name>] of recon.toml (recon.config.accounts)"
    )

    # Where things go
    db: Path = Field(default=Path("data/recon.duckdb"), description="Published warehouse file")
    landing: Path = Field(default=Path("data/landing"), description="Raw landing root")
    reports: Path = Field(default=Path("reports"), description="Report folders root")
    # Bounded so that memory does not grow with the merchant: beyond it DuckDB spills to
    # <db>.tmp. "auto" sizes it (and DuckDB's threads) from the machine: a quarter of the
    # memory available, at most 192 MiB (recon.warehouse.memory; a 1M-payment night under ~500 MB).
    duckdb_memory_limit: str | None = Field(
        default="auto",
        description="DuckDB memory limit for loads and checks: auto (from the machine) or e.g. 1GB",
    )
    landing_batch_records: int = Field(
        default=20_000, ge=1, le=1_000_000, description="Records per landed Parquet batch"
    )

    # Scheduling and logs
    schedule_cron: str = Field(default="0 2 * * *")
    timezone: str = Field(default="UTC")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Least severe log line shown (--verbose: DEBUG)"
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines on stderr: text, or json (one object a line: time, level, "
        "run_id, account, step, resource, message)",
    )
    log_file: Path | None = Field(
        default=None, description="Also append the log lines to this file"
    )

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"must be an http(s) URL with a host, got {redact_url(value)!r}")
        if parts.username or parts.password:
            raise ValueError("must not carry credentials; use RECON_API_KEY")
        if parts.query or parts.fragment:
            raise ValueError("must not carry a query or fragment")
        path = parts.path.rstrip("/")
        if path.endswith(API_PREFIX):
            path = path[: -len(API_PREFIX)]
        return f"{parts.scheme}://{parts.netloc}{path}"

    @field_validator("notify_url")
    @classmethod
    def _check_notify_url(cls, value: SecretStr | None) -> SecretStr | None:
        return checked_notify_url(value)

    @field_validator("bank_provider_match")
    @classmethod
    def _check_provider_match(cls, value: str | None) -> str | None:
        return compile_provider_match(value).pattern if value else None

    @field_validator("concurrency", mode="before")
    @classmethod
    def _check_concurrency(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            if text in ("", "auto"):
                return "auto"
            if not text.isdigit():
                raise ValueError("must be auto or a whole number from 1 to 64")
            value = int(text)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 64:
            raise ValueError("must be auto or a whole number from 1 to 64")
        return value

    @field_validator("rate_limit", mode="before")
    @classmethod
    def _empty_rate(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("duckdb_memory_limit")
    @classmethod
    def _check_size(cls, value: str | None) -> str | None:
        if value and value.strip().lower() == "auto":
            return "auto"
        if value and not re.fullmatch(r"\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value):
            raise ValueError("must be auto or a size like 512MB or 2GB")
        return value or None

    @field_validator("page_size_param", "skip_param", "status_param", "idempotency_header")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("refunds_path", "invoices_path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith("/"):
            raise ValueError(f"must be empty or start with '/', got {value!r}")
        return value.rstrip("/") if value != "/" else value

    @field_validator("refund_failed_statuses", mode="before")
    @classmethod
    def _split_statuses(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(s.strip().lower() for s in value.split(",") if s.strip())
        return value

    @field_validator("fields", mode="after")
    @classmethod
    def _merge_fields(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        merged = {r: dict(f) for r, f in DEFAULT_FIELDS.items()}
        for resource, mapping in value.items():
            if resource not in DEFAULT_FIELDS:
                raise ValueError(
                    f"unknown resource {resource!r}; known: {', '.join(DEFAULT_FIELDS)}"
                )
            for field, name in mapping.items():
                if field not in DEFAULT_FIELDS[resource]:
                    raise ValueError(
                        f"{resource} has no mapped field {field!r}; "
                        f"known: {', '.join(DEFAULT_FIELDS[resource])}"
                    )
                if not _FIELD_NAME.fullmatch(name):
                    raise ValueError(
                        f"[fields.{resource}] {field}: {name!r} is not a field name "
                        "(letters, digits, _ and -, dots into nested objects)"
                    )
                merged[resource][field] = name
        return merged

    @field_validator("customer_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(s.strip() for s in value.split(",") if s.strip())
        return value

    @property
    def api_root(self) -> str:
        """The base URL with `/api/v1` appended; requires `base_url`."""
        if not self.base_url:
            raise ConfigError("RECON_BASE_URL", "is not set (or pass --base-url, or --sandbox)")
        return self.base_url + API_PREFIX

    def check_transport(self) -> None:
        """The base URL is set, and plain http:// goes only to loopback unless allowed."""
        if not self.base_url:
            raise ConfigError("RECON_BASE_URL", "is not set (or pass --base-url, or --sandbox)")
        host = urlsplit(self.base_url).hostname or ""
        if (
            self.base_url.startswith("http://")
            and not is_loopback(host)
            and not self.allow_insecure_http
        ):
            raise ConfigError(
                "RECON_BASE_URL",
                f"plain http:// to {host} would send the API key unencrypted; use https:// "
                "or set RECON_ALLOW_INSECURE_HTTP=true",
            )

    def require_remote_ready(self) -> None:
        """Check what a run against the API needs, before any request is made."""
        self.check_transport()
        if self.api_key is None or not self.api_key.get_secret_value():
            raise ConfigError("RECON_API_KEY", "is not set")


class NotifySettings(ReconSources):
    """The webhook alone, read where `Settings` reads it: an abort caused by another bad
    setting still alerts, and says nothing when no webhook is set."""

    model_config = SettingsConfigDict(env_prefix="RECON_", extra="ignore")
    notify_url: SecretStr | None = None
    notify_budget_s: float = Settings.model_fields["notify_budget_s"].default

    @field_validator("notify_url")
    @classmethod
    def _check_notify_url(cls, value: SecretStr | None) -> SecretStr | None:
        return checked_notify_url(value)


class _NotifyFromEnv(NotifySettings):
    """The webhook from the environment alone: what still alerts when recon.toml is broken."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings)


def notify_settings() -> NotifySettings | None:
    """The webhook alone, for an alert about a night stopped by a bad setting: read from the
    environment only when recon.toml itself is broken; None when the webhook's own setting
    is bad (no request is made to what is not an http(s) URL)."""
    try:
        return NotifySettings()
    except ConfigError:  # recon.toml cannot be read
        pass
    except ValidationError:
        return None
    try:
        return _NotifyFromEnv()
    except ValidationError:
        return None


class _ValuesOnly(Settings):
    """`Settings` read from the values given alone: no environment, no `recon.toml`."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def settings_from(**values: Any) -> Settings:
    """Settings from `values` and the defaults only; a bad value is a `ConfigError`."""
    return _validated(_ValuesOnly, values)


def load_settings(**overrides: Any) -> Settings:
    """Build settings from env, `recon.toml` and `overrides`; a bad value is a `ConfigError`.

    `overrides` whose value is None are ignored, so CLI flags left unset do not mask the
    environment.
    """
    settings = _validated(Settings, {k: v for k, v in overrides.items() if v is not None})
    for name in ("api_key", "bearer_token", "notify_url", "ledger_database_url", "trail_key"):
        secret = getattr(settings, name)
        remember_secret(secret.get_secret_value() if secret is not None else None)
    for table in ("orders", "refunds", "invoices"):
        url = settings.ledger.table(table).url
        remember_secret(url.get_secret_value() if url is not None else None)
    return settings


def settings_exactly(**values: Any) -> Settings:
    """Settings from env, `recon.toml` and `values`, None values kept (they clear a setting)."""
    return _validated(Settings, values)


def _validated(cls: type[Settings], values: dict[str, Any]) -> Settings:
    try:
        return cls(**values)
    except SettingsError as exc:  # a value the source could not parse, e.g. RECON_FIELDS JSON
        parsed = re.search(r'field "(\w+)" from source "(\w+)"', str(exc))
        if parsed is None:
            raise ConfigError("settings", str(exc).splitlines()[0]) from None
        field, source = parsed.groups()
        name = setting_name(field) if source.startswith("Toml") else f"RECON_{field.upper()}"
        cause = f": {exc.__cause__}" if isinstance(exc.__cause__, ValueError) else ""
        raise ConfigError(name, f"is not valid JSON{cause}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "settings"
        if first["type"] == "extra_forbidden" and len(first["loc"]) == 1 and field not in values:
            import difflib  # a key of recon.toml that is no setting (a typo, most often)

            close = difflib.get_close_matches(field, list(Settings.model_fields), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            problem = f"{field} is not a recon setting{hint}"
            raise ConfigError(str(config_path().absolute()), problem) from None
        name = setting_name(field, values) if field in Settings.model_fields else field
        if field == "ledger" and len(first["loc"]) > 1:  # a key of recon.toml's [ledger.*]
            name = f"[ledger.{first['loc'][1]}] " + ".".join(map(str, first["loc"][2:]))
        # Never echo the offending input: it may be a secret.
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(name, message) from None
