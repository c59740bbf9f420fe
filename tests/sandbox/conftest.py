"""Fixtures of the sandbox tests: an in-process client per app (no sockets)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from recon.sandbox.app import SandboxConfig, create_app
from recon.sandbox.server import InProcessTransport

from .sandbox_support import ANCHOR

ClientFactory = Callable[..., httpx.Client]


@pytest.fixture
def make_client() -> Iterator[ClientFactory]:
    """make_client(**SandboxConfig fields) -> an httpx.Client into a fresh sandbox app."""
    made: list[tuple[httpx.Client, InProcessTransport]] = []

    def factory(**kwargs: object) -> httpx.Client:
        kwargs.setdefault("anchor", ANCHOR)
        kwargs.setdefault("payments", 300)
        kwargs.setdefault("retry_after_s", 0)
        kwargs.setdefault("slow_s", 0.0)
        app = create_app(SandboxConfig(**kwargs))  # type: ignore[arg-type]
        transport = InProcessTransport(app)
        client = httpx.Client(transport=transport, base_url="http://sandbox")
        client.app = app  # type: ignore[attr-defined]
        made.append((client, transport))
        return client

    yield factory
    for client, transport in made:
        client.close()
        transport.close()


@pytest.fixture
def client(make_client: ClientFactory) -> httpx.Client:
    return make_client()


@pytest.fixture
def fixtures(client: httpx.Client) -> dict[str, object]:
    data = client.get("/_sandbox/fixtures").json()
    assert isinstance(data, dict)
    return data
