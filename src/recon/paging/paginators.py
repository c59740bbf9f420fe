"""Paging strategies: one small base with hooks, each strategy a short subclass.

In the manner of dlt's paginators, a paginator *builds* each request (`update_request`
writes its paging parameters into the query) and *moves* after each answer
(`update_state`); the loop that drives it (`recon.paging.scan.Scan`) never changes when a
strategy is added. Where dlt loses records, recon does not:

- `OffsetPaginator` (every list but payments) advances by the number of records actually
  returned, never by the page size asked for (a server capping pages at 100 must not lose
  half the list), and ends only on an empty page (a short page is no proof of the end).
  Each page overlaps the previous one by one record: if that record is not the first one
  back, records were deleted before the offset while we paged and some may have slid
  behind us, so the paginator steps back until it finds known ground again.
- `NextOffsetPaginator` (payments) follows the server's `hasMore` / `nextOffset`; a
  `nextOffset` that does not advance is an error, never an endless loop, and one that jumps
  past the records returned (`skip` + records) cannot be vouched for: the rest of the list
  is paged by recon's own offsets (the `OffsetPaginator` rules), never skipped.

A cursor or link strategy is a subclass that writes its cursor in `update_request` and
reads the next one in `update_state`.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

from recon.errors import PagingError
from recon.paging.records import RawRecords

__all__ = [
    "BasePaginator",
    "NextOffsetPaginator",
    "OffsetPaginator",
    "Params",
    "id_at",
    "ids_of",
    "record_id",
]

Params = MutableMapping[str, str | int]


def record_id(record: Any) -> str | None:
    """The record's `id` if it is a non-empty string (the only ids recon can key on)."""
    if isinstance(record, dict):
        rid = record.get("id")
        if isinstance(rid, str) and rid:
            return rid
    return None


def ids_of(data: Sequence[Any]) -> Sequence[str | None]:
    """`record_id` of each of a page's records, in order: a list page's own (`RawRecords`
    read them with its text), without parsing a record."""
    if isinstance(data, RawRecords):
        return data.landable.ids
    return [record_id(record) for record in data]


def id_at(data: Sequence[Any], index: int) -> str | None:
    """`record_id` of `data[index]`, without parsing a list page's record."""
    if isinstance(data, RawRecords):
        return data.landable.ids[index]
    return record_id(data[index])


class BasePaginator:
    """Holds where the next request goes; subclasses decide how an answer moves it."""

    def __init__(
        self,
        page_size: int,
        start_offset: int = 0,
        *,
        limit_param: str = "max-records",
        skip_param: str = "skip",
    ) -> None:
        self.page_size = page_size
        self.offset = start_offset
        self.limit_param = limit_param
        self.skip_param = skip_param
        self.has_next_page = True
        self.expects_anchor = False  # True when the next page should start with a known record
        self.uses_anchors = True  # False while a server's own cursor is followed
        self.rewinds = 0
        # Where the list ended last time (its length; None: not known). No page is fetched
        # ahead at or past it: past it the scan goes one page at a time, so the end of a
        # list costs no pages sent past it (issue 23). Only a hint: paging is unchanged.
        self.expected_end: int | None = None

    def update_request(self, params: Params) -> None:
        """Write the paging parameters of the next request into `params`."""
        params[self.limit_param] = self.page_size
        params[self.skip_param] = self.offset

    def update_state(
        self, offset: int, data: list[Any], body: dict[str, Any], first_known: bool
    ) -> None:
        """Move on after the page fetched at `offset` returned `data` (in `body`)."""
        raise NotImplementedError

    def on_failure(self, offset: int) -> None:
        """The page at `offset` failed for good: go on after it (records there are lost)."""
        self.offset = offset + self.page_size
        self.expects_anchor = False

    def resume(self) -> None:
        """The scan goes on from where an earlier one stopped (its offset is committed)."""

    def predict(self, n: int) -> list[int]:
        """The offsets of the `n` requests after the current one if every page came back
        full and nothing moved (pages fetched ahead are verified all the same)."""
        return []


