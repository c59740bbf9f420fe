"""The night makes report.html in its own process: past `EXPLORE_MAX` findings the page
embeds none of them, keeps none of their batches (issue 38: 130k findings embedded put the
night over its 600 MB), lists the largest per check and currency, and points at the files
and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.report import render_report
from recon.report.explore import EXPLORE_MAX

from .synthetic_warehouse import LAST, TOTAL_ROWS, build


def test_past_the_limit_nothing_is_embedded_or_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert EXPLORE_MAX <= 50_000  # a bound the night's memory holds
    monkeypatch.setattr(
        "recon.report.render.build_explorer",
        lambda *a, **k: pytest.fail("findings kept for an explorer past the limit"),
    )
    con = build(tmp_path / "w.duckdb")
    paths = render_report(con, run_id=LAST, reports_dir=tmp_path / "r", explore_max=3)
    con.close()
    html = paths.report_html.read_text()
    assert 'id="findings-data"' not in html
    assert f"This run has {TOTAL_ROWS} findings" in html
    assert "recon findings list --check CHECK" in html
    assert 'id="check-' in html  # the largest per check and currency are listed
