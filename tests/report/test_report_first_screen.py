"""The first screen of report.html answers "what now?" (issue 42, point 1): the run apart
from the books, a colour that follows the breaks, the next commands, the explorer linked
from the top; one item with several problems is one row; every table fits 1280 and 1024
px; the search finds amounts with or without thousands separators."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Page, expect

from recon.report import render_report
from recon.report.headline import BooksHeadline, books_headline

from .synthetic_warehouse import LAST, NIGHTS, build

# One negative payment with three problems, and an amount with a thousands separator.
SEVERAL = [
    ("impossible_amounts", "error", "neg", "pay_negative", "EUR", -60350, "negative_amount"),
    ("confirmed_with_refunds", "error", "cwr", "pay_negative", "EUR", 51213, "refunded"),
    ("over_refunded", "warn", "over", "pay_negative", "EUR", 111563, "over_refunded"),
    ("big_amounts", "error", "big", "pay_thousands", "EUR", 165312, "odd"),
]


@pytest.fixture(scope="module")
def first(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[duckdb.DuckDBPyConnection, Path]]:
    root = tmp_path_factory.mktemp("first")
    con = build(root / "w.duckdb")
    for check, sev, key, eid, cur, amount, issue in SEVERAL:
        con.execute(
            "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
            "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
            "VALUES (?, ?, ?, ?, 'new', 'payment', ?, ?, ?, ?, ?, ?)",
            [LAST, check, sev, f"{check}:{key}", eid, cur, amount, issue, f"{issue} here", LAST],
        )
    paths = render_report(con, run_id=LAST, reports_dir=root / "reports")
    yield con, paths.report_html
    con.close()


def _section(html: str, element_id: str) -> str:
    """The text of the `<section>` (or `<div>`) with `element_id`, tags removed."""
    match = re.search(rf'<(section|div|nav)[^>]*id="{element_id}"[^>]*>(.*?)</\1>', html, re.S)
    assert match, element_id
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(2))).strip()


def test_the_books_stand_apart_from_the_run_with_a_colour_of_their_own(
    first: tuple[duckdb.DuckDBPyConnection, Path],
) -> None:
    con, path = first
    html = path.read_text(encoding="utf-8")
    # the run has its own word; the books their own count and colour
    assert "Run incomplete" in _section(html, "run-status")
    figures = books_headline(con, LAST, ledger_configured=False)
    assert figures.open > 0
    assert figures.new >= len(SEVERAL)
    assert re.search(
        rf'<p class="status" id="books-headline">{figures.open:,} findings open</p>', html
    )
    # breaks came tonight: red, whatever the run says
    assert '<section class="banner books bad" id="books-status"' in html
    books = _section(html, "books-status")
    assert f"{figures.new:,} new tonight" in books
    assert "Amount at risk" in books
    assert "EUR" in books


def test_the_colour_follows_the_breaks() -> None:
    assert BooksHeadline(books=True).tone == "ok"
    assert BooksHeadline(books=True, open=3).tone == "warn"
    assert BooksHeadline(books=True, open=3, new=1).tone == "bad"
    assert BooksHeadline(books=True, open=3, reopened=1).tone == "bad"


def test_the_first_screen_says_what_to_do_next_and_links_the_explorer(
    first: tuple[duckdb.DuckDBPyConnection, Path],
) -> None:
    _, path = first
    html = path.read_text(encoding="utf-8")
    steps = re.search(r'id="next-steps">(.*?)</div>', html, re.S)
    assert steps
    commands = re.findall(r"<code>(.*?)</code>", steps.group(1))
    assert "recon findings list" in commands
    assert any(c.startswith("recon findings export ") for c in commands)
    assert 'href="#findings"' in steps.group(1)
    # the explorer is reachable from the top: a link before the first section
    nav = re.search(r'<nav class="jump"[^>]*>(.*?)</nav>', html, re.S)
    assert nav
    assert 'href="#findings"' in nav.group(1)
    assert html.index('class="jump"') < html.index('id="run-status"')
    assert html.index('id="next-steps"') < html.index('id="completeness"')


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 1024])
def test_every_table_fits_the_screen_without_sideways_scrolling(
    first: tuple[duckdb.DuckDBPyConnection, Path], page: Page, width: int
) -> None:
    _, html = first
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(html.resolve().as_uri())
    expect(page.locator("html")).to_have_attribute("data-explore-ready", re.compile(r"\d+"))
    found = page.evaluate(
        """() => {
          const view = document.documentElement.clientWidth;
          const wide = [];
          for (const t of document.querySelectorAll('table')) {
            const right = t.getBoundingClientRect().right;
            if (t.scrollWidth > t.parentElement.clientWidth || right > view + 0.5)
              wide.push(t.id || t.querySelector('th').textContent);
          }
          return {page: document.documentElement.scrollWidth, view, wide};
        }"""
    )
    assert found["wide"] == [], found
    assert found["page"] <= found["view"], found


@pytest.mark.browser
def test_one_item_with_several_problems_is_one_row(
    first: tuple[duckdb.DuckDBPyConnection, Path], page: Page
) -> None:
    _, html = first
    page.goto(html.resolve().as_uri())
    expect(page.locator("html")).to_have_attribute("data-explore-ready", re.compile(r"\d+"))
    page.fill("#f-q", "pay_negative")
    expect(page.locator("#explore-status")).to_contain_text("1 with 3 matching findings")
    rows = page.locator("#explore-rows tr")
    expect(rows).to_have_count(1)
    cells = rows.first.locator("td")
    expect(cells).to_have_count(9)
    assert cells.nth(3).inner_text().startswith("pay_negative")
    assert "3 problems" in cells.nth(3).inner_text()
    checks = cells.nth(0).inner_text()
    for check in ("impossible_amounts", "confirmed_with_refunds", "over_refunded"):
        assert check.replace("_", "") in checks.replace("_", "").replace("\n", "")


@pytest.mark.browser
@pytest.mark.parametrize("typed", ["1653.12", "1,653.12"])
def test_search_finds_an_amount_with_or_without_separators(
    first: tuple[duckdb.DuckDBPyConnection, Path], page: Page, typed: str
) -> None:
    _, html = first
    page.goto(html.resolve().as_uri())
    expect(page.locator("html")).to_have_attribute("data-explore-ready", re.compile(r"\d+"))
    page.fill("#f-q", typed)
    expect(page.locator("#explore-status")).to_contain_text("Showing 1\N{EN DASH}1 of 1 matching")
    expect(page.locator("#explore-rows tr").first).to_contain_text("pay_thousands")


def test_nights_before_the_last_still_render(first: tuple[duckdb.DuckDBPyConnection, Path]) -> None:
    con, html = first
    paths = render_report(con, run_id=NIGHTS[0], reports_dir=html.parent.parent)
    assert 'id="books-status"' in paths.report_html.read_text(encoding="utf-8")


def test_report_md_carries_the_next_commands(first: tuple[duckdb.DuckDBPyConnection, Path]) -> None:
    _, html = first
    md = html.with_name("report.md").read_text(encoding="utf-8")
    assert "- What now: `recon findings list`" in md
    assert "`recon serve`" in md  # the workbench
    assert "Amount at risk" in md
