"""Drift and caps: records inserted and deleted while paging (payments and refunds), and a
server that caps every list at 100 records when 200 are asked for.

Pass: every record present for the whole scan (`/_sandbox/present`) lands, and every landed
record lands exactly once — counted in the landing files themselves, not only in the keyed
tables; the capped lists without drift land exactly the truth's counts. Drift alone is also in
tests/night/test_nightly_steps.py; the client-level property test is
tests/api/test_pagination.py::test_property_every_record_present_throughout_is_returned_exactly_once.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from recon.night import nightly as steps

from .conftest import TABLES, overrides_for, read_only, sandbox, sandbox_state, truth_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DRIFTING = ("payments", "refunds")


@pytest.mark.parametrize("faults", ["capped", "drift,capped", "drift,capped,flaky"])
def test_drift_and_caps_land_every_stable_record_exactly_once(tmp_path: Path, faults: str) -> None:
    with sandbox(seed=19, payments=3000, faults=faults) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
        truth = truth_of(url)
        state = sandbox_state(url)
        present = {
            r: set(httpx.get(f"{url}/_sandbox/present", params={"resource": r}).json()["ids"])
            for r in DRIFTING
        }
    assert (summary.status, summary.exit_code) == ("complete", steps.EXIT_COMPLETE)
    landing = Path(overrides_for(tmp_path, "x")["landing"]) / summary.run_id
    con = read_only(summary.db_path)
    for table in TABLES:
        files = sorted(str(p) for p in (landing / table).glob("batch-*.parquet"))
        assert files, table
        total, distinct = con.execute(
            "SELECT count(*), count(DISTINCT id) FROM read_parquet(?)", [files]
        ).fetchone()  # type: ignore[misc]
        assert total == distinct, f"{table}: {total - distinct} records landed twice"
        ids = {r[0] for r in con.execute(f"SELECT id FROM {table}").fetchall()}
        if "drift" in faults and table in DRIFTING:
            log = state["drift"][table]
            assert log["inserted"]
            assert log["deleted"]  # the list really changed while it was paged
            lost = present[table] - ids
            assert not lost, f"{table}: {len(lost)} stable records lost"
        else:
            assert len(ids) == truth["counts"][table], table


@pytest.mark.parametrize("rounds", [1, pytest.param(3, marks=pytest.mark.scale)])
def test_drift_and_caps_killed_and_resumed_still_land_every_stable_record_once(
    tmp_path: Path, rounds: int
) -> None:
    """A run killed mid-extract while the lists drift, then resumed: the resumed scans
    start from the landed state while records keep moving, and still lose none (one round
    in `make test`, three at other kill points in `make test-scale`)."""
    import random
    import time

    from tests.night.test_resume import _kill, _start

    rng = random.Random(11)
    with sandbox(seed=29, payments=6000, faults="drift,capped") as url:
        for i in range(rounds):
            run = overrides_for(tmp_path / f"r{i}", url)
            landing = Path(run["landing"])
            proc = _start(run)
            deadline = time.monotonic() + 60
            target = rng.randint(2, 12)
            while len(list(landing.glob("*/*/batch-*.parquet"))) < target:
                assert time.monotonic() < deadline
                if proc.poll() is not None:
                    break
                time.sleep(0.005)
            _kill(proc)
            resumed = _start(run, resume="latest")
            _out, err = resumed.communicate(timeout=300)
            assert resumed.returncode == 0, err[-2000:]
            present = {
                r: set(httpx.get(f"{url}/_sandbox/present", params={"resource": r}).json()["ids"])
                for r in DRIFTING
            }
            con = read_only(run["db"])
            for table in DRIFTING:
                ids = [r[0] for r in con.execute(f"SELECT id FROM {table}").fetchall()]
                assert len(ids) == len(set(ids)), table
                lost = present[table] - set(ids)
                assert not lost, f"run {i}, {table}: {len(lost)} stable records lost"
            con.close()


def test_drift_and_caps_a_server_ignoring_skip_fails_instead_of_looping(tmp_path: Path) -> None:
    """A misconfigured RECON_SKIP_PARAM (the API ignores unknown parameters, as the sandbox
    does) means every request returns the first page again. The run must end — incomplete,
    saying why — instead of paging the same records forever."""
    import json
    import os
    import subprocess
    import sys

    runner = (
        "import json, sys\n"
        "from recon.night.nightly import run_local\n"
        "s = run_local(json.loads(sys.argv[1]))\n"
        "print(s.status, s.exit_code, flush=True)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(
        RECON_API_KEY="nightly-test-key",
        RECON_BEARER_TOKEN="nightly-test-token",
        RECON_SKIP_PARAM="offset",
    )
    with sandbox(seed=3, payments=1000) as url:
        overrides = overrides_for(tmp_path, url)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", runner, json.dumps(overrides)],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            requests = sandbox_state(url)["requests"]
            pytest.fail(f"the run was still paging after 60 s ({requests:,} requests)")
        requests = sandbox_state(url)["requests"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["incomplete", "3"]  # status, exit code
    assert requests < 200
    con = read_only(overrides["db"])
    reasons = dict(
        con.execute(
            "SELECT resource, reason FROM resource_scans WHERE status <> 'complete'"
        ).fetchall()
    )
    assert {"refunds", "invoices", "payment_intents"} <= set(reasons), reasons
