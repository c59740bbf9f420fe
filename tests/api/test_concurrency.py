"""The concurrency gate (issue 10): fixed, or found by AIMD on 429s and rising latency.

Asserted on the limit's trajectory, never on time: a simulated provider answers each
round of requests (as many as the limit lets through) with a latency and 429s that depend
on how many were sent at once.
"""

from __future__ import annotations

import itertools
import threading

import httpx
import pytest
from pydantic import SecretStr

from recon.api import ApiClient, ClientConfig
from recon.api.concurrency import AdaptiveLimit

from .conftest import ROOT, FakeClock, envelope


def _round(gate: AdaptiveLimit, answer: object) -> int:
    """Send `gate.limit` requests at once; `answer(i, n)` -> (latency, dropped) for each."""
    n = gate.limit
    for _ in range(n):
        gate.acquire()
    for i in range(n):
        latency, dropped = answer(i, n)  # type: ignore[operator]
        gate.release(latency, dropped=dropped)
    return n


def test_a_fixed_limit_never_moves() -> None:
    gate = AdaptiveLimit(fixed=3, cap=16)
    for _ in range(50):
        _round(gate, lambda i, n: (0.05, i >= 1))
    assert gate.trajectory == [3]


def test_it_grows_while_latency_stays_flat_up_to_the_cap() -> None:
    gate = AdaptiveLimit(cap=12)
    for _ in range(200):
        _round(gate, lambda i, n: (0.05, False))
    assert gate.limit == 12
    assert gate.trajectory == list(range(2, 13))  # one step a round, never a cut


def test_a_429_storm_at_the_start_settles_instead_of_oscillating() -> None:
    """The first 5 rounds are all 429s; then the provider takes 5 at once and sheds the
    rest. The limit falls to 1, climbs back, meets the ceiling once and stays below it:
    far fewer changes in the second half than in the first, and 429s stop."""
    gate = AdaptiveLimit(cap=16, probe_rounds=10_000)
    drops_by_round: list[int] = []
    for r in range(400):
        before = gate.drops
        _round(gate, lambda i, n, r=r: (0.05, r < 5 or i >= 5))
        drops_by_round.append(gate.drops - before)
    traj = gate.trajectory
    assert min(traj) == 1  # the storm cut it to the floor
    assert gate.limit in (4, 5)  # settled just under what the provider takes
    assert sum(drops_by_round[100:]) == 0  # no 429 once settled
    assert len(traj) < 25, traj  # a handful of moves, not a saw-tooth
    last_cut = max(i for i in range(1, len(traj)) if traj[i] < traj[i - 1])
    assert traj[last_cut:] == sorted(traj[last_cut:])  # after the last cut: only climbing
    print("limit trajectory after a 429 storm:", traj)


def test_probing_the_ceiling_again_backs_off() -> None:
    """After a long calm the ceiling is tried again; each probe that meets a 429 doubles the
    calm needed before the next, so 429s grow rarer instead of recurring every few rounds."""
    gate = AdaptiveLimit(cap=16, probe_rounds=5)
    drop_rounds: list[int] = []
    for r in range(3000):
        before = gate.drops
        _round(gate, lambda i, n: (0.05, i >= 5))
        if gate.drops > before:
            drop_rounds.append(r)
    gaps = [b - a for a, b in itertools.pairwise(drop_rounds)]
    assert len(drop_rounds) >= 3
    assert gaps == sorted(gaps), gaps  # ever longer between 429s
    assert 3 <= gate.limit <= 6


def test_rising_latency_caps_the_limit_without_429s() -> None:
    """Latency flat up to 4 in flight, then proportional (requests queue): the limit stops
    where the latency doubles, well under the cap."""
    gate = AdaptiveLimit(cap=32)
    for _ in range(500):
        _round(gate, lambda i, n: (0.01 * max(1.0, n / 4), False))
    assert 4 <= gate.limit <= 9
    assert max(gate.trajectory) <= 10