class OffsetPaginator(BasePaginator):
    """`{"data": [...]}`: advance by the records returned (less one of overlap); end when empty.

    Example: asked `skip=0&max-records=200`, a server capping at 100 answers 100 records;
    the next request is `skip=99`, whose first record must be the last one seen (the
    anchor). Why this loses nothing: the list keeps its order (records are only inserted
    or deleted), so a page whose first record is already known continues without a gap.

    - First record unknown (or an empty page) where the anchor was expected: records were
      deleted before the offset and some may have slid behind us: step back (doubling)
      until a page starts on known ground.
    - Anchor found further down the page: records were inserted before it; that shift is
      added to the next offset too, so a list growing at the front cannot outrun the scan.
      A wrong guess only costs a step back.
    """

    max_rewinds = 200  # steps back per scan before the list is declared too unstable

    def __init__(
        self,
        page_size: int,
        start_offset: int = 0,
        *,
        limit_param: str = "max-records",
        skip_param: str = "skip",
    ) -> None:
        super().__init__(page_size, start_offset, limit_param=limit_param, skip_param=skip_param)
        self._back = 0
        self._anchor: str | None = None
        self._drift = 0  # records inserted before the anchor per page, lately
        self._longest = 0  # the longest page the server sent in this scan
        self._last_len = 0  # the length of the last page read (the server's cap, lately)
        self._prev_len = 0  # and of the page before it

    def predict(self, n: int) -> list[int]:
        """Next offsets: each full page (as long as the last one) overlaps by one record."""
        if not self.has_next_page or n <= 0:
            return []
        if 0 < self._last_len < self.page_size and self._last_len != self._prev_len:
            # a short page: the end is near, or the server caps pages; a second page of the
            # same length says which (no pages sent past the end of a short list meanwhile)
            return []
        length = self._last_len or self.page_size
        step = length - 1 + self._drift if self.uses_anchors else length
        if step <= 0:
            return []
        return [self.offset + step * i for i in range(1, n + 1)]

    def update_state(
        self, offset: int, data: list[Any], body: dict[str, Any], first_known: bool
    ) -> None:
        """Advance, or step back if the page does not start on a known record."""
        if self.expects_anchor and offset > 0 and not first_known:
            self._step_back(offset)
            return
        self._back = 0
        anchored_alone = self._note_anchor(data)
        if not data or anchored_alone:
            self.has_next_page = False
            return
        self._longest = max(self._longest, len(data))
        self._prev_len, self._last_len = self._last_len, len(data)
        self._advance(offset, data)

    def _step_back(self, offset: int) -> None:
        """The anchor is gone: records before `offset` were deleted; go back, doubling."""
        if self.rewinds >= self.max_rewinds:
            raise PagingError(
                f"the list kept shrinking under the scan ({self.rewinds} steps back, "
                f"last near offset {offset})"
            )
        self.rewinds += 1
        if self._back == 0:
            self._back = self._drift if self._drift > 0 else self.page_size
        else:
            self._back *= 2
        self.offset = max(0, offset - self._back)
        self._drift = 0
        self.expects_anchor = self.offset > 0

    def _note_anchor(self, data: list[Any]) -> bool:
        """Learn the drift from where the anchor sits; True if the anchor came back alone.

        Asked for a page from the anchor on, a server that has sent longer pages (so does
        not cap at one) answering the anchor alone has nothing after it: that is the empty
        page that ends the list, one request earlier.
        """
        if not self.expects_anchor:
            return False
        index = _index_of(ids_of(data), self._anchor)
        self._drift = self._drift + index if index is not None else 0
        return index == 0 and len(data) == 1 and self._longest >= 2

    def _advance(self, offset: int, data: list[Any]) -> None:
        """Next offset: overlap on the last keyed record, plus the drift seen lately."""
        ids = ids_of(data)
        last = _last_keyed(ids)
        if last is not None and last > 0:
            self.offset = offset + last + self._drift
            self._anchor = ids[last]
            self.expects_anchor = True
        else:  # one record, or nothing to anchor on: no overlap
            self.offset = offset + len(data) + self._drift
            self._anchor = None
            self.expects_anchor = False

    def on_failure(self, offset: int) -> None:
        """The page at `offset` failed for good: go on after it (records there are lost)."""
        super().on_failure(offset)
        self._anchor = None
        self._drift = 0

    def resume(self) -> None:
        """A committed offset points at the last record landed: expect it as the anchor."""
        self.expects_anchor = True


