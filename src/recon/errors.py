"""Every error recon raises, in one tree.

    ReconError
    ├── ConfigError (also ValueError)      a setting or argument is wrong; raised before any request
    │   └── UsageError                     an argument names nothing that exists (a finding key)
    ├── ApiError                           the API answered with an error (or garbage) for good
    │   └── AuthError                      401/403: the key or token was refused; stops the run
    ├── RetryAfterTooLongError             the server asked us to wait longer than the cap
    ├── TransportError                     no usable answer: connect/read failure, timeout, TLS
    ├── PagingError                        a list's paging makes no sense (a nextOffset that
    │                                      does not advance, a list shrinking without end)
    ├── CheckDefinitionError               a sql/checks file is malformed
    └── WarehouseError                     the DuckDB file cannot be opened, locked or published

`ApiError` instances are built from a response in exactly one place
(`recon.api.sender` via `ApiError.from_response`; a 2xx body of the wrong shape via
`ApiError.unexpected_shape`). All errors pickle: Prefect moves them
between processes. No error message ever holds a secret: URLs are redacted and headers are
never part of a message.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ApiError",
    "AuthError",
    "CheckDefinitionError",
    "ConfigError",
    "PagingError",
    "ReconError",
    "RetryAfterTooLongError",
    "TransportError",
    "UsageError",
    "WarehouseError",
    "disk_full",
    "duckdb_refusal",
    "redact_url",
    "remember_secret",
    "scrub",
    "secret_query_key",
]

# Query parameters whose values are never shown, whatever their case.
_SECRET_QUERY_KEYS = frozenset(
    {"api_key", "apikey", "key", "token", "access_token", "client_token", "secret", "password"}
)


#: The environment variables that hold secrets; their values are scrubbed from every line
#: recon shows (`scrub`), whatever their shape (a URL, a libpq keyword string, a token).
SECRET_ENV = (
    "RECON_API_KEY",
    "RECON_BEARER_TOKEN",
    "RECON_LEDGER_DATABASE_URL",
    "RECON_NOTIFY_URL",
)
_SECRETS: set[str] = set()
_PASSWORD = re.compile(r"(?i)\b(password|passwd|pwd|secret|token)(\s*[=:]\s*)('[^']*'|\S+)")


def remember_secret(value: str | None) -> None:
    """A secret value (a setting read from recon.toml, say) that `scrub` must hide."""
    if value and len(value.strip()) >= 4:
        _SECRETS.add(value.strip())


def scrub(text: str) -> str:
    """`text` with every known secret value, and any `password=…`, replaced by `***`.

    The last line of defence before a message reaches a terminal or an alert: a secret
    setting's value is never echoed, whether or not the code that built the message
    remembered to redact it."""
    known = set(_SECRETS)
    for name in SECRET_ENV:
        value = os.environ.get(name, "").strip()
        if len(value) >= 4:
            known.add(value)
    for value in sorted(known, key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return _PASSWORD.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` says a disk (or a quota) is full, from the OS or from DuckDB."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return True
    text = str(exc).lower()
    return "no space left" in text or "disk quota" in text or "file too large" in text


def secret_query_key(name: str) -> bool:
    """Whether a query parameter's value is never shown (`redact_url`), whatever its case."""
    return name.lower().replace("-", "_") in _SECRET_QUERY_KEYS


def redact_url(url: str) -> str:
    """Return `url` with any userinfo and secret-looking query values masked."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = [
            (k, "***" if secret_query_key(k) else v)
            for k, v in parse_qsl(query, keep_blank_values=True)
        ]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class ReconError(Exception):
    """Base class of every error recon raises on purpose."""


class ConfigError(ReconError, ValueError):
    """A setting or argument is invalid; `setting` names it."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        self.problem = problem
        super().__init__(setting, problem)

    def __str__(self) -> str:
        return f"{self.setting}: {self.problem}"


class UsageError(ConfigError):
    """An argument names what does not exist (an unknown finding key): said as it is, not as
    a bad setting (exit 2 all the same)."""

    def __str__(self) -> str:
        return self.problem


