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
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx

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
    try:
        return httpx.get(f"{api_url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def prefect_server(
    say: Callable[[str], None], *, services: bool = False, port: int | None = None
) -> Iterator[str]:
    """Yield the API URL of a Prefect server: the configured one, or one started here."""
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        say(f"Prefect server: {configured} (PREFECT_API_URL)")
        yield configured
        return
    port = port or _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    if services and _healthy(api_url):
        say(f"Prefect server: {api_url} (already running)")
        os.environ["PREFECT_API_URL"] = api_url
        yield api_url
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
    )
    try:
        # The server takes seconds to start; import Prefect meanwhile (on the other core).
        # Its settings are read from the environment: the URL is known, set it first.
        os.environ["PREFECT_API_URL"] = api_url
        _import_prefect()
        _wait_healthy(proc, api_url)
        yield api_url
    finally:
        _drain_prefect()  # Prefect sends logs and events in the background: let them arrive
        os.environ.pop("PREFECT_API_URL", None)
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _import_prefect() -> None:
    """Import Prefect and recon's flows (what the first flow call would import)."""
    import pipelines.nightly  # noqa: F401


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
        time.sleep(0.2)
    raise ConfigError(
        "PREFECT_API_URL", f"is not set and a local server did not start in {timeout:.0f}s"
    )
