"""The audit trail's file beside the warehouse, and its lock: what the warehouse's working
copy and every writer of the trail (recon.findings.acks) share. A line is written, and the
published warehouse records it, only under this lock; a night copies the published file
under it too, so that it never copies a record half-made."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["acks_path", "hold_trail", "trail_locked"]

_held: dict[Path, tuple[int, int]] = {}  # trail -> (fd, depth) held by this process
_path_locks: dict[Path, threading.RLock] = {}
_guard = threading.Lock()


def acks_path(db: Path) -> Path:
    """The log of the warehouse `db`: `data/recon.duckdb` -> `data/recon.acks.jsonl`."""
    return db.with_name(f"{db.stem}.acks.jsonl")


@contextlib.contextmanager
def trail_locked(path: Path, *, create: bool = True) -> Iterator[None]:
    """Hold the trail's lock: no line is written by anyone else meanwhile (re-entrant in
    this process). `create=False` (a reader that only needs no line half-written): no trail
    yet, nothing locked and no file created."""
    if not create and not path.exists() and path.absolute() not in _held:
        yield
        return
    with hold_trail(path):
        yield


@contextlib.contextmanager
def hold_trail(path: Path) -> Iterator[int]:
    """Hold the trail file `path` locked (`flock`, re-entrant in this process); its fd."""
    key = path.absolute()
    with _guard:
        rlock = _path_locks.setdefault(key, threading.RLock())
    with rlock:
        fd, depth = _held.get(key, (-1, 0))
        if depth:
            _held[key] = (fd, depth + 1)
            try:
                yield fd
            finally:
                _held[key] = (fd, depth)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _held[key] = (fd, 1)
            yield fd
        finally:
            _held.pop(key, None)
            os.close(fd)  # releases the lock
        if created:  # the new file's name must survive a crash too
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
