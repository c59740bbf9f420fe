"""Records written back to JSON where the page was parsed (`Landable`): landing them gives
the very files landing the records themselves gives, rejects, long integers and duplicates
included. And the query string the sender writes once per call is httpx's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pyarrow.parquet as pq
import pytest

from recon.api.wire import query_string
from recon.paging import NextOffsetPaginator, Scan
from recon.paging.pages import FetchedPage
from recon.paging.paginators import Params, record_id
from recon.paging.records import landable
from recon.paging.records import loads_json as _loads
from recon.warehouse.landing import ResourceLanding

from .conftest import Harness

# A page as a provider may send it: a long integer, control characters, multibyte text, an
# id on the page twice, records that cannot be keyed (no id, a blank id, a number, a list).
BODY = (
    b'{"data":['
    b'{"id":"pay_1","amountMinor":123456789012345678901234567890,"note":"\\u0001\\t"},'
    b'{"id":"pay_2","name":"Zo\xc3\xab \xe2\x82\xac","nested":{"id":"x"}},'
    b'{"amountMinor":5},'
    b'{"id":"  ","amountMinor":6},'
    b'{"id":7},'
    b"[1,2],"
    b'"text",'
    b'{"id":"pay_2","again":true},'
    b'{"id":"pay_3","amountMinor":-1.5e3}'
    b'],"hasMore":false}'
)


def _files(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        p.name: pq.read_table(p).to_pylist()
        for p in sorted(folder.glob("*.parquet"))
        if not p.name.startswith("calls-")
    }


def test_each_record_is_its_own_json_text_and_id() -> None:
    data = _loads(BODY)["data"]
    got = landable(data)
    assert len(got) == len(data)
    assert got.ids == [record_id(r) for r in data]
    for i, record in enumerate(data):
        assert _loads(got.text(i)) == record
    assert b"123456789012345678901234567890" in got.text(0)  # exactly, not a float
    assert got.text(0).count(b"\\u0001") == 1  # a control character kept (escaped)
    assert (got.unkeyed, got.blank, got.id_set) == (4, 1, None)  # "pay_2" is there twice
    clean = landable(data[:2])
    assert (clean.unkeyed, clean.blank, clean.id_set) == (0, 0, {"pay_1", "pay_2"})
    for keep in ([1, 2, 3], [0, 4, 8], [], [5]):
        part = got.select(keep)
        assert part.ids == [got.ids[i] for i in keep]
        assert part.unkeyed == part.ids.count(None)
        assert part.blank == sum(1 for rid in part.ids if rid is not None and not rid.strip())
        assert [part.text(j) for j in range(len(keep))] == [got.text(i) for i in keep]


def test_landing_from_the_text_gives_the_same_files_as_from_the_records(tmp_path: Path) -> None:
    data = _loads(BODY)["data"]
    plain = ResourceLanding(tmp_path / "plain", "payments", batch_records=4)
    fast = ResourceLanding(tmp_path / "fast", "payments", batch_records=4)
    for at in range(0, len(data), 3):  # pages of 3: batches fill up across pages
        page = data[at : at + 3]
        plain.add_page(offset=at, next_offset=at + 3, records=page, request_id=f"r{at}")
        fast.add_page(
            offset=at,
            next_offset=at + 3,
            records=page,
            request_id=f"r{at}",
            landable=landable(page),
        )
    plain.finish(status="complete", reason=None, calls=())
    fast.finish(status="complete", reason=None, calls=())
    assert _files(fast.folder) == _files(plain.folder)
    assert fast.state == plain.state
    rejects = [r for name, rows in _files(fast.folder).items() if "rejects" in name for r in rows]
    assert len(rejects) == 5  # no id, blank id, numeric id, a list, a string
    raws = [r["raw"] for rows in _files(fast.folder).values() for r in rows]
    assert any("123456789012345678901234567890" in raw for raw in raws)


def test_a_scan_hands_landing_the_text_of_exactly_its_new_records() -> None:
    """Pages that overlap by one record (fetched ahead) and repeat ids: each page's
    `landable` holds the text of its `records` and nothing else."""
    records = [{"id": f"pay_{i}", "n": i} for i in range(10)]
    answers = {
        0: [*records[0:4]],
        3: [records[3], records[4], records[1], records[5]],  # the overlap, then an old one
        6: [records[5], {"n": "no id"}, records[6], records[7]],  # overlap; unkeyed inside
        8: [records[7], records[8], records[9]],
    }
    order = iter([0, 3, 6, 8])

    def fetch(params: Params, ids: list[str]) -> FetchedPage:
        at = next(order)
        data = answers[at]
        body = {"data": data, "hasMore": at != 8, "nextOffset": at + len(data) - 1}
        return FetchedPage(body, f"req_{at}", landable=landable(data))

    pag = NextOffsetPaginator(4, anchored=True)
    pages = list(Scan("payments", fetch, pag))
    landed = [r.get("id") for p in pages for r in p.records]
    assert landed == [*(f"pay_{i}" for i in range(6)), None, *(f"pay_{i}" for i in range(6, 10))]
    for page in pages:
        assert page.landable is not None
        assert page.landable.ids == [record_id(r) for r in page.records]
        assert [orjson.loads(page.landable.text(i)) for i in range(len(page.records))] == (
            page.records
        )


@pytest.mark.parametrize("records", [[], [{"id": "a"}], [{"id": "a"}, {"id": "a"}]])
def test_small_pages(records: list[dict[str, Any]]) -> None:
    got = landable(records)
    assert [orjson.loads(got.text(i)) for i in range(len(records))] == records


@pytest.mark.parametrize(
    "params",
    [
        {"max-records": 200, "skip": 0},
        {"max-records": 1, "skip": 12345, "status": "refunded"},
        {"q": "a b&c=d/é?#%", "flag": True, "off": False, "n": -3},
    ],
)
def test_the_query_written_once_is_the_one_httpx_writes(params: dict[str, Any]) -> None:
    client = httpx.Client()
    url = "https://api.example.test/api/v1/payments"
    expected = client.build_request("GET", url, params=params).url
    assert client.build_request("GET", f"{url}?{query_string(params)}").url == expected


def test_a_cookie_the_provider_sets_is_still_sent_back(harness: Harness) -> None:
    """Answers without Set-Cookie skip httpx's cookie jar; one that sets a cookie does not."""
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("cookie"))
        body = {"data": [{"id": f"p{len(seen)}"}], "hasMore": len(seen) < 3}
        body["nextOffset"] = len(seen)
        headers = {"set-cookie": "lb=node-2; Path=/"} if len(seen) == 2 else {}
        return httpx.Response(200, json=body, headers=headers)

    with harness.client(handler, concurrency=1) as client:
        pages = list(client.scan("payments"))
    assert [r["id"] for p in pages for r in p.records] == ["p1", "p2", "p3"]
    assert seen == [None, None, "lb=node-2"]
