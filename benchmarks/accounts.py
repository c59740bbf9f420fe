"""Several accounts side by side (issue 24): N accounts of P payments each, every one its own
provider answering in 50 ms and allowing 100 requests a second, against one account alone.

    python -m benchmarks.accounts                          # 4 accounts x 100k payments
    python -m benchmarks.accounts --accounts 2 --payments 20000
    python -m benchmarks.accounts --threads                # the accounts on threads
    python -m benchmarks.accounts --processes              # each account in its own process
    python -m benchmarks.accounts --repeat 5               # five pairs, the median ratio
    python -m benchmarks.accounts --drive                  # (internal) one group night in cwd

Each account's sandbox runs in its own process (`recon sandbox serve --latency-ms 50 --rate
100 --cache-records 0 --prewarm sync`, seeds 1..N). Then, in a fresh folder each, a recon
process runs the whole night of every account in a `recon.toml` (`recon.accounts.
run_group_local`: extract, land, load, check, publish, report per account, on threads or
each in a process of its own as recon chooses for the machine unless told, then the
consolidated warehouse and the group page — `recon nightly` without Prefect's fixed
start-up; the accounts' fork server is started and its imports done before the clock
starts, as `recon nightly` starts it before Prefect's start-up), first with account 1
alone, then with all N. Printed: wall time of each, the ratio (target: N side by side
<= 1.3x one alone), recon's CPU seconds (its process and every process it started, from
/proc), CPU seconds per 1M records, the sandboxes' CPU seconds over the night (they share
the cores), peak RSS (largest process, and all processes' peaks added up), and the load
average before and after.

One pair moves by ±0.04 from run to run on two cores (docs/performance.md, issue 24's sixth
pass): `--repeat N` runs N pairs, alone then together, on the same sandboxes, and reports
every ratio and their median (the figures of the pair whose ratio is the median beside it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import (
    PYTHON,
    RESULTS,
    SANDBOX_PIDS,
    cpu_s_of,
    run_measured,
    sandbox_process,
)

LATENCY_MS = 50.0
RATE = 100.0


def drive(*, apart: bool | None = None) -> dict[str, Any]:
    """One group night in the working folder (recon.toml there); its own figures as JSON.
    `apart`: each account in a process of its own (True), on threads (False), or as recon
    chooses for this machine (None)."""
    from recon.accounts.night import run_group_local
    from recon.accounts.processes import start_fork_server, worth_processes
    from recon.config.accounts import account_names

    # `recon nightly` starts the accounts' fork server before Prefect's start-up (cli/
    # group.py), which this clock leaves out: its imports are done when the accounts start.
    if apart is not False and start_fork_server(len(account_names({}))):
        _fork_server_ready()

    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = run_group_local({}, processes=apart)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0  # this process only
    records = 0
    import duckdb

    for o in summary.outcomes:
        if o.db_path is None or o.run_id is None:
            continue
        con = duckdb.connect(str(o.db_path), read_only=True)
        row = con.execute(
            "SELECT sum(records)::BIGINT FROM resource_scans WHERE run_id = ?", [o.run_id]
        ).fetchone()
        con.close()
        records += int(row[0] or 0) if row else 0
    return {
        "wall_s": round(wall, 2),
        "own_cpu_s": round(cpu, 2),
        "records": records,
        "statuses": {o.account: o.status for o in summary.outcomes},
        "exit_code": summary.exit_code,
        "accounts_on": (
            "processes"
            if (apart if apart is not None else worth_processes(len(summary.outcomes)))
            else "threads"
        ),
    }


def _fork_server_ready() -> None:
    """Wait for the fork server's imports: it serves its first fork once they are done."""
    import multiprocessing

    child = multiprocessing.get_context("forkserver").Process(target=int)
    child.start()
    child.join()


def _toml(urls: list[str]) -> str:
    lines = []
    for i, url in enumerate(urls, 1):
        lines += [
            f"[accounts.a{i}]",
            f'base_url = "{url}"',
            'api_key_env = "RECON_SANDBOX_API_KEY"',
            f"rate_limit = {RATE:g}",
            "",
        ]
    return "\n".join(lines)


def _mode(apart: bool | None) -> list[str]:
    return [] if apart is None else ["--processes" if apart else "--threads"]


