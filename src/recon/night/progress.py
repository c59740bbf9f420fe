"""Progress a person can follow: a rich display on a terminal, plain log lines otherwise."""

from __future__ import annotations

import logging
import threading
import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["LogProgress", "RichProgress", "current", "use"]

log = logging.getLogger("recon.night.extract")

_current: RichProgress | LogProgress | None = None


def current() -> RichProgress | LogProgress | None:
    """The progress display the running command installed, if any."""
    return _current


def use(progress: RichProgress | LogProgress | None) -> None:
    """Install the progress display that extraction reports to."""
    global _current
    _current = progress


class LogProgress:
    """One log line per resource every few seconds, and one when it ends."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s = every_s
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def update(
        self,
        resource: str,
        *,
        pages: int,
        records: int,
        retries: int,
        in_flight: int = 0,
        limit: int = 1,
    ) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(resource, 0.0) < self.every_s:
                return
            self._last[resource] = now
        log.info(
            "%s: %d pages, %d records, %d retries, %d in flight (limit %d)",
            resource,
            pages,
            records,
            retries,
            in_flight,
            limit,
        )

    def done(self, resource: str, *, status: str) -> None:
        log.info("%s: %s", resource, status)


class RichProgress:
    """A live table of resources: pages, records, retries, requests in flight and the
    current concurrency limit (shared by all resources) (for a terminal)."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[resource]:<16}"),
            BarColumn(bar_width=None),
            TextColumn("{task.fields[pages]:>6} pages"),
            TextColumn("{task.fields[records]:>10,} records"),
            TextColumn("{task.fields[retries]:>4} retries"),
            TextColumn("{task.fields[in_flight]:>2}/{task.fields[limit]:<2} in flight"),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def _task(self, resource: str) -> TaskID:
        with self._lock:
            if resource not in self._tasks:
                self._tasks[resource] = self._progress.add_task(
                    resource,
                    total=None,
                    resource=resource,
                    pages=0,
                    records=0,
                    retries=0,
                    in_flight=0,
                    limit=1,
                    status="",
                )
            return self._tasks[resource]

    def update(
        self,
        resource: str,
        *,
        pages: int,
        records: int,
        retries: int,
        in_flight: int = 0,
        limit: int = 1,
    ) -> None:
        self._progress.update(
            self._task(resource),
            pages=pages,
            records=records,
            retries=retries,
            in_flight=in_flight,
            limit=limit,
        )

    def done(self, resource: str, *, status: str) -> None:
        colour = {"complete": "green", "incomplete": "yellow"}.get(status, "red")
        self._progress.update(
            self._task(resource),
            total=1,
            completed=1,
            in_flight=0,
            status=f"[{colour}]{status}[/]",
        )
