"""The benchmark's sandbox server: `recon sandbox serve` with every record kept serialised.

By default the sandbox keeps at most 300,000 serialised records per list (an LRU): a
sequential pass over a longer list evicts everything, so every pass regenerates the records
in Python and the *server* becomes the bottleneck (measured: the ceiling at 1M payments went
from ~5 s to ~14 s). For a ceiling that measures the client, this launcher keeps every
record (`cache_records=0`, the same as `recon sandbox serve --cache-records 0`), and the
benchmark makes one warm-up pass before timing anything. Runs in its own process:

    python -m benchmarks._sandbox_serve PORT PAYMENTS SEED
"""

from __future__ import annotations

import sys


def main() -> int:
    port, payments, seed = (int(a) for a in sys.argv[1:4])

    from recon.sandbox.app import SandboxConfig
    from recon.sandbox.server import serve

    config = SandboxConfig(seed=seed, payments=payments, faults="none", cache_records=0)
    serve(config, port=port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
