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
from tests.night.conftest import Webhook, webhook

__all__ = ["Webhook", "webhook"]  # the nightly tests' receiver, for the group night's alert


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


class Recorder:
    """A progress display that keeps what it was told."""

    def __init__(self) -> None:
        self.done_: list[tuple[str, str]] = []

    def update(self, resource: str, **counts: object) -> None:
        return None

    def done(self, resource: str, *, status: str) -> None:
        self.done_.append((resource, status))
