"""`make bench`: recon against the ceiling and against dlt, side by side, in one run.

    python -m benchmarks.run                 # 200k and 1M payments, checks, report, fixed cost
    python -m benchmarks.run --large               # also 2M payments (slow)
    python -m benchmarks.run --sizes 200000 --only extract
    python -m benchmarks.run --only checks,report,fixed

Parts: extract (1 ceiling, 2 recon, 3 dlt), checks (4), report (5), fixed (6). Every
client runs in its own process (its own peak RSS, via wait4) against a sandbox in another
process (`recon sandbox serve`, faults none), so that the server has its own core and GIL.
Results: a table on stdout, `benchmarks/results/latest.json` and a timestamped copy.
See docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks._common import (
    API_KEY,
    PYTHON,
    RECON,
    RESULTS,
    ROOT,
    Proc,
    median,
    run_measured,
    sandbox_process,
)

console = Console(width=None if sys.stdout.isatty() else 140)
err = Console(stderr=True)

DEFAULT_SIZES = (200_000, 1_000_000)
LARGE_SIZE = 2_000_000
LIST_RESOURCES = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")
# Targets of issue 6 (on this 2-core machine).
TARGET_RATIO_1M = 2.0
TARGET_RSS_1M_MB = 300.0
TARGET_RSS_GROWTH = 1.10
TARGET_NIGHT_RSS_MB = 500  # issue 23: the whole recon nightly at 1M, default settings
TARGET_FIXED_WARM_S = 3.0
TARGET_FIXED_COLD_S = 6.0
TARGET_PAST_END_PCT = 1.0
TARGET_CHECKS_S = 10.0
TARGET_REPORT_S = 3.0


def say(message: str) -> None:
    err.print(f"[dim]{datetime.now(UTC):%H:%M:%S}[/] {message}", highlight=False)


# ------------------------------------------------------------------ machine


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    commit = ""
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    dirty: list[str] = []
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "src", "sql"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        dirty = [line[3:] for line in status.splitlines() if line.strip()]
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": mem_gb,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": commit,
        "uncommitted_src_sql": dirty,
        "loadavg_at_start": [round(x, 2) for x in load],
    }


# ------------------------------------------------------------------ part 1-3


def _proc_row(proc: Proc, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "wall_s": round(proc.wall_s, 3),
        "cpu_s": round(float(proc.extra.get("cpu_s", 0.0)), 3),
        "peak_rss_mb": round(proc.peak_rss_mb, 1),
        "ok": proc.ok,
        **extra,
    }
    if not proc.ok:
        row["error"] = proc.tail()
        row["exit_code"] = proc.returncode
    return row


def _recon_env(work: Path) -> dict[str, str]:
    return {
        "RECON_API_KEY": API_KEY,
        "RECON_BEARER_TOKEN": "sandbox-demo-token",
        "RECON_DB": str(work / "recon.duckdb"),
        "RECON_REPORTS": str(work / "reports"),
        "RECON_LANDING": str(work / "landing"),
        "PYTHONUNBUFFERED": "1",
    }


def _recon_load(url: str, work: Path, run_id: str) -> Proc:
    return run_measured(
        [
            RECON,
            "load",
            "--run",
            run_id,
            "--db",
            str(work / "recon.duckdb"),
            "--landing",
            str(work / "landing"),
        ],
        env={**_recon_env(work), "RECON_BASE_URL": url},
    )


def _landed_mb(work: Path, run_id: str) -> float:
    folder = work / "landing" / run_id
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 1)


def _db_rows(db: Path) -> dict[str, int]:
    import duckdb

    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
            for t in LIST_RESOURCES
        }
    except Exception:
        return {}
    finally:
        con.close()


def bench_recon_payments(url: str, work: Path) -> dict[str, Any]:
    """recon, payments list only: extract (recon's own steps) + `recon load`."""
    extract = run_measured(
        [PYTHON, "-m", "benchmarks.recon_payments", url, str(work / "landing")],
        env=_recon_env(work),
    )
    info = extract.last_json()
    out: dict[str, Any] = {
        "extract": _proc_row(extract, records=info.get("records"), status=info.get("status"))
    }
    run_id = info.get("run_id")
    if not extract.ok or not run_id:
        return out
    load = _recon_load(url, work, run_id)
    rows = _db_rows(work / "recon.duckdb")
    out["load"] = _proc_row(load, rows=rows.get("payments"))
    out["landed_mb"] = _landed_mb(work, run_id)
    out["wall_s"] = round(extract.wall_s + load.wall_s, 3)
    out["cpu_s"] = round(out["extract"]["cpu_s"] + out["load"]["cpu_s"], 3)
    out["peak_rss_mb"] = round(max(extract.peak_rss_mb, load.peak_rss_mb), 1)
    out["rows"] = rows.get("payments")
    out["ok"] = extract.ok and load.ok
    return out


def bench_recon_all(url: str, work: Path) -> dict[str, Any]:
    """`recon extract` (every list resource) then `recon load`, as subprocesses."""
    extract = run_measured(
        [RECON, "extract", "--base-url", url, "--landing", str(work / "landing")],
        env=_recon_env(work),
    )
    match = re.search(r"run (\d{8}T\d{6}Z-[0-9a-f]{6}) landed", extract.stdout)
    out: dict[str, Any] = {"extract": _proc_row(extract)}
    if not match:
        out["extract"]["ok"] = False
        out["extract"].setdefault("error", extract.tail())
        return out
    run_id = match.group(1)
    load = _recon_load(url, work, run_id)
    rows = _db_rows(work / "recon.duckdb")
    out["load"] = _proc_row(load, rows=rows)
    out["landed_mb"] = _landed_mb(work, run_id)
    out["wall_s"] = round(extract.wall_s + load.wall_s, 3)
    out["peak_rss_mb"] = round(max(extract.peak_rss_mb, load.peak_rss_mb), 1)
    out["rows"] = sum(rows.values()) if rows else None
    out["ok"] = extract.ok and load.ok
    return out


def bench_ceiling(url: str, resource: str, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        proc = run_measured([PYTHON, "-m", "benchmarks.ceiling", url, resource])
        info = proc.last_json()
        runs.append(
            _proc_row(
                proc, loop_s=round(float(info.get("loop_s", "nan")), 3), records=info.get("records")
            )
        )
    ok = [r for r in runs if r["ok"]]
    if not ok:
        return runs[0]
    return {
        "wall_s": round(median([r["wall_s"] for r in ok]), 3),
        "cpu_s": round(median([r["cpu_s"] for r in ok]), 3),
        "loop_s": round(median([r["loop_s"] for r in ok]), 3),
        "peak_rss_mb": round(median([r["peak_rss_mb"] for r in ok]), 1),
        "records": ok[0]["records"],
        "repeats": len(ok),
        "ok": True,
    }


def bench_dlt(url: str, work: Path, mode: str) -> dict[str, Any]:
    proc = run_measured(
        [PYTHON, "-m", "benchmarks.dlt_bench", url, str(work / f"dlt-{mode}"), "--mode", mode],
        timeout=3600,
    )
    info = proc.last_json()
    shutil.rmtree(work / f"dlt-{mode}", ignore_errors=True)
    return _proc_row(
        proc, rows=info.get("rows"), distinct_ids=info.get("distinct_ids"), run_s=info.get("run_s")
    )


def dlt_available() -> bool:
    probe = subprocess.run([PYTHON, "-c", "import dlt"], capture_output=True, check=False)
    return probe.returncode == 0


def bench_extract(
    size: int, *, repeat: int, with_recon: bool, with_dlt: bool, dlt_default_max: int
) -> dict[str, Any]:
    out: dict[str, Any] = {"payments": size}
    with sandbox_process(size) as (url, startup_s):
        out["sandbox_startup_s"] = round(startup_s, 2)
        say(f"[bold]{size:,} payments[/]: sandbox up at {url} in {startup_s:.1f}s; warm-up pass")
        # Warm-up, not counted: the server serialises every record once and keeps it.
        warm = time.perf_counter()
        for resource in LIST_RESOURCES:
            bench_ceiling(url, resource, 1)
        out["warm_up_s"] = round(time.perf_counter() - warm, 2)
        say(f"  ceiling (payments), median of {repeat}")
        out["ceiling"] = bench_ceiling(url, "payments", repeat)
        say("  ceiling, every list resource")
        per_resource = {r: bench_ceiling(url, r, 1) for r in LIST_RESOURCES}
        out["ceiling_all"] = {
            "loop_s": round(sum(v.get("loop_s", 0.0) for v in per_resource.values()), 3),
            "wall_s": round(sum(v.get("wall_s", 0.0) for v in per_resource.values()), 3),
            "records": sum(int(v.get("records") or 0) for v in per_resource.values()),
            "per_resource": per_resource,
        }
        if with_recon:
            recon_runs: list[dict[str, Any]] = []
            for i in range(repeat):
                say(f"  recon, payments only ({i + 1}/{repeat})")
                with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
                    recon_runs.append(bench_recon_payments(url, Path(tmp)))
            out["recon_payments"] = _median_run(recon_runs)
            say("  recon extract + load, every list resource")
            with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
                out["recon_all"] = bench_recon_all(url, Path(tmp))
        if with_dlt:
            with tempfile.TemporaryDirectory(prefix="recon-bench-dlt-") as tmp:
                say("  dlt rest_api, tuned (parquet, no compression)")
                out["dlt_tuned"] = bench_dlt(url, Path(tmp), "tuned")
                if size <= dlt_default_max:
                    say("  dlt rest_api, defaults")
                    out["dlt_default"] = bench_dlt(url, Path(tmp), "default")
                else:
                    out["dlt_default"] = {
                        "skipped": f"above --dlt-default-max {dlt_default_max:,} "
                        "(defaults need 4.7-7 GB at 200k and grow with the list)"
                    }
    return out


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if r.get("ok")]
    if not ok:
        return runs[0]
    ok.sort(key=lambda r: r["wall_s"])
    chosen = dict(ok[len(ok) // 2])
    chosen["repeats"] = len(ok)
    chosen["peak_rss_mb"] = max(r["peak_rss_mb"] for r in ok)
    return chosen


# ------------------------------------------------------------------ part 4-6 (subprocesses)


def bench_checks(scale: float, regenerate: bool) -> dict[str, Any]:
    argv = [PYTHON, "-m", "benchmarks.checks_bench", "--scale", str(scale)]
    if regenerate:
        argv.append("--regenerate")
    say(f"[bold]checks[/] over the generated warehouse (scale {scale:g}; generated once, cached)")
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    fake = Proc(argv, 0.0, 0.0, proc.returncode, proc.stdout, "")
    result = fake.last_json()
    result["ok"] = proc.returncode == 0 and bool(result)
    return result


def bench_report(findings: int) -> dict[str, Any]:
    say(f"[bold]report[/] of a run with {findings:,} findings")
    proc = run_measured([PYTHON, "-m", "benchmarks.report_bench", "--findings", str(findings)])
    result = proc.last_json()
    result["peak_rss_mb"] = round(proc.peak_rss_mb, 1)
    result["ok"] = proc.ok and bool(result)
    if not proc.ok:
        result["error"] = proc.tail()
    return result


def bench_ledger() -> dict[str, Any]:
    from benchmarks.ledger_bench import bench as bench_books

    say("[bold]books vs provider[/]: 1M orders against 1M payments (benchmarks/ledger_bench.py)")
    result = bench_books(1_000_000)
    result["ok"] = not result["errored"]
    return result


def bench_night(sizes: list[int]) -> dict[str, Any]:
    from benchmarks.night import bench_night as run_night

    say("[bold]the whole night[/] (issue 23): recon nightly with the defaults")
    return run_night(sizes, say=say)


def bench_fixed() -> dict[str, Any]:
    from benchmarks.fixed_cost import bench_fixed_cost

    say("[bold]fixed cost[/] of a tiny nightly run")
    return bench_fixed_cost(say=say)


# ------------------------------------------------------------------ table


def _ratio(value: float | None, base: float | None) -> str:
    if not value or not base:
        return "—"
    return f"{value / base:.1f}x"


def _fmt(value: Any, spec: str = ".2f", unit: str = "") -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, (int, float)):
        return f"{value:{spec}}{unit}"
    return str(value)


def _verdict(ok: bool | None) -> str:
    if ok is None:
        return "[dim]n/a[/]"
    return "[bold green]PASS[/]" if ok else "[bold red]MISS[/]"


def _rss(entry: dict[str, Any], key: str) -> float | None:
    """Peak RSS of a recon figure; `extract` = the extract step of every list alone."""
    if key == "extract":
        value = entry.get("recon_all", {}).get("extract", {}).get("peak_rss_mb")
    else:
        value = entry.get(key, {}).get("peak_rss_mb")
    return float(value) if value else None


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    by_size = {e["payments"]: e for e in results.get("extract", [])}
    one_m = by_size.get(1_000_000)
    if one_m:
        ceiling = one_m["ceiling"].get("loop_s")
        for key, label, base in (
            ("recon_payments", "recon payments ≤ 2.0x ceiling @1M", ceiling),
            (
                "recon_all",
                "recon all lists ≤ 2.0x ceiling (all lists) @1M",
                one_m["ceiling_all"].get("loop_s"),
            ),
        ):
            wall = one_m.get(key, {}).get("wall_s")
            ratio = wall / base if wall and base else None
            out.append(
                {
                    "target": label,
                    "measured": f"{ratio:.2f}x" if ratio else "—",
                    "pass": (ratio <= TARGET_RATIO_1M) if ratio else None,
                }
            )
        for key, label in (
            ("recon_payments", "payments only"),
            ("recon_all", "all lists"),
            ("extract", "extract alone, all lists"),
        ):
            rss = _rss(one_m, key)
            out.append(
                {
                    "target": f"recon peak RSS ≤ 300 MB @1M ({label})",
                    "measured": f"{rss:.0f} MB" if rss else "—",
                    "pass": (rss <= TARGET_RSS_1M_MB) if rss else None,
                }
            )
    small, large = by_size.get(200_000), by_size.get(LARGE_SIZE)
    if small and large:
        for key, label in (
            ("recon_payments", "payments only"),
            ("recon_all", "all lists"),
            ("extract", "extract alone, all lists"),
        ):
            a = _rss(small, key)
            b = _rss(large, key)
            growth = b / a if a and b else None
            out.append(
                {
                    "target": f"recon RSS @2M ≤ 1.10x @200k ({label})",
                    "measured": f"{growth:.2f}x ({a:.0f} → {b:.0f} MB)" if growth else "—",
                    "pass": (growth <= TARGET_RSS_GROWTH) if growth else None,
                }
            )
    checks = results.get("checks")
    if checks and checks.get("ok"):
        out.append(
            {
                "target": f"all checks ≤ 10 s (scale {checks['scale']:g})",
                "measured": f"{checks['total_s']:.2f} s",
                "pass": checks["total_s"] <= TARGET_CHECKS_S if checks["scale"] >= 1.0 else None,
            }
        )
    report = results.get("report")
    if report and report.get("ok"):
        out.append(
            {
                "target": f"report with {report['findings']:,} findings ≤ 3 s",
                "measured": f"{report['render_s']:.2f} s",
                "pass": report["render_s"] <= TARGET_REPORT_S,
            }
        )
    out.extend(_night_targets(results))
    out.extend(_realistic_targets(results))
    ledger = results.get("ledger")
    if ledger and ledger.get("ok"):
        out.append(
            {
                "target": f"books: {ledger['orders']:,} orders matched and reported ≤ 10 s",
                "measured": f"{ledger['total_s']:.2f} s ({ledger['cpu_s']:.2f} s CPU)",
                "pass": ledger["pass"],
            }
        )
    return out


def _night_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 23's targets: the whole night's memory, fixed cost, pages past the end, CPU."""
    out: list[dict[str, Any]] = []
    night = results.get("night") or {}
    by_size = {e["payments"]: e for e in night.get("sizes", [])}
    one_m, two_m = by_size.get(1_000_000), by_size.get(LARGE_SIZE)
    if one_m and one_m["first"].get("ok"):
        rss = one_m["first"]["peak_rss_mb"]
        out.append(
            {
                "target": "recon nightly peak RSS ≤ 500 MB @1M (defaults)",
                "measured": f"{rss:.0f} MB",
                "pass": rss <= TARGET_NIGHT_RSS_MB,
            }
        )
        if two_m and two_m["first"].get("ok"):
            growth = two_m["first"]["peak_rss_mb"] / rss
            out.append(
                {
                    "target": "recon nightly peak RSS @2M ≤ 1.10x @1M",
                    "measured": f"{growth:.2f}x ({two_m['first']['peak_rss_mb']:.0f} MB)",
                    "pass": growth <= TARGET_RSS_GROWTH,
                }
            )
    for kind, limit in (
        ("warm", TARGET_FIXED_WARM_S),
        ("again", TARGET_FIXED_WARM_S),
        ("cold", TARGET_FIXED_COLD_S),
    ):
        row = night.get(f"empty_{kind}")
        if row and row.get("ok"):
            out.append(
                {
                    "target": f"night with nothing to fetch ≤ {limit:g} s ({kind} PREFECT_HOME)"
                    if kind != "again"
                    else f"night with nothing to fetch ≤ {limit:g} s (warm, warehouse there)",
                    "measured": f"{row['wall_s']:.1f} s, {row['cpu_s']:.1f} CPU-s, "
                    f"load {row['loadavg'][0]:.1f}",
                    "pass": row["wall_s"] <= limit,
                }
            )
    for size, entry in sorted(by_size.items()):
        for which in ("first", "second"):
            row = entry.get(which, {})
            if "past_end_pct" in row:
                out.append(
                    {
                        "target": f"pages past a list's end ≤ 1% of requests "
                        f"({size:,}, {which} night)",
                        "measured": f"{row['past_end']} of {row['requests']:,} "
                        f"({row['past_end_pct']:.2f}%; not a page taken "
                        f"{row['not_pages_pct']:.2f}%)",
                        "pass": row["past_end_pct"] <= TARGET_PAST_END_PCT,
                    }
                )
    extract = {e["payments"]: e for e in results.get("extract", [])}.get(1_000_000)
    if extract:
        ceiling = extract.get("ceiling", {})
        recon = extract.get("recon_payments", {})
        if ceiling.get("cpu_s") and recon.get("cpu_s"):
            ratio = recon["cpu_s"] / ceiling["cpu_s"]
            out.append(
                {
                    "target": "recon payments CPU-s ≤ 2.0x ceiling CPU-s @1M (client side)",
                    "measured": f"{ratio:.2f}x ({recon['cpu_s']:.1f} / {ceiling['cpu_s']:.1f})",
                    "pass": ratio <= TARGET_RATIO_1M,
                }
            )
    return out


#: Issue 23: the whole realistic night, less its fixed cost, against the rate-limit floor.
TARGET_REALISTIC_NIGHT = {100_000: 1.2, 1_000_000: 1.1}


def _realistic_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The realistic scenario (50 ms, 100 req/s): the night beyond its fixed cost."""
    out: list[dict[str, Any]] = []
    for e in results.get("realistic") or []:
        size, night = e["payments"], e.get("night") or {}
        limit = TARGET_REALISTIC_NIGHT.get(size)
        if limit is None or "ratio" not in night:
            continue
        nightly = night["nightly"]
        out.append(
            {
                "target": f"realistic recon nightly - fixed ≤ {limit:g}x floor ({size:,})",
                "measured": f"{night['ratio']:.2f}x ({night['beyond_fixed_s']:.1f} s / "
                f"{e['floor_s']:.1f} s; CPU {nightly['cpu_s']:.1f} s)",
                "pass": night["ratio"] <= limit,
            }
        )
        if "past_end_pct" in nightly:
            out.append(
                {
                    "target": f"realistic pages past a list's end ≤ 1% ({size:,})",
                    "measured": f"{nightly['past_end']} of {nightly['requests']:,} "
                    f"({nightly['past_end_pct']:.2f}%)",
                    "pass": nightly["past_end_pct"] <= TARGET_PAST_END_PCT,
                }
            )
    return out


def print_table(results: dict[str, Any]) -> None:
    table = Table(title="recon benchmarks — wall time, x ceiling, peak RSS", show_lines=False)
    for col, justify in (
        ("size", "right"),
        ("what", "left"),
        ("wall s", "right"),
        ("x ceiling", "right"),
        ("peak RSS MB", "right"),
        ("rows", "right"),
        ("target", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for e in results.get("extract", []):
        size = f"{e['payments']:,}"
        c = e["ceiling"]
        base = c.get("loop_s")
        base_all = e["ceiling_all"].get("loop_s")
        table.add_row(
            size,
            "ceiling: httpx loop, payments (loop)",
            _fmt(base),
            "1.0x",
            _fmt(c.get("peak_rss_mb"), ".0f"),
            _fmt(c.get("records"), ","),
            "",
        )
        table.add_row(
            "",
            "  same, process wall (python + imports)",
            _fmt(c.get("wall_s")),
            _ratio(c.get("wall_s"), base),
            "",
            "",
            "",
        )
        table.add_row(
            "",
            "ceiling: every list (sum of loops)",
            _fmt(base_all),
            "1.0x (all)",
            "",
            _fmt(e["ceiling_all"].get("records"), ","),
            "",
        )
        rp = e.get("recon_payments", {})
        target_note = f"≤ {TARGET_RATIO_1M}x @1M, ≤ 300 MB" if e["payments"] == 1_000_000 else ""
        table.add_row(
            "",
            "recon payments: extract + load",
            _fmt(rp.get("wall_s")),
            _ratio(rp.get("wall_s"), base),
            _fmt(rp.get("peak_rss_mb"), ".0f"),
            _fmt(rp.get("rows"), ","),
            target_note,
        )
        for part in ("extract", "load"):
            if part in rp:
                table.add_row(
                    "",
                    f"  {part}",
                    _fmt(rp[part].get("wall_s")),
                    _ratio(rp[part].get("wall_s"), base),
                    _fmt(rp[part].get("peak_rss_mb"), ".0f"),
                    "",
                    "" if rp[part].get("ok") else "[red]failed[/]",
                )
        ra = e.get("recon_all", {})
        table.add_row(
            "",
            "recon every list: extract + load",
            _fmt(ra.get("wall_s")),
            _ratio(ra.get("wall_s"), base_all) + " (all)",
            _fmt(ra.get("peak_rss_mb"), ".0f"),
            _fmt(ra.get("rows"), ","),
            target_note,
        )
        for part in ("extract", "load"):
            if part in ra:
                table.add_row(
                    "",
                    f"  {part}",
                    _fmt(ra[part].get("wall_s")),
                    _ratio(ra[part].get("wall_s"), base_all),
                    _fmt(ra[part].get("peak_rss_mb"), ".0f"),
                    "",
                    "" if ra[part].get("ok") else "[red]failed[/]",
                )
        for key, label in (
            ("dlt_tuned", "dlt rest_api, tuned"),
            ("dlt_default", "dlt rest_api, defaults"),
        ):
            d = e.get(key)
            if d is None:
                continue
            if "skipped" in d:
                table.add_row("", label, "skipped", "", "", "", d["skipped"])
                continue
            note = "ref 12.6x @200k" if key == "dlt_tuned" else "ref 72.7x @200k"
            table.add_row(
                "",
                label,
                _fmt(d.get("wall_s")),
                _ratio(d.get("wall_s"), base),
                _fmt(d.get("peak_rss_mb"), ".0f"),
                _fmt(d.get("rows"), ","),
                note if d.get("ok") else "[red]failed[/]",
            )
        if "dlt_note" in e:
            table.add_row("", "dlt", "", "", "", "", e["dlt_note"])
        table.add_section()
    checks = results.get("checks")
    if checks:
        if checks.get("ok"):
            rows = sum(checks["rows"][t] for t in LIST_RESOURCES)
            table.add_row(
                f"{checks['rows']['payments']:,}",
                "checks: all of sql/checks",
                _fmt(checks["total_s"]),
                "",
                "",
                f"{rows:,} rec",
                f"≤ {TARGET_CHECKS_S:.0f} s",
            )
            for c in checks["checks"][:5]:
                table.add_row(
                    "",
                    f"  {c['check']}",
                    _fmt(c["duration_ms"] / 1000.0),
                    "",
                    "",
                    f"{c['findings']:,} found",
                    "",
                )
            table.add_row(
                "",
                "  (record findings/check_runs)",
                _fmt(checks.get("record_s")),
                "",
                "",
                f"{checks['findings']:,} found",
                "",
            )
        else:
            table.add_row("", "checks", "failed", "", "", "", checks.get("error", "")[:60])
        table.add_section()
    report = results.get("report")
    if report:
        if report.get("ok"):
            table.add_row(
                f"{report['findings']:,}",
                "report: render_report",
                _fmt(report["render_s"]),
                "",
                _fmt(report.get("peak_rss_mb"), ".0f"),
                "findings",
                f"≤ {TARGET_REPORT_S:.0f} s",
            )
        else:
            table.add_row("", "report", "failed", "", "", "", str(report.get("error", ""))[:60])
        table.add_section()
    fixed = results.get("fixed")
    if fixed:
        for key, label in (
            ("python_bare", "python -c pass"),
            ("import_prefect", "python -c 'import prefect'"),
            ("import_recon_cli", "python -c 'import recon.cli'"),
            ("trivial_flow_cold", "trivial Prefect flow, new PREFECT_HOME"),
            ("trivial_flow_warm", "trivial Prefect flow, warm PREFECT_HOME"),
            ("recon_session_cold", "recon's Prefect server start, new PREFECT_HOME"),
            ("recon_session_warm", "recon's Prefect server start, warm PREFECT_HOME"),
            ("sandbox_startup", "sandbox start-up alone (in a thread)"),
            ("nightly_cold", "recon nightly --sandbox 1k, cold"),
            ("nightly_warm", "recon nightly --sandbox 1k, warm"),
        ):
            f = fixed.get(key, {})
            table.add_row(
                "1,000" if key.startswith("nightly") else "",
                label,
                _fmt(f.get("wall_s")),
                "",
                _fmt(f.get("peak_rss_mb"), ".0f"),
                "",
                "" if f.get("ok", True) else "[red]failed[/]",
            )
        for kind in ("cold", "warm"):
            s = fixed.get(f"split_{kind}", {})
            table.add_row(
                "",
                f"  split ({kind}): Prefect / sandbox / work",
                " / ".join(f"{s.get(k, 0):.1f}" for k in ("prefect_s", "sandbox_s", "work_s")),
                "",
                "",
                "",
                "measure; Prefect is the floor",
            )
    _night_rows(table, results.get("night"))
    console.print(table)
    if results.get("realistic"):
        from benchmarks import realistic

        realistic.print_table(results["realistic"])
    verdicts = Table(title="targets (issues 6, 10, 23)")
    verdicts.add_column("target")
    verdicts.add_column("measured", justify="right")
    verdicts.add_column("")
    for t in results.get("targets", []):
        verdicts.add_row(t["target"], t["measured"], _verdict(t["pass"]))
    console.print(verdicts)


# ------------------------------------------------------------------ main


def _night_rows(table: Table, night: dict[str, Any] | None) -> None:
    if not night:
        return
    table.add_section()

    def row(size: str, label: str, r: dict[str, Any], note: str) -> None:
        if not r.get("ok"):
            table.add_row(size, label, "failed", "", "", "", str(r.get("error", ""))[:60])
            return
        load = r.get("loadavg", [0, 0])
        table.add_row(
            size,
            f"{label} (CPU {r['cpu_s']:.1f} s, load {load[0]:.1f})",
            _fmt(r.get("wall_s")),
            "",
            _fmt(r.get("peak_rss_mb"), ".0f"),
            _fmt(r.get("requests"), ",") + (" req" if r.get("requests") else ""),
            note,
        )

    for kind in ("first", "cold", "warm", "again"):
        if f"empty_{kind}" in night:
            limit = TARGET_FIXED_WARM_S if kind in ("warm", "again") else TARGET_FIXED_COLD_S
            row(
                "0",
                f"recon nightly, nothing to fetch, {kind}",
                night[f"empty_{kind}"],
                f"≤ {limit:g} s",
            )
    for e in night.get("sizes", []):
        for which in ("first", "second"):
            r = e.get(which, {})
            note = f"≤ {TARGET_NIGHT_RSS_MB} MB" if which == "first" else ""
            if "past_end" in r:
                note += f" past end {r['past_end']} ({r['past_end_pct']:.2f}%)"
            row(f"{e['payments']:,}", f"recon nightly, {which} night", r, note.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="recon benchmarks (issue 6)")
    parser.add_argument(
        "--sizes", help="payments per extract run, comma-separated (default 200000,1000000)"
    )
    parser.add_argument("--large", action="store_true", help=f"also {LARGE_SIZE:,} payments (slow)")
    parser.add_argument(
        "--only",
        default="extract,dlt,checks,report,fixed,ledger,realistic,night",
        help="parts to run (comma-separated): extract (ceiling + recon), dlt (ceiling + dlt), "
        "checks, report, fixed, ledger, realistic (50 ms, 100 req/s), night (the whole "
        "recon nightly: memory, fixed cost, pages past the end; issue 23)",
    )
    parser.add_argument(
        "--night-sizes", default="1000000", help="payments of the whole-night runs (part night)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of the ceiling and of recon payments-only (median)",
    )
    parser.add_argument("--checks-scale", type=float, default=1.0, help="1.0 = 10M payments")
    parser.add_argument(
        "--regenerate", action="store_true", help="rebuild the cached checks warehouse"
    )
    parser.add_argument("--report-findings", type=int, default=100_000)
    parser.add_argument("--no-dlt", action="store_true")
    parser.add_argument(
        "--realistic-sizes", default="100000", help="payments of the realistic scenario"
    )
    parser.add_argument(
        "--dlt-default-max",
        type=int,
        default=200_000,
        help="largest size for dlt with defaults (its RSS grows with the list)",
    )
    parser.add_argument(
        "--show", action="store_true", help="print the table of results/latest.json and exit"
    )
    args = parser.parse_args(argv)
    if args.show:
        print_table(json.loads((RESULTS / "latest.json").read_text(encoding="utf-8")))
        return 0

    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(DEFAULT_SIZES)
    if args.large and LARGE_SIZE not in sizes:
        sizes.append(LARGE_SIZE)
    started = datetime.now(UTC)
    results: dict[str, Any] = {
        "started_at": started.isoformat(timespec="seconds"),
        "command": " ".join(
            [
                Path(sys.executable).name,
                "-m",
                "benchmarks.run",
                *(argv if argv is not None else sys.argv[1:]),
            ]
        ),
        "machine": machine(),
        "sizes": sizes,
        "notes": [],
    }
    if not args.large and LARGE_SIZE not in sizes:
        results["notes"].append(f"{LARGE_SIZE:,} payments not run (slow): add --large")
    if parts & {"extract", "dlt"}:
        with_dlt = "dlt" in parts and not args.no_dlt and dlt_available()
        if "dlt" in parts and not args.no_dlt and not with_dlt:
            note = "dlt not installed: uv sync --group bench"
            console.print(f"[yellow]{note}[/]")
            results["notes"].append(note)
        results["extract"] = []
        for size in sizes:
            entry = bench_extract(
                size,
                repeat=args.repeat,
                with_recon="extract" in parts,
                with_dlt=with_dlt,
                dlt_default_max=args.dlt_default_max,
            )
            if "dlt" in parts and not with_dlt:
                entry["dlt_note"] = "dlt not installed: uv sync --group bench"
            results["extract"].append(entry)
            _write(results, partial=True)
    if "checks" in parts:
        results["checks"] = bench_checks(args.checks_scale, args.regenerate)
        _write(results, partial=True)
    if "report" in parts:
        results["report"] = bench_report(args.report_findings)
        _write(results, partial=True)
    if "fixed" in parts:
        results["fixed"] = bench_fixed()
    if "ledger" in parts:
        results["ledger"] = bench_ledger()
    if "realistic" in parts:  # issue 10: benchmarks/realistic.py
        from benchmarks import realistic

        results["realistic"] = realistic.bench_realistic(
            [int(s) for s in args.realistic_sizes.split(",")], say=say
        )
        _write(results, partial=True)
    if "night" in parts:
        night_sizes = [int(s) for s in args.night_sizes.split(",")]
        if args.large and LARGE_SIZE not in night_sizes:
            night_sizes.append(LARGE_SIZE)
        results["night"] = bench_night(night_sizes)
        _write(results, partial=True)
    results["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    results["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    results["targets"] = targets(results)
    path = _write(results, partial=False)
    print_table(results)
    for note in results["notes"]:
        console.print(f"[dim]note: {note}[/]")
    console.print(f"results: {RESULTS / 'latest.json'} and {path.name}")
    return 0


def _write(results: dict[str, Any], *, partial: bool) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=2, default=str)
    latest = RESULTS / "latest.json"
    tmp = latest.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(latest)
    if partial:
        return latest
    stamp = datetime.fromisoformat(results["started_at"]).strftime("%Y%m%dT%H%M%SZ")
    stamped = RESULTS / f"bench-{stamp}.json"
    stamped.write_text(text, encoding="utf-8")
    return stamped


if __name__ == "__main__":
    sys.exit(main())
