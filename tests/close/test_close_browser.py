"""close.html in headless Chromium: it renders offline, its cover says who signed and that an
incomplete night was accepted, and the roll-forward table shows every row tying."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app

from .conftest import O15, build

pytestmark = pytest.mark.browser
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_close_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(
            "!!! BROWSER TEST SKIPPED: /usr/bin/chromium is missing (apt-get install chromium) !!!"
        )
    (tmp_path / "data").mkdir()
    db = build(tmp_path / "data" / "recon.duckdb", incomplete=O15)
    done = CliRunner().invoke(
        app,
        ["close", "2026-10", "--db", str(db), "--reports", str(tmp_path / "reports"),
         "--accept-incomplete", "--sign-off", "Dana Controller", "--note", "October tied"],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    url = (tmp_path / "reports" / "close-2026-10" / "close.html").resolve().as_uri()
    shot = tmp_path / "close.png"
    _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", url)
    assert shot.is_file()
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000
    dom = _chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert "Signed off by <strong>Dana Controller</strong>" in html
    assert f"Closed with 1 incomplete night (accepted):</strong> <code>{O15}</code>" in html
    assert html.count("✓ ties") == 5
    assert "✗ does not tie" not in html
    assert html.index('id="cover"') < html.index('id="rollforward"') < html.index('id="provider"')
