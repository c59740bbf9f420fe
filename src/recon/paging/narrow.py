"""Narrowing a page that failed for good down to the records that cannot be read (issue 13).

A provider that cannot serialise one record fails every request whose window holds it; the
rest of the page is readable. `narrow` fetches the failed window again in halves (smaller
`max-records`, the same request otherwise) until the unreadable records are isolated:

- fetch the left half; if it is read, the right half must hold the fault (the whole
  failed) and is split without being fetched whole; if the left half fails, it is split
  and the right half fetched (and split in turn if it fails too);
- one bad record in a page of 200 costs 8 to 16 extra requests (log2 200 levels, one or two
  requests each); `budget` bounds them, after which what is left is reported unread.

Pure logic over a `fetch` function, like `Scan`: no I/O of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recon.errors import ApiError, AuthError, ConfigError, ReconError, TransportError
from recon.paging.paginators import id_at

if TYPE_CHECKING:
    from recon.paging.pages import FetchedPage

__all__ = ["Narrowed", "Piece", "Unread", "narrow", "narrowable"]

#: Fetch `limit` records from `offset`; request ids of every attempt are appended to the list.
FetchWindow = Callable[[int, int, list[str]], "FetchedPage"]


@dataclass(frozen=True, slots=True)
class Piece:
    """A part of the failed window that was read: `offset` and the answer."""

    offset: int
    fetched: FetchedPage

    @property
    def data(self) -> list[Any]:
        data: list[Any] = self.fetched.body["data"]
        return data


@dataclass(slots=True)
class Unread:
    """Offsets `offset .. offset+count-1` could not be read: why, and every request id."""

    offset: int
    count: int
    error: ReconError
    request_ids: list[str] = field(default_factory=list)
    before_id: str | None = None  # the record just before, when a neighbour showed it
    after_id: str | None = None  # the record just after, when a neighbour showed it


@dataclass(slots=True)
class Narrowed:
    """The outcome: the pieces read (in offset order), the ranges unread, requests spent."""

    pieces: list[Piece] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)
    requests: int = 0
    budget: int = 0

    @property
    def records_read(self) -> int:
        return sum(len(p.data) for p in self.pieces)


def narrowable(exc: ReconError) -> bool:
    """Whether a failure may come from the records in the window (worth narrowing).

    A 500 (the server failed to build the answer) may; a server out of capacity
    (502/503/504), a refusal, a rate limit waited out, a garbled 2xx or a transport
    failure says nothing about the records: narrowing would only repeat it. An answer over
    RECON_MAX_BODY_MB may: its records may fit in smaller windows.
    """
    if not isinstance(exc, ApiError):
        return False
    return exc.status == 500 or exc.code == "body_too_large"  # smaller windows may fit


def narrow(
    fetch: FetchWindow,
    offset: int,
    size: int,
    error: ReconError,
    request_ids: list[str],
    *,
    budget: int,
) -> Narrowed:
    """Isolate the unreadable records of the window `offset .. offset+size-1`.

    `error` and `request_ids` are the failed page's. Every piece read is returned (the
    caller deduplicates and lands it); every range left unread carries the ids of each
    request that covered it.
    """
    out = Narrowed(budget=budget)
    ids = list(request_ids)
    half = size // 2
    if size <= 1 or budget <= 0:
        out.unread.append(Unread(offset, size, error, ids))
        return out
    left = _try(fetch, out, offset, half)
    if isinstance(left, Piece):
        out.pieces.append(left)
        if len(left.data) >= half:  # else the list ends inside the left half
            _split(fetch, out, offset + half, size - half, error, ids, budget)
    else:
        right = _try(fetch, out, offset + half, size - half)
        if isinstance(right, Piece):
            out.pieces.append(right)
            _split(fetch, out, offset, half, left[0], ids + left[1], budget)
        else:  # both halves fail: not one record's fault (or not the records' at all)
            out.unread.append(Unread(offset, size, error, ids + left[1] + right[1]))
    out.pieces.sort(key=lambda p: p.offset)
    out.unread.sort(key=lambda u: u.offset)
    _neighbours(out)
    return out


def _split(
    fetch: FetchWindow,
    out: Narrowed,
    offset: int,
    size: int,
    error: ReconError,
    ids: list[str],
    budget: int,
) -> None:
    """`offset .. offset+size-1` is known to fail (with `error`, `ids`): narrow it."""
    if size <= 1 or out.requests >= budget:
        out.unread.append(Unread(offset, size, error, ids))
        return
    half = size // 2
    left = _try(fetch, out, offset, half)
    if isinstance(left, Piece):
        out.pieces.append(left)
        if len(left.data) < half:  # the list ends inside the left half: nothing on the right
            return
        _split(fetch, out, offset + half, size - half, error, ids, budget)
        return
    left_error, left_ids = left
    _split(fetch, out, offset, half, left_error, ids + left_ids, budget)
    if out.requests >= budget:
        out.unread.append(Unread(offset + half, size - half, error, list(ids)))
        return
    right = _try(fetch, out, offset + half, size - half)
    if isinstance(right, Piece):
        out.pieces.append(right)
    else:
        _split(fetch, out, offset + half, size - half, right[0], ids + right[1], budget)


def _try(
    fetch: FetchWindow, out: Narrowed, offset: int, size: int
) -> Piece | tuple[ReconError, list[str]]:
    ids: list[str] = []
    out.requests += 1
    try:
        fetched = fetch(offset, size, ids)
    except (AuthError, ConfigError):
        raise
    except ReconError as exc:
        if isinstance(exc, TransportError) and exc.kind == "tls":
            raise
        if not narrowable(exc):  # the server's trouble, not the records': stop here
            out.requests = max(out.requests, out.budget)
        return exc, ids
    return Piece(offset, fetched)


def _neighbours(out: Narrowed) -> None:
    """Name the records either side of each unread range, where a piece shows them."""
    by_end: dict[int, str] = {}
    by_start: dict[int, str] = {}
    for piece in out.pieces:
        if not piece.data:
            continue
        first, last = id_at(piece.data, 0), id_at(piece.data, -1)
        if first is not None:
            by_start[piece.offset] = first
        if last is not None:
            by_end[piece.offset + len(piece.data)] = last
    for gap in out.unread:
        gap.before_id = by_end.get(gap.offset)
        gap.after_id = by_start.get(gap.offset + gap.count)
