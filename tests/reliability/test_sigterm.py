"""SIGTERM and SIGINT stop a night within seconds, its landed pages kept for `--resume` (issue
25, point 6; issue 37, point 3): the process was left alive 67 s, paging on, until SIGKILL; a
Ctrl-C took 84-97 s and printed 458 lines of Prefect crash reports and ConnectErrors, exit 1.
Now: exit 130 (SIGINT) / 143 (SIGTERM), one line naming `recon nightly --resume RUN_ID`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import KEY, TOKEN, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("prefect")]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("hostile_server", [{"count": 10000, "delay_s": 0.1}], indirect=True)
def test_a_signal_stops_the_night_within_seconds_and_resume_finishes_it(
    hostile_server: Hostile, tmp_path: Path, signum: signal.Signals
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_"))}
    env.update(
        RECON_API_KEY=KEY,
        RECON_BEARER_TOKEN=TOKEN,
        RECON_CONCURRENCY="1",
        RECON_PAGE_SIZE="100",
        RECON_LANDING_BATCH_RECORDS="2000",  # the smallest batch: 20 pages
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90",
    )
    argv = [sys.executable, "-m", "recon", "nightly", "--base-url", hostile_server.url]
    proc = subprocess.Popen(  # a session of its own: the signal goes to its process group,
        argv,  # as a terminal's Ctrl-C or a service manager's stop does
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("data/landing/*/payments/batch-*.parquet"))) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no batch landed in time"
        time.sleep(0.05)
    sent = time.monotonic()
    os.killpg(proc.pid, signum)
    try:
        _out, err = proc.communicate(timeout=20)  # a bound, not a timing: it was 67 s + KILL
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"recon nightly still running 20 s after {signum.name}")
    print(f"{signum.name}: exit {proc.returncode} {time.monotonic() - sent:.2f} s after the signal")
    assert proc.returncode == 128 + signum  # 130 for SIGINT, 143 for SIGTERM
    assert "Traceback" not in err, err[-3000:]
    assert "Crash detected" not in err, err[-3000:]
    assert "ConnectError" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("recon: stopped"), err[-3000:]
    run_id = last.rsplit("--resume ", 1)[1].rstrip("`")
    assert (tmp_path / "data" / "landing" / run_id).is_dir()  # the line names the landed run
    requests_at_stop = hostile_server.payments_requests()
    assert requests_at_stop < 100  # it did not page on to the end

    resumed = subprocess.run(
        [*argv, "--resume", run_id],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    con = read_only(tmp_path / "data" / "recon.duckdb")
    try:
        assert con.execute("SELECT count(*) FROM payments").fetchone() == (10000,)
    finally:
        con.close()
