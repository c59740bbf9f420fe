"""Concurrent reader: an analyst process holds the published DuckDB open (read-only) for a
whole run. Pass: the run succeeds, and every query the analyst makes during the run returns
what it returned before the run started (the snapshot it opened); a new connection after the
run sees the new night. The unit-level version is tests/warehouse/test_publish.py
(`test_a_reader_holding_the_file_neither_blocks_nor_sees_the_run`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for, read_only, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ANALYST = r"""
import json, sys, time, pathlib
import duckdb
db, stop = sys.argv[1], pathlib.Path(sys.argv[2])
con = duckdb.connect(db, read_only=True)
QUERY = '''SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM payments),
                  (SELECT sum(amount_minor)::VARCHAR FROM payments),
                  (SELECT count(*) FROM findings), (SELECT max(run_id) FROM runs)'''
n = 0
while not stop.exists():
    print(json.dumps(con.execute(QUERY).fetchone()), flush=True)
    n += 1
    time.sleep(0.05)
print(json.dumps(con.execute(QUERY).fetchone()), flush=True)
con.close()
"""


def test_concurrent_reader_keeps_its_snapshot_during_a_whole_run(tmp_path: Path) -> None:
    overrides = None
    with sandbox(seed=8, payments=2000) as url:
        overrides = overrides_for(tmp_path, url)
        first = steps.run_local(overrides)
    assert first.status == "complete"

    stop = tmp_path / "stop"
    analyst = subprocess.Popen(
        [sys.executable, "-c", ANALYST, str(first.db_path), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert analyst.stdout is not None
        opened = analyst.stdout.readline()  # the analyst is connected and has read once
        assert opened, analyst.stderr.read() if analyst.stderr else ""
        with sandbox(seed=8, payments=2600, faults="drift") as url:  # a different night
            overrides = overrides_for(tmp_path, url)
            second = steps.run_local(overrides)
        time.sleep(0.2)
    finally:
        stop.touch()
        out, err = analyst.communicate(timeout=60)
    assert (second.status, second.exit_code) == ("complete", steps.EXIT_COMPLETE)
    assert analyst.returncode == 0, err
    seen = [json.loads(line) for line in [opened, *out.splitlines()] if line.strip()]
    assert len(seen) >= 5
    assert all(s == seen[0] for s in seen), sorted({json.dumps(s) for s in seen})
    assert seen[0][0] == 1  # the first night only, all along

    con = read_only(second.db_path)
    now = con.execute("SELECT count(*), max(run_id) FROM runs").fetchone()
    assert now == (2, second.run_id)  # a new connection sees the new night
    print(f"concurrent reader: {len(seen)} identical reads during the run")
