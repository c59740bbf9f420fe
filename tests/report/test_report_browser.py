"""report.html in a real browser: headless Chromium renders it offline, and the rendered DOM
holds the headline, the failed calls' request ids and the SVG trend charts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import Rendered

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium(binary: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.browser
def test_report_renders_in_headless_chromium(
    rendered: Rendered, chromium: str, tmp_path: Path
) -> None:
    url = rendered.paths.report_html.resolve().as_uri()
    shot = tmp_path / "report.png"
    done = _chromium(chromium, tmp_path, f"--screenshot={shot}", "--window-size=1280,2400", url)
    assert shot.is_file(), done.stderr[-2000:]
    assert shot.stat().st_size > 20_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    dom = _chromium(chromium, tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'id="headline"' in html
    assert "Run incomplete" in html
    assert "req-disputes-a3" in html
    assert html.count("<svg") == 3
    assert html.count("<rect") >= 10
    assert "<polyline" in html
    # the headline comes before the charts and the tables in the rendered page
    assert html.index("Run incomplete") < html.index("<svg") < html.index('id="findings"')


@pytest.mark.browser
def test_index_renders_in_headless_chromium(
    rendered: Rendered, chromium: str, tmp_path: Path
) -> None:
    dom = _chromium(chromium, tmp_path, "--dump-dom", rendered.paths.index_html.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Payments reconciliation reports" in dom.stdout
    assert "20261120T020000Z-000020/report.html" in dom.stdout
