"""Who in this process holds the published warehouse (recon serve: many threads).

DuckDB lets one process hold a file either read-only or read-write, not both: a request
reading the warehouse and an action recording its trail line in it (read-write,
recon.findings.acks) must not overlap. Readers may overlap each other: the queue's snapshot
being built (seconds at a million findings, after every publish) never stops a request
from reading the published file meanwhile. `HOLDING.read` is shared, `HOLDING.write`
exclusive; both are re-entrant for a thread, and the writer may also read. A waiting writer
goes before new readers, so a stream of requests cannot starve an action.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

__all__ = ["HOLDING", "Holding"]


class _Side:
    """One side of the lock, as a reusable context manager."""

    def __init__(self, acquire: Callable[[], None], release: Callable[[], None]) -> None:
        self._acquire = acquire
        self._release = release

    def __enter__(self) -> None:
        self._acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release()


class Holding:
    """A readers-writer lock, re-entrant per thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers: dict[int, int] = {}  # thread -> depth
        self._writer: int | None = None
        self._depth = 0  # the writer's
        self._waiting = 0  # writers waiting
        self._upgrading = 0  # of them, readers already
        self.read = _Side(self._read, self._unread)
        self.write = _Side(self._write, self._unwrite)

    def _read(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer != me and me not in self._readers:
                while self._writer is not None or self._waiting:
                    self._cond.wait()
            self._readers[me] = self._readers.get(me, 0) + 1

    def _unread(self) -> None:
        me = threading.get_ident()
        with self._cond:
            self._readers[me] -= 1
            if not self._readers[me]:
                del self._readers[me]
                self._cond.notify_all()

    def _write(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
                return
            upgrading = me in self._readers
            if upgrading and self._upgrading:
                # two readers both waiting to write would wait for each other forever
                raise RuntimeError("two readers of the warehouse may not both start writing")
            self._waiting += 1
            self._upgrading += upgrading
            try:
                while self._writer is not None or any(t != me for t in self._readers):
                    self._cond.wait()
            finally:
                self._waiting -= 1
                self._upgrading -= upgrading
            self._writer, self._depth = me, 1

    def _unwrite(self) -> None:
        with self._cond:
            self._depth -= 1
            if not self._depth:
                self._writer = None
                self._cond.notify_all()


HOLDING = Holding()
