"""The findings explorer of report.html in headless Chromium (Playwright): typing into the
search, choosing a check, a currency and a state, sorting by amount and age, paging, and the
inline data block that text from the API must not break out of."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Page, expect

from recon.report import ReportPaths, render_report

from .synthetic_warehouse import LAST, NIGHTS, OPEN_ROWS, TOTAL_ROWS, build

pytestmark = pytest.mark.browser

# Two amounts a float cannot tell apart (2**53 + 1 and 2**53): only exact integers order them.
BIG_HI = 2**53 + 1
BIG_LO = 2**53
HOSTILE = (
    '</script><script>document.title="pwned"</script><!-- '
    "<img src=x onerror=alert(1)> \u2028 & <b>bold</b>"
)
PLANTED = [
    # (check, severity, key, state, entity_id, currency, amount, issue, detail, first seen)
    ("big_amounts", "error", "hi", "new", "pay_big_hi", "EUR", BIG_HI, "huge", "hi", LAST),
    ("big_amounts", "error", "lo", "new", "pay_big_lo", "EUR", BIG_LO, "huge", "lo", LAST),
    ("aged", "warn", "a9", "open", "pay_aged_9", "USD", 500, "old", "nine days", NIGHTS[0]),
    ("aged", "warn", "a3", "open", "pay_aged_3", "USD", 400, "old", "three days", NIGHTS[6]),
    ("aged", "warn", "hostile", "open", "pay_hostile", "GBP", 1, "odd", HOSTILE, NIGHTS[8]),
]
# 60 more, so that the default page of 50 rows has a second page
PAGED = 60
TOTAL = TOTAL_ROWS + len(PLANTED) + PAGED
UNRESOLVED = OPEN_ROWS + len(PLANTED) + PAGED


@dataclass
class Explored:
    paths: ReportPaths
    url: str


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> Explored:
    root = tmp_path_factory.mktemp("explore")
    con = build(root / "w.duckdb")
    for check, sev, key, state, eid, cur, amount, issue, detail, first in PLANTED:
        con.execute(
            "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
            "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
            "VALUES (?, ?, ?, ?, ?, 'payment', ?, ?, ?, ?, ?, ?)",
            [LAST, check, sev, f"{check}:{key}", state, eid, cur, amount, issue, detail, first],
        )
    con.execute(
        "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
        "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
        "SELECT $run, 'many', 'info', 'many:' || i, 'open', 'invoice', "
        "'inv_many_' || lpad(i::VARCHAR, 2, '0'), 'JPY', 1000 + i, 'filler', 'filler row', $run "
        "FROM range($n) t(i)",
        {"run": LAST, "n": PAGED},
    )
    paths = render_report(con, run_id=LAST, reports_dir=root / "reports")
    con.close()
    return Explored(paths, paths.report_html.resolve().as_uri())


def _open(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("html")).to_have_attribute("data-explore-ready", re.compile(r"\d+"))


def _status(page: Page) -> str:
    return page.locator("#explore-status").inner_text()


def _rows(page: Page) -> list[dict[str, str]]:
    cells: list[list[str]] = page.eval_on_selector_all(
        "#explore-rows tr", "trs => trs.map(tr => [...tr.cells].map(td => td.innerText))"
    )
    names = ("check", "severity", "state", "id", "issue", "amount", "age", "detail", "work")
    rows = [dict(zip(names, c, strict=True)) for c in cells]
    for row in rows:
        row["entity"] = row["id"].split("\n")[1]
        row["id"] = row["id"].split("\n")[0]
        row["check"] = row["check"].split("\n")[0]
    return rows


def _expect_status(page: Page, first: int, last: int, matching: int, total: int = TOTAL) -> None:
    expect(page.locator("#explore-status")).to_have_text(
        f"Showing {first}\N{EN DASH}{last} of {matching:,} matching findings "
        f"({total:,} in this run)."
    )


def test_shows_every_unresolved_finding_paged(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    _expect_status(page, 1, 50, UNRESOLVED)
    assert len(_rows(page)) == 50
    expect(page.locator("#explore-page")).to_have_text("Page 1 of 2")
    expect(page.locator("#explore-prev")).to_be_disabled()
    page.locator("#explore-next").click()
    _expect_status(page, 51, UNRESOLVED, UNRESOLVED)
    assert len(_rows(page)) == UNRESOLVED - 50
    expect(page.locator("#explore-next")).to_be_disabled()
    page.select_option("#f-state", "")
    _expect_status(page, 1, 50, TOTAL)
    page.select_option("#f-size", "100")
    _expect_status(page, 1, TOTAL, TOTAL)
    page.select_option("#f-state", "resolved")
    _expect_status(page, 1, 1, 1)
    assert [(r["id"], r["state"]) for r in _rows(page)] == [("pay_fixed", "resolved")]


def test_typing_in_the_search_filters_the_rows(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    page.fill("#f-q", "pay_eur")
    _expect_status(page, 1, 2, 2)
    assert sorted(r["id"] for r in _rows(page)) == ["pay_eur_1", "pay_eur_2"]
    # every word must match, in any column: an id and words of a detail
    page.fill("#f-q", "inv_many_0 FILLER")
    _expect_status(page, 1, 10, 10)
    assert {r["id"] for r in _rows(page)} == {f"inv_many_0{i}" for i in range(10)}
    page.fill("#f-q", "no such thing anywhere")
    expect(page.locator("#explore-status")).to_have_text(
        f"No finding matches these filters ({TOTAL:,} in this run)."
    )
    assert _rows(page) == []
    page.locator("button[type=reset]").click()
    _expect_status(page, 1, 50, UNRESOLVED)


def test_check_and_currency_then_sort_by_amount(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    page.select_option("#f-check", "refunded_amount_mismatch")
    _expect_status(page, 1, 4, 4)
    page.select_option("#f-currency", "EUR")
    _expect_status(page, 1, 2, 2)
    page.select_option("#f-sort", "amount-desc")
    expect(page.locator("#explore-rows tr").first).to_contain_text("pay_eur_2")
    rows = _rows(page)
    assert [(r["id"], r["amount"]) for r in rows] == [
        ("pay_eur_2", "EUR 1,000.00"),
        ("pay_eur_1", "EUR 12.50"),
    ]
    assert {r["check"] for r in rows} == {"refunded_amount_mismatch"}
    page.select_option("#f-sort", "amount-asc")
    expect(page.locator("#explore-rows tr").first).to_contain_text("pay_eur_1")
    assert [r["id"] for r in _rows(page)] == ["pay_eur_1", "pay_eur_2"]
    # the cross-currency hint shows only when currencies are mixed
    expect(page.locator("#explore-hint")).to_be_hidden()
    page.select_option("#f-currency", "")
    expect(page.locator("#explore-hint")).to_be_visible()


def test_amounts_sort_as_exact_integers(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    page.select_option("#f-check", "big_amounts")
    _expect_status(page, 1, 2, 2)
    page.select_option("#f-sort", "amount-desc")
    # 2**53 + 1 and 2**53 are the same float: a sort on parsed text would keep them in
    # data order for both directions
    assert [r["id"] for r in _rows(page)] == ["pay_big_hi", "pay_big_lo"]
    assert _rows(page)[0]["amount"] == "EUR 90,071,992,547,409.93"
    page.select_option("#f-sort", "amount-asc")
    expect(page.locator("#explore-rows tr").first).to_contain_text("pay_big_lo")
    page.select_option("#f-sort", "amount-desc")
    expect(page.locator("#explore-rows tr").first).to_contain_text("pay_big_hi")


def test_sort_by_age_and_filter_by_severity(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    page.select_option("#f-severity", "warn")
    page.select_option("#f-sort", "age-desc")
    expect(page.locator("#explore-rows tr").first).to_contain_text("pay_aged_9")
    rows = _rows(page)
    assert [r["age"] for r in rows[:3]] == ["9 days", "3 days", "1 day"]
    assert {r["severity"] for r in rows} == {"WARN"}
    page.select_option("#f-sort", "age-asc")
    expect(page.locator("#explore-rows tr").first).not_to_contain_text("pay_aged")
    assert _rows(page)[-1]["id"] == "pay_aged_9"


def test_text_from_the_api_stays_text(explored: Explored, page: Page) -> None:
    html = explored.paths.report_html.read_text()
    assert html.count("<script") == 2  # the data block and the explorer, nothing planted
    assert "</script><script>document" not in html
    _open(page, explored.url)
    page.fill("#f-q", "pay_hostile")
    _expect_status(page, 1, 1, 1)
    (row,) = _rows(page)
    assert row["detail"].replace("\u2028", " ") == HOSTILE.replace("\u2028", " ")
    assert page.title().startswith("Reconciliation")
    assert page.locator("#explore-rows b, #explore-rows img, #explore-rows script").count() == 0


def test_keyboard_reaches_every_control(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    page.focus("#f-q")
    order = ["f-q"]
    for _ in range(10):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id || document.activeElement.type"))
    assert order[:10] == [
        "f-q",
        "f-check",
        "f-severity",
        "f-currency",
        "f-state",
        "f-work",
        "f-owner",
        "f-sort",
        "f-size",
        "reset",
    ]
    controls = ("f-q", "f-check", "f-severity", "f-currency", "f-state", "f-work", "f-owner")
    for control in (*controls, "f-sort", "f-size"):
        assert page.locator(f"label[for={control}]").count() == 1
    page.focus("#explore-next")
    page.keyboard.press("Enter")
    _expect_status(page, 51, UNRESOLVED, UNRESOLVED)


def test_data_block_holds_every_finding_exactly(explored: Explored) -> None:
    html = explored.paths.report_html.read_text()
    block = re.search(
        r'<script type="application/json" id="findings-data">(.*?)</script>', html, re.S
    )
    assert block is not None
    data = json.loads(block.group(1))
    columns = data["col"]
    assert data["n"] == TOTAL
    assert {len(values) for values in columns.values()} == {TOTAL}
    con = duckdb.connect()
    expected = {
        (eid, str(amount) if amount is not None else None)
        for eid, amount in con.execute(
            "SELECT entity_id, amount_minor FROM read_parquet(?)",
            [str(explored.paths.findings_parquet)],
        ).fetchall()
    }
    con.close()
    assert set(zip(columns["id"], columns["minor"], strict=True)) == expected
    assert str(BIG_HI) in columns["minor"]
    hostile = columns["detail"][columns["id"].index("pay_hostile")]
    assert hostile == HOSTILE  # exactly the text, after the escaping round trip


def test_too_many_findings_point_at_the_files(tmp_path: Path, page: Page) -> None:
    con = build(tmp_path / "w.duckdb")
    paths = render_report(con, run_id=LAST, reports_dir=tmp_path / "r", explore_max=5)
    con.close()
    html = paths.report_html.read_text()
    assert "<script" not in html
    assert "script-src" not in html
    page.goto(paths.report_html.resolve().as_uri())
    notice = page.locator("#too-many-findings")
    expect(notice).to_contain_text(
        f"This run has {TOTAL_ROWS} findings, more than this page explores in a browser (5)."
    )
    for text in ("findings.parquet", "findings.csv", "recon export findings.xlsx --table findings"):
        expect(notice).to_contain_text(text)
    # the largest findings per check are still listed
    expect(page.locator("#check-refunded_amount_mismatch")).to_contain_text("pay_eur_2")


def test_by_default_the_most_severe_and_oldest_come_first(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    expect(page.locator("#f-sort")).to_have_value("severity")
    rows = _rows(page)
    order = {"ERROR": 0, "WARN": 1, "INFO": 2}
    ranks = [order[r["severity"]] for r in rows]
    assert ranks == sorted(ranks)


def test_amounts_are_ordered_within_each_currency(explored: Explored, page: Page) -> None:
    _open(page, explored.url)
    page.select_option("#f-sort", "amount-desc")
    expect(page.locator("#explore-hint")).to_be_visible()
    page.select_option("#f-size", "250")
    amounts = [r["amount"] for r in _rows(page) if r["amount"] != "—"]
    currencies = [a.split()[0] for a in amounts]
    # each currency's rows together, the currencies in order: never JPY beside EUR by size
    assert currencies == sorted(currencies)
    assert page.locator("#f-sort option[value=converted-desc]").count() == 0  # no rates given


def test_with_exchange_rates_largest_first_across_currencies_is_labelled(
    tmp_path: Path, page: Page
) -> None:
    from recon.money.fx import load_rates

    (tmp_path / "rates.csv").write_text(
        "currency,rate,date\nEUR,1,2026-11-20\nUSD,0.92,2026-11-20\nGBP,1.15,2026-11-20\n"
        "JPY,0.0061,2026-11-20\n"
    )
    con = build(tmp_path / "w.duckdb")
    paths = render_report(
        con, run_id=LAST, reports_dir=tmp_path / "reports", rates=load_rates(tmp_path / "rates.csv")
    )
    con.close()
    _open(page, paths.report_html.resolve().as_uri())
    option = page.locator("#f-sort option[value=converted-desc]")
    expect(option).to_have_text("Converted to EUR (rates of 2026-11-20), largest first")
    page.select_option("#f-sort", "converted-desc")
    rows = _rows(page)
    labelled = [r["amount"] for r in rows if not r["amount"].startswith(("EUR", "—"))]
    assert labelled
    assert all(
        "≈ EUR " in a and a.endswith(" converted")
        for a in labelled
        if a.split()[0] in ("USD", "GBP", "JPY")
    )
    expect(page.locator("#explore-hint")).to_contain_text("for ordering only")
