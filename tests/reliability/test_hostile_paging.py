"""Hostile paging (issue 25, points 2, 6, 7): a `nextOffset` that jumps forward, a list that
grows as fast as it is read, empty pages that say there is more. Never `complete` with
records missing; never paged without bound.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration]


def _payments(db: Path) -> int:
    con = read_only(db)
    try:
        return int(con.execute("SELECT count(*) FROM payments").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


@pytest.mark.parametrize("hostile_server", [{"mode": "jump", "jump_at": 199}], indirect=True)
def test_next_offset_jumping_forward_loses_nothing(hostile_server: Hostile, tmp_path: Path) -> None:
    overrides = overrides_for(tmp_path, hostile_server.url)
    summary = steps.run_local(overrides)
    assert _payments(tmp_path / "data" / "recon.duckdb") == 450
    assert summary.status == "complete"
    assert not any("skip=1000000000000" in q for _, q in hostile_server.requests)


@pytest.mark.parametrize("hostile_server", [{"mode": "huge", "huge_mb": 40}], indirect=True)
def test_a_body_over_the_cap_is_read_no_further_and_fails_the_page(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    assert summary.status == "incomplete"
    assert summary.exit_code == 3
    con = read_only(tmp_path / "data" / "recon.duckdb")
    try:
        calls = con.execute(
            "SELECT request_id, message FROM api_calls WHERE path LIKE '%/payments' "
            "AND message LIKE '%RECON_MAX_BODY_MB%'"
        ).fetchall()
    finally:
        con.close()
    assert calls
    assert all(rid and rid.startswith("req_hostile_") for rid, _ in calls)
    # bounded: the narrowing budget and three failed pages in a row, never hundreds of reads
    assert hostile_server.huge_served <= 3 * (32 + 1)


@pytest.mark.parametrize("hostile_server", [{"mode": "empty_more"}], indirect=True)
def test_empty_pages_that_say_there_is_more_end_the_list_incomplete_soon(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    assert summary.status == "incomplete"
    assert summary.exit_code == 3
    assert hostile_server.payments_requests() <= 10  # was 626 for a 450-record list
    con = read_only(tmp_path / "data" / "recon.duckdb")
    try:
        (reason,) = con.execute(
            "SELECT reason FROM resource_scans WHERE resource = 'payments'"
        ).fetchone()  # type: ignore[misc]
    finally:
        con.close()
    assert "empty" in reason


@pytest.mark.parametrize("hostile_server", [{"mode": "endless"}], indirect=True)
def test_an_endless_list_ends_incomplete_at_the_bound(
    hostile_server: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_MAX_PAGES_PER_LIST", "40")
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    assert summary.status == "incomplete"
    assert summary.exit_code == 3
    assert hostile_server.payments_requests() <= 40 + 16  # the bound, and pages fetched ahead
    con = read_only(tmp_path / "data" / "recon.duckdb")
    try:
        (reason,) = con.execute(
            "SELECT reason FROM resource_scans WHERE resource = 'payments'"
        ).fetchone()  # type: ignore[misc]
        (landed,) = con.execute("SELECT count(*) FROM payments").fetchone()  # type: ignore[misc]
    finally:
        con.close()
    assert "grows as fast as it is read" in reason
    assert landed == 40  # what was read is kept
