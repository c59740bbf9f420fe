"""A night that changes items dated in a signed-off period is flagged (issue 39): in its own
report (report.html, report.md, summary.json) and in the next close pack."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
from typer.testing import CliRunner

from recon.cli import app
from recon.close import SignOff, close_period, parse_period
from recon.findings.acks import AckLog, NewEvent, acks_path

from .conftest import N01


def test_a_night_after_the_sign_off_is_flagged_in_the_next_close(db: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    signed = datetime(2026, 11, 1, 0, 30, tzinfo=UTC)  # before the night of 1 November
    close_period(db, acks_path(db), reports, parse_period("2026-10"),
                 sign_off=SignOff("Dana", "October tied"), now=signed)  # fmt: skip
    result = CliRunner().invoke(app, ["close", "2026-11", "--db", str(db),
                                      "--reports", str(reports)])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    # pay_2 (created 20 October) refunded and pay_5 (31 October) first read that night
    line = f"after sign-off of 2026-10 (2026-11-01): 2 item(s) changed (runs {N01})"
    assert line in result.stdout
    assert line in (reports / "close-2026-11" / "close.html").read_text()


def test_a_night_after_the_sign_off_is_flagged_in_its_report(tmp_path: Path) -> None:
    import duckdb

    from recon.report import render_report
    from tests.report.synthetic_warehouse import LAST, build

    db = tmp_path / "recon.duckdb"
    con = build(db)
    con.execute(
        "INSERT INTO record_versions (entity, id, version, run_id, change, status, amount_minor, "
        "currency) VALUES ('payments', 'pay_oct', 2, ?, 'changed', 'refunded', 500, 'EUR')",
        [LAST],
    )
    con.execute(
        "INSERT INTO payments BY NAME SELECT 'pay_oct' AS id, 500 AS amount_minor, "
        "'EUR' AS currency, 'refunded' AS status, TIMESTAMPTZ '2026-10-15 10:00:00+00' AS "
        "created_at, '{}' AS raw, 'h' AS content_hash, ? AS first_seen_run, ? AS last_seen_run",
        [LAST, LAST],
    )
    con.close()
    AckLog(acks_path(db)).append_events(
        [NewEvent("close", "period:2026-10", note="tied", fields={"period": "2026-10"})],
        at=datetime(2026, 11, 5, tzinfo=UTC),
    )
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = render_report(con, run_id=LAST, reports_dir=tmp_path / "reports")
    finally:
        con.close()
    summary = orjson.loads(paths.summary_json.read_bytes())
    assert [(a["period"], a["items"]) for a in summary["after_sign_off"]] == [("2026-10", 1)]
    assert summary["audit_trail"]["lines"] == 1
    line = f"after sign-off of 2026-10 (2026-11-05): 1 item(s) changed (runs {LAST})"
    assert line in paths.report_html.read_text()
    assert line in paths.report_md.read_text()
