"""`RecentIds`: the ids a scan has seen lately, in bounded memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

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
