"""Is the API there at all? One bounded connection probe before a run's first request.

A base URL that points at nothing (connection refused, a name that does not resolve) is a
setting problem, not a flaky night: the run stops within seconds with one line naming the
URL and the error, as a refused key does, instead of retrying every list for the whole
call budget and writing an "incomplete" report of checks that could not run.

The probe opens a TCP connection to the API's host and port and closes it; it sends no
request, so it costs the provider nothing and no fault plan or rate limit sees it. When a
proxy applies to the URL (HTTPS_PROXY …), the connection goes there instead and only the
real requests can tell: the probe is skipped.
"""

from __future__ import annotations

import socket
import time
import urllib.request
from collections.abc import Callable
from urllib.parse import urlsplit

from recon.errors import ReconError, redact_url

__all__ = ["UnreachableError", "probe"]


class UnreachableError(ReconError):
    """Nothing answers at the API's address: the run is aborted before it starts."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = redact_url(url)
        self.problem = problem
        super().__init__(self.url, problem)

    def __str__(self) -> str:
        return f"cannot reach the API at {self.url}: {self.problem}"


def _why(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return f"the host name does not resolve ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (nothing listens on that port)"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "no answer to the connection within the probe's time"
    return exc.strerror or str(exc) or type(exc).__name__


def _uses_proxy(url: str) -> bool:
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies and "all" not in proxies:
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


def probe(
    url: str,
    *,
    attempts: int = 3,
    timeout_s: float = 2.0,
    pause_s: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Connect to `url`'s host and port (a few quick tries); `UnreachableError` if none works.

    At most `attempts * timeout_s + (attempts - 1) * pause_s` seconds (7 s by default);
    a refused connection or an unknown name fails each try at once (well under a second).
    """
    parts = urlsplit(url)
    host = parts.hostname
    if not host or _uses_proxy(url):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    last: OSError | None = None
    for attempt in range(attempts):
        if attempt:
            sleep(pause_s)
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return
        except OSError as exc:
            last = exc
    assert last is not None
    raise UnreachableError(url, _why(last))
