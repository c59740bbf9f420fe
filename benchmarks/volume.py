"""Real volume (issue 38): nights that look like production, and every analyst command on them.

    python -m benchmarks.volume                        # 1M payments, then 1M books x 1M payments
    python -m benchmarks.volume --payments 100000      # a smaller rehearsal
    python -m benchmarks.volume --skip-books           # the first night only
    python -m benchmarks.volume --payments 10000000 --skip-books --skip-commands \
        --sandbox-cache 300000 --out volume-10m.json   # the 10M night alone, per step

1. The sandbox (`recon sandbox serve --anomaly-rate 0.13`, its own process): ~13% of its
   records carry a finding, like a provider's first night as recon meets it (open invoices,
   refund anomalies, timestamps ahead of the clock).
2. `recon nightly --base-url …` against it (no books): wall, CPU, peak RSS (target ≤ 600 MB).
3. Every analyst command on that warehouse, each timed with its peak RSS (target ≤ 1 GB):
   `recon report`, `recon findings list --format csv`, `recon findings export` (the
   worklist), `recon findings ack --check … --yes` (bulk, by filter), `recon close`,
   `recon query --format json` of every finding.
4. The books: an orders CSV of one row per payment (`reference, amount_minor + 1, …`: every
   order one minor unit off its payment, so ~1M breaks), then a second night that reads it
   (1M books x 1M payments, ~1M findings), and the commands again.

Each night is also measured per step (`_night_by_step`): Prefect's task-run lines
(`PREFECT_LOGGING_LEVEL=INFO`, one "Finished in state" line per task, in the order of
`recon.night.nightly.run_night`) give the steps' ends; the night's process tree is sampled
every 50 ms (VmRSS, VmHWM, CPU-seconds from /proc), and each step gets its wall time, the
CPU-seconds of the night's process and of its tree (with Prefect's server), the night
process's peak RSS within the step (VmHWM when it rose there, else the largest VmRSS
sampled) and the sandbox's CPU-seconds. A guard stops the night (SIGTERM, then SIGKILL) when
the disk's free space or the machine's available memory falls below a floor, so that a
night too big for the machine ends as a measured failure, not as the machine's.

Figures go to benchmarks/results/volume.json (or `--out`) and are printed as a table. The
machine is shared (2 cores): read wall times as an upper bound; the RSS figures do not
depend on it.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import (
    API_KEY,
    RECON,
    RESULTS,
    SANDBOX_PIDS,
    _descendants,
    cpu_s_of,
    run_measured,
    sandbox_process,
)

ANOMALY_RATE = 0.13
NIGHT_TARGET_MB = 600
COMMAND_TARGET_MB = 1024


def _env(db: Path, landing: Path, reports: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(
        RECON_API_KEY=API_KEY,
        RECON_DB=str(db),
        RECON_LANDING=str(landing),
        RECON_REPORTS=str(reports),
        RECON_USER="bench",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90",
    )
    env.update(extra)
    return env


def _measure(name: str, argv: Sequence[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    proc = run_measured(argv, env=env, cwd=cwd, timeout=3 * 3600)
    row = {
        "step": name,
        "argv": " ".join(a if " " not in a else repr(a) for a in argv[1:]),
        "exit": proc.returncode,
        "wall_s": round(proc.wall_s, 1),
        "cpu_s": round(float(proc.extra.get("tree_cpu_s", 0.0)), 1),
        "peak_rss_mb": round(proc.peak_rss_mb),
        "tail": proc.tail(2) if proc.returncode not in (0, 3) else "",
    }
    print(json.dumps(row), flush=True)
    return row


NIGHT_STEPS = ("start", "extract", "load", "check", "publish", "report", "notify")
_TASK_END = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ prefect\.task_runs: "
    r"Finished in state (\w+)"
)
_FLOW_BEGIN = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ prefect\.flow_runs: Beginning flow run"
)


def _status_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a live process in KiB; (0, 0) when gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return rss, hwm


def _mem_available_gb() -> float:
    with open("/proc/meminfo", "rb") as fh:
        for line in fh:
            if line.startswith(b"MemAvailable:"):
                return int(line.split()[1]) / 1024 / 1024
    return float("inf")


@dataclass
class _Timeline:
    """The night's process tree sampled over time (each list one value per sample)."""

    t: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)  # the night's own process
    hwm_kb: list[int] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    tree_cpu_s: list[float] = field(default_factory=list)  # + Prefect's server, any child
    others_rss_kb: list[int] = field(default_factory=list)  # the largest descendant's VmRSS
    sandbox_cpu_s: list[float] = field(default_factory=list)
    free_gb: list[float] = field(default_factory=list)  # the work folder's disk
    available_gb: list[float] = field(default_factory=list)  # MemAvailable

    def at(self, values: Sequence[float], when: float) -> float:
        """`values` at time `when`, interpolated between the samples around it."""
        i = bisect.bisect_left(self.t, when)
        if i <= 0:
            return float(values[0])
        if i >= len(self.t):
            return float(values[-1])
        t0, t1 = self.t[i - 1], self.t[i]
        v0, v1 = float(values[i - 1]), float(values[i])
        return v0 + (v1 - v0) * ((when - t0) / (t1 - t0) if t1 > t0 else 0.0)

    def window(self, start: float, end: float) -> dict[str, Any]:
        """One step: wall, CPU-seconds (the night, its tree, the sandbox), peak RSS."""
        i = bisect.bisect_left(self.t, start)
        j = max(bisect.bisect_right(self.t, end), i + 1)
        j = min(j, len(self.t))
        hwm_before = self.hwm_kb[i - 1] if i > 0 else 0
        hwm_after = self.hwm_kb[j - 1]
        sampled = max(self.rss_kb[i:j], default=0)
        # VmHWM rose in the step: that is the step's peak; else the largest VmRSS sampled
        peak = hwm_after if hwm_after > hwm_before else sampled
        return {
            "wall_s": round(end - start, 1),
            "cpu_s": round(self.at(self.cpu_s, end) - self.at(self.cpu_s, start), 1),
            "tree_cpu_s": round(self.at(self.tree_cpu_s, end) - self.at(self.tree_cpu_s, start), 1),
            "peak_rss_mb": round(peak / 1024),
            "others_peak_rss_mb": round(max(self.others_rss_kb[i:j], default=0) / 1024),
            "sandbox_cpu_s": round(
                self.at(self.sandbox_cpu_s, end) - self.at(self.sandbox_cpu_s, start), 1
            ),
            "min_free_gb": round(min(self.free_gb[i:j], default=0.0), 1),
            "min_available_gb": round(min(self.available_gb[i:j], default=0.0), 1),
        }


