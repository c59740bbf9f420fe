"""The workbench's pages in a real browser (Debian's Chromium through Playwright) against
`recon serve` on 127.0.0.1: an analyst logs in, filters the queue, resolves a finding and
proposes a write-off; an approver approves it from the inbox and signs the month off; the
trail then verifies. No script error and no CSP violation on any page (the `page` fixture
fails the test on either).

With WORKBENCH_SCREENSHOTS=docs the queue and the proposal are saved as the screenshots of
docs/workbench.md."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.report.conftest import browser, chromium  # noqa: F401  (fixtures)
from tests.workbench.support import (
    KEY_SHORT,
    KEY_SUGGEST,
    KEY_XSS,
    PASSWORD,
    RECON,
    Server,
    clean_env,
)

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.fixture
def pages(browser: Browser) -> Iterator[list[Page]]:  # noqa: F811
    """Fresh browser contexts (one per user), each failing the test on a script or CSP
    error."""
    errors: list[str] = []
    opened: list[Page] = []
    contexts = []

    def new() -> Page:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        tab = context.new_page()
        tab.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        opened.append(tab)
        return tab

    new()
    new()
    yield opened
    for context in contexts:
        context.close()
    assert errors == []


def _login(tab: Page, url: str, user: str) -> None:
    tab.goto(url + "/queue")
    expect(tab).to_have_url(re.compile(r"/login\?next="))
    tab.fill("input[name=user]", user)
    tab.fill("input[name=password]", PASSWORD)
    tab.click("button[type=submit]")
    expect(tab).to_have_url(re.compile(r"^http://127\.0\.0\.1:\d+/queue$"))


def _shoot(tab: Page, name: str, tmp: Path) -> None:
    path = tmp / name
    tab.screenshot(path=str(path), full_page=False)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("WORKBENCH_SCREENSHOTS")
    if target:
        shutil.copy(path, Path(target) / name)


def test_an_analyst_and_an_approver_work_the_queue(
    server: Server, pages: list[Page], tmp_path: Path
) -> None:
    alice, bob = pages
    _login(alice, server.url, "alice")
    expect(alice.locator("section.group")).to_have_count(5)
    # the script in a books reference is shown as text, never run (the fixture would fail)
    expect(alice.locator("td.detail").filter(has_text="<script>")).to_have_count(1)
    alice.select_option("select[name=severity]", "error")
    alice.fill("input[name=currency]", "EUR")
    alice.click("#filters button[type=submit]")
    expect(alice.locator("section.group")).to_have_count(2)
    _shoot(alice, "workbench-queue.png", tmp_path)
    alice.select_option("#bulk select[name=action]", "resolve")
    alice.select_option("#bulk select[name=reason]", "written_off")
    alice.click("#bulk button[data-preview=true]")
    expect(alice.locator("#bulk-result")).to_contain_text(
        "2 finding(s) would change, 2 of them through an approver"
    )

    alice.click(f"a[href='/findings/{quote(KEY_SHORT, safe='')}']")
    expect(alice.locator("#work-state")).to_have_text("new")
    expect(alice.locator("dd.differs").first).to_be_visible()  # books 10.00, provider 8.50
    alice.select_option("#resolve select[name=reason]", "timing")
    alice.fill("#resolve textarea[name=note]", "the refund lands tomorrow")
    alice.click("#resolve button[type=submit]")
    expect(alice.locator("#work-state")).to_have_text("resolved_manually")
    expect(alice.locator("table.trail")).to_contain_text("alice")

    alice.goto(f"{server.url}/findings/{quote(KEY_XSS, safe='')}")
    alice.select_option("#resolve select[name=reason]", "written_off")
    alice.fill("#resolve textarea[name=note]", "not worth chasing")
    alice.click("#resolve button[type=submit]")
    expect(alice.locator("#status")).to_contain_text("waits for an approver")
    alice.goto(f"{server.url}/findings/{quote(KEY_SUGGEST, safe='')}")
    expect(alice.locator("#accept")).to_contain_text("pay_9")
    alice.goto(server.url + "/proposals")
    expect(alice.locator("section.proposal")).to_have_count(1)
    expect(alice.locator("section.proposal")).to_contain_text("Your own proposal")
    expect(alice.locator("section.proposal button")).to_have_count(0)

    _login(bob, server.url, "bob")
    bob.goto(server.url + "/proposals")
    proposal = bob.locator("section.proposal")
    expect(proposal).to_have_count(1)
    expect(proposal).to_contain_text("written_off")
    _shoot(bob, "workbench-proposal.png", tmp_path)
    proposal.locator("input[name=note]").fill("agreed: below collection cost")
    proposal.locator("button[data-verb=approve]").click()
    expect(bob.locator("section.proposal")).to_have_count(0)
    expect(bob.locator("table")).to_contain_text("approved by bob")

    bob.goto(f"{server.url}/findings/{quote(KEY_XSS, safe='')}")
    expect(bob.locator("#work-state")).to_have_text("resolved_manually")

    month = f"{datetime.now(UTC):%Y-%m}"
    bob.goto(f"{server.url}/close?period={month}")
    expect(bob.locator("p.draft")).to_be_visible()
    bob.fill("#sign-off textarea[name=note]", "breaks worked, write-off approved")
    bob.check("#sign-off input[name=provisional]")  # this month has not ended
    bob.click("#sign-off button[type=submit]")
    expect(bob.locator("p.signed")).to_contain_text("Signed off by bob")

    verify = subprocess.run(
        [str(RECON), "findings", "verify", "--db", str(server.db)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert verify.returncode == 0, verify.stderr
