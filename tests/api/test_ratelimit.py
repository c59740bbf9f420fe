"""One shared limiter: a 429 holds back every request of the client, not only its own."""

from __future__ import annotations

import threading
import time

import httpx
from pydantic import SecretStr

from recon.api import ApiClient, ClientConfig, SharedRateLimiter

from .conftest import ROOT, FakeClock, envelope


def test_pause_holds_every_waiter_and_never_shortens() -> None:
    clock = FakeClock()
    limiter = SharedRateLimiter(clock=clock.clock, sleep=clock.sleep)
    assert limiter.wait() == 0.0
    limiter.pause(5)
    limiter.pause(2)  # a shorter pause does not cut the longer one
    assert limiter.paused_for() == 5
    assert limiter.wait() == 5
    assert limiter.wait() == 0.0
    assert limiter.pauses == 2


def test_min_interval_spaces_requests() -> None:
    clock = FakeClock()
    limiter = SharedRateLimiter(clock=clock.clock, sleep=clock.sleep, min_interval_s=0.5)
    for _ in range(3):
        limiter.wait()
    assert clock.now == 1001.0


def test_a_429_pauses_the_other_threads_too() -> None:
    """Real threads, real clock, a 0.3 s Retry-After: the other thread's request waits too."""
    got_429 = threading.Event()
    arrivals: dict[str, float] = {}
    pause_end: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/disputes") and not got_429.is_set():
            pause_end.append(time.monotonic() + 0.3)
            got_429.set()
            return envelope(429, code="rate_limited", headers={"Retry-After": "0.3"})
        arrivals.setdefault(path, time.monotonic())
        return httpx.Response(200, json={"data": []})

    config = ClientConfig.for_base_url(ROOT, api_key=SecretStr("k"))
    with ApiClient(config, transport=httpx.MockTransport(handler)) as client:
        first = threading.Thread(target=client.list_disputes)
        first.start()
        assert got_429.wait(5)
        deadline = time.monotonic() + 5
        while client.limiter.paused_for() == 0 and time.monotonic() < deadline:
            time.sleep(0.001)  # until the first thread's client has taken the pause
        second = threading.Thread(target=client.list_subscriptions)
        second.start()
        first.join(5)
        second.join(5)
    assert arrivals["/api/v1/subscriptions"] >= pause_end[0] - 0.02
    assert arrivals["/api/v1/disputes"] >= pause_end[0] - 0.02
