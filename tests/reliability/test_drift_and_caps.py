"""Drift and caps: records inserted and deleted while paging (payments and refunds), and a
server that caps every list at 100 records when 200 are asked for.

Pass: every record present for the whole scan (`/_sandbox/present`) lands, and every landed
record lands exactly once — counted in the landing files themselves, not only in the keyed
tables; the capped lists without drift land exactly the truth's counts. Drift alone is also in
tests/nightly/test_nightly_steps.py; the client-level property test is
tests/api/test_pagination.py::test_property_every_record_present_throughout_is_returned_exactly_once.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from recon import nightly as steps

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
