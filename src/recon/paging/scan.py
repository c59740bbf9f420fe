"""The loop that drives a paginator: `Scan` (a list) and `IdScan` (records one by one).

`Scan` asks its paginator to build each request, fetches it, and deduplicates by `id`
across the whole scan (inserts while paging shift records onto the next page), counting
the duplicates and the records answered again with other content (`dedupe.py`); a page
that fails for good is recorded as a `FailedPage` (offset, request ids, error) and paging
goes on with the next offset, the scan then being `incomplete`. A
list that answers 404/405 on its first page is `unavailable`, never an empty success.
Records stay as the answer gave them (a list page's as sent: `RawRecords`, parsed when asked
for). The strategies are in `paginators.py`.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from recon.errors import ApiError, AuthError, ConfigError, PagingError, ReconError, TransportError
from recon.paging.ahead import Ahead, Lookahead
from recon.paging.dedupe import RECENT_WINDOW, SeenRecords, changed_reason
from recon.paging.narrow import narrow, narrowable
from recon.paging.pages import FailedPage, Fetch, FetchedPage, Page, ScanReport
from recon.paging.paginators import BasePaginator, Params, id_at
from recon.paging.recent import RecentIds
from recon.paging.records import Landable

__all__ = [
    "FailedPage",
    "Fetch",
    "FetchedPage",
    "Lookahead",
    "Page",
    "RecentIds",
    "Scan",
    "ScanReport",
    "list_page",
]

#: Identical pages in a row, each from a higher offset and with nothing new, before a scan
#: stops: real paging moving forward never answers with the very same page again and again,
#: but a server that ignores the offset parameter does so forever.
_MAX_REPEATED_PAGES = 3


def _shape(data: list[Any]) -> tuple[int, str | None, str | None]:
    """A page's length and its first and last ids (enough to tell one page from another)."""
    if len(data) < 2:  # an empty or one-record page is the end of a list, not a repeat
        return (len(data), None, None)
    return (len(data), id_at(data, 0), id_at(data, -1))


