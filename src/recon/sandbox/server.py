"""Running the sandbox: uvicorn on 127.0.0.1 (blocking or in a thread), or fully in-process.

- :func:`serve` blocks (``recon sandbox serve``).
- :func:`serve_in_thread` starts uvicorn in a background thread on a free port, waits until
  it answers and yields the base URL; the other modules' integration tests and
  ``recon nightly --sandbox`` use it.
- :class:`InProcessTransport` is a *sync* httpx transport that runs the ASGI app on a
  private event loop thread: ``httpx.Client(transport=InProcessTransport(app))`` talks to
  the sandbox without a socket (httpx's own ASGITransport is async-only).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

from recon.sandbox.app import SandboxConfig, create_app

__all__ = [
    "HOST",
    "InProcessTransport",
    "serve",
    "serve_app",
    "serve_app_in_thread",
    "serve_in_thread",
]

HOST = "127.0.0.1"


def serve(config: SandboxConfig, port: int = 8000, *, log_level: str = "warning") -> None:
    """Serve the sandbox on 127.0.0.1:port until interrupted."""
    serve_app(create_app(config), port, log_level=log_level)


def serve_app(app: Any, port: int = 8000, *, log_level: str = "warning") -> None:
    """Serve an ASGI app on 127.0.0.1:port until interrupted."""
    uvicorn.run(
        app,
        host=HOST,
        port=port,
        log_level=log_level,
        lifespan="off",
        access_log=False,
        server_header=False,
    )


def serve_apps(apps: Sequence[tuple[Any, int]], on_ready: Callable[[list[str]], None]) -> None:
    """Serve several ASGI apps (each on its port of 127.0.0.1) until interrupted; `on_ready`
    gets their base URLs once every one answers."""
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(serve_app_in_thread(app, port)) for app, port in apps]
        on_ready(urls)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


@contextmanager
def serve_app_in_thread(app: Any, port: int = 0, *, timeout_s: float = 15.0) -> Iterator[str]:
    """Serve an ASGI app on 127.0.0.1 in a background thread; yield ``http://127.0.0.1:<port>``."""
    cfg = uvicorn.Config(
        app,
        host=HOST,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        server_header=False,
    )
    server = uvicorn.Server(cfg)
    thread = threading.Thread(target=server.run, name="recon-sandbox", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the sandbox server did not start")
            if time.monotonic() > deadline:
                raise TimeoutError("the sandbox server did not start in time")
            time.sleep(0.01)
        sock = server.servers[0].sockets[0]
        bound = sock.getsockname()[1]
        base = f"http://{HOST}:{bound}"
        with httpx.Client(timeout=5.0) as client:
            while True:
                try:
                    if client.get(f"{base}/_sandbox/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError("the sandbox server does not answer")
                time.sleep(0.01)
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10.0)


@contextmanager
def serve_in_thread(config: SandboxConfig | None = None, port: int = 0) -> Iterator[str]:
    """Start the sandbox (uvicorn, 127.0.0.1, a free port by default); yield its base URL.

    The base URL has no ``/api/v1`` suffix, e.g. ``http://127.0.0.1:54321``.
    """
    app = create_app(config if config is not None else SandboxConfig())
    with serve_app_in_thread(app, port) as base:
        yield base


class InProcessTransport(httpx.BaseTransport):
    """A sync httpx transport into an ASGI app, via a private event loop thread."""

    def __init__(self, app: Starlette | Any) -> None:
        self._asgi = httpx.ASGITransport(app=app)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="recon-sandbox-inprocess", daemon=True
        )
        self._thread.start()

    async def _send(self, request: httpx.Request) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        response = await self._asgi.handle_async_request(request)
        body = await response.aread()
        return response.status_code, list(response.headers.raw), body

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        content = request.read()
        clone = httpx.Request(request.method, request.url, headers=request.headers, content=content)
        future = asyncio.run_coroutine_threadsafe(self._send(clone), self._loop)
        status, headers, body = future.result()
        return httpx.Response(status, headers=headers, content=body, request=request)

    def close(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5.0)
        if not self._loop.is_running():
            self._loop.close()
