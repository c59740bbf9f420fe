"""Pages fetched ahead, in parallel (issue 10), and failed pages narrowed (issue 13).

`httpx.MockTransport` servers that answer from several threads: out of order, with a cap
that changes mid-scan, with records deleted between two windows in flight, with one record
the server cannot send. Every record present for the whole scan comes back exactly once.
"""

from __future__ import annotations

import itertools
import math
import random
import threading
import time
from typing import Any

import httpx
import pytest

from recon.api import ApiClient, Page

from .conftest import Harness, envelope


class Server:
    """A newest-first list served from many threads (a lock keeps it consistent)."""

    def __init__(self, n: int, *, next_offset: bool = False) -> None:
        self.ids = [f"r{i:05d}" for i in range(n)]
        self.next_offset = next_offset
        self.cap: int | None = None
        self.cap_after: int | None = None
        self.poison: set[str] = set()
        self.lock = threading.Lock()
        self.requests: list[tuple[int, int]] = []
        self.served = 0
        self.after_serve: Any = None  # (server, skip) -> None, under the lock
        self.delay: Any = None  # (skip) -> seconds, outside the lock
        self.inserted = 0
        self.arrived = 0  # requests received (counted before any delay)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        size = int(request.url.params["max-records"])
        with self.lock:
            self.arrived += 1
        if self.delay is not None:
            time.sleep(self.delay(skip))
        with self.lock:
            self.requests.append((skip, size))
            self.served += 1
            cap = self.cap if self.cap_after is None or self.served > self.cap_after else None
            n = min(size, cap) if cap else size
            chunk = self.ids[skip : skip + n]
            more = skip + len(chunk) < len(self.ids)
            if self.after_serve is not None:
                self.after_serve(self, skip)
        if self.poison & set(chunk):
            return envelope(500, code="internal_error", rid=f"req_500_{skip}_{n}")
        body: dict[str, Any] = {"data": [{"id": i} for i in chunk]}
        if self.next_offset:
            body |= {"hasMore": more, "nextOffset": skip + len(chunk) if more else None}
        return httpx.Response(200, json=body, headers={"X-Request-Id": f"req_{skip}_{n}"})

    def insert_at_head(self, k: int = 1) -> None:
        self.ids[0:0] = [f"new{self.inserted + i}" for i in range(k)]
        self.inserted += k


def _scan(client: ApiClient, resource: str) -> tuple[list[Page], Any]:
    scan = client.scan(resource)
    pages = list(scan)
    return pages, scan.report


def _ids(pages: list[Page]) -> list[str]:
    return [r["id"] for p in pages for r in p.records]


def _check(pages: list[Page], stable: set[str]) -> None:
    got = _ids(pages)
    assert len(got) == len(set(got)), "a record came back twice"
    lost = stable - set(got)
    assert not lost, f"lost {sorted(lost)[:5]} ({len(lost)})"


