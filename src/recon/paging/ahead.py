"""Pages fetched ahead of a scan, in parallel, at the offsets its paginator predicts.

`Ahead.get(params)` is what a `Scan` calls instead of fetching: the page it needs, from a
request already in flight or sent now; before waiting it tops up the pages in flight at
the predicted offsets (s + step, s + 2·step, …; `BasePaginator.predict`) up to the
list's part of the requests the client's lists may have in flight together (`Shares`),
and drops those no longer predicted (a short page, an anchor found elsewhere, a step back,
a `nextOffset` other than predicted). The scan still takes every page in order and
verifies it as in sequential paging: a wrong prediction costs requests, never a record,
and the scan simply goes on sequentially from its last verified page.

When the provider answers about as fast as the client handles a page (its wait, request
sent to answer's headers, below 1.5 times the client's own work on the page: reading and
parsing the answer, then what the scan's thread does until it asks for the next page), the
client is the bottleneck: a page fetched ahead buys little wall time, and handing it from
another thread to the scan's costs CPU (issue 23: ~3-4 CPU-s per 1M payments against a
sandbox without latency, and tens of thousands of context switches). Then the scan fetches
its next page on its own thread (`Ahead.fetch_here`), and fetches ahead again as soon as
the provider's wait grows past six times that work (a paced provider, 50 ms: ~20-50 times
it). While either is not known (the first pages), it fetches ahead.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

from recon.errors import ReconError
from recon.paging.paginators import BasePaginator, Params

if TYPE_CHECKING:
    from recon.paging.pages import Fetch, FetchedPage, ScanReport

__all__ = [
    "DROPPED",
    "FETCH_HERE_ABOVE",
    "FETCH_HERE_BELOW",
    "Ahead",
    "DroppedError",
    "Job",
    "Lookahead",
    "Shares",
]

#: A scan fetches its pages on its own thread once the provider's wait is below this many
#: times the client's own work per page, and fetches ahead again once it is above
#: `FETCH_HERE_ABOVE` times it (between the two it keeps what it does: a wait near the
#: threshold must not make it switch at every page).
FETCH_HERE_BELOW = 1.5
FETCH_HERE_ABOVE = 6.0
#: Each is the median of the scan's last pages' (a page that flushes a landing batch takes
#: far longer than the others, and must not count as every page's). The band is wide: a
#: provider sharing the client's two busy cores (the sandbox at load 8-10) answers in
#: 2-6 ms when nothing is ahead, fetched ahead ~2 ms, beside ~1.5-2.5 ms of the client's
#: work: at 1x/2x the scan switched back and forth all along. A paced provider (50 ms)
#: waits ~20-50 times the client's work.
_PAGES_MEASURED = 15

#: Set while a page fetched ahead is being sent: once the event is set (the scan no longer
#: wants the page) the sender gives up before the request goes out (`DroppedError`). A
#: job can wait for a place in the concurrency gate for a while: without this, pages no
#: longer wanted would still be sent when their turn came, spending the provider's rate.
DROPPED: ContextVar[threading.Event | None] = ContextVar("recon_dropped", default=None)


class DroppedError(ReconError):
    """A page fetched ahead was no longer wanted before its request went out."""


Job = tuple["FetchedPage | None", list[str], ReconError | None]
_Key = tuple[tuple[str, str | int], ...]


class Lookahead(Protocol):
    """Where scans send the pages they fetch ahead (the client's thread pool)."""

    def submit(self, fn: Callable[[], Job]) -> Future[Job]:
        """Run `fn` soon, on another thread."""
        ...

    shares: Shares  # the pages in flight the client's scans share

    def in_flight_wanted(self) -> int:
        """The requests the lists read at once may have in flight together right now."""
        ...

    def clock(self) -> float:
        """Now, on the clock the latency is measured on (seconds)."""
        ...


class Shares:
    """The requests in flight that the lists read at once share: one budget (thread-safe).

    A list's pages ahead are sent blind past its end on a first night, so each list that
    ends while others are still read wastes what it had ahead; only the last one needs
    the whole budget. Each list gets an equal part of the budget rounded down (its own
    page, and the rest ahead), and what the rounding leaves goes to the lists that have
    read the most pages, so that together they still keep the budget in flight. Rounded
    up (⌈budget / lists⌉ each, as before), six lists sharing 7 in flight each had a page
    ahead: with the provider's rate learnt (`AdaptiveLimit.rate_seen`), 15-19 pages past
    the ends of 1,123-1,129 requests, against 8-16 of 1,118-1,124 rounded down (100k
    payments, 50 ms, 100 a second, 4 interleaved runs each).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scans: list[Ahead] = []  # in the order they joined (the first wins a tie)

    def joined(self, scan: Ahead) -> None:
        with self._lock:
            self._scans.append(scan)

    def left(self, scan: Ahead) -> None:
        with self._lock:
            self._scans.remove(scan)

    def depth(self, scan: Ahead, wanted: int) -> int:
        """The pages `scan` may have in flight ahead of the one it reads, of `wanted` in
        flight for every list together."""
        with self._lock:
            scans = list(self._scans)
        if scan not in scans:
            return max(0, wanted - 1)
        part, left_over = divmod(wanted, len(scans))
        if left_over:
            longest = sorted(scans, key=lambda s: -s.pages_read)[:left_over]
            if scan in longest:
                part += 1
        return max(0, part - 1)


class Ahead:
    """The pages in flight ahead of one scan (used from the scan's thread only)."""

    def __init__(
        self, fetch: Fetch, lookahead: Lookahead, paginator: BasePaginator, report: ScanReport
    ) -> None:
        self._fetch = fetch
        self._lookahead = lookahead
        self._pag = paginator
        self._report = report
        self._inflight: dict[_Key, tuple[Future[Job], threading.Event]] = {}
        self._dropped: list[Future[Job]] = []  # dropped while under way: waited for at close
        self._lock = threading.Lock()
        self._failed_seen = 0  # failed pages the slow start has restarted for
        self._pages_at_failure = 0  # pages read when the last failed page was seen
        self._joined = False  # counted among the lookahead's scans (from the first page)
        self._returned_at: float | None = None  # when `get` last handed the scan a page
        # per page, the seconds: the provider took to answer, the client took to read and
        # parse the answer, the scan's thread took until it asked for the next page
        self._wait: deque[float] = deque(maxlen=_PAGES_MEASURED)
        self._read: deque[float] = deque(maxlen=_PAGES_MEASURED)
        self._own: deque[float] = deque(maxlen=_PAGES_MEASURED)
        self.here = False  # fetching on the scan's own thread (the provider answers at once)

    def get(self, params: Params, request_ids: list[str]) -> FetchedPage:
        """The page `params` asks for; raises its failure as a direct fetch would."""
        if not self._joined:
            self._joined = True
            self._lookahead.shares.joined(self)
        if self._returned_at is not None:  # the scan's own work on the page before
            self._own.append(self._lookahead.clock() - self._returned_at)
            self._returned_at = None
        entry = self._inflight.pop(_key(params), None)
        if entry is None:  # not predicted: fetched now, before anything is sent ahead of it
            fetched = self._fetch(params, request_ids)
            self._measured(fetched)
            self._top_up(params)
        else:
            self._top_up(params)
            got, ids, error = entry[0].result()
            request_ids.extend(ids)
            if error is not None:
                raise error
            assert got is not None
            fetched = got
            self._measured(fetched)
        self._returned_at = self._lookahead.clock()
        return fetched

    @property
    def pages_read(self) -> int:
        """The pages the scan has read so far (read from other threads: an int, no lock)."""
        return self._report.pages

    def _measured(self, fetched: FetchedPage) -> None:
        self._wait.append(fetched.wait_s)
        self._read.append(fetched.work_s)

    def fetch_here(self) -> bool:
        """Whether the scan fetches its next page on its own thread, nothing ahead: while
        the provider answers faster than the client handles a page (both known)."""
        if len(self._own) < _PAGES_MEASURED:
            return False  # not known yet: ahead (a paced provider needs pages ahead)
        wait = statistics.median(self._wait)
        work = statistics.median(self._read) + statistics.median(self._own)
        if work <= 0.0:
            self.here = False  # nothing measured (a clock that stands still)
        elif self.here:
            self.here = wait <= work * FETCH_HERE_ABOVE
        else:
            self.here = wait < work * FETCH_HERE_BELOW
        return self.here

    def close(self) -> None:
        """Drop every page still in flight (the scan ended or stopped), and wait for those
        already sent to be answered: their attempts belong in the list's call log, which
        is written when the scan ends."""
        for entry in self._inflight.values():
            self._drop(entry)
        self._inflight.clear()
        for job in self._dropped:
            if not job.cancelled():
                job.exception()  # waits; a job returns its failure, never raises it
        self._dropped.clear()
        if self._joined:
            self._joined = False
            self._lookahead.shares.left(self)

    def _drop(self, entry: tuple[Future[Job], threading.Event]) -> None:
        job, dropped = entry
        dropped.set()  # not sent yet: it never will be; under way: counted when it ends
        if job.done() and not job.cancelled() and job.result()[1]:
            self._sent_for_nothing()  # answered already, for nothing
        if not job.cancel() and not job.done():
            self._dropped.append(job)

    def _sent_for_nothing(self) -> None:
        with self._lock:
            self._report.wasted += 1

    def _top_up(self, params: Params) -> None:
        pag = self._pag
        # Slow start per list: nothing ahead of the first page (a list not offered, refused
        # credentials, an empty list cost one request), then 2, 4, 8… pages (a short list
        # must not cost a burst of pages past its end).
        # A failed page restarts the slow start: a list that fails (empty pages that say
        # there is more, bodies over the cap) is read one page at a time until a page reads
        # again, never with a burst of pages that will fail the same way in flight.
        report = self._report
        if len(report.failed_pages) != self._failed_seen:
            self._failed_seen = len(report.failed_pages)
            self._pages_at_failure = report.pages
        pages = report.pages - self._pages_at_failure
        if pages:
            lookahead = self._lookahead
            depth = min(
                lookahead.shares.depth(self, lookahead.in_flight_wanted()), 1 << min(pages, 6)
            )
        else:
            depth = 0
        if depth and self.fetch_here():
            depth = 0  # the next page is fetched on this thread, when the scan asks for it
        # Pages already in flight stay as long as they are still on the predicted path,
        # even when the depth shrank (the adaptive limit moves every round): dropping them
        # then sent the same page again a moment later (issue 23: ~2.6% of requests at 1M).
        wanted: dict[_Key, Params] = {}
        end = pag.expected_end
        for offset in pag.predict(max(depth, len(self._inflight))):
            if end is not None and offset >= end:
                break  # where the list ended last time: one page at a time from here
            ahead: Params = dict(params)
            ahead[pag.skip_param] = offset
            wanted[_key(ahead)] = ahead
        for key in [k for k in self._inflight if k not in wanted]:
            self._drop(self._inflight.pop(key))
        fetch = self._fetch
        for key, query in list(wanted.items())[:depth]:
            if key in self._inflight:
                continue
            dropped = threading.Event()

            def job(query: Params = query, dropped: threading.Event = dropped) -> Job:
                ids: list[str] = []
                token = DROPPED.set(dropped)
                try:
                    return fetch(query, ids), ids, None
                except DroppedError as exc:
                    return None, ids, exc
                except ReconError as exc:
                    return None, ids, exc
                finally:
                    DROPPED.reset(token)
                    if dropped.is_set() and ids:
                        self._sent_for_nothing()

            self._inflight[key] = (self._lookahead.submit(job), dropped)
            self._report.speculative += 1


def _key(params: Params) -> _Key:
    return tuple(sorted(params.items()))
