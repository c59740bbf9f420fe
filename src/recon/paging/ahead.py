"""Pages fetched ahead of a scan, in parallel, at the offsets its paginator predicts.

`Ahead.get(params)` is what a `Scan` calls instead of fetching: the page it needs, from a
request already in flight or sent now; before waiting it tops up the pages in flight at
the predicted offsets (s + step, s + 2·step, …; `BasePaginator.predict`) up to the
`Lookahead`'s depth, and drops those no longer predicted (a short page, an anchor found
elsewhere, a step back, a `nextOffset` other than predicted). The scan still takes every
page in order and verifies it as in sequential paging: a wrong prediction costs requests,
never a record, and the scan simply goes on sequentially from its last verified page.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Protocol

from recon.errors import ReconError
from recon.paging.paginators import BasePaginator, Params

if TYPE_CHECKING:
    from recon.paging.scan import Fetch, FetchedPage, ScanReport

__all__ = ["Ahead", "Job", "Lookahead"]

Job = tuple["FetchedPage | None", list[str], ReconError | None]
_Key = tuple[tuple[str, str | int], ...]


class Lookahead(Protocol):
    """Where scans send the pages they fetch ahead (the client's thread pool)."""

    def submit(self, fn: Callable[[], Job]) -> Future[Job]:
        """Run `fn` soon, on another thread."""
        ...

    def depth(self) -> int:
        """How many pages a list may have in flight ahead of its scan right now."""
        ...


class Ahead:
    """The pages in flight ahead of one scan (used from the scan's thread only)."""

    def __init__(
        self, fetch: Fetch, lookahead: Lookahead, paginator: BasePaginator, report: ScanReport
    ) -> None:
        self._fetch = fetch
        self._lookahead = lookahead
        self._pag = paginator
        self._report = report
        self._inflight: dict[_Key, Future[Job]] = {}

    def get(self, params: Params, request_ids: list[str]) -> FetchedPage:
        """The page `params` asks for; raises its failure as a direct fetch would."""
        job = self._inflight.pop(_key(params), None)
        self._top_up(params)
        if job is None:
            return self._fetch(params, request_ids)
        fetched, ids, error = job.result()
        request_ids.extend(ids)
        if error is not None:
            raise error
        assert fetched is not None
        return fetched

    def close(self) -> None:
        """Drop every page still in flight (the scan ended or stopped)."""
        for job in self._inflight.values():
            self._drop(job)
        self._inflight.clear()

    def _drop(self, job: Future[Job]) -> None:
        if not job.cancel():  # already sent: a request spent for nothing
            self._report.wasted += 1

    def _top_up(self, params: Params) -> None:
        pag = self._pag
        # Slow start per list: nothing ahead of the first page (a list not offered, refused
        # credentials, an empty list cost one request), then 2, 4, 8… pages (a short list
        # must not cost a burst of pages past its end).
        pages = self._report.pages
        depth = min(self._lookahead.depth(), 1 << min(pages, 6)) if pages else 0
        wanted: dict[_Key, Params] = {}
        for offset in pag.predict(depth):
            ahead: Params = dict(params)
            ahead[pag.skip_param] = offset
            wanted[_key(ahead)] = ahead
        for key in [k for k in self._inflight if k not in wanted]:
            self._drop(self._inflight.pop(key))
        fetch = self._fetch
        for key, query in wanted.items():
            if key in self._inflight:
                continue

            def job(query: Params = query) -> Job:
                ids: list[str] = []
                try:
                    return fetch(query, ids), ids, None
                except ReconError as exc:
                    return None, ids, exc

            self._inflight[key] = self._lookahead.submit(job)
            self._report.speculative += 1


def _key(params: Params) -> _Key:
    return tuple(sorted(params.items()))