def _log_time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _step_bounds(stderr: str) -> tuple[float | None, list[tuple[float, str]]]:
    """When the flow began and when each task ended (with its final state), from the log."""
    begun: float | None = None
    ends: list[tuple[float, str]] = []
    for line in stderr.splitlines():
        if begun is None and (m := _FLOW_BEGIN.match(line)):
            begun = _log_time(m.group(1))
        elif m := _TASK_END.match(line):
            ends.append((_log_time(m.group(1)), m.group(2)))
    return begun, ends


def _night_by_step(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    *,
    sandbox_url: str,
    min_free_gb: float,
    min_available_gb: float,
    timeout: float = 4 * 3600,
) -> dict[str, Any]:
    """Run one night, sampling its process tree; the whole night and each of its steps."""
    out_path, err_path = cwd / "night.out", cwd / "night.err"
    sandbox_pid = SANDBOX_PIDS.get(sandbox_url)
    tl = _Timeline()
    load = [round(x, 2) for x in os.getloadavg()]
    cpu: dict[int, float] = {}
    others: list[int] = []
    guard = ""
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.time()
        child = subprocess.Popen(
            list(argv), stdout=out, stderr=err, env={**os.environ, **env}, cwd=cwd
        )
        deadline, tick, stop_sent = started + timeout, 0, 0.0
        while True:
            if tick % 10 == 0:
                others = _descendants(child.pid)
            now = time.time()
            rss, hwm = _status_kb(child.pid)
            own = cpu_s_of(child.pid)
            if own > cpu.get(child.pid, 0.0):
                cpu[child.pid] = own
            top = 0
            for pid in others:
                used = cpu_s_of(pid)
                if used > cpu.get(pid, 0.0):
                    cpu[pid] = used
                top = max(top, _status_kb(pid)[0])
            free = shutil.disk_usage(cwd).free / 1024**3
            available = _mem_available_gb()
            tl.t.append(now)
            tl.rss_kb.append(rss or (tl.rss_kb[-1] if tl.rss_kb else 0))
            tl.hwm_kb.append(max(hwm, tl.hwm_kb[-1] if tl.hwm_kb else 0))
            tl.cpu_s.append(cpu.get(child.pid, 0.0))
            tl.tree_cpu_s.append(sum(cpu.values()))
            tl.others_rss_kb.append(top)
            tl.sandbox_cpu_s.append(cpu_s_of(sandbox_pid) if sandbox_pid else 0.0)
            tl.free_gb.append(free)
            tl.available_gb.append(available)
            if child.poll() is not None:
                break
            if not guard and (free < min_free_gb or available < min_available_gb):
                guard = (
                    f"stopped by the benchmark: {free:.1f} GB free on disk, "
                    f"{available:.1f} GB of memory available (floors {min_free_gb:g} / "
                    f"{min_available_gb:g} GB)"
                )
            if not guard and now > deadline:
                guard = f"stopped by the benchmark after {timeout:.0f} s"
            if guard and not stop_sent:
                child.send_signal(signal.SIGTERM)
                stop_sent = now
            elif stop_sent and now - stop_sent > 30:
                child.kill()
            tick += 1
            time.sleep(0.05)
        ended = time.time()
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    begun, ends = _step_bounds(stderr)
    steps: list[dict[str, Any]] = []
    mark = started
    if begun is not None:
        steps.append({"step": "before the flow (imports, checks, Prefect server)"})
        steps[-1].update(tl.window(started, begun))
        mark = begun
    for name, (end, state) in zip(NIGHT_STEPS, ends, strict=False):
        steps.append({"step": name, "state": state, **tl.window(mark, end)})
        mark = end
    steps.append({"step": "after the last task (flow end, server stop)"})
    steps[-1].update(tl.window(mark, ended))
    code = child.returncode
    lines = [ln for ln in (stderr.strip() or stdout.strip()).splitlines() if ln.strip()]
    return {
        "step": "",
        "argv": " ".join(a if " " not in a else repr(a) for a in argv[1:]),
        "exit": code,
        "wall_s": round(ended - started, 1),
        "cpu_s": round(sum(cpu.values()), 1),
        "peak_rss_mb": round(max(tl.hwm_kb, default=0) / 1024),
        "others_peak_rss_mb": round(max(tl.others_rss_kb, default=0) / 1024),
        "sandbox_cpu_s": round(tl.sandbox_cpu_s[-1] - tl.sandbox_cpu_s[0], 1),
        "min_free_gb": round(min(tl.free_gb), 1),
        "min_available_gb": round(min(tl.available_gb), 1),
        "loadavg_before": load,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "guard": guard,
        "by_step": steps,
        "tail": "\n".join(lines[-4:]) if code not in (0, 3) else "",
    }


