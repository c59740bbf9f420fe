"""`recon nightly` N times in a row against one benchmark sandbox, as part `night` runs it
(benchmarks/night.py), keeping what a memory hunt needs: each night's output and log, and
the RSS of the largest `recon nightly` process every 0.5 s (`rss-<n>.txt`: seconds, MB).

    python -m benchmarks.nights 1000000 2 /tmp/nights-1m   # a first and a second night

Prints one JSON line per night: exit code, wall, CPU-seconds, peak RSS, load average.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path

from benchmarks._common import API_KEY, RECON, run_measured, sandbox_process


def _largest_nightly_rss_mb() -> int:
    best = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            if not any(a.endswith(b"recon") for a in argv) or b"nightly" not in argv:
                continue
            with open(f"/proc/{entry.name}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"VmRSS:"):
                        best = max(best, int(line.split()[1]) // 1024)
        except (OSError, ValueError, IndexError):
            continue
    return best


def _sample(stop: threading.Event, out: Path) -> None:
    started = time.monotonic()
    with out.open("w") as fh:
        while not stop.is_set():
            fh.write(f"{time.monotonic() - started:.1f} {_largest_nightly_rss_mb()}\n")
            fh.flush()
            stop.wait(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("payments", type=int)
    parser.add_argument("nights", type=int)
    parser.add_argument("work", type=Path, help="folder for the warehouse, landing and logs")
    args = parser.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    env = {
        "RECON_API_KEY": API_KEY,
        "RECON_BEARER_TOKEN": "sandbox-demo-token",
        "PYTHONUNBUFFERED": "1",
        "PREFECT_HOME": str(work / "prefect-home"),
    }
    with sandbox_process(args.payments) as (url, _):
        for night in range(1, args.nights + 1):
            stop = threading.Event()
            sampler = threading.Thread(target=_sample, args=(stop, work / f"rss-{night}.txt"))
            sampler.start()
            load = os.getloadavg()
            proc = run_measured(
                [RECON, "nightly"], env={**env, "RECON_BASE_URL": url}, cwd=work, timeout=3600
            )
            stop.set()
            sampler.join()
            (work / f"out-{night}.txt").write_text(proc.stdout)
            (work / f"err-{night}.txt").write_text(proc.stderr)
            row = {
                "night": night,
                "payments": args.payments,
                "exit": proc.returncode,
                "wall_s": round(proc.wall_s, 1),
                "cpu_s": round(float(proc.extra["cpu_s"]), 1),
                "peak_rss_mb": round(proc.peak_rss_mb),
                "loadavg_before": [round(x, 2) for x in load],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                "at_utc": time.strftime("%H:%M:%S", time.gmtime()),
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
