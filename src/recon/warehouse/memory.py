"""Memory a night holds: DuckDB sized from the machine, freed memory given back (issue 23).

A night runs extraction, the load, the checks and the report in one process, one after the
other. Two things kept a 1M-payment night at 1.7 GB:

- DuckDB's memory limit (2 GB by default before): the load's slices and the checks grew to
  it. `duckdb_config("auto")` sizes it from the machine instead — a quarter of the memory
  available to this process (cgroup limit or physical RAM), at most `AUTO_LIMIT_MAX`
  (192 MiB; 64 MiB for read-only connections), and its threads from the cores and the
  limit (DuckDB wants ~128 MB a thread). Beyond it DuckDB spills to `<db>.tmp`; the
  load's slices are sized to it (`recon.warehouse.slices.slices`).
- memory freed by one step stayed in the process: pyarrow's allocator (mimalloc) and glibc
  keep freed blocks in per-thread arenas (extraction lands six lists on six threads).
  `release()` hands free pages back to the kernel between steps.

Python's cyclic collector cost a 100k-payment account-night ~0.55-0.7 CPU-s of its ~10
(~1,000 collections): every page parses into hundreds of dicts (200 records and their nested
objects), and each older generation's collection walked the objects of the imports again
(~87k tracked after recon's night modules, DuckDB, Polars, pyarrow and httpx; ~160k with
Prefect's flows). `quiet_collector()` freezes what exists when the night starts (modules,
classes, functions: never garbage) out of the collector's sight and collects the young
generation every 10,000 allocations instead of 700: ~0.1 CPU-s (measured with
`gc.callbacks`, docs/performance.md).
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import gc
import os
import re
import sys
import threading
from functools import cache
from pathlib import Path

__all__ = [
    "AUTO_LIMIT_MAX",
    "YOUNG_COLLECTION",
    "available_memory",
    "configured_memory_limit",
    "duckdb_config",
    "parse_size",
    "quiet_collector",
    "release",
]

#: The most "auto" gives DuckDB: with Python, pyarrow and Prefect beside it a night then
#: peaks under ~500 MB (measured: docs/performance.md, issue 23).
AUTO_LIMIT_MAX = 192 * 2**20
#: Reading (the report, exports): DuckDB keeps the blocks it read cached up to its limit,
#: and the report holds its connection while it renders: a smaller cache is enough.
AUTO_READ_LIMIT_MAX = 64 * 2**20
AUTO_LIMIT_MIN = 64 * 2**20
#: Allocations between two collections of the youngest generation during a night (Python's
#: default: 700). Cycles among parsed records are rare (refcounting frees the pages); 10,000
#: cost as little as 50,000 (0.095 against 0.103 CPU-s of collection an account-night).
YOUNG_COLLECTION = 10_000
#: DuckDB's own advice: at least ~100-128 MB of memory per thread.
_BYTES_PER_THREAD = 128 * 2**20

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str) -> int | None:
    """Bytes of a size like `300MB`, `2GiB` or `134217728B`; None if it is not one."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def available_memory() -> int:
    """Memory this process may use: the cgroup's limit if one is set, else physical RAM."""
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < ram:
            return int(text)
    return int(ram)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# : The setting every DuckDB connection honours (recon.warehouse.database.connect), read-only ones
# too.
MEMORY_LIMIT_VARIABLE = "RECON_DUCKDB_MEMORY_LIMIT"


def configured_memory_limit() -> str | None:
    """`RECON_DUCKDB_MEMORY_LIMIT` when set to "auto" or a size DuckDB reads, else None
    ("auto"): for connections opened without the settings at hand (analysts' commands,
    notifications). A value that is not a size was refused by the settings already."""
    value = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if not value or (value.lower() != "auto" and parse_size(value) is None):
        return None
    return value


def duckdb_config(memory_limit: str | None, *, read_only: bool = False) -> dict[str, str | int]:
    """DuckDB's `memory_limit` and `threads` for a setting: a size, or "auto"/None."""
    if memory_limit and memory_limit.strip().lower() != "auto":
        limit = parse_size(memory_limit) or AUTO_LIMIT_MAX
        return {"memory_limit": memory_limit, "threads": _threads(limit)}
    most = AUTO_READ_LIMIT_MAX if read_only else AUTO_LIMIT_MAX
    limit = max(AUTO_LIMIT_MIN, min(most, available_memory() // 4))
    return {"memory_limit": f"{limit // 2**20}MiB", "threads": _threads(limit)}


def _threads(limit: int) -> int:
    # Measured on the 1M load: one thread under 192 MiB took less CPU (24 s) than two
    # under 256 MiB (35 s): below ~128 MB a thread, threads spill more than they gain.
    return max(1, min(_cores(), limit // _BYTES_PER_THREAD))


@cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only: musl and macOS have no malloc_trim
    except (OSError, AttributeError):
        return None
    return libc


def release() -> None:
    """Give the memory freed so far back to the OS: pyarrow's pool (mimalloc keeps what
    landing's writers on six threads freed: ~260 MB measured) and glibc's arenas."""
    gc.collect()
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


_quiet_lock = threading.Lock()
_quiet = False


def quiet_collector() -> None:
    """Quiet Python's cyclic collector for the rest of this process (once; every night of a
    process calls it at its start): what exists now is frozen out of its sight, and the
    youngest generation is collected every `YOUNG_COLLECTION` allocations. The frozen objects
    are handed back at exit, so that the interpreter's shutdown frees them (DuckDB's
    bindings report every object still alive then as leaked)."""
    global _quiet
    with _quiet_lock:
        if _quiet:
            return
        _quiet = True
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION, middle, oldest)
    atexit.register(gc.unfreeze)
