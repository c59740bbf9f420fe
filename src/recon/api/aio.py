"""Async use of the client, without a second retry loop.

The sync `ApiClient` is the one implementation: its retry loop, rate limiter and call log
are thread-safe, and on two cores the client's JSON parsing, not the network, bounds a
scan (docs/facts.md "Paging": async httpx with 4-8 requests in flight was slower than
sequential). So
async callers (an async Prefect flow, a notebook) run the sync client in worker threads:

    async with AsyncApiClient(ApiClient(config)) as aclient:
        payment = await aclient.call(aclient.sync.get_payment, "pay_123")
        async for page in aclient.scan("payments"):
            ...

Every call still goes through the same `RetryPolicy`, the same shared rate limiter and the
same `on_attempt` hook.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

from recon.api.client import ApiClient
from recon.paging.idscan import IdScan
from recon.paging.scan import Page, Scan, ScanReport

__all__ = ["AsyncApiClient", "AsyncScan"]

P = ParamSpec("P")
T = TypeVar("T")

_END = object()


class AsyncScan:
    """A `Scan` (or `IdScan`) iterated with `async for`; each page is fetched in a thread."""

    def __init__(self, scan: Scan | IdScan) -> None:
        self._scan = scan
        self._pages: Iterator[Page] | None = None

    @property
    def report(self) -> ScanReport:
        """The underlying scan's report."""
        return self._scan.report

    def __aiter__(self) -> AsyncScan:
        return self

    async def __anext__(self) -> Page:
        if self._pages is None:
            self._pages = iter(self._scan)
        page = await asyncio.to_thread(next, self._pages, _END)
        if page is _END:
            raise StopAsyncIteration
        assert isinstance(page, Page)
        return page


class AsyncApiClient:
    """Awaitable access to an `ApiClient`: calls run in worker threads, retries included."""

    def __init__(self, client: ApiClient) -> None:
        self.sync = client

    async def __aenter__(self) -> AsyncApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the underlying client's connection pool."""
        await asyncio.to_thread(self.sync.close)

    async def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run one of the client's methods (e.g. `aclient.sync.get_payment`) in a thread."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    def scan(self, resource: str, **kwargs: Any) -> AsyncScan:
        """`ApiClient.scan`, iterated with `async for`."""
        return AsyncScan(self.sync.scan(resource, **kwargs))
