"""A night aborted before it read anything (a refused key) shows no figure of an earlier
night, and `reports/latest` stays on the last night that read data; the index lists both."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson

from recon.report import render_report

from .synthetic_warehouse import LAST, RESOURCES, build

FAILED = "20261121T020000Z-0000ff"


def test_a_night_that_read_nothing_shows_no_old_figures_and_keeps_latest(tmp_path: Path) -> None:
    con = build(tmp_path / "w.duckdb")
    reports = tmp_path / "reports"
    good = render_report(con, run_id=LAST, reports_dir=reports)
    started = datetime(2026, 11, 21, 2, 0, tzinfo=UTC)
    con.execute(
        "INSERT INTO runs VALUES (?, ?, ?, 'failed', ?, 'https://payments.example.com', 'cli', ?)",
        [FAILED, started, started, "payments failed (401 unauthorized: invalid API key)", started],
    )
    for resource in RESOURCES:
        con.execute(
            "INSERT INTO resource_scans (run_id, resource, status, reason, pages, records) "
            "VALUES (?, ?, ?, ?, 0, 0)",
            [FAILED, resource, "failed" if resource == "payments" else "skipped", "aborted"],
        )
    # the findings the warehouse still holds are an earlier night's
    open_before = con.execute(
        "SELECT count(*) FROM findings WHERE run_id = ? AND state IN ('new', 'open')", [LAST]
    ).fetchone()
    assert open_before is not None
    assert open_before[0] > 0
    failed = render_report(con, run_id=FAILED, reports_dir=reports)
    con.close()

    assert (reports / "latest").resolve() == good.folder.resolve()
    index = (reports / "index.html").read_text()
    assert FAILED in index
    assert "read nothing" in index
    html = failed.report_html.read_text()
    assert 'id="nothing-read"' in html
    assert "failed before it read anything" in html
    assert 'id="findings"' not in html  # no explorer of carried-over findings
    assert 'id="checks"' not in html
    assert f'<div class="v">{open_before[0]:,}</div>' not in html
    md = failed.report_md.read_text()
    assert "read nothing from the API" in md
    summary = orjson.loads(failed.summary_json.read_bytes())
    assert summary["run"]["status"] == "failed"
