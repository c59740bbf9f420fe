"""`RecentIds`: the ids a scan has seen lately, in bounded memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import cast

__all__ = ["RecentIds"]


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
        if isinstance(idents, list | set | frozenset) and len(current) + len(idents) < self.window:
            current.update(idents)  # no generation fills up on the way: one call
            return
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


class RecentPrints:
    """The fingerprint (a hash of the JSON text as sent) of each id seen lately, in two
    generations of `window` ids like `RecentIds`: an id answered again with other content is
    told from the very same record answered twice (the overlap, inserts ahead)."""

    __slots__ = ("current", "previous", "window")

    def __init__(self, window: int = 100_000) -> None:
        self.window = max(1, window)
        self.current: dict[str, int] = {}
        self.previous: dict[str, int] = {}

    def get(self, ident: str) -> int | None:
        found = self.current.get(ident)
        return self.previous.get(ident) if found is None else found

    def update(self, idents: Sequence[str | None], prints: Sequence[int]) -> None:
        """Remember each id's print (the newest wins); None ids are skipped."""
        current = cast("dict[str | None, int]", self.current)
        current.update(zip(idents, prints, strict=True))
        current.pop(None, None)
        if len(self.current) >= self.window:
            self.previous = self.current
            self.current = {}