def _night(urls: list[str], *, apart: bool | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="recon-accounts-") as tmp:
        Path(tmp, "recon.toml").write_text(_toml(urls))
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("RECON_")},
            "RECON_SANDBOX_API_KEY": "sandbox-demo-key",
        }
        load_before = os.getloadavg()
        served = {url: cpu_s_of(SANDBOX_PIDS[url]) for url in urls}
        proc = run_measured(
            [PYTHON, "-m", "benchmarks.accounts", "--drive", *_mode(apart)],
            env=env,
            cwd=Path(tmp),
            timeout=3600,
        )
        if not proc.ok:
            raise RuntimeError(f"night failed: {proc.tail()}")
        out = proc.last_json()
        out["process_wall_s"] = round(proc.wall_s, 2)
        # recon's CPU: the night's process and every process it started (the accounts' own)
        out["cpu_s"] = round(proc.extra["tree_cpu_s"], 2)
        out["processes"] = proc.extra["processes"]
        # the providers' side: the sandboxes' CPU over the night (on the same cores)
        out["sandbox_cpu_s"] = round(
            sum(cpu_s_of(SANDBOX_PIDS[url]) - served[url] for url in urls), 2
        )
        out["peak_rss_mb"] = round(proc.peak_rss_mb, 1)  # the largest single process
        out["sum_peak_rss_mb"] = round(proc.extra["sum_peak_rss_mb"], 1)
        out["load_before"] = [round(x, 2) for x in load_before]
        out["load_after"] = [round(x, 2) for x in os.getloadavg()]
        if out["records"]:
            out["cpu_s_per_1m_records"] = round(out["cpu_s"] / out["records"] * 1e6, 1)
        return out


def bench(
    accounts: int,
    payments: int,
    say: Any = print,
    *,
    apart: bool | None = None,
    repeat: int = 1,
) -> dict[str, Any]:
    options = [
        "--latency-ms",
        f"{LATENCY_MS:g}",
        "--rate",
        f"{RATE:g}",
        "--cache-records",
        "0",
        "--prewarm",
        "sync",
    ]
    with contextlib.ExitStack() as stack:
        urls = []
        for seed in range(1, accounts + 1):
            url, started = stack.enter_context(
                sandbox_process(payments, seed=seed, unbounded=False, options=options)
            )
            say(f"sandbox {seed}: {url} up in {started:.1f} s")
            urls.append(url)
        pairs = []
        for run in range(1, max(1, repeat) + 1):
            of = f" (pair {run} of {repeat})" if repeat > 1 else ""
            say(f"one account alone{of} …")
            alone = _night(urls[:1])
            say(f"  {alone}")
            say(f"{accounts} accounts side by side{of} …")
            together = _night(urls, apart=apart)
            say(f"  {together}")
            ratio = round(together["wall_s"] / alone["wall_s"], 2)
            pairs.append({"alone": alone, "together": together, "ratio": ratio})
    middle = sorted(pairs, key=lambda p: p["ratio"])[(len(pairs) - 1) // 2]
    return {
        "accounts": accounts,
        "payments_each": payments,
        "latency_ms": LATENCY_MS,
        "rate": RATE,
        "cpus": os.cpu_count(),
        "accounts_on": middle["together"]["accounts_on"],
        "alone": middle["alone"],
        "together": middle["together"],
        "ratio": middle["ratio"],
        "ratios": [p["ratio"] for p in pairs],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--drive", action="store_true")
    parser.add_argument("--accounts", type=int, default=4)
    parser.add_argument("--payments", type=int, default=100_000)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--threads", action="store_true", help="the accounts on threads in one process"
    )
    mode.add_argument(
        "--processes", action="store_true", help="each account in a process of its own"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="pairs (alone, then together) to run; the median"
    )
    args = parser.parse_args(argv)
    apart = True if args.processes else False if args.threads else None
    if args.drive:
        print(json.dumps(drive(apart=apart)))
        return 0
    result = bench(args.accounts, args.payments, apart=apart, repeat=args.repeat)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "accounts.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{args.accounts} accounts x {args.payments:,} payments side by side "
        f"(on {result['accounts_on']}): "
        f"{result['together']['wall_s']:.1f} s; one alone: {result['alone']['wall_s']:.1f} s; "
        f"ratio {result['ratio']:.2f} (target <= 1.3)"
        + (
            f", the median of {', '.join(f'{r:.2f}' for r in result['ratios'])}"
            if len(result["ratios"]) > 1
            else ""
        )
        + "; recon's CPU: "
        f"{result['alone']['cpu_s']:.1f} s alone, {result['together']['cpu_s']:.1f} s together "
        f"({result['together'].get('cpu_s_per_1m_records')} s per 1M records), the sandboxes' "
        f"{result['together']['sandbox_cpu_s']:.1f} s; load average "
        f"{result['together']['load_before']} -> {result['together']['load_after']}"
    )
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
