"""The loop that drives a paginator: `Scan` (a list) and `IdScan` (records one by one).

`Scan` asks its paginator to build each request, fetches it, and deduplicates by `id`
across the whole scan (inserts while paging shift records onto the next page), counting
the duplicates; a page that fails for good is recorded as a `FailedPage` (offset, request
ids, error) and paging goes on with the next offset, the scan then being `incomplete`. A
list that answers 404/405 on its first page is `unavailable`, never an empty success.
Records stay plain dicts (parsed once per page). The strategies are in `paginators.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from recon.errors import ApiError, AuthError, ConfigError, PagingError, ReconError, TransportError
from recon.paging.paginators import BasePaginator, Params, record_id

__all__ = [
    "FailedPage",
    "Fetch",
    "FetchOne",
    "FetchedPage",
    "IdScan",
    "Page",
    "RecentIds",
    "Scan",
    "ScanReport",
]

ScanStatus = Literal["complete", "incomplete", "unavailable"]


#: Identical pages in a row, each from a higher offset and with nothing new, before a scan
#: stops: real paging moving forward never answers with the very same page again and again,
#: but a server that ignores the offset parameter does so forever.
_MAX_REPEATED_PAGES = 3


def _shape(data: list[Any]) -> tuple[int, str | None, str | None]:
    """A page's length and its first and last ids (enough to tell one page from another)."""
    if len(data) < 2:  # an empty or one-record page is the end of a list, not a repeat
        return (len(data), None, None)
    return (len(data), record_id(data[0]), record_id(data[-1]))


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """A list body as parsed from one successful request (internal to client and scan)."""

    body: dict[str, Any]
    request_id: str | None
    content: bytes = b""  # the body's bytes as received, for landing without re-serialising


@dataclass(frozen=True, slots=True)
class Page:
    """One fetched page: its new (not yet seen) records, as dicts straight from the JSON.

    `offset` is the skip it was fetched at; `next_offset` where the scan goes next (None at
    the end). `raw_count` counts the records the server sent, duplicates included. `seq`
    numbers the pages of a scan: an offset can be fetched twice when the scan steps back,
    `seq` never repeats.
    """

    resource: str
    offset: int
    next_offset: int | None
    records: list[dict[str, Any]]
    request_id: str | None
    raw_count: int
    seq: int = 0
    customer_id: str | None = None
    content: bytes = b""  # the whole answer as received (all its records, duplicates too)


@dataclass(frozen=True, slots=True)
class FailedPage:
    """A page that failed for good: where, with which request ids, and why."""

    resource: str
    offset: int
    error: str
    request_ids: tuple[str, ...] = ()
    http_status: int | None = None
    code: str | None = None
    customer_id: str | None = None


@dataclass(slots=True)
class ScanReport:
    """How a scan went: `complete`, `incomplete` (failed pages) or `unavailable`."""

    resource: str
    status: ScanStatus = "incomplete"
    pages: int = 0
    records: int = 0
    duplicates: int = 0
    failed_pages: list[FailedPage] = field(default_factory=list)
    reason: str | None = "scan not finished"
    customer_id: str | None = None
    rewinds: int = 0  # times the scan stepped back because the list shrank under it
    unkeyed: int = 0  # records without a usable string `id` (passed on, not deduplicated)
    missing: list[str] = field(default_factory=list)  # ids answered 404 (IdScan only)


