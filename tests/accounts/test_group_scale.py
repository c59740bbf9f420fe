"""The group night killed and resumed, and spread over a local two-worker Dask cluster."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from recon.accounts.night import run_group_local
from recon.warehouse.nightlock import lock_path

from .conftest import account_sandbox, entry, key_of, set_keys, token_of, write_toml

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PAYMENTS = {"eu": 3000, "us": 2000, "uk": 1000}


def _payments(tmp_path: Path, name: str) -> int:
    con = duckdb.connect(
        str(tmp_path / "data" / "accounts" / name / "recon.duckdb"), read_only=True
    )
    try:
        row = con.execute("SELECT count(*) FROM payments").fetchone()
    finally:
        con.close()
    return int(row[0]) if row else -1


def _freed(lock: Path) -> bool:
    """Whether the night lock `lock` is free (or becomes so within a few seconds)."""
    deadline = time.monotonic() + 10
    while True:
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
        finally:
            os.close(fd)
        time.sleep(0.05)


def test_a_killed_night_resumes_every_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, *PAYMENTS)
    monkeypatch.setenv("RECON_LANDING_BATCH_RECORDS", "200")
    with (
        account_sandbox("eu", seed=1, payments=PAYMENTS["eu"], latency_ms=15) as eu,
        account_sandbox("us", seed=2, payments=PAYMENTS["us"], latency_ms=15) as us,
        account_sandbox("uk", seed=3, payments=PAYMENTS["uk"], latency_ms=15) as uk,
    ):
        write_toml(
            tmp_path / "recon.toml",
            {
                "eu": entry("eu", eu, concurrency=1),
                "us": entry("us", us, concurrency=1),
                "uk": entry("uk", uk, concurrency=1),
            },
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from recon.accounts.night import run_group_local; run_group_local({})",
            ],
            cwd=tmp_path,
            env=dict(os.environ),
        )
        landing = tmp_path / "data" / "landing"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # every account has landed something
            if all(list((landing / n).glob("*/payments/batch-*.parquet")) for n in PAYMENTS):
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        for name in PAYMENTS:  # its accounts' processes ended with it: every lock is free
            assert _freed(lock_path(tmp_path / "data" / "accounts" / name / "recon.duckdb"))
        landed = {n: sorted(p.name for p in (landing / n).iterdir()) for n in PAYMENTS}
        assert all(len(runs) == 1 for runs in landed.values()), landed
        summary = run_group_local({}, resume=True)
    by = {o.account: o for o in summary.outcomes}
    for name, count in PAYMENTS.items():
        assert by[name].status == "complete", by[name]
        assert by[name].run_id == landed[name][0]  # the killed run, finished
        assert _payments(tmp_path, name) == count


@pytest.mark.xdist_group("prefect")  # a Prefect server and a cluster: one at a time
def test_accounts_spread_over_a_local_dask_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        account_sandbox("eu", seed=4, payments=800) as eu,
        account_sandbox("us", seed=5, payments=500) as us,
    ):
        write_toml(tmp_path / "recon.toml", {"eu": entry("eu", eu), "us": entry("us", us)})
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_API"))}
        env["PREFECT_HOME"] = str(tmp_path / "prefect")
        for name in ("eu", "us"):
            env[f"RECON_{name.upper()}_API_KEY"] = key_of(name)
            env[f"RECON_{name.upper()}_BEARER_TOKEN"] = token_of(name)
        proc = subprocess.Popen(
            [sys.executable, "-m", "recon", "nightly", "--task-runner", "dask"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    assert "account eu: complete" in stdout
    assert "account us: complete" in stdout
    assert _payments(tmp_path, "eu") == 800
    assert _payments(tmp_path, "us") == 500
    # Each account ran in a worker process, not in the process that started the night.
    pids = {
        name: {
            int(p.stem.split("-")[2])
            for p in (tmp_path / "data" / "landing" / name).rglob("calls-*.parquet")
        }
        for name in ("eu", "us")
    }
    assert all(pids.values())
    assert proc.pid not in pids["eu"] | pids["us"]
    assert (tmp_path / "reports" / "group.html").exists()
    for secret in (key_of("eu"), key_of("us")):
        assert secret not in stdout + stderr
    # Prefect stores parameters, logs and artifacts: no key may be there.
    import sqlite3

    artifacts: set[str] = set()
    for db in (tmp_path / "prefect").rglob("*.db"):
        con = sqlite3.connect(db)
        try:
            tables = [
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                for row in con.execute(f'SELECT * FROM "{table}"'):
                    assert key_of("eu") not in repr(row), table
                    assert key_of("us") not in repr(row), table
                    artifacts |= {k for k in ("recon-summary-eu", "recon-group") if k in repr(row)}
        finally:
            con.close()
    assert artifacts == {"recon-summary-eu", "recon-group"}  # per account, and the night's
