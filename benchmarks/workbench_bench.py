"""The workbench's queue at a million findings: the first page of `GET /api/v1/findings`
from `recon serve` (a real process on 127.0.0.1), filtered and not, and a page far in.

A warehouse is built directly in DuckDB: two runs, `--findings` unresolved findings in the
latest run over twelve checks and five currencies, and an audit trail of `--worked` work
events (assign/resolve/ack) so the queue's join with the trail is measured too.

    python -m benchmarks.workbench_bench [--findings 1000000] [--worked 10000] [--repeat 7]

prints one JSON line: build_s; the first request (`cold_ms`) and first pages read from the
published warehouse while the queue snapshot builds; then, once the snapshot is ready, per
request (the queue's pages, filtered by a root cause among them, and its headings per check
and root cause, `GET /api/v1/groups`) its median and worst wall time in ms.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import httpx

from recon.findings.acks import AckLog, Amounts, NewEvent, acks_path
from recon.warehouse.migrations import apply_migrations

CHECKS = (
    ("open_invoices", "info"),
    ("stuck_non_final", "warn"),
    ("ledger_amount_mismatch", "error"),
    ("ledger_order_missing_at_provider", "error"),
    ("ledger_payment_missing_from_books", "error"),
    ("duplicate_payment_reference", "warn"),
    ("refunded_amount_mismatch", "error"),
    ("over_refunded", "error"),
    ("impossible_amounts", "error"),
    ("unknown_status", "warn"),
    ("refund_unknown_payment", "error"),
    ("vanished_records", "warn"),
)
PASSWORD = "benchmark password"


def build(db: Path, findings: int, worked: int) -> None:
    now = datetime.now(UTC)
    r0, r1 = "20261101T020000Z-000000", "20261129T020000Z-000001"
    con = duckdb.connect(str(db))
    apply_migrations(con)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES "
        "(?, ?, 'complete', ?), (?, ?, 'complete', ?)",
        [r0, now - timedelta(days=28), now, r1, now, now],
    )
    checks = [c for c, _ in CHECKS]
    severities = [s for _, s in CHECKS]
    con.execute(
        "INSERT INTO findings BY NAME "
        "SELECT $run AS run_id, $checks[i % 12 + 1] AS check_name, "
        "$sev[i % 12 + 1] AS severity, "
        "$checks[i % 12 + 1] || ':id_' || i || ':issue' AS finding_key, "
        "CASE WHEN i % 5 = 0 THEN 'new' ELSE 'open' END AS state, 'payment' AS entity, "
        "'id_' || i AS entity_id, ['EUR','USD','GBP','JPY','BHD'][i % 5 + 1] AS currency, "
        "(i * 7919) % 1000000 AS amount_minor, 'issue' AS issue_type, "
        "'detail of ' || i AS detail, "
        "CASE WHEN i % 5 = 0 THEN $run ELSE $first END AS first_seen_run, "
        "$now - to_days(CAST(i % 90 AS INTEGER)) AS item_at "
        "FROM range($n) t(i)",
        {"run": r1, "first": r0, "checks": checks, "sev": severities, "n": findings, "now": now},
    )
    rows = con.execute(
        "SELECT finding_key, currency, amount_minor FROM findings WHERE hash(finding_key) % ? = 0 "
        "LIMIT ?",
        [max(1, findings // max(worked, 1)), worked],
    ).fetchall()
    con.close()
    events = [
        NewEvent(
            ("assign", "resolve", "ack")[n % 3],
            key,
            Amounts(cur, amount, None),
            note="bench",
            owner="alice" if n % 3 == 0 else None,
            reason="timing" if n % 3 == 1 else None,
        )
        for n, (key, cur, amount) in enumerate(rows)
    ]
    AckLog(acks_path(db)).append_events(events, who="bench")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--findings", type=int, default=1_000_000)
    parser.add_argument("--worked", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    recon = Path(sys.executable).with_name("recon")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "recon.duckdb"
        t0 = time.perf_counter()
        build(db, args.findings, args.worked)
        build_s = time.perf_counter() - t0
        subprocess.run(
            [
                str(recon),
                "users",
                "add",
                "alice",
                "--role",
                "preparer",
                "--password-stdin",
                "--db",
                str(db),
            ],
            input=PASSWORD,
            text=True,
            check=True,
            capture_output=True,
        )
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        with subprocess.Popen(
            [str(recon), "serve", "--port", str(port), "--db", str(db)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ) as server:
            try:
                url = f"http://127.0.0.1:{port}"
                for _ in range(300):
                    try:
                        httpx.get(url + "/login", timeout=1)
                        break
                    except httpx.TransportError:
                        time.sleep(0.2)
                with httpx.Client(base_url=url, timeout=120) as client:
                    client.post("/api/v1/session", json={"user": "alice", "password": PASSWORD})
                    cases = {
                        "first_page": {"limit": "50"},
                        "first_page_filtered": {
                            "limit": "50",
                            "currency": "EUR",
                            "severity": "error",
                            "amount_min": "500000",
                        },
                        "owner_alice": {"limit": "50", "owner": "alice"},
                        "overdue": {"limit": "50", "overdue": "true"},
                        "root_cause_amount_differs": {"limit": "50", "cause": "amount_differs"},
                    }
                    t = time.perf_counter()
                    first = client.get("/api/v1/findings", params={"limit": "50"})
                    if first.status_code != 200:
                        raise SystemExit(f"recon serve answered {first.status_code}: {first.text}")
                    cold_ms = (time.perf_counter() - t) * 1000
                    # without the snapshot (still building): the published warehouse read
                    direct = []
                    snapshot = db.with_name("recon.workbench.duckdb")
                    while not snapshot.exists() and len(direct) < args.repeat:
                        t = time.perf_counter()
                        client.get("/api/v1/findings", params={"limit": "50"}).raise_for_status()
                        direct.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    while not snapshot.exists():
                        time.sleep(0.1)
                    snapshot_wait_s = time.perf_counter() - t
                    # a page far in: follow 20 cursors
                    params: dict[str, str] = {"limit": "500"}
                    for _ in range(20):
                        params["cursor"] = client.get("/api/v1/findings", params=params).json()[
                            "next"
                        ]
                    cases["page_after_10000"] = {"limit": "50", "cursor": params["cursor"]}
                    out: dict[str, object] = {
                        "findings": args.findings,
                        "worked": args.worked,
                        "build_s": round(build_s, 1),
                        "cold_ms": round(cold_ms),
                        "first_page_without_snapshot_ms": sorted(round(x) for x in direct),
                        "snapshot_ready_after_s": round(snapshot_wait_s, 1),
                    }
                    for name, query in cases.items():
                        times = []
                        for _ in range(args.repeat):
                            t = time.perf_counter()
                            answer = client.get("/api/v1/findings", params=query)
                            answer.raise_for_status()
                            times.append((time.perf_counter() - t) * 1000)
                        out[name] = {
                            "median_ms": round(statistics.median(times)),
                            "max_ms": round(max(times)),
                            "items": len(answer.json()["items"]),
                        }
                    times = []
                    for _ in range(args.repeat):  # the headings: per check and root cause
                        t = time.perf_counter()
                        client.get("/api/v1/groups").raise_for_status()
                        times.append((time.perf_counter() - t) * 1000)
                    out["groups"] = {
                        "median_ms": round(statistics.median(times)),
                        "max_ms": round(max(times)),
                    }
            finally:
                server.terminate()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
