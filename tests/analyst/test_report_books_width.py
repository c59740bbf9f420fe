"""The books-vs-provider table of a real night's report fits a 1280 px laptop screen, with
the pending amounts (which the sums need) visible: rendered in headless Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.report.conftest import browser, chromium, page  # noqa: F401  (the fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.browser]


def test_books_vs_provider_fits_1280_px_with_pending_visible(analyst_db: Path, page: Page) -> None:  # noqa: F811
    report = analyst_db.parent.parent / "reports" / "latest" / "report.html"
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(report.resolve().as_uri())
    table = page.locator("#books-totals")
    widths = table.evaluate(
        "t => ({table: t.scrollWidth, box: t.parentElement.clientWidth, page: "
        "document.documentElement.clientWidth})"
    )
    assert widths["table"] <= widths["box"] <= widths["page"], widths
    headers = table.locator("thead th").all_inner_texts()
    assert [h.split("\n")[0].upper() for h in headers] == [
        "CURRENCY",
        "SIDE",
        "MATCHED",
        "+ UNMATCHED",
        "+ PENDING",
        "= TOTAL",
        "NET DIFFERENCE",
    ]
    for cell in table.locator("thead th").all():
        box = cell.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= 1280
    # two rows per currency, each adding up: matched + unmatched + pending = total
    assert table.locator("tbody").count() >= 2
    assert table.locator("tbody").first.locator("tr").count() == 2
