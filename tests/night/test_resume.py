"""A run killed with SIGKILL at any point resumes to the same warehouse as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.catalogue.resources import nightly_resources
from recon.night import nightly as steps

from .conftest import KEY, TOKEN, night_env, overrides_for, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RUNNER = """
import json, sys
from recon.night.nightly import run_local
summary = run_local(json.loads(sys.argv[1]), resume=sys.argv[2] or None)
print(summary.run_id, summary.status, flush=True)
"""

TABLES = tuple(r.table for r in nightly_resources())  # the catalogue's


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(
        RECON_API_KEY=KEY,
        RECON_BEARER_TOKEN=TOKEN,
        RECON_LANDING_BATCH_RECORDS="1000",
        RECON_CONCURRENCY="1",
    )
    return env


def _start(overrides: dict[str, Any], resume: str = "") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps(overrides), resume],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _content(db: Path) -> dict[str, Any]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[str, Any] = {
            t: con.execute(
                f"SELECT id, content_hash, gone_in_run IS NULL FROM {t} ORDER BY id"
            ).fetchall()
            for t in TABLES
        }
        out["findings"] = sorted(
            con.execute("SELECT check_name, entity_id, issue_type, state FROM findings").fetchall()
        )
        out["check_runs"] = sorted(
            con.execute("SELECT check_name, status, finding_count FROM check_runs").fetchall()
        )
        out["scans"] = sorted(
            con.execute(
                "SELECT resource, status, records, duplicates FROM resource_scans"
            ).fetchall()
        )
        out["runs"] = con.execute("SELECT count(*), min(status) FROM runs").fetchall()
        return out
    finally:
        con.close()


def _kill(proc: subprocess.Popen[str]) -> str:
    """SIGKILL `proc`, reap it, close its pipes; returns what it wrote to stderr."""
    proc.send_signal(signal.SIGKILL)
    _out, err = proc.communicate(timeout=30)
    return err or ""


def _wait_for(predicate: Any, proc: subprocess.Popen[str], timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    return False


SEED, PAYMENTS = 21, 12_000


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The warehouse of an uninterrupted run over the sandbox every kill below runs against:
    made once for the module (per test process), not once per kill point."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    with night_env(folder), sandbox(seed=SEED, payments=PAYMENTS) as url:
        reference = overrides_for(folder, url)
        assert steps.run_local(reference).status == "complete"
    return _content(Path(reference["db"]))


@pytest.mark.parametrize("kill_at", ["first-batch", "mid-extract", "load"])
def test_kill_then_resume_equals_an_uninterrupted_run(
    tmp_path: Path, kill_at: str, uninterrupted: dict[str, Any]
) -> None:
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        killed = overrides_for(tmp_path / "killed", url)
        landing = Path(killed["landing"])
        work = Path(killed["db"]).with_name(".recon.duckdb.work")

        def batches() -> int:
            return len(list(landing.glob("*/*/batch-*.parquet")))

        def extracted() -> bool:  # every list ended (the working copy is open since its start)
            states = list(landing.glob("*/*/state.json"))
            try:
                done = [json.loads(p.read_bytes()).get("done") for p in states]
            except (OSError, ValueError):
                return False
            return len(done) == len(TABLES) and all(done) and work.exists()

        predicate = {
            "first-batch": lambda: batches() >= 1,
            "mid-extract": lambda: batches() >= 8,
            "load": extracted,
        }[kill_at]
        proc = _start(killed)
        reached = _wait_for(predicate, proc)
        stderr = _kill(proc)
        if not reached:
            pytest.fail(f"the run ended before reaching {kill_at}: {stderr}")
        if kill_at != "load":  # killed while extracting: nothing was published yet
            assert not Path(killed["db"]).exists()
        payments_landed = len(list(landing.glob("*/payments/batch-*.parquet")))
        if kill_at != "first-batch":
            assert payments_landed > 0
        resumed = _start(killed, resume="latest")
        out, err = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, err
        run_id, status = out.split()
        assert status == "complete"

    assert _content(Path(killed["db"])) == uninterrupted
    con = duckdb.connect(killed["db"], read_only=True)
    # Landed pages are not fetched again: the first payments page was asked for once.
    first_page = con.execute(
        "SELECT count(*) FROM api_calls WHERE run_id = ? AND resource = 'payments' "
        "AND outcome = 'ok' AND query LIKE '%skip=0%'",
        [run_id],
    ).fetchone()
    if payments_landed:
        assert first_page == (1,)
    assert not Path(f"{killed['db']}.wal").exists()
