"""Hostile records (issue 25, points 4, 12, 13): amounts no payment can have, timestamps
that cannot be read or lie far ahead, control characters. Each one is a finding with the
value as sent; `raw` keeps exactly what the API sent; an errored check never leaves the
night's exit code at 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration]

DAY = '"2026-11-01T10:00:00Z"'
HOSTILE_AMOUNTS = [
    '"1234"',
    "12.5",
    "1180591620717411303424",  # 2**70
    "-5",
    "1e308",
    "null",
    "true",
    '"NaN"',
    "9223372036854775807",
    "-9223372036854775808",
]


def _page(amounts: list[str], created: list[str] | None = None) -> bytes:
    """One payments page, written by hand: the values exactly as the API would send them."""
    records = [
        f'{{"id":"pay_h{i:02d}","amountMinor":{a},"currency":"EUR","status":"confirmed",'
        f'"reference":"H{i:02d}","createdAt":{(created or [])[i] if created else DAY}}}'
        for i, a in enumerate(amounts)
    ]
    return ('{"data":[' + ",".join(records) + '],"hasMore":false,"nextOffset":null}').encode()


def _rows(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = read_only(db)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    "hostile_server", [{"mode": "records", "raw_body": _page(HOSTILE_AMOUNTS)}], indirect=True
)
def test_hostile_amounts_are_each_flagged_and_raw_is_exact(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    db = tmp_path / "data" / "recon.duckdb"
    errored = _rows(db, "SELECT check_name, reason FROM check_runs WHERE status = 'errored'")
    assert errored == []
    flagged = {
        r[0]
        for r in _rows(db, "SELECT entity_id FROM findings WHERE check_name = 'impossible_amounts'")
    }
    # INT64_MAX is a (huge) legal integer amount; every other one is impossible
    assert flagged == {f"pay_h{i:02d}" for i in range(10)} - {"pay_h08"}
    raw = dict(_rows(db, "SELECT id, json_extract(raw, '$.amountMinor')::VARCHAR FROM payments"))
    assert raw["pay_h02"] == "1180591620717411303424"
    assert raw["pay_h09"] == "-9223372036854775808"
    assert summary.exit_code == 0


def test_an_errored_check_makes_the_exit_code_say_so() -> None:
    from recon.night.outcome import exit_code_for

    assert exit_code_for("complete", worst_failed=None, fail_on=None, errored=1) != 0
    assert exit_code_for("complete", worst_failed=None, fail_on=None, errored=0) == 0


HOSTILE_DATES = [
    '"2026-11-01T10:00:00Z"',  # fine
    '"2099-01-01T00:00:00Z"',
    '"9999-12-31T23:59:59Z"',
    '"not-a-date"',
    '"2026-13-45T99:99:99Z"',
    "1700000000",
    "null",  # no timestamp is not an unreadable one
]


@pytest.mark.parametrize(
    "hostile_server",
    [{"mode": "records", "raw_body": _page(["100"] * 7, HOSTILE_DATES)}],
    indirect=True,
)
def test_unreadable_and_far_future_timestamps_are_findings_with_the_value_sent(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    steps.run_local(overrides_for(tmp_path, hostile_server.url))
    db = tmp_path / "data" / "recon.duckdb"
    found = {
        r[0]: (r[1], r[2])
        for r in _rows(
            db,
            "SELECT entity_id, issue_type, detail FROM findings "
            "WHERE check_name = 'unreadable_timestamps'",
        )
    }
    assert set(found) == {"pay_h01", "pay_h02", "pay_h03", "pay_h04", "pay_h05"}
    assert found["pay_h01"][0] == "future_timestamp"
    assert found["pay_h02"] == (
        "future_timestamp",
        'payment createdAt lies in the future: "9999-12-31T23:59:59Z"',
    )
    assert found["pay_h03"] == (
        "unreadable_timestamp",
        'payment createdAt is not a timestamp: "not-a-date"',
    )
    assert found["pay_h05"][1].endswith(": 1700000000")


CONTROL = "A\u202eB\x00C\x07D\x1b[31mE"  # right-to-left override, NUL, BEL, an escape sequence


def _control_page() -> bytes:
    import json

    record = {
        "id": "pay_ctl",
        "amountMinor": 100,
        "currency": "EUR",
        "status": CONTROL,  # an unknown status: a finding whose detail quotes it
        "reference": CONTROL,
        "createdAt": "2026-11-01T10:00:00Z",
    }
    return json.dumps({"data": [record], "hasMore": False, "nextOffset": None}).encode()


def _raw_controls(text: str) -> bool:
    return any(c in text for c in ("\u202e", "\x00", "\x07", "\x1b"))


@pytest.mark.parametrize(
    "hostile_server", [{"mode": "records", "raw_body": _control_page()}], indirect=True
)
def test_control_characters_are_escaped_on_screen_and_in_csv_kept_in_the_warehouse(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from recon.cli import app

    summary = steps.run_local(overrides_for(tmp_path, hostile_server.url))
    db = tmp_path / "data" / "recon.duckdb"
    assert _rows(db, "SELECT reference, raw->>'$.status' FROM payments") == [(CONTROL, CONTROL)]

    runner = CliRunner()
    listed = runner.invoke(app, ["findings", "list", "--db", str(db)])
    assert listed.exit_code == 0, listed.output
    assert "\\u202e" in listed.stdout
    assert "\\x00" in listed.stdout
    assert not _raw_controls(listed.stdout)

    assert summary.report_dir is not None
    findings_csv = (summary.report_dir / "findings.csv").read_text(encoding="utf-8")
    assert "\\u202e" in findings_csv
    assert not _raw_controls(findings_csv)

    for fmt in ("csv", "table"):
        shown = runner.invoke(
            app, ["query", "SELECT reference FROM payments", "--format", fmt, "--db", str(db)]
        )
        assert shown.exit_code == 0, shown.output
        assert "A\\u202eB" in shown.stdout  # DuckDB's box writes \\0, \\a, \\e itself
        assert not _raw_controls(shown.stdout)
