"""Two nightlies on one warehouse (issue 25, point 1): the second is refused before it
touches the warehouse, the landing or Prefect's database; the first finishes as if alone.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.warehouse.nightlock import lock_path

from .conftest import KEY, TOKEN, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration]


def test_a_second_night_is_refused_before_touching_anything(
    hostile_server: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "data" / "recon.duckdb"
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    db.parent.mkdir(parents=True)
    # another process's night: a lock taken through another open file, as a process would
    with open(lock_path(db), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("424242")
        held.flush()
        result = CliRunner().invoke(
            app, ["nightly", "--base-url", hostile_server.url, "--db", str(db)]
        )
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith("recon: aborted: another recon run (pid 424242)")
    assert hostile_server.requests == []  # not one request
    assert sorted(p.name for p in db.parent.iterdir()) == [lock_path(db).name]
    assert not (tmp_path / "prefect-home").exists()
    assert not (tmp_path / "data" / "landing").exists()


@pytest.mark.slow
@pytest.mark.xdist_group("prefect")
@pytest.mark.parametrize("hostile_server", [{"delay_s": 0.5}], indirect=True)
def test_two_real_nightlies_the_first_finishes_as_if_alone(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_"))}
    env.update(
        RECON_API_KEY=KEY,
        RECON_BEARER_TOKEN=TOKEN,
        RECON_CONCURRENCY="1",
        RECON_PAGE_SIZE="50",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90",
    )
    argv = [sys.executable, "-m", "recon", "nightly", "--base-url", hostile_server.url]
    first = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while hostile_server.payments_requests() < 2:  # the first is paging payments
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never paged"
        time.sleep(0.05)
    second = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert second.returncode == 1
    assert second.stderr.strip().startswith("recon: aborted: another recon run (pid ")
    assert len(second.stderr.strip().splitlines()) == 1
    _out, errors = first.communicate(timeout=300)
    assert first.returncode == 0, errors[-3000:]
    con = read_only(tmp_path / "data" / "recon.duckdb")
    try:
        assert con.execute("SELECT count(*) FROM payments").fetchone() == (450,)
    finally:
        con.close()
