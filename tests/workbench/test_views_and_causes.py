"""The queue's saved views (per user, in the workbench's own file, CSRF-protected, escaped)
and its grouping by root cause (counts per group, a click filters), through the API of
`recon serve` on 127.0.0.1 and in a real browser."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.report.conftest import browser, chromium  # noqa: F401  (fixtures)
from tests.workbench.support import (
    KEY_BIG,
    KEY_SHORT,
    KEY_SMALL,
    KEY_SUGGEST,
    PASSWORD,
    Server,
    login,
)

pytestmark = pytest.mark.integration


def test_the_queue_counts_per_check_and_root_cause_and_filters_by_cause(server: Server) -> None:
    client, _ = login(server.url, "vic")
    heads = client.get("/api/v1/groups").json()
    causes = {c["root_cause"]: c for c in heads["root_causes"]}
    assert {k: c["findings"] for k, c in causes.items()} == {
        "counterpart_missing": 1,
        "amount_differs": 3,
        "needs_a_match": 1,
    }
    assert causes["amount_differs"]["checks"] == {
        "ledger_amount_mismatch": 1,
        "over_refunded": 1,
        "refunded_amount_mismatch": 1,
    }
    per_check = {g["check_name"]: g for g in heads["groups"]}
    assert per_check["ledger_order_missing_at_provider"]["causes"] == {"counterpart_missing": 1}
    page = client.get("/api/v1/findings", params={"state": "all", "cause": "amount_differs"})
    items = page.json()["items"]
    assert {i["finding_key"] for i in items} == {KEY_SHORT, KEY_BIG, KEY_SMALL}
    assert {i["root_cause"] for i in items} == {"amount_differs"}
    both = client.get(
        "/api/v1/findings",
        params={"state": "all", "cause": "amount_differs", "check": "over_refunded"},
    )
    assert [i["finding_key"] for i in both.json()["items"]] == [KEY_BIG]
    assert client.get("/api/v1/findings", params={"cause": "gremlins"}).status_code == 400
    one = client.get("/api/v1/findings/" + KEY_SUGGEST.replace(":", "%3A")).json()
    assert one["root_cause"] == "needs_a_match"


def test_saved_views_are_per_user_checked_and_csrf_protected(server: Server) -> None:
    alice, alice_csrf = login(server.url, "alice")
    vic, vic_csrf = login(server.url, "vic")
    ask = {
        "name": "EUR <b>errors</b>",
        "filters": {"currency": "EUR", "severity": "error", "cursor": "x", "limit": "5"},
    }
    assert alice.post("/api/v1/views", json=ask).status_code == 403  # no CSRF token
    saved = alice.post("/api/v1/views", json=ask, headers={"X-CSRF-Token": alice_csrf})
    assert saved.status_code == 200, saved.text
    assert "set-cookie" not in saved.headers
    assert saved.json()["view"]["filters"] == {"currency": "EUR", "severity": "error"}
    bad = alice.post(
        "/api/v1/views",
        json={"name": "bad", "filters": {"amount_min": "lots"}},
        headers={"X-CSRF-Token": alice_csrf},
    )
    assert bad.status_code == 400
    nameless = alice.post(
        "/api/v1/views", json={"filters": {}}, headers={"X-CSRF-Token": alice_csrf}
    )
    assert nameless.status_code == 400
    mine = alice.get("/api/v1/views").json()["items"]
    assert [(v["name"], v["filters"]) for v in mine] == [
        ("EUR <b>errors</b>", {"currency": "EUR", "severity": "error"})
    ]
    assert vic.get("/api/v1/views").json()["items"] == []  # each user's own
    stored = server.db.with_name("recon.views.json")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    page = alice.get("/queue")
    assert "EUR &lt;b&gt;errors&lt;/b&gt;" in page.text
    assert "<b>errors</b>" not in page.text
    assert 'href="/queue?currency=EUR&amp;severity=error"' in page.text
    url = "/api/v1/views/" + "EUR%20%3Cb%3Eerrors%3C%2Fb%3E"
    assert vic.delete(url, headers={"X-CSRF-Token": vic_csrf}).status_code == 404
    assert alice.delete(url).status_code == 403  # no CSRF token
    assert alice.delete(url, headers={"X-CSRF-Token": alice_csrf}).status_code == 200
    assert alice.get("/api/v1/views").json()["items"] == []
    assert alice.delete(url, headers={"X-CSRF-Token": alice_csrf}).status_code == 404


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:  # noqa: F811
    """A fresh browser tab that fails the test on a script or CSP error."""
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page
    context.close()
    assert errors == []


@pytest.mark.browser
def test_in_the_browser_a_root_cause_filters_and_a_view_is_saved_and_deleted(
    server: Server, tab: Page
) -> None:
    tab.goto(server.url + "/queue")
    tab.fill("input[name=user]", "carol")
    tab.fill("input[name=password]", PASSWORD)
    tab.click("button[type=submit]")
    expect(tab).to_have_url(re.compile(r"/queue$"))
    causes = tab.locator("#causes")
    expect(causes.locator("a[data-cause=amount_differs] + .count")).to_have_text("3")
    causes.locator("a[data-cause=amount_differs]").click()
    expect(tab).to_have_url(re.compile(r"cause=amount_differs"))
    expect(tab.locator("section.group")).to_have_count(3)  # three checks, one cause
    tab.select_option("#filters select[name=group]", "cause")
    tab.click("#filters button[type=submit]")
    expect(tab.locator("section.group")).to_have_count(1)
    expect(tab.locator("section.group h2")).to_contain_text("Amount differs")
    tab.fill("#save-view input[name=name]", "<i>amounts</i>")
    tab.click("#save-view button[type=submit]")
    view = tab.locator("#views ul.views li a")
    expect(view).to_have_text("<i>amounts</i>")  # the name as text, never markup
    tab.goto(server.url + "/queue")
    expect(tab.locator("section.group")).to_have_count(5)  # every check of the open queue
    tab.locator("#views ul.views li a").click()
    expect(tab).to_have_url(re.compile(r"cause=amount_differs"))
    expect(tab.locator("section.group")).to_have_count(3)
    tab.locator("#views button[data-view-delete]").click()
    expect(tab.locator("#views ul.views li")).to_have_count(0)
