"""Scale-out: extraction tasks on a two-worker Dask LocalCluster on loopback, one loader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("prefect")]


def test_nightly_on_a_local_dask_cluster(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_API"))}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recon",
            "nightly",
            "--sandbox",
            "--sandbox-payments",
            "2000",
            "--sandbox-faults",
            "none",
            "--sandbox-seed",
            "17",
            "--task-runner",
            "dask",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    assert "Prefect server" in stderr  # it says which server the workers report to
    con = duckdb.connect(str(tmp_path / "data" / "recon.duckdb"), read_only=True)
    scans = dict(con.execute("SELECT resource, status FROM resource_scans").fetchall())
    assert set(scans.values()) == {"complete"}
    assert con.execute("SELECT count(*) FROM payments").fetchone() == (2000,)
    # The resources were extracted in the workers, not in the process that loaded them.
    landing = tmp_path / "data" / "landing"
    pids = {int(p.stem.split("-")[2]) for p in landing.rglob("calls-*.parquet")}
    assert pids
    assert proc.pid not in pids