class ApiError(ReconError):
    """The API answered with an error status (or an unusable 2xx body) for good."""

    def __init__(
        self,
        *,
        status: int | None,
        code: str | None,
        message: str,
        request_id: str | None,
        method: str,
        url: str,
        retryable: bool,
        attempts: int = 1,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.method = method
        self.url = redact_url(url)
        self.retryable = retryable
        self.attempts = attempts
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self._fields()))

    def _fields(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "request_id": self.request_id,
            "method": self.method,
            "url": self.url,
            "retryable": self.retryable,
            "attempts": self.attempts,
        }

    @classmethod
    def from_response(
        cls,
        response: httpx.Response,
        *,
        retryable: bool,
        attempts: int = 1,
        scheme: str = "api_key",
        secrets: Iterable[str] = (),
        code: str | None = None,
        message: str | None = None,
    ) -> ApiError:
        """Build the error for `response`: the one place an `ApiError` is made from HTTP.

        The envelope (`error`, `message`, `requestId`) is read when the body is JSON; the
        request id falls back to the `X-Request-Id` / `Request-Id` headers. 401/403 give an
        `AuthError`. `code`/`message` override the envelope (used for unusable 2xx bodies).
        Any of `secrets` echoed by the server is masked.
        """
        env = _envelope(response)
        env_code = env.get("error")
        env_msg = env.get("message")
        env_rid = env.get("requestId")
        request_id = (
            env_rid
            if isinstance(env_rid, str) and env_rid
            else response.headers.get("x-request-id") or response.headers.get("request-id")
        )
        final_code = code if code is not None else (env_code if isinstance(env_code, str) else None)
        if message is None:
            message = env_msg if isinstance(env_msg, str) and env_msg else response.reason_phrase
            message = message or f"HTTP {response.status_code}"
        message = _scrub(message[:500], secrets)
        fields: dict[str, Any] = {
            "status": response.status_code,
            "code": _scrub(final_code, secrets) if final_code else None,
            "message": message,
            "request_id": _scrub(request_id, secrets) if request_id else None,
            "method": response.request.method,
            "url": _scrub(str(response.request.url), secrets),
            "retryable": retryable,
            "attempts": attempts,
        }
        if response.status_code in (401, 403):
            return AuthError(scheme=scheme, **{**fields, "retryable": False})
        return cls(**fields)

    @classmethod
    def unexpected_shape(
        cls,
        *,
        status: int,
        what: str,
        problem: str,
        request_id: str | None,
        method: str,
        url: str,
    ) -> ApiError:
        """A 2xx answer whose JSON does not have the shape `what` must have (not retried)."""
        return cls(
            status=status,
            code="unexpected_shape",
            message=f"{what}: {problem}",
            request_id=request_id,
            method=method,
            url=url,
            retryable=False,
        )

    @property
    def path_and_query(self) -> str:
        """The request's path and query, as shown in messages."""
        parts = urlsplit(self.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def __str__(self) -> str:
        head = " ".join(str(x) for x in (self.status, self.code) if x is not None) or "error"
        rid = self.request_id if self.request_id else "none given"
        return f"{head}: {self.message} (request_id={rid}) {self.method} {self.path_and_query}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class AuthError(ApiError):
    """401/403: the API key or bearer token was refused. The run stops at once."""

    def __init__(self, *, scheme: str = "api_key", **fields: Any) -> None:
        self.scheme = scheme  # "api_key" or "bearer": which credential was refused
        super().__init__(**fields)

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "scheme": self.scheme}

    def __str__(self) -> str:
        which = (
            "bearer token (RECON_BEARER_TOKEN)"
            if self.scheme == "bearer"
            else ("API key (RECON_API_KEY)")
        )
        return f"{super().__str__()} — the {which} was refused; check that it is set and valid"


def _envelope(response: httpx.Response) -> dict[str, Any]:
    """The error envelope of `response`, or {} when the body is not a JSON object."""
    try:
        import orjson

        body = orjson.loads(response.content)
    except Exception:  # any unreadable body simply has no envelope
        return {}
    return body if isinstance(body, dict) else {}


def _scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _rebuild(cls: type[ApiError], fields: dict[str, Any]) -> ApiError:
    return cls(**fields)


class RetryAfterTooLongError(ReconError):
    """The server asked for a wait longer than the configured cap; the call fails."""

    def __init__(self, *, requested_s: float, cap_s: float, request_id: str | None, what: str):
        self.requested_s = requested_s
        self.cap_s = cap_s
        self.request_id = request_id
        self.what = what
        super().__init__(requested_s, cap_s, request_id, what)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_retry_after,
            (self.requested_s, self.cap_s, self.request_id, self.what),
        )

    def __str__(self) -> str:
        rid = self.request_id or "none given"
        return (
            f"server asked to wait {self.requested_s:.0f}s before retrying {self.what}, more than "
            f"the cap of {self.cap_s:.0f}s (RECON_RETRY_AFTER_CAP_S); request_id={rid}"
        )


def _rebuild_retry_after(
    requested_s: float, cap_s: float, request_id: str | None, what: str
) -> RetryAfterTooLongError:
    return RetryAfterTooLongError(
        requested_s=requested_s, cap_s=cap_s, request_id=request_id, what=what
    )


class TransportError(ReconError):
    """No usable HTTP answer: connection refused/reset, timeout, TLS failure."""

    def __init__(self, *, kind: str, detail: str, method: str, url: str, retryable: bool):
        self.kind = kind
        self.detail = detail
        self.method = method
        self.url = redact_url(url)
        self.retryable = retryable
        super().__init__(kind, detail, method, self.url, retryable)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_transport,
            (self.kind, self.detail, self.method, self.url, self.retryable),
        )

    def __str__(self) -> str:
        path = urlsplit(self.url)
        shown = path.path + (f"?{path.query}" if path.query else "")
        return f"{self.kind}: {self.detail} {self.method} {shown}"


def _rebuild_transport(
    kind: str, detail: str, method: str, url: str, retryable: bool
) -> TransportError:
    return TransportError(kind=kind, detail=detail, method=method, url=url, retryable=retryable)


class PagingError(ReconError):
    """A list's paging fields make no sense (e.g. a `nextOffset` that does not advance)."""


class CheckDefinitionError(ReconError):
    """A check file is malformed (bad header, bad SQL); that check is `errored`."""


class WarehouseError(ReconError):
    """The warehouse cannot be opened, locked, written or published."""


def duckdb_refusal(exc: BaseException) -> str | None:
    """The first line of an error DuckDB raised (a table the file has not, …), to show in
    place of a traceback; None for any other error. DuckDB is not imported for it."""
    if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
        return None
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
