"""A list resource as served: generated base records plus inserts, deletes and edits.

The base records come from :class:`recon.sandbox.data.Dataset` in chunks of
``CHUNK`` pre-serialised records (orjson bytes), kept in a bounded LRU cache, so a page is
one slice and one ``b",".join``. Records inserted at run time (creates, drift) are newer
than every base record and come first; deleted base records are skipped by mapping a list
position to a base index through the sorted list of deletions.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right, insort
from collections import OrderedDict
from collections.abc import Callable
from threading import Lock

__all__ = ["CHUNK", "ListView"]

CHUNK = 1000


def _nth_live(p: int, deleted: list[int]) -> int:
    """The base index of list position p when the sorted ``deleted`` indices are skipped."""
    b = p
    while True:
        nb = p + bisect_right(deleted, b)
        if nb == b:
            return b
        b = nb


class ListView:
    """One list resource: ``page(skip, limit)`` returns serialised records, newest first."""

    def __init__(
        self,
        name: str,
        base_count: Callable[[], int],
        generate: Callable[[int, int], list[bytes]],
        *,
        cache_records: int | None = 300_000,
        status_of: Callable[[int], str] | None = None,
    ) -> None:
        self.name = name
        self._base_count = base_count
        self._generate = generate
        self._cache: OrderedDict[int, list[bytes]] = OrderedDict()
        # None or 0: keep every chunk once serialised (no eviction)
        self._cache_chunks = max(1, cache_records // CHUNK) if cache_records else None
        self._lock = Lock()
        self.head: list[tuple[bytes, str | None, str]] = []  # (record, status, id), oldest first
        self.deleted: list[int] = []
        self.deleted_set: set[int] = set()
        self.overlay: dict[int, bytes] = {}
        self._status_of = status_of
        self._status_index: dict[str, array[int]] | None = None
        self._status_deleted: dict[str, list[int]] = {}

    # -------------------------------------------------------------- base records
    @property
    def base_count(self) -> int:
        return self._base_count()

    def _chunk(self, c: int) -> list[bytes]:
        with self._lock:
            hit = self._cache.get(c)
            if hit is not None:
                self._cache.move_to_end(c)
                return hit
        start = c * CHUNK
        stop = min(start + CHUNK, self.base_count)
        recs = self._generate(start, stop)
        with self._lock:
            self._cache[c] = recs
            while self._cache_chunks is not None and len(self._cache) > self._cache_chunks:
                self._cache.popitem(last=False)
        return recs

    def base_records(self, start: int, stop: int) -> list[bytes]:
        """Base records start..stop-1 (ignoring deletions, applying edits)."""
        out: list[bytes] = []
        i = start
        while i < stop:
            c, off = divmod(i, CHUNK)
            chunk = self._chunk(c)
            take = min(stop - i, len(chunk) - off)
            if take <= 0:
                break
            out.extend(chunk[off : off + take])
            i += take
        if self.overlay:
            for k in range(start, start + len(out)):
                rep = self.overlay.get(k)
                if rep is not None:
                    out[k - start] = rep
        return out

    def warm(self) -> None:
        """Serialise every base record now (up to the cache size)."""
        chunks = -(-self.base_count // CHUNK)
        if self._cache_chunks is not None:
            chunks = min(chunks, self._cache_chunks)
        for c in range(chunks):
            self._chunk(c)

    def base_index_at(self, position: int) -> int | None:
        """The base index of the record at list ``position`` (None: an inserted record)."""
        nh = len(self.head)
        if position < nh:
            return None
        p = position - nh
        return _nth_live(p, self.deleted) if self.deleted else p

    # -------------------------------------------------------------- mutations
    def insert(self, record: bytes, ident: str, status: str | None = None) -> None:
        self.head.append((record, status, ident))

    def delete(self, index: int) -> None:
        if index in self.deleted_set:
            return
        self.deleted_set.add(index)
        insort(self.deleted, index)
        if self._status_index is not None and self._status_of is not None:
            st = self._status_of(index)
            arr = self._status_index.get(st)
            if arr is not None:
                pos = bisect_left(arr, index)
                if pos < len(arr) and arr[pos] == index:
                    insort(self._status_deleted.setdefault(st, []), pos)

    def edit(self, index: int, record: bytes) -> None:
        self.overlay[index] = record

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    # -------------------------------------------------------------- reading
    def total(self, status: str | None = None) -> int:
        if status is None:
            return len(self.head) + self.base_count - len(self.deleted)
        idx = self._statuses()
        arr = idx.get(status)
        n = (len(arr) if arr is not None else 0) - len(self._status_deleted.get(status, []))
        return n + sum(1 for _, st, _ in self.head if st == status)

    def page(self, skip: int, limit: int, status: str | None = None) -> list[bytes]:
        if status is not None:
            return self._page_status(skip, limit, status)
        out: list[bytes] = []
        nh = len(self.head)
        if skip < nh:
            newest_first = self.head[::-1]
            out.extend(rec for rec, _, _ in newest_first[skip : skip + limit])
        p = max(0, skip - nh)
        base_n = self.base_count
        while len(out) < limit:
            b = _nth_live(p, self.deleted) if self.deleted else p
            if b >= base_n:
                break
            # a run of live base indices from b
            want = limit - len(out)
            stop = min(base_n, b + want)
            if self.deleted:
                nxt = bisect_right(self.deleted, b)
                if nxt < len(self.deleted):
                    stop = min(stop, self.deleted[nxt])
            out.extend(self.base_records(b, stop))
            p += stop - b
        return out

    def _statuses(self) -> dict[str, array[int]]:
        if self._status_index is None:
            if self._status_of is None:
                raise ValueError(f"{self.name} has no status filter")
            idx: dict[str, array[int]] = {}
            status_of = self._status_of
            for i in range(self.base_count):
                st = status_of(i)
                arr = idx.get(st)
                if arr is None:
                    arr = idx[st] = array("q")
                arr.append(i)
            self._status_index = idx
            self._status_deleted = {}
            for d in self.deleted:
                st = status_of(d)
                pos = bisect_left(idx[st], d)
                insort(self._status_deleted.setdefault(st, []), pos)
        return self._status_index

    def _page_status(self, skip: int, limit: int, status: str) -> list[bytes]:
        idx = self._statuses()
        head = [rec for rec, st, _ in reversed(self.head) if st == status]
        out = head[skip : skip + limit]
        arr = idx.get(status)
        if arr is None:
            return out
        dels = self._status_deleted.get(status, [])
        p = max(0, skip - len(head))
        while len(out) < limit:
            q = _nth_live(p, dels) if dels else p
            if q >= len(arr):
                break
            if not dels or q not in dels:
                b = arr[q]
                out.extend(self.base_records(b, b + 1))
            p += 1
        return out
