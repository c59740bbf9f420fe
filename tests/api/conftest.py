"""Shared helpers for the client's tests: a fake clock, a canary key, a client factory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from recon.api import ApiClient, CallRecord, ClientConfig

CANARY_KEY = "canary-key-7f3a9c2e-DO-NOT-LEAK"
CANARY_TOKEN = "canary-token-51bd0e44-DO-NOT-LEAK"
ROOT = "https://payments.example.test"
EPOCH = datetime(2026, 11, 21, 2, 0, tzinfo=UTC)

Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class FakeClock:
    """Monotonic + wall clock that only moves when something sleeps (or a test says so)."""

    now: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def wall(self) -> datetime:
        return EPOCH + timedelta(seconds=self.now - 1000.0)


@dataclass
class Harness:
    clock: FakeClock
    records: list[CallRecord]

    def client(self, handler: Handler, **overrides: Any) -> ApiClient:
        settings: dict[str, Any] = {
            "api_key": SecretStr(CANARY_KEY),
            "bearer_token": SecretStr(CANARY_TOKEN),
            "backoff_initial_s": 0.5,
            "backoff_max_s": 8.0,
        }
        settings.update(overrides)
        return ApiClient(
            ClientConfig.for_base_url(ROOT, **settings),
            transport=httpx.MockTransport(handler),
            on_attempt=self.records.append,
            clock=self.clock.clock,
            sleep=self.clock.sleep,
            random=lambda: 0.5,
            wall_clock=self.clock.wall,
        )


@pytest.fixture
def harness() -> Harness:
    return Harness(FakeClock(), [])


def envelope(
    status: int,
    code: str = "unavailable",
    message: str = "try again",
    rid: str = "req_1",
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return httpx.Response(
        status, json={"error": code, "message": message, "requestId": rid}, headers=headers
    )
