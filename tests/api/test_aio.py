"""Async use runs the one sync implementation in threads: same retries, same call log."""

from __future__ import annotations

import asyncio

import httpx

from recon.api import AsyncApiClient, Page

from .conftest import Harness, envelope


def test_async_calls_and_scans_reuse_the_sync_client(harness: Harness) -> None:
    ids = [f"d{i}" for i in range(5)]
    first = {"done": False}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/payments/p1"):
            if not first["done"]:
                first["done"] = True
                return envelope(503)
            return httpx.Response(200, json={"id": "p1", "amountMinor": 5, "currency": "JPY"})
        skip = int(request.url.params["skip"])
        return httpx.Response(200, json={"data": [{"id": i} for i in ids[skip : skip + 2]]})

    async def main() -> tuple[str, list[Page], str]:
        async with AsyncApiClient(harness.client(handler, page_size=2)) as aclient:
            payment = await aclient.call(aclient.sync.get_payment, "p1")
            scan = aclient.scan("disputes")
            pages = [page async for page in scan]
            return payment.id, pages, scan.report.status

    payment_id, pages, status = asyncio.run(main())
    assert payment_id == "p1"
    assert [r["id"] for p in pages for r in p.records] == ids
    assert status == "complete"
    outcomes = [r.outcome for r in harness.records if r.resource == "payments"]
    assert outcomes == ["retry", "ok"]
