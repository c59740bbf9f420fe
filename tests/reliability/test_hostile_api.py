"""Hostile API answers, round two (issue 38 point 4, issue 36 point 4): a record answered
again with other content, a record that is not UTF-8, a body encoded twice, headers
trickled a byte at a time. Each costs what it must — a record, a page, an attempt — never
the night's honesty, its memory or its time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration]


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = read_only(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "recon.duckdb"


@pytest.mark.parametrize("hostile_server", [{"mode": "changed", "jump_at": 200}], indirect=True)
def test_an_id_answered_again_with_other_content_is_never_a_silent_complete(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    assert summary.status == "incomplete"
    assert summary.exit_code == 3
    ((status, reason),) = _rows(
        _db(tmp_path), "SELECT status, reason FROM resource_scans WHERE resource = 'payments'"
    )
    assert status == "incomplete"
    assert "pay_000150" in reason
    assert "different content" in reason
    # nothing lost, and the version read first kept
    ((count, amount),) = _rows(
        _db(tmp_path),
        "SELECT count(*), max(amount_minor) FILTER (WHERE id = 'pay_000150') FROM payments",
    )
    assert (count, amount) == (450, 1150)


@pytest.mark.parametrize("hostile_server", [{"mode": "bad_utf8"}], indirect=True)
def test_a_record_that_is_not_utf8_is_lost_alone_as_a_reject_not_its_page(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    ((landed,),) = _rows(_db(tmp_path), "SELECT count(*) FROM payments")
    assert landed == 449  # was 250: the 200 records of its page lost with it
    rejects = _rows(_db(tmp_path), "SELECT resource, raw, reason, request_id FROM rejects")
    assert len(rejects) == 1
    resource, raw, reason, request_id = rejects[0]
    assert resource == "payments"
    assert "pay_000042" in raw
    assert "ORD-000042\ufffd" in raw  # where the byte was
    assert "not valid UTF-8" in reason
    assert request_id.startswith("req_hostile_")
    assert summary.exit_code in (0, 3)  # what rejects mean for the night is as before


@pytest.mark.parametrize(
    "hostile_server", [{"mode": "ok", "encodings": ["gzip", "gzip"]}], indirect=True
)
def test_a_body_encoded_twice_fails_its_page_with_its_request_id(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    assert summary.status == "incomplete"
    assert summary.exit_code == 3
    calls = _rows(
        _db(tmp_path),
        "SELECT error, request_id, message FROM api_calls WHERE path LIKE '%/payments'",
    )
    assert calls
    assert {error for error, _, _ in calls} == {"bad_encoding"}
    assert all(rid.startswith("req_hostile_") for _, rid, _ in calls)
    assert all("gzip, gzip" in message for _, _, message in calls)
    # refused, never retried (the same answer would come again)
    assert hostile_server.payments_requests() == len(calls)


@pytest.mark.parametrize("hostile_server", [{"mode": "ok", "trickle_headers": True}], indirect=True)
def test_headers_trickled_a_byte_at_a_time_end_each_attempt_at_its_deadline(
    hostile_server: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each byte within any read timeout, the headers never ending: before, one attempt
    held 91 s (and this night for ever). Bounded now by attempts x deadline."""
    monkeypatch.setenv("RECON_TIMEOUT_S", "0.5")
    monkeypatch.setenv("RECON_CALL_BUDGET_S", "1")
    monkeypatch.setenv("RECON_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("RECON_NARROW_MAX_REQUESTS", "0")
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    assert summary.status == "incomplete"
    assert summary.exit_code == 3
    errors = _rows(
        _db(tmp_path), "SELECT DISTINCT error FROM api_calls WHERE path LIKE '%/payments'"
    )
    assert errors == [("timeout",)]