class Scan:
    """Iterate to get `Page`s; then `report` says whether the list is complete."""

    def __init__(
        self,
        resource: str,
        fetch: Fetch,
        paginator: BasePaginator,
        *,
        params: Mapping[str, str | int] | None = None,
        seen_ids: Iterable[str] = frozenset(),
        customer_id: str | None = None,
        unavailable_reason: str | None = None,
        max_consecutive_failures: int = 3,
        window: int = RECENT_WINDOW,
        lookahead: Lookahead | None = None,
        narrow_fetch: Fetch | None = None,
        narrow_budget: int = 0,
        max_pages: int | None = None,
    ) -> None:
        self.resource = resource
        self._max_pages = max_pages
        self._fetch = fetch
        self._narrow_fetch = narrow_fetch
        self._narrow_budget = narrow_budget
        self.paginator = paginator
        self._params = dict(params or {})  # the list's own query (e.g. a status filter)
        self.report = ScanReport(resource, customer_id=customer_id)
        # The ids seen lately and what each looked like (recon.paging.dedupe).
        self._records = SeenRecords(self.report, window, seen_ids)
        self._seen = self._records.ids
        # Ids read on pages that continued known ground without a gap: a page whose first
        # record is among them cannot have skipped anything (see OffsetPaginator).
        self._verified = RecentIds(window)
        if self._seen and paginator.offset > 0:
            # A resumed scan: the records landed before the kill were read in order; its
            # first page overlaps the last of them (not a duplicate, not a gap).
            self._verified.update(self._seen)
            paginator.resume()
        self._customer_id = customer_id
        self._unavailable_reason = unavailable_reason
        self._max_failures = max_consecutive_failures
        self._started = False
        # Pages fetched ahead, in parallel (taken and verified in order all the same).
        self._ahead = Ahead(fetch, lookahead, paginator, self.report) if lookahead else None

    @property
    def seen_ids(self) -> frozenset[str]:
        """Every id seen so far (including the `seen_ids` the scan was started with)."""
        return frozenset(self._seen)

    def __iter__(self) -> Iterator[Page]:
        if self._started:
            raise RuntimeError("a Scan can be iterated only once")
        self._started = True
        return self._run_and_settle()

    def _run_and_settle(self) -> Iterator[Page]:
        try:
            yield from self._run()
        finally:
            if self._ahead is not None:
                self._ahead.close()

    def _get(self, params: Params, request_ids: list[str]) -> FetchedPage:
        if self._ahead is None:
            return self._fetch(params, request_ids)
        return self._ahead.get(params, request_ids)

    def _run(self) -> Iterator[Page]:
        report = self.report
        if self._unavailable_reason is not None:
            report.status, report.reason = "unavailable", self._unavailable_reason
            return
        pag = self.paginator
        failures_in_a_row = 0
        repeats = 0  # pages in a row identical to the one before, from another offset
        last: tuple[int, tuple[int, str | None, str | None]] | None = None
        seq = 0
        while pag.has_next_page:
            offset = pag.offset
            if self._max_pages is not None and report.pages >= self._max_pages:
                self._endless(offset)
                return
            params: Params = dict(self._params)
            pag.update_request(params)
            request_ids: list[str] = []
            failure: ReconError | None = None
            try:
                fetched = self._get(params, request_ids)
            except (AuthError, ConfigError):
                raise
            except ApiError as exc:
                if exc.status in (404, 405) and report.pages == 0 and not report.failed_pages:
                    report.status = "unavailable"
                    report.reason = f"the list answered {exc.status}: not offered ({exc})"
                    return
                failure = exc
            except TransportError as exc:
                if exc.kind == "tls":
                    raise
                failure = exc
            except ReconError as exc:
                failure = exc
            if failure is not None:
                seq, recovered = yield from self._narrow(offset, params, failure, request_ids, seq)
                if recovered:  # the readable records of the page were read: go on after it
                    failures_in_a_row = 0
                    pag.on_failure(offset)
                    continue
            else:
                page, paging_failed = self._take(fetched, offset, seq)
                seq += 1
                yield page
                shape = _shape(fetched.body["data"])
                same = last is not None and offset > last[0] and last[1] == shape
                repeats = repeats + 1 if same and shape[0] > 1 and not page.records else 0
                last = (offset, shape)
                if repeats >= _MAX_REPEATED_PAGES and pag.has_next_page:
                    # The same page whatever the offset: the server ignores the paging
                    # parameter (a wrong RECON_SKIP_PARAM?). Never page it forever.
                    self._fail(
                        offset,
                        PagingError(
                            f"offsets {offset} and before answered the same "
                            f"{shape[0]} records {repeats + 1} times in a row: the server "
                            "ignores the paging parameters (check RECON_SKIP_PARAM and "
                            "RECON_PAGE_SIZE_PARAM)"
                        ),
                        [fetched.request_id] if fetched.request_id else [],
                    )
                    report.status = "incomplete"
                    report.reason = (
                        "the server answers the same page whatever the offset; "
                        "the rest of the list was not read"
                    )
                    return
                if not paging_failed:
                    failures_in_a_row = 0
                    continue
            failures_in_a_row += 1
            if failures_in_a_row >= self._max_failures:
                report.status = "incomplete"
                last_error = report.failed_pages[-1].error if report.failed_pages else "?"
                report.reason = (
                    f"gave up after {failures_in_a_row} failed pages in a row (last at offset "
                    f"{offset}: {last_error}); the rest of the list was not read"
                )
                return
            pag.on_failure(offset)
        report.rewinds = pag.rewinds
        reasons = []
        if report.failed_pages:
            unread = sum(f.limit or pag.page_size for f in report.failed_pages)
            reasons.append(
                f"{len(report.failed_pages)} page(s) failed for good "
                f"(up to {unread} record(s) unread)"
            )
        if report.changed:
            reasons.append(changed_reason(report.changed, report.changed_ids))
        if reasons:
            report.status, report.reason = "incomplete", "; ".join(reasons)
        else:
            report.status, report.reason = "complete", None

    def _endless(self, offset: int) -> None:
        """The list is still going after `max_pages` pages: it grows as fast as it is read
        (or never ends). Stop with the reason; what was read is kept."""
        error = PagingError(
            f"the list did not end after {self.report.pages} pages "
            f"({self.report.records} records; RECON_MAX_PAGES_PER_LIST)"
        )
        self._fail(offset, error, [])
        self.report.status = "incomplete"
        self.report.reason = (
            f"still going after {self.report.pages} pages ({self.report.records} records): "
            "the list grows as fast as it is read, or never ends; the rest was not read "
            "(RECON_MAX_PAGES_PER_LIST)"
        )

    def _narrow(
        self, offset: int, params: Params, exc: ReconError, request_ids: list[str], seq: int
    ) -> Generator[Page, None, tuple[int, bool]]:
        """The page at `offset` failed for good: isolate what cannot be read, yield the rest.

        Returns (as the generator's value) the next `seq` and whether any record was read.
        Without narrowing (no budget, a failure that is not about the records, a one-record
        page) the whole page is recorded as failed, as before.
        """
        pag = self.paginator
        size = params.get(pag.limit_param, pag.page_size)
        size = size if isinstance(size, int) else pag.page_size
        narrow_fetch = self._narrow_fetch
        if narrow_fetch is None or self._narrow_budget <= 0 or size <= 1 or not narrowable(exc):
            self._fail(offset, exc, request_ids)
            return seq, False

        def fetch_window(at: int, count: int, ids: list[str]) -> FetchedPage:
            query: Params = dict(params)
            query[pag.limit_param] = count
            query[pag.skip_param] = at
            return narrow_fetch(query, ids)

        result = narrow(fetch_window, offset, size, exc, request_ids, budget=self._narrow_budget)
        self.report.narrow_requests += result.requests
        for gap in result.unread:  # recorded first: a kill after the pieces keeps them
            self._fail(
                gap.offset,
                gap.error,
                gap.request_ids,
                limit=gap.count,
                before_id=gap.before_id,
                after_id=gap.after_id,
            )
        for piece in result.pieces:
            new, _ids, duplicates, unkeyed, landable = self._records.dedupe(
                piece.data, piece.fetched.landable
            )
            self._count(new, duplicates, unkeyed)
            end = piece.offset + len(piece.data)
            yield self._page(piece.offset, end, new, piece.fetched, seq, landable)
            seq += 1
        return seq, result.records_read > 0

    def _count(self, new: list[dict[str, Any]], duplicates: int, unkeyed: int) -> None:
        report = self.report
        report.pages += 1
        report.records += len(new)
        report.duplicates += duplicates
        report.unkeyed += unkeyed

    def _page(
        self,
        offset: int,
        next_offset: int | None,
        records: Sequence[Any],
        fetched: FetchedPage,
        seq: int,
        landable: Landable | None = None,
    ) -> Page:
        return list_page(
            self.resource,
            offset,
            next_offset,
            records,
            fetched,
            seq,
            self._customer_id,
            landable=landable,
        )

    def _take(self, fetched: FetchedPage, offset: int, seq: int) -> tuple[Page, bool]:
        """Dedupe the page's records, move the paginator, count; return the `Page`."""
        data: list[Any] = fetched.body["data"]
        pag = self.paginator
        overlap_expected = pag.expects_anchor
        first_id = id_at(data, 0) if data else None
        first_known = first_id is not None and first_id in self._verified
        new, ids, duplicates, unkeyed, landable = self._records.dedupe(data, fetched.landable)
        if overlap_expected and first_known:
            duplicates -= 1  # the one record of overlap we asked for is not a duplicate
        failed = False
        rewinds_before = pag.rewinds
        try:
            pag.update_state(offset, data, fetched.body, first_known)
            if pag.rewinds == rewinds_before and pag.uses_anchors:
                # a page past a gap proves nothing
                self._verified.update(ids)
        except PagingError as exc:
            self._fail(offset, exc, [fetched.request_id] if fetched.request_id else [])
            pag.on_failure(offset)
            failed = True
        self._count(new, duplicates, unkeyed)
        self.report.rewinds = pag.rewinds
        next_offset = pag.offset if pag.has_next_page else None
        return self._page(offset, next_offset, new, fetched, seq, landable), failed

    def _fail(
        self,
        offset: int,
        exc: ReconError,
        request_ids: list[str],
        *,
        limit: int | None = None,
        before_id: str | None = None,
        after_id: str | None = None,
    ) -> None:
        self.report.failed_pages.append(
            FailedPage(
                resource=self.resource,
                offset=offset,
                error=str(exc),
                request_ids=tuple(dict.fromkeys(request_ids)),
                http_status=getattr(exc, "status", None),
                code=getattr(exc, "code", None) or getattr(exc, "kind", None),
                customer_id=self._customer_id,
                limit=limit,
                before_id=before_id,
                after_id=after_id,
            )
        )


def list_page(
    resource: str,
    offset: int,
    next_offset: int | None,
    records: Sequence[Any],
    fetched: FetchedPage,
    seq: int,
    customer_id: str | None = None,
    *,
    landable: Landable | None = None,
) -> Page:
    """The one place a list's `Page` is built (from the answer it came in); `landable`:
    `records`' ids and JSON text, when the scan has them."""
    return Page(
        resource=resource,
        offset=offset,
        next_offset=next_offset,
        records=records,
        request_id=fetched.request_id,
        raw_count=len(fetched.body["data"]),
        seq=seq,
        customer_id=customer_id,
        content=fetched.content,
        landable=landable,
    )