class RecentIds:
    """The ids seen lately: a set with bounded memory, in two generations.

    A scan must recognise the records it has just read (the overlap anchor, duplicates from
    inserts ahead of the cursor, a step back after deletions), which are always on the last
    few pages, but must not hold a merchant's whole list in memory. Ids are added to the
    current generation; when it holds `window` ids it becomes the previous one and the
    oldest generation is dropped, so between `window` and `2 * window` ids are remembered.
    A duplicate older than that is caught where the pages are loaded (recon's loader keeps
    the first landing of each id and counts the rest).
    """

    __slots__ = ("current", "previous", "window")

    def __init__(self, window: int = 100_000, initial: Iterable[str] = ()) -> None:
        self.window = max(1, window)
        self.current: set[str] = set()
        self.previous: set[str] = set()
        self.update(initial)

    def __contains__(self, ident: object) -> bool:
        return ident in self.current or ident in self.previous

    def __len__(self) -> int:
        return len(self.current | self.previous)

    def __iter__(self) -> Iterator[str]:
        return iter(self.current | self.previous)

    def add(self, ident: str) -> None:
        self.current.add(ident)
        self.rotate()

    def update(self, idents: Iterable[str]) -> None:
        current = self.current
        for ident in idents:
            current.add(ident)
            if len(current) >= self.window:
                self.rotate()
                current = self.current

    def rotate(self) -> None:
        """Start a new generation once the current one is full."""
        if len(self.current) >= self.window:
            self.previous = self.current
            self.current = set()


#: Fetch one page: the query parameters (the paginator wrote its own into them) and a list
#: that collects the request id of every attempt.
Fetch = Callable[[Params, list[str]], FetchedPage]


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
        window: int = 100_000,
    ) -> None:
        self.resource = resource
        self._fetch = fetch
        self.paginator = paginator
        self._params = dict(params or {})  # the list's own query (e.g. a status filter)
        self._seen = RecentIds(window, seen_ids)
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
        self.report = ScanReport(resource, customer_id=customer_id)

    @property
    def seen_ids(self) -> frozenset[str]:
        """Every id seen so far (including the `seen_ids` the scan was started with)."""
        return frozenset(self._seen)

    def __iter__(self) -> Iterator[Page]:
        if self._started:
            raise RuntimeError("a Scan can be iterated only once")
        self._started = True
        return self._run()

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
            params: Params = dict(self._params)
            pag.update_request(params)
            request_ids: list[str] = []
            try:
                fetched = self._fetch(params, request_ids)
            except (AuthError, ConfigError):
                raise
            except ApiError as exc:
                if exc.status in (404, 405) and report.pages == 0 and not report.failed_pages:
                    report.status = "unavailable"
                    report.reason = f"the list answered {exc.status}: not offered ({exc})"
                    return
                self._fail(offset, exc, request_ids)
            except TransportError as exc:
                if exc.kind == "tls":
                    raise
                self._fail(offset, exc, request_ids)
            except ReconError as exc:
                self._fail(offset, exc, request_ids)
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
                report.reason = (
                    f"gave up after {failures_in_a_row} failed pages in a row (last at offset "
                    f"{offset}); the rest of the list was not read"
                )
                return
            pag.on_failure(offset)
        report.rewinds = pag.rewinds
        if report.failed_pages:
            report.status = "incomplete"
            report.reason = f"{len(report.failed_pages)} page(s) failed for good"
        else:
            report.status, report.reason = "complete", None

    def _take(self, fetched: FetchedPage, offset: int, seq: int) -> tuple[Page, bool]:
        """Dedupe the page's records, move the paginator, count; return the `Page`."""
        data: list[Any] = fetched.body["data"]
        pag = self.paginator
        seen = self._seen
        current, previous = seen.current, seen.previous
        overlap_expected = pag.expects_anchor
        first_id = record_id(data[0]) if data else None
        first_known = first_id is not None and first_id in self._verified
        new: list[dict[str, Any]] = []
        ids: list[str] = []
        duplicates = 0
        unkeyed = 0
        for record in data:  # the hot loop of a scan: kept flat on purpose
            rid = record.get("id") if type(record) is dict else None
            if type(rid) is not str or not rid:
                unkeyed += 1
                new.append(record)
                continue
            ids.append(rid)
            if rid in current or rid in previous:
                duplicates += 1
            else:
                current.add(rid)
                new.append(record)
        seen.rotate()
        if overlap_expected and first_known:
            duplicates -= 1  # the one record of overlap we asked for is not a duplicate
        report = self.report
        failed = False
        rewinds_before = pag.rewinds
        try:
            pag.update_state(offset, data, fetched.body, first_known)
            if pag.rewinds == rewinds_before and pag.uses_anchors:
                self._verified.update(ids)  # a page past a gap proves nothing
        except PagingError as exc:
            self._fail(offset, exc, [fetched.request_id] if fetched.request_id else [])
            pag.on_failure(offset)
            failed = True
        report.pages += 1
        report.records += len(new)
        report.duplicates += duplicates
        report.unkeyed += unkeyed
        report.rewinds = pag.rewinds
        page = Page(
            resource=self.resource,
            offset=offset,
            next_offset=pag.offset if pag.has_next_page else None,
            records=new,
            request_id=fetched.request_id,
            raw_count=len(data),
            seq=seq,
            customer_id=self._customer_id,
            content=fetched.content,
        )
        return page, failed

    def _fail(self, offset: int, exc: ReconError, request_ids: list[str]) -> None:
        self.report.failed_pages.append(
            FailedPage(
                resource=self.resource,
                offset=offset,
                error=str(exc),
                request_ids=tuple(dict.fromkeys(request_ids)),
                http_status=getattr(exc, "status", None),
                code=getattr(exc, "code", None) or getattr(exc, "kind", None),
                customer_id=self._customer_id,
            )
        )