@pytest.mark.parametrize("resource", ["payments", "disputes"])
def test_pages_answered_out_of_order_while_records_are_inserted_lose_nothing(
    harness: Harness, resource: str
) -> None:
    """Later pages answer before earlier ones (the first page of each pair is slow), and
    a record is inserted at the head after every page served: without the one-record
    overlap a page answered before the one it follows would hide the record pushed across
    the boundary."""
    server = Server(2000, next_offset=resource == "payments")
    stable = set(server.ids)
    server.after_serve = lambda s, _skip: s.insert_at_head()
    server.delay = lambda skip: 0.004 if (skip // 199) % 2 == 0 else 0.0
    with harness.client(server, concurrency=6) as client:
        pages, report = _scan(client, resource)
    _check(pages, stable)
    assert report.status == "complete"
    assert report.speculative > 0
    assert max(p.seq for p in pages) == len(pages) - 1


def test_many_interleavings_of_inserts_and_deletes_lose_nothing(harness: Harness) -> None:
    """Seeded random inserts anywhere and deletes anywhere while 8 pages are in flight,
    served in whatever order the threads reach the server."""
    for seed in range(12):
        rng = random.Random(seed)
        server = Server(rng.randint(300, 1500), next_offset=seed % 2 == 0)
        original = set(server.ids)

        def mutate(s: Server, _skip: int, rng: random.Random = rng) -> None:
            for _ in range(rng.randint(0, 2)):
                at = rng.randint(0, len(s.ids))
                s.ids[at:at] = [f"x{s.inserted}"]
                s.inserted += 1
            for _ in range(rng.randint(0, 2)):
                if s.ids:
                    del s.ids[rng.randrange(len(s.ids))]

        server.after_serve = mutate
        server.delay = lambda _skip, rng=rng: rng.random() * 0.002
        with harness.client(server, concurrency=8, page_size=rng.randint(20, 60)) as client:
            pages, report = _scan(client, "payments" if seed % 2 == 0 else "refunds")
        _check(pages, original & set(server.ids))
        assert report.status == "complete", (seed, report)


def test_a_cap_that_changes_mid_scan_loses_nothing(harness: Harness) -> None:
    """After 5 requests the server caps pages at 100 (200 asked): the pages in flight at
    the old predicted offsets are dropped and the predictions follow the new length."""
    server = Server(3000)
    server.cap, server.cap_after = 100, 5
    server.delay = lambda skip: 0.002 if skip % 2 else 0.0
    with harness.client(server, concurrency=6) as client:
        pages, report = _scan(client, "disputes")
        # every request sent, used or not, is in the call log once the scan has ended
        assert len(harness.records) == server.arrived
    assert _ids(pages) == server.ids
    assert report.status == "complete"
    assert report.duplicates == 0
    taken = [p.offset for p in pages]
    steps = [b - a for a, b in itertools.pairwise(taken)]
    assert set(steps[:-2]) <= {199, 99}, steps  # full pages overlapping by one (the end aside)
    assert 99 in steps
    assert report.wasted >= 1  # predictions made before the cap were wrong


def test_records_deleted_between_two_windows_in_flight(harness: Harness) -> None:
    """While the windows at 199 and 398 are both in flight, five records before 398 are
    deleted once the first one is served: the second window no longer starts on its
    anchor, the scan steps back and re-reads; nothing that stayed is lost."""
    server = Server(1200)
    gate = threading.Event()
    deleted: list[str] = []

    def after(s: Server, skip: int) -> None:
        if skip == 199 and not deleted:
            deleted.extend(s.ids[390:395])
            del s.ids[390:395]
            gate.set()

    server.after_serve = after

    def delay(skip: int) -> float:
        if skip == 398:  # held until the records are deleted, so both are in flight
            gate.wait(2)
        return 0.0

    server.delay = delay
    stable = set(server.ids) - set(deleted)
    with harness.client(server, concurrency=4) as client:
        pages, report = _scan(client, "disputes")
    stable -= set(deleted)
    _check(pages, stable)
    assert deleted
    assert report.status == "complete"
    assert report.rewinds >= 1


def test_a_record_the_server_cannot_send_loses_only_that_record(harness: Harness) -> None:
    """Issue 13: every request whose window holds r00417 fails (500, every attempt). The
    page is narrowed in halves: the other 199 records of it land, the report names the one
    offset, its neighbours and every request id; the extra requests stay near log2(200)."""
    server = Server(1000)
    server.poison = {"r00417"}
    with harness.client(server, concurrency=1, max_attempts=2) as client:
        pages, report = _scan(client, "disputes")
    got = _ids(pages)
    assert sorted(got) == sorted(set(server.ids) - {"r00417"})
    assert len(got) == len(set(got))
    assert report.status == "incomplete"
    (failed,) = report.failed_pages
    assert (failed.offset, failed.limit) == (417, 1)
    assert (failed.before_id, failed.after_id) == ("r00416", "r00418")
    assert failed.http_status == 500
    # the page's two attempts, then each narrowing request over the record (2 attempts)
    assert len(failed.request_ids) >= 4
    assert all(r.startswith("req_500_") for r in failed.request_ids)
    assert report.narrow_requests <= 2 * math.ceil(math.log2(200))
    print(f"narrowing: 1 record lost, {report.narrow_requests} extra requests")


def test_narrowing_is_bounded_by_its_setting(harness: Harness) -> None:
    server = Server(400)
    server.poison = {"r00010", "r00020", "r00030", "r00040", "r00050", "r00060"}
    with harness.client(server, concurrency=1, max_attempts=1, narrow_max_requests=4) as client:
        pages, report = _scan(client, "disputes")
    assert report.narrow_requests <= 5  # the budget, plus the one request under way
    unread = sum(f.limit or 200 for f in report.failed_pages)
    assert unread + len(_ids(pages)) >= 400  # every record is read or named unread
    assert report.status == "incomplete"


def test_rescan_reads_a_window_again_and_narrows_it(harness: Harness) -> None:
    server = Server(600)
    server.poison = {"r00250"}
    with harness.client(server, concurrency=1, max_attempts=1) as client:
        out = client.rescan("disputes", 199, 201, before_id="r00198")
    assert not out.shifted
    got = [r["id"] for p in out.pages for r in p.records]
    assert got == [f"r{i:05d}" for i in range(199, 400) if i != 250]
    (failed,) = out.failed
    assert (failed.offset, failed.limit) == (250, 1)
    assert not out.complete
    server.poison.clear()
    server.insert_at_head(3)  # the list moved since: the neighbour is not where it was
    with harness.client(server, concurrency=1) as client:
        again = client.rescan("disputes", 199, 10, before_id="r00198")
    assert again.shifted
    assert not again.complete


def test_a_scan_ends_only_when_its_pages_sent_ahead_are_answered(harness: Harness) -> None:
    """A page sent ahead past the end of the list is still under way when the scan has
    read the end: the scan waits for it, so its attempt is in the call log (written when
    the list ends) like every other request."""
    server = Server(450)
    server.delay = lambda skip: 0.3 if skip >= 500 else 0.0
    with harness.client(server, concurrency=4) as client:
        pages, report = _scan(client, "disputes")
        assert len(harness.records) == server.arrived
    assert _ids(pages) == server.ids
    assert any(skip >= 500 for skip, _ in server.requests)  # one was sent past the end
    assert report.wasted >= 1