class NextOffsetPaginator(OffsetPaginator):
    """`{"data": [...], "hasMore": true, "nextOffset": 200}`: follow the server.

    A body without a boolean `hasMore` falls back to `OffsetPaginator`'s rules.

    `anchored` (set when pages are fetched ahead, in parallel): each request overlaps the
    page before by one record, as `OffsetPaginator` does, so that a page answered before
    the one it follows (while records were inserted at the head) cannot hide a gap. A
    `nextOffset` other than `offset + len(data)` (the prediction) is followed as is, without
    an anchor, as in sequential paging.
    """

    def __init__(self, *args: Any, anchored: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.anchored = anchored
        self.distrusted: int | None = None  # the nextOffset that jumped (then: own offsets)

    def _jumps(self, offset: int, data: list[Any], nxt: int) -> bool:
        """A `nextOffset` past the records returned would skip records nobody read."""
        if nxt <= offset + len(data):
            return False
        self.distrusted = nxt
        self.uses_anchors = True
        OffsetPaginator.update_state(self, offset, data, {}, False)
        return True

    def resume(self) -> None:
        """A committed `nextOffset` points past the last record landed: no overlap.

        Anchored, the committed offset points at the last record landed (its anchor); a
        committed offset of an unanchored run costs one step back, never a record.
        """
        if self.anchored:
            self.expects_anchor = True

    def update_state(
        self, offset: int, data: list[Any], body: dict[str, Any], first_known: bool
    ) -> None:
        """Follow `nextOffset` while `hasMore`; a `nextOffset` that does not advance is an error."""
        has_more = body.get("hasMore")
        if has_more is True and not data:
            # "more" with nothing in it: followed, such pages can go on for ever (626
            # requests for a 450-record list); a failed page, so the list ends incomplete
            raise PagingError(f"hasMore is true but the page at offset {offset} is empty")
        if not isinstance(has_more, bool) or self.distrusted is not None:
            self.uses_anchors = True
            super().update_state(offset, data, body, first_known)
            return
        if self.anchored:
            self._anchored_state(offset, data, body, first_known, has_more)
            return
        self.expects_anchor = False
        self.uses_anchors = False
        if not has_more:
            self.has_next_page = False
            return
        nxt = body.get("nextOffset")
        if isinstance(nxt, bool) or not isinstance(nxt, int) or nxt <= offset:
            raise PagingError(
                f"hasMore is true but nextOffset {nxt!r} does not advance past {offset}"
            )
        if self._jumps(offset, data, nxt):
            return
        self.offset = nxt

    def _anchored_state(
        self,
        offset: int,
        data: list[Any],
        body: dict[str, Any],
        first_known: bool,
        has_more: bool,
    ) -> None:
        self.uses_anchors = True
        if self.expects_anchor and offset > 0 and not first_known:
            super().update_state(offset, data, body, first_known)  # steps back
            return
        if not has_more:
            self._note_anchor(data)
            self.has_next_page = False
            return
        nxt = body.get("nextOffset")
        if isinstance(nxt, bool) or not isinstance(nxt, int) or nxt <= offset:
            raise PagingError(
                f"hasMore is true but nextOffset {nxt!r} does not advance past {offset}"
            )
        if self._jumps(offset, data, nxt):
            return
        if nxt != offset + len(data) or len(data) < 2:  # not what offsets predict: follow it
            self._back = 0
            self._drift = 0
            self._prev_len, self._last_len = self._last_len, len(data)
            self.offset = nxt
            self.expects_anchor = False
            self._anchor = None
            return
        super().update_state(offset, data, body, first_known)


def _last_keyed(ids: Sequence[str | None]) -> int | None:
    for i in range(len(ids) - 1, -1, -1):
        if ids[i] is not None:
            return i
    return None


def _index_of(ids: Sequence[str | None], rid: str | None) -> int | None:
    if rid is None:
        return None
    for i, key in enumerate(ids):
        if key == rid:
            return i
    return None
