"""Pages fetched past a list's end (issue 23): none where the list ended last night.

A scan whose paginator knows where the list ended last time (`expected_end`, from the
previous run's landed state) fetches ahead only up to there and goes on one page at a time
past it: a list as long as last night, or longer, costs no request past its end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from recon.api import ApiClient, ClientConfig
from recon.night.extract import _previous_length
from recon.paging.ahead import Shares
from recon.warehouse.landing import ResourceState, RunLanding

from .conftest import CANARY_KEY, ROOT, Harness, envelope
from .test_parallel_paging import Server


def _scan(client: ApiClient, resource: str, expected_end: int | None) -> tuple[list[str], object]:
    scan = client.scan(resource)
    scan.paginator.expected_end = expected_end
    ids = [r["id"] for page in scan for r in page.records]
    return ids, scan.report


@pytest.mark.parametrize("resource", ["payments", "disputes"])
@pytest.mark.parametrize("grown", [0, 37, 450])
def test_no_page_past_the_end_when_the_list_ended_there_or_later(
    harness: Harness, resource: str, grown: int
) -> None:
    last_night = 3000
    server = Server(last_night + grown, next_offset=resource == "payments")
    with harness.client(server, concurrency=6) as client:
        ids, report = _scan(client, resource, last_night)
    assert sorted(ids) == sorted(server.ids)
    past_end = [skip for skip, _ in server.requests if skip >= len(server.ids)]
    assert past_end == []
    assert report.wasted == 0  # type: ignore[attr-defined]


def test_a_list_shorter_than_last_night_loses_nothing(harness: Harness) -> None:
    server = Server(2000)
    with harness.client(server, concurrency=6) as client:
        ids, report = _scan(client, "disputes", 2600)
    assert sorted(ids) == sorted(server.ids)
    assert report.status == "complete"  # type: ignore[attr-defined]


def test_previous_length_comes_from_the_newest_earlier_complete_scan(tmp_path: Path) -> None:
    def state(run_id: str, resource: str, **fields: object) -> None:
        folder = tmp_path / run_id / resource
        folder.mkdir(parents=True)
        (folder / "state.json").write_bytes(ResourceState(resource, **fields).to_json())  # type: ignore[arg-type]

    state("20261120T020000Z-aaaaaa", "payments", records=900, status="complete")
    state("20261121T020000Z-bbbbbb", "payments", records=1000, duplicates=2, status="complete")
    state("20261122T020000Z-cccccc", "payments", records=10, status="incomplete")
    tonight = RunLanding(tmp_path, "20261123T020000Z-dddddd")
    assert _previous_length(tonight, "payments") == 1002
    assert _previous_length(tonight, "refunds") is None
    first = RunLanding(tmp_path, "20261119T020000Z-eeeeee")
    assert _previous_length(first, "payments") is None


LISTS = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")


def test_lists_read_at_once_share_the_pages_ahead_so_few_go_past_their_ends(
    harness: Harness,
) -> None:
    """A first night (no `expected_end`): six lists read at once each keep a share of the
    limit in flight, not the whole limit each, so few pages are sent past their ends."""
    servers = {name: Server(2950, next_offset=name == "payments") for name in LISTS}
    for server in servers.values():
        server.delay = lambda skip: 0.004  # answers take a while: pages queue ahead

    def handler(request: httpx.Request) -> httpx.Response:
        return servers[request.url.path.rsplit("/", 1)[-1].replace("-", "_")](request)

    with harness.client(handler, concurrency=6) as client, ThreadPoolExecutor(6) as pool:
        got = dict(zip(LISTS, pool.map(lambda r: _scan(client, r, None)[0], LISTS), strict=True))
    past_end = {
        name: sum(1 for skip, _ in server.requests if skip >= len(server.ids))
        for name, server in servers.items()
    }
    for name, server in servers.items():
        assert sorted(got[name]) == sorted(server.ids)
    # each list's share of a limit of 6 among six lists is its own page: nothing ahead
    # while all six are read, more as lists end (0-8 past the ends in all over 25 runs on
    # a busy machine); with the whole limit ahead of each list, 20-30 in 15 runs
    assert sum(past_end.values()) <= 14, past_end


def _paced_client(
    handler: Callable[[httpx.Request], httpx.Response], rate: float | None, concurrency: int
) -> ApiClient:
    """A client on the real clock (the latency it measures is the server's real delay)."""
    settings: dict[str, object] = {"api_key": SecretStr(CANARY_KEY), "concurrency": concurrency}
    if rate is not None:
        settings["rate_limit"] = rate
    return ApiClient(
        ClientConfig.for_base_url(ROOT, **settings),
        transport=httpx.MockTransport(handler),
        clock=time.monotonic,
        sleep=time.sleep,
    )


@pytest.mark.parametrize("resource", ["payments", "disputes"])
def test_a_list_alone_against_a_paced_provider_sends_few_pages_past_its_end(
    resource: str,
) -> None:
    """A first night: a list alone with a limit of 16 in flight, against a provider paced
    at 40 requests a second that answers in 50 ms. Two in flight keep that pace; with the
    whole limit ahead the list sent ~15 pages past its end, capped at the rate times the
    latency (plus one) a few."""
    server = Server(4000, next_offset=resource == "payments")
    server.delay = lambda skip: 0.05
    with _paced_client(server, 40.0, 16) as client:
        ids, report = _scan(client, resource, None)
    assert sorted(ids) == sorted(server.ids)
    assert report.status == "complete"  # type: ignore[attr-defined]
    assert report.speculative > 0  # type: ignore[attr-defined]  # still fetched ahead
    past_end = [skip for skip, _ in server.requests if skip >= len(server.ids)]
    assert len(past_end) <= 4, past_end


def test_the_lists_in_flight_are_what_the_rate_needs_only_when_it_is_known(
    harness: Harness,
) -> None:
    server = Server(10)
    with harness.client(server, concurrency=12, rate_limit=100.0) as client:
        ahead = client._ahead
        assert ahead.in_flight_wanted() == 12  # no answer yet: the latency is not known
        client._send.gate.release(0.05)  # (nothing was acquired: the count is not checked)
        assert ahead.in_flight_wanted() == 6  # 100 a second x 50 ms, plus one
        client._send.gate.release(0.5)
        assert ahead.in_flight_wanted() == 12  # the limit stays the bound
    with harness.client(server, concurrency=12) as client:
        client._send.gate.release(0.05)
        assert client._ahead.in_flight_wanted() == 12  # no rate known: the limit alone


class _Scan:
    def __init__(self, pages_read: int) -> None:
        self.pages_read = pages_read


def test_the_lists_read_at_once_share_one_budget_rounded_down() -> None:
    """Seven in flight among six lists: each its own page, and the one page left over ahead
    of the list that has read the most (rounded up, every list had a page ahead, sent past
    its end when it ended)."""
    shares = Shares()
    scans = [_Scan(p) for p in (3, 9, 5, 9, 1, 2)]
    for scan in scans:
        shares.joined(scan)  # type: ignore[arg-type]
    depths = [shares.depth(scan, 7) for scan in scans]  # type: ignore[arg-type]
    assert depths == [0, 1, 0, 0, 0, 0]  # a tie goes to the list that joined first
    shares.left(scans[1])  # type: ignore[arg-type]
    shares.left(scans[0])  # type: ignore[arg-type]
    depths = [shares.depth(scan, 7) for scan in scans[2:]]  # type: ignore[arg-type]
    assert depths == [1, 1, 0, 1]  # 7 = 4 x 1 + 3: the three longest have one ahead
    assert shares.depth(scans[0], 7) == 6  # a scan not sharing (ended) may have them all


class _Bucket:
    """A provider paced by a token bucket: `rate` a second, `rate` at once; past it a 429
    with `Retry-After: 1`."""

    def __init__(self, server: Server, rate: float) -> None:
        self.server = server
        self.rate = rate
        self.tokens = rate
        self.last = time.monotonic()
        self.lock = threading.Lock()
        self.shed = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)
            self.last = now
            taken = self.tokens >= 1
            if taken:
                self.tokens -= 1
            else:
                self.shed += 1
        if not taken:
            time.sleep(0.05)
            return envelope(429, "rate_limited", headers={"Retry-After": "1"})
        return self.server(request)


def test_a_list_alone_learns_the_rate_its_provider_does_not_publish() -> None:
    """A first night without `RECON_RATE_LIMIT`: a list alone with a limit of 16, against
    a provider that answers in 50 ms and takes 40 requests a second (429 beyond). The rate
    is learnt from the answers between its 429s, and the pages in flight capped at what it
    needs: 1-2 pages past its end in 5 runs; without it 1-15 (7 runs: 12, 7, 9, 14, 15,
    9, 1), the whole limit ahead."""
    server = Server(30_000, next_offset=True)
    server.delay = lambda skip: 0.05
    bucket = _Bucket(server, 40.0)
    with _paced_client(bucket, None, 16) as client:
        ids, report = _scan(client, "payments", None)
        rate = client._send.gate.rate_seen
    assert sorted(ids) == sorted(server.ids)
    assert report.status == "complete"  # type: ignore[attr-defined]
    assert bucket.shed > 0
    assert rate is not None
    assert 20 < rate < 80
    past_end = [skip for skip, _ in server.requests if skip >= len(server.ids)]
    assert len(past_end) <= 4, past_end
