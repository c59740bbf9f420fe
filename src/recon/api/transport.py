"""The HTTP transport under recon's httpx client: httpx's own (`httpx.HTTPTransport`:
httpcore's connection pool, h11's HTTP/1.1), with every socket operation of an attempt
bounded by the attempt's deadline, and the proxies the environment names, never for
loopback.

httpcore's timeouts are per socket operation: a server trickling its answer's headers one
byte at a time, each byte within the read timeout, would hold an attempt for as long as it
likes (91 s in issue 36). The network backend under the pool (`_Backend`, httpcore's own
wrapped) therefore gives each connect, TLS handshake, read and write at most what is left
of the deadline the sender set for the attempt (`attempt_deadline`), and none once it has
passed: the attempt ends as an `httpx.ReadTimeout` (or connect/write timeout) at its
deadline, whatever the server trickles.

Proxies: `httpx.Client` ignores the environment's proxies when it is given a transport, so
`client_transports` reads them as httpx would (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
lower case first, and `NO_PROXY`) and mounts a transport per proxy; 127.0.0.1, ::1 and
localhost are always reached directly (a dead proxy must not break the sandbox). A proxy URL
that cannot be used is a `ConfigError` naming its variable, before any request.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import ssl
import time
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

from recon.errors import ConfigError

__all__ = [
    "LOOPBACK",
    "Transport",
    "attempt_deadline",
    "client_transports",
    "environment_proxies",
    "keep_loopback_direct",
]

#: Hosts never reached through a proxy.
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

#: The monotonic time by which the current attempt (this thread's, this task's) must end.
_DEADLINE: ContextVar[float | None] = ContextVar("recon_attempt_deadline", default=None)


@contextmanager
def attempt_deadline(seconds: float) -> Iterator[None]:
    """Every socket operation of the requests sent in this block ends `seconds` from now
    at the latest (on the real monotonic clock)."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _bounded(timeout: float | None, timed_out: type[httpcore.TimeoutException]) -> float | None:
    """`timeout` (seconds, None: none), no longer than what is left of the deadline."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:  # a socket timeout of 0 would mean non-blocking, not "time is up"
        raise timed_out("the answer did not arrive in full within the attempt's time")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """httpcore's network stream, each operation bounded by the attempt's deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's network backend whose streams keep to the attempt's deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(
            self._backend.connect_tcp(host, port, bounded, local_address, socket_options)
        )

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class Transport(httpx.HTTPTransport):
    """httpx's transport (TLS always verified), its sockets kept to the attempt's deadline."""

    def __init__(self, *, proxy: httpx.Proxy | None = None) -> None:
        super().__init__(verify=_tls(), proxy=proxy)
        # httpx builds the pool (a plain one, an HTTP or a SOCKS proxy's) without a way to
        # pass httpcore's `network_backend`; every kind keeps it here and hands it to each
        # connection it opens (httpx is pinned <0.29; tests/api/test_transport.py checks it).
        pool = self._pool
        pool._network_backend = _Backend(pool._network_backend)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of https requests (certificates and host names verified)."""
        context = self._pool._ssl_context
        assert context is not None  # httpx always gives the pool one
        return context


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context every transport of the process shares, made once (loading the CAs
    costs ~30 ms of CPU): certificates and host names verified, as httpx verifies them."""
    return httpx.create_ssl_context(verify=True)


def client_transports(
    environ: Mapping[str, str] | None = None,
) -> tuple[Transport, dict[str, httpx.BaseTransport | None]]:
    """The client's transport and its mounts: a transport per proxy the environment names,
    none (direct) for loopback and the `NO_PROXY` hosts. A proxy URL that cannot be used is
    a `ConfigError` naming its variable."""
    mounts: dict[str, httpx.BaseTransport | None] = {
        pattern: None if proxy is None else Transport(proxy=proxy)
        for pattern, proxy in environment_proxies(environ).items()
    }
    return Transport(), mounts


def environment_proxies(environ: Mapping[str, str] | None = None) -> dict[str, httpx.Proxy | None]:
    """The proxies the environment names, by httpx URL pattern (`https://`, `all://`, …;
    None: reached directly), read as httpx reads them, loopback always direct. Empty when
    no proxy is named. A proxy URL that cannot be used is a `ConfigError` naming its
    variable (before any request: `recon.cli` checks it first)."""
    env = os.environ if environ is None else environ
    proxies: dict[str, httpx.Proxy | None] = {}
    for scheme in ("http", "https", "all"):
        found = _variable(env, f"{scheme}_proxy")
        if found is not None:
            proxies[f"{scheme}://"] = _proxy(*found)
    if not proxies:
        return {}
    for host in _no_proxy_hosts(env):
        if host == "*":  # no proxy for anything
            return {}
        proxies[host if "://" in host else f"all://{_pattern_host(host)}"] = None
    for host in LOOPBACK:
        proxies[f"all://{host}"] = None
    return proxies


def keep_loopback_direct(environ: MutableMapping[str, str] | None = None) -> None:
    """Add 127.0.0.1, localhost and ::1 to `NO_PROXY` (and `no_proxy`) when a proxy is
    named: every other HTTP client of the process (Prefect's, the sandbox's health check)
    then reaches the local servers directly, as recon's own client does."""
    env = os.environ if environ is None else environ
    if not any(_variable(env, f"{scheme}_proxy") for scheme in ("http", "https", "all")):
        return
    hosts = _no_proxy_hosts(env)
    if "*" in hosts:
        return
    hosts += [host for host in ("127.0.0.1", "localhost", "::1") if host not in hosts]
    env["NO_PROXY"] = env["no_proxy"] = ",".join(hosts)


def _variable(env: Mapping[str, str], lower: str) -> tuple[str, str] | None:
    """The variable `lower` (or its upper-case name) and its value, lower case first as
    urllib and httpx read them; None when unset or blank."""
    for name in (lower, lower.upper()):
        value = env.get(name, "").strip()
        if value:
            return name, value
    return None


def _no_proxy_hosts(env: Mapping[str, str]) -> list[str]:
    found = _variable(env, "no_proxy")
    return [h.strip() for h in found[1].split(",") if h.strip()] if found else []


def _pattern_host(host: str) -> str:
    """A `NO_PROXY` host as httpx's URL patterns write it (`*` + a domain suffix)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host if host.lower() == "localhost" else f"*{host}"
    return f"[{address}]" if address.version == 6 else str(address)


def _proxy(name: str, value: str) -> httpx.Proxy:
    """`value` as an httpx proxy, or a `ConfigError` naming `name` (the URL's user and
    password never in the message)."""
    url = value if "://" in value else f"http://{value}"
    try:
        proxy = httpx.Proxy(url)
        if not proxy.url.host:
            raise ValueError("no host")
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        shown = _without_credentials(url)
        raise ConfigError(
            name,
            f"is not a usable proxy URL ({shown}: {_first_line(exc)}); "
            "expected http://, https://, socks5:// or socks5h://HOST:PORT",
        ) from None
    return proxy


def _without_credentials(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return scheme + sep + rest.rpartition("@")[2]


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    # httpx repeats the URL (with its password) in some messages
    text = text.split(" for proxy URL")[0].split(" in URL")[0]
    return "malformed" if "@" in text else text
