"""`IdScan`: records fetched one by one by id, as pages (e.g. invoices when no list is offered)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from recon.errors import ApiError, AuthError, ConfigError, ReconError, TransportError
from recon.paging.scan import FailedPage, FetchedPage, Page, ScanReport

__all__ = ["FetchOne", "IdScan"]

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
