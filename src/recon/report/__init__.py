"""Reports of a run: `reports/<run_id>/` (summary.json, report.html, report.md, findings.csv,
findings.parquet, failed_calls.csv, manifest.json), `reports/index.html`, `reports/latest`.

    from recon.report import render_report
    paths = render_report(con, run_id="…", reports_dir=Path("reports"))
"""

from pathlib import Path

from recon.report.render import SCHEMA_VERSION, ReportPaths, render_index, render_report

SUMMARY_SCHEMA_PATH = Path(__file__).parent / "summary.schema.json"

__all__ = ["SCHEMA_VERSION", "SUMMARY_SCHEMA_PATH", "ReportPaths", "render_index", "render_report"]
