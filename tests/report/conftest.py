from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Browser, Dialog, Page, sync_playwright

from recon.report import ReportPaths, render_report

from .synthetic_warehouse import LAST, NIGHTS, build

CHROMIUM = "/usr/bin/chromium"


@dataclass
class Rendered:
    con: duckdb.DuckDBPyConnection
    reports: Path
    paths: ReportPaths
    all_paths: dict[str, ReportPaths]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rendered]:
    """Every night of the synthetic warehouse rendered, oldest first; `paths` is the last."""
    root = tmp_path_factory.mktemp("reports")
    con = build(root / "recon.duckdb")
    all_paths = {
        run_id: render_report(con, run_id=run_id, reports_dir=root / "reports") for run_id in NIGHTS
    }
    yield Rendered(con, root / "reports", all_paths[LAST], all_paths)
    con.close()


def _chromium_missing() -> str | None:
    """Why Debian's chromium cannot be used here, or None. Installing it is `make test-deps`
    (which `make test` runs first), never a side effect of a test."""
    if Path(CHROMIUM).exists():
        return None
    return f"{CHROMIUM} is missing: run `make test-deps` (apt-get install chromium, as root)"


@pytest.fixture(scope="session")
def chromium() -> str:
    reason = _chromium_missing()
    if reason is not None:
        pytest.skip(f"!!! BROWSER TEST SKIPPED: headless Chromium unavailable: {reason} !!!")
    return CHROMIUM


BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (never `playwright install`: no downloads).

    Module-scoped, not session-scoped: Playwright's sync API keeps an asyncio loop running
    in this thread while it is open, so any later test in the same worker that calls
    `asyncio.run()` would fail."""
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium, args=BROWSER_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page; fails the test on any script error or console error (CSP included)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    opened.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

    def on_dialog(dialog: Dialog) -> None:
        errors.append(f"dialog opened: {dialog.message}")
        dialog.dismiss()

    opened.on("dialog", on_dialog)
    yield opened
    context.close()
    assert errors == []
