"""The explorer shows what the team decided: filter by work state and owner in headless
Chromium, the Work column names the owner and says why a lapsed acknowledgement lapsed."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from recon.findings.acks import AckLog, Amounts
from recon.findings.trail_table import load_acks
from recon.report import render_report

from .synthetic_warehouse import LAST, build

pytestmark = pytest.mark.browser

ROWS = [  # key, currency, amount, the decision
    ("work:acked", "EUR", 100, ("ack", None)),
    ("work:lapsed", "EUR", 200, ("ack", None)),  # acknowledged at another amount
    ("work:ana1", "USD", 300, ("assign", "ana")),
    ("work:ana2", "USD", 400, ("assign", "ana")),
    ("work:manual", "GBP", 500, ("resolve", None)),
]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("work")
    con = build(root / "w.duckdb")
    log = AckLog(root / "w.acks.jsonl")
    when = datetime(2026, 11, 20, tzinfo=UTC)
    for key, cur, amount, (action, owner) in ROWS:
        con.execute(
            "INSERT INTO findings (run_id, check_name, severity, finding_key, state, "
            "entity, entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
            "VALUES (?, 'work_check', 'error', ?, 'open', 'payment', ?, "
            "?, ?, 'odd', 'planted', ?)",
            [LAST, key, key.split(":")[1], cur, amount, LAST],
        )
        bound = amount + (1 if key == "work:lapsed" else 0)
        log.append(
            action,
            [(key, Amounts(cur, bound, None))],
            note="explained" if action != "assign" else None,
            owner=owner,
            reason="timing" if action == "resolve" else None,
            who="ana",
            at=when,
        )
    load_acks(con, log.path)
    paths = render_report(con, run_id=LAST, reports_dir=root / "reports")
    con.close()
    return paths.report_html.resolve().as_uri()


def _open(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("html")).to_have_attribute("data-explore-ready", re.compile(r"\d+"))


def _work_cells(page: Page) -> dict[str, str]:
    rows: list[list[str]] = page.eval_on_selector_all(
        "#explore-rows tr", "trs => trs.map(tr => [...tr.cells].map(td => td.innerText))"
    )
    return {r[3].split("\n")[0]: r[-1] for r in rows}


def test_filter_by_work_state_and_owner(url: str, page: Page, tmp_path: Path) -> None:
    _open(page, url)
    page.select_option("#f-work", "investigating")
    assert _work_cells(page) == {"ana1": "investigating\nana", "ana2": "investigating\nana"}
    page.select_option("#f-work", "")
    page.select_option("#f-owner", "ana")
    assert set(_work_cells(page)) == {"ana1", "ana2"}
    page.select_option("#f-owner", "")
    page.select_option("#f-work", "acknowledged")
    assert set(_work_cells(page)) == {"acked"}
    page.select_option("#f-work", "resolved_manually")
    assert _work_cells(page) == {"manual": "resolved manually"}
    page.select_option("#f-work", "open")
    page.fill("#f-q", "lapsed")
    cells = _work_cells(page)
    assert cells["lapsed"] == "open\nlapsed: amount changed since acknowledged by ana on 2026-11-20"
    expect(page.locator("#explore-filters")).to_contain_text("Work state: open")
    page.screenshot(path=str(tmp_path / "work.png"), full_page=False)
