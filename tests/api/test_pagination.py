"""Paging loses nothing: capped servers, short pages, failed pages, lists that change."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.api import ApiClient, Page
from recon.errors import AuthError

from .conftest import FakeClock, Harness, envelope


class ListServer:
    """A list endpoint over a mutable newest-first list; `before_page` may change it."""

    def __init__(
        self,
        ids: list[str],
        *,
        cap: int | None = None,
        next_offset: bool = False,
        before_page: Callable[[ListServer], None] | None = None,
    ) -> None:
        self.ids = list(ids)
        self.cap = cap
        self.next_offset = next_offset
        self.before_page = before_page
        self.requests: list[tuple[int, int]] = []
        self.fail: dict[int, Callable[[], httpx.Response]] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        size = int(request.url.params["max-records"])
        self.requests.append((skip, size))
        if skip in self.fail:
            return self.fail[skip]()
        if self.before_page is not None:
            self.before_page(self)
        n = min(size, self.cap) if self.cap else size
        chunk = self.ids[skip : skip + n]
        body: dict[str, Any] = {"data": [{"id": i, "n": int(i[1:])} for i in chunk]}
        if self.next_offset:
            more = skip + len(chunk) < len(self.ids)
            body["hasMore"] = more
            body["nextOffset"] = skip + len(chunk) if more else None
        return httpx.Response(200, json=body, headers={"X-Request-Id": f"req_{skip}"})


def _ids(n: int) -> list[str]:
    return [f"r{i}" for i in range(n)]


def _collect(client: ApiClient, resource: str, **kwargs: Any) -> tuple[list[Page], Any]:
    scan = client.scan(resource, **kwargs)
    pages = list(scan)
    return pages, scan.report


def _returned(pages: list[Page]) -> list[str]:
    return [r["id"] for p in pages for r in p.records]


@pytest.mark.parametrize(
    "resource", ["disputes", "subscriptions", "payment_intents", "refunds", "invoices"]
)
def test_a_server_capping_pages_at_100_loses_nothing(harness: Harness, resource: str) -> None:
    server = ListServer(_ids(1050), cap=100)
    with harness.client(server) as client:
        pages, report = _collect(client, resource)
    assert _returned(pages) == _ids(1050)
    assert report.status == "complete"
    assert report.records == 1050
    assert report.duplicates == 0
    # every request asked for the page size, never more than 200
    assert {size for _, size in server.requests} == {200}


def test_payments_follow_next_offset_and_has_more(harness: Harness) -> None:
    server = ListServer(_ids(450), cap=100, next_offset=True)
    with harness.client(server, concurrency=1) as client:  # sequential: no overlap
        pages, report = _collect(client, "payments")
    assert _returned(pages) == _ids(450)
    assert [s for s, _ in server.requests] == [0, 100, 200, 300, 400]
    assert report.status == "complete"
    assert pages[-1].next_offset is None
    assert [p.next_offset for p in pages[:-1]] == [100, 200, 300, 400]


def test_payments_fetched_ahead_overlap_by_one_record_and_lose_nothing(harness: Harness) -> None:
    """With pages fetched ahead (the default), payments pages overlap by one record, as
    the other lists do, so a page answered before the one it follows cannot hide a gap;
    the server's cap (100 < 200 asked) makes the first predictions wrong, never a record."""
    server = ListServer(_ids(450), cap=100, next_offset=True)
    with harness.client(server, concurrency=4) as client:
        pages, report = _collect(client, "payments")
    assert _returned(pages) == _ids(450)
    assert report.status == "complete"
    assert report.duplicates == 0
    taken = [p.offset for p in pages]
    assert taken == [0, 99, 198, 297, 396]  # each page starts on the last one's last record
    assert set(taken) <= {s for s, _ in server.requests}
    assert report.speculative >= 1


def test_payments_status_filter_is_sent(harness: Harness) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": [], "hasMore": False, "nextOffset": None})

    with harness.client(handler, status_param="state") as client:
        _collect(client, "payments", status="refunded")
    assert seen[0].url.params["state"] == "refunded"