def test_the_client_gate_bounds_requests_in_flight_across_threads() -> None:
    """Eight threads call at once through a client fixed at 3: never more than 3 at the
    server at the same moment."""
    lock = threading.Lock()
    now = [0]
    peak = [0]
    release = threading.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        release.wait(0.05)
        with lock:
            now[0] -= 1
        return httpx.Response(200, json={"data": []})

    config = ClientConfig.for_base_url(ROOT, api_key=SecretStr("k"), concurrency=3)
    with ApiClient(config, transport=httpx.MockTransport(handler)) as client:
        threads = [threading.Thread(target=client.list_disputes) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert client.gate.in_flight == 0
    assert peak[0] == 3


def test_a_429_from_the_server_cuts_the_client_limit() -> None:
    clock = FakeClock()
    answers = iter([envelope(429, code="rate_limited", headers={"Retry-After": "1"})])

    def handler(request: httpx.Request) -> httpx.Response:
        return next(answers, httpx.Response(200, json={"data": []}))

    config = ClientConfig.for_base_url(ROOT, api_key=SecretStr("k"))
    with ApiClient(
        config, transport=httpx.MockTransport(handler), clock=clock.clock, sleep=clock.sleep
    ) as client:
        assert client.gate.limit == 2
        client.list_disputes()
        assert client.gate.drops == 1
        assert client.gate.trajectory[:2] == [2, 1]
        assert client.limiter.pauses == 1  # Retry-After still pauses everybody


def _answers(gate: AdaptiveLimit, clock: FakeClock, n: int, seconds: float) -> None:
    """`n` answers spread over `seconds`."""
    for _ in range(n):
        clock.now += seconds / n
        gate.acquire()
        gate.release(0.05)


def _shed(gate: AdaptiveLimit, k: int = 1) -> None:
    for _ in range(k):
        gate.acquire()
        gate.release(0.05, dropped=True)


def test_the_providers_rate_is_learnt_from_the_answers_between_two_429s() -> None:
    """A token bucket that answers 429 is empty: what it took between two of its 429s is
    its rate times the time between them."""
    clock = FakeClock()
    gate = AdaptiveLimit(cap=16, clock=clock.clock)
    _answers(gate, clock, 80, 0.5)
    assert gate.rate_seen is None  # no 429 yet: the provider may not limit at all
    _shed(gate, 3)  # a burst of 429s from one round: one empty bucket (too soon to measure)
    assert gate.rate_seen is None
    _answers(gate, clock, 150, 1.5)
    _shed(gate, 2)
    assert gate.rate_seen == pytest.approx(100.0)  # 150 answers in 1.5 s
    clock.now += 12.0  # the lists idled: the bucket filled up, the stretch says little
    _answers(gate, clock, 10, 0.1)
    _shed(gate)
    assert gate.rate_seen == pytest.approx(100.0)


def test_the_first_429_measures_the_rate_from_the_first_answer() -> None:
    """The bucket was full at the start: an estimate above the rate (by its burst over the
    time), which the next 429 corrects."""
    clock = FakeClock()
    gate = AdaptiveLimit(cap=16, clock=clock.clock)
    _answers(gate, clock, 300, 2.0)
    _shed(gate)
    assert gate.rate_seen is not None
    assert 140 < gate.rate_seen < 160
    _answers(gate, clock, 200, 2.0)
    _shed(gate)
    assert gate.rate_seen == pytest.approx(100.0)


def test_a_storm_of_429s_says_nothing_of_the_rate() -> None:
    clock = FakeClock()
    gate = AdaptiveLimit(cap=16, clock=clock.clock)
    for _ in range(5):  # the provider pausing everybody: 429s a second apart, few answers
        _answers(gate, clock, 3, 1.0)
        _shed(gate, 4)
    assert gate.rate_seen is None


def test_a_calm_stretch_raises_too_low_an_estimate() -> None:
    """Capped at the rate it measured, the client could never find a higher one if 429s
    alone moved it: a stretch without 429s raises it to the pace of its answers."""
    clock = FakeClock()
    gate = AdaptiveLimit(cap=16, clock=clock.clock)
    _answers(gate, clock, 60, 1.0)
    _shed(gate)
    _answers(gate, clock, 60, 1.5)
    _shed(gate)
    assert gate.rate_seen == pytest.approx(40.0)
    _answers(gate, clock, 600, 6.0)  # 100 a second, no 429
    assert gate.rate_seen is not None
    assert gate.rate_seen > 90