def _artefacts(db: Path, reports: Path, landing: Path) -> dict[str, Any]:
    """What the night left: the warehouse, the landing, the report and its findings file."""
    import duckdb

    def size(path: Path) -> int:
        if path.is_file():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())

    found: dict[str, Any] = {
        "warehouse_bytes": size(db) if db.exists() else 0,
        "landing_bytes": size(landing) if landing.exists() else 0,
    }
    runs = sorted(p for p in reports.glob("2*") if p.is_dir()) if reports.exists() else []
    if not runs:
        found["report"] = "no report folder"
        return found
    run = runs[-1]
    found["report_folder"] = {p.name: p.stat().st_size for p in sorted(run.iterdir())}
    summary = run / "summary.json"
    if summary.exists():
        data = json.loads(summary.read_text())
        found["run"] = data.get("run")
        found["totals"] = data.get("totals")
        found["records"] = {r["resource"]: r.get("records") for r in data.get("resources", [])}
    parquet = run / "findings.parquet"
    if parquet.exists():
        con = duckdb.connect()
        try:
            row = con.execute("SELECT count(*) FROM read_parquet(?)", [str(parquet)]).fetchone()
        finally:
            con.close()
        found["findings_parquet_rows"] = int(row[0]) if row else 0
    return found


def _commands(db: Path, reports: Path, work: Path) -> list[tuple[str, list[str]]]:
    period = datetime.now(UTC).strftime("%Y-%m")
    return [
        ("report", [RECON, "report"]),
        ("findings list (csv)", [RECON, "findings", "list", "--format", "csv"]),
        ("findings export (worklist)", [RECON, "findings", "export", str(work / "work.xlsx")]),
        (
            "findings ack by filter",
            [RECON, "findings", "ack", "--check", "open_invoices", "--yes", "--note", "bench"],
        ),
        ("close", [RECON, "close", period, "--accept-incomplete"]),
        (
            "query --format json",
            [RECON, "query", "--format", "json", "SELECT * FROM findings"],
        ),
    ]


