"""Extraction: every catalogue list paged into landing, resumable, failures kept, auth stops all."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from recon.catalogue.resources import nightly_resources
from recon.config.settings import Settings, settings_from
from recon.night.extract import LISTED_RESOURCES, extract_all, resources_for
from recon.night.known_ids import ids_to_fetch
from recon.warehouse.landing import RunLanding

RUN = "20261121T020000Z-3fa2c1"
PATHS = {
    "/api/v1/payments": "payments",
    "/api/v1/refunds": "refunds",
    "/api/v1/disputes": "disputes",
    "/api/v1/subscriptions": "subscriptions",
    "/api/v1/invoices": "invoices",
    "/api/v1/payment-intents": "payment_intents",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)


class FakeApi:
    """Lists of `n` records per resource; `fail`/`missing` make some requests fail."""

    def __init__(self, n: int = 5) -> None:
        self.lists = {r: [{"id": f"{r}_{i}"} for i in range(n)] for r in PATHS.values()}
        self.requests: list[httpx.Request] = []
        self.fail: Callable[[httpx.Request], httpx.Response | None] = lambda _r: None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        failed = self.fail(request)
        if failed is not None:
            return failed
        path = request.url.path
        if path.startswith("/api/v1/invoices/"):
            ident = path.rsplit("/", 1)[1]
            found = [r for r in self.lists["invoices"] if r["id"] == ident]
            if found:
                return httpx.Response(200, json=found[0], headers={"X-Request-Id": "req_one"})
            return httpx.Response(
                404, json={"error": "not_found", "message": "no", "requestId": "q"}
            )
        resource = PATHS[path]
        skip = int(request.url.params["skip"])
        size = int(request.url.params["max-records"])
        data = self.lists[resource][skip : skip + size]
        body: dict[str, Any] = {"data": data}
        if resource == "payments":
            more = skip + len(data) < len(self.lists[resource])
            body |= {"hasMore": more, "nextOffset": skip + len(data) if more else None}
        return httpx.Response(200, json=body, headers={"X-Request-Id": f"req_{resource}_{skip}"})


def _settings(tmp_path: Path, **values: Any) -> Settings:
    return settings_from(
        base_url="https://api.example.test",
        api_key="k",
        page_size=2,
        landing=str(tmp_path / "landing"),
        backoff_initial_s=0,
        backoff_max_s=0,
        max_attempts=2,
        **values,
    )


def _landing(settings: Settings) -> RunLanding:
    landing = RunLanding(settings.landing, RUN)
    landing.create({"started_at": "2026-11-21T02:00:00+00:00"})
    return landing


def _landed(landing: RunLanding, resource: str) -> list[str]:
    return [i for p in landing.files(resource, "batch") for i in pq.read_table(p)["id"].to_pylist()]


def test_a_nightly_reads_the_catalogue_lists_in_order() -> None:
    assert list(LISTED_RESOURCES) == [r.name for r in nightly_resources()]
    assert "payment_methods" not in LISTED_RESOURCES
    plain = settings_from()
    assert resources_for(plain) == list(LISTED_RESOURCES)
    assert resources_for(plain, payment_methods=True)[-1] == "payment_methods"
    assert resources_for(settings_from(customer_ids="cus_1"))[-1] == "payment_methods"


def test_every_list_is_landed_whole_with_its_call_log(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    landing = _landing(settings)
    api = FakeApi(n=5)
    outcomes = extract_all(settings, landing, LISTED_RESOURCES, transport=httpx.MockTransport(api))
    assert {o.resource: (o.status, o.records) for o in outcomes} == dict.fromkeys(
        LISTED_RESOURCES, ("complete", 5)
    )
    for resource in LISTED_RESOURCES:
        assert sorted(_landed(landing, resource)) == sorted(f"{resource}_{i}" for i in range(5))
        calls = [c for p in landing.files(resource, "calls") for c in pq.read_table(p).to_pylist()]
        assert calls
        assert all(c["resource"] == resource and c["request_id"] for c in calls)


def test_a_finished_resource_is_not_fetched_again(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    landing = _landing(settings)
    api = FakeApi(n=3)
    extract_all(settings, landing, ["disputes"], transport=httpx.MockTransport(api))
    before = len(api.requests)
    again = extract_all(settings, landing, ["disputes"], transport=httpx.MockTransport(api))
    assert len(api.requests) == before
    assert again[0].status == "complete"
    assert again[0].records == 3


def test_a_page_failing_for_good_is_kept_with_its_request_ids(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    landing = _landing(settings)
    api = FakeApi(n=6)

    def fail(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/disputes") and request.url.params["skip"] == "1":
            rid = f"req_bad_{len(api.requests)}"
            return httpx.Response(500, json={"error": "internal", "message": "x", "requestId": rid})
        return None

    api.fail = fail
    (out,) = extract_all(settings, landing, ["disputes"], transport=httpx.MockTransport(api))
    assert (out.status, out.failed_pages) == ("incomplete", 1)
    (failure,) = landing.states()["disputes"].failed_pages
    assert failure["offset"] == 1
    # narrowed (issue 13) to the one record the server cannot send: the page's two
    # attempts and the narrowing request's two, each with its own id
    assert failure["limit"] == 1
    assert len(failure["request_ids"]) == 4
    assert all(r.startswith("req_bad_") for r in failure["request_ids"])
    assert out.records == 6  # the rest of the failed page is landed (record 1 came with
    # the page before it, which overlaps it by one record)


def test_a_refused_key_stops_the_run_and_starts_nothing_else(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    landing = _landing(settings)
    api = FakeApi()
    api.fail = lambda _r: httpx.Response(
        401, json={"error": "unauthorized", "message": "bad key", "requestId": "req_401"}
    )
    fatal: list[str] = []
    outcomes = extract_all(
        settings,
        landing,
        LISTED_RESOURCES,
        transport=httpx.MockTransport(api),
        on_fatal=fatal.append,
    )
    assert outcomes[0].status == "failed"
    assert outcomes[0].fatal
    assert "RECON_API_KEY" in fatal[0]
    assert {o.status for o in outcomes[1:]} == {"skipped"}
    assert len(api.requests) == 1


def test_invoices_come_one_by_one_when_their_list_is_not_offered(tmp_path: Path) -> None:
    ids_file = tmp_path / "invoice-ids.txt"
    ids_file.write_text("# from the books\ninvoices_1\ninvoices_9\n")
    settings = _settings(tmp_path, invoices_path="", invoice_ids_file=str(ids_file))
    landing = _landing(settings)
    api = FakeApi(n=3)
    api.lists["subscriptions"][0]["latestInvoiceId"] = "invoices_2"
    outcomes = extract_all(settings, landing, LISTED_RESOURCES, transport=httpx.MockTransport(api))
    invoices = next(o for o in outcomes if o.resource == "invoices")
    # Without a list nobody can vouch for completeness: still unavailable, records kept.
    assert invoices.status == "unavailable"
    assert sorted(_landed(landing, "invoices")) == ["invoices_1", "invoices_2"]
    assert "1 not found" in (invoices.reason or "")
    assert ids_to_fetch(settings, landing, "invoices") == ["invoices_1", "invoices_9", "invoices_2"]


def test_the_books_invoice_ids_drive_the_one_by_one_fetch(tmp_path: Path) -> None:
    books = tmp_path / "invoices.csv"
    books.write_text(
        "invoice_id,customer_id,amount_minor,currency,status\n"
        "invoices_0,c1,100,EUR,open\n"
        " invoices_2 ,c1,200,EUR,paid\n"
        "invoices_0,c1,100,EUR,open\n"  # a repeated row names the invoice once
        ",c2,300,EUR,open\n"  # no id: a reject for the books load, nothing to fetch here
        "invoices_7,c2,400,EUR,open\n"
    )
    settings = _settings(tmp_path, invoices_path="", ledger_invoices=str(books))
    landing = _landing(settings)
    api = FakeApi(n=3)
    outcomes = extract_all(settings, landing, LISTED_RESOURCES, transport=httpx.MockTransport(api))
    invoices = next(o for o in outcomes if o.resource == "invoices")
    assert invoices.status == "unavailable"
    assert sorted(_landed(landing, "invoices")) == ["invoices_0", "invoices_2"]
    assert "1 not found" in (invoices.reason or "")
    assert ids_to_fetch(settings, landing, "invoices") == ["invoices_0", "invoices_2", "invoices_7"]
    one = "/api/v1/invoices/"
    fetched = [r.url.path.removeprefix(one) for r in api.requests if one in r.url.path]
    assert sorted(fetched) == ["invoices_0", "invoices_2", "invoices_7"]
