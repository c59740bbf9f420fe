"""The client's CPU per page (issue 36 point 4): one `recon.api` scan of the payments list
against `recon sandbox serve` in its own process, the client's CPU seconds (user + system,
every thread) divided by the pages read.

    python -m benchmarks.transport_cpu                      # 40k payments, 0 and 50 ms
    python -m benchmarks.transport_cpu --payments 20000 --latency-ms 50 --repeat 3
    python -m benchmarks.transport_cpu --before /tmp/old/src  # another source tree too,
                                                              # runs interleaved with this one

Each measurement is a fresh child process (`--drive URL`), one list paged sequentially
(`RECON_CONCURRENCY=1`), so that the figure is the send path's own cost per page, not the
thread pool's. With `--before SRC` the child runs once with `PYTHONPATH=SRC` and once with
this tree, in turn, `--repeat` times: on a shared machine, interleaving is what makes the
two comparable.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks._common import PYTHON, ROOT, sandbox_process


def drive(url: str) -> dict[str, Any]:
    """One scan of the payments list at `url`; the client's CPU per page."""
    from pydantic import SecretStr

    from recon.api import ApiClient, ClientConfig
    from recon.sandbox.credentials import DEMO_API_KEY

    config = ClientConfig.for_base_url(url, api_key=SecretStr(DEMO_API_KEY), concurrency=1)
    with ApiClient(config) as client:
        client.list_disputes(max_records=1)  # connection and TLS-context set-up off the clock
        cpu0, wall0 = time.process_time(), time.perf_counter()
        pages = records = 0
        for page in client.scan("payments"):
            pages += 1
            records += len(page.records)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"pages": pages, "records": records, "cpu_s": cpu, "wall_s": wall}


def _child(url: str, src: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run(
        [PYTHON, "-m", "benchmarks.transport_cpu", "--drive", url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payments", type=int, default=40_000)
    parser.add_argument("--latency-ms", type=float, nargs="*", default=[0.0, 50.0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", help="another source tree (its src/), run interleaved")
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(drive(args.drive)))
        return
    trees = {"this": None} if not args.before else {"before": args.before, "after": None}
    print(f"load average {os.getloadavg()[0]:.1f} (2 cores, shared)", file=sys.stderr)
    for latency in args.latency_ms:
        options = ["--prewarm", "sync", "--latency-ms", f"{latency:g}"]
        with sandbox_process(args.payments, unbounded=False, options=options) as (url, _):
            runs: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, src in trees.items():
                    got = _child(url, src)
                    runs[name].append(got["cpu_s"] / got["pages"] * 1e3)
        line = {
            "latency_ms": latency,
            "pages": args.payments // 200,
            **{
                f"{name}_ms_cpu_per_page": [round(v, 3) for v in values]
                for name, values in runs.items()
            },
            **{
                f"{name}_median": round(statistics.median(values), 3)
                for name, values in runs.items()
            },
        }
        print(json.dumps(line))
    print(f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
