"""`ClientConfig`: everything the client needs, validated before any request is made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import SecretStr

from recon.errors import ConfigError

if TYPE_CHECKING:
    from recon.settings import Settings

__all__ = ["API_PREFIX", "MAX_PAGE_SIZE", "PAYMENT_STATUSES", "ClientConfig"]

API_PREFIX = "/api/v1"
MAX_PAGE_SIZE = 200
PAYMENT_STATUSES = frozenset(
    {"created", "pending", "confirmed", "partially_refunded", "refunded", "cancelled", "expired"}
)


def _is_loopback(host: str) -> bool:
    from recon.settings import is_loopback

    return is_loopback(host)


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """The client's settings (DESIGN.md §1 defaults); secrets stay `SecretStr`."""

    api_root: str
    api_key: SecretStr | None = field(default=None, repr=False)
    bearer_token: SecretStr | None = field(default=None, repr=False)
    page_size: int = MAX_PAGE_SIZE
    page_size_param: str = "max-records"
    skip_param: str = "skip"
    status_param: str = "status"
    refunds_path: str = "/refunds"
    invoices_path: str = "/invoices"
    idempotency_header: str = "Idempotency-Key"
    max_attempts: int = 5
    timeout_s: float = 30.0
    call_budget_s: float = 300.0
    retry_after_cap_s: float = 120.0
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    allow_insecure_http: bool = False
    # Consecutive pages failing for good before a scan gives up on the rest of a list.
    max_consecutive_failed_pages: int = 3

    def __post_init__(self) -> None:
        root = self.api_root.rstrip("/")
        parts = urlsplit(root)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError("RECON_BASE_URL", "must be an http(s) URL with a host")
        if parts.username or parts.password:
            raise ConfigError("RECON_BASE_URL", "must not carry credentials; use RECON_API_KEY")
        if (
            parts.scheme == "http"
            and not self.allow_insecure_http
            and not _is_loopback(parts.hostname)
        ):
            raise ConfigError(
                "RECON_BASE_URL",
                f"plain http:// to {parts.hostname} would send the API key unencrypted; "
                "use https:// or set RECON_ALLOW_INSECURE_HTTP=true",
            )
        if not root.endswith(API_PREFIX):
            root += API_PREFIX
        object.__setattr__(self, "api_root", root)
        check_page_size(self.page_size, "RECON_PAGE_SIZE")
        for name, value in (
            ("RECON_PAGE_SIZE_PARAM", self.page_size_param),
            ("RECON_SKIP_PARAM", self.skip_param),
            ("RECON_STATUS_PARAM", self.status_param),
            ("RECON_IDEMPOTENCY_HEADER", self.idempotency_header),
        ):
            if not value or not value.strip():
                raise ConfigError(name, "must not be empty")
        for name, path in (
            ("RECON_REFUNDS_PATH", self.refunds_path),
            ("RECON_INVOICES_PATH", self.invoices_path),
        ):
            if path and not path.startswith("/"):
                raise ConfigError(name, "must be empty or start with '/'")
        if self.max_attempts < 1:
            raise ConfigError("RECON_MAX_ATTEMPTS", "must be at least 1")
        for name, number in (
            ("RECON_TIMEOUT_S", self.timeout_s),
            ("RECON_CALL_BUDGET_S", self.call_budget_s),
        ):
            if not number > 0:
                raise ConfigError(name, "must be greater than 0")
        for name, number in (
            ("RECON_RETRY_AFTER_CAP_S", self.retry_after_cap_s),
            ("RECON_BACKOFF_INITIAL_S", self.backoff_initial_s),
            ("RECON_BACKOFF_MAX_S", self.backoff_max_s),
        ):
            if number < 0:
                raise ConfigError(name, "must be 0 or more")

    @classmethod
    def from_settings(cls, settings: Settings) -> ClientConfig:
        """Build the client's config from recon's `Settings`."""
        return cls(
            api_root=settings.api_root,
            api_key=settings.api_key,
            bearer_token=settings.bearer_token,
            page_size=settings.page_size,
            page_size_param=settings.page_size_param,
            skip_param=settings.skip_param,
            status_param=settings.status_param,
            refunds_path=settings.refunds_path,
            invoices_path=settings.invoices_path,
            idempotency_header=settings.idempotency_header,
            max_attempts=settings.max_attempts,
            timeout_s=settings.timeout_s,
            call_budget_s=settings.call_budget_s,
            retry_after_cap_s=settings.retry_after_cap_s,
            backoff_initial_s=settings.backoff_initial_s,
            backoff_max_s=settings.backoff_max_s,
            allow_insecure_http=settings.allow_insecure_http,
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
