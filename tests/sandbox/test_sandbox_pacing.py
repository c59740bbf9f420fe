"""Realism: latency (awaited, never blocking), a token-bucket rate limit, an in-flight limit.

No test times anything: the sandbox's sleep and clock are injected, so a test sees what was
asked for, and concurrency is shown by requests that meet inside the sleep.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

import recon.sandbox.state as state_module
from recon.sandbox.app import SandboxConfig, create_app
from recon.sandbox.pacing import InFlight, Latency, TokenBucket
from recon.sandbox.store import CHUNK, ListView

from .conftest import ClientFactory
from .sandbox_support import ANCHOR, KEY

P = "/api/v1"


class RecordingSleep:
    """An injected sleep that returns at once and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _assert_envelope(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status
    body = r.json()
    assert set(body) == {"error", "message", "requestId"}
    assert body["error"] == code
    assert body["requestId"] == r.headers["X-Request-Id"]


# ---------------------------------------------------------------------------- latency
def test_every_api_answer_asks_for_the_latency_plus_a_seeded_jitter(
    make_client: ClientFactory,
) -> None:
    sleep = RecordingSleep()
    client = make_client(latency_ms=50, latency_jitter_ms=20, sleep=sleep)
    for skip in range(0, 100, 10):
        assert client.get(f"{P}/payments?max-records=10&skip={skip}", headers=KEY).is_success
    assert len(sleep.asked) == 10
    assert all(0.050 <= s <= 0.070 for s in sleep.asked)
    assert len(set(sleep.asked)) > 5  # the jitter varies by request
    # the helpers and refused requests are not paced
    client.get("/_sandbox/state")
    client.get(f"{P}/payments")  # no key: 401
    assert len(sleep.asked) == 10


def test_latency_is_deterministic_from_the_seed() -> None:
    def delays(seed: int) -> list[float]:
        lat = Latency(seed, 50, 20)
        return [lat.seconds("GET", "/api/v1/payments", f"skip={k}", 0) for k in range(30)]

    assert delays(7) == delays(7)
    assert delays(7) != delays(8)
    assert Latency(7, 50, 0).seconds("GET", "/x", "", 0) == 0.05
    retry = Latency(7, 50, 20)
    assert retry.seconds("GET", "/x", "a", 0) != retry.seconds("GET", "/x", "a", 1)


def test_no_latency_no_sleep(make_client: ClientFactory) -> None:
    sleep = RecordingSleep()
    client = make_client(sleep=sleep)
    client.get(f"{P}/payments", headers=KEY)
    assert sleep.asked == []


def _app_client(**config: Any) -> tuple[httpx.AsyncClient, Any]:
    config.setdefault("anchor", ANCHOR)
    config.setdefault("payments", 300)
    app = create_app(SandboxConfig(**config))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sandbox")
    return client, app


class GateSleep:
    """A sleep that holds every caller until the gate opens; counts who is inside."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.inside = 0

    async def __call__(self, seconds: float) -> None:
        self.inside += 1
        await self.gate.wait()

    async def until_inside(self, n: int) -> None:
        while self.inside < n:
            await asyncio.sleep(0)


def _run(coro: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(coro(), timeout=30))


def test_latency_does_not_block_the_event_loop_requests_overlap() -> None:
    async def scenario() -> None:
        sleep = GateSleep()
        client, _ = _app_client(latency_ms=100, sleep=sleep)
        async with client:
            tasks = [
                asyncio.create_task(client.get(f"{P}/disputes?skip={k}", headers=KEY))
                for k in range(4)
            ]
            await sleep.until_inside(4)  # all four are waiting out their latency at once
            assert not any(t.done() for t in tasks)
            sleep.gate.set()
            answers = await asyncio.gather(*tasks)
        assert [r.status_code for r in answers] == [200] * 4

    _run(scenario)


# ---------------------------------------------------------------------------- rate limit
def test_rate_limit_answers_429_with_the_envelope_and_retry_after(
    make_client: ClientFactory,
) -> None:
    clock = FakeClock()
    client = make_client(rate=5, clock=clock)
    statuses = [client.get(f"{P}/disputes", headers=KEY).status_code for _ in range(7)]
    assert statuses == [200] * 5 + [429] * 2
    limited = [client.get(f"{P}/disputes", headers=KEY) for _ in range(2)]
    for r in limited:
        _assert_envelope(r, 429, "rate_limited")
        assert r.headers["Retry-After"] == "1"
    assert limited[0].headers["X-Request-Id"] != limited[1].headers["X-Request-Id"]
    clock.now += 0.2  # one token back
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 200
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 429
    clock.now += 10  # the bucket refills to its burst, no further
    statuses = [client.get(f"{P}/disputes", headers=KEY).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    pacing = client.get("/_sandbox/faults").json()["pacing"]
    assert pacing["rateLimited"] == 6
    assert (pacing["rate"], pacing["burst"]) == (5, 5)


def test_retry_after_is_whole_seconds_and_at_least_one() -> None:
    clock = FakeClock()
    slow = TokenBucket(0.25, None, clock)
    assert slow.take() is None
    assert slow.take() == 4  # a token every 4 s
    clock.now += 3.5
    assert slow.take() == 1  # 0.5 s left: rounded up, never 0
    fast = TokenBucket(100, 100, clock)
    for _ in range(100):
        assert fast.take() is None
    assert fast.take() == 1


def test_burst_can_differ_from_the_rate(make_client: ClientFactory) -> None:
    client = make_client(rate=1, burst=3, clock=FakeClock())
    statuses = [client.get(f"{P}/subscriptions", headers=KEY).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_a_wrong_key_gets_401_and_takes_no_token(make_client: ClientFactory) -> None:
    client = make_client(rate=1, clock=FakeClock())
    for _ in range(3):
        assert client.get(f"{P}/disputes", headers={"x-api-key": "nope"}).status_code == 401
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 200


# ---------------------------------------------------------------------------- in flight
def test_requests_beyond_max_in_flight_get_503_while_the_first_is_answered() -> None:
    async def scenario() -> None:
        sleep = GateSleep()
        client, app = _app_client(latency_ms=10, max_in_flight=1, sleep=sleep)
        async with client:
            first = asyncio.create_task(client.get(f"{P}/payments", headers=KEY))
            await sleep.until_inside(1)
            beyond = await asyncio.gather(
                client.get(f"{P}/payments?skip=50", headers=KEY),
                client.get(f"{P}/disputes", headers=KEY),
            )
            for r in beyond:
                _assert_envelope(r, 503, "unavailable")
            assert beyond[0].headers["X-Request-Id"] != beyond[1].headers["X-Request-Id"]
            sleep.gate.set()
            assert (await first).status_code == 200
            again = await client.get(f"{P}/payments", headers=KEY)
            assert again.status_code == 200  # the slot was given back
        pacing = app.state.sandbox.faults_json()["pacing"]
        assert (pacing["overloaded"], pacing["inFlight"], pacing["inFlightPeak"]) == (2, 0, 1)

    _run(scenario)


def test_requests_up_to_the_limit_are_answered_together() -> None:
    async def scenario() -> None:
        sleep = GateSleep()
        client, _ = _app_client(latency_ms=10, max_in_flight=3, sleep=sleep)
        async with client:
            tasks = [
                asyncio.create_task(client.get(f"{P}/payments?skip={k}", headers=KEY))
                for k in range(3)
            ]
            await sleep.until_inside(3)
            fourth = await client.get(f"{P}/payments?skip=9", headers=KEY)
            assert fourth.status_code == 503
            sleep.gate.set()
            assert [r.status_code for r in await asyncio.gather(*tasks)] == [200] * 3

    _run(scenario)


def test_in_flight_counter() -> None:
    flight = InFlight(2)
    assert flight.enter()
    assert flight.enter()
    assert not flight.enter()
    flight.leave()
    assert flight.enter()
    assert (flight.now, flight.peak) == (2, 2)


# ---------------------------------------------------------------------------- cache
def _counting_view(cache_records: int, records: int) -> tuple[ListView, list[int]]:
    calls: list[int] = []

    def generate(start: int, stop: int) -> list[bytes]:
        calls.append(start)
        return [b"{}" for _ in range(start, stop)]

    return ListView("x", lambda: records, generate, cache_records=cache_records), calls


def test_cache_records_bounds_the_serialised_records_and_zero_keeps_them_all() -> None:
    records = 5 * CHUNK
    bounded, calls = _counting_view(2 * CHUNK, records)
    for _ in range(2):
        for skip in range(0, records, 200):
            bounded.page(skip, 200)
    assert len(calls) == 10  # the second pass generated every chunk again
    kept, calls = _counting_view(0, records)
    for _ in range(2):
        for skip in range(0, records, 200):
            kept.page(skip, 200)
    assert len(calls) == 5  # generated once, kept


def test_cache_records_applies_to_every_list(make_client: ClientFactory) -> None:
    client = make_client(payments=300, cache_records=0)
    state = client.app.state.sandbox  # type: ignore[attr-defined]
    assert {view._cache_chunks for view in state.lists.values()} == {None}


# ---------------------------------------------------------------------------- configuration
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("latency_ms", -1),
        ("latency_jitter_ms", -5),
        ("rate", 0),
        ("burst", 0),
        ("max_in_flight", 0),
        ("cache_records", -1),
    ],
)
def test_bad_pacing_settings_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        SandboxConfig(**{field: value})  # type: ignore[arg-type]


def test_pacing_can_change_at_run_time(make_client: ClientFactory) -> None:
    sleep = RecordingSleep()
    client = make_client(sleep=sleep, clock=FakeClock())
    r = client.post(
        "/_sandbox/faults", json={"latencyMs": 30, "rate": 2, "maxInFlight": 4}, headers=KEY
    )
    assert r.status_code == 200
    assert r.json()["pacing"]["latencyMs"] == 30
    statuses = [client.get(f"{P}/disputes", headers=KEY).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert sleep.asked == [0.03, 0.03]
    client.post("/_sandbox/faults", json={"rate": None, "latencyMs": 0}, headers=KEY)
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 200
    assert sleep.asked == [0.03, 0.03]


def test_the_truth_is_computed_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1M-payment truth takes tens of seconds: meanwhile the API goes on answering."""
    started, release = threading.Event(), threading.Event()

    def slow_truth(data: Any) -> bytes:
        started.set()
        release.wait(timeout=30)
        return b'{"slow": true}\n'

    monkeypatch.setattr(state_module, "truth_json", slow_truth)

    async def scenario() -> None:
        client, _ = _app_client()
        async with client:
            truth = asyncio.create_task(client.get("/_sandbox/truth"))
            while not started.is_set():
                await asyncio.sleep(0.01)
            page = await client.get(f"{P}/disputes", headers=KEY)
            assert page.status_code == 200
            assert not truth.done()
            release.set()
            assert (await truth).json() == {"slow": True}

    _run(scenario)
