"""Pages fetched on the scan's own thread while the provider answers at once (issue 23).

A page fetched ahead is handed from a worker thread to the scan's; while the provider
answers faster than the client handles a page that buys little and costs CPU, so the scan
fetches its next page itself, and goes back to fetching ahead when the provider's wait
grows. The clock here is the harness's fake one: the server's wait and the scan's own
work per page are what the test moves it by.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from recon.api import ApiClient
from recon.paging.ahead import FETCH_HERE_ABOVE, FETCH_HERE_BELOW

from .conftest import Harness
from .test_parallel_paging import Server


class Timed:
    """`Server`, with each answer taking `wait(skip)` seconds of the fake clock, and the
    threads the requests came on."""

    def __init__(self, harness: Harness, server: Server, wait: Any) -> None:
        self.harness, self.server, self.wait = harness, server, wait
        self.threads: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        with self.lock:
            self.threads.append(threading.current_thread().name)
            self.harness.clock.now += self.wait(skip)
        return self.server(request)


def _read(
    harness: Harness, client: ApiClient, resource: str, own_s: float
) -> tuple[list[str], Any]:
    scan = client.scan(resource)
    ids: list[str] = []
    for page in scan:
        ids.extend(r["id"] for r in page.records)
        harness.clock.now += own_s  # the scan's own work on the page (dedupe, landing)
    return ids, scan.report


def test_the_thresholds_leave_a_band_between_fetching_here_and_ahead() -> None:
    assert 0 < FETCH_HERE_BELOW < FETCH_HERE_ABOVE


@pytest.mark.parametrize("resource", ["payments", "disputes"])
def test_a_provider_answering_at_once_is_read_on_the_scans_own_thread(
    harness: Harness, resource: str
) -> None:
    server = Server(20_000, next_offset=resource == "payments")
    timed = Timed(harness, server, lambda skip: 0.0002)
    with harness.client(timed, concurrency=6) as client:
        ids, report = _read(harness, client, resource, own_s=0.002)
    assert sorted(ids) == sorted(server.ids)
    assert report.status == "complete"
    pages = len(timed.threads)
    # the first pages go ahead (nothing is known yet), then every page on the scan's thread
    here = [t for t in timed.threads[pages // 2 :] if not t.startswith("recon-ahead")]
    assert len(here) == len(timed.threads[pages // 2 :])
    assert report.speculative < 40 < pages


@pytest.mark.parametrize("resource", ["payments", "disputes"])
def test_a_provider_that_takes_its_time_is_read_ahead(harness: Harness, resource: str) -> None:
    server = Server(20_000, next_offset=resource == "payments")
    timed = Timed(harness, server, lambda skip: 0.05)
    with harness.client(timed, concurrency=6) as client:
        ids, report = _read(harness, client, resource, own_s=0.002)
    assert sorted(ids) == sorted(server.ids)
    # every page after the first, but for a few the shared fake clock makes look fast
    # (every thread moves it: a page's wait and the scan's work take in the others' waits)
    assert report.speculative >= 0.9 * len(timed.threads)


def test_fetching_ahead_resumes_when_the_provider_slows_down(harness: Harness) -> None:
    server = Server(30_000, next_offset=True)
    slow_from = 15_000
    timed = Timed(harness, server, lambda skip: 0.0002 if skip < slow_from else 0.05)
    with harness.client(timed, concurrency=6) as client:
        ids, report = _read(harness, client, "payments", own_s=0.002)
    assert sorted(ids) == sorted(server.ids)
    assert report.status == "complete"
    fast = sum(1 for skip, _ in server.requests if skip < slow_from)
    slow = len(server.requests) - fast
    # read here while fast (a few ahead at the start), ahead again soon after it slowed
    assert report.speculative < fast // 2 + slow
    assert report.speculative > slow - 15
    assert report.wasted <= 10


def test_a_page_knows_how_long_the_provider_took_to_answer(harness: Harness) -> None:
    server = Server(10)
    timed = Timed(harness, server, lambda skip: 0.25)
    with harness.client(timed, concurrency=1) as client:
        fetch = client._fetcher("disputes", client.list_path("disputes"))
        fetched = fetch({"max-records": 200, "skip": 0}, [])
    assert fetched.wait_s == pytest.approx(0.25)
    assert fetched.work_s == 0.0  # the fake clock did not move while it was read
