"""The Prefect server a run talks to: `PREFECT_API_URL`, or one recon starts and stops.

Prefect's own temporary server is a child process that outlives its parent: a `kill -9`
of a run left it running (found by tests/reliability). So when no server is configured,
recon starts `prefect server start` itself, on a free port of 127.0.0.1, as a child the
kernel terminates when recon dies (`PR_SET_PDEATHSIG`), and points `PREFECT_API_URL` at it.
`recon schedule` needs the scheduler, which Prefect's temporary server does not run: it
starts the same server with its services on the usual port 4200.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from recon.errors import ConfigError

STANDING_PORT = 4200
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """Ask the kernel to SIGTERM this process when its parent dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(api_url: str) -> bool:
    """One GET of `/health` over a plain socket: polled every 50 ms while the server boots,
    so it costs no TLS context or client per poll (an `httpx.get` each 0.2 s cost ~0.6
    CPU-s over a boot, on a core the server needs)."""
    url = urlsplit(api_url)
    try:
        with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), 2) as sock:
            sock.settimeout(2)
            request = f"GET {url.path}/health HTTP/1.0\r\nHost: {url.netloc}\r\n\r\n"
            sock.sendall(request.encode())
            head = sock.recv(64)
    except OSError:
        return False
    return head.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200"))


class LocalServer:
    """A Prefect server being started (or the configured one): `ready()` waits for it."""

    def __init__(self, api_url: str, proc: subprocess.Popen[bytes] | None) -> None:
        self.api_url = api_url
        self.own = proc is not None  # started here (not PREFECT_API_URL, not a standing one)
        self._proc = proc
        self._ready = proc is None

    def ready(self) -> None:
        """Import Prefect and the flows (meanwhile, on the other core), then wait until the
        server answers. Idempotent."""
        _import_prefect()
        if not self._ready and self._proc is not None:
            _wait_healthy(self._proc, self.api_url)
            self._ready = True


@contextlib.contextmanager
def prefect_server(
    say: Callable[[str], None], *, services: bool = False, port: int | None = None
) -> Iterator[str]:
    """Yield the API URL of a Prefect server: the configured one, or one started here."""
    with starting_prefect_server(say, services=services, port=port) as server:
        server.ready()
        yield server.api_url


@contextlib.contextmanager
def starting_prefect_server(
    say: Callable[[str], None], *, services: bool = False, port: int | None = None
) -> Iterator[LocalServer]:
    """The configured Prefect server, or one started here and not waited for: the caller
    does its own checks while it boots (its start is most of a quiet night's fixed cost)
    and calls `ready()` before the first flow. Stopped on exit, used or not."""
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        say(f"Prefect server: {configured} (PREFECT_API_URL)")
        yield LocalServer(configured, None)
        return
    port = port or _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    if services and _healthy(api_url):
        say(f"Prefect server: {api_url} (already running)")
        os.environ["PREFECT_API_URL"] = api_url
        try:
            yield LocalServer(api_url, None)
        finally:
            os.environ.pop("PREFECT_API_URL", None)
        return
    if services:
        prefect = shutil.which("prefect", path=os.path.dirname(sys.executable)) or "prefect"
        args = [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
        args += ["--no-ui", "--analytics-off", "--log-level", "ERROR"]
    else:  # the API alone, without Prefect's command line (pipelines._api_server)
        args = [sys.executable, "-m", "pipelines._api_server", str(port)]
    kind = "a standing local" if services else "a local"
    say(f"Prefect server: starting {kind} one at {api_url} (no PREFECT_API_URL set)")
    proc = subprocess.Popen(  # noqa: S603 - fixed arguments, this venv's prefect
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_die_with_parent,
        # Its own session: a Ctrl-C in the terminal reaches recon, which stops the night and
        # then this server, not the server first (the night's last calls to it failed with
        # ConnectError tracebacks for a minute and more).
        start_new_session=True,
    )
    try:
        # Prefect reads its settings from the environment: the URL is known, set it first.
        os.environ["PREFECT_API_URL"] = api_url
        yield LocalServer(api_url, proc)
    finally:
        _drain_prefect()  # Prefect sends logs and events in the background: let them arrive
        os.environ.pop("PREFECT_API_URL", None)
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _import_prefect() -> None:
    """Import Prefect and recon's flows (what the first flow call would import), with the
    cyclic collector off meanwhile (as in `pipelines._api_server`: it ran over and over
    while Prefect's models were built)."""
    if "pipelines.nightly" in sys.modules:
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        import pipelines.nightly  # noqa: F401
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _drain_prefect(timeout_s: float = 15.0) -> None:
    """Flush Prefect's background log and event queues to the server before it stops."""
    if "prefect" not in sys.modules:
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        with contextlib.suppress(Exception):  # best effort: the run's outcome is already known
            worker.drain_all(timeout=timeout_s, at_exit=False)


def _wait_healthy(proc: subprocess.Popen[bytes], api_url: str) -> None:
    timeout = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _healthy(api_url):
            return
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace")[-500:] if proc.stderr else ""
            raise ConfigError("PREFECT_API_URL", f"is not set and a local server failed: {err}")
        time.sleep(0.05)
    raise ConfigError(
        "PREFECT_API_URL", f"is not set and a local server did not start in {timeout:.0f}s"
    )