FetchOne = Callable[[str, list[str]], FetchedPage]


class IdScan:
    """Fetch records one by one by id (e.g. invoices when no list is offered), as pages.

    Same interface as `Scan`: iterate for `Page`s (`offset` = position of the batch's first
    id, `records` the records fetched), then read `report`. An id answered 404 is listed in
    `report.missing` (an answer, not a failure); any other failure for good becomes a
    `FailedPage` (offset = the id's position, request ids kept) and the report is
    `incomplete`. 401/403 and TLS failures propagate.
    """

    def __init__(
        self,
        resource: str,
        ids: list[str],
        fetch_one: FetchOne,
        *,
        batch_size: int = 200,
        seen_ids: Iterable[str] = frozenset(),
    ) -> None:
        self.resource = resource
        self._ids = list(dict.fromkeys(ids))
        self._fetch_one = fetch_one
        self._batch_size = max(1, batch_size)
        self._seen = set(seen_ids)
        self._started = False
        self.report = ScanReport(resource)

    def __iter__(self) -> Iterator[Page]:
        if self._started:
            raise RuntimeError("an IdScan can be iterated only once")
        self._started = True
        return self._run()

    def _run(self) -> Iterator[Page]:
        report = self.report
        ids = self._ids
        for seq, start in enumerate(range(0, len(ids), self._batch_size)):
            records: list[dict[str, Any]] = []
            last_rid: str | None = None
            for position in range(start, min(start + self._batch_size, len(ids))):
                ident = ids[position]
                if ident in self._seen:
                    report.duplicates += 1
                    continue
                request_ids: list[str] = []
                try:
                    fetched = self._fetch_one(ident, request_ids)
                except (AuthError, ConfigError):
                    raise
                except ReconError as exc:
                    if isinstance(exc, TransportError) and exc.kind == "tls":
                        raise
                    if isinstance(exc, ApiError) and exc.status == 404:
                        report.missing.append(ident)
                        continue
                    report.failed_pages.append(
                        FailedPage(
                            resource=self.resource,
                            offset=position,
                            error=f"{ident}: {exc}",
                            request_ids=tuple(dict.fromkeys(request_ids)),
                            http_status=getattr(exc, "status", None),
                            code=getattr(exc, "code", None) or getattr(exc, "kind", None),
                        )
                    )
                    continue
                self._seen.add(ident)
                records.append(fetched.body)
                last_rid = fetched.request_id
            end = start + self._batch_size
            report.pages += 1
            report.records += len(records)
            yield Page(
                resource=self.resource,
                offset=start,
                next_offset=end if end < len(ids) else None,
                records=records,
                request_id=last_rid,
                raw_count=len(records),
                seq=seq,
            )
        if report.failed_pages:
            report.status = "incomplete"
            report.reason = f"{len(report.failed_pages)} record(s) failed for good"
        else:
            report.status = "complete"
            report.reason = (
                f"{len(report.missing)} id(s) not found (404)" if report.missing else None
            )