def _write_books(db: Path, out: Path) -> int:
    """One order per payment, one minor unit off (every order a break): the books file."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute(
            "COPY (SELECT coalesce(reference, id) AS reference, amount_minor + 1 AS amount_minor, "
            "currency, lower(status) AS status, created_at FROM payments "
            "WHERE amount_minor IS NOT NULL AND currency IS NOT NULL) "
            f"TO '{out}' (HEADER, DELIMITER ',')"
        )
        row = con.execute(f"SELECT count(*) FROM read_csv('{out}')").fetchone()
    finally:
        con.close()
    return int(row[0]) if row else 0


def _findings(db: Path) -> int:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(
            "SELECT count(*) FROM findings WHERE run_id = "
            "(SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)"
        ).fetchone()
    finally:
        con.close()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Options:
    books: bool = True
    commands: bool = True
    sandbox_cache: int = 0  # records the sandbox keeps serialised per list (0: all)
    settings: tuple[tuple[str, str], ...] = ()  # RECON_* settings for the nights and commands
    min_free_gb: float = 15.0
    min_available_gb: float = 2.0


def _night(name: str, env: dict[str, str], root: Path, url: str, opts: Options) -> dict[str, Any]:
    db, landing, reports = (Path(env[k]) for k in ("RECON_DB", "RECON_LANDING", "RECON_REPORTS"))
    night = _night_by_step(
        [RECON, "nightly"],
        {**env, "PREFECT_LOGGING_LEVEL": "INFO"},
        root,
        sandbox_url=url,
        min_free_gb=opts.min_free_gb,
        min_available_gb=opts.min_available_gb,
    )
    night["step"] = name
    night["findings"] = _findings(db) if db.exists() else None
    night.update(_artefacts(db, reports, landing))
    print(json.dumps(night), flush=True)
    return night


def run(payments: int, *, root: Path, opts: Options | None = None) -> dict[str, Any]:
    opts = opts or Options()
    db, landing, reports = root / "recon.duckdb", root / "landing", root / "reports"
    results: dict[str, Any] = {
        "payments": payments,
        "anomaly_rate": ANOMALY_RATE,
        "sandbox_cache_records": opts.sandbox_cache,
        "settings": dict(opts.settings),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "steps": [],
    }
    options = ["--anomaly-rate", str(ANOMALY_RATE), "--cache-records", str(opts.sandbox_cache)]
    with sandbox_process(payments, unbounded=False, options=options) as (url, _started):
        env = _env(db, landing, reports, RECON_BASE_URL=url, **dict(opts.settings))
        night = _night("night 1 (provider only)", env, root, url, opts)
        results["steps"].append(night)
        if opts.commands and night["exit"] in (0, 3):
            for name, argv in _commands(db, reports, root):
                results["steps"].append(_measure(f"night 1: {name}", argv, env, root))
        if opts.books and night["exit"] in (0, 3):
            orders = root / "orders.csv"
            started = time.perf_counter()
            rows = _write_books(db, orders)
            results["books_rows"] = rows
            results["books_bytes"] = orders.stat().st_size
            results["books_written_s"] = round(time.perf_counter() - started, 1)
            env = {**env, "RECON_LEDGER_ORDERS": str(orders)}
            night = _night("night 2 (books x provider)", env, root, url, opts)
            results["steps"].append(night)
            for name, argv in _commands(db, reports, root) if opts.commands else []:
                results["steps"].append(_measure(f"night 2: {name}", argv, env, root))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--skip-books", action="store_true")
    parser.add_argument(
        "--skip-commands", action="store_true", help="The nights alone, no analyst command"
    )
    parser.add_argument(
        "--sandbox-cache",
        type=int,
        default=0,
        help="Records the sandbox keeps serialised per list (0: every one; ~450 bytes each, "
        "so bound it past a few million payments, e.g. 300000)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="RECON_NAME=VALUE",
        help="A recon setting for the nights and commands (repeatable; the benchmark drops "
        "the RECON_* variables of its own environment)",
    )
    parser.add_argument("--min-free-gb", type=float, default=15.0, help="Stop the night below")
    parser.add_argument(
        "--min-available-gb", type=float, default=2.0, help="Stop the night below (MemAvailable)"
    )
    parser.add_argument("--out", default="volume.json", help="File name in benchmarks/results")
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it")
    args = parser.parse_args(argv)
    parts = [item.partition("=") for item in args.set]
    if any(not sep or not name.startswith("RECON_") for name, sep, _ in parts):
        parser.error("--set takes RECON_NAME=VALUE")
    settings = tuple((name, value) for name, _, value in parts)
    opts = Options(
        books=not args.skip_books,
        commands=not args.skip_commands,
        sandbox_cache=args.sandbox_cache,
        min_free_gb=args.min_free_gb,
        min_available_gb=args.min_available_gb,
        settings=settings,
    )
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        results = run(args.payments, root=args.keep.resolve(), opts=opts)
    else:
        with tempfile.TemporaryDirectory(prefix="recon-volume-") as tmp:
            results = run(args.payments, root=Path(tmp), opts=opts)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / args.out
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{'step':<44} {'exit':>4} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}  target")
    for s in results["steps"]:
        target = (
            NIGHT_TARGET_MB
            if s["step"].startswith("night") and ":" not in s["step"]
            else (COMMAND_TARGET_MB)
        )
        ok = "ok" if s["exit"] in (0, 3) and s["peak_rss_mb"] <= target else "MISSED"
        print(
            f"{s['step']:<44} {s['exit']:>4} {s['wall_s']:>8} {s['cpu_s']:>8} "
            f"{s['peak_rss_mb']:>8}  {target} MB {ok}"
        )
    for s in results["steps"]:
        if not s.get("by_step"):
            continue
        print(f"\n{s['step']}, per step (CPU: the night's process / with Prefect's server)")
        print(f"{'step':<52} {'wall s':>8} {'CPU s':>13} {'peak MB':>8} {'sandbox CPU':>11}")
        for b in s["by_step"]:
            cpu = f"{b['cpu_s']} / {b['tree_cpu_s']}"
            print(
                f"{b['step']:<52} {b['wall_s']:>8} {cpu:>13} {b['peak_rss_mb']:>8} "
                f"{b['sandbox_cpu_s']:>11}"
            )
        if s.get("guard"):
            print(s["guard"])
    print(f"(written to {out}; the machine may be shared: wall times are an upper bound)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
