"""close.html in headless Chromium: it renders offline, its cover says who signed and that an
incomplete night was accepted, and the roll-forward table shows every row tying."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
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


def test_every_column_of_close_html_is_visible_at_1280_px(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(
            "!!! BROWSER TEST SKIPPED: /usr/bin/chromium is missing (apt-get install chromium) !!!"
        )
    (tmp_path / "data").mkdir()
    db = build(tmp_path / "data" / "recon.duckdb")
    con = duckdb.connect(str(db))  # amounts as wide as a busy month's
    con.execute("UPDATE findings SET amount_minor = amount_minor * 987654321987, currency = 'BHD'")
    con.close()
    reports = tmp_path / "reports"
    done = CliRunner().invoke(app, ["close", "2026-10", "--db", str(db), "--reports", str(reports)])
    assert done.exit_code == 0, done.stderr
    html = (reports / "close-2026-10" / "close.html").read_text()
    # The page allows no script (its CSP): a copy without it measures each table's overflow.
    probe = (
        "<script>addEventListener('load', () => { const out = [];"
        " document.querySelectorAll('.scroll').forEach((d, i) => {"
        " const h = d.previousElementSibling; out.push((h ? h.id : i) + '=' +"
        " (d.scrollWidth - d.clientWidth)); });"
        " out.push('width=' + innerWidth);"
        " document.body.setAttribute('data-overflow', out.join(',')); });</script>"
    )
    measured = tmp_path / "measured.html"
    body = html.replace('<meta http-equiv="Content-Security-Policy"', '<meta name="x-csp"')
    measured.write_text(body.replace("</body>", probe + "</body>"))
    dom = _chromium(tmp_path, "--window-size=1280,2000", "--dump-dom", measured.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = dom.stdout.split('data-overflow="', 1)[1].split('"', 1)[0]
    overflow = dict(x.split("=") for x in found.split(","))
    assert (overflow.pop("width"), "rollforward" in overflow) == ("1280", True)
    assert {k: v for k, v in overflow.items() if int(v) > 0} == {}
