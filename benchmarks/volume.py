"""Real volume (issue 38): nights that look like production, and every analyst command on them.

    python -m benchmarks.volume                        # 1M payments, then 1M books x 1M payments
    python -m benchmarks.volume --payments 100000      # a smaller rehearsal
    python -m benchmarks.volume --skip-books           # the first night only

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

Figures go to benchmarks/results/volume.json and are printed as a table. The machine is
shared (2 cores): read wall times as an upper bound; the RSS figures do not depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import API_KEY, RECON, RESULTS, run_measured, sandbox_process

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


def run(payments: int, *, books: bool, root: Path) -> dict[str, Any]:
    db, landing, reports = root / "recon.duckdb", root / "landing", root / "reports"
    results: dict[str, Any] = {"payments": payments, "anomaly_rate": ANOMALY_RATE, "steps": []}
    options = ["--anomaly-rate", str(ANOMALY_RATE), "--cache-records", "0"]
    with sandbox_process(payments, unbounded=False, options=options) as (url, _started):
        env = _env(db, landing, reports, RECON_BASE_URL=url)
        night = _measure("night 1 (provider only)", [RECON, "nightly"], env, root)
        night["findings"] = _findings(db)
        results["steps"].append(night)
        for name, argv in _commands(db, reports, root):
            results["steps"].append(_measure(f"night 1: {name}", argv, env, root))
        if books:
            orders = root / "orders.csv"
            started = time.perf_counter()
            rows = _write_books(db, orders)
            results["books_rows"] = rows
            results["books_bytes"] = orders.stat().st_size
            results["books_written_s"] = round(time.perf_counter() - started, 1)
            env = {**env, "RECON_LEDGER_ORDERS": str(orders)}
            night = _measure("night 2 (books x provider)", [RECON, "nightly"], env, root)
            night["findings"] = _findings(db)
            results["steps"].append(night)
            for name, argv in _commands(db, reports, root):
                results["steps"].append(_measure(f"night 2: {name}", argv, env, root))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--skip-books", action="store_true")
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        results = run(args.payments, books=not args.skip_books, root=args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="recon-volume-") as tmp:
            results = run(args.payments, books=not args.skip_books, root=Path(tmp))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "volume.json"
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
    print(f"(written to {out}; the machine may be shared: wall times are an upper bound)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
