"""Several accounts: a recon.toml with `[accounts.*]`, keys in their own variables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_BACKOFF_INITIAL_S", "0.01")
    monkeypatch.setenv("RECON_BACKOFF_MAX_S", "0.05")
    monkeypatch.chdir(tmp_path)


def closed_port_url() -> str:
    """A loopback URL where nothing listens (a port just freed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def key_of(name: str) -> str:
    return f"key-of-{name}-0123456789"


def token_of(name: str) -> str:
    return f"token-of-{name}-0123456789"


@contextmanager
def account_sandbox(name: str, **config: Any) -> Iterator[str]:
    """A sandbox on a free port of 127.0.0.1 accepting account `name`'s key and token."""
    cfg = SandboxConfig(
        api_key=key_of(name), bearer_token=token_of(name), retry_after_s=0, slow_s=0.01, **config
    )
    with serve_in_thread(cfg) as url:
        yield url


def write_toml(path: Path, accounts: dict[str, dict[str, Any]], top: str = "") -> Path:
    """recon.toml with these `[accounts.<name>]` tables (plain values and nested tables)."""
    lines = [top] if top else []
    for name, entry in accounts.items():
        lines.append(f"[accounts.{name}]")
        nested = {k: v for k, v in entry.items() if isinstance(v, dict)}
        for key, value in entry.items():
            if not isinstance(value, dict):
                lines.append(f"{key} = {_toml(value)}")
        for key, table in nested.items():
            for sub, inner in table.items():
                lines.append(f"[accounts.{name}.{key}.{sub}]")
                lines.extend(f"{k} = {_toml(v)}" for k, v in inner.items())
    path.write_text("\n".join(lines) + "\n")
    return path


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def set_keys(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.setenv(f"RECON_{name.upper()}_API_KEY", key_of(name))
        monkeypatch.setenv(f"RECON_{name.upper()}_BEARER_TOKEN", token_of(name))


def entry(name: str, url: str, **extra: Any) -> dict[str, Any]:
    return {
        "base_url": url,
        "api_key_env": f"RECON_{name.upper()}_API_KEY",
        "bearer_token_env": f"RECON_{name.upper()}_BEARER_TOKEN",
        **extra,
    }


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
