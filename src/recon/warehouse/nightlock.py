"""One night at a time per warehouse: an exclusive `flock` beside the warehouse file.

Taken first thing by every command that writes the warehouse or a landing (`recon nightly`
before its settings are acted on and before Prefect starts, `extract`, `load`, `check`, the
flow itself), so that a second run is refused before it touches the warehouse, the landing
or Prefect's database, and the first run goes on as if alone. The kernel drops the lock
when its process ends, however it ends (`kill -9` included): no stale lock to clear.
Re-entrant within one process (the CLI takes it, then the flow it runs takes it again).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recon.errors import ConfigError, WarehouseError

__all__ = ["lock_path", "night_lock"]

_held: dict[Path, tuple[int, int]] = {}  # lock file -> (fd, depth) in this process
_guard = threading.Lock()


def lock_path(db: Path) -> Path:
    return db.absolute().with_name(f".{db.name}.night")


@contextmanager
def night_lock(db: Path) -> Iterator[None]:
    """Hold the night lock of the warehouse `db`; a WarehouseError when another run has it."""
    path = lock_path(db)
    with _guard:
        fd, depth = _held.get(path, (-1, 0))
        if depth == 0:
            fd = _take(path, db)
        _held[path] = (fd, depth + 1)
    try:
        yield
    finally:
        with _guard:
            fd, depth = _held.pop(path)
            if depth > 1:
                _held[path] = (fd, depth - 1)
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)


def _take(path: Path, db: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigError("RECON_DB", f"cannot create {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise WarehouseError(
            f"another recon run (pid {holder}) is using the warehouse {db.absolute()}; this one "
            "was refused before touching it, its landing or Prefect: try again when that run ends"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd
