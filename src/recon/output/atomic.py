"""Atomic file writes: the one helper every writer of recon's files uses.

A file is written under a temporary name in the target's folder and renamed over the target
(`os.replace`), so a reader never sees half a file and a killed writer leaves at most a
stray ``.<name>.*.tmp`` file, never a truncated CSV or an unreadable Parquet file.

Two ways in, for the two kinds of writer:

- `atomic_path(target)` yields the temporary path for a library that writes a file itself
  (`pq.write_table(table, tmp)`, polars' `write_excel(tmp)`, xlsxwriter, …);
- `atomic_write_bytes(target, data)` / `atomic_write_text` for bytes already in memory.

`durable=True` also fsyncs the file before the rename and the folder after it, so the new
file survives a power cut (landing's state and batches); reports and exports skip it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text"]


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(target: Path, *, durable: bool = False, mode: int = 0o644) -> Iterator[Path]:
    """Yield a temporary path next to `target`; on success rename it over `target`.

    The folder is created when missing. The file gets `mode` (default readable by the team).
    On an exception the temporary file is removed and `target` is left as it was.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, mode)
        if durable:
            _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    if durable:
        _fsync_file(target.parent)


def atomic_write_bytes(target: Path, data: bytes, *, durable: bool = False) -> None:
    """Write `data` to `target` through a temporary file and a rename."""
    with atomic_path(target, durable=durable) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(target: Path, text: str, *, durable: bool = False) -> None:
    """Write UTF-8 `text` to `target` through a temporary file and a rename."""
    atomic_write_bytes(target, text.encode("utf-8"), durable=durable)
