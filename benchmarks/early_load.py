"""Extract + load in one process, the load begun while extracting (recon.night.early) or
after it (`RECON_EARLY_LOAD=0`), interleaved A/B: wall, CPU-s and peak RSS of each.

    python -m benchmarks.early_load --payments 1000000 --repeat 2   # zero latency
    python -m benchmarks.early_load --realistic --payments 100000    # 50 ms, 100 req/s
    python -m benchmarks.early_load --night --payments 1000000       # whole nights, zero latency
    python -m benchmarks.early_load --drive BASE WORK                # (internal) one night

Per run: a first night into an empty warehouse (`start_step`, `extract_step(load_early=True)`,
`load_step(publish=True)`: the steps `recon nightly` runs before its checks), against the
sandbox in its own process (every record kept serialised, no latency, no rate limit). The
load average is printed beside each wall time (the machine may be shared).

With `--realistic`: the whole `recon nightly` against the paced sandbox of
`benchmarks.realistic` (50 ms, 100 req/s), A and B in turn, each a first night on the same
warm `PREFECT_HOME`, less the fixed cost of a night with nothing to fetch, against the floor.
With `--night`: the whole `recon nightly` (a first night each) against the zero-latency
sandbox, A and B in turn: peak RSS (issue 23's ~500 MB), wall and CPU-s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks._common import API_KEY, PYTHON, run_measured, sandbox_process


def drive(base_url: str, work: str) -> dict[str, Any]:
    from recon.night import nightly as steps

    overrides = {
        "base_url": base_url,
        "landing": f"{work}/landing",
        "db": f"{work}/recon.duckdb",
        "reports": f"{work}/reports",
    }
    run_id = steps.start_step(overrides)
    started = time.perf_counter()
    cpu0 = time.process_time()
    outcomes = steps.extract_step(overrides, run_id, load_early=True)
    extracted, cpu1 = time.perf_counter(), time.process_time()
    steps.load_step(overrides, run_id, publish=True)
    loaded, cpu2 = time.perf_counter(), time.process_time()
    return {
        "extract_s": round(extracted - started, 3),
        "load_s": round(loaded - extracted, 3),
        "extract_load_s": round(loaded - started, 3),
        "extract_cpu_s": round(cpu1 - cpu0, 3),
        "load_cpu_s": round(cpu2 - cpu1, 3),
        "records": sum(o.records for o in outcomes),
        "statuses": sorted({o.status for o in outcomes}),
    }


def one(url: str, *, early: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="recon-early-") as tmp:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("RECON_")},
            "RECON_API_KEY": API_KEY,
            "RECON_EARLY_LOAD": "1" if early else "0",
        }
        load_before = os.getloadavg()[0]
        proc = run_measured(
            [PYTHON, "-m", "benchmarks.early_load", "--drive", url, tmp], env=env, timeout=3600
        )
        if not proc.ok:
            raise RuntimeError(f"night failed: {proc.tail()}")
        out = proc.last_json()
        out.update(
            early=early,
            wall_s=round(proc.wall_s, 3),
            cpu_s=round(float(proc.extra.get("cpu_s", 0.0)), 3),
            peak_rss_mb=round(proc.peak_rss_mb, 1),
            load_avg=f"{load_before:.2f} -> {os.getloadavg()[0]:.2f}",
        )
        return out


def _tail(db: Path) -> dict[str, Any]:
    """From the published night: when its last call was answered (the extraction's end),
    and how long after it the run was loaded and its checks done."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(
            "SELECT r.started_at, max(c.attempted_at), r.loaded_at, r.finished_at "
            "FROM runs r JOIN api_calls c USING (run_id) "
            "GROUP BY ALL ORDER BY r.started_at DESC LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    if row is None:
        return {}
    started, extracted, loaded, finished = row
    return {
        "extracted_after_s": round((extracted - started).total_seconds(), 2),
        "loaded_after_extract_s": round((loaded - extracted).total_seconds(), 2),
        "checked_after_extract_s": round((finished - extracted).total_seconds(), 2),
    }


def realistic(payments: int, repeat: int) -> None:
    from benchmarks.night import night_run
    from benchmarks.realistic import RATE, _counts, _serve, floor_pages

    with tempfile.TemporaryDirectory(prefix="recon-early-night-") as tmp:
        root = Path(tmp)
        home = root / "prefect-home"
        fixed: list[float] = []
        with _serve(0, realistic=True) as (empty_url, _):
            for kind in ("warming", "fixed", "fixed2"):
                (root / kind).mkdir()
                row = night_run(empty_url, root / kind, home)
                print(json.dumps({"kind": kind, **row}), flush=True)
                if kind != "warming":
                    fixed.append(row["wall_s"])
        fixed_s = min(fixed)
        with _serve(payments, realistic=True) as (url, _):
            floor_s = floor_pages(_counts(url)) / RATE
            for early, row in _pairs(url, root, home, repeat):
                ratio = round((row["wall_s"] - fixed_s) / floor_s, 3)
                out = {"early": early, "floor_s": floor_s, "fixed_s": fixed_s, "ratio": ratio}
                print(json.dumps({**out, **row}), flush=True)


def _pairs(
    url: str, root: Path, home: Path, repeat: int, *, keep: bool = True
) -> Iterator[tuple[bool, dict[str, Any]]]:
    """`repeat` whole nights without and with loading while extracting, in turn, each in a
    folder of its own under `root` (removed after it unless `keep`)."""
    from benchmarks.night import night_run

    for i in range(repeat):
        for early in (False, True):
            os.environ["RECON_EARLY_LOAD"] = "1" if early else "0"
            work = root / f"night-{i}-{int(early)}"
            work.mkdir()
            row = night_run(url, work, home)
            row.update(_tail(work / "data" / "recon.duckdb"))
            yield early, row
            if not keep:
                shutil.rmtree(work, ignore_errors=True)


def nights(payments: int, repeat: int) -> None:

    with tempfile.TemporaryDirectory(prefix="recon-early-nights-") as tmp:
        root = Path(tmp)
        home = root / "prefect-home"
        with sandbox_process(payments) as (url, _up):
            for early, row in _pairs(url, root, home, repeat, keep=False):
                print(json.dumps({"early": early, **row}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--drive", nargs=2, metavar=("BASE", "WORK"))
    parser.add_argument("--realistic", action="store_true")
    parser.add_argument("--night", action="store_true")
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(drive(*args.drive)), flush=True)
        return 0
    if args.realistic:
        realistic(args.payments, args.repeat)
        return 0
    if args.night:
        nights(args.payments, args.repeat)
        return 0
    with sandbox_process(args.payments) as (url, _up):
        one(url, early=False)  # warms the sandbox's serialised records (not counted)
        for _ in range(args.repeat):
            for early in (False, True):
                print(json.dumps(one(url, early=early)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
