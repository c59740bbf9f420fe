"""The terminal's closing lines use the report's words (issue 42): "checks with findings",
never "31 failed" for checks that merely found something; and where the findings stand."""

from __future__ import annotations

from pathlib import Path

from recon.night.outcome import closing_lines
from tests.report.synthetic_warehouse import LAST, build


def test_closing_lines_say_with_findings_as_the_report_does(tmp_path: Path) -> None:
    con = build(tmp_path / "w.duckdb")
    try:
        lines = closing_lines(con, LAST)
        failed = con.execute(
            "SELECT count(*) FROM check_runs WHERE run_id = ? AND status = 'failed'", [LAST]
        ).fetchone()
    finally:
        con.close()
    assert failed is not None
    checks = next(line for line in lines if line.strip().startswith("checks:"))
    assert f"{failed[0]} with findings" in checks
    assert " failed" not in checks
    findings = next(line for line in lines if line.strip().startswith("findings:"))
    assert "new tonight" in findings
    assert "resolved tonight" in findings
