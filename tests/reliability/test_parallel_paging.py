"""Parallel paging against a real server (issue 10) and narrowed failures (issue 13).

The sandbox on 127.0.0.1 with latency, so that several windows of a list are in flight at
once (`RECON_CONCURRENCY=auto`, the default): a cap that changes mid-scan, records deleted
between two windows in flight, a kill -9 with windows in flight then a resume, and one
dispute the server cannot send (every request whose window holds it answers 500).

Pass: every record present for the whole run lands exactly once; with the poisoned dispute
exactly that one record is lost, the run is incomplete, and the failed page recorded names
its offset, its neighbours and every request id.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from recon.night import nightly as steps

from .conftest import KEY, TABLES, overrides_for, read_only, sandbox, truth_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _landed(db: Path) -> dict[str, list[str]]:
    con = read_only(db)
    try:
        return {t: [r[0] for r in con.execute(f"SELECT id FROM {t}").fetchall()] for t in TABLES}
    finally:
        con.close()


def _exactly_once(db: Path, truth: dict[str, object]) -> None:
    counts = truth["counts"]
    assert isinstance(counts, dict)
    for table, ids in _landed(db).items():
        assert len(ids) == len(set(ids)), f"{table}: landed twice"
        assert len(ids) == counts[table], table


def test_a_poisoned_dispute_loses_exactly_that_record(tmp_path: Path) -> None:
    with sandbox(seed=8, payments=3000) as url:  # the same data, no fault: which id is 17
        bad = httpx.get(
            f"{url}/api/v1/disputes",
            params={"skip": 17, "max-records": 1},
            headers={"x-api-key": KEY},
        ).json()["data"][0]["id"]
    with sandbox(seed=8, payments=3000, poison=("disputes:17",), latency_ms=2) as url:
        overrides = overrides_for(tmp_path, url)
        summary = steps.run_local(overrides)
        truth = truth_of(url)
    assert (summary.status, summary.exit_code) == ("incomplete", steps.EXIT_INCOMPLETE)
    landed = _landed(summary.db_path)
    assert bad not in landed["disputes"]
    assert (
        len(landed["disputes"]) == len(set(landed["disputes"])) == truth["counts"]["disputes"] - 1
    )
    for table in TABLES:
        if table != "disputes":
            assert len(landed[table]) == truth["counts"][table], table
    state = json.loads(
        (Path(overrides["landing"]) / summary.run_id / "disputes" / "state.json").read_text()
    )
    (failed,) = state["failed_pages"]
    assert (failed["offset"], failed["limit"]) == (17, 1)
    assert failed["before_id"]
    assert failed["after_id"]
    assert failed["http_status"] == 500
    con = read_only(summary.db_path)
    rids = {
        r[0]
        for r in con.execute(
            "SELECT request_id FROM api_calls WHERE run_id = ? AND resource = 'disputes' "
            "AND http_status = 500",
            [summary.run_id],
        ).fetchall()
    }
    assert set(failed["request_ids"]) <= rids
    assert len(failed["request_ids"]) >= 2
    narrowing = con.execute(
        "SELECT count(DISTINCT call_id) FROM api_calls WHERE run_id = ? "
        "AND resource = 'disputes' AND query NOT LIKE '%max-records=200%'",
        [summary.run_id],
    ).fetchone()
    assert narrowing is not None
    assert 1 <= narrowing[0] <= 16  # about log2(200) extra requests, never a page each
    print(f"poisoned dispute: 1 record lost, {narrowing[0]} extra requests to narrow it")


def test_a_cap_that_changes_mid_run_loses_nothing(tmp_path: Path) -> None:
    with sandbox(seed=9, payments=6000, cap_after=6, cap_to=100, latency_ms=3) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
        truth = truth_of(url)
    assert (summary.status, summary.exit_code) == ("complete", steps.EXIT_COMPLETE)
    _exactly_once(summary.db_path, truth)


def test_records_deleted_between_two_windows_in_flight(tmp_path: Path) -> None:
    shifts = (
        "payments:after=3,delete=7,before=600,insert=2",
        "refunds:after=2,delete=4,before=300",
    )
    with sandbox(seed=10, payments=6000, shifts=shifts, latency_ms=5) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
        present = {
            r: set(httpx.get(f"{url}/_sandbox/present", params={"resource": r}).json()["ids"])
            for r in ("payments", "refunds")
        }
    assert (summary.status, summary.exit_code) == ("complete", steps.EXIT_COMPLETE)
    landed = _landed(summary.db_path)
    for table in ("payments", "refunds"):
        ids = landed[table]
        assert len(ids) == len(set(ids)), table
        lost = present[table] - set(ids)
        assert not lost, f"{table}: {len(lost)} records present throughout lost"


def test_kill_9_with_windows_in_flight_then_resume(tmp_path: Path) -> None:
    from tests.night.test_resume import _kill, _start

    with sandbox(seed=11, payments=12_000, latency_ms=10) as url:
        clean = steps.run_local(overrides_for(tmp_path / "clean", url))
        truth = truth_of(url)
        run = overrides_for(tmp_path / "killed", url)
        proc = _start(run)
        landing = Path(run["landing"])
        deadline = time.monotonic() + 120
        while len(list(landing.glob("*/*/batch-*.parquet"))) < 3:
            assert time.monotonic() < deadline, "no batch landed"
            assert proc.poll() is None, "the run ended before it was killed"
            time.sleep(0.005)
        _kill(proc)
        resumed = _start(run, resume="latest")
        _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err[-2000:]
    assert clean.status == "complete"
    _exactly_once(Path(run["db"]), truth)
