"""A sandbox on 127.0.0.1 and a run of the nightly steps against it, per test."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread

KEY = "nightly-test-key"
TOKEN = "nightly-test-token"


def _set_env(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_API_KEY", KEY)
    monkeypatch.setenv("RECON_BEARER_TOKEN", TOKEN)
    monkeypatch.setenv("RECON_BACKOFF_INITIAL_S", "0.01")
    monkeypatch.setenv("RECON_BACKOFF_MAX_S", "0.05")
    monkeypatch.chdir(folder)


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _set_env(monkeypatch, tmp_path)


@contextmanager
def night_env(folder: Path) -> Iterator[None]:
    """The environment `_env` gives each test, for a module-scoped fixture (set up before a
    test's own fixtures): e.g. a reference night that several tests compare against."""
    monkeypatch = pytest.MonkeyPatch()
    try:
        _set_env(monkeypatch, folder)
        yield
    finally:
        monkeypatch.undo()


@contextmanager
def sandbox(**config: Any) -> Iterator[str]:
    """The sandbox on a free port of 127.0.0.1 with the test credentials."""
    cfg = SandboxConfig(api_key=KEY, bearer_token=TOKEN, retry_after_s=0, slow_s=0.01, **config)
    with serve_in_thread(cfg) as url:
        yield url


def overrides_for(tmp_path: Path, url: str) -> dict[str, Any]:
    return {
        "base_url": url,
        "db": str(tmp_path / "data" / "recon.duckdb"),
        "landing": str(tmp_path / "data" / "landing"),
        "reports": str(tmp_path / "reports"),
    }


def truth_of(url: str) -> dict[str, Any]:
    # 1M payments: ~40 s of CPU, minutes on a loaded machine
    data: dict[str, Any] = httpx.get(f"{url}/_sandbox/truth", timeout=600).json()
    return data


SandboxFactory = Callable[..., Any]


class Webhook:
    """A webhook receiver on 127.0.0.1: records every POST; answers `statuses` in turn."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.received: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.url = ""


@contextmanager
def webhook(
    statuses: list[int] | None = None, secret: str = "T000/B000/s3cr3t"
) -> Iterator[Webhook]:
    """A real HTTP server on a free port; `hook.url` ends with the secret path."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hook = Webhook(statuses)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            hook.paths.append(self.path)
            status = hook.statuses.pop(0) if hook.statuses else 200
            if status == 200:
                hook.received.append(json.loads(body))
            self.send_response(status)
            self.send_header("content-type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"no")

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/services/{secret}"
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()
