"""The progress display shows, per resource, requests in flight and the current limit."""

from __future__ import annotations

import io
import logging

import pytest
from rich.console import Console

from recon.night.progress import LogProgress, RichProgress


def test_the_rich_display_shows_requests_in_flight_and_the_limit() -> None:
    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    with RichProgress(console) as progress:
        progress.update("payments", pages=12, records=2400, retries=1, in_flight=5, limit=6)
        progress.update("disputes", pages=1, records=40, retries=0, in_flight=0, limit=6)
        progress.done("disputes", status="complete")
    text = out.getvalue()
    line = next(row for row in text.splitlines() if "payments" in row)
    assert " 5/6  in flight" in line
    assert "2,400 records" in line


def test_the_log_lines_show_requests_in_flight_and_the_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    progress = LogProgress(every_s=0)
    with caplog.at_level(logging.INFO, logger="recon.night.extract"):
        progress.update("refunds", pages=3, records=600, retries=0, in_flight=2, limit=4)
    assert "refunds: 3 pages, 600 records, 0 retries, 2 in flight (limit 4)" in caplog.text
