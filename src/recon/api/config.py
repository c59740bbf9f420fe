"""`ClientConfig`: everything the client needs, validated before any request is made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from recon.errors import ConfigError

if TYPE_CHECKING:
    from recon.config.settings import Settings

__all__ = ["MAX_PAGE_SIZE", "PAYMENT_STATUSES", "ClientConfig"]

MAX_PAGE_SIZE = 200
PAYMENT_STATUSES = frozenset(
    {"created", "pending", "confirmed", "partially_refunded", "refunded", "cancelled", "expired"}
)


# The `Settings` fields the client takes as they are (their defaults and checks live there).
_FROM_SETTINGS = (
    "api_key",
    "bearer_token",
    "page_size",
    "page_size_param",
    "skip_param",
    "status_param",
    "refunds_path",
    "invoices_path",
    "idempotency_header",
    "max_attempts",
    "timeout_s",
    "call_budget_s",
    "retry_after_cap_s",
    "backoff_initial_s",
    "backoff_max_s",
    "max_in_flight",
    "rate_limit",
    "narrow_max_requests",
    "max_body_mb",
    "max_pages_per_list",
)


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """The client's view of recon's `Settings`, validated there before any request.

    Build it with `from_settings(settings)`, or `for_base_url(url, **settings)` outside a
    run (a library caller, a test): both validate through `Settings`, so the defaults and
    the URL rules are written once. Secrets stay `SecretStr`.
    """

    api_root: str
    api_key: SecretStr | None = field(repr=False)
    bearer_token: SecretStr | None = field(repr=False)
    page_size: int
    page_size_param: str
    skip_param: str
    status_param: str
    refunds_path: str
    invoices_path: str
    idempotency_header: str
    max_attempts: int
    timeout_s: float
    call_budget_s: float
    retry_after_cap_s: float
    backoff_initial_s: float
    backoff_max_s: float
    # Consecutive pages failing for good before a scan gives up on the rest of a list.
    max_consecutive_failed_pages: int = 3
    # Requests in flight: None = found while paging (RECON_CONCURRENCY=auto), else fixed.
    concurrency: int | None = None
    max_in_flight: int = 16
    rate_limit: float | None = None  # requests a second, when the provider publishes one
    narrow_max_requests: int = 32  # extra requests to narrow one failed page (issue 13)
    max_pages_per_list: int = 250_000  # a list still going after this many pages: incomplete
    max_body_mb: float = 8.0  # an answer larger is read no further (RECON_MAX_BODY_MB)

    @classmethod
    def from_settings(cls, settings: Settings, **client: Any) -> ClientConfig:
        """The client's config from recon's `Settings` (`client`: client-only knobs)."""
        settings.check_transport()
        values = {name: getattr(settings, name) for name in _FROM_SETTINGS}
        concurrency = settings.concurrency
        values["concurrency"] = None if concurrency == "auto" else int(concurrency)
        return cls(api_root=settings.api_root, **{**values, **client})

    @classmethod
    def for_base_url(
        cls, base_url: str, *, max_consecutive_failed_pages: int = 3, **settings: Any
    ) -> ClientConfig:
        """A config for `base_url`: recon's defaults, then `settings` (Settings field names).

        The environment and `recon.toml` are not read; a bad value is a `ConfigError`.
        """
        from recon.config.settings import settings_from

        return cls.from_settings(
            settings_from(base_url=base_url, **settings),
            max_consecutive_failed_pages=max_consecutive_failed_pages,
        )

    def secret_values(self) -> tuple[str, ...]:
        """The secret strings, to mask should a server echo one back."""
        return tuple(
            s.get_secret_value()
            for s in (self.api_key, self.bearer_token)
            if s is not None and s.get_secret_value()
        )


def check_page_size(value: int, name: str = "max_records") -> int:
    """`value` if it is a valid page size (1..200), else a `ConfigError` naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise ConfigError(name, f"must be an integer from 1 to {MAX_PAGE_SIZE}, got {value!r}")
    return value


def check_skip(value: int, name: str = "skip") -> int:
    """`value` if it is a valid skip count (>= 0), else a `ConfigError` naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(name, f"must be an integer >= 0, got {value!r}")
    return value


def check_id(value: str, name: str = "id") -> str:
    """`value` if it is a usable path id, else a `ConfigError` naming `name`."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(name, "must be a non-empty string")
    if "/" in value or value in (".", ".."):
        raise ConfigError(name, f"must not contain '/' or be a dot segment, got {value!r}")
    return value


def check_payment_status(value: str | None, name: str = "status") -> str | None:
    """`value` if it is None or a known payment status, else a `ConfigError`."""
    if value is not None and value not in PAYMENT_STATUSES:
        known = ", ".join(sorted(PAYMENT_STATUSES))
        raise ConfigError(name, f"unknown payment status {value!r}; expected one of {known}")
    return value
