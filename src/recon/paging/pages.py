"""What paging passes around: a fetched body, a page of new records, a page that failed for
good, a scan's report, and the fetch function a scan calls.

Plain data (no behaviour) so that the scan and its helpers (`ahead`, `narrow`) share it
without importing one another.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from recon.paging.paginators import Params
from recon.paging.records import Landable

__all__ = ["FailedPage", "Fetch", "FetchedPage", "Page", "ScanReport", "ScanStatus"]

ScanStatus = Literal["complete", "incomplete", "unavailable"]


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """A list body as parsed from one successful request (internal to client and scan)."""

    body: dict[str, Any]
    request_id: str | None
    content: bytes = b""  # the body's bytes as received, for landing without re-serialising
    # The `data` records' ids and JSON text, made where the body was parsed (None: not made)
    landable: Landable | None = None
    # Seconds the provider took to answer (sent -> headers), and the client's own work on
    # the answer after that (reading, parsing, `landable`), on the client's clock
    wait_s: float = 0.0
    work_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Page:
    """One fetched page: its new (not yet seen) records (a list page's as sent, `RawRecords`).

    `offset` is the skip it was fetched at; `next_offset` where the scan goes next (None at
    the end). `raw_count` counts the records the server sent, duplicates included. `seq`
    numbers the pages of a scan: an offset can be fetched twice when the scan steps back,
    `seq` never repeats.
    """

    resource: str
    offset: int
    next_offset: int | None
    records: Sequence[Any]  # a list page's: `RawRecords` (recon.paging.records)
    request_id: str | None
    raw_count: int
    seq: int = 0
    customer_id: str | None = None
    content: bytes = b""  # the whole answer as received (all its records, duplicates too)
    # `records`' ids and JSON text, in the same order (None: landing writes them itself)
    landable: Landable | None = None


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
    # Records the failure covers from `offset` (None: the whole page asked for); after
    # narrowing (issue 13) usually 1, with the ids of the records either side when read.
    limit: int | None = None
    before_id: str | None = None
    after_id: str | None = None


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
    narrow_requests: int = 0  # extra requests spent narrowing failed pages (issue 13)
    speculative: int = 0  # pages fetched ahead of the scan
    wasted: int = 0  # of those, pages not used (the prediction was wrong)
    # Ids answered again with other content than the first time (the first is kept): the
    # list is then `incomplete`, naming the first few (`changed_ids`)
    changed: int = 0
    changed_ids: list[str] = field(default_factory=list)


#: Fetch one page: the query parameters (the paginator wrote its own into them) and a list
#: that collects the request id of every attempt.
Fetch = Callable[[Params, list[str]], FetchedPage]
