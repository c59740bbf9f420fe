"""The group night's own process (each account in a process of its own) imports what it
uses: the accounts' settings, the consolidated warehouse (DuckDB) and the group page, not
the extraction, the report's renderer or the alert's HTTP client (~0.3 CPU-s a night)."""

from __future__ import annotations

import json
import subprocess
import sys

PARENT = """
import json, sys
from recon.accounts.night import finish_group, group_preflight, run_group_local
from recon.accounts.processes import AccountProcesses, worth_processes
import recon.config.accounts, recon.warehouse.consolidated, recon.config.overrides
import recon.accounts.report
import recon.runid
heavy = ("polars", "pyarrow", "httpx", "tenacity", "jinja2", "recon.night.nightly",
         "recon.night.extract", "recon.api", "recon.report.render")
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def test_the_group_parent_imports_no_extraction_renderer_or_http_client() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PARENT], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


def test_the_report_package_still_offers_the_renderer() -> None:
    from recon import report
    from recon.report import render

    assert report.render_report is render.render_report
    assert report.ReportPaths is render.ReportPaths
    assert report.SCHEMA_VERSION == render.SCHEMA_VERSION
