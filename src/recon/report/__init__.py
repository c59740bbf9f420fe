"""Reports of a run: `reports/<run_id>/` (summary.json, report.html, report.md, findings.csv,
findings.parquet, failed_calls.csv, manifest.json), `reports/index.html`, `reports/latest`.

    from recon.report import render_report
    paths = render_report(con, run_id="…", reports_dir=Path("reports"))

The renderer (`recon.report.render`: polars, pyarrow, Jinja) is imported when one of its
names is first asked for, so a process that only writes the group page (`recon.accounts.report`)
or reads a summary does not pay for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recon.report.render import SCHEMA_VERSION, ReportPaths, render_index, render_report

SUMMARY_SCHEMA_PATH = Path(__file__).parent / "summary.schema.json"

__all__ = ["SCHEMA_VERSION", "SUMMARY_SCHEMA_PATH", "ReportPaths", "render_index", "render_report"]

_RENDERED = frozenset({"SCHEMA_VERSION", "ReportPaths", "render_index", "render_report"})


def __getattr__(name: str) -> Any:
    if name in _RENDERED:
        from recon.report import render

        return getattr(render, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
