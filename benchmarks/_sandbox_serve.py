"""The benchmark's sandbox server: `recon sandbox serve`, with every record kept serialised.

The sandbox keeps pre-serialised records in a bounded LRU cache (300,000 payments, 100,000
of every other list by default): a sequential pass over a longer list evicts everything,
so every pass regenerates the records in Python and the *server* becomes the bottleneck
(measured: the ceiling at 1M payments went from ~5 s to ~14 s). For a ceiling that measures
the client, this launcher lifts the bound, and the benchmark makes one warm-up pass before
timing anything. Runs in its own process:

    python -m benchmarks._sandbox_serve PORT PAYMENTS SEED
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> int:
    port, payments, seed = (int(a) for a in sys.argv[1:4])

    import recon.sandbox.store as store

    original = store.ListView.__init__

    def unbounded(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["cache_records"] = 1 << 40
        original(self, *args, **kwargs)

    store.ListView.__init__ = unbounded  # type: ignore[method-assign]

    from recon.sandbox.app import SandboxConfig
    from recon.sandbox.server import serve

    serve(SandboxConfig(seed=seed, payments=payments, faults="none"), port=port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
