"""Lists paged whole (`scan`), records fetched one by one (`scan_by_ids`), and one window of
a list read again (`rescan`): the paging half of `ApiClient`.

Pages are fetched ahead of a scan on the client's thread pool (`_Ahead`) when the
concurrency is not fixed at 1; the gate (`AdaptiveLimit`) every attempt passes bounds how
many are in flight, all resources together. A page that fails for good is narrowed down
to the records that cannot be read (`recon.paging.narrow`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TypeVar
from urllib.parse import quote

from recon.api.config import ClientConfig, check_id, check_payment_status, check_skip
from recon.api.sender import Op, Params, Sender
from recon.catalogue.resources import api_list
from recon.errors import AuthError, ConfigError, ReconError, TransportError
from recon.paging.ahead import Shares
from recon.paging.idscan import IdScan
from recon.paging.narrow import narrow, narrowable
from recon.paging.paginators import NextOffsetPaginator, record_id
from recon.paging.records import landable
from recon.paging.scan import FailedPage, Fetch, FetchedPage, Page, Scan, list_page

__all__ = ["Rescan", "Scanning"]

T = TypeVar("T")

#: In flight beyond what the provider's rate needs (rate x latency): the latency varies
#: from answer to answer, and a page's slot is held while it is read and parsed.
_RATE_MARGIN = 1


@dataclass(slots=True)
class Rescan:
    """One window of a list read again (`ApiClient.rescan`).

    `pages`: what was read, deduplicated within the window (and against `before_id`);
    `failed`: what still cannot be read, narrowed to the offsets, with every request id;
    `shifted`: the record expected just before the window is no longer there (the list
    moved since the failed run): the window's offsets may not be the records meant.
    """

    resource: str
    offset: int
    limit: int
    pages: list[Page] = field(default_factory=list)
    failed: list[FailedPage] = field(default_factory=list)
    requests: int = 0  # logical calls made (narrowing included)
    shifted: bool = False

    @property
    def records(self) -> int:
        return sum(len(p.records) for p in self.pages)

    @property
    def complete(self) -> bool:
        return not self.failed and not self.shifted


class _Ahead:
    """The `Lookahead` of a client's scans: its thread pool, sized by the gate's cap."""

    def __init__(self, send: Sender) -> None:
        self._send = send
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.shares = Shares()  # the lists read right now share the requests in flight

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        with self._lock:
            if self._pool is None:
                workers = self._send.gate.cap
                self._pool = ThreadPoolExecutor(workers, thread_name_prefix="recon-ahead")
            return self._pool.submit(fn)

    def in_flight_wanted(self) -> int:
        """The requests the lists may have in flight together: the gate's limit, and no
        more than a paced provider's rate needs (its rate times the latency, plus one).

        The adaptive limit climbs while the latency stays flat, to 7-12 against 100 req/s
        at 50 ms where ~5 in flight keep the pace: the rest only waited for the rate's
        slots, and a list alone at its end sent them all past it on a first night (12 of
        its 24 pages past the ends at 100k). The rate is the one configured
        (`RECON_RATE_LIMIT`), else the one the provider's 429s show (`AdaptiveLimit.rate_seen`);
        with neither (no 429 yet, or a provider that does not limit) the limit alone bounds it.
        """
        send = self._send
        limit = send.gate.limit
        rate, latency = send.limiter.rate or send.gate.rate_seen, send.gate.latency
        if rate is None or latency is None:
            return limit
        return max(1, min(limit, math.ceil(rate * latency) + _RATE_MARGIN))

    def clock(self) -> float:
        return self._send.clock()

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None


class Scanning:
    """Mixed into `ApiClient`: needs `config` and `_send`."""

    config: ClientConfig
    _send: Sender
    _ahead: _Ahead

    def list_path(self, resource_name: str, *, customer_id: str | None = None) -> str | None:
        """The list path of a resource; None when the list is switched off (empty path)."""
        entry = api_list(resource_name)
        if entry.per_customer != (customer_id is not None):
            if customer_id is None:
                raise ConfigError("customer_id", f"is required to list {resource_name}")
            raise ConfigError(
                "customer_id", f"applies only to per-customer lists, not {resource_name}"
            )
        path = getattr(self.config, entry.path_setting) if entry.path_setting else entry.path
        if not path:
            return None
        if customer_id is not None:
            return path.format(customer_id=_seg(customer_id, "customer_id"))
        return str(path)

    def _filters(self, resource_name: str, filters: Mapping[str, str | None]) -> Params:
        known = dict(api_list(resource_name).filters)
        params: dict[str, str | int] = {}
        for name, value in filters.items():
            if name not in known:
                raise ConfigError(name, f"is not a filter of the {resource_name} list")
            if value is not None:
                if name == "status":
                    check_payment_status(value, name)
                params[getattr(self.config, known[name])] = value
        return params

    def _fetcher(self, resource_name: str, path: str | None, *, narrowing: bool = False) -> Fetch:
        send = self._send
        policy = send.narrow_policy if narrowing else None

        def fetch(query: Params, request_ids: list[str]) -> FetchedPage:
            if path is None:
                raise ConfigError("path", f"no {resource_name} list is offered")
            op = Op(resource_name, "GET", path, expect="list", params=dict(query))
            answer = send.call(op, request_ids, policy=policy)
            body = answer.body
            # The records as landing takes them, made here while they are in this core's cache
            started = send.clock()
            land = landable(body["data"])
            work_s = answer.read_s + send.clock() - started
            return FetchedPage(body, answer.request_id, answer.content, land, answer.wait_s, work_s)

        return fetch

    def scan(
        self,
        resource_name: str,
        *,
        start_offset: int = 0,
        seen_ids: Iterable[str] = frozenset(),
        customer_id: str | None = None,
        **filters: str | None,
    ) -> Scan:
        """Page through a resource losing nothing; iterate the `Scan`, then read `.report`.

        Keyword `filters` are the list's own (payments: `status`); None means unfiltered.
        """
        check_skip(start_offset, "start_offset")
        entry = api_list(resource_name)
        path = self.list_path(resource_name, customer_id=customer_id)
        params = self._filters(resource_name, filters)
        config = self.config
        ahead = config.concurrency != 1
        paginator = entry.paginator(
            config.page_size,
            start_offset,
            limit_param=config.page_size_param,
            skip_param=config.skip_param,
        )
        if isinstance(paginator, NextOffsetPaginator):
            paginator.anchored = ahead  # pages answered out of order must not hide a gap
        unavailable = None
        if path is None:
            setting = f"RECON_{(entry.path_setting or 'path').upper()}"
            unavailable = f"{setting} is empty: no {resource_name} list offered"
        return Scan(
            resource_name,
            self._fetcher(resource_name, path),
            paginator,
            params=params,
            seen_ids=seen_ids,
            customer_id=customer_id,
            unavailable_reason=unavailable,
            max_consecutive_failures=config.max_consecutive_failed_pages,
            lookahead=self._ahead if ahead else None,
            narrow_fetch=self._fetcher(resource_name, path, narrowing=True),
            narrow_budget=config.narrow_max_requests,
            max_pages=config.max_pages_per_list,
        )

    def rescan(
        self,
        resource_name: str,
        offset: int,
        limit: int,
        *,
        customer_id: str | None = None,
        before_id: str | None = None,
        **filters: str | None,
    ) -> Rescan:
        """Read the window `offset .. offset+limit-1` of a list again (e.g. a failed page).

        Each request asks at most a page; one that fails for good is narrowed to the records
        that cannot be read. With `before_id` (the record a failed page's neighbour showed
        just before it), each request starts one record earlier and must start with it,
        or the result is `shifted`. 401/403 and TLS failures propagate.
        """
        check_skip(offset, "offset")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError("limit", f"must be an integer >= 1, got {limit!r}")
        path = self.list_path(resource_name, customer_id=customer_id)
        if path is None:
            raise ConfigError("path", f"no {resource_name} list is offered")
        base = self._filters(resource_name, filters)
        config = self.config
        fetch = self._fetcher(resource_name, path)
        narrow_fetch = self._fetcher(resource_name, path, narrowing=True)
        out = Rescan(resource_name, offset, limit)
        seen: set[str] = {before_id} if before_id else set()

        def query(at: int, count: int) -> Params:
            return {**base, config.page_size_param: count, config.skip_param: at}

        def take(at: int, fetched: FetchedPage) -> None:
            new = []
            for record in fetched.body["data"]:
                rid = record_id(record)
                if rid is None or rid not in seen:
                    new.append(record)
                    if rid is not None:
                        seen.add(rid)
            end = at + len(fetched.body["data"])
            page = list_page(resource_name, at, end, new, fetched, len(out.pages), customer_id)
            out.pages.append(page)

        at, end = offset, offset + limit
        while at < end:
            count = min(config.page_size - (1 if before_id and at > 0 else 0), end - at)
            skip, asked = (at - 1, count + 1) if before_id and at > 0 else (at, count)
            ids: list[str] = []
            out.requests += 1
            try:
                fetched = fetch(query(skip, asked), ids)
            except (AuthError, ConfigError):
                raise
            except ReconError as exc:
                if isinstance(exc, TransportError) and exc.kind == "tls":
                    raise
                if not narrowable(exc) or asked <= 1:
                    out.failed.append(_failed(resource_name, skip, asked, exc, ids, customer_id))
                    at, before_id = at + count, None  # nothing to anchor the next one on
                    continue
                result = narrow(
                    lambda o, n, i: narrow_fetch(query(o, n), i),
                    skip,
                    asked,
                    exc,
                    ids,
                    budget=config.narrow_max_requests,
                )
                out.requests += result.requests
                for piece in result.pieces:
                    take(piece.offset, piece.fetched)
                tail = result.pieces[-1] if result.pieces else None
                reached = tail is not None and tail.offset + len(tail.data) == skip + asked
                before_id = record_id(tail.data[-1]) if before_id and reached and tail else None
                for gap in result.unread:
                    failed = _failed(
                        resource_name,
                        gap.offset,
                        gap.count,
                        gap.error,
                        gap.request_ids,
                        customer_id,
                    )
                    out.failed.append(
                        replace(failed, before_id=gap.before_id, after_id=gap.after_id)
                    )
                at += count
                continue
            data = fetched.body["data"]
            if skip < at and (not data or record_id(data[0]) != before_id):
                out.shifted = True
            take(skip, fetched)
            if len(data) < asked:
                break  # the list ends inside the window
            before_id = record_id(data[-1]) if before_id else None
            at += count
        return out

    def scan_by_ids(
        self,
        resource_name: str,
        ids: Iterable[str],
        *,
        seen_ids: Iterable[str] = frozenset(),
        batch_size: int = 200,
    ) -> IdScan:
        """Fetch a resource's records one by one (ops 16, 14, 6) as pages of raw dicts.

        docs/design.md (the API's open points): when the invoices list is not offered,
        invoices come one by one from `GET /invoices/{id}` for ids found elsewhere. Ids in
        `seen_ids` are skipped.
        """
        entry = api_list(resource_name)
        template = entry.by_id
        if template is None:
            raise ConfigError("resource", f"cannot fetch {resource_name!r} by id")
        checked = [check_id(i, "ids") for i in ids]
        send = self._send

        def fetch_one(ident: str, request_ids: list[str]) -> FetchedPage:
            path = template.format(id=quote(ident, safe=""))
            op = Op(resource_name, "GET", path, auth=entry.by_id_auth)
            answer = send.call(op, request_ids)
            return FetchedPage(answer.body, answer.request_id)

        return IdScan(resource_name, checked, fetch_one, batch_size=batch_size, seen_ids=seen_ids)

    def scan_payment_methods(self, customer_ids: Iterable[str]) -> list[Scan]:
        """One `Scan` of payment methods per customer id (each deduplicated on its own)."""
        ids = list(dict.fromkeys(customer_ids))
        for cid in ids:
            check_id(cid, "customer_ids")
        return [self.scan("payment_methods", customer_id=cid) for cid in ids]


def _failed(
    resource: str,
    offset: int,
    count: int,
    exc: ReconError,
    request_ids: list[str],
    customer_id: str | None,
) -> FailedPage:
    return FailedPage(
        resource=resource,
        offset=offset,
        error=str(exc),
        request_ids=tuple(dict.fromkeys(request_ids)),
        http_status=getattr(exc, "status", None),
        code=getattr(exc, "code", None) or getattr(exc, "kind", None),
        customer_id=customer_id,
        limit=count,
    )


def _seg(value: str, name: str) -> str:
    """`value` checked and quoted as one path segment."""
    return quote(check_id(value, name), safe="")