def test_a_next_offset_that_does_not_advance_is_an_error_not_a_loop(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        return httpx.Response(
            200,
            json={"data": [{"id": f"p{skip}"}], "hasMore": True, "nextOffset": skip},
            headers={"X-Request-Id": f"req_{skip}"},
        )

    with harness.client(handler, page_size=10) as client:
        pages, report = _collect(client, "payments")
    assert report.status == "incomplete"
    assert len(pages) == 3  # three broken pages in a row: give up
    assert "does not advance" in report.failed_pages[0].error
    assert report.failed_pages[0].request_ids == ("req_0",)
    assert [f.offset for f in report.failed_pages] == [0, 10, 20]


def test_a_short_page_is_not_the_end_an_empty_page_is(harness: Harness) -> None:
    server = ListServer(_ids(5))
    with harness.client(server, page_size=3, concurrency=1) as client:
        pages, report = _collect(client, "disputes")
    assert _returned(pages) == _ids(5)
    # skip=0 -> r0..r2 (short of nothing); skip=2 -> r2..r4; skip=4 -> r4 alone: the end
    assert [skip for skip, _ in server.requests] == [0, 2, 4]
    assert pages[-1].records == []
    assert report.status == "complete"


def test_a_server_capping_at_one_record_is_still_read_to_the_end(harness: Harness) -> None:
    server = ListServer(_ids(4), cap=1)
    with harness.client(server) as client:
        pages, report = _collect(client, "disputes")
    assert _returned(pages) == _ids(4)
    assert pages[-1].raw_count == 0
    assert report.status == "complete"


def test_a_page_that_fails_for_good_is_recorded_and_paging_goes_on(harness: Harness) -> None:
    server = ListServer(_ids(30))
    rids = iter(range(100))
    server.fail[9] = lambda: envelope(503, rid=f"req_fail_{next(rids)}")
    with harness.client(server, page_size=10, max_attempts=3) as client:
        pages, report = _collect(client, "disputes")
    assert report.status == "incomplete"
    (failed,) = report.failed_pages
    assert failed.offset == 9
    assert failed.http_status == 503
    assert failed.request_ids == ("req_fail_0", "req_fail_1", "req_fail_2")
    assert "503 unavailable" in failed.error
    # the next page is skip + page_size; records 9..18 were in the failed page
    got = set(_returned(pages))
    assert got == set(_ids(30)) - {f"r{i}" for i in range(10, 19)}
    assert len(_returned(pages)) == len(got)
    failed_calls = [r for r in harness.records if r.outcome == "failed"]
    assert [r.request_id for r in failed_calls] == ["req_fail_2"]


def test_payments_failed_page_goes_on_at_skip_plus_page_size(harness: Harness) -> None:
    server = ListServer(_ids(40), next_offset=True)
    server.fail[10] = lambda: envelope(500)
    # sequential, without narrowing: the rule for what comes after a failed page
    with harness.client(
        server, page_size=10, max_attempts=2, concurrency=1, narrow_max_requests=0
    ) as client:
        pages, report = _collect(client, "payments")
    assert [p.offset for p in pages] == [0, 20, 30]
    assert report.status == "incomplete"
    assert report.failed_pages[0].offset == 10


def test_the_scan_gives_up_after_consecutive_failed_pages(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return envelope(500)

    with harness.client(handler, page_size=10, max_attempts=1) as client:
        pages, report = _collect(client, "disputes")
    assert pages == []
    assert report.status == "incomplete"
    assert len(report.failed_pages) == 3
    assert "gave up" in (report.reason or "")


@pytest.mark.parametrize("status", [404, 405])
def test_a_list_that_is_not_offered_is_unavailable_never_empty(
    harness: Harness, status: int
) -> None:
    with harness.client(lambda r: envelope(status, code="not_found")) as client:
        pages, report = _collect(client, "refunds")
    assert pages == []
    assert report.status == "unavailable"
    assert str(status) in (report.reason or "")


def test_an_empty_list_path_setting_means_unavailable_without_a_request(
    harness: Harness,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request")

    with harness.client(handler, invoices_path="") as client:
        pages, report = _collect(client, "invoices")
    assert pages == []
    assert report.status == "unavailable"
    assert "RECON_INVOICES_PATH" in (report.reason or "")


def test_assumed_list_paths_are_settings(harness: Harness) -> None:
    server = ListServer(_ids(3))
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return server(request)

    with harness.client(handler, refunds_path="/money/refunds") as client:
        _collect(client, "refunds")
    assert set(paths) == {"/api/v1/money/refunds"}


def test_auth_failure_stops_the_scan(harness: Harness) -> None:
    handler = lambda r: envelope(401, code="unauthorized")  # noqa: E731
    with harness.client(handler) as client, pytest.raises(AuthError):
        _collect(client, "disputes")


def test_inserts_while_paging_are_deduplicated_and_counted(harness: Harness) -> None:
    counter = iter(range(1000, 2000))

    def insert_two(server: ListServer) -> None:
        if len(server.requests) > 1:
            server.ids[0:0] = [f"r{next(counter)}", f"r{next(counter)}"]

    server = ListServer(_ids(50), before_page=insert_two)
    with harness.client(server, page_size=10) as client:
        pages, report = _collect(client, "disputes")
    returned = _returned(pages)
    assert len(returned) == len(set(returned))
    assert set(_ids(50)) <= set(returned)
    assert report.duplicates > 0
    assert report.status == "complete"


def test_deletes_while_paging_lose_nothing_that_stayed(harness: Harness) -> None:
    def delete_two_early(server: ListServer) -> None:
        if len(server.requests) in (3, 5):
            del server.ids[1:3]

    original = _ids(60)
    server = ListServer(original, before_page=delete_two_early)
    with harness.client(server, page_size=10) as client:
        pages, report = _collect(client, "disputes")
    survivors = set(server.ids)
    returned = _returned(pages)
    assert survivors <= set(returned)
    assert len(returned) == len(set(returned))
    assert report.rewinds >= 1


def test_resume_with_seen_ids(harness: Harness) -> None:
    server = ListServer(_ids(30))
    with harness.client(server, page_size=10) as client:
        pages, report = _collect(
            client, "disputes", start_offset=10, seen_ids=frozenset({"r10", "r11"})
        )
    assert _returned(pages) == [f"r{i}" for i in range(12, 30)]
    # r10, at the committed offset, is the overlap a resumed scan expects; r11 was landed
    # before the kill and comes back: a duplicate.
    assert report.duplicates == 1


def test_unkeyed_records_are_passed_on(harness: Harness) -> None:
    bodies = iter([{"data": [{"id": "a"}, {"no": "id"}, 7, {"id": ""}]}, {"data": []}])
    with harness.client(lambda r: httpx.Response(200, json=next(bodies)), concurrency=1) as client:
        pages, report = _collect(client, "disputes")
    assert pages[0].records == [{"id": "a"}, {"no": "id"}, 7, {"id": ""}]
    assert report.unkeyed == 3


def test_payment_methods_per_customer(harness: Harness) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        cid = request.url.path.split("/")[4]
        skip = int(request.url.params["skip"])
        data = [{"id": f"pm_{cid}_{i}", "type": "card"} for i in range(3)][skip:]
        return httpx.Response(200, json={"data": data})

    with harness.client(handler) as client:
        scans = client.scan_payment_methods(["cus_a", "cus_b", "cus_a"])
        results = [(s, list(s)) for s in scans]
    assert len(results) == 2
    for (scan, pages), cid in zip(results, ["cus_a", "cus_b"], strict=True):
        assert scan.report.status == "complete"
        assert scan.report.customer_id == cid
        assert {p.customer_id for p in pages} == {cid}
        assert len(_returned(pages)) == 3


def test_a_scan_is_iterated_once(harness: Harness) -> None:
    with harness.client(ListServer(_ids(3))) as client:
        scan = client.scan("disputes")
        list(scan)
        with pytest.raises(RuntimeError):
            list(scan)


# --------------------------------------------------------------------------- property


@pytest.mark.slow  # a property test: many generated lists
@settings(
    max_examples=int(os.environ.get("RECON_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    size=st.integers(0, 80),
    page_size=st.integers(2, 12),
    cap=st.one_of(st.none(), st.integers(2, 12)),  # a 1-record page leaves no room for overlap
    anywhere=st.booleans(),
    data=st.data(),
)
def test_property_every_record_present_throughout_is_returned_exactly_once(
    size: int, page_size: int, cap: int | None, anywhere: bool, data: st.DataObject
) -> None:
    """Inserts (at the front of a newest-first list, or anywhere) and deletes anywhere
    while the list is paged: nothing present from start to end is lost or repeated."""
    counter = iter(range(10_000, 20_000))
    budget = [data.draw(st.integers(0, 25), label="mutation budget")]

    def mutate(server: ListServer) -> None:
        if budget[0] <= 0:
            return
        inserts = data.draw(st.integers(0, 2), label="inserts")
        deletes = data.draw(st.lists(st.integers(0, 10_000), max_size=3), label="deletes")
        budget[0] -= 1
        where = data.draw(st.integers(0, 10_000), label="insert at") if anywhere else 0
        where = where % (len(server.ids) + 1)
        server.ids[where:where] = [f"r{next(counter)}" for _ in range(inserts)]
        for d in deletes:
            if server.ids:
                del server.ids[d % len(server.ids)]

    original = _ids(size)
    server = ListServer(original, cap=cap, before_page=mutate)
    harness = Harness(FakeClock(), [])
    # sequential: the mutations draw from hypothesis, which must happen in one order
    with harness.client(server, page_size=page_size, concurrency=1) as client:
        pages, report = _collect(client, "disputes")
    returned = _returned(pages)
    survivors = set(original) & set(server.ids)
    assert len(returned) == len(set(returned)), "a record came back twice"
    missing = survivors - set(returned)
    assert not missing, (
        f"lost {sorted(missing)} (size={size} page={page_size} cap={cap} {server.requests})"
    )
    assert report.status == "complete"
    assert report.records == len(returned)


def test_invoices_by_id_when_no_list_is_offered(harness: Harness) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        ident = request.url.path.rsplit("/", 1)[1]
        calls.append(ident)
        if ident == "in_gone":
            return envelope(404, code="not_found", rid="req_404")
        if ident == "in_bad":
            return envelope(500, code="internal_error", rid=f"req_500_{len(calls)}")
        return httpx.Response(200, json={"id": ident, "status": "open"})

    ids = ["in_1", "in_gone", "in_2", "in_bad", "in_1", "in_seen", "in_3"]
    with harness.client(handler, max_attempts=2) as client:
        scan = client.scan_by_ids("invoices", ids, seen_ids={"in_seen"}, batch_size=2)
        pages = list(scan)
    report = scan.report
    assert [r["id"] for p in pages for r in p.records] == ["in_1", "in_2", "in_3"]
    assert [p.offset for p in pages] == [0, 2, 4]
    assert report.missing == ["in_gone"]
    (failed,) = report.failed_pages
    assert failed.offset == 3
    assert failed.request_ids == ("req_500_4", "req_500_5")
    assert report.status == "incomplete"
    assert report.duplicates == 1
    assert "in_seen" not in calls


def test_payments_by_id_use_the_bearer_token(harness: Harness) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": "p1"})

    with harness.client(handler) as client:
        scan = client.scan_by_ids("payments", ["p1"])
        list(scan)
    assert scan.report.status == "complete"
    assert seen[0].headers["authorization"].startswith("Bearer ")
    assert "x-api-key" not in seen[0].headers


@pytest.mark.parametrize("stop_after", [1, 2, 3])
def test_a_resumed_scan_counts_its_overlap_as_neither_duplicate_nor_gap(
    harness: Harness, stop_after: int
) -> None:
    # A run killed after `stop_after` pages resumes at the committed offset with the ids it
    # landed: its first page overlaps the last landed record (one record, by design), which
    # is not a duplicate; nothing is stepped back over and nothing is fetched twice.
    server = ListServer(_ids(23))
    with harness.client(server, page_size=5, concurrency=1) as client:  # asserts the order
        first = iter(client.scan("disputes"))
        pages = [next(first) for _ in range(stop_after)]
        landed = _returned(pages)
        committed = pages[-1].next_offset
        assert committed is not None
        before = len(server.requests)
        resumed, report = _collect(client, "disputes", start_offset=committed, seen_ids=landed)
    assert landed + _returned(resumed) == _ids(23)
    assert report.duplicates == 0
    assert report.rewinds == 0
    assert server.requests[before][0] == committed


@pytest.mark.parametrize("resource", ["disputes", "payments"])
@pytest.mark.parametrize(
    ("again", "status"),
    [({"id": "r3", "n": 999}, "incomplete"), ({"id": "r3", "n": 3}, "complete")],
    ids=["other-content", "same-content"],
)
def test_the_same_id_with_other_content_on_a_later_page_is_never_a_silent_complete(
    harness: Harness, resource: str, again: dict[str, Any], status: str
) -> None:
    """Issue 38: r3 answered again two pages later. The very same record is a duplicate
    (counted, complete); the same id with other content makes the list incomplete, naming
    the id — the first version is kept, nothing else is lost."""
    records: list[dict[str, Any]] = [{"id": f"r{i}", "n": i} for i in range(30)]
    records.insert(25, again)

    def handler(request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        size = int(request.url.params["max-records"])
        data = records[skip : skip + size]
        more = skip + len(data) < len(records)
        body = {"data": data, "hasMore": more, "nextOffset": skip + len(data) if more else None}
        return httpx.Response(200, json=body, headers={"X-Request-Id": f"req_{skip}"})

    with harness.client(handler, page_size=10, concurrency=1) as client:
        pages, report = _collect(client, resource)
    assert sorted(_returned(pages), key=lambda r: int(r[1:])) == _ids(30)
    assert [r for p in pages for r in p.records if r["id"] == "r3"] == [{"id": "r3", "n": 3}]
    assert report.duplicates == 1
    assert report.status == status
    if status == "incomplete":
        assert report.changed == 1
        assert report.reason is not None
        assert "r3" in report.reason
